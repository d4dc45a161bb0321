//! The REST surface: `POST /api/call/<verb>` and every route the registry lists for a
//! verb (derived, never listed twice), plus the reads that are not verbs (health, a
//! store's claims, a box, doctor, a distribution pass now).

use std::sync::Arc;

use http::{Method, Request, Response};
use hyper::body::Incoming;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hall_auth::HallAuth;
use super::status::HttpError;
use super::{error_response, headers, http_error, json_response, read_json, App, Body};
use crate::service::registry::{specs, Arguments, Spec};
use crate::service::RouteInput;

/// The query parameters of the REST reads that are not verbs (a verb's `GET` route
/// deserializes its query into the verb's own arguments instead).
#[derive(Debug, Default, Deserialize)]
struct ReadQuery {
    brain: Option<String>,
    offset: Option<usize>,
    limit: Option<usize>,
    /// The Hall session, for `EventSource`, which cannot send headers.
    session: Option<String>,
    /// `GET /api/doctor?deep=true`: also the integrity check of every store.
    deep: Option<bool>,
}

impl ReadQuery {
    fn of(query: &str) -> Result<ReadQuery, HttpError> {
        serde_urlencoded::from_str(query).map_err(|e| {
            HttpError::BadQuery(format!(
                "{e}: offset and limit are whole numbers (docs/PROTOCOL.md)"
            ))
        })
    }
}

/// `POST /api/shutdown`'s answer (read back by `medulla stop`).
#[derive(Debug, Serialize, Deserialize)]
pub struct Stopping {
    pub stopping: bool,
    pub pid: u32,
    /// The home it serves: its owner lock is free once the owner is gone.
    #[serde(default)]
    pub home: String,
}

/// `POST /api/hall/ticket`'s answer (read back by `medulla hall`).
#[derive(Debug, Serialize, Deserialize)]
pub struct HallTicket {
    /// The Hall's URL with the ticket in its fragment.
    pub url: String,
    pub ticket: String,
    pub expires_in_secs: u64,
}

