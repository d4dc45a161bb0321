//! The check that ends `connect`: `initialize` then `tools/list` through the transport
//! the entry configured (Streamable HTTP with its headers, or the stdio bridge run in
//! the project), spoken as the client speaks it.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use serde_json::{json, Value};

use super::clients::Transport;
use crate::http::sse;

const WAIT: Duration = Duration::from_secs(10);

fn initialize(protocol: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": protocol, "capabilities": {},
        "clientInfo": { "name": "medulla-connect", "version": env!("CARGO_PKG_VERSION") } } })
}

fn initialized() -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })
}

fn tools_list() -> Value {
    json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" })
}

/// The number of tools a `tools/list` answer holds, or why it is not one.
fn tools_in(answer: &Value) -> anyhow::Result<usize> {
    if let Some(e) = answer.get("error") {
        bail!("tools/list was refused: {e}");
    }
    answer["result"]["tools"]
        .as_array()
        .map(Vec::len)
        .ok_or_else(|| anyhow!("tools/list answered without tools: {answer}"))
}

/// Check the transport reaches the owner, spoken as a client of `protocol` speaks it;
/// the number of tools it lists.
pub fn reaches(t: &Transport, root: &Path, protocol: &str) -> anyhow::Result<usize> {
    match t {
        Transport::Http { url, headers } => {
            let headers: Vec<(String, String)> = headers
                .iter()
                .map(|(k, v)| (k.clone(), as_client_sends(v, root)))
                .collect();
            over_http(url, &headers, protocol)
        }
        Transport::Stdio { command, args } => over_stdio(command, args, root, protocol),
    }
}

/// A header's value as the client sends it when it runs in `root`: `${workspaceFolder}`
/// (VS Code, Cursor), `${PWD}` (Claude Code, Gemini CLI, Codex's `env_http_headers`) and
/// `{env:PWD}` (opencode) are that directory.
fn as_client_sends(v: &str, root: &Path) -> String {
    let root = root.to_string_lossy();
    v.replace("${workspaceFolder}", &root)
        .replace("${PWD}", &root)
        .replace("{env:PWD}", &root)
}

/// A JSON-RPC answer from a Streamable HTTP response, read as a client of `protocol`
/// reads it: a JSON body, or an event stream whose every event with data is parsed as a
/// JSON-RPC message (the TypeScript SDK does so and drops the connection on the first
/// that fails; only a client of 2025-11-25 or later skips a priming event's empty data).
fn rpc_body(content_type: &str, body: &str, protocol: &str) -> anyhow::Result<Value> {
    if !content_type.starts_with("text/event-stream") {
        return serde_json::from_str(body).context("the answer was not JSON");
    }
    let mut answer = None;
    for event in sse::events(body) {
        let Some(data) = event.data else { continue };
        if data.is_empty() && sse::reads_priming(Some(protocol)) {
            continue;
        }
        let v: Value = serde_json::from_str(&data).map_err(|e| {
            anyhow!(
                "the owner sent an event a client of protocol {protocol} cannot parse ({data:?}: {e}); such a client drops the connection and its model is offered no tool"
            )
        })?;
        if v.get("id").is_some() {
            answer = Some(v);
        }
    }
    answer.ok_or_else(|| anyhow!("the event stream held no answer"))
}

fn over_http(url: &str, headers: &[(String, String)], protocol: &str) -> anyhow::Result<usize> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let http = reqwest::Client::builder().timeout(WAIT).build()?;
        let post = |body: Value, session: Option<&str>| {
            let mut req = http
                .post(url)
                .header("Accept", "application/json, text/event-stream")
                .json(&body);
            for (k, v) in headers {
                req = req.header(k.as_str(), v.as_str());
            }
            // After `initialize`, every request names the session and the protocol.
            if let Some(s) = session {
                req = req
                    .header("Mcp-Session-Id", s)
                    .header("MCP-Protocol-Version", protocol);
            }
            req.send()
        };
        let r = post(initialize(protocol), None).await.map_err(|e| {
            if e.is_connect() {
                anyhow!("no owner answers at {url}: start it with `medulla serve`")
            } else {
                anyhow!("initialize at {url} failed: {e}")
            }
        })?;
        let session = r
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let ct = content_type(&r);
        let init = rpc_body(&ct, &r.text().await?, protocol)?;
        if init.get("error").is_some() {
            bail!("initialize was refused: {}", init["error"]);
        }
        post(initialized(), session.as_deref()).await?;
        let r = post(tools_list(), session.as_deref()).await?;
        let ct = content_type(&r);
        tools_in(&rpc_body(&ct, &r.text().await?, protocol)?)
    })
}

fn content_type(r: &reqwest::Response) -> String {
    r.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

fn over_stdio(
    command: &str,
    args: &[String],
    root: &Path,
    protocol: &str,
) -> anyhow::Result<usize> {
    let mut child = Command::new(command)
        .args(args)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot run {command}"))?;
    let mut stdin = child.stdin.take().context("the bridge's stdin")?;
    let stdout = child.stdout.take().context("the bridge's stdout")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let answer = |want: u64| -> anyhow::Result<Value> {
        loop {
            let line = rx
                .recv_timeout(WAIT)
                .map_err(|_| anyhow!("the bridge did not answer within {} s", WAIT.as_secs()))?;
            let v: Value =
                serde_json::from_str(&line).context("the bridge wrote a line that is not JSON")?;
            if v["id"] == want {
                return Ok(v);
            }
        }
    };
    let result = (|| {
        writeln!(stdin, "{}", initialize(protocol))?;
        let init = answer(1)?;
        if init.get("error").is_some() {
            bail!(
                "initialize through the bridge was refused: {}",
                init["error"]
            );
        }
        writeln!(stdin, "{}", initialized())?;
        writeln!(stdin, "{}", tools_list())?;
        tools_in(&answer(2)?)
    })();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    result
}
