//! The HTTP face: hyper 1.x on loopback. `POST /mcp` is MCP Streamable HTTP (rmcp);
//! `/api/*` is the small REST surface. Only this module knows HTTP and JSON-RPC.

pub mod jsonrpc;
pub mod mcp;
pub mod sessions;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::error::OwnerError;
use crate::service::route::{
    AGENT_HEADER, BRAIN_HEADER, CALLER_ROOT_HEADER, FOUNDER_HEADER, LEGACY_CALLER_ROOT_HEADER,
};
use crate::service::{RouteInput, Service};
use mcp::McpHandler;
use sessions::Sessions;

/// Largest request head (request line and headers) hyper buffers; past it, 431.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The request head must arrive within this.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

type Body = BoxBody<Bytes, Infallible>;

struct App {
    svc: Service,
    mcp: StreamableHttpService<McpHandler, LocalSessionManager>,
    sessions: Sessions,
    max_body: usize,
    body_timeout: Duration,
}

fn json_response(status: u16, v: &Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(serde_json::to_vec(v).unwrap_or_default())).boxed())
        .expect("static response parts are valid")
}

fn error_response(e: &OwnerError) -> Response<Body> {
    json_response(e.status(), &json!({ "error": e.to_json() }))
}

fn plain_error(status: u16, code: &str, message: String) -> Response<Body> {
    json_response(
        status,
        &json!({ "error": { "code": code, "message": message } }),
    )
}

/// True for `localhost`, `127.x.x.x` and `[::1]`, with or without a port.
fn is_loopback_authority(authority: &str) -> bool {
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        authority
            .rsplit_once(':')
            .map(|(h, p)| {
                if p.chars().all(|c| c.is_ascii_digit()) {
                    h
                } else {
                    authority
                }
            })
            .unwrap_or(authority)
    };
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .map(|ip| ip.is_loopback())
            .unwrap_or(false)
}

/// DNS-rebinding guard: Host must be loopback; Origin, when sent, must be a loopback origin.
fn check_origin(req: &Request<Incoming>) -> Result<(), String> {
    let host = req
        .headers()
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !host.is_empty() && !is_loopback_authority(host) {
        return Err(format!(
            "host {host:?} is not this machine's loopback: medulla only answers local callers"
        ));
    }
    if let Some(origin) = req.headers().get(http::header::ORIGIN) {
        let o = origin.to_str().unwrap_or("");
        let authority = o
            .strip_prefix("http://")
            .or_else(|| o.strip_prefix("https://"));
        match authority {
            Some(a) if is_loopback_authority(a.trim_end_matches('/')) => {}
            _ => return Err(format!("origin {o:?} is not a loopback origin: browsers on other sites may not call medulla")),
        }
    }
    Ok(())
}

