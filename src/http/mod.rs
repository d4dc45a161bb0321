//! The HTTP face: hyper 1.x on loopback. `POST /mcp` is MCP Streamable HTTP (rmcp);
//! `/api/*` is the small REST surface. Only this module knows HTTP and JSON-RPC.

pub mod mcp;

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
    AGENT_HEADER, BRAIN_HEADER, CALLER_ROOT_HEADER, LEGACY_CALLER_ROOT_HEADER,
};
use crate::service::{RouteInput, Service};
use mcp::McpHandler;

type Body = BoxBody<Bytes, Infallible>;

struct App {
    svc: Service,
    mcp: StreamableHttpService<McpHandler, LocalSessionManager>,
    max_body: usize,
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

fn route_input(req: &Request<Incoming>) -> RouteInput {
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

async fn read_json(req: Request<Incoming>, max: usize) -> Result<Value, Response<Body>> {
    let body = Limited::new(req.into_body(), max)
        .collect()
        .await
        .map_err(|e| {
            plain_error(
                413,
                "body_too_large",
                format!("request body refused ({e}): the limit is {max} bytes"),
            )
        })?;
    let bytes = body.to_bytes();
    if bytes.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| plain_error(400, "parse_error", format!("body is not valid JSON: {e}")))
}

impl App {
    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        if let Err(msg) = check_origin(&req) {
            return plain_error(403, "forbidden_origin", msg);
        }
        let path = req.uri().path().to_string();
        let query = parse_query(req.uri().query().unwrap_or(""));
        let param = |k: &str| query.iter().find(|(kk, _)| kk == k).map(|(_, v)| v.clone());
        match (req.method().clone(), path.as_str()) {
            (_, "/mcp") => {
                use tower_service::Service as _;
                let mut svc = self.mcp.clone();
                // Read the body here so a POST that is not JSON gets a JSON-RPC parse
                // error, as the protocol asks, not a transport complaint in plain text.
                let is_post = req.method() == Method::POST;
                let (parts, body) = req.into_parts();
                let bytes = match Limited::new(body, self.max_body).collect().await {
                    Ok(b) => b.to_bytes(),
                    Err(e) => {
                        return plain_error(
                            413,
                            "body_too_large",
                            format!(
                                "request body refused ({e}): the limit is {} bytes",
                                self.max_body
                            ),
                        )
                    }
                };
                if is_post {
                    if let Err(e) = serde_json::from_slice::<Value>(&bytes) {
                        return json_response(
                            400,
                            &json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": format!("parse error: the body is not JSON ({e})") } }),
                        );
                    }
                }
                let req = Request::from_parts(parts, Full::new(bytes));
                match svc.call(req).await {
                    Ok(r) => r,
                    Err(never) => match never {},
                }
            }
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
                Some(b) => match self.svc.claims(&b).await {
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
                Some(b) => match crate::service::mailbox::show_box(&self.svc, &b).await {
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
                let input = route_input(&req);
                let letter = match read_json(req, self.max_body).await {
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
                    .call_tool("audit", Value::Object(args), &route_input(&req))
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
                let input = route_input(&req);
                let args = match read_json(req, self.max_body).await {
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
    let mcp = StreamableHttpService::new(
        move || Ok(McpHandler::new(handler_svc.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = Arc::new(App { svc, mcp, max_body });
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
                let conn = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
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
