//! The Anthropic Messages API as Claude Code speaks it (`POST /v1/messages?beta=true`,
//! streamed), scripted: the next step is read from the conversation. Claude Code lists
//! MCP tools as deferred, named in a system message behind its `ToolSearch` tool; the
//! script loads medulla's by exact name first, as a model does.

use std::path::Path;

use serde_json::{json, Value};

use super::model::{Reply, Request};
use super::{prompt_in, steps, Step, DONE};

const SEARCH: &str = "ToolSearch";

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| match i["type"].as_str() {
                Some("text") => i["text"].as_str().unwrap_or_default().to_string(),
                Some("tool_result") => text_of(&i["content"]),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The text of every tool result in a request's conversation.
pub fn results(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        for i in m["content"].as_array().into_iter().flatten() {
            if i["type"] == "tool_result" {
                out.push(text_of(&i["content"]));
            }
        }
    }
    out
}

/// The tool calls the model made so far: (name, input).
fn calls(body: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        if m["role"] != "assistant" {
            continue;
        }
        for i in m["content"].as_array().into_iter().flatten() {
            if i["type"] == "tool_use" {
                out.push((
                    i["name"].as_str().unwrap_or_default().to_string(),
                    i["input"].clone(),
                ));
            }
        }
    }
    out
}

/// A tool the model may call now: offered whole, or loaded by a tool search (a
/// `tool_reference` to it in a tool result).
fn loaded(body: &Value, name: &str) -> bool {
    let offered = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["name"] == name && t["defer_loading"] != true);
    let referenced = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|i| i["type"] == "tool_result")
        .flat_map(|r| r["content"].as_array().into_iter().flatten())
        .any(|x| x["type"] == "tool_reference" && x["tool_name"] == name);
    offered || referenced
}

fn step_call(step: &Step, cwd: &Path) -> (String, Value) {
    match (step, step.medulla()) {
        (_, Some((tool, args))) => (format!("mcp__medulla__{tool}"), args),
        (Step::Read(p), None) => ("Read".into(), json!({ "file_path": cwd.join(p) })),
        (_, None) => unreachable!("every step but a read calls medulla"),
    }
}

/// The scripted model, for a session working in `cwd`.
pub fn script(req: &Request, cwd: &Path) -> Reply {
    let b = &req.body;
    if req.path.contains("count_tokens") {
        return Reply::json(&json!({ "input_tokens": b.to_string().len() / 4 }));
    }
    if !req.path.starts_with("/v1/messages") {
        return Reply {
            status: 404,
            content_type: "application/json",
            body: br#"{"type":"error","error":{"type":"not_found_error","message":"no such endpoint"}}"#.to_vec(),
        };
    }
    let is_agent = b["tools"]
        .as_array()
        .is_some_and(|ts| ts.iter().any(|t| t["name"] == "Read"));
    if !is_agent {
        return answer(
            b,
            vec![json!({ "type": "text", "text": "Billing retry lookup" })],
            "end_turn",
        );
    }
    let prompt = prompt_in(&b["messages"].to_string()).to_string();
    let plan = steps(&prompt, "claude-code");
    let made = calls(b);
    let done = made.iter().filter(|(n, _)| n != SEARCH).count();
    let Some(step) = plan.get(done) else {
        return answer(b, vec![json!({ "type": "text", "text": DONE })], "end_turn");
    };
    let (name, input) = step_call(step, cwd);
    if name.starts_with("mcp__") && !loaded(b, &name) {
        let query = "select:mcp__medulla__seek,mcp__medulla__memorize";
        return answer(
            b,
            vec![
                json!({ "type": "tool_use", "id": format!("toolu_s{}", made.len()), "name": SEARCH,
                         "input": { "query": query, "max_results": 5 } }),
            ],
            "tool_use",
        );
    }
    answer(
        b,
        vec![
            json!({ "type": "tool_use", "id": format!("toolu_{}", made.len()), "name": name, "input": input }),
        ],
        "tool_use",
    )
}

/// A streamed message of `blocks`.
fn answer(b: &Value, blocks: Vec<Value>, stop: &str) -> Reply {
    let model = b["model"].as_str().unwrap_or("claude");
    let usage = json!({ "input_tokens": 100, "output_tokens": 1,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 });
    let mut ev: Vec<(&str, Value)> = vec![(
        "message_start",
        json!({ "type": "message_start", "message": { "id": "msg_1", "type": "message",
            "role": "assistant", "model": model, "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": usage } }),
    )];
    for (i, block) in blocks.iter().enumerate() {
        if block["type"] == "text" {
            ev.push((
                "content_block_start",
                json!({ "type": "content_block_start", "index": i,
                    "content_block": { "type": "text", "text": "" } }),
            ));
            ev.push((
                "content_block_delta",
                json!({ "type": "content_block_delta", "index": i,
                    "delta": { "type": "text_delta", "text": block["text"] } }),
            ));
        } else {
            ev.push((
                "content_block_start",
                json!({ "type": "content_block_start", "index": i, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {} } }),
            ));
            ev.push((
                "content_block_delta",
                json!({ "type": "content_block_delta", "index": i, "delta": {
                    "type": "input_json_delta", "partial_json": block["input"].to_string() } }),
            ));
        }
        ev.push((
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": i }),
        ));
    }
    ev.push((
        "message_delta",
        json!({ "type": "message_delta", "delta": { "stop_reason": stop, "stop_sequence": null },
            "usage": { "output_tokens": 20 } }),
    ));
    ev.push(("message_stop", json!({ "type": "message_stop" })));
    Reply::sse(&ev)
}
