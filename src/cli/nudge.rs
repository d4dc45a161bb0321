//! `medulla nudge`: the end-of-turn hook that asks the agent, once per session, to debrief
//! what it learned, when the session did real work and wrote nothing to this project's
//! brain. It never starts an owner, never blocks past [`BUDGET`], and always exits 0:
//! with no owner, no brain, a short session or a malformed hook input it prints nothing.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use serde::Deserialize;
use serde_json::{json, Value};

use super::prime::HookClient;
use super::print::out;
use crate::service::ClaimsView;

/// Each request to the owner: the whole nudge stays within about 100 ms.
const BUDGET: Duration = Duration::from_millis(80);
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

/// The fields of the hook's stdin that matter here (Claude Code's `Stop` input).
#[derive(Debug, Deserialize)]
struct HookInput {
    session_id: String,
    transcript_path: PathBuf,
    cwd: PathBuf,
    #[serde(default)]
    stop_hook_active: bool,
}

/// `medulla nudge`: always exit 0.
pub fn nudge(a: NudgeArgs) -> i32 {
    let mut raw = String::new();
    if std::io::stdin().read_to_string(&mut raw).is_err() {
        return 0;
    }
    let home = crate::config::default_home();
    if let Some(reason) = decide(&home, &a, &raw) {
        if a.client == HookClient::Claude {
            out!("{}", json!({ "decision": "block", "reason": reason }));
        }
    }
    0
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The reason to give the agent, or `None` to let it stop.
fn decide(home: &Path, a: &NudgeArgs, raw: &str) -> Option<&'static str> {
    // Only Claude Code's Stop hook is installed today (docs/PROTOCOL.md, "nudge").
    if a.client != HookClient::Claude || crate::launch::nudge_off(home) {
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
    let text = std::fs::read_to_string(&input.transcript_path).ok()?;
    let session = read_transcript(&text);
    if session.tool_calls < MIN_TOOL_CALLS {
        return None;
    }
    let since = session.started_ms?;
    let written = written_since(a.url.as_deref(), &input.cwd, since).ok()??;
    if written {
        return None;
    }
    // Mark first: a nudge that cannot be remembered is not given (never a loop).
    crate::hook_sessions::record_nudge(
        home,
        &input.session_id,
        &input.cwd.to_string_lossy(),
        since,
        now_ms(),
    )
    .ok()?;
    Some(ASK)
}

/// What a Claude Code transcript (JSONL) says: its tool calls and its first timestamp.
#[derive(Debug, Default, PartialEq)]
struct Session {
    tool_calls: usize,
    started_ms: Option<i64>,
}

fn read_transcript(text: &str) -> Session {
    let mut s = Session::default();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if s.started_ms.is_none() {
            s.started_ms = v["timestamp"].as_str().and_then(rfc3339_ms);
        }
        if v["type"] == "assistant" {
            if let Some(items) = v["message"]["content"].as_array() {
                s.tool_calls += items.iter().filter(|i| i["type"] == "tool_use").count();
            }
        }
    }
    s
}

/// `2026-11-28T08:41:02.123Z` (UTC, as Claude Code writes it) as Unix milliseconds.
fn rfc3339_ms(t: &str) -> Option<i64> {
    let t = t.strip_suffix('Z')?;
    let (date, time) = t.split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut h = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (hh, mm, ss) = (h.next()??, h.next()??, h.next()??);
    let ms: i64 = format!("{:0<3}", frac).get(..3)?.parse().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + hh) * 60 + mm) * 60_000 + ss * 1000 + ms)
}

/// Has this directory's brain a claim created at or after `since`? `None` when no brain
/// covers the directory; an error when the owner does not answer within the budget.
fn written_since(url: Option<&str>, cwd: &Path, since: i64) -> anyhow::Result<Option<bool>> {
    let base = super::client::owner_url(url);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let http = reqwest::Client::builder().timeout(BUDGET).build()?;
        let cwd = cwd.to_string_lossy().into_owned();
        let bearer = crate::client_token::bearer();
        let req = |method: reqwest::Method, path: &str| {
            let mut r = http
                .request(method, format!("{base}{path}"))
                .header("Medulla-Caller-Root", cwd.as_str())
                .header("Medulla-Agent", "claude:nudge");
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_as_unix_milliseconds() {
        assert_eq!(rfc3339_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_ms("2000-03-01T00:00:01.5Z"), Some(951_868_801_500));
        assert_eq!(rfc3339_ms("not a time"), None);
    }

    #[test]
    fn tool_calls_are_counted_in_assistant_entries_only() {
        let t = [
            r#"{"type":"user","timestamp":"1970-01-01T00:00:01Z","message":{"content":[{"type":"tool_use"}]}}"#,
            "garbage",
            r#"{"type":"assistant","message":{"content":[{"type":"text"},{"type":"tool_use"},{"type":"tool_use"}]}}"#,
        ]
        .join("\n");
        assert_eq!(
            read_transcript(&t),
            Session {
                tool_calls: 2,
                started_ms: Some(1000)
            }
        );
    }

    #[test]
    fn only_a_plain_session_id_names_a_marker() {
        let h = Path::new("/h");
        let marker = crate::hook_sessions::nudged_file;
        assert!(marker(h, "abc-123_x").is_some());
        assert!(marker(h, "../etc").is_none());
        assert!(marker(h, "").is_none());
    }
}
