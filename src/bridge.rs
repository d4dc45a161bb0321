//! `medulla bridge`: a stdio MCP server for clients that only speak stdio. Each JSON-RPC
//! line read from stdin is forwarded to the running owner's `POST /mcp`, carrying the
//! bridge's working directory as the caller root (and `MEDULLA_BRAIN` as a binding when
//! set), so stdio calls are routed exactly like HTTP ones. Answers go to stdout, one per
//! line.

use std::time::Duration;

use anyhow::{anyhow, Context};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::http::headers;

/// Pull every JSON-RPC message out of an answer body (SSE or plain JSON).
pub fn messages_of(content_type: &str, body: &str) -> Vec<Value> {
    if content_type.starts_with("text/event-stream") {
        let mut out = Vec::new();
        let mut data = String::new();
        for line in body.lines().chain(std::iter::once("")) {
            if let Some(d) = line.strip_prefix("data:") {
                data.push_str(d.trim_start());
            } else if line.is_empty() && !data.is_empty() {
                if let Ok(v) = serde_json::from_str::<Value>(&data) {
                    out.push(v);
                }
                data.clear();
            }
        }
        return out;
    }
    match serde_json::from_str::<Value>(body) {
        Ok(Value::Array(a)) => a,
        Ok(Value::Null) | Err(_) => vec![],
        Ok(v) => vec![v],
    }
}

fn rpc_error(id: Value, code: i64, message: String) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// Run the bridge until stdin closes.
pub async fn run(url: String) -> anyhow::Result<()> {
    let endpoint = format!("{}/mcp", url.trim_end_matches('/'));
    let cwd = std::env::current_dir()?.to_string_lossy().into_owned();
    let binding = std::env::var("MEDULLA_BRAIN")
        .ok()
        .filter(|b| !b.is_empty());
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(300))
        .build()?;
    let mut session: Option<String> = None;
    // The protocol version negotiated at `initialize`, sent on every later request as the
    // Streamable HTTP transport asks.
    let mut negotiated: Option<String> = None;
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let parsed = serde_json::from_str::<Value>(&line).ok();
        let id = parsed.as_ref().and_then(|v| v.get("id").cloned());
        // A request that names its protocol version per request (2026-07-28 and later)
        // must carry the same in the MCP-Protocol-Version header; otherwise the version
        // negotiated at initialize.
        let version = parsed
            .as_ref()
            .and_then(|v| v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str())
            .map(str::to_string)
            .or_else(|| negotiated.clone());
        let mut req = http
            .post(&endpoint)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header(headers::CALLER_ROOT, &cwd)
            .body(line.clone());
        if let Some(b) = &binding {
            req = req.header(headers::BRAIN, b);
        }
        if let Some(s) = &session {
            req = req.header(headers::SESSION, s);
        }
        if let Some(v) = &version {
            req = req.header("mcp-protocol-version", v);
        }
        // The standard request headers (SEP-2243) that 2026-07-28 asks for, taken from the
        // body so they always agree with it.
        if let Some(method) = parsed.as_ref().and_then(|v| v["method"].as_str()) {
            req = req.header("mcp-method", method);
            let name = parsed.as_ref().and_then(|v| v["params"]["name"].as_str());
            if let Some(name) = name.filter(|n| n.chars().all(|c| c.is_ascii_graphic())) {
                req = req.header("mcp-name", name);
            }
        }
        let answers = match req.send().await {
            Ok(resp) => {
                if let Some(s) = resp
                    .headers()
                    .get(headers::SESSION)
                    .and_then(|v| v.to_str().ok())
                {
                    session = Some(s.to_string());
                }
                let status = resp.status();
                let ct = resp
                    .headers()
                    .get("content-type")
                    .and_then(|c| c.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                let body = resp.text().await.unwrap_or_default();
                let msgs = messages_of(&ct, &body);
                if msgs.is_empty() && !status.is_success() {
                    id.clone()
                        .map(|id| {
                            vec![rpc_error(
                                id,
                                -32603,
                                format!("the owner answered HTTP {status}: {body}"),
                            )]
                        })
                        .unwrap_or_default()
                } else {
                    msgs
                }
            }
            Err(e) => {
                let msg = if e.is_connect() {
                    format!("no medulla owner is running at {url}: start one with `medulla serve`")
                } else {
                    format!("the request to {url} failed: {e}")
                };
                tracing::error!("{msg}");
                id.clone()
                    .map(|id| vec![rpc_error(id, -32603, msg)])
                    .unwrap_or_default()
            }
        };
        for a in answers {
            if let Some(v) = a["result"]["protocolVersion"].as_str() {
                negotiated = Some(v.to_string());
            }
            let mut text = serde_json::to_string(&a)?;
            text.push('\n');
            stdout
                .write_all(text.as_bytes())
                .await
                .context("stdout closed")?;
        }
        stdout.flush().await?;
    }
    // End the HTTP session so the owner can drop it.
    if let Some(s) = session {
        let _ = http
            .delete(&endpoint)
            .header(headers::SESSION, s)
            .send()
            .await;
    }
    Ok(())
}

/// The blocking entry point used by the CLI.
pub fn main(url: String) -> anyhow::Result<i32> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(run(url))
        .map_err(|e| anyhow!("bridge stopped: {e}"))?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_and_json_bodies_yield_their_messages() {
        let sse = "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n";
        let m = messages_of("text/event-stream", sse);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0]["id"], 1);
        assert_eq!(messages_of("application/json", "{\"id\":2}")[0]["id"], 2);
        assert!(messages_of("application/json", "").is_empty());
        assert_eq!(
            messages_of("application/json", "[{\"id\":1},{\"id\":2}]").len(),
            2
        );
    }
}
