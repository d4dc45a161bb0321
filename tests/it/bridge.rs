//! `medulla bridge`: stdio MCP forwarded to the owner, routed by the bridge's working
//! directory or by `MEDULLA_BRAIN`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common::{Owner, BIN};

struct Bridge {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

impl Bridge {
    fn start(o: &Owner, cwd: &std::path::Path, brain: Option<&str>) -> Bridge {
        let mut cmd = Command::new(BIN);
        cmd.arg("bridge")
            .current_dir(cwd)
            .env("MEDULLA_URL", &o.url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        match brain {
            Some(b) => cmd.env("MEDULLA_BRAIN", b),
            None => cmd.env_remove("MEDULLA_BRAIN"),
        };
        let mut child = cmd.spawn().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Bridge { child, out }
    }
    fn send(&mut self, v: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }
    fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line:?}"))
    }
    fn call(&mut self, id: u64, name: &str, args: Value) -> Value {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": name, "arguments": args } }));
        let v = self.recv();
        assert_eq!(v["id"], id, "{v}");
        v["result"]["structuredContent"].clone()
    }
    fn handshake(&mut self) -> Value {
        self.send(json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "stdio-test", "version": "0" } } }));
        let init = self.recv();
        self.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        init
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

#[test]
fn stdio_calls_are_routed_by_the_bridges_working_directory() {
    let o = Owner::start();
    let x = o.brain("x").path();
    let y = o.brain("y").path();
    let sub = o.project("x/src");
    let mut b = Bridge::start(&o, &sub, None);
    let init = b.handshake();
    assert_eq!(init["result"]["serverInfo"]["name"], "medulla", "{init}");
    let v = b.call(1, "memorize", json!({ "label": "via stdio", "text": "written through the bridge", "agent_id": "claude:maker" }));
    assert_eq!(v["brain"]["root"], x.to_string_lossy().as_ref(), "{v}");
    let v = b.call(2, "seek", json!({ "query": "bridge" }));
    assert_eq!(v["results"][0]["label"], "via stdio");
    // A malformed line gets a JSON-RPC error on stdout, and the bridge keeps going.
    b.send(json!({ "jsonrpc": "2.0", "id": 3, "method": "no/such/method" }));
    let v = b.recv();
    assert_eq!(v["error"]["code"], -32601, "{v}");
    drop(b);

    // MEDULLA_BRAIN binds the bridge to y whatever its directory.
    let mut b = Bridge::start(&o, &sub, Some(y.to_str().unwrap()));
    b.handshake();
    let v = b.call(
        1,
        "memorize",
        json!({ "label": "bound", "text": "lands in y", "agent_id": "claude:maker" }),
    );
    assert_eq!(v["brain"]["root"], y.to_string_lossy().as_ref(), "{v}");
}

#[test]
fn a_bridge_without_an_owner_answers_with_an_error_naming_serve() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .arg("bridge")
        .current_dir(dir.path())
        .env("MEDULLA_URL", "http://127.0.0.1:9")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    writeln!(
        child.stdin.as_mut().unwrap(),
        "{}",
        json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" })
    )
    .unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["id"], 1);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("medulla serve"),
        "{v}"
    );
}

/// Regression (issue 15, item 12): the bridge did not send `MCP-Protocol-Version`, so a
/// client speaking 2026-07-28 (no initialize; the version in every request's `_meta`)
/// failed through it with -32020.
#[test]
fn a_client_pinned_to_2026_07_28_works_through_the_bridge() {
    let o = Owner::start();
    let root = o.brain("p").path();
    let mut b = Bridge::start(&o, &root, None);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "pinned", "version": "1" }
    });
    b.send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": { "_meta": meta } }),
    );
    let v = b.recv();
    assert!(
        v["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{v}"
    );
    b.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "_meta": meta, "name": "memorize",
        "arguments": { "label": "pinned", "text": "through the bridge", "agent_id": "claude:maker" } } }));
    let v = b.recv();
    assert_eq!(v["id"], 2, "{v}");
    assert_eq!(
        v["result"]["structuredContent"]["outcome"], "created",
        "{v}"
    );
    assert_eq!(
        v["result"]["structuredContent"]["brain"]["root"],
        root.to_string_lossy().as_ref(),
        "routed by the bridge's working directory: {v}"
    );
}

/// A `subscriptions/listen` through the bridge stays open: its notifications arrive as
/// the owner sends them while other requests go on, and a cancellation ends it.
#[test]
fn a_listen_through_the_bridge_streams_its_notifications() {
    let o = Owner::start();
    let root = o.brain("p").path();
    let mut b = Bridge::start(&o, &root, None);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "pinned", "version": "1" }
    });
    b.send(
        json!({ "jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
        "params": { "_meta": meta, "notifications": { "resourcesListChanged": true } } }),
    );
    let ack = b.recv();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"]["resourcesListChanged"], true,
        "{ack}"
    );
    // Another request goes on while the stream is open.
    b.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "_meta": meta, "name": "memorize",
        "arguments": { "label": "heard", "text": "a write the listener hears of", "agent_id": "claude:maker" } } }));
    let mut got = vec![b.recv(), b.recv()];
    got.sort_by_key(|v| v["id"].is_null());
    assert_eq!(
        got[0]["result"]["structuredContent"]["outcome"], "created",
        "{got:?}"
    );
    assert_eq!(
        got[1]["method"], "notifications/resources/list_changed",
        "{got:?}"
    );
    b.send(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": "listen-1", "_meta": meta } }),
    );
    b.send(
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": { "_meta": meta } }),
    );
    let v = b.recv();
    assert_eq!(v["id"], 3, "nothing more of the cancelled stream: {v}");
}
