//! MCP over Streamable HTTP, driven by a hand-rolled JSON-RPC client: the handshake,
//! tools/list, errors for unknown methods and malformed bodies, session stickiness.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{header, labels, Owner, OwnerOptions, RawHttp};

#[test]
fn handshake_lists_every_tool_with_a_schema() {
    let o = Owner::start();
    let mut m = o.mcp();
    let init = m.initialize(&[]);
    assert_eq!(init["result"]["serverInfo"]["name"], "medulla");
    assert!(m.session.is_some(), "a session id is issued");
    let tools = m.request("tools/list", json!({}), &[]);
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for t in [
        "bootstrap",
        "brains",
        "memorize",
        "seek",
        "history",
        "boot_memory",
        "learn",
    ] {
        assert!(names.contains(&t), "{t} missing from {names:?}");
    }
    for t in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
    }
    let memorize = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "memorize")
        .unwrap();
    let required: Vec<&str> = memorize["inputSchema"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        required.contains(&"label") && required.contains(&"text"),
        "{memorize}"
    );
    let pong = m.request("ping", json!({}), &[]);
    assert!(pong.get("result").is_some(), "{pong}");
}

#[test]
fn unknown_methods_and_malformed_bodies_get_json_rpc_errors() {
    let o = Owner::start();
    let mut m = o.mcp();
    m.initialize(&[]);
    let (_, v) = m.raw(
        &json!({ "jsonrpc": "2.0", "id": 7, "method": "no/such/method", "params": {} }).to_string(),
        &[],
    );
    assert_eq!(v["error"]["code"], -32601, "{v}");
    let (status, v) = m.raw("{ this is not json", &[]);
    assert!(
        status == 400 || v["error"]["code"] == -32700,
        "{status} {v}"
    );
    if !v.is_null() {
        assert_eq!(v["error"]["code"], -32700, "{v}");
    }
    // The server is still fine afterwards.
    let pong = m.request("ping", json!({}), &[]);
    assert!(pong.get("result").is_some());
    // An unknown tool is an invalid-params error.
    let v = m.request(
        "tools/call",
        json!({ "name": "nonesuch", "arguments": {} }),
        &[],
    );
    assert_eq!(v["error"]["code"], -32602, "{v}");
}

#[test]
fn foreign_origin_and_host_are_rejected() {
    let o = Owner::start();
    let r = o
        .http
        .post(format!("{}/mcp", o.url))
        .header("origin", "http://evil.example")
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let r = o
        .http
        .get(format!("{}/api/health", o.url))
        .header("host", "evil.example:1338")
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let r = o
        .http
        .get(format!("{}/api/health", o.url))
        .header("origin", "http://localhost:3000")
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
}

