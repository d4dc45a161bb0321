//! What a client's session transcript says about the session: how many tool calls it made
//! and when it started. One reader a client, each for the format that client writes:
//! Claude Code's JSONL (an assistant entry's `message.content` holds `tool_use` items),
//! Codex's rollout JSONL (`response_item` lines whose payload is a `…_call`), and Gemini
//! CLI's conversation record (JSONL, or one JSON document in older versions: a `gemini`
//! message's `toolCalls`, the same call recorded again as it progresses).

use std::collections::HashSet;

use serde_json::Value;

use crate::cli::hook::HookClient;

/// A session as its transcript tells it.
#[derive(Debug, Default, PartialEq)]
pub struct Session {
    pub tool_calls: usize,
    /// The session's first timestamp, ms since the epoch.
    pub started_ms: Option<i64>,
}

/// The most of the agent's own words [`said`] keeps.
const SAID_MAX: usize = 4 << 20;

/// What the agent said in its own words (its messages' text, not the tools' output nor
/// the person's), in `text`, a transcript `client` wrote: where a cited claim's slug is
/// looked for.
pub fn said(client: HookClient, text: &str) -> String {
    let mut out = String::new();
    let mut add = |t: &str| {
        if out.len() < SAID_MAX {
            out.push_str(t);
            out.push('\n');
        }
    };
    let texts = |content: &Value, add: &mut dyn FnMut(&str)| match content {
        Value::String(t) => add(t),
        Value::Array(items) => {
            for i in items {
                if let Some(t) = i["text"].as_str() {
                    add(t);
                }
            }
        }
        _ => {}
    };
    match client {
        HookClient::Claude => {
            for v in lines(text).filter(|v| v["type"] == "assistant") {
                for i in v["message"]["content"].as_array().into_iter().flatten() {
                    if i["type"] == "text" {
                        texts(&i["text"], &mut add);
                    }
                }
            }
        }
        HookClient::Codex => {
            for v in lines(text).filter(|v| v["type"] == "response_item") {
                let p = &v["payload"];
                if p["type"] == "message" && p["role"] == "assistant" {
                    texts(&p["content"], &mut add);
                }
            }
        }
        HookClient::Gemini => {
            let whole = serde_json::from_str::<Value>(text)
                .ok()
                .filter(|v| v["messages"].is_array());
            let messages: Vec<Value> = match whole {
                Some(doc) => doc["messages"].as_array().cloned().unwrap_or_default(),
                None => lines(text).collect(),
            };
            for m in messages.iter().filter(|m| m["type"] == "gemini") {
                texts(&m["content"], &mut add);
            }
        }
        // The plugin tells the session itself: no transcript.
        HookClient::Opencode => {}
    }
    out
}

/// Read `text`, a transcript `client` wrote.
pub fn read(client: HookClient, text: &str) -> Session {
    match client {
        HookClient::Claude => claude(text),
        HookClient::Codex => codex(text),
        HookClient::Gemini => gemini(text),
        HookClient::Opencode => Session::default(),
    }
}

/// The JSON lines of `text`; unreadable lines are skipped.
fn lines(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
}

fn first_time(s: &mut Session, v: &Value, key: &str) {
    if s.started_ms.is_none() {
        s.started_ms = v[key].as_str().and_then(rfc3339_ms);
    }
}

fn claude(text: &str) -> Session {
    let mut s = Session::default();
    for v in lines(text) {
        first_time(&mut s, &v, "timestamp");
        if v["type"] == "assistant" {
            if let Some(items) = v["message"]["content"].as_array() {
                s.tool_calls += items.iter().filter(|i| i["type"] == "tool_use").count();
            }
        }
    }
    s
}