fn route_input(svc: &Service, req: &Request<Incoming>) -> RouteInput {
    let h = |n: &str| {
        req.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    RouteInput {
        binding: h(BRAIN_HEADER),
        sticky: None,
        caller_root: h(CALLER_ROOT_HEADER).or_else(|| h(LEGACY_CALLER_ROOT_HEADER)),
        agent: h(AGENT_HEADER),
        founder: svc.is_founder(h(FOUNDER_HEADER).as_deref()),
    }
}

/// Decode `a=b&c=d` with percent-escapes and `+` as space.
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    fn decode(s: &str) -> String {
        let bytes = s.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < bytes.len() => {
                    match u8::from_str_radix(
                        std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"),
                        16,
                    ) {
                        Ok(b) => {
                            out.push(b);
                            i += 2;
                        }
                        Err(_) => out.push(b'%'),
                    }
                }
                b => out.push(b),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// Read a whole body: at most `max` bytes, within `timeout`.
async fn read_body(body: Incoming, max: usize, timeout: Duration) -> Result<Bytes, Response<Body>> {
    match tokio::time::timeout(timeout, Limited::new(body, max).collect()).await {
        Err(_) => Err(plain_error(
            408,
            "body_timeout",
            format!(
                "the request body did not arrive within {} ms: send it whole, promptly",
                timeout.as_millis()
            ),
        )),
        Ok(Err(e)) => Err(plain_error(
            413,
            "body_too_large",
            format!("request body refused ({e}): the limit is {max} bytes"),
        )),
        Ok(Ok(b)) => Ok(b.to_bytes()),
    }
}

async fn read_json(
    req: Request<Incoming>,
    max: usize,
    timeout: Duration,
) -> Result<Value, Response<Body>> {
    let bytes = read_body(req.into_body(), max, timeout).await?;
    if bytes.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| plain_error(400, "parse_error", format!("body is not valid JSON: {e}")))
}

impl App {
    /// `/mcp`: the envelope checked here (every malformed message gets a JSON-RPC error),
    /// sessions bounded and ended here, the rest handed to the MCP SDK.
    async fn mcp(&self, req: Request<Incoming>) -> Response<Body> {
        use tower_service::Service as _;
        let session = req
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let method = req.method().clone();
        if method == Method::DELETE {
            return match session {
                None => json_response(
                    400,
                    &jsonrpc::error(
                        Value::Null,
                        jsonrpc::INVALID_REQUEST,
                        "DELETE /mcp ends a session: send its Mcp-Session-Id header",
                    ),
                ),
                Some(id) if !self.sessions.exists(&id).await => json_response(
                    404,
                    &jsonrpc::error(
                        Value::Null,
                        jsonrpc::INVALID_REQUEST,
                        "no such session: it ended or expired; initialize a new one",
                    ),
                ),
                Some(id) => {
                    self.sessions.close(&id).await;
                    Response::builder()
                        .status(204)
                        .body(Full::new(Bytes::new()).boxed())
                        .expect("static response parts are valid")
                }
            };
        }
        let (parts, body) = req.into_parts();
        let bytes = match read_body(body, self.max_body, self.body_timeout).await {
            Ok(b) => b,
            Err(resp) => return resp,
        };
        if method == Method::POST {
            let v: Value = match serde_json::from_slice(&bytes) {
                Ok(v) => v,
                Err(e) => {
                    return json_response(
                        400,
                        &jsonrpc::error(
                            Value::Null,
                            jsonrpc::PARSE_ERROR,
                            format!("parse error: the body is not JSON ({e})"),
                        ),
                    )
                }
            };
            if let Err(answer) = jsonrpc::check(&v) {
                return json_response(400, &answer);
            }
            match &session {
                Some(id) => self.sessions.touch(id),
                None if v["method"] == "initialize" => {
                    let closed = self.sessions.make_room().await;
                    if closed > 0 {
                        tracing::info!(
                            closed,
                            "MCP session cap reached: closed the least recently used"
                        );
                    }
                }
                None => {}
            }
        }
        let req = Request::from_parts(parts, Full::new(bytes));
        let mut svc = self.mcp.clone();
        let resp = match svc.call(req).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        if let Some(id) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.sessions.touch(id);
        }
        // The SDK answers some refusals in plain text (406, 415, 404 ...): give them a
        // JSON-RPC body too, keeping the status.
        let is_json_or_sse = resp
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|c| c.to_str().ok())
            .is_some_and(|c| {
                c.starts_with("application/json") || c.starts_with("text/event-stream")
            });
        if resp.status().as_u16() >= 400 && !is_json_or_sse {
            let status = resp.status().as_u16();
            let text = match resp.into_body().collect().await {
                Ok(b) => String::from_utf8_lossy(&b.to_bytes()).into_owned(),
                Err(never) => match never {},
            };
            return json_response(
                status,
                &jsonrpc::error(
                    Value::Null,
                    jsonrpc::INVALID_REQUEST,
                    text.trim().to_string(),
                ),
            );
        }
        resp
    }

    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        if let Err(msg) = check_origin(&req) {
            return plain_error(403, "forbidden_origin", msg);
        }
        let path = req.uri().path().to_string();
        let query = parse_query(req.uri().query().unwrap_or(""));
        let param = |k: &str| query.iter().find(|(kk, _)| kk == k).map(|(_, v)| v.clone());
        match (req.method().clone(), path.as_str()) {
            (_, "/mcp") => self.mcp(req).await,
            (Method::GET, "/api/health") => json_response(200, &self.svc.health()),
            (Method::GET, "/api/instances") => match self.svc.instances().await {
                Ok(v) => json_response(200, &v),
                Err(e) => error_response(&e),
            },
            (Method::GET, "/api/claims") => match param("brain") {
                None => plain_error(
                    400,
                    "invalid_input",
                    "pass ?brain=<root, fingerprint or medulla>".into(),
                ),
                Some(b) => match self.svc.claims(&b, &route_input(&self.svc, &req)).await {
                    Ok(v) => json_response(200, &v),
                    Err(e) => error_response(&e),
                },
            },
            (Method::GET, "/api/mailbox") => match param("brain") {
                None => plain_error(
                    400,
                    "invalid_input",
                    "pass ?brain=<root, fingerprint or medulla>".into(),
                ),
                Some(b) => match crate::service::mailbox::show_box(
                    &self.svc,
                    &b,
                    &route_input(&self.svc, &req),
                )
                .await
                {
                    Ok(v) => json_response(200, &v),
                    Err(e) => error_response(&e),
                },
            },
            (Method::GET, "/api/mailbox/sweep") => {
                match crate::service::mailbox::sweep(&self.svc).await {
                    Ok(v) => json_response(200, &v),
                    Err(e) => error_response(&e),
                }
            }
            (Method::POST, "/api/mailbox/distribute") => {
                match crate::service::mailbox::distribute_now(&self.svc).await {
                    Ok(r) => json_response(200, &json!(r)),
                    Err(e) => error_response(&e),
                }
            }
            (Method::GET, "/api/doctor") => {
                match crate::service::mailbox::doctor(&self.svc).await {
                    Ok(v) => json_response(200, &v),
                    Err(e) => error_response(&e),
                }
            }
            (Method::POST, "/api/reports") => {
                let input = route_input(&self.svc, &req);
                let letter = match read_json(req, self.max_body, self.body_timeout).await {
                    Ok(v) => v,
                    Err(resp) => return resp,
                };
                match self
                    .svc
                    .call_tool("report", json!({ "letter": letter }), &input)
                    .await
                {
                    Ok(out) => json_response(200, &out.value),
                    Err(e) => error_response(&e),
                }
            }
            (Method::GET, "/api/audit") => {
                let mut args = serde_json::Map::new();
                for k in ["brain", "agent"] {
                    if let Some(v) = param(k) {
                        args.insert(k.into(), json!(v));
                    }
                }
                if let Some(l) = param("limit").and_then(|l| l.parse::<usize>().ok()) {
                    args.insert("limit".into(), json!(l));
                }
                match self
                    .svc
                    .call_tool("audit", Value::Object(args), &route_input(&self.svc, &req))
                    .await
                {
                    Ok(out) => json_response(200, &out.value),
                    Err(e) => error_response(&e),
                }
            }
            (Method::POST, p) if p.starts_with("/api/call/") || p == "/api/promote" => {
                let tool = if p == "/api/promote" {
                    "promote".to_string()
                } else {
                    p.trim_start_matches("/api/call/").to_string()
                };
                let input = route_input(&self.svc, &req);
                let args = match read_json(req, self.max_body, self.body_timeout).await {
                    Ok(v) => v,
                    Err(resp) => return resp,
                };
                match self.svc.call_tool(&tool, args, &input).await {
                    Ok(out) => json_response(200, &out.value),
                    Err(e) => error_response(&e),
                }
            }
            (_, p) if p.starts_with("/api/") => plain_error(
                404,
                "not_found",
                format!(
                    "no route {} {p}: see docs/PROTOCOL.md for the REST surface",
                    req.method()
                ),
            ),
            _ => plain_error(
                404,
                "not_found",
                format!("nothing at {path}: MCP lives at POST /mcp, REST under /api/"),
            ),
        }
    }
}

