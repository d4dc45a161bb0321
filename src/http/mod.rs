//! The HTTP face: hyper 1.x on loopback. `POST /mcp` is MCP Streamable HTTP (rmcp);
//! `/api/*` is the small REST surface.
//!
//! - [`gate`]: who may call: only the owner's OS user (the kernel's peer uid, else the
//!   client token); [`peer`]: the uid owning a connection's other end.
//! - [`guard`]: the loopback guard on every route.
//! - [`hall`]: the Hall's page and files (`GET /`, `GET /hall/*`).
//! - [`headers`]: the headers medulla reads, and the routing facts they carry.
//! - [`rest`]: REST routes, derived from the verb registry.
//! - [`mcp`]: the MCP handler (one per session); `mcp_fixtures`: the conformance
//!   suite's fixtures (tests only).
//! - [`direct`]: the direct path: a plain request of an initialised session answered on
//!   the connection's task, without the SDK's session worker and task hand-offs.
//! - [`jsonrpc`]: the JSON-RPC envelope check before the SDK.
//! - [`sessions`]: the MCP session cap and last use.
//! - [`sse`]: event streams as clients parse them; the priming event only for clients
//!   whose protocol defines it.
//! - [`resume`]: MCP sessions kept on disk, so a restart is invisible to their clients.
//! - [`status`]: the one map from an error to its HTTP status.
//!
//! Architecture invariant: only this module knows HTTP, status codes, header names and
//! JSON-RPC.

pub mod direct;
pub mod events;
pub mod gate;
pub mod guard;
pub mod hall;
pub mod hall_auth;
pub mod headers;
pub mod jsonrpc;
pub mod mcp;
mod mcp_fixtures;
pub mod peer;
pub mod rest;
pub mod resume;
pub mod sessions;
pub mod sse;
pub mod status;

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
use serde::Serialize;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::error::OwnerError;
use crate::service::Service;
use mcp::McpHandler;
use sessions::Sessions;
use status::HttpError;

type Body = BoxBody<Bytes, Infallible>;

/// Largest request head (request line and headers) hyper buffers; past it, 431.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The request head must arrive within this. hyper times the wait for the next head on a
/// kept-alive connection with the same clock, so it is also how long such a connection
/// may sit idle: it must outlast the clients' own idle limits (90 s in reqwest and Go's
/// default), or a request a client sends as the owner closes the connection fails
/// (`a_kept_alive_connection_idle_past_the_head_timeout_still_answers`).
const HEAD_TIMEOUT: Duration = Duration::from_secs(120);

pub struct App {
    svc: Service,
    mcp: StreamableHttpService<McpHandler, LocalSessionManager>,
    sessions: Sessions,
    hall: hall_auth::HallAuth,
    /// Who may call: checked per connection (the peer's uid) or per request (the token).
    gate: gate::Gate,
    /// Cancelled at shutdown: long-lived streams (MCP SSE, `/api/events`) end with it.
    cancel: CancellationToken,
    /// `POST /api/shutdown` (`medulla stop`) asks the server to stop through this.
    stop: Arc<tokio::sync::Notify>,
    max_body: usize,
    body_timeout: Duration,
}

impl App {
    /// The routing facts of a request: its headers, and whether it is the founder
    /// (the founder token, or a Hall session).
    fn route_input(&self, h: &http::HeaderMap) -> crate::service::RouteInput {
        let mut input = headers::route_input(&self.svc, h);
        if !input.founder {
            input.founder =
                headers::get(h, headers::HALL_SESSION).is_some_and(|s| self.hall.valid(&s));
        }
        input
    }
}

/// Whether an answer is an event stream.
fn is_sse(resp: &Response<Body>) -> bool {
    resp.headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|c| c.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"))
}

fn json_response<T: Serialize + ?Sized>(status: u16, v: &T) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(serde_json::to_vec(v).unwrap_or_default())).boxed())
        .expect("static response parts are valid")
}

fn error_response(e: &OwnerError) -> Response<Body> {
    json_response(status::of(e), &json!({ "error": e.to_json() }))
}

fn http_error(e: &HttpError) -> Response<Body> {
    json_response(
        e.status(),
        &json!({ "error": { "code": e.code(), "message": e.to_string() } }),
    )
}

/// Read a whole body: at most `max` bytes, within `timeout`.
async fn read_body(body: Incoming, max: usize, timeout: Duration) -> Result<Bytes, HttpError> {
    match tokio::time::timeout(timeout, Limited::new(body, max).collect()).await {
        Err(_) => Err(HttpError::BodyTimeout {
            ms: timeout.as_millis(),
        }),
        Ok(Err(e)) => Err(HttpError::BodyTooLarge {
            detail: e.to_string(),
            max,
        }),
        Ok(Ok(b)) => Ok(b.to_bytes()),
    }
}

async fn read_json(
    req: Request<Incoming>,
    max: usize,
    timeout: Duration,
) -> Result<Value, Response<Body>> {
    let bytes = read_body(req.into_body(), max, timeout)
        .await
        .map_err(|e| http_error(&e))?;
    if bytes.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(&bytes).map_err(|e| http_error(&HttpError::Parse(e.to_string())))
}