#[test]
fn a_session_sticks_to_the_brain_its_first_call_landed_on_for_requests_that_name_none() {
    let o = Owner::start();
    let x = o.project("x");
    let y = o.project("y");
    o.bootstrap(&x);
    o.bootstrap(&y);
    let (xs, ys) = (
        x.to_string_lossy().to_string(),
        y.to_string_lossy().to_string(),
    );
    let mut m = o.mcp();
    m.initialize(&[(header::CALLER_ROOT, &xs)]);
    let first = m
        .tool(
            "memorize",
            json!({ "label": "first", "text": "lands in x", "agent_id": "claude:maker" }),
            &[(header::CALLER_ROOT, &xs)],
        )
        .unwrap();
    assert_eq!(first["brain"]["root"], xs.as_str());
    assert!(first.get("reception").is_none());
    // Same session, no headers at all: still x.
    let second = m
        .tool(
            "memorize",
            json!({ "label": "second", "text": "still x", "agent_id": "claude:maker" }),
            &[],
        )
        .unwrap();
    assert_eq!(second["brain"]["root"], xs.as_str());
    assert!(second.get("reception").is_none(), "{second}");
    // A binding header beats the sticky brain.
    let third = m
        .tool(
            "memorize",
            json!({ "label": "third", "text": "bound to y", "agent_id": "claude:maker" }),
            &[(header::BRAIN, &ys)],
        )
        .unwrap();
    assert_eq!(third["brain"]["root"], ys.as_str());
    let seen = m
        .tool(
            "seek",
            json!({ "query": "", "tier": "project", "limit": 50 }),
            &[],
        )
        .unwrap();
    let mut l = labels(&seen);
    l.sort();
    assert_eq!(l, vec!["first", "second"]);
    let (_, inst) = o.get("/api/instances");
    let rx = inst["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["root"] == xs.as_str())
        .unwrap()
        .clone();
    assert_eq!(rx["sessions"], 1, "{rx}");
}

#[test]
fn tool_errors_are_structured_and_unrouted_writes_refused() {
    let o = Owner::start();
    let stray = o.project("stray");
    let s = stray.to_string_lossy().to_string();
    let mut m = o.mcp();
    m.initialize(&[]);
    let err = m
        .tool(
            "memorize",
            json!({ "label": "l", "text": "t", "agent_id": "claude:maker" }),
            &[(header::CALLER_ROOT, &s)],
        )
        .unwrap_err();
    assert_eq!(err["error"]["code"], "unbootstrapped");
    assert!(err["error"]["fix"].as_str().unwrap().contains("bootstrap"));
    // The client's own name is the agent of last resort: "medulla-tests:agent".
    let b = m
        .tool("bootstrap", json!({}), &[(header::CALLER_ROOT, &s)])
        .unwrap();
    assert_eq!(b["created"], true);
    let v = m
        .tool(
            "memorize",
            json!({ "label": "l", "text": "t" }),
            &[(header::CALLER_ROOT, &s)],
        )
        .unwrap();
    assert_eq!(v["claim"]["source_agent"], "medulla-tests:agent");
}

/// Regression (issue 13): every MCP call on a kept-alive connection cost ~43 ms (no
/// TCP_NODELAY, the streamed answer in several writes: Nagle met delayed ACK). A raw
/// client that does not set TCP_NODELAY itself makes 50 calls on one connection; they
/// must cost about what health round trips on that same connection cost, not 40 ms each.
#[test]
fn kept_alive_mcp_calls_do_not_stall() {
    let o = Owner::start();
    let mut conn = RawHttp::open(&o);
    let mut session: Option<String> = None;
    // One request, one answer; returns the answer's body.
    let mut round = |method: &str, path: &str, body: &str, session: &mut Option<String>| {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(s) = session.as_deref() {
            headers.push((header::SESSION, s));
        }
        let answer = conn.round(method, path, &headers, body).unwrap();
        if let Some(s) = answer.header(header::SESSION) {
            *session = Some(s.to_string());
        }
        answer.body
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    round("POST", "/mcp", &init.to_string(), &mut session);
    assert!(session.is_some());
    round(
        "POST",
        "/mcp",
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        &mut session,
    );
    let calls = 50;
    let t = std::time::Instant::now();
    for i in 0..calls {
        let body = json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": "boot_memory", "arguments": {"op": "list"}}});
        let answer = round("POST", "/mcp", &body.to_string(), &mut session);
        assert!(answer.contains("\"entries\""), "{answer}");
    }
    let mcp = t.elapsed();
    let t = std::time::Instant::now();
    let mut none = None;
    for _ in 0..calls {
        round("GET", "/api/health", "", &mut none);
    }
    let health = t.elapsed();
    eprintln!("{calls} kept-alive MCP calls: {mcp:?}; {calls} health round trips: {health:?}");
    // 50 stalled calls would take 2 s or more; a tool call does more than health, but not
    // forty milliseconds more.
    assert!(
        mcp < health * 20 + std::time::Duration::from_millis(250),
        "MCP calls {mcp:?} against health {health:?}: a Nagle stall is back"
    );
    assert!(
        mcp < std::time::Duration::from_millis(50 * 40 / 2),
        "{mcp:?}"
    );
}

/// Resources are routed like tools (issue 22, part 4): a session with no brain lists the
/// digest and the medulla's doctrine only, and a brain URI names nothing for it; the
/// binding header reads the bound brain; the sticky brain follows the first landing.
#[test]
fn resources_are_routed_like_tools() {
    let o = Owner::start();
    let p = o.project("p");
    let q = o.project("q");
    o.bootstrap(&p);
    o.bootstrap(&q);
    let (s, _) = o.call(
        "memorize",
        json!({ "label": "p fact", "text": "only p knows this", "agent_id": "claude:maker" }),
        &[("Medulla-Caller-Root", p.to_str().unwrap())],
    );
    assert_eq!(s, 200);
    let (s, v) = o.founder_call(
        "memorize",
        json!({ "label": "shared rule", "text": "every project follows this", "tier": "medulla" }),
        &[],
    );
    assert_eq!(s, 200, "{v}");

    let uris = |v: &Value| -> Vec<String> {
        v["result"]["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|r| r["uri"].as_str().unwrap().to_string())
            .collect()
    };
    // Unrouted: the digest and the doctrine, nothing of a brain.
    let mut m = o.mcp();
    m.initialize(&[]);
    let listed = uris(&m.request("resources/list", json!({}), &[]));
    assert_eq!(
        listed,
        ["medulla://north", "medulla://medulla/shared-rule"],
        "an unrouted session lists the medulla alone"
    );
    let v = m.request(
        "resources/read",
        json!({ "uri": "medulla://brain/p-fact" }),
        &[],
    );
    assert_eq!(v["error"]["code"], -32002, "{v}");
    assert_eq!(v["error"]["data"]["code"], "unbootstrapped", "{v}");
    let v = m.request(
        "resources/read",
        json!({ "uri": "medulla://medulla/shared-rule" }),
        &[],
    );
    let row: Value =
        serde_json::from_str(v["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(row["label"], "shared rule");
    let v = m.request(
        "resources/read",
        json!({ "uri": "file:///etc/passwd" }),
        &[],
    );
    assert_eq!(v["error"]["data"]["code"], "unknown_resource", "{v}");

    // The binding header reads the bound brain; q's caller root never reads p's claim.
    let mut m = o.mcp();
    m.initialize(&[]);
    let bound = [("Medulla-Brain", p.to_str().unwrap())];
    let v = m.request(
        "resources/read",
        json!({ "uri": "medulla://brain/p-fact" }),
        &bound,
    );
    assert_eq!(
        v["result"]["contents"][0]["mimeType"], "application/json",
        "{v}"
    );
    let in_q = [("Medulla-Caller-Root", q.to_str().unwrap())];
    let v = m.request(
        "resources/read",
        json!({ "uri": "medulla://brain/p-fact" }),
        &in_q,
    );
    assert_eq!(v["error"]["data"]["code"], "no_such_claim", "{v}");
    assert!(!uris(&m.request("resources/list", json!({}), &in_q))
        .iter()
        .any(|u| u.contains("p-fact")));
    // This session landed on p first: a request naming nothing is p's.
    let listed = uris(&m.request("resources/list", json!({}), &[]));
    assert!(
        listed.contains(&"medulla://brain/p-fact".to_string()),
        "{listed:?}"
    );

    let v = m.request(
        "prompts/get",
        json!({ "name": "recall", "arguments": { "topic": "p knows" } }),
        &bound,
    );
    let msgs = v["result"]["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"));
    assert!(
        msgs.iter()
            .any(|m| m["content"]["resource"]["uri"] == "medulla://brain/p-fact"),
        "{v}"
    );
    let v = m.request("prompts/get", json!({ "name": "nope" }), &[]);
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert_eq!(v["error"]["data"]["code"], "unknown_prompt", "{v}");
}

/// `resources/list` pages: 200 at a time, `nextCursor` until the last page, every
/// resource once.
#[test]
fn resources_list_pages_with_a_cursor() {
    let o = Owner::start();
    let p = o.project("p");
    o.bootstrap(&p);
    let in_p = [("Medulla-Caller-Root", p.to_str().unwrap())];
    for batch in 0..3 {
        let findings: Vec<Value> = (0..70)
            .map(|i| json!({ "label": format!("fact {batch} {i}"), "text": format!("finding number {i} of batch {batch}") }))
            .collect();
        let (s, v) = o.call(
            "debrief",
            json!({ "findings": findings, "agent_id": "claude:maker" }),
            &in_p,
        );
        assert_eq!(s, 200, "{v}");
    }
    let mut m = o.mcp();
    m.initialize(&in_p);
    let first = m.request("resources/list", json!({}), &in_p);
    let page1 = first["result"]["resources"].as_array().unwrap().clone();
    assert_eq!(page1.len(), 200);
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_string();
    let second = m.request("resources/list", json!({ "cursor": cursor }), &in_p);
    let page2 = second["result"]["resources"].as_array().unwrap().clone();
    assert_eq!(page2.len(), 11, "the digest and 210 claims: {second}");
    assert!(second["result"].get("nextCursor").is_none(), "{second}");
    let mut all: Vec<&str> = page1
        .iter()
        .chain(&page2)
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 211);
    let bad = m.request("resources/list", json!({ "cursor": "nope" }), &in_p);
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

/// The protocol of the sessions these tests open: the first that defines the SDK's
/// priming event, by which a test tells the SDK's way from the direct path.
const PRIMED: &str = "2025-11-25";

/// One POST to `/mcp` of session `session` (a client of [`PRIMED`]): the status, the
/// content type and the body's text, as a client reads them.
fn post_mcp(
    o: &Owner,
    session: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> (u16, String, String) {
    let mut req = o
        .http
        .post(format!("{}/mcp", o.url))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header(header::SESSION, session)
        .header("mcp-protocol-version", PRIMED)
        .body(body.to_string());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().expect("POST /mcp");
    let status = r.status().as_u16();
    let ct = r.headers().get("content-type").map(|c| c.to_str().unwrap());
    let ct = ct.unwrap_or("").to_string();
    (status, ct, r.text().unwrap_or_default())
}

/// The `data:` payloads of an event stream's events, the SDK's empty priming event
/// included: the direct path answers with exactly one, the answer.
fn events(body: &str) -> Vec<String> {
    let data = |e: &str| {
        let lines = e.lines().filter_map(|l| l.strip_prefix("data:"));
        lines.map(str::trim_start).collect::<Vec<_>>().join("\n")
    };
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(data)
        .collect()
}

/// The handshake's last step (`notifications/initialized`) is handled a moment after
/// its 202: whether a ping of the session is answered directly within two seconds.
fn answered_directly(o: &Owner, sid: &str, route: &[(&str, &str)]) -> bool {
    let ping = json!({ "jsonrpc": "2.0", "id": 0, "method": "ping" });
    (0..40).any(|_| {
        let (s, ct, body) = post_mcp(o, sid, &ping, route);
        assert!(s == 200 && ct.starts_with("text/event-stream"), "{s} {ct}");
        let one = events(&body).len() == 1;
        if !one {
            std::thread::sleep(Duration::from_millis(50));
        }
        one
    })
}

/// Issue 50, the protocol edge: a trivial `tools/call` cost ~3× a health round trip,
/// most of it task hand-offs through the SDK's session worker. A plain request of an
/// initialised session is now answered on the connection's task (src/http/direct.rs):
/// one event, the answer, and the same answer the SDK's way gives (a call with a
/// progress token still goes that way); routing, the sticky brain and the agent named
/// by the header are those of the SDK's way.
#[test]
fn a_plain_call_of_an_initialised_session_is_answered_directly_with_the_same_answer() {
    let o = Owner::start();
    let x = o.project("x");
    o.bootstrap(&x);
    let xs = x.to_string_lossy().to_string();
    let agent = (header::AGENT, "claude:maker");
    let route = [(header::CALLER_ROOT, xs.as_str()), agent];
    let mut m = o.mcp();
    m.initialize_as(PRIMED, &route);
    let sid = m.session.clone().expect("a session id");
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "boot_memory", "arguments": { "op": "list" } } });
    // The same call with a progress token: the SDK's way.
    let sdk_list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "boot_memory", "arguments": { "op": "list" }, "_meta": { "progressToken": "p" } } });
    assert!(answered_directly(&o, &sid, &route), "no direct answer");
    let (s, ct, body) = post_mcp(&o, &sid, &list, &route);
    assert_eq!(s, 200, "{body}");
    assert!(ct.starts_with("text/event-stream"), "{ct}");
    let plain = events(&body);
    assert_eq!(plain.len(), 1, "one event, the answer: {body}");
    let plain: Value = serde_json::from_str(&plain[0]).unwrap();
    let (s, _, body) = post_mcp(&o, &sid, &sdk_list, &route);
    assert_eq!(s, 200, "{body}");
    let sdk = events(&body);
    assert!(sdk.len() >= 2, "the SDK's way primes its stream: {body}");
    let sdk: Value = serde_json::from_str(sdk.last().unwrap()).unwrap();
    assert_eq!(plain["id"], 1);
    assert_eq!(sdk["id"], 2);
    assert_eq!(plain["result"], sdk["result"], "the same answer either way");
    assert_eq!(plain["result"]["isError"], false, "{plain}");
    // A write on the direct path routes by the header, records the header's agent, and
    // makes the brain sticky for a request that names none.
    let write = json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "memorize", "arguments": { "label": "direct", "text": "written on the direct path" } } });
    let (_, _, body) = post_mcp(&o, &sid, &write, &route);
    let written: Value = serde_json::from_str(&events(&body)[0]).unwrap();
    let claim = &written["result"]["structuredContent"];
    assert_eq!(claim["brain"]["root"], xs.as_str(), "{written}");
    assert_eq!(claim["claim"]["source_agent"], "claude:maker", "{written}");
    let seek = json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": { "name": "seek", "arguments": { "query": "", "tier": "project" } } });
    let (_, _, body) = post_mcp(&o, &sid, &seek, &[]);
    let seen: Value = serde_json::from_str(&events(&body)[0]).unwrap();
    assert_eq!(labels(&seen["result"]["structuredContent"]), vec!["direct"]);
    // An unknown tool is the SDK's invalid-params error on this path too.
    let unknown = json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": { "name": "nonesuch" } });
    let (_, _, body) = post_mcp(&o, &sid, &unknown, &route);
    let refused: Value = serde_json::from_str(&events(&body)[0]).unwrap();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

