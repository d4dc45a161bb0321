//! The client hooks `connect --hooks` installs: `medulla prime` at session start,
//! `medulla hint` at each prompt and each file read or edited, `medulla nudge` at the end
//! of a turn, each in the client's own settings file and shape, merged with the hooks
//! already there; and taken out again by `disconnect`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use super::clients::{AgentClient, Places, Scope};
use super::files::{self, Edit};

/// `--hooks`: the files that make `medulla prime` the client's session-start hook,
/// `medulla nudge` its end-of-turn hook and `medulla hint` its prompt and file hooks,
/// merged with the hooks already there: Claude Code's `settings.json`, Codex's `hooks.json` (and
/// its `codex_hooks` feature in `config.toml`), Gemini CLI's `settings.json`.
pub fn edits(client: AgentClient, scope: Option<Scope>, root: &Path) -> anyhow::Result<Vec<Edit>> {
    let user = scope.unwrap_or(Scope::Project) == Scope::User;
    let base = |dir: &str| -> anyhow::Result<PathBuf> {
        Ok(if user {
            Places::from_env()?.home.join(dir)
        } else {
            root.join(dir)
        })
    };
    Ok(match client {
        AgentClient::ClaudeCode => vec![Edit {
            path: base(".claude")?.join("settings.json"),
            apply: claude_hook,
            undo: without_hooks,
        }],
        AgentClient::Gemini => vec![Edit {
            path: base(".gemini")?.join("settings.json"),
            apply: gemini_hook,
            undo: without_hooks,
        }],
        other => bail!(
            "{} has no session-start or end-of-turn hook medulla can install (`--hooks` covers claude-code, codex, gemini and opencode): connect it without `--hooks`, and run `medulla prime` from its own session-start mechanism if it has one",
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

/// Is this a command of medulla's hooks (`prime`, `nudge`, `hint`)?
pub(super) fn is_medullas(command: &str) -> bool {
    [" prime --client ", " nudge --client ", HINT]
        .iter()
        .any(|m| command.contains(m))
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
pub(super) fn without_hooks(before: &str, path: &Path) -> anyhow::Result<Option<String>> {
    let mut doc = files::parse_json(Some(before), path)?;
    let Some(hooks) = doc.get_mut("hooks").and_then(Value::as_object_mut) else {
        return Ok(None);
    };
    let mut changed = false;
    for list in hooks.values_mut().filter_map(Value::as_array_mut) {
        let n = list.len();
        list.retain(|g| {
            let commands = g["hooks"].as_array().into_iter().flatten();
            !commands
                .filter_map(|h| h["command"].as_str())
                .any(is_medullas)
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

pub(super) fn codex_hook(before: Option<&str>, path: &Path) -> anyhow::Result<String> {
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
