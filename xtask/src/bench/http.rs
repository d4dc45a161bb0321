//! `cargo xtask bench --http`: figures through the real owner over HTTP. A release
//! `medulla serve` on 127.0.0.1:0 over a temporary home, driven by one sequential client
//! holding one kept-alive connection for its whole MCP session, as the SDKs do. Also the
//! owner helpers the soak and the peers bench share.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::runner::{self, pct};
use crate::mcp::{self, HttpLink, HttpSession, RawLink, ReqwestLink, Session};

pub(crate) struct Owner {
    pub child: Child,
    pub url: String,
    pub http: reqwest::blocking::Client,
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

/// `release/medulla` under `CARGO_TARGET_DIR` when set (relative to the workspace, as
/// cargo reads it), else under the workspace's `target/`.
pub(crate) fn binary() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = match std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        Some(d) => workspace.join(d),
        None => workspace.join("target"),
    };
    target.join("release/medulla")
}

/// The release binary, or an error that says how to build it.
pub(crate) fn require_binary() -> Result<PathBuf> {
    let b = binary();
    if !b.exists() {
        bail!(
            "{} is missing: build it first with `cargo build --release -p medulla-memory`",
            b.display()
        );
    }
    Ok(b)
}

/// The owner a bench runs: the build `--bin PATH` names (another build, to alternate
/// with), else this workspace's release binary. `usage` is the error when the path is
/// missing.
pub(crate) fn bin_arg(args: &[String], usage: &str) -> Result<PathBuf> {
    match args.iter().position(|a| a == "--bin") {
        Some(i) => Ok(PathBuf::from(args.get(i + 1).context(usage.to_string())?)),
        None => require_binary(),
    }
}

fn start(home: &Path, model: bool, bin: Option<&Path>) -> Result<Owner> {
    match bin {
        Some(b) => start_with(b, home, model, None),
        None => start_logged(home, model, None),
    }
}

/// Start a release owner on 127.0.0.1:0 over `home`; its URL is the first stdout line.
/// With `log`, the owner's stderr (at `warn`) goes to that file instead of ours.
pub(crate) fn start_logged(home: &Path, model: bool, log: Option<&Path>) -> Result<Owner> {
    start_with(&require_binary()?, home, model, log.map(|l| (l, "warn")))
}

/// [`start_logged`] with another build of `medulla` than the release binary, and the
/// log's filter (`MEDULLA_LOG`) beside its file.
pub(crate) fn start_with(
    bin: &Path,
    home: &Path,
    model: bool,
    log: Option<(&Path, &str)>,
) -> Result<Owner> {
    let mut cmd = Command::new(bin);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--home"])
        .arg(home)
        .env("MEDULLA_LOG", log.map_or("error", |l| l.1))
        .env("NO_COLOR", "1");
    if !model {
        cmd.arg("--no-model");
    }
    if let Some((path, _)) = log {
        cmd.stderr(std::fs::File::create(path)?);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .context("build it first: cargo build --release")?;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().context("no output")??;
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .context("no url")?
        .to_string();
    std::thread::spawn(move || for _ in lines {});
    let http = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(300))
        .build()?;
    Ok(Owner { child, url, http })
}

impl Owner {
    pub(crate) fn call(&self, tool: &str, args: Value, root: &str) -> Result<Value> {
        let r = self
            .http
            .post(format!("{}/api/call/{tool}", self.url))
            .header("Medulla-Caller-Root", root)
            .header("Medulla-Agent", "human:founder")
            .json(&args)
            .send()?;
        let ok = r.status().is_success();
        let v: Value = r.json()?;
        if !ok {
            bail!("{tool}: {v}");
        }
        Ok(v)
    }
    /// A verb called as the founder (the token in `home`), on `brain` when given.
    pub(crate) fn call_as_founder(
        &self,
        home: &Path,
        verb: &str,
        args: Value,
        brain: Option<&str>,
    ) -> Result<Value> {
        let token = std::fs::read_to_string(home.join("founder.token"))?;
        let mut r = self
            .http
            .post(format!("{}/api/call/{verb}", self.url))
            .header("Medulla-Founder-Token", token.trim())
            .json(&args);
        if let Some(b) = brain {
            r = r.header("Medulla-Brain", b);
        }
        let r = r.send()?;
        let ok = r.status().is_success();
        let v: Value = r.json()?;
        if !ok {
            bail!("{verb}: {v}");
        }
        Ok(v)
    }
    pub(crate) fn rss_kib(&self) -> u64 {
        mcp::proc_status_kib(self.child.id(), "VmRSS:").unwrap_or(0)
    }
}

