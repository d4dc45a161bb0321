//! `medulla prime`: what an agent should know when a session opens in this directory, for
//! the client's session-start hook. The served brain's boot memory and its strongest,
//! newest claims, the claims whose evidence changed (verify before relying on them), the
//! medulla's doctrine and the copies whose project witness changed, and this project's
//! open letters: each labelled, at most [`MAX_BYTES`], within a few hundred
//! milliseconds. It starts the owner when none runs (unless autostart is off); it always
//! exits 0, and prints nothing when no owner can be had or no brain covers the directory:
//! a hook never breaks a session.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Value};

use super::hook::{self, HookClient};
use super::print::out;
use crate::mailbox::letter::Fate;
use crate::service::mailbox::BoxView;
use crate::service::registry::Envelope;
use crate::service::rows::{one_line, Row};
use crate::service::verbs::boot_memory::{BootMemoryAnswer, Entry};
use crate::service::ClaimsView;

/// The most `prime` prints: a hook's context is read on every session start.
pub const MAX_BYTES: usize = 8 * 1024;
/// What reading the memory may take after this hook started an owner: a running owner
/// answers within the hook's budget, one just started is given this more.
const AFTER_START: Duration = Duration::from_millis(1000);
/// Claims listed per part.
const PROJECT_ROWS: usize = 12;
const MEDULLA_ROWS: usize = 8;

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

/// `medulla prime`: always exit 0. With no owner running it starts one first, as every
/// client does (SPEC §2): a session should open with its memory, not without it. When
/// none can be had, one line on stderr says why (stdout stays empty: nothing is added to
/// the session's context).
pub fn prime(a: PrimeArgs) -> i32 {
    let until = hook::deadline();
    let home = crate::config::default_home();
    let session = match a.client {
        Some(_) => record_session(&home),
        None => None,
    };
    let url = match crate::launch::ensure_by(&home, a.url.as_deref(), until) {
        Ok(u) => u,
        Err(e) => {
            super::print::note!("medulla prime: {e}");
            return 0;
        }
    };
    // An owner this hook had to start gets a moment to answer; one that was running has
    // had it.
    let until = until.max(Instant::now() + AFTER_START);
    let (text, shown) = match fetch(Some(&url), until) {
        Ok(Some(m)) => compose(&m),
        // No owner, no brain, or any failure: say nothing; the session goes on.
        Ok(None) | Err(_) => return 0,
    };
    let text = cut(&text, MAX_BYTES - 200);
    match a.client {
        Some(c) => {
            out!(
                "{}",
                json!({ "hookSpecificOutput": { "hookEventName": "SessionStart", "additionalContext": text } })
            );
            // The digest's claims are not added again by this session's hints.
            if let Some(id) = session {
                let tokens = crate::service::hints::tokens(&text);
                remember_shown(&url, c, &id, (shown, tokens), until);
            }
        }
        None => out!("{text}"),
    }
    0
}

/// Tell the owner which claims the session's digest showed (SPEC §5: a claim is added
/// at most once a session, the digest included) and its size in tokens (counted in the
/// session's budget and this brain's numbers). Best effort: a hook never waits long.
fn remember_shown(
    url: &str,
    client: HookClient,
    session: &str,
    (versions, tokens): (Vec<String>, u64),
    until: Instant,
) {
    let body = json!({ "session": format!("{}:{session}", client.name()),
                       "versions": versions, "tokens": tokens });
    let cwd = std::env::current_dir().unwrap_or_default();
    let _ = crate::launch::raw::request(
        &crate::config::default_home(),
        url,
        "POST",
        "/api/hint/shown",
        &[("Medulla-Caller-Root", &cwd.to_string_lossy())],
        Some(body.to_string().as_bytes()),
        until,
    );
}

/// How long a hook's JSON may take to arrive on stdin.
const STDIN_WAIT: Duration = Duration::from_millis(100);

/// Record the session the client's SessionStart hook announces on stdin (its
/// `session_id` and `cwd`), so `doctor` can count the sessions the nudge saw. Nothing
/// when stdin is a terminal, says nothing within [`STDIN_WAIT`], or is not the hook's
/// JSON: `prime` run by hand goes on as before.
fn record_session(home: &std::path::Path) -> Option<String> {
    use std::io::{IsTerminal, Read};
    if std::io::stdin().is_terminal() {
        return None;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut raw = String::new();
        let _ = std::io::stdin().take(64 * 1024).read_to_string(&mut raw);
        let _ = tx.send(raw);
    });
    let raw = rx.recv_timeout(STDIN_WAIT).ok()?;
    let v: serde_json::Value = serde_json::from_str(&raw).unwrap_or_default();
    let (id, cwd) = (v["session_id"].as_str()?, v["cwd"].as_str()?);
    let now = brains::Clock::now_ms(&brains::SystemClock);
    let _ = crate::hook_sessions::record_start(home, id, cwd, now);
    Some(id.to_string())
}

