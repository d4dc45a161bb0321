//! The Gemini API as Gemini CLI speaks it (`models/<m>:streamGenerateContent?alt=sse`,
//! `:generateContent`, `:countTokens`), scripted: the next step is read from the
//! conversation (`contents`). Gemini CLI names an MCP tool `mcp_<server>_<tool>`; its own
//! file reader is `read_file`. Its side requests ask for JSON by a schema (its model
//! router): they get a value of that schema.

use std::path::Path;

use serde_json::{json, Value};

use super::model::{Reply, Request};
use super::{prompt_in, steps, Step, DONE};

/// The text of every tool result in a request's conversation.
pub fn results(body: &Value) -> Vec<String> {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().into_iter().flatten())
        .filter_map(|p| p.get("functionResponse"))
        .map(|r| match &r["response"]["output"] {
            Value::String(s) => s.clone(),
            _ => r["response"].to_string(),
        })
        .collect()
}

/// A value of `schema` (what the router asks for: a score of at least 1).
fn of_schema(schema: &Value) -> Value {
    if let Some(e) = schema["enum"].as_array().and_then(|e| e.first()) {
        return e.clone();
    }
    match schema["type"]
        .as_str()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("object") | None if schema.get("properties").is_some() => {
            let mut out = json!({});
            for (k, v) in schema["properties"].as_object().into_iter().flatten() {
                out[k] = if k == "next_speaker" {
                    json!("user")
                } else {
                    of_schema(v)
                };
            }
            out
        }
        Some("string") => json!("scripted"),
        Some("number") | Some("integer") => schema.get("minimum").cloned().unwrap_or(json!(1)),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        _ => Value::Null,
    }
}

/// The scripted model, for a session working in `cwd`.
pub fn script(req: &Request, _cwd: &Path) -> Reply {
    let b = &req.body;
    let path = req.path.split('?').next().unwrap_or_default();
    if path.ends_with(":countTokens") {
        return Reply::json(&json!({ "totalTokens": b.to_string().len() / 4 }));
    }
    let stream = path.ends_with(":streamGenerateContent");
    if !stream && !path.ends_with(":generateContent") {
        return Reply {
            status: 404,
            content_type: "application/json",
            body: br#"{"error":{"code":404,"message":"no such method","status":"NOT_FOUND"}}"#
                .to_vec(),
        };
    }
    let declared: Vec<String> = b["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["functionDeclarations"].as_array().into_iter().flatten())
        .filter_map(|f| f["name"].as_str().map(str::to_string))
        .collect();
    if declared.is_empty() {
        let config = &b["generationConfig"];
        let schema = config
            .get("responseJsonSchema")
            .or_else(|| config.get("responseSchema"));
        let text = match schema {
            Some(s) => of_schema(s).to_string(),
            None => "Billing retry lookup".to_string(),
        };
        return answer(json!([{ "text": text }]), stream);
    }
    let contents = &b["contents"];
    let plan = steps(prompt_in(&contents.to_string()), "gemini");
    let done = contents
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["role"] == "model")
        .flat_map(|c| c["parts"].as_array().into_iter().flatten())
        .filter(|p| p.get("functionCall").is_some())
        .count();
    let Some(step) = plan.get(done) else {
        return answer(json!([{ "text": DONE }]), stream);
    };
    let (name, args) = match (step, step.medulla()) {
        (_, Some((tool, args))) => (format!("mcp_medulla_{tool}"), args),
        (Step::Read(p), None) => ("read_file".to_string(), json!({ "file_path": p })),
        (_, None) => unreachable!("every step but a read calls medulla"),
    };
    if !declared.contains(&name) {
        let offered = declared.join(", ");
        return answer(
            json!([{ "text": format!("{name} is not offered: {offered}") }]),
            stream,
        );
    }
    answer(
        json!([{ "functionCall": { "name": name, "args": args } }]),
        stream,
    )
}

fn answer(parts: Value, stream: bool) -> Reply {
    let response = json!({
        "candidates": [{ "content": { "role": "model", "parts": parts }, "finishReason": "STOP", "index": 0 }],
        "usageMetadata": { "promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110 },
        "modelVersion": "scripted",
    });
    if stream {
        Reply::sse(&[("", response)])
    } else {
        Reply::json(&response)
    }
}
