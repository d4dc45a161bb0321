//! `cargo xtask bench --http`: figures through the real owner over HTTP. A release
//! `medulla serve` on 127.0.0.1:0 over a temporary home, driven by one sequential client.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

struct Owner {
    child: Child,
    url: String,
    http: reqwest::blocking::Client,
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

fn binary() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/medulla")
}

fn start(home: &Path, model: bool) -> Result<Owner> {
    let mut cmd = Command::new(binary());
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--home"])
        .arg(home)
        .env("MEDULLA_LOG", "error");
    if !model {
        cmd.arg("--no-model");
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
    fn call(&self, tool: &str, args: Value, root: &str) -> Result<Value> {
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
    fn rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmRSS:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            })
            .unwrap_or(0)
    }
}

/// An MCP session over plain HTTP (JSON-RPC posts; SSE or JSON answers).
struct Mcp<'a> {
    o: &'a Owner,
    http: reqwest::blocking::Client,
    session: Option<String>,
    root: String,
    id: u64,
}

impl<'a> Mcp<'a> {
    fn new(o: &'a Owner, root: &str) -> Result<Self> {
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .pool_max_idle_per_host(0)
            .build()?;
        let mut m = Mcp {
            o,
            http,
            session: None,
            root: root.to_string(),
            id: 0,
        };
        m.rpc("initialize", json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "bench", "version": "0" } }))?;
        m.post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
        Ok(m)
    }
    fn post(&mut self, body: Value) -> Result<String> {
        let mut r = self
            .http
            .post(format!("{}/mcp", self.o.url))
            .header("accept", "application/json, text/event-stream")
            .header("Medulla-Caller-Root", &self.root)
            .json(&body);
        if let Some(s) = &self.session {
            r = r.header("mcp-session-id", s);
        }
        let resp = r.send()?;
        if let Some(s) = resp.headers().get("mcp-session-id") {
            self.session = Some(s.to_str()?.to_string());
        }
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|c| c.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        if !sse {
            return Ok(resp.text()?);
        }
        // An SSE answer may stay open after the response: read up to the first message.
        for line in BufReader::new(resp).lines() {
            let line = line?;
            if let Some(data) = line.strip_prefix("data:") {
                if data.contains("\"jsonrpc\"") {
                    return Ok(data.to_string());
                }
            }
        }
        Ok(String::new())
    }
    fn rpc(&mut self, method: &str, params: Value) -> Result<String> {
        self.id += 1;
        let body = self
            .post(json!({ "jsonrpc": "2.0", "id": self.id, "method": method, "params": params }))?;
        if body.contains("\"error\"") && !body.contains("\"result\"") {
            bail!("{method}: {body}");
        }
        Ok(body)
    }
    fn tool(&mut self, name: &str, args: Value) -> Result<String> {
        self.rpc("tools/call", json!({ "name": name, "arguments": args }))
    }
}

fn pct(s: &mut [Duration], p: f64) -> f64 {
    s.sort();
    s[((s.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0
}

fn timed(n: usize, mut f: impl FnMut(usize) -> Result<()>) -> Result<(f64, f64)> {
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        f(i)?;
        v.push(t.elapsed());
    }
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

fn fill(o: &Owner, root: &str, n: usize, tag: &str) -> Result<()> {
    for i in 0..n {
        o.call(
            "memorize",
            json!({ "label": format!("{tag} claim {i}"), "text": format!("{tag} observation {i} about build cache flakes and deploy timeouts {}", i % 97) }),
            root,
        )?;
    }
    Ok(())
}

pub fn run(model: bool, brains: usize, per_brain: usize, big: usize) -> Result<()> {
    let home = tempfile::tempdir()?;
    let projects = tempfile::tempdir()?;
    let proot = std::fs::canonicalize(projects.path())?;
    let o = start(home.path(), model)?;
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

    // Round trips: a bare echo vs MCP ping vs a trivial tool.
    eprintln!("round trips…");
    let echo = echo_server()?;
    let (e50, _) = timed(2000, |_| {
        o.http
            .post(&echo)
            .body("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")
            .send()?
            .bytes()?;
        Ok(())
    })?;
    eprintln!("echo done; MCP…");
    let mut m = Mcp::new(&o, &main)?;
    let (p50, _) = timed(2000, |_| m.rpc("ping", json!({})).map(|_| ()))?;
    let (t50, _) = timed(2000, |_| {
        m.tool("boot_memory", json!({ "op": "list" })).map(|_| ())
    })?;
    println!("| round trip | p50 (ms) | vs echo |\n|---|---|---|");
    println!("| bare hyper echo | {e50:.3} | 1.0× |");
    println!("| MCP ping | {p50:.3} | {:.1}× |", p50 / e50);
    println!(
        "| MCP tools/call boot_memory list | {t50:.3} | {:.1}× |",
        t50 / e50
    );

    // One brain at `big` claims, 200 medulla claims.
    let t = Instant::now();
    fill(&o, &main, big, "main")?;
    let fill_s = t.elapsed().as_secs_f64();
    for i in 0..200 {
        o.call("memorize", json!({ "label": format!("doctrine {i}"), "text": format!("doctrine {i}: deploy timeouts are raised, never retried blindly {}", i % 13), "tier": "medulla" }), &main)?;
    }
    let (m50, m95) = timed(300, |i| {
        m.tool("memorize", json!({ "label": format!("mcp {i}"), "text": format!("written over mcp {i} about cache flakes"), "agent_id": "bench:maker" })).map(|_| ())
    })?;
    let (s50, s95) = timed(300, |i| {
        m.tool(
            "seek",
            json!({ "query": format!("deploy timeouts {}", i % 50) }),
        )
        .map(|_| ())
    })?;
    let (n50, n95) = timed(300, |i| {
        m.tool(
            "north",
            json!({ "task": format!("fix the build cache flake {}", i % 50) }),
        )
        .map(|_| ())
    })?;
    println!("\n{big} project claims (filled in {fill_s:.1} s over REST) + 200 medulla claims:");
    println!("| verb over MCP | p50 (ms) | p95 (ms) |\n|---|---|---|");
    println!("| memorize | {m50:.3} | {m95:.3} |\n| seek (brain + medulla) | {s50:.3} | {s95:.3} |\n| north | {n50:.3} | {n95:.3} |");

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
    println!("\nall-brains seek over {brains} brains × {per_brain} claims (+ main) warm: p50 {a50:.1} ms, p95 {a95:.1} ms");
    drop(m);
    drop(o);
    let o = start(home.path(), model)?;
    let mut opens = Vec::new();
    let mut warm = Vec::new();
    for b in 0..brains.min(30) {
        let rs = proot.join(format!("b{b:03}")).to_string_lossy().to_string();
        let t = Instant::now();
        o.call("seek", json!({ "query": "deploy", "tier": "project" }), &rs)?;
        opens.push(t.elapsed());
        let t = Instant::now();
        o.call("seek", json!({ "query": "deploy", "tier": "project" }), &rs)?;
        warm.push(t.elapsed());
    }
    let (o50, w50) = (pct(&mut opens, 0.5), pct(&mut warm, 0.5));
    println!("dormant brain ({per_brain} claims): first request p50 {o50:.2} ms vs warm {w50:.2} ms → open ≈ {:.2} ms", o50 - w50);
    // One owner per home: the first must be gone before the next can open the stores.
    drop(o);
    let o2 = start(home.path(), model)?;
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