/// Issue 50: the direct path answers only for a session the SDK holds. An unknown
/// session is 404, and a session ended by DELETE is 404 at once (the direct path
/// forgets it), as before.
#[test]
fn the_direct_path_answers_no_session_the_sdk_does_not_hold() {
    let o = Owner::start();
    let x = o.project("x");
    o.bootstrap(&x);
    let xs = x.to_string_lossy().to_string();
    let route = [(header::CALLER_ROOT, xs.as_str())];
    let mut m = o.mcp();
    m.initialize_as(PRIMED, &route);
    let sid = m.session.clone().unwrap();
    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "boot_memory", "arguments": { "op": "list" } } });
    assert!(answered_directly(&o, &sid, &route));
    let (s, _, body) = post_mcp(&o, "no-such-session", &call, &route);
    assert_eq!(s, 404, "{body}");
    let r = o
        .http
        .delete(format!("{}/mcp", o.url))
        .header(header::SESSION, &sid)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let (s, _, body) = post_mcp(&o, &sid, &call, &route);
    assert_eq!(s, 404, "an ended session is not answered: {body}");
}

/// Issue 50: the SDK ends a session whose worker hears nothing for `session_idle` (its
/// next request resumes it from disk, as a new handler: its sticky brain forgotten);
/// calls on the direct path bypass that worker, so a session kept busy only by them
/// must neither expire nor lose its brain under its client.
#[test]
fn a_session_busy_only_with_direct_calls_keeps_its_brain() {
    let o = Owner::start_with(OwnerOptions {
        config_toml: Some("session_idle_secs = 2\n".into()),
        ..Default::default()
    });
    let x = o.project("x");
    o.bootstrap(&x);
    let xs = x.to_string_lossy().to_string();
    let route = [(header::CALLER_ROOT, xs.as_str())];
    let mut m = o.mcp();
    m.initialize_as(PRIMED, &route);
    m.tool(
        "memorize",
        json!({ "label": "sticky", "text": "lands in x", "agent_id": "claude:maker" }),
        &route,
    )
    .unwrap();
    let sid = m.session.clone().unwrap();
    // No routing header: only the session's sticky brain routes these.
    let seek = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "seek", "arguments": { "query": "", "tier": "project" } } });
    let until = Instant::now() + Duration::from_secs(5);
    let mut direct = 0;
    while Instant::now() < until {
        let (s, _, body) = post_mcp(&o, &sid, &seek, &[]);
        assert_eq!(s, 200, "the session expired while in use: {body}");
        let e = events(&body);
        let answer: Value = serde_json::from_str(e.last().unwrap()).unwrap();
        let seen = labels(&answer["result"]["structuredContent"]);
        assert_eq!(seen, ["sticky"], "the session lost its brain: {answer}");
        direct += usize::from(e.len() == 1);
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(direct > 10, "only {direct} calls took the direct path");
}

