//! An MCP session with a child process over its stdin and stdout.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use serde_json::{json, Value};

use super::{initialize_params, rpc_result, CallError, Session, CALL_TIMEOUT};

/// An MCP session with a child process over its stdin/stdout (one JSON message a line).
pub struct StdioSession {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
    /// How long `initialize` took (a stdio server starts with the session).
    pub startup: Duration,
}

impl StdioSession {
    /// Spawn `cmd` and open the session. `startup_limit` bounds the wait for `initialize`
    /// (an interpreter may take a while to import its world).
    pub fn spawn(
        mut cmd: Command,
        client: &str,
        startup_limit: Duration,
    ) -> Result<StdioSession, CallError> {
        let t = Instant::now();
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| CallError::Transport(anyhow!("cannot start {cmd:?}: {e}")))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut s = StdioSession {
            child,
            stdin: Some(stdin),
            lines: rx,
            next_id: 0,
            startup: Duration::ZERO,
        };
        s.next_id += 1;
        s.send(&json!({ "jsonrpc": "2.0", "id": s.next_id, "method": "initialize", "params": initialize_params(client) }))?;
        s.wait_for(s.next_id, startup_limit)?;
        s.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
        s.startup = t.elapsed();
        Ok(s)
    }

    fn send(&mut self, msg: &Value) -> Result<(), CallError> {
        let mut line = serde_json::to_vec(msg).expect("json");
        line.push(b'\n');
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| CallError::Transport(anyhow!("the session is closed")))?;
        stdin
            .write_all(&line)
            .and_then(|_| stdin.flush())
            .map_err(|e| CallError::Transport(anyhow!("the server's stdin closed: {e}")))
    }

    fn wait_for(&mut self, id: u64, limit: Duration) -> Result<Value, CallError> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(CallError::Transport(anyhow!(
                        "no answer to request {id} within {limit:?} (timeout)"
                    )))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(CallError::Transport(anyhow!(
                        "the server closed its stdout (EOF)"
                    )))
                }
            };
            let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                continue; // a stray log line on stdout
            };
            if msg.get("method").is_some() {
                // A request from the server (ping, roots): answer it so it never waits on us.
                if let Some(rid) = msg.get("id") {
                    let answer = if msg["method"] == "ping" {
                        json!({ "jsonrpc": "2.0", "id": rid, "result": {} })
                    } else {
                        json!({ "jsonrpc": "2.0", "id": rid, "error": { "code": -32601, "message": "not supported by the bench client" } })
                    };
                    self.send(&answer)?;
                }
                continue;
            }
            if msg["id"].as_u64() == Some(id) {
                return rpc_result(&msg);
            }
        }
    }
}

impl Drop for StdioSession {
    /// Close stdin (the polite end of a stdio session), then reap the child; kill it if
    /// it has not exited within ten seconds.
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Session for StdioSession {
    fn request(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        self.wait_for(id, CALL_TIMEOUT)
    }
}
