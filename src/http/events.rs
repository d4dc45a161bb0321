//! `GET /api/events`: the owner's event bus as server-sent events, for the Hall. Each
//! event is `id: <seq>`, `event: act|mail`, `data: <json>`; a comment line every 15 s
//! keeps the connection alive; a listener that lagged gets `event: lagged` and resyncs.
//! The stream ends when the owner shuts down.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http::Response;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::Body;
use crate::events::Events;

pub fn stream(events: &Events, cancel: CancellationToken) -> Response<Body> {
    let rx = events.subscribe();
    let ping = tokio::time::interval(Duration::from_secs(15));
    let frames = futures::stream::unfold(
        (rx, ping, cancel, true),
        |(mut rx, mut ping, cancel, first)| async move {
            if first {
                let hello = Bytes::from_static(b": medulla events\nretry: 3000\n\n");
                return Some((
                    Ok::<_, Infallible>(Frame::data(hello)),
                    (rx, ping, cancel, false),
                ));
            }
            let chunk = tokio::select! {
                _ = cancel.cancelled() => return None,
                _ = ping.tick() => Bytes::from_static(b": ping\n\n"),
                ev = rx.recv() => match ev {
                    Ok(e) => {
                        let data = serde_json::to_string(&e).unwrap_or_default();
                        let kind = serde_json::to_value(e.kind).ok().and_then(|k| k.as_str().map(str::to_string)).unwrap_or_default();
                        Bytes::from(format!("id: {}\nevent: {kind}\ndata: {data}\n\n", e.seq))
                    }
                    Err(RecvError::Lagged(n)) => Bytes::from(format!("event: lagged\ndata: {{\"missed\": {n}}}\n\n")),
                    Err(RecvError::Closed) => return None,
                },
            };
            Some((Ok(Frame::data(chunk)), (rx, ping, cancel, false)))
        },
    );
    Response::builder()
        .status(200)
        .header(http::header::CONTENT_TYPE, "text/event-stream")
        .header(http::header::CACHE_CONTROL, "no-cache")
        .body(StreamBody::new(frames).boxed())
        .expect("static response parts are valid")
}
