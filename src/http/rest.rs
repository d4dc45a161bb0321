//! The REST surface: `POST /api/call/<verb>` and every route the registry lists for a
//! verb (derived, never listed twice), plus the reads that are not verbs (health, a
//! store's claims, a box, doctor, a distribution pass now).

use std::sync::Arc;

use http::{Method, Request, Response};
use hyper::body::Incoming;
use serde::Serialize;
use serde_json::{Map, Value};

use super::hall_auth::HallAuth;
use super::status::HttpError;
use super::{error_response, headers, http_error, json_response, read_json, App, Body};
use crate::service::registry::{specs, Spec};
use crate::service::RouteInput;

/// Answer a REST request under `/api/`.
pub async fn route(app: &Arc<App>, req: Request<Incoming>) -> Response<Body> {
    let path = req.uri().path().to_string();
    let query = parse_query(req.uri().query().unwrap_or(""));
    let param = |k: &str| query.iter().find(|(kk, _)| kk == k).map(|(_, v)| v.clone());
    let input = app.route_input(req.headers());
    let svc = &app.svc;
    match (req.method().clone(), path.as_str()) {
        (Method::GET, "/api/health") => json_response(200, &svc.health()),
        (Method::POST, "/api/shutdown") => {
            if !input.founder {
                return error_response(&crate::error::OwnerError::FounderOnly {
                    what: "stopping the owner".into(),
                });
            }
            app.stop.notify_one();
            json_response(
                202,
                &serde_json::json!({ "stopping": true, "pid": std::process::id() }),
            )
        }
        (Method::POST, "/api/hall/ticket") => {
            if !input.founder {
                return error_response(&crate::error::OwnerError::FounderOnly {
                    what: "a Hall ticket".into(),
                });
            }
            let host = headers::get(req.headers(), "host")
                .unwrap_or_else(|| svc.owner.config.listen.to_string());
            let ticket = app.hall.ticket();
            json_response(
                200,
                &serde_json::json!({
                    "url": format!("http://{host}/#ticket={ticket}"),
                    "ticket": ticket,
                    "expires_in_secs": HallAuth::ticket_ttl_secs(),
                }),
            )
        }
        (Method::POST, "/api/hall/session") => {
            let body = match read_json(req, app.max_body, app.body_timeout).await {
                Ok(v) => v,
                Err(resp) => return resp,
            };
            match body["ticket"].as_str().and_then(|t| app.hall.session(t)) {
                Some(session) => json_response(
                    200,
                    &serde_json::json!({ "session": session, "expires_in_secs": HallAuth::session_ttl_secs() }),
                ),
                None => error_response(&crate::error::OwnerError::FounderOnly {
                    what: "a Hall session (the ticket is unknown, used or expired: run `medulla hall` again)".into(),
                }),
            }
        }
        (Method::GET, "/api/events") => {
            // EventSource cannot send headers: the Hall session may come as `?session=`.
            let session_ok = input.founder || param("session").is_some_and(|s| app.hall.valid(&s));
            if !session_ok {
                return error_response(&crate::error::OwnerError::FounderOnly {
                    what: "the event stream".into(),
                });
            }
            super::events::stream(&svc.owner.registry.events, app.cancel.child_token())
        }
        (Method::GET, "/api/claims") => match param("brain") {
            None => http_error(&HttpError::MissingParam(
                "pass ?brain=<root, fingerprint or medulla>".into(),
            )),
            Some(b) => {
                let num = |k: &str| param(k).and_then(|v| v.parse::<usize>().ok());
                answer(
                    svc.claims(&b, num("offset").unwrap_or(0), num("limit"), &input)
                        .await,
                )
            }
        },
        (Method::GET, "/api/mailbox") => {
            // Without `brain`, the box of the brain this request is routed to.
            let brain = match param("brain") {
                Some(b) => Some(b),
                None => svc.route(&input).ok().and_then(|r| r.brain).map(|m| m.root),
            };
            match brain {
                None => http_error(&HttpError::MissingParam(
                    "no brain covers this caller: pass ?brain=<root, fingerprint or medulla>"
                        .into(),
                )),
                Some(b) => answer(crate::service::mailbox::show_box(svc, &b, &input).await),
            }
        }
        (Method::POST, "/api/mailbox/distribute") => answer(svc.owner.distribute().await),
        (Method::GET, "/api/doctor") => {
            let deep = matches!(param("deep").as_deref(), Some("true" | "1" | "yes"));
            answer(crate::service::mailbox::doctor(svc, deep).await)
        }
        (Method::POST, p) if p.starts_with("/api/call/") => {
            let verb = p.trim_start_matches("/api/call/").to_string();
            call(app, req, &verb, input).await
        }
        (m, p) => match alias(&m, p) {
            Some((spec, true)) => {
                let args = match read_json(req, app.max_body, app.body_timeout).await {
                    Ok(v) => v,
                    Err(resp) => return resp,
                };
                // `POST /api/reports` takes the letter itself as its body.
                let args = if spec.name == "report" {
                    serde_json::json!({ "letter": args })
                } else {
                    args
                };
                dispatch(app, spec.name, args, &input).await
            }
            Some((spec, false)) => {
                let args = query_args(&spec, &query);
                dispatch(app, spec.name, args, &input).await
            }
            None => http_error(&HttpError::NotFound(format!(
                "no route {m} {p}: MCP lives at POST /mcp, REST under /api/ (docs/PROTOCOL.md)"
            ))),
        },
    }
}

