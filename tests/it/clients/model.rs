//! The only stand-in of the real-client tests: a scripted model on loopback. A small
//! HTTP/1.1 server on `127.0.0.1:0` that logs every request a client sends its model
//! (path, headers, JSON body) and answers each with what the test's script says,
//! in the wire format of the client's API (the adapters beside this file). The script
//! reads the conversation it is sent, never a request counter, so the side requests a
//! client makes (titles, checks) are answered without throwing the agent's turn off.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// One request a client sent its model (its method is always POST but for a probe).
#[derive(Debug, Clone)]
pub struct Request {
    /// The path with its query string.
    pub path: String,
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
    /// The JSON body (`Null` when there is none or it is not JSON).
    pub body: Value,
}

/// What the model answers.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(v: &Value) -> Reply {
        Reply {
            status: 200,
            content_type: "application/json",
            body: v.to_string().into_bytes(),
        }
    }

    /// Server-sent events, each `(event name or "", data)`.
    pub fn sse(events: &[(&str, Value)]) -> Reply {
        let mut body = String::new();
        for (name, data) in events {
            if !name.is_empty() {
                body.push_str(&format!("event: {name}\n"));
            }
            body.push_str(&format!("data: {data}\n\n"));
        }
        Reply {
            status: 200,
            content_type: "text/event-stream",
            body: body.into_bytes(),
        }
    }

    pub fn sse_with_done(events: &[(&str, Value)]) -> Reply {
        let mut r = Reply::sse(events);
        r.body.extend_from_slice(b"data: [DONE]\n\n");
        r
    }
}

type Script = dyn Fn(&Request) -> Reply + Send + Sync;

/// The model server; stops accepting when dropped.
pub struct Model {
    pub url: String,
    log: Arc<Mutex<Vec<Request>>>,
    _listener: Arc<TcpListener>,
}

impl Model {
    pub fn start(script: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Model {
        let listener = Arc::new(TcpListener::bind("127.0.0.1:0").expect("bind the model"));
        let url = format!("http://{}", listener.local_addr().unwrap());
        let log: Arc<Mutex<Vec<Request>>> = Arc::default();
        let script: Arc<Script> = Arc::new(script);
        let (l, lg) = (listener.clone(), log.clone());
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(conn) = conn else { break };
                let (lg, script) = (lg.clone(), script.clone());
                std::thread::spawn(move || serve(conn, &lg, &*script));
            }
        });
        Model {
            url,
            log,
            _listener: listener,
        }
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }
}

/// Requests on one connection, one after another, until the client closes it.
fn serve(conn: TcpStream, log: &Mutex<Vec<Request>>, script: &Script) {
    let mut out = conn.try_clone().expect("clone the connection");
    let mut r = BufReader::new(conn);
    loop {
        let Some(req) = read_request(&mut r) else {
            return;
        };
        log.lock().unwrap().push(req.clone());
        let reply = script(&req);
        let head = format!(
            "HTTP/1.1 {} OK\r\ncontent-type: {}\r\ncontent-length: {}\r\ncache-control: no-cache\r\n\r\n",
            reply.status,
            reply.content_type,
            reply.body.len()
        );
        if out.write_all(head.as_bytes()).is_err() || out.write_all(&reply.body).is_err() {
            return;
        }
        let _ = out.flush();
    }
}

fn read_request(r: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace().skip(1);
    let path = parts.next()?.to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let mut body = Vec::new();
    if headers
        .get("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = headers.get("content-length").and_then(|n| n.parse().ok()) {
        body = vec![0; n];
        r.read_exact(&mut body).ok()?;
    }
    Some(Request {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}
