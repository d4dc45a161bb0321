//! One HTTP/1.1 request to the owner on a socket of its own: no runtime, no pool, for the
//! callers that must answer in milliseconds or not at all (the health check, the hooks).

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

/// The time left until `until`, or `None` once it has passed.
fn left(until: Instant) -> Option<Duration> {
    until
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
}

/// Send `method path` (with `headers` and a JSON `body`) to the owner at `url`, all of it
/// (connecting, writing, reading every byte of the answer) done by `until`, presenting
/// the home's client token: the status and the JSON answer, or `None` when nothing
/// answered in time. A stalled owner accepts the connection (the kernel does) and never
/// answers: the caller is back at `until` all the same.
pub fn request(
    home: &Path,
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    until: Instant,
) -> Option<(u16, serde_json::Value)> {
    let addr: SocketAddr = url
        .strip_prefix("http://")?
        .trim_end_matches('/')
        .parse()
        .ok()?;
    let mut s = std::net::TcpStream::connect_timeout(&addr, left(until)?).ok()?;
    s.set_write_timeout(Some(left(until)?)).ok()?;
    s.set_nodelay(true).ok()?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(t) = crate::client_token::read(home) {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    for (k, v) in headers {
        // A value with a line break would end the head early: never sent.
        if v.contains(['\r', '\n']) {
            return None;
        }
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body.unwrap_or_default());
    s.write_all(&out).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        s.set_read_timeout(Some(left(until)?)).ok()?;
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    let text = String::from_utf8_lossy(&buf);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status: u16 = head.split_whitespace().nth(1)?.parse().ok()?;
    let v = serde_json::from_str(body.trim()).ok()?;
    Some((status, v))
}
