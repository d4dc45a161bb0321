//! MCP over Streamable HTTP, driven by a hand-rolled JSON-RPC client: the handshake,
//! tools/list, errors for unknown methods and malformed bodies, session stickiness.

use serde_json::json;

use crate::common::{labels, Owner};

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
    m.initialize(&[("Medulla-Caller-Root", &xs)]);
    let first = m
        .tool(
            "memorize",
            json!({ "label": "first", "text": "lands in x", "agent_id": "claude:maker" }),
            &[("Medulla-Caller-Root", &xs)],
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
            &[("Medulla-Brain", &ys)],
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
            &[("Medulla-Caller-Root", &s)],
        )
        .unwrap_err();
    assert_eq!(err["error"]["code"], "unbootstrapped");
    assert!(err["error"]["fix"].as_str().unwrap().contains("bootstrap"));
    // The client's own name is the agent of last resort: "medulla-tests:agent".
    let b = m
        .tool("bootstrap", json!({}), &[("Medulla-Caller-Root", &s)])
        .unwrap();
    assert_eq!(b["created"], true);
    let v = m
        .tool(
            "memorize",
            json!({ "label": "l", "text": "t" }),
            &[("Medulla-Caller-Root", &s)],
        )
        .unwrap();
    assert_eq!(v["claim"]["source_agent"], "medulla-tests:agent");
}
