//! A small MCP client for the benches: JSON-RPC over Streamable HTTP on one kept-alive
//! connection (as every MCP SDK holds it) or over a child's stdio, and the HTTP/1.1
//! links underneath. Written by hand so the bench sees exactly the bytes a client sends.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde_json::{json, Value};

/// The newest protocol version that still has an `initialize` handshake.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// How long one answer may take before the call counts as failed.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// One HTTP answer, its body read to the end (so the connection can carry the next request).
#[derive(Debug)]
pub struct HttpAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpAnswer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Something that sends one HTTP request and reads its whole answer.
pub trait HttpLink {
    fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<HttpAnswer>;
}

/// HTTP/1.1 by hand over one `std::net::TcpStream`, kept alive, TCP_NODELAY left unset:
/// each request goes out in one write, so any stall seen is the server's.
pub struct RawLink {
    addr: String,
    conn: Option<BufReader<TcpStream>>,
    /// How many TCP connections this link has opened (1 when keep-alive held).
    pub connects: usize,
}

impl RawLink {
    /// `base` is `http://host:port`.
    pub fn new(base: &str) -> Result<Self> {
        let addr = base
            .strip_prefix("http://")
            .context("an http:// url")?
            .trim_end_matches('/')
            .to_string();
        Ok(RawLink {
            addr,
            conn: None,
            connects: 0,
        })
    }

    fn stream(&mut self) -> Result<&mut BufReader<TcpStream>> {
        if self.conn.is_none() {
            let s = TcpStream::connect(&self.addr)
                .with_context(|| format!("cannot connect to {}", self.addr))?;
            s.set_read_timeout(Some(CALL_TIMEOUT))?;
            s.set_write_timeout(Some(CALL_TIMEOUT))?;
            self.connects += 1;
            self.conn = Some(BufReader::with_capacity(64 * 1024, s));
        }
        Ok(self.conn.as_mut().expect("connected"))
    }
}

fn read_line(r: &mut impl BufRead) -> Result<String> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        bail!("connection closed by the server");
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

fn read_answer(r: &mut BufReader<TcpStream>) -> Result<(HttpAnswer, bool)> {
    let status_line = read_line(r)?;
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .with_context(|| format!("bad status line {status_line:?}"))?;
    let mut headers = Vec::new();
    loop {
        let line = read_line(r)?;
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    let mut reusable = get("connection").is_none_or(|c| !c.eq_ignore_ascii_case("close"));
    if get("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        loop {
            let size_line = read_line(r)?;
            let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                .with_context(|| format!("bad chunk size {size_line:?}"))?;
            if size == 0 {
                // Trailers, then the blank line that ends the body.
                while !read_line(r)?.is_empty() {}
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            r.read_exact(&mut body[start..])?;
            read_line(r)?;
        }
    } else if let Some(n) = get("content-length") {
        let n: usize = n.parse().context("bad content-length")?;
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    } else if status != 204 && status != 304 {
        r.read_to_end(&mut body)?;
        reusable = false;
    }
    Ok((
        HttpAnswer {
            status,
            headers,
            body,
        },
        reusable,
    ))
}

impl HttpLink for RawLink {
    fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<HttpAnswer> {
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nhost: {}\r\ncontent-length: {}\r\n",
            self.addr,
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        let mut bytes = req.into_bytes();
        bytes.extend_from_slice(body);
        let r = self.stream()?;
        let sent = r.get_mut().write_all(&bytes);
        let answer = sent
            .map_err(anyhow::Error::from)
            .and_then(|_| read_answer(r));
        match answer {
            Ok((a, reusable)) => {
                if !reusable {
                    self.conn = None;
                }
                Ok(a)
            }
            Err(e) => {
                // The connection's state is unknown after a failure: never reuse it.
                self.conn = None;
                Err(e)
            }
        }
    }
}

/// A `reqwest` client holding one kept-alive connection, as the SDKs' HTTP stacks do
/// (reqwest, like undici and httpx, sets TCP_NODELAY on its sockets).
pub struct ReqwestLink {
    base: String,
    http: reqwest::blocking::Client,
}

impl ReqwestLink {
    pub fn new(base: &str) -> Result<Self> {
        Self::with_idle(base, 1)
    }

    /// A client that keeps no idle connection: a new TCP connection for every request.
    /// Not how SDKs behave; it shows what a call costs without any kept-alive stall.
    pub fn fresh(base: &str) -> Result<Self> {
        Self::with_idle(base, 0)
    }

    fn with_idle(base: &str, idle: usize) -> Result<Self> {
        let http = reqwest::blocking::Client::builder()
            .timeout(CALL_TIMEOUT)
            .pool_max_idle_per_host(idle)
            .build()?;
        Ok(ReqwestLink {
            base: base.trim_end_matches('/').to_string(),
            http,
        })
    }
}

impl HttpLink for ReqwestLink {
    fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<HttpAnswer> {
        let mut req = self.http.request(
            reqwest::Method::from_bytes(method.as_bytes())?,
            format!("{}{path}", self.base),
        );
        for (k, v) in headers {
            req = req.header(k, v);
        }
        let resp = req.body(body.to_vec()).send()?;
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        let body = resp.bytes()?.to_vec();
        Ok(HttpAnswer {
            status,
            headers,
            body,
        })
    }
}

/// Every JSON-RPC message in an SSE body (events separated by blank lines, `data:` lines
/// joined; the empty priming event is skipped).
pub fn sse_messages(body: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut data = String::new();
    for line in body.lines().chain(std::iter::once("")) {
        if let Some(d) = line.strip_prefix("data:") {
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
        } else if line.is_empty() && !data.is_empty() {
            if let Ok(v) = serde_json::from_str::<Value>(&data) {
                out.push(v);
            }
            data.clear();
        }
    }
    out
}

/// Why a call failed, as the soak counts it.
#[derive(Debug)]
pub enum CallError {
    /// The connection or the child failed, or the answer did not come in time.
    Transport(anyhow::Error),
    /// The server answered with a non-2xx HTTP status.
    Http(u16, String),
    /// A JSON-RPC error object.
    Rpc(i64, String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Transport(e) => write!(f, "transport: {e:#}"),
            CallError::Http(s, b) => write!(f, "http {s}: {b}"),
            CallError::Rpc(c, m) => write!(f, "json-rpc {c}: {m}"),
        }
    }
}

