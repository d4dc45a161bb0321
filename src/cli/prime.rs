//! `medulla prime`: what an agent should know when a session opens in this directory, for
//! the client's session-start hook. The served brain's boot memory and its strongest,
//! newest claims, the claims whose evidence changed (verify before relying on them), the
//! medulla's doctrine and the copies whose project witness changed, and this project's
//! open letters: each labelled, at most [`MAX_BYTES`], within a few hundred
//! milliseconds. It always exits 0, and prints nothing when no owner runs or no brain
//! covers the directory: a hook never breaks a session.

use std::fmt::Write as _;
use std::time::Duration;

use clap::Args;
use serde_json::{json, Value};

use super::print::out;

/// The most `prime` prints: a hook's context is read on every session start.
pub const MAX_BYTES: usize = 8 * 1024;
/// Each request to the owner; a local answer takes milliseconds.
const REQUEST: Duration = Duration::from_millis(250);
/// Claims listed per part.
const PROJECT_ROWS: usize = 12;
const MEDULLA_ROWS: usize = 8;

/// The hook format of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookClient {
    Claude,
    Codex,
    Gemini,
}

#[derive(Debug, Args)]
pub struct PrimeArgs {
    /// Print in this client's session-start hook format (`hookSpecificOutput`) [default:
    /// plain text]
    #[arg(long, value_enum)]
    pub client: Option<HookClient>,
    /// The owner's URL [default: from $MEDULLA_HOME/owner.json]
    #[arg(long, env = "MEDULLA_URL", value_name = "URL")]
    pub url: Option<String>,
}

/// `medulla prime`: always exit 0.
pub fn prime(a: PrimeArgs) -> i32 {
    let text = match gather(a.url.as_deref()) {
        Ok(Some(t)) => t,
        // No owner, no brain, or any failure: say nothing; the session goes on.
        Ok(None) | Err(_) => return 0,
    };
    let text = cut(&text, MAX_BYTES - 200);
    match a.client {
        Some(_) => out!(
            "{}",
            json!({ "hookSpecificOutput": { "hookEventName": "SessionStart", "additionalContext": text } })
        ),
        None => out!("{text}"),
    }
    0
}

/// At most `max` bytes of `s`, cut at a line (or a character) boundary.
fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let head = &s[..end];
    let head = head.rfind('\n').map_or(head, |i| &head[..i]);
    format!("{head}\n… (cut at {} KB)", MAX_BYTES / 1024)
}

fn strength_rank(s: &str) -> u8 {
    match s {
        "verified" => 0,
        "observed" => 1,
        _ => 2,
    }
}

/// Rows ordered by strength, then trust, then recency.
pub(super) fn strongest(rows: &[Value]) -> Vec<&Value> {
    let mut v: Vec<&Value> = rows.iter().collect();
    v.sort_by(|a, b| {
        strength_rank(a["strength"].as_str().unwrap_or(""))
            .cmp(&strength_rank(b["strength"].as_str().unwrap_or("")))
            .then_with(|| {
                b["trust"]
                    .as_f64()
                    .unwrap_or(0.0)
                    .total_cmp(&a["trust"].as_f64().unwrap_or(0.0))
            })
            .then_with(|| b["created"].as_i64().cmp(&a["created"].as_i64()))
    });
    v
}

pub(super) fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

fn row_line(r: &Value) -> String {
    format!(
        "- [{}] {} ({}, trust {:.2}, {})",
        r["slug"].as_str().unwrap_or("?"),
        one_line(r["text"].as_str().unwrap_or(""), 220),
        r["strength"].as_str().unwrap_or("?"),
        r["trust"].as_f64().unwrap_or(0.0),
        super::print::date(r["created"].as_i64().unwrap_or(0)),
    )
}

/// What the owner holds for the directory a command runs in: the brain it routes to, its
/// boot memory, its live claims (newest 300) and the medulla's, and its box.
pub(super) struct Memory {
    pub root: String,
    pub boot: Value,
    pub project: Value,
    pub medulla: Value,
    pub mailbox: Value,
}

/// Read [`Memory`] with `wait` per request; `None` when no brain covers the directory.
pub(super) fn fetch(url: Option<&str>, wait: Duration) -> anyhow::Result<Option<Memory>> {
    let base = super::client::owner_url(url);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let http = reqwest::Client::builder().timeout(wait).build()?;
        let cwd = std::env::current_dir()?.to_string_lossy().into_owned();
        let token = crate::founder::read(&crate::config::default_home());
        let req = |method: reqwest::Method, path: &str| {
            let mut r = http
                .request(method, format!("{base}{path}"))
                .header("Medulla-Caller-Root", cwd.as_str())
                .header("Medulla-Agent", "human:founder");
            if let Some(t) = &token {
                r = r.header("Medulla-Founder-Token", t.as_str());
            }
            r
        };
        // The brain this directory lands on, as the owner routes it, and its boot memory.
        let boot: Value = req(reqwest::Method::POST, "/api/call/boot_memory")
            .json(&json!({ "op": "list" }))
            .send()
            .await?
            .json()
            .await?;
        let Some(root) = boot["served_brain"].as_str().map(str::to_string) else {
            return Ok(None);
        };
        if boot.get("error").is_some() || boot["reception"]["status"].is_string() {
            return Ok(None);
        }
        let claims = |brain: String| {
            req(reqwest::Method::GET, "/api/claims")
                .query(&[("brain", brain.as_str()), ("limit", "300")])
                .send()
        };
        let project: Value = claims(root.clone()).await?.json().await?;
        let medulla: Value = claims("medulla".into()).await?.json().await?;
        if project.get("error").is_some() || medulla.get("error").is_some() {
            anyhow::bail!("the owner refused the claims listing");
        }
        let mailbox: Value = req(reqwest::Method::GET, "/api/mailbox")
            .query(&[("brain", root.as_str())])
            .send()
            .await?
            .json()
            .await
            .unwrap_or(Value::Null);
        Ok(Some(Memory {
            root,
            boot,
            project,
            medulla,
            mailbox,
        }))
    })
}

