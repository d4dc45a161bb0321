//! `medulla nudge`: the end-of-turn hook that asks the agent, once per session, to debrief
//! what it learned, when the session did real work and wrote nothing to this project's
//! brain. It never starts an owner, never takes more than the hooks' [`hook::BUDGET`],
//! and always exits 0:
//! with no owner, no brain, a short session or a malformed hook input it prints nothing.
//! Claude Code's `Stop`, Codex's `Stop` and Gemini CLI's `AfterAgent` hooks run it; each
//! client's transcript is read by `transcript.rs`.

mod transcript;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use serde::Deserialize;
use serde_json::{json, Value};

use super::hook::{self, HookClient};
use super::print::out;
use crate::service::ClaimsView;

/// The tool calls that make a session "real work".
pub const MIN_TOOL_CALLS: usize = 10;
/// What the agent is asked, once.
pub const ASK: &str = "Before you stop: if this session taught you something durable about this repository (a command, a gotcha, a decision and its reason), record it with medulla's `debrief` tool; if not, just stop.";

#[derive(Debug, Args)]
pub struct NudgeArgs {
    /// The client whose end-of-turn hook runs this (its input and output shape)
    #[arg(long, value_enum)]
    pub client: HookClient,
    /// The owner's URL [default: from $MEDULLA_HOME/owner.json]
    #[arg(long, env = "MEDULLA_URL", value_name = "URL")]
    pub url: Option<String>,
}

/// The fields of the hook's stdin that matter here (Claude Code's and Codex's `Stop`,
/// Gemini CLI's `AfterAgent`: the same names in all three). Codex may send no transcript.
/// medulla's opencode plugin tells the session instead of naming a transcript: its tool
/// calls, when it started, and what the agent said.
#[derive(Debug, Deserialize)]
struct HookInput {
    session_id: String,
    transcript_path: Option<PathBuf>,
    cwd: PathBuf,
    #[serde(default)]
    stop_hook_active: bool,
    #[serde(default)]
    tool_calls: Option<usize>,
    #[serde(default)]
    started_ms: Option<i64>,
    #[serde(default)]
    said: Option<String>,
}

impl HookInput {
    /// The session as its transcript tells it, or as the client told it.
    fn session(&self, client: HookClient) -> Option<transcript::Session> {
        if client == HookClient::Opencode {
            return Some(transcript::Session {
                tool_calls: self.tool_calls?,
                started_ms: self.started_ms,
            });
        }
        let text = std::fs::read_to_string(self.transcript_path.as_ref()?).ok()?;
        Some(transcript::read(client, &text))
    }

    /// What the agent said in its own words this session.
    fn said(&self, client: HookClient) -> Option<String> {
        if client == HookClient::Opencode {
            return self.said.clone();
        }
        let text = std::fs::read_to_string(self.transcript_path.as_ref()?).ok()?;
        Some(transcript::said(client, &text))
    }
}

/// `medulla nudge`: always exit 0.
pub fn nudge(a: NudgeArgs) -> i32 {
    let until = hook::deadline();
    let mut raw = String::new();
    if std::io::stdin().read_to_string(&mut raw).is_err() {
        return 0;
    }
    let home = crate::config::default_home();
    note_citations(&home, &a, &raw, until);
    if let Some(reason) = decide(&home, &a, &raw, until) {
        out!("{}", answer(a.client, reason));
    }
    0
}

/// Tell the owner which claims the prompt and file hints added to this session the
/// agent has since named in its own words (their slugs in the transcript): whether the
/// hints pay (SPEC §5). Asks first, so a session no hint reached reads no transcript.
/// Best effort, by `until`.
fn note_citations(home: &Path, a: &NudgeArgs, raw: &str, until: Instant) {
    let Ok(input) = serde_json::from_str::<HookInput>(raw) else {
        return;
    };
    if input.transcript_path.is_none() && input.said.is_none() {
        return;
    }
    let session = format!("{}:{}", a.client.name(), input.session_id);
    let url = super::client::owner_url(a.url.as_deref());
    let query = serde_urlencoded::to_string([("session", session.as_str())]).unwrap_or_default();
    let asked = crate::launch::raw::request(
        home,
        &url,
        "GET",
        &format!("/api/hint/session?{query}"),
        &[],
        None,
        until,
    );
    let Some((200, v)) = asked else {
        return;
    };
    let pending: Vec<&str> = v["slugs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if pending.is_empty() {
        return;
    }
    let Some(said) = input.said(a.client) else {
        return;
    };
    let cited: Vec<&str> = pending
        .into_iter()
        .filter(|slug| names(&said, slug))
        .collect();
    if cited.is_empty() {
        return;
    }
    let body = json!({ "session": session, "slugs": cited });
    let _ = crate::launch::raw::request(
        home,
        &url,
        "POST",
        "/api/hint/cited",
        &[],
        Some(body.to_string().as_bytes()),
        until,
    );
}