impl std::error::Error for CallError {}

impl CallError {
    /// A short stable key to count errors by.
    pub fn key(&self) -> String {
        match self {
            CallError::Transport(e) => {
                let s = format!("{e:#}");
                if s.contains("timed out") || s.contains("WouldBlock") || s.contains("timeout") {
                    "transport:timeout".into()
                } else if s.contains("closed") || s.contains("reset") || s.contains("EOF") {
                    "transport:closed".into()
                } else {
                    "transport:other".into()
                }
            }
            CallError::Http(s, _) => format!("http_{s}"),
            CallError::Rpc(c, _) => format!("rpc_{c}"),
        }
    }
}

/// A tool's answer: `isError`, the structured content when given, and the text content.
#[derive(Debug)]
pub struct ToolAnswer {
    pub is_error: bool,
    pub structured: Option<Value>,
    pub text: String,
}

impl ToolAnswer {
    fn of(result: &Value) -> ToolAnswer {
        let text = result["content"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        ToolAnswer {
            is_error: result["isError"].as_bool().unwrap_or(false),
            structured: result.get("structuredContent").cloned(),
            text,
        }
    }

    /// The structured content, else the text content parsed as JSON.
    pub fn json(&self) -> Option<Value> {
        self.structured
            .clone()
            .or_else(|| serde_json::from_str(&self.text).ok())
    }

    /// The machine-readable error code of a refusal (`structuredContent.error.code`).
    pub fn error_code(&self) -> Option<String> {
        self.json()?["error"]["code"].as_str().map(str::to_string)
    }
}

/// A JSON-RPC client session over some transport.
pub trait Session {
    /// Send one request and wait for its answer's `result`.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, CallError>;

    fn call_tool(&mut self, name: &str, args: Value) -> Result<ToolAnswer, CallError> {
        let r = self.request("tools/call", json!({ "name": name, "arguments": args }))?;
        Ok(ToolAnswer::of(&r))
    }
}

fn rpc_result(msg: &Value) -> Result<Value, CallError> {
    if let Some(e) = msg.get("error") {
        return Err(CallError::Rpc(
            e["code"].as_i64().unwrap_or(0),
            e["message"].as_str().unwrap_or("").to_string(),
        ));
    }
    Ok(msg.get("result").cloned().unwrap_or(Value::Null))
}

fn initialize_params(client: &str) -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": { "name": client, "version": "0" }
    })
}

/// An MCP session over Streamable HTTP: `initialize`, `notifications/initialized`, then
/// requests, all on the one link, carrying `Mcp-Session-Id` and `MCP-Protocol-Version`.
pub struct HttpSession<L: HttpLink> {
    pub link: L,
    headers: Vec<(String, String)>,
    session: Option<String>,
    protocol: Option<String>,
    next_id: u64,
}

