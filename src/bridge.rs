//! `medulla bridge`: a stdio MCP server for clients that only speak stdio. Each JSON-RPC
//! line read from stdin is forwarded to the running owner's `POST /mcp`, carrying the
//! bridge's working directory as the caller root (and `MEDULLA_BRAIN` as a binding when
//! set), so stdio calls are routed exactly like HTTP ones. Answers go to stdout, one per
//! line. A `subscriptions/listen` (2026-07-28) stays open: its notifications are written
//! as they arrive, while other requests go on, until the client cancels it.
//!
//! The owner is started when none answers (SPEC §2), and a restart under a live session
//! is invisible: the bridge opens a new upstream session with the client's own
//! `initialize` and sends the call again once.

use std::collections::HashMap;
use std::path::PathBuf;
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

/// The bridge's side of the upstream MCP session: where the owner is, the session it
/// opened there, and the client's own `initialize` (and `notifications/initialized`),
/// kept to open a new session by itself when the owner restarted and forgot the old one.
struct Upstream {
    home: PathBuf,
    explicit: Option<String>,
    url: String,
    cwd: String,
    binding: Option<String>,
    /// The client token, sent where the owner asks for it (SPEC §15).
    bearer: Option<String>,
    http: reqwest::Client,
    session: Option<String>,
    /// The protocol version negotiated at `initialize`, sent on every later request as
    /// the Streamable HTTP transport asks.
    negotiated: Option<String>,
    init: Option<String>,
    initialized: Option<String>,
}

/// One answer from the owner, read whole.
struct Reply {
    status: reqwest::StatusCode,
    content_type: String,
    body: String,
}

impl Upstream {
    fn endpoint(&self) -> String {
        format!("{}/mcp", self.url.trim_end_matches('/'))
    }

    /// A POST of one JSON-RPC line with the routing, session and version headers.
    fn request(
        &self,
        client: &reqwest::Client,
        line: &str,
        parsed: Option<&Value>,
    ) -> reqwest::RequestBuilder {
        // A request that names its protocol version per request (2026-07-28 and later)
        // must carry the same in the MCP-Protocol-Version header; otherwise the version
        // negotiated at initialize.
        let version = parsed
            .and_then(|v| v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str())
            .map(str::to_string)
            .or_else(|| self.negotiated.clone());
        let mut req = client
            .post(self.endpoint())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header(headers::CALLER_ROOT, &self.cwd)
            .body(line.to_string());
        if let Some(b) = &self.binding {
            req = req.header(headers::BRAIN, b);
        }
        if let Some(t) = &self.bearer {
            req = req.header(reqwest::header::AUTHORIZATION, t);
        }
        if let Some(s) = &self.session {
            req = req.header(headers::SESSION, s);
        }
        if let Some(v) = &version {
            req = req.header("mcp-protocol-version", v);
        }
        // The standard request headers (SEP-2243) that 2026-07-28 asks for, taken from the
        // body so they always agree with it.
        if let Some(method) = parsed.and_then(|v| v["method"].as_str()) {
            req = req.header("mcp-method", method);
            let name = parsed.and_then(|v| v["params"]["name"].as_str());
            if let Some(name) = name.filter(|n| n.chars().all(|c| c.is_ascii_graphic())) {
                req = req.header("mcp-name", name);
            }
        }
        req
    }