/// Answer a REST request under `/api/`.
pub async fn route(app: &Arc<App>, req: Request<Incoming>) -> Response<Body> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let read_query = || ReadQuery::of(&query);
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
                &Stopping {
                    stopping: true,
                    pid: std::process::id(),
                    home: app.svc.owner.config.home.to_string_lossy().into_owned(),
                },
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
                &HallTicket {
                    url: format!("http://{host}/#ticket={ticket}"),
                    ticket,
                    expires_in_secs: HallAuth::ticket_ttl_secs(),
                },
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
            let q = match read_query() {
                Ok(q) => q,
                Err(e) => return http_error(&e),
            };
            // EventSource cannot send headers: the Hall session may come as `?session=`.
            let session_ok = input.founder || q.session.is_some_and(|s| app.hall.valid(&s));
            if !session_ok {
                return error_response(&crate::error::OwnerError::FounderOnly {
                    what: "the event stream".into(),
                });
            }
            super::events::stream(&svc.owner.registry.events, app.cancel.child_token())
        }
        (Method::GET, "/api/claims") => match read_query() {
            Err(e) => http_error(&e),
            Ok(ReadQuery { brain: None, .. }) => http_error(&HttpError::MissingParam(
                "pass ?brain=<root, fingerprint or medulla>".into(),
            )),
            Ok(ReadQuery {
                brain: Some(b),
                offset,
                limit,
                ..
            }) => answer(svc.claims(&b, offset.unwrap_or(0), limit, &input).await),
        },
        (Method::GET, "/api/mailbox") => {
            let q = match read_query() {
                Ok(q) => q,
                Err(e) => return http_error(&e),
            };
            // Without `brain`, the box of the brain this request is routed to.
            let brain = match q.brain {
                Some(b) => Some(b),
                None => svc
                    .route(&input)
                    .await
                    .ok()
                    .and_then(|r| r.brain)
                    .map(|m| m.root),
            };
            match brain {
                None => http_error(&HttpError::MissingParam(
                    "no brain covers this caller: pass ?brain=<root, fingerprint or medulla>"
                        .into(),
                )),
                Some(b) => answer(crate::service::mailbox::show_box(svc, &b, &input).await),
            }
        }
        (Method::POST, "/api/hint") => {
            let body = match read_json(req, app.max_body, app.body_timeout).await {
                Ok(v) => v,
                Err(resp) => return resp,
            };
            match serde_json::from_value::<crate::service::hints::HintRequest>(body) {
                Ok(h) => answer(svc.hint(h, &input).await),
                Err(e) => error_response(&crate::error::OwnerError::BadInput(format!(
                    "{e}: send {{\"session\": \"<client>:<session id>\", \"event\": \"prompt\" | \"file\", \"prompt\"?: TEXT, \"paths\"?: [ABSOLUTE PATH]}}"
                ))),
            }
        }
        (Method::POST, "/api/hint/shown") => {
            let body = match read_json(req, app.max_body, app.body_timeout).await {
                Ok(v) => v,
                Err(resp) => return resp,
            };
            match serde_json::from_value::<crate::service::hints::Shown>(body) {
                Ok(s) => answer(Ok::<_, crate::error::OwnerError>(
                    svc.hints_shown(s, &input).await,
                )),
                Err(e) => error_response(&crate::error::OwnerError::BadInput(format!(
                    "{e}: send {{\"session\": \"<client>:<session id>\", \"versions\": [\"project:<slug>@<created>\"]}}"
                ))),
            }
        }
        (Method::GET, "/api/hint/session") => {
            #[derive(serde::Deserialize)]
            struct Q {
                session: String,
            }
            match serde_urlencoded::from_str::<Q>(&query) {
                Ok(q) => json_response(200, &svc.hints_not_cited(&q.session)),
                Err(e) => error_response(&crate::error::OwnerError::BadInput(format!(
                    "{e}: pass ?session=<client>:<session id>"
                ))),
            }
        }
        (Method::POST, "/api/hint/cited") => {
            let body = match read_json(req, app.max_body, app.body_timeout).await {
                Ok(v) => v,
                Err(resp) => return resp,
            };
            match serde_json::from_value::<crate::service::hints::Cited>(body) {
                Ok(c) => json_response(200, &svc.hints_cited(c)),
                Err(e) => error_response(&crate::error::OwnerError::BadInput(format!(
                    "{e}: send {{\"session\": \"<client>:<session id>\", \"slugs\": [SLUG]}}"
                ))),
            }
        }
        (Method::GET, "/api/route") => match svc.route(&input).await {
            Ok(r) => answer(Ok::<_, crate::error::OwnerError>(
                crate::service::route_view::RouteView::of_served(r, svc).await,
            )),
            Err(e) => answer(Err::<crate::service::route_view::RouteView, _>(e)),
        },
        (Method::POST, "/api/mailbox/distribute") => answer(svc.owner.distribute().await),
        (Method::GET, "/api/model") => answer(svc.model_status().await),
        (Method::POST, "/api/model") => {
            if !input.founder {
                return error_response(&crate::error::OwnerError::FounderOnly {
                    what: "changing the embedding model".into(),
                });
            }
            let body = match read_json(req, app.max_body, app.body_timeout).await {
                Ok(v) => v,
                Err(resp) => return resp,
            };
            match serde_json::from_value::<crate::service::model::UseModel>(body) {
                Ok(u) => answer(svc.use_model(u).await),
                Err(e) => error_response(&crate::error::OwnerError::BadInput(format!(
                    "{e}: send {{\"model\": \"static\" | DIR | NAME, \"pooling\": \"mean\" | \"cls\"}}"
                ))),
            }
        }
        (Method::GET, "/api/doctor") => match read_query() {
            Ok(q) => answer(crate::service::mailbox::doctor(svc, q.deep.unwrap_or(false)).await),
            Err(e) => http_error(&e),
        },
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
                // A verb may take one argument as the whole body (`POST /api/reports`).
                let args = match spec.body_is {
                    Some(field) => serde_json::json!({ field: args }),
                    None => args,
                };
                dispatch(app, spec.name, Arguments::Json(args), &input).await
            }
            Some((spec, false)) => dispatch(app, spec.name, Arguments::Query(query), &input).await,
            None => http_error(&HttpError::NotFound(format!(
                "no route {m} {p}: MCP lives at POST /mcp, REST under /api/ (docs/PROTOCOL.md)"
            ))),
        },
    }
}

/// The verb a REST alias names, and whether it takes a body (POST) or a query (GET).
fn alias(m: &Method, path: &str) -> Option<(&'static Spec, bool)> {
    let want = format!("{m} {path}");
    specs()
        .iter()
        .find(|s| s.also.contains(&want.as_str()))
        .map(|s| (s, *m == Method::POST))
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
    dispatch(app, verb, Arguments::Json(args), &input).await
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

async fn dispatch(
    app: &Arc<App>,
    verb: &str,
    args: Arguments,
    input: &RouteInput,
) -> Response<Body> {
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
