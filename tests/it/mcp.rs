//! MCP over Streamable HTTP, driven by a hand-rolled JSON-RPC client: the handshake,
//! tools/list, errors for unknown methods and malformed bodies, session stickiness.

use serde_json::{json, Value};

use crate::common::{header, labels, Owner, RawHttp};

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