/// An SDK-like MCP session on one kept-alive connection to the owner.
pub(crate) fn session(o: &Owner, root: &str) -> Result<HttpSession<ReqwestLink>> {
    Ok(HttpSession::open(
        ReqwestLink::new(&o.url)?,
        &[
            ("Medulla-Caller-Root", root),
            ("Medulla-Agent", "bench:maker"),
        ],
        "bench",
    )?)
}

/// `f(i)` for `i` in `0..n`, each call timed: the p50 and p95 in milliseconds.
fn timed(n: usize, f: impl FnMut(usize) -> Result<()>) -> Result<(f64, f64)> {
    let mut v = runner::timed(n, f)?;
    Ok((pct(&mut v, 0.5), pct(&mut v, 0.95)))
}

/// A bare hyper echo server: the floor any HTTP answer costs on this machine.
fn echo_server() -> Result<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(l.local_addr().unwrap()).unwrap();
            loop {
                let (s, _) = l.accept().await.unwrap();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(
                        |req: hyper::Request<hyper::body::Incoming>| async move {
                            use http_body_util::BodyExt;
                            let body = req
                                .into_body()
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            Ok::<_, std::convert::Infallible>(hyper::Response::new(
                                http_body_util::Full::new(body),
                            ))
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(s), svc)
                        .await;
                });
            }
        });
    });
    Ok(format!("http://{}", rx.recv()?))
}

/// A tool call that must succeed.
/// Call a tool; the size in bytes of the answer's text (what an agent reads into its
/// context).
pub(crate) fn tool<L: HttpLink>(s: &mut HttpSession<L>, name: &str, args: Value) -> Result<usize> {
    let a = s.call_tool(name, args)?;
    if a.is_error {
        bail!("{name} refused: {}", a.text);
    }
    Ok(a.text.len())
}

/// The median answer size, 0 when none.
fn median(mut v: Vec<usize>) -> usize {
    runner::median(&mut v).unwrap_or(0)
}

pub(crate) fn fill(o: &Owner, root: &str, n: usize, tag: &str) -> Result<()> {
    for i in 0..n {
        o.call(
            "memorize",
            json!({ "label": format!("{tag} claim {i}"), "text": format!("{tag} observation {i} about build cache flakes and deploy timeouts {}", i % 97) }),
            root,
        )?;
    }
    Ok(())
}

/// What `cargo xtask bench --http` measures.
#[derive(Debug, Clone)]
pub struct HttpOpts {
    pub model: bool,
    pub brains: usize,
    pub per_brain: usize,
    pub claims: usize,
    /// Sequential calls per round-trip row.
    pub rounds: usize,
    /// Stop after the round trips.
    pub round_trips_only: bool,
    /// The owner to measure (`--bin PATH`, e.g. the build before a change, to alternate
    /// against it); the workspace's release binary when `None`.
    pub bin: Option<PathBuf>,
}

