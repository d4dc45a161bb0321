//! The rule that lets a client call medulla's tools without asking at every one. Claude
//! Code asks before any MCP tool runs, once per tool at a terminal, and denies every one
//! in a headless run (`claude -p`): connected without a rule, an agent there can neither
//! recall nor write memory. `connect claude-code` allows medulla's tools in the settings
//! beside the hooks (the project's `.claude/settings.json`, or the user's for `--scope
//! user`), all but one: `purge` erases every version of a claim, the one act memory cannot
//! take back, so it stays behind the client's question (`ask`). `disconnect` takes both
//! rules out again, every other rule kept.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::{json, Value};

use super::clients::{AgentClient, Places, Scope};
use super::files::{self, Edit};

/// Every tool of the server named `medulla`, as Claude Code names the rule.
pub const CLAUDE_ALLOW: &str = "mcp__medulla";
/// The tool left to the client's question.
pub const CLAUDE_ASK: &str = "mcp__medulla__purge";

/// The permission edits `connect` makes for `client` (none for a client that does not
/// ask before a tool runs, or that `connect` does not configure a rule for).
pub fn edits(client: AgentClient, scope: Option<Scope>, root: &Path) -> anyhow::Result<Vec<Edit>> {
    let user = scope.unwrap_or(client.default_scope()) == Scope::User;
    Ok(match client {
        AgentClient::ClaudeCode => vec![Edit {
            path: claude_settings(user, root)?,
            apply: claude_rules,
            undo: without_claude_rules,
        }],
        _ => Vec::new(),
    })
}

fn claude_settings(user: bool, root: &Path) -> anyhow::Result<PathBuf> {
    let dir = if user {
        Places::from_env()?.home.join(".claude")
    } else {
        root.join(".claude")
    };
    Ok(dir.join("settings.json"))
}

/// `doc.permissions.<list>`, made when missing.
fn rule_list<'a>(
    doc: &'a mut Value,
    path: &Path,
    list: &str,
) -> anyhow::Result<&'a mut Vec<Value>> {
    doc.as_object_mut()
        .context("the settings file is not a JSON object")?
        .entry("permissions")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .with_context(|| format!("{}: `permissions` is not an object", path.display()))?
        .entry(list)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .with_context(|| format!("{}: `permissions.{list}` is not a list", path.display()))
}

fn claude_rules(before: Option<&str>, path: &Path) -> anyhow::Result<String> {
    let mut doc = files::parse_json(before, path)?;
    let mut changed = false;
    for (list, rule) in [("allow", CLAUDE_ALLOW), ("ask", CLAUDE_ASK)] {
        let rules = rule_list(&mut doc, path, list)?;
        if !rules.iter().any(|r| r == rule) {
            rules.push(json!(rule));
            changed = true;
        }
    }
    if !changed {
        return Ok(before.unwrap_or_default().to_string());
    }
    files::json_text(&doc)
}

fn without_claude_rules(before: &str, path: &Path) -> anyhow::Result<Option<String>> {
    let mut doc = files::parse_json(Some(before), path)?;
    let Some(perms) = doc.get_mut("permissions").and_then(Value::as_object_mut) else {
        return Ok(None);
    };
    let mut changed = false;
    for (list, rule) in [("allow", CLAUDE_ALLOW), ("ask", CLAUDE_ASK)] {
        if let Some(rules) = perms.get_mut(list).and_then(Value::as_array_mut) {
            let n = rules.len();
            rules.retain(|r| r != rule);
            changed |= rules.len() != n;
        }
    }
    if !changed {
        return Ok(None);
    }
    perms.retain(|_, v| v.as_array().is_none_or(|l| !l.is_empty()));
    if perms.is_empty() {
        doc.as_object_mut().map(|o| o.remove("permissions"));
    }
    files::json_text(&doc).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_merge_with_the_persons_and_come_out_alone() {
        let p = Path::new("/p/.claude/settings.json");
        let before = r#"{"permissions": {"allow": ["Bash(npm test)"]}, "model": "x"}"#;
        let after = claude_rules(Some(before), p).unwrap();
        let v: Value = serde_json::from_str(&after).unwrap();
        assert_eq!(
            v["permissions"]["allow"],
            json!(["Bash(npm test)", CLAUDE_ALLOW])
        );
        assert_eq!(v["permissions"]["ask"], json!([CLAUDE_ASK]));
        assert_eq!(v["model"], "x");
        assert_eq!(claude_rules(Some(&after), p).unwrap(), after, "idempotent");
        let undone = without_claude_rules(&after, p).unwrap().unwrap();
        let v: Value = serde_json::from_str(&undone).unwrap();
        assert_eq!(v["permissions"], json!({"allow": ["Bash(npm test)"]}));
        assert_eq!(without_claude_rules(&undone, p).unwrap(), None);
        let fresh = claude_rules(None, p).unwrap();
        let gone = without_claude_rules(&fresh, p).unwrap().unwrap();
        assert_eq!(gone.trim(), "{}");
    }
}
