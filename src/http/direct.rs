//! The direct path (issue 50): a request of an initialised MCP session that needs nothing
//! but its answer (`tools/call` without a progress token, `ping`, the listings, a
//! resource read, a prompt) is handled on the connection's own task by the session's
//! handler, through the SDK's own dispatch (`rmcp::Service::handle_request`), and its
//! answer written as the one event of the response's stream. The SDK's way hands each
//! request from the connection's task to the session's worker, to its service loop, to a
//! task of its own and back the same way: most of a trivial call's cost. Everything else
//! still goes the SDK's way: notifications, responses, `initialize`, a call that reports
//! progress, a request whose routing may ask the client for its roots, a session the SDK
//! does not hold (resumed from disk on its next request), and any request the SDK would
//! look at more closely (2026-07-28 standard headers, per-request protocol metadata, an
//! `Accept` with weights).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderMap, Response};
use http_body_util::{BodyExt, Full};
use rmcp::model::{
    ClientJsonRpcMessage, GetExtensions, GetMeta, JsonRpcMessage, JsonRpcRequest, ProtocolVersion,
    ServerJsonRpcMessage,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer, Service as _};
use serde::Deserialize as _;
use serde_json::Value;

use super::mcp::McpHandler;
use super::Body;

/// The methods the direct path answers: a request and its one answer, nothing sent to
/// the client in between.
const METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
];

/// The initialised sessions, by id: what the direct path needs of each.
pub struct Live {
    sessions: Mutex<HashMap<String, Entry>>,
    /// The SDK ends a session whose worker saw no message for `session_idle`; a request
    /// finding the worker's last message older than this goes the SDK's way, which
    /// renews it.
    renew_after: Duration,
}

struct Entry {
    /// The session's handler (its sticky brain, roots, subscriptions), without the
    /// guard that keeps the session's watch alive.
    handler: McpHandler,
    peer: Peer<RoleServer>,
    /// When the SDK's session worker last saw a message of this session.
    worker_seen: Instant,
}

impl Live {
    pub fn new(session_idle: Duration) -> Self {
        Self {
            sessions: Mutex::new(HashMap::new()),
            renew_after: session_idle / 2,
        }
    }

    /// The session finished its handshake (`notifications/initialized`).
    pub fn register(&self, id: &str, handler: McpHandler, peer: Peer<RoleServer>) {
        let entry = Entry {
            handler,
            peer,
            worker_seen: Instant::now(),
        };
        self.lock().insert(id.to_string(), entry);
    }

    /// The session ended (closed, expired, evicted).
    pub fn forget(&self, id: &str) {
        self.lock().remove(id);
    }

