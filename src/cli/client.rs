//! The HTTP client of the running owner: where it is (and starting it when none answers,
//! SPEC §2), the headers that make the command line the founder surface, plain JSON
//! answers and NDJSON progress streams.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{anyhow, Context};
use serde_json::{json, Value};

use crate::config::default_home;
use crate::http::headers;
use crate::launch::{self, note_version, LaunchError};
use crate::service::progress::Tick;

/// No owner answers, and none was started: the command line says why and exits 2.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct OwnerNotRunning {
    pub url: String,
    /// `owner_not_running`, or `owner_did_not_start` when one was started and failed.
    pub code: &'static str,
    pub message: String,
}

impl OwnerNotRunning {
    /// Nothing answers at `url`, and this command does not start an owner.
    fn at(url: &str) -> OwnerNotRunning {
        OwnerNotRunning {
            url: url.to_string(),
            code: "owner_not_running",
            message: format!(
                "no medulla owner is running at {url}: start one with `medulla serve` (or any command that needs it, unless autostart is off)"
            ),
        }
    }

    fn from_launch(url: &str, e: &LaunchError) -> OwnerNotRunning {
        OwnerNotRunning {
            url: url.to_string(),
            code: e.code(),
            message: e.to_string(),
        }
    }

    /// The error object `--json` prints on stdout.
    pub fn to_json(&self) -> Value {
        json!({ "error": { "code": self.code, "message": self.message, "url": self.url } })
    }
}

/// The owner's answer: its HTTP status and its JSON body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Answer {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status) && self.body.get("error").is_none()
    }
}

/// One `{"progress": {...}}` line of a long verb.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    pub done: u64,
    pub total: u64,
    pub what: &'a str,
}

/// An answer read back as the type the owner serialized it from (read in place: an
/// answer can be large).
pub fn read<T: serde::de::DeserializeOwned>(body: &Value, what: &str) -> anyhow::Result<T> {
    T::deserialize(body).with_context(|| {
        format!(
            "the owner's answer to {what} is not the shape this command line reads: run a \
             command line and an owner of the same version (`medulla --version`, `medulla status`)"
        )
    })
}

/// The owner's URL: `--url`/`MEDULLA_URL`, else `$MEDULLA_HOME/owner.json`, else
/// `config.toml`'s `listen`, else the default listen address.
pub fn owner_url(explicit: Option<&str>) -> String {
    launch::locate(&default_home(), explicit).url
}

/// A blocking client: each call runs on a private current-thread runtime. When nothing
/// answers, a client that may start an owner does (SPEC §2) and sends the call again;
/// when the owner answers, that costs nothing: the check is the call's own connection.
pub struct Client {
    base: Mutex<String>,
    home: PathBuf,
    explicit: Option<String>,
    autostart: bool,
    http: reqwest::Client,
    rt: tokio::runtime::Runtime,
}

impl Client {
    /// A client that starts an owner when none answers.
    pub fn new(url: Option<&str>) -> anyhow::Result<Client> {
        Self::build(url, true)
    }

    /// A client that only asks (`status`, `stop`): it never starts an owner.
    pub fn without_autostart(url: Option<&str>) -> anyhow::Result<Client> {
        Self::build(url, false)
    }

