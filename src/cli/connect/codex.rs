//! Codex's hooks where Codex runs them in every checkout. Codex runs a hook only once the
//! person has trusted it, and keys that trust by the hooks file's path: hooks in a
//! project's `.codex/hooks.json` are skipped, silently, in every clone of it until trusted
//! again there. So `connect codex --hooks` installs medulla's hooks once, in the user's
//! `$CODEX_HOME/hooks.json` (they answer only where a brain serves the directory), and
//! records in `$CODEX_HOME/config.toml` that the person trusts those handlers, exactly as
//! Codex's own review does (`[hooks.state."<file>:<event>:<group>:<handler>"]
//! trusted_hash`, the SHA-256 of the handler's normalized definition): the person asked
//! for these hooks by running `connect`; hooks anyone else adds still wait for review.
//! The project's MCP entry stays in `.codex/config.toml`, which Codex reads only in a
//! project the person trusts: `connect` says so when it is not (`trust.rs`), and never
//! trusts a project for them.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::clients::Places;
use super::files::{self, Edit};
use super::hooks;

/// `$CODEX_HOME`, else `~/.codex`.
pub fn home() -> anyhow::Result<PathBuf> {
    match std::env::var_os("CODEX_HOME").map(PathBuf::from) {
        Some(h) if h.is_absolute() => Ok(h),
        Some(h) => Ok(std::env::current_dir()?.join(h)),
        None => Ok(Places::from_env()?.home.join(".codex")),
    }
}

/// The files `--hooks` changes for Codex: the user's hooks and their trust; in the
/// project, medulla's hooks of earlier versions taken out of `.codex/hooks.json` (they
/// would run twice) and the deprecated `codex_hooks` feature flag they needed.
pub fn hook_edits(root: &Path) -> anyhow::Result<Vec<Edit>> {
    let home = home()?;
    let mut edits = vec![
        Edit {
            path: home.join("hooks.json"),
            apply: hooks::codex_hook,
            undo: hooks::without_hooks,
        },
        Edit {
            path: home.join("config.toml"),
            apply: trust,
            undo: untrust,
        },
    ];
    let project = root.join(".codex");
    if project.join("hooks.json").exists() {
        edits.push(Edit {
            path: project.join("hooks.json"),
            apply: moved_out,
            undo: hooks::without_hooks,
        });
    }
    if project.join("config.toml").exists() {
        edits.push(Edit {
            path: project.join("config.toml"),
            apply: without_old_flag,
            undo: files::kept,
        });
    }
    Ok(edits)
}

fn moved_out(before: Option<&str>, path: &Path) -> anyhow::Result<String> {
    let before = before.unwrap_or_default();
    Ok(hooks::without_hooks(before, path)?.unwrap_or_else(|| before.to_string()))
}

/// medulla wrote `[features] codex_hooks = true` before Codex made hooks a default and
/// renamed the flag; Codex now reports the old name as an error item in every run.
fn without_old_flag(before: Option<&str>, path: &Path) -> anyhow::Result<String> {
    let text = before.unwrap_or_default();
    let mut doc = files::parse_toml(text, path)?;
    let Some(features) = doc.get_mut("features").and_then(|f| f.as_table_mut()) else {
        return Ok(text.to_string());
    };
    if features.remove("codex_hooks").is_none() {
        return Ok(text.to_string());
    }
    if features.is_empty() {
        doc.remove("features");
    }
    Ok(doc.to_string())
}

/// Codex's event names in a trust key: `SessionStart` → `session_start`.
fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// JSON with its keys sorted and no white space, as Codex hashes a hook's definition.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&m[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// Codex's trust key and hash of each of medulla's handlers in a hooks file's text:
/// the key `<file>:<event>:<group index>:<handler index>`, the hash `sha256:` of the
/// canonical `{event_name, matcher?, hooks: [{type, command, timeout, async}]}`.
fn ours(hooks_file: &Path, text: &str) -> anyhow::Result<Vec<(String, String)>> {
    let doc = files::parse_json(Some(text), hooks_file)?;
    let mut out = Vec::new();
    let Some(events) = doc["hooks"].as_object() else {
        return Ok(out);
    };
    for (event, groups) in events {
        for (gi, g) in groups.as_array().into_iter().flatten().enumerate() {
            for (hi, h) in g["hooks"].as_array().into_iter().flatten().enumerate() {
                let command = h["command"].as_str().unwrap_or_default();
                if !hooks::is_medullas(command) {
                    continue;
                }
                let timeout = h["timeout"].as_u64().unwrap_or(600).max(1);
                let handler = serde_json::json!({
                    "type": "command", "command": command, "timeout": timeout,
                    "async": h["async"].as_bool().unwrap_or(false),
                });
                let mut ident =
                    serde_json::json!({ "event_name": snake(event), "hooks": [handler] });
                if let Some(m) = g.get("matcher").filter(|m| !m.is_null()) {
                    ident["matcher"] = m.clone();
                }
                let hash = hex::encode(Sha256::digest(canonical(&ident).as_bytes()));
                let key = format!("{}:{}:{gi}:{hi}", hooks_file.display(), snake(event));
                out.push((key, format!("sha256:{hash}")));
            }
        }
    }
    Ok(out)
}