/// Serve until `shutdown` resolves; then stop accepting, let in-flight requests finish
/// (bounded), and return.
pub async fn serve(
    listener: TcpListener,
    svc: Service,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let cancel = CancellationToken::new();
    let max_body = svc.owner.config.max_body_bytes;
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.clone())
        .with_max_request_body_bytes(max_body)
        // Our own guard checks Host and Origin for every route, MCP included.
        .disable_allowed_hosts();
    let handler_svc = svc.clone();
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(svc.owner.config.session_idle);
    let manager = Arc::new(manager);
    let mcp = StreamableHttpService::new(
        move || Ok(McpHandler::new(handler_svc.clone())),
        manager.clone(),
        config,
    );
    let body_timeout = svc.owner.config.body_timeout;
    let sessions = Sessions::new(manager, svc.owner.config.max_sessions);
    let app = Arc::new(App {
        svc,
        mcp,
        sessions,
        max_body,
        body_timeout,
    });
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let app = app.clone();
                let service = hyper::service::service_fn(move |req| {
                    let app = app.clone();
                    async move { Ok::<_, Infallible>(app.handle(req).await) }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(HEAD_TIMEOUT)
                    .max_buf_size(MAX_HEAD_BYTES)
                    .serve_connection(TokioIo::new(stream), service);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    // Long-lived SSE streams end when the MCP transport is cancelled.
    cancel.cancel();
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(Duration::from_secs(10)) => tracing::warn!("in-flight requests did not finish within 10 s"),
    }
    Ok(())
}