/// The text, or `None` when there is nothing to say (no owner, no brain here).
fn gather(url: Option<&str>) -> anyhow::Result<Option<String>> {
    Ok(fetch(url, REQUEST)?.map(|m| compose(&m.root, &m.boot, &m.project, &m.medulla, &m.mailbox)))
}

fn compose(root: &str, boot: &Value, project: &Value, medulla: &Value, mailbox: &Value) -> String {
    let mut t = String::new();
    let empty = Vec::new();
    let rows = project["claims"].as_array().unwrap_or(&empty);
    let total = project["total"].as_u64().unwrap_or(rows.len() as u64);
    let _ = writeln!(
        t,
        "medulla: memory for this project ({root}): {total} live claims in its brain, {} in the medulla. Recall more with the medulla tools (seek, north); write what you learn with memorize.",
        medulla["total"].as_u64().unwrap_or(0)
    );
    let boot_rows: Vec<&Value> = boot["entries"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    if !boot_rows.is_empty() {
        let _ = writeln!(t, "\nBoot memory:");
        for e in boot_rows.iter().take(12) {
            let _ = writeln!(
                t,
                "- {} = {} [{}]",
                e["key"].as_str().unwrap_or("?"),
                one_line(e["value"].as_str().unwrap_or(""), 200),
                e["tier"].as_str().unwrap_or("?")
            );
        }
    }
    let (drifted, steady): (Vec<&Value>, Vec<&Value>) =
        strongest(rows).into_iter().partition(|r| {
            r["evidence_changed"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        });
    if !steady.is_empty() {
        let _ = writeln!(
            t,
            "\nThis project's brain (strongest and newest first) [tier project]:"
        );
        for r in steady.iter().take(PROJECT_ROWS) {
            let _ = writeln!(t, "{}", row_line(r));
        }
    }
    if !drifted.is_empty() {
        let _ = writeln!(
            t,
            "\nVerify before relying on (the files under these claims changed):"
        );
        for r in drifted.iter().take(PROJECT_ROWS) {
            let files: Vec<String> = r["evidence_changed"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    format!(
                        "{} {}",
                        c["path"].as_str().unwrap_or("?"),
                        c["state"].as_str().unwrap_or("changed")
                    )
                })
                .collect();
            let _ = writeln!(t, "{} — {}", row_line(r), files.join(", "));
        }
    }
    let doctrine = medulla["claims"].as_array().unwrap_or(&empty);
    if !doctrine.is_empty() {
        let _ = writeln!(
            t,
            "\nThe medulla's doctrine (across projects) [tier medulla]:"
        );
        for r in strongest(doctrine).iter().take(MEDULLA_ROWS) {
            let _ = writeln!(t, "{}", row_line(r));
        }
        let changed: Vec<&Value> = doctrine
            .iter()
            .filter(|r| r["witness_superseded"].is_object())
            .collect();
        if !changed.is_empty() {
            let _ = writeln!(t, "\nPromoted claims whose project witness changed since (check before relying on them):");
            for r in changed.iter().take(MEDULLA_ROWS) {
                let _ = writeln!(t, "{}", row_line(r));
            }
        }
    }
    let counts = &mailbox["counts"];
    let open = counts["open"].as_u64().unwrap_or(0);
    if open > 0 {
        let _ = writeln!(
            t,
            "\nOpen letters for this project: {open} ({} unanswered, {} in flight):",
            counts["wet_ink"].as_u64().unwrap_or(0),
            counts["in_flight"].as_u64().unwrap_or(0)
        );
        for l in mailbox["letters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|l| matches!(l["state"].as_str(), Some("wet_ink" | "in_flight")))
            .take(5)
        {
            let _ = writeln!(
                t,
                "- [{}] {}",
                l["letter"]["class"].as_str().unwrap_or("letter"),
                one_line(l["letter"]["what"].as_str().unwrap_or(""), 200)
            );
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_context_is_cut_at_a_line_within_the_budget() {
        let long = "é line of memory\n".repeat(2000);
        let c = cut(&long, 1000);
        assert!(c.len() <= 1000 + 40, "{}", c.len());
        assert!(c.ends_with("KB)"));
        assert!(c.lines().rev().nth(1).unwrap().ends_with("memory"));
    }

    #[test]
    fn rows_go_strongest_then_most_trusted_then_newest() {
        let rows = vec![
            json!({ "slug": "a", "strength": "hint", "trust": 0.9, "created": 3 }),
            json!({ "slug": "b", "strength": "verified", "trust": 0.5, "created": 1 }),
            json!({ "slug": "c", "strength": "verified", "trust": 0.5, "created": 2 }),
            json!({ "slug": "d", "strength": "observed", "trust": 0.8, "created": 0 }),
        ];
        let order: Vec<&str> = strongest(&rows)
            .iter()
            .map(|r| r["slug"].as_str().unwrap())
            .collect();
        assert_eq!(order, ["c", "b", "d", "a"]);
    }
}