/// Round trips on one kept-alive connection per client: a bare echo, `GET /api/health`,
/// MCP `ping` and a trivial tool call, through an SDK-like client (reqwest, TCP_NODELAY
/// set) and a raw one (HTTP/1.1 by hand on a std TcpStream, TCP_NODELAY unset). Health,
/// ping and the tool call are interleaved on the MCP session's connection (one of each
/// per round), so the machine's drift falls on all three alike; the last line of each
/// client is the tool call's p50 over health's (issue 50: at most 2×).
fn round_trips(o: &Owner, root: &str, n: usize) -> Result<()> {
    let echo = echo_server()?;
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let json_headers = [("content-type".to_string(), "application/json".to_string())];
    println!("\nround trips, {n} sequential calls each, one kept-alive connection per client:\n");
    runner::header("| round trip | client | p50 (ms) | p95 (ms) | vs echo | vs health |");
    let headers: [(&str, &str); 2] = [
        ("Medulla-Caller-Root", root),
        ("Medulla-Agent", "bench:maker"),
    ];
    let mut ratios = Vec::new();
    for client in ["reqwest (SDK-like)", "raw std TcpStream"] {
        let raw = client.starts_with("raw");
        eprintln!("round trips through the {client} client…");
        let (e50, e95) = if raw {
            let mut l = RawLink::new(&echo)?;
            let r = timed(n, |_| l.send("POST", "/", &json_headers, ping).map(|_| ()))?;
            ensure_one_connection(l.connects, "echo")?;
            r
        } else {
            let mut l = ReqwestLink::new(&echo)?;
            timed(n, |_| l.send("POST", "/", &json_headers, ping).map(|_| ()))?
        };
        // One MCP session, health polled on the same connection between its calls.
        let (h, p, t, r) = if raw {
            let mut s = HttpSession::open(RawLink::new(&o.url)?, &headers, "bench")?;
            let r = session_rows(n, &mut s)?;
            ensure_one_connection(s.link.connects, "the MCP session")?;
            r
        } else {
            let mut s = HttpSession::open(ReqwestLink::new(&o.url)?, &headers, "bench")?;
            session_rows(n, &mut s)?
        };
        let line = |what: &str, (p50, p95): (f64, f64)| {
            println!(
                "| {what} | {client} | {p50:.3} | {p95:.3} | {:.1}× | {:.2}× |",
                p50 / e50,
                p50 / h.0
            );
        };
        line("bare hyper echo (in-process)", (e50, e95));
        line("GET /api/health", h);
        line("MCP ping", p);
        line("MCP tools/call boot_memory {op: list}", t);
        line("REST POST /api/call/boot_memory {op: list}", r);
        ratios.push((client, t.0 / h.0));
    }
    println!();
    for (client, r) in ratios {
        println!("tools/call ÷ health, p50s interleaved on one connection, {client}: {r:.2}×");
    }
    Ok(())
}

fn ensure_one_connection(connects: usize, what: &str) -> Result<()> {
    if connects != 1 {
        bail!("{what} used {connects} TCP connections: keep-alive did not hold");
    }
    Ok(())
}

type Row = (f64, f64);

/// Health, ping, a trivial tool call and the same verb over REST, one of each per round for `n` rounds on the
/// session's connection: the p50 and p95 of each.
fn session_rows<L: HttpLink>(n: usize, s: &mut HttpSession<L>) -> Result<(Row, Row, Row, Row)> {
    let (mut health, mut ping, mut tool, mut rest) = (vec![], vec![], vec![], vec![]);
    for _ in 0..n {
        runner::sample(&mut health, || {
            let a = s.get("/api/health")?;
            if a.status != 200 {
                bail!("health answered {}", a.status);
            }
            Ok(())
        })?;
        runner::sample(&mut ping, || {
            s.request("ping", json!({})).map(|_| ()).map_err(Into::into)
        })?;
        runner::sample(&mut tool, || {
            let a = s.call_tool("boot_memory", json!({ "op": "list" }))?;
            if a.is_error {
                bail!("boot_memory list refused: {}", a.text);
            }
            Ok(())
        })?;
        // The same verb over REST: the floor the MCP call's edge stands on.
        runner::sample(&mut rest, || {
            let a = s.post_json("/api/call/boot_memory", &json!({ "op": "list" }))?;
            if a.status != 200 {
                bail!("REST boot_memory answered {}", a.status);
            }
            Ok(())
        })?;
    }
    let row = |v: &mut Vec<Duration>| (pct(v, 0.5), pct(v, 0.95));
    Ok((
        row(&mut health),
        row(&mut ping),
        row(&mut tool),
        row(&mut rest),
    ))
}

