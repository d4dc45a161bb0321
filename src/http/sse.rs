//! Server-sent events as MCP clients read them, and the priming event only for the clients
//! whose protocol defines it.
//!
//! The streamable HTTP transport of MCP 2025-11-25 (SEP-1699) lets a server open a
//! response stream with a *priming* event: an event id and an empty `data:` field, so
//! that a client may resume the stream after a drop. rmcp sends it on every stream
//! whatever the session negotiated. Clients of earlier protocol versions parse every
//! event's data as a JSON-RPC message: the TypeScript SDK those clients bundle (Gemini
//! CLI 0.61 among them) fails on the empty data (`Unexpected end of JSON input`) and
//! drops the connection, so its model is offered none of medulla's tools. So a stream
//! answered to such a client leaves the priming event out; nothing else changes.

use std::convert::Infallible;

use bytes::Bytes;
use futures::StreamExt as _;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;

use super::Body;

/// The first MCP protocol version that defines the priming event.
pub const PRIMING_SINCE: &str = "2025-11-25";

/// Whether a client speaking `version` (the `MCP-Protocol-Version` it sends, or the one
/// its `initialize` asks for) reads a priming event. A client that names no version
/// speaks 2025-03-26 (the header came with 2025-06-18). Versions are dates, so they
/// compare as strings.
pub fn reads_priming(version: Option<&str>) -> bool {
    version.is_some_and(|v| v >= PRIMING_SINCE)
}

/// One event of a stream, as the WHATWG parsing model reads its fields.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Event {
    pub id: Option<String>,
    pub event: Option<String>,
    /// The `data:` lines joined by newlines; `None` when the event has no `data:` field
    /// (a comment or a bare `retry:`, which no client dispatches).
    pub data: Option<String>,
    pub retry: Option<u64>,
}

impl Event {
    /// A priming event: dispatched by a client (it has a `data:` field) with nothing in
    /// it.
    pub fn is_priming(&self) -> bool {
        self.data.as_deref() == Some("")
    }
}

/// The events of a stream's text, each ended by a blank line; an unfinished last event
/// is left out (as a client leaves it until its blank line arrives). Lines end with
/// `\n`, `\r\n` or `\r`; a field's value loses one leading space; `:` lines are
/// comments.
pub fn events(text: &str) -> Vec<Event> {
    let mut out = Vec::new();
    let mut cur = Event::default();
    let mut open = false;
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        if lines.peek().is_none() {
            // The text after the last line end: not a line yet.
            break;
        }
        if line.is_empty() {
            if open {
                out.push(std::mem::take(&mut cur));
                open = false;
            }
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        open = true;
        match field {
            "id" => cur.id = Some(value.to_string()),
            "event" => cur.event = Some(value.to_string()),
            "retry" => cur.retry = value.parse().ok(),
            "data" => match &mut cur.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => cur.data = Some(value.to_string()),
            },
            _ => {}
        }
    }
    out
}

/// `body` (an event stream) without its priming events. The stream is cut at event
/// boundaries (the SDK writes one event a frame, so nothing waits for more bytes); every
/// other byte passes as it came, keep-alive comments included.
pub fn without_priming(body: Body) -> Body {
    let mut pending = String::new();
    let frames = body
        .into_data_stream()
        .map(move |chunk: Result<Bytes, Infallible>| {
            let Ok(chunk) = chunk;
            pending.push_str(&String::from_utf8_lossy(&chunk));
            let mut kept = String::new();
            while let Some(end) = block_end(&pending) {
                let block: String = pending.drain(..end).collect();
                if !events(&block).iter().any(Event::is_priming) {
                    kept.push_str(&block);
                }
            }
            Ok::<_, Infallible>(Frame::data(Bytes::from(kept)))
        })
        .filter(|f| {
            let empty = f
                .as_ref()
                .ok()
                .and_then(|f| f.data_ref())
                .is_some_and(|d| d.is_empty());
            std::future::ready(!empty)
        });
    BodyExt::boxed(StreamBody::new(frames))
}

/// Where the first whole event of `s` ends (just after its blank line), if one is whole.
fn block_end(s: &str) -> Option<usize> {
    ["\n\n", "\r\n\r\n", "\r\r"]
        .iter()
        .filter_map(|sep| s.find(sep).map(|i| i + sep.len()))
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::Full;

    #[test]
    fn the_priming_event_is_the_one_with_empty_data() {
        let text = "id: 0\nretry: 3000\ndata:\n\nevent: message\ndata: {\"id\":1}\n\n: ping\n\nretry: 5\n\ndata: half";
        let ev = events(text);
        assert_eq!(ev.len(), 3, "{ev:?}");
        assert!(ev[0].is_priming());
        assert_eq!(ev[0].id.as_deref(), Some("0"));
        assert_eq!(ev[0].retry, Some(3000));
        assert_eq!(ev[1].data.as_deref(), Some("{\"id\":1}"));
        assert!(!ev[1].is_priming());
        assert_eq!(ev[2].data, None, "a bare retry is never dispatched");
        let multi = events("data: a\r\ndata: b\r\n\r\n");
        assert_eq!(multi[0].data.as_deref(), Some("a\nb"));
    }

    #[test]
    fn only_clients_from_2025_11_25_read_priming() {
        assert!(!reads_priming(None));
        assert!(!reads_priming(Some("2025-03-26")));
        assert!(!reads_priming(Some("2025-06-18")));
        assert!(reads_priming(Some("2025-11-25")));
        assert!(reads_priming(Some("2026-07-28")));
    }

    #[tokio::test]
    async fn a_stream_without_priming_keeps_every_other_byte() {
        let text = "id: 0\nretry: 3000\ndata: \n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n:\n\n";
        let body = Full::new(Bytes::from(text)).boxed();
        let out = without_priming(body).collect().await.unwrap().to_bytes();
        assert_eq!(
            String::from_utf8_lossy(&out),
            "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n:\n\n"
        );
    }
}