/// Every event of an event stream parsed the way the TypeScript SDK before 2025-11-25
/// parses it (and Gemini CLI 0.61 with it): each event's data as one JSON-RPC message.
/// The messages, or the event that fails, with the whole stream.
fn parsed_as_typescript_sdk(body: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for event in body.split("\n\n").filter(|e| !e.trim().is_empty()) {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if data.is_empty() {
            continue; // a comment or a bare `retry:`: never dispatched
        }
        let v = serde_json::from_str(&data.join("\n"))
            .map_err(|e| format!("event {event:?}: {e}\nthe stream:\n{body}"))?;
        out.push(v);
    }
    Ok(out)
}

/// Issue 71, finding 1: Gemini CLI 0.61 (protocol 2025-06-18) was offered none of
/// medulla's tools. The owner opened its `initialize` stream (and the streams of calls
/// the SDK answers) with a priming event whose `data:` is empty; the client's SDK parses
/// every event as JSON, failed ("Unexpected end of JSON input") and dropped the session.
/// A client of a protocol before 2025-11-25 now gets only events it can parse; a client
/// of 2025-11-25, whose protocol defines the priming event, still gets it.
#[test]
fn a_client_before_2025_11_25_gets_no_event_it_cannot_parse() {
    let o = Owner::start();
    let x = o.project("x");
    o.bootstrap(&x);
    let xs = x.to_string_lossy().to_string();
    let post = |version: &str, session: Option<&str>, body: &Value| {
        let mut req = o
            .http
            .post(format!("{}/mcp", o.url))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header(header::CALLER_ROOT, xs.as_str())
            .body(body.to_string());
        if let Some(s) = session {
            req = req
                .header(header::SESSION, s)
                .header("mcp-protocol-version", version);
        }
        let r = req.send().expect("POST /mcp");
        let sid = r
            .headers()
            .get(header::SESSION)
            .map(|v| v.to_str().unwrap().to_string());
        (sid, r.text().unwrap())
    };
    for version in ["2025-03-26", "2025-06-18", PRIMED] {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "gemini-cli-mcp-client", "version": "0.61.0"}}});
        let (sid, body) = post(version, None, &init);
        let sid = sid.expect("a session");
        if version == PRIMED {
            // Its SDK skips the priming event; parsed as the older SDKs parse, it fails.
            let primed = parsed_as_typescript_sdk(&body).is_err();
            assert!(primed, "a {PRIMED} client keeps its priming event: {body}");
            continue;
        }
        let init = parsed_as_typescript_sdk(&body).unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_eq!(init.len(), 1, "{version}: {body}");
        assert_eq!(init[0]["result"]["protocolVersion"], version, "{body}");
        post(
            version,
            Some(&sid),
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        // A call with a progress token goes the SDK's way (its own stream).
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "seek", "arguments": {"query": "anything"}, "_meta": {"progressToken": "p"}}});
        let (_, body) = post(version, Some(&sid), &call);
        let answer = parsed_as_typescript_sdk(&body).unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_eq!(answer.last().unwrap()["id"], 2, "{body}");
        let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
        let (_, body) = post(version, Some(&sid), &list);
        let tools = parsed_as_typescript_sdk(&body).unwrap_or_else(|e| panic!("{version}: {e}"));
        let n = tools[0]["result"]["tools"].as_array().map_or(0, Vec::len);
        assert!(n > 10, "{version}: the tools are offered: {body}");
    }
}