pub fn run(opts: HttpOpts) -> Result<()> {
    let HttpOpts {
        model,
        brains,
        per_brain,
        claims: big,
        rounds,
        round_trips_only,
        bin,
    } = opts;
    let home = tempfile::tempdir()?;
    let projects = tempfile::tempdir()?;
    // Every brain of the all-brains phase stays warm: the figure is the warm fan-out, not
    // the cost of opening brains past the default warm budget (32).
    std::fs::write(
        home.path().join("config.toml"),
        format!("max_warm_brains = {}\n", brains + 8),
    )?;
    let proot = std::fs::canonicalize(projects.path())?;
    let o = start(home.path(), model, bin.as_deref())?;
    let main_root = proot.join("main");
    std::fs::create_dir_all(&main_root)?;
    let main = main_root.to_string_lossy().to_string();
    o.call("bootstrap", json!({ "root": main }), &main)?;
    println!(
        "mode: {}",
        if model {
            "hybrid (model loaded)"
        } else {
            "lexical (--no-model)"
        }
    );

    round_trips(&o, &main, rounds)?;
    if round_trips_only {
        return Ok(());
    }
    let mut m = session(&o, &main)?;

    // One brain at `big` claims, 200 medulla claims.
    let t = Instant::now();
    fill(&o, &main, big, "main")?;
    let fill_s = t.elapsed().as_secs_f64();
    for i in 0..200 {
        o.call("memorize", json!({ "label": format!("doctrine {i}"), "text": format!("doctrine {i}: deploy timeouts are raised, never retried blindly {}", i % 13), "tier": "medulla" }), &main)?;
    }
    let (mut msz, mut ssz, mut nsz, mut dsz) = (vec![], vec![], vec![], vec![]);
    let (m50, m95) = timed(300, |i| {
        msz.push(tool(
            &mut m,
            "memorize",
            json!({ "label": format!("mcp {i}"), "text": format!("written over mcp {i} about cache flakes"), "agent_id": "bench:maker" }),
        )?);
        Ok(())
    })?;
    let (s50, s95) = timed(300, |i| {
        ssz.push(tool(
            &mut m,
            "seek",
            json!({ "query": format!("deploy timeouts {}", i % 50) }),
        )?);
        Ok(())
    })?;
    let (p50, p95) = timed(300, |i| {
        tool(
            &mut m,
            "seek",
            json!({ "query": format!("deploy timeouts {}", i % 50), "tier": "project" }),
        )?;
        Ok(())
    })?;
    let (n50, n95) = timed(300, |i| {
        nsz.push(tool(
            &mut m,
            "north",
            json!({ "task": format!("fix the build cache flake {}", i % 50) }),
        )?);
        Ok(())
    })?;
    for i in 0..50 {
        dsz.push(tool(
            &mut m,
            "seek",
            json!({ "query": format!("deploy timeouts {}", i % 50), "detail": true }),
        )?);
    }
    println!("\n{big} project claims (filled in {fill_s:.1} s over REST) + 200 medulla claims:");
    runner::header("| verb over MCP | p50 (ms) | p95 (ms) | median answer (bytes) |");
    println!(
        "| memorize | {m50:.3} | {m95:.3} | {} |\n| seek (brain + medulla) | {s50:.3} | {s95:.3} | {} (with detail: {}) |\n| seek (tier: project) | {p50:.3} | {p95:.3} | – |\n| north | {n50:.3} | {n95:.3} | {} |",
        median(msz),
        median(ssz),
        median(dsz),
        median(nsz)
    );
    println!(
        "default seek / project-only seek, p50: {:.2}×",
        s50 / p50.max(1e-9)
    );

    // Promotion through the audit actor.
    let (pr50, pr95) = timed(100, |i| {
        o.call("promote", json!({ "claim": format!("main claim {i}"), "reason": "bench promotion", "agent_id": "human:founder" }), &main).map(|_| ())
    })?;
    println!("| promote (audit actor) | {pr50:.3} | {pr95:.3} |");

    // The mailbox: append → filed latency (report files synchronously) and throughput.
    let (r50, r95) = timed(300, |i| {
        o.http
            .post(format!("{}/api/reports", o.url))
            .json(&json!({ "class": "bench", "repo": main, "what": format!("letter {i}") }))
            .send()?;
        Ok(())
    })?;
    {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(home.path().join("field-reports.jsonl"))?;
        for i in 0..5000 {
            writeln!(
                f,
                "{}",
                json!({ "class": "bench", "repo": main, "what": format!("bulk {i}") })
            )?;
        }
    }
    let t = Instant::now();
    let pass: Value = o
        .http
        .post(format!("{}/api/mailbox/distribute", o.url))
        .send()?
        .json()?;
    let secs = t.elapsed().as_secs_f64();
    let read = pass["read"].as_u64().unwrap_or(0);
    println!("| report (append + file into the box) | {r50:.3} | {r95:.3} |");
    println!("\ndistribution: a pass read {read} letters in {:.0} ms (the watcher may have taken some first): {:.0} letters/s", secs * 1000.0, read as f64 / secs.max(1e-9));

    // Many brains: all-brains fan-out, dormant opens, idle memory.
    if brains == 0 {
        return Ok(());
    }
    for b in 0..brains {
        let r = proot.join(format!("b{b:03}"));
        std::fs::create_dir_all(&r)?;
        let rs = r.to_string_lossy().to_string();
        o.call("bootstrap", json!({ "root": rs }), &rs)?;
        fill(&o, &rs, per_brain, &format!("b{b}"))?;
    }
    let (a50, a95) = timed(50, |i| {
        o.call(
            "seek",
            json!({ "query": format!("deploy timeouts {}", i % 40), "tier": "all-brains" }),
            &main,
        )
        .map(|_| ())
    })?;
    println!("\nall-brains seek over {brains} brains × {per_brain} claims (+ main) warm (max_warm_brains = {}): p50 {a50:.1} ms, p95 {a95:.1} ms", brains + 8);
    drop(m);
    drop(o);
    let o = start(home.path(), model, bin.as_deref())?;
    let roots: Vec<String> = (0..brains.min(30))
        .map(|b| proot.join(format!("b{b:03}")).to_string_lossy().to_string())
        .collect();
    // Each brain's first request (it opens the brain), then its second (warm).
    let seek = |b: usize| {
        o.call(
            "seek",
            json!({ "query": "deploy", "tier": "project" }),
            &roots[b],
        )
        .map(|_| ())
    };
    let (mut opens, mut warm) = runner::alternate(roots.len(), seek, seek)?;
    let (o50, w50) = (pct(&mut opens, 0.5), pct(&mut warm, 0.5));
    println!("dormant brain ({per_brain} claims): first request p50 {o50:.2} ms vs warm {w50:.2} ms → open ≈ {:.2} ms", o50 - w50);
    // One owner per home: the first must be gone before the next can open the stores.
    drop(o);
    let o2 = start(home.path(), model, bin.as_deref())?;
    for b in 0..3 {
        let rs = proot.join(format!("b{b:03}")).to_string_lossy().to_string();
        o2.call("seek", json!({ "query": "deploy", "tier": "project" }), &rs)?;
    }
    std::thread::sleep(Duration::from_millis(500));
    println!(
        "idle RSS with {} registered brains, 3 warm: {:.1} MiB",
        brains + 1,
        o2.rss_kib() as f64 / 1024.0
    );
    Ok(())
}