/// Codex's rollout: `{timestamp, type, payload}` a line; a tool call is a
/// `response_item` whose payload's type is `function_call`, `custom_tool_call`,
/// `local_shell_call`, `web_search_call` and the like (never a `…_call_output`).
fn codex(text: &str) -> Session {
    let mut s = Session::default();
    for v in lines(text) {
        first_time(&mut s, &v, "timestamp");
        if v["type"] == "response_item"
            && v["payload"]["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("_call"))
        {
            s.tool_calls += 1;
        }
    }
    s
}

/// Gemini CLI's conversation record: a metadata line (`startTime`) then message records
/// (`timestamp`, `type`, `toolCalls`), each appended again whenever it changes, so calls
/// are counted by their ids; an older CLI wrote one document with a `messages` list.
fn gemini(text: &str) -> Session {
    let mut s = Session::default();
    let mut ids: HashSet<String> = HashSet::new();
    let mut unnamed = 0;
    let mut message = |s: &mut Session, m: &Value| {
        first_time(s, m, "timestamp");
        if m["type"] != "gemini" {
            return;
        }
        for call in m["toolCalls"].as_array().into_iter().flatten() {
            match call["id"].as_str() {
                Some(id) => {
                    ids.insert(id.to_string());
                }
                None => unnamed += 1,
            }
        }
    };
    let whole = serde_json::from_str::<Value>(text)
        .ok()
        .filter(|v| v["messages"].is_array());
    match whole {
        Some(doc) => {
            first_time(&mut s, &doc, "startTime");
            for m in doc["messages"].as_array().into_iter().flatten() {
                message(&mut s, m);
            }
        }
        None => {
            for v in lines(text) {
                first_time(&mut s, &v, "startTime");
                message(&mut s, &v);
            }
        }
    }
    s.tool_calls = ids.len() + unnamed;
    s
}

/// `2026-11-28T08:41:02.123Z` (UTC, as the clients write it) as Unix milliseconds.
pub fn rfc3339_ms(t: &str) -> Option<i64> {
    let t = t.strip_suffix('Z')?;
    let (date, time) = t.split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut h = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (hh, mm, ss) = (h.next()??, h.next()??, h.next()??);
    let ms: i64 = format!("{:0<3}", frac).get(..3)?.parse().ok()?;
    let days = crate::clock::days_from_civil(y, m, day);
    Some(((days * 24 + hh) * 60 + mm) * 60_000 + ss * 1000 + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_own_words_are_read_in_each_clients_shape() {
        let claude = [
            r#"{"type":"user","message":{"content":"use [user-slug] please"}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"per [cents-rule], integers"},{"type":"tool_use","input":{"x":"[tool-slug]"}}]}}"#,
        ]
        .join("\n");
        let s = said(HookClient::Claude, &claude);
        assert!(
            s.contains("cents-rule") && !s.contains("user-slug") && !s.contains("tool-slug"),
            "{s}"
        );
        let codex = r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"as cents-rule says"}]}}"#;
        assert!(said(HookClient::Codex, codex).contains("cents-rule"));
        let gemini = r#"{"id":"m1","type":"gemini","content":"cents-rule applies"}"#;
        assert!(said(HookClient::Gemini, gemini).contains("cents-rule"));
    }

    #[test]
    fn timestamps_read_as_unix_milliseconds() {
        assert_eq!(rfc3339_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_ms("2000-03-01T00:00:01.5Z"), Some(951_868_801_500));
        assert_eq!(rfc3339_ms("not a time"), None);
    }

    #[test]
    fn claude_tool_calls_are_counted_in_assistant_entries_only() {
        let t = [
            r#"{"type":"user","timestamp":"1970-01-01T00:00:01Z","message":{"content":[{"type":"tool_use"}]}}"#,
            "garbage",
            r#"{"type":"assistant","message":{"content":[{"type":"text"},{"type":"tool_use"},{"type":"tool_use"}]}}"#,
        ]
        .join("\n");
        let want = Session {
            tool_calls: 2,
            started_ms: Some(1000),
        };
        assert_eq!(read(HookClient::Claude, &t), want);
    }

    #[test]
    fn codex_counts_calls_not_their_outputs_nor_events() {
        let t = [
            r#"{"timestamp":"1970-01-01T00:00:02.000Z","type":"session_meta","payload":{"id":"x","cwd":"/p"}}"#,
            r#"{"timestamp":"1970-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[]}}"#,
            r#"{"timestamp":"1970-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}}"#,
            r#"{"timestamp":"1970-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"ok"}}"#,
            r#"{"timestamp":"1970-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"c2"}}"#,
            r#"{"timestamp":"1970-01-01T00:00:03.000Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"c1"}}"#,
        ]
        .join("\n");
        let want = Session {
            tool_calls: 2,
            started_ms: Some(2000),
        };
        assert_eq!(read(HookClient::Codex, &t), want);
    }

    #[test]
    fn gemini_counts_each_call_once_however_often_it_is_recorded() {
        let lines = [
            r#"{"sessionId":"s","projectHash":"h","startTime":"1970-01-01T00:00:04.000Z","lastUpdated":"1970-01-01T00:00:04.000Z"}"#,
            r#"{"id":"u1","timestamp":"1970-01-01T00:00:05.000Z","type":"user","content":"fix it"}"#,
            r#"{"id":"m1","timestamp":"1970-01-01T00:00:06.000Z","type":"gemini","content":"","toolCalls":[{"id":"a","name":"read_file"}]}"#,
            r#"{"id":"m1","timestamp":"1970-01-01T00:00:06.000Z","type":"gemini","content":"","toolCalls":[{"id":"a","name":"read_file","status":"success"},{"id":"b","name":"run_shell_command"}]}"#,
            r#"{"$set":{"lastUpdated":"1970-01-01T00:00:07.000Z"}}"#,
        ];
        let want = Session {
            tool_calls: 2,
            started_ms: Some(4000),
        };
        assert_eq!(read(HookClient::Gemini, &lines.join("\n")), want);
        // The older single document.
        let doc = r#"{"sessionId":"s","startTime":"1970-01-01T00:00:04.000Z","messages":[
            {"id":"m1","timestamp":"1970-01-01T00:00:06.000Z","type":"gemini","toolCalls":[{"id":"a"},{"id":"b"},{"id":"c"}]},
            {"id":"u2","timestamp":"1970-01-01T00:00:07.000Z","type":"user","toolCalls":[{"id":"z"}]}]}"#;
        let want = Session {
            tool_calls: 3,
            started_ms: Some(4000),
        };
        assert_eq!(read(HookClient::Gemini, doc), want);
    }
}
