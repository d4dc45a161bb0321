//! A small MCP client for the benches: JSON-RPC over Streamable HTTP on one kept-alive
//! connection (as every MCP SDK holds it) or over a child's stdio, and the HTTP/1.1
//! links underneath. Written by hand so the bench sees exactly the bytes a client sends.
//!
//! Layout: this file holds the JSON-RPC layer every transport shares (errors, tool
//! answers, the `Session` trait); `link` the HTTP/1.1 links; `http` the Streamable HTTP
//! session; `stdio` the child-process session; `measure` memory and percentiles.

mod http;
mod link;
mod measure;
mod stdio;

use std::time::Duration;

use anyhow::Result;
use serde_json::{json, Value};

pub use http::HttpSession;
pub use link::{HttpLink, RawLink, ReqwestLink};
pub use measure::{proc_status_kib, rss_tree_kib};
pub use stdio::StdioSession;

/// The newest protocol version that still has an `initialize` handshake.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// How long one answer may take before the call counts as failed.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(60);

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

    /// The structured content, else the text content parsed as JSON (a refusal's: the
    /// JSON after its first line, `code: message`).
    pub fn json(&self) -> Option<Value> {
        self.structured.clone().or_else(|| {
            serde_json::from_str(&self.text).ok().or_else(|| {
                let (_, typed) = self.text.split_once('\n')?;
                serde_json::from_str(typed).ok()
            })
        })
    }

    /// The machine-readable error code of a refusal (`error.code`).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_answers_expose_refusal_codes() {
        let a = ToolAnswer::of(&json!({
            "isError": true,
            "content": [{ "type": "text",
                "text": "would_downgrade: x\n{\"error\":{\"code\":\"would_downgrade\",\"message\":\"x\"}}" }]
        }));
        assert!(a.is_error);
        assert_eq!(a.error_code().as_deref(), Some("would_downgrade"));
    }
}
