//! The OpenAI Responses API as Codex speaks it (`POST /v1/responses`, streamed), scripted:
//! the next step is read from the conversation (`input`). Codex marks its agent's turns
//! (`x-codex-turn-metadata`: `request_kind: "turn"`); for a model that searches its tools,
//! MCP tools are deferred behind Codex's own `tool_search`, which the script calls first,
//! as a model does. Codex reads files with its shell tool (`exec_command`).

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
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| text_of(&i["output"]))
        .collect()
}

/// Is medulla's `name` offered now: in the request's tools, or found by a tool search?
fn offered(body: &Value, name: &str) -> bool {
    let in_namespace = |t: &Value| {
        t["type"] == "namespace"
            && t["name"] == "mcp__medulla"
            && t["tools"]
                .as_array()
                .is_some_and(|ts| ts.iter().any(|x| x["name"] == name))
    };
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(in_namespace)
        || body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["type"] == "tool_search_output")
            .flat_map(|i| i["tools"].as_array().into_iter().flatten())
            .any(in_namespace)
}

/// The scripted model, for a session working in `cwd` (Codex's shell runs there).
pub fn script(req: &Request, _cwd: &Path) -> Reply {
    let b = &req.body;
    let kind = req
        .headers
        .get("x-codex-turn-metadata")
        .and_then(|m| serde_json::from_str::<Value>(m).ok())
        .and_then(|m| m["request_kind"].as_str().map(str::to_string));
    if !req.path.ends_with("/responses") || kind.as_deref().is_some_and(|k| k != "turn") {
        return answer(b, vec![message("Billing retry lookup")]);
    }
    let input = b["input"].as_array().cloned().unwrap_or_default();
    let prompt = prompt_in(&Value::Array(input.clone()).to_string()).to_string();
    let plan = steps(&prompt, "codex");
    let done = input
        .iter()
        .filter(|i| i["type"] == "function_call")
        .count();
    let n = input.len();
    let Some(step) = plan.get(done) else {
        return answer(b, vec![message(DONE)]);
    };
    let call = |namespace: Option<&str>, name: &str, args: Value| {
        let mut item = json!({ "type": "function_call", "id": format!("fc_{n}"),
            "call_id": format!("call_{n}"), "name": name, "arguments": args.to_string(),
            "status": "completed" });
        if let Some(ns) = namespace {
            item["namespace"] = json!(ns);
        }
        item
    };
    let item = match (step, step.medulla()) {
        (_, Some((tool, args))) => call(Some("mcp__medulla"), tool, args),
        (Step::Read(p), None) => call(
            None,
            "exec_command",
            json!({ "cmd": format!("sed -n 1,40p {p}"), "yield_time_ms": 10000 }),
        ),
        (_, None) => unreachable!("every step but a read calls medulla"),
    };
    let wants = item["name"].as_str().unwrap_or_default().to_string();
    if item.get("namespace").is_some() && !offered(b, &wants) {
        return answer(
            b,
            vec![json!({ "type": "tool_search_call", "id": format!("ts_{n}"),
                "call_id": format!("search_{n}"), "status": "completed", "execution": "client",
                "arguments": { "query": "medulla seek memorize", "limit": 8 } })],
        );
    }
    answer(b, vec![item])
}

fn message(text: &str) -> Value {
    json!({ "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{ "type": "output_text", "text": text, "annotations": [] }] })
}

/// A streamed response of `items`: each item added and done, then the response completed.
fn answer(b: &Value, items: Vec<Value>) -> Reply {
    let model = b["model"].as_str().unwrap_or("gpt");
    let base = json!({ "id": "resp_1", "object": "response", "model": model,
        "status": "in_progress", "output": [] });
    let mut ev: Vec<(&str, Value)> = vec![(
        "response.created",
        json!({ "type": "response.created", "response": base }),
    )];
    for (i, item) in items.iter().enumerate() {
        ev.push((
            "response.output_item.added",
            json!({ "type": "response.output_item.added", "output_index": i, "item": item }),
        ));
        ev.push((
            "response.output_item.done",
            json!({ "type": "response.output_item.done", "output_index": i, "item": item }),
        ));
    }
    let mut done = base.clone();
    done["status"] = json!("completed");
    done["output"] = json!(items);
    done["usage"] = json!({ "input_tokens": 100, "input_tokens_details": { "cached_tokens": 0 },
        "output_tokens": 10, "output_tokens_details": { "reasoning_tokens": 0 }, "total_tokens": 110 });
    ev.push((
        "response.completed",
        json!({ "type": "response.completed", "response": done }),
    ));
    Reply::sse(&ev)
}
