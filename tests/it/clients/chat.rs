//! The OpenAI chat completions API as opencode's OpenAI-compatible provider speaks it
//! (`POST /v1/chat/completions`, streamed), scripted: the next step is read from the
//! conversation (`messages`). opencode names an MCP tool `<server>_<tool>`; its own file
//! reader is `read`. Its one side request names a session's title.

use std::path::Path;

use serde_json::{json, Value};

use super::model::{Reply, Request};
use super::{prompt_in, steps, Step, DONE};

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The text of every tool result in a request's conversation.
pub fn results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| text_of(&m["content"]))
        .collect()
}

/// The scripted model, for a session working in `cwd`.
pub fn script(req: &Request, cwd: &Path) -> Reply {
    let b = &req.body;
    if !req.path.ends_with("/chat/completions") {
        return Reply {
            status: 404,
            content_type: "application/json",
            body: br#"{"error":{"message":"no such endpoint"}}"#.to_vec(),
        };
    }
    let messages = b["messages"].as_array().cloned().unwrap_or_default();
    let system: String = messages
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| text_of(&m["content"]))
        .collect();
    if system.contains("title generator") || b["tools"].as_array().is_none_or(Vec::is_empty) {
        return answer(b, text_delta("Billing retry lookup"));
    }
    let plan = steps(
        prompt_in(&Value::Array(messages.clone()).to_string()),
        "opencode",
    );
    let done: usize = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["tool_calls"].as_array().map_or(0, Vec::len))
        .sum();
    let Some(step) = plan.get(done) else {
        return answer(b, text_delta(DONE));
    };
    let (name, args) = match (step, step.medulla()) {
        (_, Some((tool, args))) => (format!("medulla_{tool}"), args),
        (Step::Read(p), None) => ("read".to_string(), json!({ "filePath": cwd.join(p) })),
        (_, None) => unreachable!("every step but a read calls medulla"),
    };
    let call = json!({ "tool_calls": [{ "index": 0, "id": format!("call_{done}"), "type": "function",
        "function": { "name": name, "arguments": args.to_string() } }] });
    let mut events = vec![chunk(
        b,
        json!({ "role": "assistant", "content": "" }),
        None,
    )];
    events.push(chunk(b, call, None));
    events.push(chunk(b, json!({}), Some("tool_calls")));
    done_with(events)
}

fn text_delta(text: &str) -> Value {
    json!({ "content": text })
}

fn chunk(b: &Value, delta: Value, finish: Option<&str>) -> Value {
    json!({ "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
        "model": b["model"], "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] })
}

fn answer(b: &Value, delta: Value) -> Reply {
    let events = vec![
        chunk(b, json!({ "role": "assistant", "content": "" }), None),
        chunk(b, delta, None),
        chunk(b, json!({}), Some("stop")),
    ];
    done_with(events)
}

/// The chunks, the usage, and the stream's end.
fn done_with(mut events: Vec<Value>) -> Reply {
    events.push(
        json!({ "id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
        "usage": { "prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110 } }),
    );
    let ev: Vec<(&str, Value)> = events.into_iter().map(|e| ("", e)).collect();
    Reply::sse_with_done(&ev)
}