    fn build(url: Option<&str>, autostart: bool) -> anyhow::Result<Client> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        // A read timeout, not a total one: a long import keeps streaming progress.
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .read_timeout(Duration::from_secs(120))
            .build()?;
        let home = default_home();
        let explicit = url.map(str::to_string);
        Ok(Client {
            base: Mutex::new(launch::locate(&home, explicit.as_deref()).url),
            home,
            explicit,
            autostart,
            http,
            rt,
        })
    }

    /// The owner's URL (the one found, or the one started).
    pub fn base(&self) -> String {
        self.base.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn owner_gone(&self) -> anyhow::Error {
        OwnerNotRunning::at(&self.base()).into()
    }

    /// Nothing answered at the base URL: start an owner when this client may (or say
    /// why not), and return where it answers.
    fn start_owner(&self) -> Result<String, OwnerNotRunning> {
        let url = self.base();
        if !self.autostart {
            return Err(OwnerNotRunning::at(&url));
        }
        match launch::ensure(&self.home, self.explicit.as_deref()) {
            Ok(u) => {
                *self.base.lock().unwrap_or_else(|p| p.into_inner()) = u.clone();
                Ok(u)
            }
            Err(e) => Err(OwnerNotRunning::from_launch(&url, &e)),
        }
    }

    /// Send the request `make` builds for a base URL; when nothing answers, start the
    /// owner (when allowed) and send it once more.
    async fn dispatch(
        &self,
        make: impl Fn(&str) -> reqwest::RequestBuilder,
    ) -> anyhow::Result<reqwest::Response> {
        let first = make(&self.base()).send().await;
        let resp = match first {
            Ok(r) => r,
            Err(e) if e.is_connect() => {
                let url = self.start_owner()?;
                make(&url).send().await.map_err(|e| self.connect_error(e))?
            }
            Err(e) => return Err(self.connect_error(e)),
        };
        note_version(
            resp.headers()
                .get(headers::VERSION)
                .and_then(|v| v.to_str().ok()),
        );
        Ok(resp)
    }

    fn request(&self, base: &str, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let mut req = self.http.request(method, format!("{base}{path}"));
        // The caller root is the working directory; a directory that vanished under the
        // shell sends none rather than failing a command that does not need it.
        if let Ok(cwd) = std::env::current_dir() {
            req = req.header(headers::CALLER_ROOT, cwd.to_string_lossy().as_ref());
        }
        // The command line is the founder's surface: it presents the owner's token.
        if let Some(t) = crate::founder::read(&default_home()) {
            req = req.header(headers::FOUNDER, t);
        }
        // Proof of the owner's user where the kernel cannot say (SPEC §15).
        if let Some(b) = crate::client_token::bearer() {
            req = req.header(reqwest::header::AUTHORIZATION, b);
        }
        if let Ok(b) = std::env::var("MEDULLA_BRAIN") {
            if !b.is_empty() {
                req = req.header(headers::BRAIN, b);
            }
        }
        req
    }

    fn connect_error(&self, e: reqwest::Error) -> anyhow::Error {
        if e.is_connect() {
            self.owner_gone()
        } else {
            anyhow!("request to {} failed: {e}", self.base())
        }
    }

    fn send(&self, make: impl Fn(&str) -> reqwest::RequestBuilder) -> anyhow::Result<Answer> {
        self.rt.block_on(async {
            let resp = self.dispatch(make).await?;
            let status = resp.status().as_u16();
            let body: Value = resp
                .json()
                .await
                .context("the owner's answer was not JSON")?;
            Ok(Answer { status, body })
        })
    }

    pub fn get(&self, path: &str) -> anyhow::Result<Answer> {
        self.send(|base| self.request(base, reqwest::Method::GET, path))
    }

    /// `POST path` with a JSON body (none when `body` is null).
    pub fn post(&self, path: &str, body: Value) -> anyhow::Result<Answer> {
        self.send(|base| {
            let req = self.request(base, reqwest::Method::POST, path);
            if body.is_null() {
                req
            } else {
                req.json(&body)
            }
        })
    }

    /// `POST /api/call/<verb>`; null arguments are dropped so optional ones stay absent.
    pub fn call(&self, verb: &str, args: Value) -> anyhow::Result<Answer> {
        self.post(&format!("/api/call/{verb}"), without_nulls(args))
    }

    /// A long verb with `Accept: application/x-ndjson`: `on_progress` sees each progress
    /// line; the answer is the final `result` (or `error`) line.
    pub fn call_streaming(
        &self,
        verb: &str,
        args: Value,
        mut on_progress: impl FnMut(Progress<'_>),
    ) -> anyhow::Result<Answer> {
        let args = without_nulls(args);
        let path = format!("/api/call/{verb}");
        let make = |base: &str| {
            self.request(base, reqwest::Method::POST, &path)
                .header("Accept", "application/x-ndjson")
                .json(&args)
        };
        self.rt.block_on(async {
            let mut resp = self.dispatch(make).await?;
            let status = resp.status().as_u16();
            let streaming = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|c| c.to_str().ok())
                .is_some_and(|c| c.starts_with("application/x-ndjson"));
            if !streaming {
                // Refused before any work started: an ordinary JSON answer.
                let body: Value = resp
                    .json()
                    .await
                    .context("the owner's answer was not JSON")?;
                return Ok(Answer { status, body });
            }
            let mut lines = Lines::default();
            loop {
                let chunk = resp
                    .chunk()
                    .await
                    .with_context(|| format!("the stream from {} broke off", self.base()))?;
                let Some(chunk) = chunk else {
                    if let Some(answer) = stream_line(&lines.rest(), status, &mut on_progress)? {
                        return Ok(answer);
                    }
                    anyhow::bail!("the owner's stream ended without a result line");
                };
                for line in lines.push(&chunk) {
                    if let Some(answer) = stream_line(&line, status, &mut on_progress)? {
                        return Ok(answer);
                    }
                }
            }
        })
    }
}

/// The lines of a stream that arrives in chunks, each byte searched for a newline once.
/// A line can be long and come in thousands of chunks (the answer to an import of a
/// million files that were all there already: a million refusals, one line of ~150 MB);
/// searching the whole line again at each chunk made reading it quadratic.
#[derive(Default)]
struct Lines {
    /// What came after the last newline.
    buf: Vec<u8>,
    /// Bytes searched for a newline, in all (each once).
    searched: u64,
}