    async fn post(&mut self, line: &str, parsed: Option<&Value>) -> reqwest::Result<Reply> {
        let resp = self.request(&self.http, line, parsed).send().await?;
        crate::launch::note_version(
            resp.headers()
                .get(headers::VERSION)
                .and_then(|v| v.to_str().ok()),
        );
        if let Some(s) = resp
            .headers()
            .get(headers::SESSION)
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(s.to_string());
        }
        let status = resp.status();
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|c| c.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body = resp.text().await.unwrap_or_default();
        Ok(Reply {
            status,
            content_type,
            body,
        })
    }

    /// The owner stopped answering: find it again, starting one when none answers (as
    /// every client does, SPEC §2). Err is the message the client is answered with.
    async fn find_owner(&mut self) -> Result<(), String> {
        let (home, explicit) = (self.home.clone(), self.explicit.clone());
        let found =
            tokio::task::spawn_blocking(move || crate::launch::ensure(&home, explicit.as_deref()))
                .await
                .map_err(|e| format!("the owner could not be looked for: {e}"))?;
        self.url = found.map_err(|e| e.to_string())?;
        Ok(())
    }

    /// Open a new session with the client's own `initialize` (its answer is the client's
    /// already), then say `notifications/initialized` as the client did.
    async fn reopen(&mut self) -> Result<(), String> {
        self.session = None;
        let Some(init) = self.init.clone() else {
            return Ok(());
        };
        let parsed = serde_json::from_str::<Value>(&init).ok();
        let r = self
            .post(&init, parsed.as_ref())
            .await
            .map_err(|e| format!("the owner did not take a new session: {e}"))?;
        if !r.status.is_success() {
            return Err(format!(
                "the owner refused a new session: HTTP {}: {}",
                r.status, r.body
            ));
        }
        if let Some(done) = self.initialized.clone() {
            let parsed = serde_json::from_str::<Value>(&done).ok();
            let _ = self.post(&done, parsed.as_ref()).await;
        }
        tracing::info!(url = %self.url, "the owner had forgotten this session: opened a new one");
        Ok(())
    }

    /// Forward one message and return the answers for the client. When the owner is gone
    /// (a restart, a crash) or answers `404` for a session it no longer knows, the session
    /// is opened again and the message sent once more: the client sees only the answer.
    async fn forward(
        &mut self,
        line: &str,
        parsed: Option<&Value>,
        id: Option<Value>,
    ) -> Vec<Value> {
        let method = parsed
            .and_then(|v| v["method"].as_str())
            .unwrap_or_default();
        let opening = method == "initialize";
        if opening {
            self.init = Some(line.to_string());
            self.initialized = None;
            self.session = None;
        } else if method == "notifications/initialized" {
            self.initialized = Some(line.to_string());
        }
        let had_session = self.session.is_some();
        let first = self.post(line, parsed).await;
        // Send it again once: after the owner was found (or started) anew, or when it
        // answered 404 for a session it no longer knows.
        let again = match &first {
            Err(e) if !e.is_timeout() => {
                tracing::info!(error = %e, "the owner did not answer: looking for it again");
                if let Err(msg) = self.find_owner().await {
                    return error_for(id, msg);
                }
                true
            }
            Ok(r) => r.status == reqwest::StatusCode::NOT_FOUND && had_session && !opening,
            Err(_) => false,
        };
        let reply = if again {
            // An `initialize` opens its own session; anything else needs one opened
            // with the client's `initialize`.
            if !opening {
                if let Err(msg) = self.reopen().await {
                    return error_for(id, msg);
                }
            }
            self.post(line, parsed).await
        } else {
            first
        };
        let reply = match reply {
            Ok(r) => r,
            Err(e) => {
                let msg = format!("the request to {} failed: {e}", self.url);
                tracing::error!("{msg}");
                return error_for(id, msg);
            }
        };
        let msgs = messages_of(&reply.content_type, &reply.body);
        let answers = if msgs.is_empty() && !reply.status.is_success() {
            id.map(|id| {
                vec![rpc_error(
                    id,
                    -32603,
                    format!("the owner answered HTTP {}: {}", reply.status, reply.body),
                )]
            })
            .unwrap_or_default()
        } else {
            msgs
        };
        for a in &answers {
            if let Some(v) = a["result"]["protocolVersion"].as_str() {
                self.negotiated = Some(v.to_string());
            }
        }
        answers
    }
}

/// The answer to a request that could not be delivered (none for a notification).
fn error_for(id: Option<Value>, msg: String) -> Vec<Value> {
    id.map(|id| vec![rpc_error(id, -32603, msg)])
        .unwrap_or_default()
}

/// Run the bridge until stdin closes. The owner is looked for at the first message, and
/// started then when none answers (unless autostart is off or `url` names one).
pub async fn run(home: PathBuf, url: Option<String>) -> anyhow::Result<()> {
    let cwd = std::env::current_dir()?.to_string_lossy().into_owned();
    let binding = std::env::var("MEDULLA_BRAIN")
        .ok()
        .filter(|b| !b.is_empty());
    // The client token, where the owner asks for it (SPEC §15); read once.
    let bearer = crate::client_token::bearer();
    let mut up = Upstream {
        url: crate::launch::locate(&home, url.as_deref()).url,
        home,
        explicit: url,
        cwd,
        binding,
        bearer,
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(300))
            .build()?,
        session: None,
        negotiated: None,
        init: None,
        initialized: None,
    };
    // A listen stream lasts as long as the client wants it.
    let streaming = reqwest::Client::builder().build()?;
    let mut listens: HashMap<String, tokio::task::JoinHandle<()>> = HashMap::new();
    let stdout: Out = Arc::new(tokio::sync::Mutex::new(tokio::io::stdout()));
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let parsed = serde_json::from_str::<Value>(&line).ok();
        let id = parsed.as_ref().and_then(|v| v.get("id").cloned());
        let method = parsed
            .as_ref()
            .and_then(|v| v["method"].as_str())
            .unwrap_or_default()
            .to_string();
        if method == "notifications/cancelled" {
            let cancelled = parsed
                .as_ref()
                .map(|v| v["params"]["requestId"].to_string());
            if let Some(task) = cancelled.and_then(|c| listens.remove(&c)) {
                task.abort();
            }
        }
        if method == "subscriptions/listen" && id.is_some() {
            let id = id.clone().unwrap_or_default();
            let req = up.request(&streaming, &line, parsed.as_ref());
            listens.retain(|_, t| !t.is_finished());
            let task = tokio::spawn(stream_listen(req, id.clone(), stdout.clone()));
            listens.insert(id.to_string(), task);
            continue;
        }
        let answers = up.forward(&line, parsed.as_ref(), id).await;
        emit(&stdout, &answers).await?;
    }
    for (_, task) in listens {
        task.abort();
    }
    // End the HTTP session so the owner can drop it.
    if let Some(s) = up.session.take() {
        let mut end = up.http.delete(up.endpoint()).header(headers::SESSION, s);
        if let Some(t) = &up.bearer {
            end = end.header(reqwest::header::AUTHORIZATION, t);
        }
        let _ = end.send().await;
    }
    Ok(())
}

/// The blocking entry point used by the CLI.
pub fn main(home: PathBuf, url: Option<String>) -> anyhow::Result<i32> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(run(home, url))
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