/// The verb a REST alias names, and whether it takes a body (POST) or a query (GET).
fn alias(m: &Method, path: &str) -> Option<(Spec, bool)> {
    let want = format!("{m} {path}");
    specs()
        .into_iter()
        .find(|s| s.also.contains(&want.as_str()))
        .map(|s| (s, *m == Method::POST))
}

/// Query parameters as arguments, each typed as the verb's input schema says.
fn query_args(spec: &Spec, query: &[(String, String)]) -> Value {
    let props = spec.input_schema.get("properties");
    let mut args = Map::new();
    for (k, v) in query {
        let ty = props.and_then(|p| p.get(k)).and_then(|p| p.get("type"));
        let is = |t: &str| match ty {
            Some(Value::String(s)) => s == t,
            Some(Value::Array(a)) => a.iter().any(|x| x == t),
            _ => false,
        };
        let value = if is("integer") {
            v.parse::<i64>()
                .map(Value::from)
                .unwrap_or(Value::from(v.clone()))
        } else if is("boolean") {
            v.parse::<bool>()
                .map(Value::from)
                .unwrap_or(Value::from(v.clone()))
        } else {
            Value::from(v.clone())
        };
        args.insert(k.clone(), value);
    }
    Value::Object(args)
}

async fn call(
    app: &Arc<App>,
    req: Request<Incoming>,
    verb: &str,
    input: RouteInput,
) -> Response<Body> {
    let streams = req
        .headers()
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|a| a.contains("application/x-ndjson"));
    let args = match read_json(req, app.max_body, app.body_timeout).await {
        Ok(v) => v,
        Err(resp) => return resp,
    };
    if streams {
        return progress_stream(app, verb.to_string(), args, input);
    }
    dispatch(app, verb, args, &input).await
}

/// A call answered as NDJSON: `{"progress": {done, total, what}}` lines while a long verb
/// works (at most ten a second), then one `{"result": ...}` or `{"error": ...}` line.
fn progress_stream(app: &Arc<App>, verb: String, args: Value, input: RouteInput) -> Response<Body> {
    use http_body_util::{BodyExt, StreamBody};
    use hyper::body::Frame;
    let (progress, mut ticks) = crate::service::progress::Progress::channel();
    let svc = app.svc.clone();
    let mut call = tokio::spawn(async move {
        svc.call_tool_with_progress(&verb, args, &input, progress)
            .await
    });
    let line = |v: Value| {
        Ok::<_, std::convert::Infallible>(Frame::data(bytes::Bytes::from(format!("{v}\n"))))
    };
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut last = std::time::Instant::now() - std::time::Duration::from_secs(1);
        loop {
            tokio::select! {
                done = &mut call => {
                    // The last word on progress before the answer.
                    let mut tail = None;
                    while let Ok(t) = ticks.try_recv() {
                        tail = Some(t);
                    }
                    if let Some(t) = tail {
                        let _ = tx.send(line(serde_json::json!({ "progress": t })));
                    }
                    let end = match done {
                        Ok(Ok(out)) => serde_json::json!({ "result": out.value }),
                        Ok(Err(e)) => serde_json::json!({ "error": e.to_json() }),
                        Err(e) => serde_json::json!({ "error": { "code": "internal", "message": e.to_string() } }),
                    };
                    let _ = tx.send(line(end));
                    break;
                }
                Some(t) = ticks.recv() => {
                    let last_one = t.total.is_some_and(|n| t.done >= n);
                    if last.elapsed() >= std::time::Duration::from_millis(100) || last_one {
                        last = std::time::Instant::now();
                        let _ = tx.send(line(serde_json::json!({ "progress": t })));
                    }
                }
            }
        }
    });
    let frames =
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|v| (v, rx)) });
    Response::builder()
        .status(200)
        .header(http::header::CONTENT_TYPE, "application/x-ndjson")
        .body(StreamBody::new(frames).boxed())
        .expect("static response parts are valid")
}

async fn dispatch(app: &Arc<App>, verb: &str, args: Value, input: &RouteInput) -> Response<Body> {
    match app.svc.call_tool(verb, args, input).await {
        Ok(out) => json_response(200, &out.value),
        Err(e) => error_response(&e),
    }
}

/// A REST read's answer.
fn answer<T: Serialize>(r: crate::error::Result<T>) -> Response<Body> {
    match r {
        Ok(v) => json_response(200, &v),
        Err(e) => error_response(&e),
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
