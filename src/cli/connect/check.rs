//! The check that ends `connect`: `initialize` then `tools/list` through the transport
//! the entry configured (Streamable HTTP with its headers, or the stdio bridge run in
//! the project), and the session-start and end-of-turn hooks `--hooks` installs.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use serde_json::{json, Value};

use super::clients::{AgentClient, Places, Scope, Transport};
use super::files;
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
/// (VS Code, Cursor) and `${PWD}` (Claude Code, Gemini CLI, Codex's `env_http_headers`)
/// are that directory.
fn as_client_sends(v: &str, root: &Path) -> String {
    let root = root.to_string_lossy();
    v.replace("${workspaceFolder}", &root)
        .replace("${PWD}", &root)
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

/// One file `--hooks` changes: its path and its text after the change (`before` is read
/// by the caller, which chains edits to a file `connect` also writes).
pub struct HookEdit {
    pub path: PathBuf,
    pub edit: fn(Option<&str>, &Path) -> anyhow::Result<String>,
}

/// `--hooks`: the files that make `medulla prime` the client's session-start hook,
/// `medulla nudge` its end-of-turn hook and `medulla hint` its prompt and file hooks,
/// merged with the hooks already there: Claude Code's `settings.json`, Codex's `hooks.json` (and
/// its `codex_hooks` feature in `config.toml`), Gemini CLI's `settings.json`.
pub fn hook_edits(
    client: AgentClient,
    scope: Option<Scope>,
    root: &Path,
) -> anyhow::Result<Vec<HookEdit>> {
    let user = scope.unwrap_or(Scope::Project) == Scope::User;
    let base = |dir: &str| -> anyhow::Result<PathBuf> {
        Ok(if user {
            Places::from_env()?.home.join(dir)
        } else {
            root.join(dir)
        })
    };
    Ok(match client {
        AgentClient::ClaudeCode => vec![HookEdit {
            path: base(".claude")?.join("settings.json"),
            edit: claude_hook,
        }],
        AgentClient::Codex => vec![
            HookEdit {
                path: base(".codex")?.join("hooks.json"),
                edit: codex_hook,
            },
            HookEdit {
                path: base(".codex")?.join("config.toml"),
                edit: codex_feature,
            },
        ],
        AgentClient::Gemini => vec![HookEdit {
            path: base(".gemini")?.join("settings.json"),
            edit: gemini_hook,
        }],
        other => bail!(
            "{} has no session-start or end-of-turn hook medulla can install (`--hooks` covers claude-code, codex and gemini): connect it without `--hooks`, and run `medulla prime` from its own session-start mechanism if it has one",
            other.name()
        ),
    })
}

/// Put `group` in `doc.hooks.SessionStart`, replacing medulla's earlier one (the group
/// whose command runs `prime --client`), keeping every other hook.
fn session_start(before: Option<&str>, path: &Path, group: Value) -> anyhow::Result<String> {
    put_group(before, path, "SessionStart", " prime --client ", group)
}

/// Put `group` in `doc.hooks.<event>`, replacing medulla's earlier one (the group whose
/// command contains `ours`), keeping every other hook.
fn put_group(
    before: Option<&str>,
    path: &Path,
    event: &str,
    ours: &str,
    group: Value,
) -> anyhow::Result<String> {
    let mut doc = files::parse_json(before, path)?;
    let list = doc
        .as_object_mut()
        .context("the settings file is not a JSON object")?
        .entry("hooks")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .context("`hooks` is not an object")?
        .entry(event)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .with_context(|| format!("`hooks.{event}` is not a list"))?;
    match list.iter().position(|g| is_ours(g, ours)) {
        Some(i) if list[i] == group => return Ok(before.unwrap_or_default().to_string()),
        Some(i) => list[i] = group,
        None => list.push(group),
    }
    files::json_text(&doc)
}

/// Is this hook group medulla's: does one of its commands contain `ours`?
fn is_ours(g: &Value, ours: &str) -> bool {
    g["hooks"].as_array().is_some_and(|hs| {
        hs.iter()
            .any(|h| h["command"].as_str().is_some_and(|c| c.contains(ours)))
    })
}

/// `disconnect`: the settings text without medulla's hook groups (its `prime` and `nudge`
/// commands), every other hook kept; `None` when it holds none.
pub fn without_hooks(before: &str, path: &Path) -> anyhow::Result<Option<String>> {
    let mut doc = files::parse_json(Some(before), path)?;
    let Some(hooks) = doc.get_mut("hooks").and_then(Value::as_object_mut) else {
        return Ok(None);
    };
    let mut changed = false;
    for list in hooks.values_mut().filter_map(Value::as_array_mut) {
        let n = list.len();
        list.retain(|g| {
            !is_ours(g, " prime --client ") && !is_ours(g, " nudge --client ") && !is_ours(g, HINT)
        });
        changed |= list.len() != n;
    }
    if !changed {
        return Ok(None);
    }
    hooks.retain(|_, v| v.as_array().is_none_or(|l| !l.is_empty()));
    if hooks.is_empty() {
        doc.as_object_mut().map(|o| o.remove("hooks"));
    }
    files::json_text(&doc).map(Some)
}

fn prime_command(client: &str) -> anyhow::Result<String> {
    Ok(super::launcher()?.command_line(&["prime", "--client", client]))
}

/// Marks medulla's prompt and file hook groups.
const HINT: &str = " hint --client ";

fn hint_command(client: &str) -> anyhow::Result<String> {
    Ok(super::launcher()?.command_line(&["hint", "--client", client]))
}

/// Put the prompt hook in `prompt_event` and the file hook in `file_event` (matching
/// `tools`), each replacing medulla's earlier one. Claude Code's and Codex's timeouts are
/// seconds, Gemini CLI's milliseconds.
fn hint_hooks(
    before: &str,
    path: &Path,
    client: &str,
    (prompt_event, file_event, tools): (&str, &str, &str),
    timeout: u64,
) -> anyhow::Result<String> {
    let hook = |name: &str| -> anyhow::Result<Value> {
        let mut h =
            json!({ "type": "command", "command": hint_command(client)?, "timeout": timeout });
        if client == "gemini" {
            h["name"] = json!(name);
            h["description"] = json!("what medulla remembers about this prompt or file");
        }
        Ok(h)
    };
    let prompt = json!({ "hooks": [hook("medulla-hint-prompt")?] });
    let with_prompt = put_group(Some(before), path, prompt_event, HINT, prompt)?;
    let file = json!({ "matcher": tools, "hooks": [hook("medulla-hint-file")?] });
    put_group(Some(&with_prompt), path, file_event, HINT, file)
}

fn claude_hook(before: Option<&str>, path: &Path) -> anyhow::Result<String> {
    let group = json!({
        "matcher": "startup|resume|clear|compact",
        "hooks": [{ "type": "command", "command": prime_command("claude")? }]
    });
    let with_start = session_start(before, path, group)?;
    // The end-of-turn nudge (issue 53): Claude Code's `Stop` hook (timeout in seconds).
    let stop = json!({
        "hooks": [{ "type": "command", "command": nudge_command("claude")?, "timeout": 5 }]
    });
    let with_stop = put_group(Some(&with_start), path, "Stop", " nudge --client ", stop)?;
    // Hints at the point of use (issue 64): each prompt, each file read or edited
    // (`PostToolUse`: after a tool that ran, the context beside its result).
    hint_hooks(
        &with_stop,
        path,
        "claude",
        (
            "UserPromptSubmit",
            "PostToolUse",
            "Read|Edit|Write|MultiEdit|NotebookEdit",
        ),
        5,
    )
}

fn nudge_command(client: &str) -> anyhow::Result<String> {
    Ok(super::launcher()?.command_line(&["nudge", "--client", client]))
}

fn codex_hook(before: Option<&str>, path: &Path) -> anyhow::Result<String> {
    let group = json!({
        "matcher": "startup|resume|clear",
        "hooks": [{ "type": "command", "command": prime_command("codex")?, "timeout": 10 }]
    });
    let with_start = session_start(before, path, group)?;
    // Codex's `Stop` takes no matcher; its timeout is in seconds.
    let stop = json!({
        "hooks": [{ "type": "command", "command": nudge_command("codex")?, "timeout": 5 }]
    });
    let with_stop = put_group(Some(&with_start), path, "Stop", " nudge --client ", stop)?;
    // Codex edits files with `apply_patch` and reads them with shell commands.
    hint_hooks(
        &with_stop,
        path,
        "codex",
        ("UserPromptSubmit", "PostToolUse", "^(apply_patch|Bash)$"),
        5,
    )
}

fn gemini_hook(before: Option<&str>, path: &Path) -> anyhow::Result<String> {
    let group = json!({
        "hooks": [{ "name": "medulla-prime", "type": "command", "command": prime_command("gemini")?,
                    "description": "what medulla remembers about this project" }]
    });
    let with_start = session_start(before, path, group)?;
    // Gemini CLI's end of a turn is `AfterAgent`; its timeout is in milliseconds.
    let after = json!({
        "hooks": [{ "name": "medulla-nudge", "type": "command", "command": nudge_command("gemini")?,
                    "timeout": 5000, "description": "ask once for a debrief after real work" }]
    });
    let with_after = put_group(
        Some(&with_start),
        path,
        "AfterAgent",
        " nudge --client ",
        after,
    )?;
    // `BeforeAgent` adds context to the prompt; of the tool events only `AfterTool` can
    // (its matchers are unanchored regular expressions).
    hint_hooks(
        &with_after,
        path,
        "gemini",
        (
            "BeforeAgent",
            "AfterTool",
            "^(read_file|read_many_files|write_file|replace)$",
        ),
        5000,
    )
}

/// Codex runs hooks only with `[features] codex_hooks = true` in its config.
fn codex_feature(before: Option<&str>, path: &Path) -> anyhow::Result<String> {
    let text = before.unwrap_or_default();
    let mut doc = files::parse_toml(text, path)?;
    let features = doc
        .entry("features")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_mut()
        .with_context(|| format!("{}: `features` is not a table", path.display()))?;
    if features.get("codex_hooks").and_then(|v| v.as_bool()) == Some(true) {
        return Ok(text.to_string());
    }
    features.insert("codex_hooks", toml_edit::value(true));
    Ok(doc.to_string())
}