impl App {
    /// `/mcp`: the envelope checked here (every malformed message gets a JSON-RPC error),
    /// sessions bounded and ended here, the rest handed to the MCP SDK.
    async fn mcp(&self, req: Request<Incoming>) -> Response<Body> {
        use tower_service::Service as _;
        let session = headers::get(req.headers(), headers::SESSION);
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
            Err(e) => return http_error(&e),
        };
        // The protocol the client speaks: the version its `initialize` asks for, else
        // the header every later request of 2025-06-18 and after carries.
        let mut version = headers::get(&parts.headers, headers::PROTOCOL_VERSION);
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
                Some(id) => {
                    self.sessions.touch(id);
                    if let Some(answer) = self.direct(id, &parts, &v).await {
                        return answer;
                    }
                }
                None if v["method"] == "initialize" => {
                    version = v["params"]["protocolVersion"].as_str().map(str::to_string);
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
        if let Some(id) = headers::get(resp.headers(), headers::SESSION) {
            self.sessions.touch(&id);
        }
        if let Some(id) = &session {
            self.sessions.live.worker_saw(id);
        }
        if is_sse(&resp) {
            if sse::reads_priming(version.as_deref()) {
                return resp;
            }
            let (parts, body) = resp.into_parts();
            return Response::from_parts(parts, sse::without_priming(body));
        }
        // The SDK answers some refusals in plain text (406, 415, 404 ...): give them a
        // JSON-RPC body too, keeping the status.
        let is_json = resp
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|c| c.to_str().ok())
            .is_some_and(|c| c.starts_with("application/json"));
        if resp.status().as_u16() >= 400 && !is_json {
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

    /// The direct path's answer, when it may give one: only for a session the SDK still
    /// holds (one it ended or never had goes its way: 404, or resumed from disk).
    async fn direct(
        &self,
        id: &str,
        parts: &http::request::Parts,
        message: &Value,
    ) -> Option<Response<Body>> {
        if !self.sessions.exists(id).await {
            self.sessions.live.forget(id);
            return None;
        }
        direct::answer(&self.sessions.live, id, parts, message).await
    }

    /// Every answer names the owner's build (one static header: nothing to compute).
    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        let mut resp = self.answer(req).await;
        resp.headers_mut().insert(
            headers::VERSION,
            http::HeaderValue::from_static(crate::service::life::VERSION),
        );
        resp
    }

    async fn answer(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        if let Err(e) = self.gate.check(&req, &self.hall) {
            let mut resp = http_error(&e);
            resp.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Bearer realm=\"medulla\""),
            );
            return resp;
        }
        if let Err(msg) = guard::check_origin(&req) {
            return http_error(&HttpError::ForbiddenOrigin(msg));
        }
        let path = req.uri().path().to_string();
        if path == "/mcp" {
            return self.mcp(req).await;
        }
        if path.starts_with("/api/") {
            return rest::route(&self, req).await;
        }
        if hall::is_hall_path(&path) {
            return hall::serve(&req);
        }
        http_error(&HttpError::NotFound(format!(
            "nothing at {path}: MCP lives at POST /mcp, REST under /api/, the Hall at /"
        )))
    }
}

pub async fn serve(
    listener: TcpListener,
    svc: Service,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let cancel = CancellationToken::new();
    let max_body = svc.owner.config.max_body_bytes;
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.clone())
        .with_max_request_body_bytes(max_body)
        // A request/response call of a sessionless (2026-07-28) client is answered as one
        // JSON body; one that reports progress falls back to an event stream.
        .with_json_response(true)
        // Our own guard checks Host and Origin for every route, MCP included.
        .disable_allowed_hosts();
    // Sessions outlive a restart (their `initialize` kept on disk).
    let kept = Arc::new(resume::FileSessions::open(
        &svc.owner.config.home,
        svc.owner.config.max_sessions,
    ));
    config.session_store = Some(kept.clone());
    let handler_svc = svc.clone();
    let live = Arc::new(direct::Live::new(svc.owner.config.session_idle));
    let ready: mcp::Ready = {
        let live = live.clone();
        Arc::new(move |id, handler, peer| live.register(id, handler, peer))
    };
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(svc.owner.config.session_idle);
    let manager = Arc::new(manager);
    let mcp = StreamableHttpService::new(
        move || Ok(McpHandler::new(handler_svc.clone(), ready.clone())),
        manager.clone(),
        config,
    );
    let body_timeout = svc.owner.config.body_timeout;
    let stop = Arc::new(tokio::sync::Notify::new());
    let sessions = Sessions::new(manager, kept, live, svc.owner.config.max_sessions);
    let home = &svc.owner.config.home;
    let client_token = crate::client_token::ensure(home).map_err(|e| {
        anyhow::anyhow!("cannot create the client token in {}: {e}", home.display())
    })?;
    let gate = gate::Gate::new(&svc.owner.config, client_token, svc.refusals.clone());
    if gate.asks_token() {
        tracing::info!(
            "every caller presents the client token (the kernel's peer check is off here)"
        );
    }
    let app = Arc::new(App {
        svc,
        mcp,
        sessions,
        hall: hall_auth::HallAuth::default(),
        gate,
        cancel: cancel.clone(),
        stop: stop.clone(),
        max_body,
        body_timeout,
    });
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                // Before any byte is read: another OS user gets one refusal and the close.
                // Checked here, in the loop, because it is one syscall pair (~µs) and
                // nothing of the connection may exist before it.
                let local = stream.local_addr().unwrap_or(peer);
                if let Err(refusal) = app.gate.admit(peer, local) {
                    tokio::spawn(gate::refuse(stream, refusal));
                    continue;
                }
                // Answers go out in several small writes (a streamed MCP answer: head,
                // priming event, message): with Nagle on, the last waits for the client's
                // delayed ACK, ~40 ms a call on a kept-alive connection.
                if let Err(e) = stream.set_nodelay(true) {
                    tracing::debug!(error = %e, "cannot set TCP_NODELAY");
                }
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
            _ = stop.notified() => {
                tracing::info!("stop requested over HTTP");
                break;
            }
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
