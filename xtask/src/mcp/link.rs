//! The HTTP/1.1 links under a session: one written by hand over a kept-alive TCP
//! stream, and one on `reqwest` as the SDKs' HTTP stacks behave.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use anyhow::{bail, Context, Result};

use super::CALL_TIMEOUT;

/// One HTTP answer, its body read to the end (so the connection can carry the next request).
#[derive(Debug)]
pub struct HttpAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpAnswer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Something that sends one HTTP request and reads its whole answer.
pub trait HttpLink {
    fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<HttpAnswer>;
}

/// HTTP/1.1 by hand over one `std::net::TcpStream`, kept alive, TCP_NODELAY left unset:
/// each request goes out in one write, so any stall seen is the server's.
pub struct RawLink {
    addr: String,
    conn: Option<BufReader<TcpStream>>,
    /// How many TCP connections this link has opened (1 when keep-alive held).
    pub connects: usize,
}

impl RawLink {
    /// `base` is `http://host:port`.
    pub fn new(base: &str) -> Result<Self> {
        let addr = base
            .strip_prefix("http://")
            .context("an http:// url")?
            .trim_end_matches('/')
            .to_string();
        Ok(RawLink {
            addr,
            conn: None,
            connects: 0,
        })
    }

    fn stream(&mut self) -> Result<&mut BufReader<TcpStream>> {
        if self.conn.is_none() {
            let s = TcpStream::connect(&self.addr)
                .with_context(|| format!("cannot connect to {}", self.addr))?;
            s.set_read_timeout(Some(CALL_TIMEOUT))?;
            s.set_write_timeout(Some(CALL_TIMEOUT))?;
            self.connects += 1;
            self.conn = Some(BufReader::with_capacity(64 * 1024, s));
        }
        Ok(self.conn.as_mut().expect("connected"))
    }
}

fn read_line(r: &mut impl BufRead) -> Result<String> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        bail!("connection closed by the server");
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

fn read_answer(r: &mut BufReader<TcpStream>) -> Result<(HttpAnswer, bool)> {
    let status_line = read_line(r)?;
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .with_context(|| format!("bad status line {status_line:?}"))?;
    let mut headers = Vec::new();
    loop {
        let line = read_line(r)?;
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    let mut reusable = get("connection").is_none_or(|c| !c.eq_ignore_ascii_case("close"));
    if get("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        loop {
            let size_line = read_line(r)?;
            let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                .with_context(|| format!("bad chunk size {size_line:?}"))?;
            if size == 0 {
                // Trailers, then the blank line that ends the body.
                while !read_line(r)?.is_empty() {}
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            r.read_exact(&mut body[start..])?;
            read_line(r)?;
        }
    } else if let Some(n) = get("content-length") {
        let n: usize = n.parse().context("bad content-length")?;
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    } else if status != 204 && status != 304 {
        r.read_to_end(&mut body)?;
        reusable = false;
    }
    Ok((
        HttpAnswer {
            status,
            headers,
            body,
        },
        reusable,
    ))
}

impl HttpLink for RawLink {
    fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<HttpAnswer> {
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nhost: {}\r\ncontent-length: {}\r\n",
            self.addr,
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        let mut bytes = req.into_bytes();
        bytes.extend_from_slice(body);
        let r = self.stream()?;
        let sent = r.get_mut().write_all(&bytes);
        let answer = sent
            .map_err(anyhow::Error::from)
            .and_then(|_| read_answer(r));
        match answer {
            Ok((a, reusable)) => {
                if !reusable {
                    self.conn = None;
                }
                Ok(a)
            }
            Err(e) => {
                // The connection's state is unknown after a failure: never reuse it.
                self.conn = None;
                Err(e)
            }
        }
    }
}

/// A `reqwest` client holding one kept-alive connection, as the SDKs' HTTP stacks do
/// (reqwest, like undici and httpx, sets TCP_NODELAY on its sockets).
pub struct ReqwestLink {
    base: String,
    http: reqwest::blocking::Client,
}

impl ReqwestLink {
    pub fn new(base: &str) -> Result<Self> {
        Self::with_idle(base, 1)
    }

    /// A client that keeps no idle connection: a new TCP connection for every request.
    /// Not how SDKs behave; it shows what a call costs without any kept-alive stall.
    pub fn fresh(base: &str) -> Result<Self> {
        Self::with_idle(base, 0)
    }

    fn with_idle(base: &str, idle: usize) -> Result<Self> {
        let http = reqwest::blocking::Client::builder()
            .timeout(CALL_TIMEOUT)
            .pool_max_idle_per_host(idle)
            .build()?;
        Ok(ReqwestLink {
            base: base.trim_end_matches('/').to_string(),
            http,
        })
    }
}

impl HttpLink for ReqwestLink {
    fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<HttpAnswer> {
        let mut req = self.http.request(
            reqwest::Method::from_bytes(method.as_bytes())?,
            format!("{}{path}", self.base),
        );
        for (k, v) in headers {
            req = req.header(k, v);
        }
        let resp = req.body(body.to_vec()).send()?;
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        let body = resp.bytes()?.to_vec();
        Ok(HttpAnswer {
            status,
            headers,
            body,
        })
    }
}