    /// A message of the session went the SDK's way: its worker's idle clock restarted.
    pub fn worker_saw(&self, id: &str) {
        if let Some(e) = self.lock().get_mut(id) {
            e.worker_seen = Instant::now();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.sessions.lock().expect("live sessions lock")
    }

    /// The session's handler and peer, when the direct path may answer for it now.
    fn get(&self, id: &str) -> Option<(McpHandler, Peer<RoleServer>)> {
        let sessions = self.lock();
        let e = sessions.get(id)?;
        (e.worker_seen.elapsed() < self.renew_after).then(|| (e.handler.clone(), e.peer.clone()))
    }
}

/// The answer to `message` (already through the envelope check) of session `id`, or
/// `None` when the request must go the SDK's way. The caller has checked that the SDK
/// still holds the session.
pub async fn answer(
    live: &Live,
    id: &str,
    parts: &Parts,
    message: &Value,
) -> Option<Response<Body>> {
    let method = message.get("method")?.as_str()?;
    if !METHODS.contains(&method) || message.get("id").is_none() {
        return None;
    }
    let (handler, peer) = live.get(id)?;
    let negotiated = peer.peer_info()?.protocol_version.clone();
    if !plain_headers(&parts.headers, &negotiated) || !plain_meta(message) {
        return None;
    }
    if handler.may_ask_roots(parts, &peer).await {
        return None;
    }
    let msg = ClientJsonRpcMessage::deserialize(message).ok()?;
    let JsonRpcMessage::Request(JsonRpcRequest {
        id: rid,
        mut request,
        ..
    }) = msg
    else {
        return None;
    };
    // As the SDK's service loop builds it: the meta first (it lives among the
    // extensions), then the extensions, with the HTTP request's parts.
    let meta = std::mem::take(request.get_meta_mut());
    let mut extensions = std::mem::take(request.extensions_mut());
    extensions.insert(parts.clone());
    let mut ctx = RequestContext::new(rid.clone(), peer);
    ctx.meta = meta;
    ctx.extensions = extensions;
    let reply: ServerJsonRpcMessage = match handler.handle_request(request, ctx).await {
        Ok(result) => JsonRpcMessage::response(result, rid),
        Err(error) => JsonRpcMessage::error(error, Some(rid)),
    };
    let data = serde_json::to_string(&reply).ok()?;
    Some(event_stream(&data))
}

/// The answer as the SDK frames one: an event stream, here of one event.
fn event_stream(data: &str) -> Response<Body> {
    let body = format!("data: {data}\n\n");
    Response::builder()
        .status(200)
        .header(http::header::CONTENT_TYPE, "text/event-stream")
        .header(http::header::CACHE_CONTROL, "no-cache")
        .body(Full::new(Bytes::from(body)).boxed())
        .expect("static response parts are valid")
}

/// Headers the SDK would let through untouched: a `Host`, JSON in, both answer types
/// accepted without weights, the session's own protocol version (or none), and nothing
/// of the 2026-07-28 standard headers or of a resumption.
fn plain_headers(h: &HeaderMap, negotiated: &ProtocolVersion) -> bool {
    let text = |name: &str| h.get(name).and_then(|v| v.to_str().ok());
    let accept = text("accept").unwrap_or("").to_ascii_lowercase();
    let content_type = text("content-type").unwrap_or("").to_ascii_lowercase();
    let version_ok = match h.get("mcp-protocol-version") {
        None => true,
        Some(v) => {
            v.to_str().ok() == Some(negotiated.as_str())
                && negotiated.as_str() < ProtocolVersion::V_2026_07_28.as_str()
        }
    };
    accept.contains("application/json")
        && accept.contains("text/event-stream")
        && !accept.contains("q=")
        && content_type.split(';').next().map(str::trim) == Some("application/json")
        && version_ok
        && h.contains_key("host")
        && !h.contains_key("mcp-method")
        && !h.contains_key("mcp-name")
        && !h.contains_key("last-event-id")
}

/// No progress token (the call reports progress on its stream) and no per-request
/// protocol metadata (the SDK checks it against the headers).
fn plain_meta(message: &Value) -> bool {
    let Some(meta) = message.pointer("/params/_meta") else {
        return true;
    };
    let Some(meta) = meta.as_object() else {
        return false;
    };
    !meta.contains_key("progressToken")
        && !meta
            .keys()
            .any(|k| k.starts_with("io.modelcontextprotocol/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, http::HeaderValue::from_static(v));
        }
        h
    }

    const PLAIN: &[(&str, &str)] = &[
        ("host", "127.0.0.1:1"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
    ];

    #[test]
    fn only_requests_the_sdk_would_pass_untouched_are_plain() {
        let v = ProtocolVersion::V_2025_06_18;
        assert!(plain_headers(&headers(PLAIN), &v));
        let with = |extra: (&'static str, &'static str)| {
            let mut h = headers(PLAIN);
            h.append(extra.0, http::HeaderValue::from_static(extra.1));
            plain_headers(&h, &v)
        };
        assert!(with(("mcp-protocol-version", "2025-06-18")));
        assert!(!with(("mcp-protocol-version", "2025-03-26")));
        assert!(!with(("mcp-method", "tools/call")));
        assert!(!with(("last-event-id", "0/1")));
        assert!(!plain_headers(&headers(&PLAIN[1..]), &v), "no Host");
        let accept_only = |a: &'static str| {
            let h = headers(&[PLAIN[0], ("accept", a), PLAIN[2]]);
            plain_headers(&h, &v)
        };
        assert!(!accept_only("application/json"));
        assert!(!accept_only("application/json, text/event-stream;q=0"));
        assert!(plain_meta(&json!({"params": {"name": "seek"}})));
        assert!(plain_meta(
            &json!({"params": {"_meta": {"claudecode/toolUseId": "x"}}})
        ));
        assert!(!plain_meta(
            &json!({"params": {"_meta": {"progressToken": 1}}})
        ));
        assert!(!plain_meta(
            &json!({"params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
        ));
    }
}