/// Does `text` name `slug` as a word of its own (not inside a longer slug)?
fn names(text: &str, slug: &str) -> bool {
    let part = |c: char| c.is_alphanumeric() || c == '-';
    text.match_indices(slug).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + slug.len()..].chars().next();
        !before.is_some_and(part) && !after.is_some_and(part)
    })
}

/// The ask in the client's own shape: Claude Code and Codex continue the turn on a `Stop`
/// hook's `block`, with `reason` as the next instruction; Gemini CLI's `AfterAgent`
/// takes `deny` and sends `reason` to the agent as a new prompt.
fn answer(client: HookClient, reason: &str) -> Value {
    let decision = match client {
        HookClient::Claude | HookClient::Codex | HookClient::Opencode => "block",
        HookClient::Gemini => "deny",
    };
    json!({ "decision": decision, "reason": reason })
}

/// The name the nudge gives the owner as its agent.
fn agent(client: HookClient) -> &'static str {
    match client {
        HookClient::Claude => "claude:nudge",
        HookClient::Codex => "codex:nudge",
        HookClient::Gemini => "gemini:nudge",
        HookClient::Opencode => "opencode:nudge",
    }
}

/// The reason to give the agent, or `None` to let it stop.
fn decide(home: &Path, a: &NudgeArgs, raw: &str, until: Instant) -> Option<&'static str> {
    if crate::launch::nudge_off(home) {
        return None;
    }
    let input: HookInput = serde_json::from_str(raw).ok()?;
    if input.stop_hook_active {
        return None;
    }
    let marker = crate::hook_sessions::nudged_file(home, &input.session_id)?;
    if marker.exists() {
        return None;
    }
    let session = input.session(a.client)?;
    if session.tool_calls < MIN_TOOL_CALLS {
        return None;
    }
    let since = session.started_ms?;
    let written =
        written_since(a.url.as_deref(), agent(a.client), &input.cwd, since, until).ok()??;
    if written {
        return None;
    }
    // Mark first: a nudge that cannot be remembered is not given (never a loop).
    crate::hook_sessions::record_nudge(
        home,
        &input.session_id,
        &input.cwd.to_string_lossy(),
        since,
        brains::Clock::now_ms(&brains::SystemClock),
    )
    .ok()?;
    Some(ASK)
}

/// Has this directory's brain a claim created at or after `since`? `None` when no brain
/// covers the directory; an error when the owner does not answer by `until`.
fn written_since(
    url: Option<&str>,
    agent: &str,
    cwd: &Path,
    since: i64,
    until: Instant,
) -> anyhow::Result<Option<bool>> {
    let base = super::client::owner_url(url);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let by = tokio::time::Instant::from_std(until);
    let ask = async {
        let http = reqwest::Client::new();
        let cwd = cwd.to_string_lossy().into_owned();
        let bearer = crate::client_token::bearer();
        let req = |method: reqwest::Method, path: &str| {
            let mut r = http
                .request(method, format!("{base}{path}"))
                .header("Medulla-Caller-Root", cwd.as_str())
                .header("Medulla-Agent", agent);
            if let Some(b) = &bearer {
                r = r.header(reqwest::header::AUTHORIZATION, b.as_str());
            }
            r
        };
        let Some((root, _)) = super::prime::served_brain(&req).await? else {
            return Ok(None);
        };
        let v: Value = req(reqwest::Method::GET, "/api/claims")
            .query(&[("brain", root.as_str()), ("limit", "300")])
            .send()
            .await?
            .json()
            .await?;
        let claims: ClaimsView = serde_json::from_value(v)?;
        Ok(Some(claims.claims.iter().any(|r| r.created >= since)))
    };
    rt.block_on(async {
        tokio::time::timeout_at(by, ask)
            .await
            .map_err(|_| anyhow::anyhow!("the owner did not answer in time"))?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_session_id_names_a_marker() {
        let h = Path::new("/h");
        let marker = crate::hook_sessions::nudged_file;
        assert!(marker(h, "abc-123_x").is_some());
        assert!(marker(h, "../etc").is_none());
        assert!(marker(h, "").is_none());
    }

    #[test]
    fn a_slug_is_named_only_as_a_word_of_its_own() {
        assert!(names("per [cents-rule], use integers", "cents-rule"));
        assert!(names("cents-rule", "cents-rule"));
        assert!(!names("see cents-rule-2", "cents-rule"));
        assert!(!names("old-cents-rule", "cents-rule"));
    }

    #[test]
    fn each_client_is_asked_in_its_own_shape() {
        assert_eq!(answer(HookClient::Claude, "x")["decision"], "block");
        assert_eq!(answer(HookClient::Codex, "x")["decision"], "block");
        assert_eq!(answer(HookClient::Gemini, "x")["decision"], "deny");
    }
}
