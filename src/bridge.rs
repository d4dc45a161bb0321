//! `medulla bridge`: a stdio MCP server for clients that only speak stdio. Each JSON-RPC
//! line read from stdin is forwarded to the running owner's `POST /mcp`, carrying the
//! bridge's working directory as the caller root (and `MEDULLA_BRAIN` as a binding when
//! set), so stdio calls are routed exactly like HTTP ones. Answers go to stdout, one per
//! line. A `subscriptions/listen` (2026-07-28) stays open: its notifications are written
//! as they arrive, while other requests go on, until the client cancels it.

use std::collections::HashMap;
use std::sync::Arc;
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

/// Takes every complete server-sent event out of `buf`, leaving a partial one.
fn take_events(buf: &mut String) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(end) = buf.find("\n\n") {
        let event: String = buf.drain(..end + 2).collect();
        out.extend(messages_of("text/event-stream", &event));
    }
    out
}

type Out = Arc<tokio::sync::Mutex<tokio::io::Stdout>>;

/// Writes messages to stdout, one per line, whole.
async fn emit(stdout: &Out, messages: &[Value]) -> anyhow::Result<()> {
    let mut out = stdout.lock().await;
    for m in messages {
        let mut text = serde_json::to_string(m)?;
        text.push('\n');
        out.write_all(text.as_bytes())
            .await
            .context("stdout closed")?;
    }
    out.flush().await?;
    Ok(())
}

/// A `subscriptions/listen`: its stream's messages written as they arrive, until it ends
/// or the task is aborted (the client cancelled it; dropping the response closes the
/// stream, which is how the owner learns of it).
async fn stream_listen(req: reqwest::RequestBuilder, id: Value, stdout: Out) {
    let mut resp = match req.send().await {
        Ok(r) => r,
        Err(e) => {
            let msg = format!("subscriptions/listen failed: {e}");
            let _ = emit(&stdout, &[rpc_error(id, -32603, msg)]).await;
            return;
        }
    };
    let sse = resp
        .headers()
        .get("content-type")
        .and_then(|c| c.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    let mut buf = String::new();
    loop {
        match resp.chunk().await {
            Ok(Some(bytes)) => {
                buf.push_str(&String::from_utf8_lossy(&bytes).replace('\r', ""));
                if sse && emit(&stdout, &take_events(&mut buf)).await.is_err() {
                    return;
                }
            }
            Ok(None) => break,
            Err(e) => {
                tracing::debug!(error = %e, "a subscriptions/listen stream broke");
                break;
            }
        }
    }
    let rest = if sse {
        buf.push_str("\n\n");
        take_events(&mut buf)
    } else {
        messages_of("application/json", &buf)
    };
    let _ = emit(&stdout, &rest).await;
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
    // The client token, where the owner asks for it (SPEC §15); read once.
    let bearer = crate::client_token::bearer();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(300))
        .build()?;
    // A listen stream lasts as long as the client wants it.
    let streaming = reqwest::Client::builder().build()?;
    let mut listens: HashMap<String, tokio::task::JoinHandle<()>> = HashMap::new();
    let stdout: Out = Arc::new(tokio::sync::Mutex::new(tokio::io::stdout()));
    let mut session: Option<String> = None;
    // The protocol version negotiated at `initialize`, sent on every later request as the
    // Streamable HTTP transport asks.
    let mut negotiated: Option<String> = None;
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
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
        let method = parsed
            .as_ref()
            .and_then(|v| v["method"].as_str())
            .unwrap_or_default()
            .to_string();
        let listen = method == "subscriptions/listen" && id.is_some();
        if method == "notifications/cancelled" {
            let cancelled = parsed
                .as_ref()
                .map(|v| v["params"]["requestId"].to_string());
            if let Some(task) = cancelled.and_then(|c| listens.remove(&c)) {
                task.abort();
            }
        }
        let mut req = if listen { &streaming } else { &http }
            .post(&endpoint)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header(headers::CALLER_ROOT, &cwd)
            .body(line.clone());
        if let Some(b) = &binding {
            req = req.header(headers::BRAIN, b);
        }
        if let Some(t) = &bearer {
            req = req.header(reqwest::header::AUTHORIZATION, t);
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
        if listen {
            let id = id.clone().unwrap_or_default();
            listens.retain(|_, t| !t.is_finished());
            let task = tokio::spawn(stream_listen(req, id.clone(), stdout.clone()));
            listens.insert(id.to_string(), task);
            continue;
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
        for a in &answers {
            if let Some(v) = a["result"]["protocolVersion"].as_str() {
                negotiated = Some(v.to_string());
            }
        }
        emit(&stdout, &answers).await?;
    }
    for (_, task) in listens {
        task.abort();
    }
    // End the HTTP session so the owner can drop it.
    if let Some(s) = session {
        let mut end = http.delete(&endpoint).header(headers::SESSION, s);
        if let Some(t) = &bearer {
            end = end.header(reqwest::header::AUTHORIZATION, t);
        }
        let _ = end.send().await;
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
    #[test]
    fn events_are_taken_whole_and_a_partial_one_waits() {
        let mut buf = String::from(
            "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\ndata: {\"jsonrpc\":",
        );
        let got = super::take_events(&mut buf);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0]["method"], "a");
        assert_eq!(buf, "data: {\"jsonrpc\":");
        buf.push_str("\"2.0\",\"id\":7,\"result\":{}}\n\n");
        let got = super::take_events(&mut buf);
        assert_eq!(got[0]["id"], 7);
        assert!(buf.is_empty());
    }

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