/// The brain a hook's directory lands on, as the owner routes it (`req` builds a request
/// carrying the directory as the caller root), with its boot memory; `None` when no
/// brain covers the directory (an error answer, none served, or reception).
pub(super) async fn served_brain(
    req: &impl Fn(reqwest::Method, &str) -> reqwest::RequestBuilder,
) -> anyhow::Result<Option<(String, Envelope<BootMemoryAnswer>)>> {
    let boot: Value = req(reqwest::Method::POST, "/api/call/boot_memory")
        .json(&json!({ "op": "list" }))
        .send()
        .await?
        .json()
        .await?;
    if boot.get("error").is_some() {
        return Ok(None);
    }
    let boot: Envelope<BootMemoryAnswer> = serde_json::from_value(boot)?;
    match (boot.served_brain.clone(), boot.reception.is_some()) {
        (Some(root), false) => Ok(Some((root, boot))),
        _ => Ok(None),
    }
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

/// Rows ordered by strength, then trust, then recency.
pub(super) fn strongest(rows: &[Row]) -> Vec<&Row> {
    let mut v: Vec<&Row> = rows.iter().collect();
    v.sort_by(|a, b| {
        b.strength
            .cmp(&a.strength)
            .then_with(|| b.trust.total_cmp(&a.trust))
            .then_with(|| b.created.cmp(&a.created))
    });
    v
}

fn row_line(r: &Row) -> String {
    format!(
        "- [{}] {} ({}, trust {:.2}, {})",
        r.slug,
        one_line(&r.text, 220),
        r.strength.as_str(),
        r.trust,
        super::print::date(r.created),
    )
}

/// What the owner holds for the directory a command runs in: the brain it routes to, its
/// boot memory, its live claims (newest 300) and the medulla's, and its box.
pub(super) struct Memory {
    pub root: String,
    pub boot: Vec<Entry>,
    pub project: ClaimsView,
    pub medulla: ClaimsView,
    pub mailbox: Option<BoxView>,
}

/// Read [`Memory`], all of it by `until`; `None` when no brain covers the directory.
pub(super) fn fetch(url: Option<&str>, until: Instant) -> anyhow::Result<Option<Memory>> {
    let base = super::client::owner_url(url);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let by = tokio::time::Instant::from_std(until);
    rt.block_on(async {
        tokio::time::timeout_at(by, read_memory(&base))
            .await
            .map_err(|_| anyhow::anyhow!("the owner did not answer in time"))?
    })
}

async fn read_memory(base: &str) -> anyhow::Result<Option<Memory>> {
    let http = reqwest::Client::new();
    let cwd = std::env::current_dir()?.to_string_lossy().into_owned();
    let token = crate::founder::read(&crate::config::default_home());
    let bearer = crate::client_token::bearer();
    let req = |method: reqwest::Method, path: &str| {
        let mut r = http
            .request(method, format!("{base}{path}"))
            .header("Medulla-Caller-Root", cwd.as_str())
            .header("Medulla-Agent", "human:founder");
        if let Some(t) = &token {
            r = r.header("Medulla-Founder-Token", t.as_str());
        }
        if let Some(b) = &bearer {
            r = r.header(reqwest::header::AUTHORIZATION, b.as_str());
        }
        r
    };
    // The brain this directory lands on, as the owner routes it, and its boot memory.
    let Some((root, boot)) = served_brain(&req).await? else {
        return Ok(None);
    };
    let boot = match boot.body {
        BootMemoryAnswer::List(e) => e.entries,
        BootMemoryAnswer::Value(e) => vec![e],
        _ => Vec::new(),
    };
    let claims = |brain: String| async move {
        let v: Value = req(reqwest::Method::GET, "/api/claims")
            .query(&[("brain", brain.as_str()), ("limit", "300")])
            .send()
            .await?
            .json()
            .await?;
        anyhow::Ok(serde_json::from_value::<ClaimsView>(v)?)
    };
    let project = claims(root.clone()).await?;
    let medulla = claims("medulla".into()).await?;
    let mailbox = match req(reqwest::Method::GET, "/api/mailbox")
        .query(&[("brain", root.as_str())])
        .send()
        .await
    {
        Ok(r) => r
            .json::<Value>()
            .await
            .ok()
            .and_then(|v| serde_json::from_value::<BoxView>(v).ok()),
        Err(_) => None,
    };
    Ok(Some(Memory {
        root,
        boot,
        project,
        medulla,
        mailbox,
    }))
}

/// The digest, and the claim versions it lists (as the hint ledger names them).
fn compose(m: &Memory) -> (String, Vec<String>) {
    let mut t = String::new();
    let mut shown: Vec<String> = Vec::new();
    let mut show = |r: &Row| {
        shown.push(crate::service::hints::version(r));
        row_line(r)
    };
    let rows = &m.project.claims;
    let _ = writeln!(
        t,
        "medulla: memory for this project ({}): {} live claims in its brain, {} in the medulla. Recall more with the medulla tools (seek, north); write what you learn with memorize.",
        m.root, m.project.total, m.medulla.total
    );
    if !m.boot.is_empty() {
        let _ = writeln!(t, "\nBoot memory:");
        for e in m.boot.iter().take(12) {
            let _ = writeln!(
                t,
                "- {} = {} [{}]",
                e.key,
                one_line(&e.value, 200),
                serde_json::to_value(e.tier)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default()
            );
        }
    }
    let (drifted, steady): (Vec<&Row>, Vec<&Row>) = strongest(rows)
        .into_iter()
        .partition(|r| !r.evidence_changed.is_empty());
    if !steady.is_empty() {
        let _ = writeln!(
            t,
            "\nThis project's brain (strongest and newest first) [tier project]:"
        );
        for r in steady.iter().take(PROJECT_ROWS) {
            let _ = writeln!(t, "{}", show(r));
        }
    }
    if !drifted.is_empty() {
        let _ = writeln!(
            t,
            "\nVerify before relying on (the files under these claims changed):"
        );
        for r in drifted.iter().take(PROJECT_ROWS) {
            let files: Vec<String> = r
                .evidence_changed
                .iter()
                .map(|c| {
                    let state = serde_json::to_value(c.state)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default();
                    format!("{} {state}", c.path)
                })
                .collect();
            let _ = writeln!(t, "{} — {}", show(r), files.join(", "));
        }
    }
    let doctrine = &m.medulla.claims;
    if !doctrine.is_empty() {
        let _ = writeln!(
            t,
            "\nThe medulla's doctrine (across projects) [tier medulla]:"
        );
        for r in strongest(doctrine).iter().take(MEDULLA_ROWS) {
            let _ = writeln!(t, "{}", show(r));
        }
        let changed: Vec<&Row> = doctrine
            .iter()
            .filter(|r| r.witness_superseded.is_some())
            .collect();
        if !changed.is_empty() {
            let _ = writeln!(t, "\nPromoted claims whose project witness changed since (check before relying on them):");
            for r in changed.iter().take(MEDULLA_ROWS) {
                let _ = writeln!(t, "{}", show(r));
            }
        }
    }
    if let Some(b) = m.mailbox.as_ref().filter(|b| b.counts.open > 0) {
        let _ = writeln!(
            t,
            "\nOpen letters for this project: {} ({} unanswered, {} in flight):",
            b.counts.open, b.counts.wet_ink, b.counts.in_flight
        );
        for l in b
            .letters
            .iter()
            .filter(|l| matches!(l.state, Some(Fate::WetInk | Fate::InFlight)))
            .take(5)
        {
            let _ = writeln!(
                t,
                "- [{}] {}",
                l.field("class").and_then(Value::as_str).unwrap_or("letter"),
                one_line(l.field("what").and_then(Value::as_str).unwrap_or(""), 200)
            );
        }
    }
    (t, shown)
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
        let row = |slug: &str, strength: &str, trust: f64, created: i64| -> Row {
            serde_json::from_value(json!({
                "label": slug, "slug": slug, "text": "t", "tier": "project", "origin_brain": "/p",
                "source_agent": "claude:maker", "created": created, "age_ms": 0, "stale": false,
                "aged_out": false, "strength": strength, "trust": trust
            }))
            .unwrap()
        };
        let rows = vec![
            row("a", "hint", 0.9, 3),
            row("b", "verified", 0.5, 1),
            row("c", "verified", 0.5, 2),
            row("d", "observed", 0.8, 0),
        ];
        let order: Vec<&str> = strongest(&rows).iter().map(|r| r.slug.as_str()).collect();
        assert_eq!(order, ["c", "b", "d", "a"]);
    }
}