impl<L: HttpLink> HttpSession<L> {
    /// Open the session; `headers` go on every request (caller root, agent).
    pub fn open(link: L, headers: &[(&str, &str)], client: &str) -> Result<Self, CallError> {
        let mut s = HttpSession {
            link,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            session: None,
            protocol: None,
            next_id: 0,
        };
        let init = s.request("initialize", initialize_params(client))?;
        s.protocol = init["protocolVersion"].as_str().map(str::to_string);
        s.post(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
        Ok(s)
    }

    fn all_headers(&self) -> Vec<(String, String)> {
        let mut h = vec![
            ("content-type".to_string(), "application/json".to_string()),
            (
                "accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
        ];
        h.extend(self.headers.iter().cloned());
        if let Some(s) = &self.session {
            h.push(("mcp-session-id".into(), s.clone()));
        }
        if let Some(p) = &self.protocol {
            h.push(("mcp-protocol-version".into(), p.clone()));
        }
        h
    }

    /// POST one message to `/mcp`; the JSON-RPC messages of the answer.
    fn post(&mut self, msg: &Value) -> Result<Vec<Value>, CallError> {
        let headers = self.all_headers();
        let body = serde_json::to_vec(msg).expect("json");
        let a = self
            .link
            .send("POST", "/mcp", &headers, &body)
            .map_err(CallError::Transport)?;
        if let Some(s) = a.header("mcp-session-id") {
            self.session = Some(s.to_string());
        }
        let text = String::from_utf8_lossy(&a.body).into_owned();
        let ct = a.header("content-type").unwrap_or("").to_string();
        let msgs = if ct.starts_with("text/event-stream") {
            sse_messages(&text)
        } else {
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Array(v)) => v,
                Ok(v @ Value::Object(_)) => vec![v],
                _ => vec![],
            }
        };
        if !(200..300).contains(&a.status) && msgs.is_empty() {
            return Err(CallError::Http(a.status, text.chars().take(300).collect()));
        }
        Ok(msgs)
    }

    /// A plain GET on the same link (e.g. `/api/health`), its status and body.
    pub fn get(&mut self, path: &str) -> Result<HttpAnswer, CallError> {
        let headers = self.headers.clone();
        self.link
            .send("GET", path, &headers, &[])
            .map_err(CallError::Transport)
    }
}

impl<L: HttpLink> Session for HttpSession<L> {
    fn request(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        self.next_id += 1;
        let id = self.next_id;
        let msgs =
            self.post(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        let answer = msgs
            .iter()
            .find(|m| m["id"].as_u64() == Some(id))
            .ok_or_else(|| {
                CallError::Transport(anyhow!("no answer with id {id} in {} messages", msgs.len()))
            })?;
        rpc_result(answer)
    }
}

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

/// Resident memory of a process and all its descendants, in KiB (from /proc).
pub fn rss_tree_kib(pid: u32) -> u64 {
    let mut total = 0;
    let mut todo = vec![pid];
    let mut seen = std::collections::HashSet::new();
    while let Some(p) = todo.pop() {
        if !seen.insert(p) {
            continue;
        }
        total += proc_status_kib(p, "VmRSS:").unwrap_or(0);
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for e in dir.flatten() {
                let Some(child) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                    continue;
                };
                let ppid = std::fs::read_to_string(format!("/proc/{child}/stat"))
                    .ok()
                    .and_then(|s| {
                        // The command may hold spaces: fields resume after the last ')'.
                        let rest = &s[s.rfind(')')? + 2..];
                        rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                    });
                if ppid == Some(p) {
                    todo.push(child);
                }
            }
        }
    }
    total
}

/// A `Vm…:` field of /proc/<pid>/status in KiB.
pub fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Percentile of durations in milliseconds (sorts in place; nearest rank).
pub fn pct_ms(s: &mut [Duration], p: f64) -> f64 {
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_unstable();
    s[((s.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_bodies_skip_the_priming_event() {
        let body = "id: 0\nretry: 3000\ndata:\n\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        let m = sse_messages(body);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0]["id"], 1);
    }

    #[test]
    fn tool_answers_expose_refusal_codes() {
        let a = ToolAnswer::of(&json!({
            "isError": true,
            "content": [{ "type": "text", "text": "{}" }],
            "structuredContent": { "error": { "code": "would_downgrade", "message": "x" } }
        }));
        assert!(a.is_error);
        assert_eq!(a.error_code().as_deref(), Some("would_downgrade"));
    }
}