/// The user's hooks file as `connect` leaves it, beside `config`.
fn hooks_after(config: &Path) -> anyhow::Result<(PathBuf, String)> {
    let file = config.with_file_name("hooks.json");
    let now = files::read(&file)?;
    let after = hooks::codex_hook(now.as_deref(), &file)?;
    Ok((file, after))
}

/// `[hooks.state]` of the user's config, made when missing.
fn state_table<'a>(
    doc: &'a mut toml_edit::DocumentMut,
    path: &Path,
) -> anyhow::Result<&'a mut toml_edit::Table> {
    let hooks = doc
        .entry("hooks")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_mut()
        .with_context(|| format!("{}: `hooks` is not a table", path.display()))?;
    hooks.set_implicit(true);
    hooks
        .entry("state")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_mut()
        .with_context(|| format!("{}: `hooks.state` is not a table", path.display()))
}

/// Trust medulla's handlers in the user's hooks file, as Codex's review records it.
fn trust(before: Option<&str>, path: &Path) -> anyhow::Result<String> {
    let text = before.unwrap_or_default();
    let (file, hooks_text) = hooks_after(path)?;
    let mut doc = files::parse_toml(text, path)?;
    let state = state_table(&mut doc, path)?;
    let mut changed = false;
    for (key, hash) in ours(&file, &hooks_text)? {
        let now = state
            .get(&key)
            .and_then(|e| e.get("trusted_hash"))
            .and_then(|h| h.as_str());
        if now == Some(hash.as_str()) {
            continue;
        }
        let mut entry = toml_edit::Table::new();
        entry.insert("trusted_hash", toml_edit::value(hash));
        state.insert(&key, toml_edit::Item::Table(entry));
        changed = true;
    }
    Ok(if changed {
        doc.to_string()
    } else {
        text.to_string()
    })
}

/// Take out the trust of medulla's handlers (read from the hooks file as it stands).
fn untrust(before: &str, path: &Path) -> anyhow::Result<Option<String>> {
    let file = path.with_file_name("hooks.json");
    let Some(hooks_text) = files::read(&file)? else {
        return Ok(None);
    };
    let keys = ours(&file, &hooks_text)?;
    let mut doc = files::parse_toml(before, path)?;
    let Some(state) = doc
        .get_mut("hooks")
        .and_then(|h| h.get_mut("state"))
        .and_then(|s| s.as_table_mut())
    else {
        return Ok(None);
    };
    let n = state.len();
    for (key, _) in &keys {
        state.remove(key);
    }
    if state.len() == n {
        return Ok(None);
    }
    Ok(Some(doc.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codex 0.171's own `hooks/list` gave this hash for this handler (`currentHash`);
    /// the key names the file, the hash does not.
    #[test]
    fn a_handler_hashes_as_codex_hashes_it() {
        let file = Path::new("/p/.codex/hooks.json");
        let text = r#"{"hooks": {"SessionStart": [{"matcher": "startup|resume|clear",
            "hooks": [{"type": "command", "command": "/tmp/medulla-bin/medulla prime --client codex", "timeout": 10}]}]}}"#;
        let got = ours(file, text).unwrap();
        assert_eq!(
            got,
            [(
                "/p/.codex/hooks.json:session_start:0:0".to_string(),
                "sha256:857824ee13fb3e705cdb7704f0a3d9d465dd3c04792867b1067888c72a6953f9"
                    .to_string()
            )]
        );
        assert_eq!(snake("UserPromptSubmit"), "user_prompt_submit");
    }
}
