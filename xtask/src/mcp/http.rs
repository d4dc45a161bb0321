//! An MCP session over Streamable HTTP, and reading the SSE bodies it may answer with.

use anyhow::anyhow;
use serde_json::{json, Value};

use super::link::{HttpAnswer, HttpLink};
use super::{initialize_params, rpc_result, CallError, Session};

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

    /// A JSON POST on the same link outside MCP (e.g. a REST call), its status and body.
    pub fn post_json(&mut self, path: &str, body: &Value) -> Result<HttpAnswer, CallError> {
        let mut headers = self.headers.clone();
        headers.push(("content-type".into(), "application/json".into()));
        let body = serde_json::to_vec(body).expect("json");
        self.link
            .send("POST", path, &headers, &body)
            .map_err(CallError::Transport)
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
}
