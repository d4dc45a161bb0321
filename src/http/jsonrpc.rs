//! The JSON-RPC envelope of a message posted to `/mcp`, checked before the MCP SDK sees
//! it, so every malformed request gets a JSON-RPC error (-32700, -32600, -32602) rather
//! than a transport complaint in plain text.

use serde_json::{json, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// A JSON-RPC error answer.
pub fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

fn valid_id(id: &Value) -> bool {
    id.is_string() || id.as_i64().is_some() || id.as_u64().is_some()
}

/// `Ok` when the message is a well-formed JSON-RPC 2.0 request, notification or response
/// with MCP's shapes for the params this server reads; else the error answer to send.
pub fn check(v: &Value) -> Result<(), Value> {
    let Some(obj) = v.as_object() else {
        let what = if v.is_array() {
            "a batch: this protocol takes one JSON-RPC message per POST"
        } else {
            "not a JSON-RPC message object"
        };
        return Err(error(
            Value::Null,
            INVALID_REQUEST,
            format!("invalid request: the body is {what}"),
        ));
    };
    let id = obj.get("id").cloned();
    let echo = id.clone().filter(valid_id).unwrap_or(Value::Null);
    let bad = |code, msg: String| Err(error(echo.clone(), code, msg));
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return bad(
            INVALID_REQUEST,
            "invalid request: \"jsonrpc\" must be \"2.0\"".into(),
        );
    }
    if let Some(id) = &id {
        if !valid_id(id) {
            return bad(
                INVALID_REQUEST,
                "invalid request: \"id\" must be a string or an integer".into(),
            );
        }
    }
    let Some(method) = obj.get("method") else {
        // A response or an error from the client (to a server request).
        if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) {
            return Ok(());
        }
        return bad(INVALID_REQUEST, "invalid request: a message needs \"method\" (a request or notification) or \"result\"/\"error\" with an id (a response)".into());
    };
    let Some(method) = method.as_str() else {
        return bad(
            INVALID_REQUEST,
            "invalid request: \"method\" must be a string".into(),
        );
    };
    let params = match obj.get("params") {
        None | Some(Value::Null) => None,
        Some(Value::Object(p)) => Some(p),
        Some(_) => {
            return bad(
                INVALID_PARAMS,
                format!("invalid params: the params of {method} must be an object"),
            )
        }
    };
    let field = |k: &str| params.and_then(|p| p.get(k));
    match method {
        "initialize" => {
            if !field("protocolVersion").is_some_and(Value::is_string) {
                return bad(
                    INVALID_PARAMS,
                    "invalid params: initialize needs protocolVersion (a string)".into(),
                );
            }
            if field("capabilities").is_some_and(|c| !c.is_object()) {
                return bad(
                    INVALID_PARAMS,
                    "invalid params: capabilities must be an object".into(),
                );
            }
            let info = field("clientInfo");
            let ok = info.is_some_and(|i| {
                i.get("name").is_some_and(Value::is_string)
                    && i.get("version").is_some_and(Value::is_string)
            });
            if !ok {
                return bad(
                    INVALID_PARAMS,
                    "invalid params: initialize needs clientInfo {name, version} (strings)".into(),
                );
            }
        }
        "tools/call" => {
            if !field("name").is_some_and(Value::is_string) {
                return bad(
                    INVALID_PARAMS,
                    "invalid params: tools/call needs name (a string)".into(),
                );
            }
            if field("arguments").is_some_and(|a| !a.is_object() && !a.is_null()) {
                return bad(
                    INVALID_PARAMS,
                    "invalid params: tools/call arguments must be an object".into(),
                );
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: Value) -> Option<i64> {
        check(&v)
            .err()
            .map(|e| e["error"]["code"].as_i64().unwrap())
    }

    /// Regression (issue 10, finding 9): these reached the SDK and came back as HTTP 415
    /// plain text, -32601, or 400 "Session ID is required".
    #[test]
    fn malformed_envelopes_get_json_rpc_codes() {
        assert_eq!(
            code(json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])),
            Some(INVALID_REQUEST)
        );
        assert_eq!(
            code(json!({"jsonrpc": "1.0", "id": 1, "method": "ping"})),
            Some(INVALID_REQUEST)
        );
        assert_eq!(
            code(json!({"jsonrpc": "2.0", "id": {}, "method": "ping"})),
            Some(INVALID_REQUEST)
        );
        assert_eq!(
            code(json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]})),
            Some(INVALID_PARAMS)
        );
        assert_eq!(
            code(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "seek", "arguments": "{}"}})
            ),
            Some(INVALID_PARAMS)
        );
        assert_eq!(
            code(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x"}}})
            ),
            Some(INVALID_PARAMS)
        );
        assert_eq!(code(json!(42)), Some(INVALID_REQUEST));
        assert_eq!(
            code(json!({"jsonrpc": "2.0", "id": 3})),
            Some(INVALID_REQUEST)
        );
        // Well-formed messages pass.
        assert_eq!(
            code(json!({"jsonrpc": "2.0", "id": "a", "method": "ping"})),
            None
        );
        assert_eq!(
            code(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
            None
        );
        assert_eq!(code(json!({"jsonrpc": "2.0", "id": 1, "result": {}})), None);
        let e = check(&json!({"jsonrpc": "2.0", "id": 7, "method": "x", "params": 1})).unwrap_err();
        assert_eq!(e["id"], 7, "the id is echoed when it is valid");
    }
}