impl Lines {
    /// Take a chunk in: the lines it ends, in order, without their newlines.
    fn push(&mut self, chunk: &[u8]) -> Vec<Vec<u8>> {
        let mut lines = Vec::new();
        let mut rest = chunk;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            self.searched += i as u64 + 1;
            let mut line = std::mem::take(&mut self.buf);
            line.extend_from_slice(&rest[..i]);
            lines.push(line);
            rest = &rest[i + 1..];
        }
        self.searched += rest.len() as u64;
        self.buf.extend_from_slice(rest);
        lines
    }

    /// What the stream ended with after its last newline.
    fn rest(self) -> Vec<u8> {
        self.buf
    }
}

/// One NDJSON line: progress goes to the callback; a result or error ends the stream.
fn stream_line(
    line: &[u8],
    status: u16,
    on_progress: &mut impl FnMut(Progress<'_>),
) -> anyhow::Result<Option<Answer>> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let v: Value = serde_json::from_str(text)
        .with_context(|| format!("the owner streamed a line that is not JSON: {text:.80}"))?;
    if let Some(p) = v.get("progress") {
        let t: Tick = serde_json::from_value(p.clone()).with_context(|| {
            format!("the owner streamed a progress line this command line cannot read: {text:.80}")
        })?;
        on_progress(Progress {
            done: t.done,
            total: t.total.unwrap_or(0),
            what: &t.what,
        });
        return Ok(None);
    }
    if let Value::Object(mut m) = v {
        // Taken, not copied: an answer can be large.
        if let Some(body) = m.remove("result") {
            return Ok(Some(Answer { status, body }));
        }
        if m.contains_key("error") {
            // The HTTP status was sent before the work failed: the error line is the truth.
            return Ok(Some(Answer {
                status: 500.max(status),
                body: Value::Object(m),
            }));
        }
    }
    Ok(None)
}

fn without_nulls(args: Value) -> Value {
    match args {
        Value::Object(m) => Value::Object(m.into_iter().filter(|(_, v)| !v.is_null()).collect()),
        v => v,
    }
}

/// What a query value keeps unescaped: letters, digits, `-_.~` and `/` (paths read well).
const QUERY_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');

/// Percent-encode a query value.
pub fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, QUERY_VALUE).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_owner_names_the_command_that_starts_one() {
        // Port 9 on loopback: nothing listens there in a test sandbox.
        let client = Client::without_autostart(Some("http://127.0.0.1:9")).unwrap();
        let err = client.get("/api/health").unwrap_err();
        assert!(err.downcast_ref::<OwnerNotRunning>().is_some(), "{err}");
        assert!(err.to_string().contains("medulla serve"), "{err}");
    }

    #[test]
    fn a_stream_ends_at_its_result_line_after_progress() {
        let mut seen = Vec::new();
        let mut cb = |p: Progress<'_>| seen.push((p.done, p.total, p.what.to_string()));
        let p = br#"{"progress": {"done": 1, "total": 3, "what": "files"}}"#;
        assert!(stream_line(p, 200, &mut cb).unwrap().is_none());
        let r = stream_line(br#"{"result": {"files_seen": 3}}"#, 200, &mut cb)
            .unwrap()
            .unwrap();
        assert!(r.ok());
        assert_eq!(r.body["files_seen"], 3);
        let e = stream_line(br#"{"error": {"code": "io"}}"#, 200, &mut cb)
            .unwrap()
            .unwrap();
        assert!(!e.ok());
        assert_eq!(seen, vec![(1, 3, "files".to_string())]);
    }

    /// The lines come whole however the chunks cut them, and each byte is searched once:
    /// a line of 64 KB in 1 000 chunks was searched again from its start at each one
    /// (~33 MB looked at, quadratic in the line; an import's answer of a million
    /// refusals is ~150 MB).
    #[test]
    fn a_long_line_in_many_chunks_is_searched_once() {
        let long: Vec<u8> = (0..65_536u32).map(|i| b'a' + (i % 26) as u8).collect();
        let mut stream = b"{\"progress\": 1}\n".to_vec();
        stream.extend_from_slice(&long);
        stream.extend_from_slice(b"\n\nlast");
        let mut lines = Lines::default();
        let mut got = Vec::new();
        for chunk in stream.chunks(66) {
            got.extend(lines.push(chunk));
        }
        assert_eq!(
            lines.searched,
            stream.len() as u64,
            "each byte searched once"
        );
        assert_eq!(lines.rest(), b"last");
        assert_eq!(got, vec![b"{\"progress\": 1}".to_vec(), long, Vec::new()]);
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(encode("/a b/ü"), "/a%20b/%C3%BC");
    }
}
