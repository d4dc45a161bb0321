//! `cargo xtask bench --backup [--claims 100000] [--brains 100] [--per-brain 1000]
//! [--clients 8] [--secs 5]`: what an online backup costs. Two homes on a release owner
//! (lexical-only): one brain of `--claims` claims, and `--brains` brains of
//! `--per-brain` claims each. In each, `--clients` clients seek on kept-alive MCP
//! sessions, first for `--secs` seconds alone (the p99 without a backup), then while a
//! backup is written (the p99 during it); then the owner stops and the backup is restored
//! into a fresh home with `medulla restore`, and a new owner serves the restored stores
//! (its first seek of each opens it and rebuilds its indexes).
//!
//! The stores are filled in-process with `memorize_many` (the owner bootstraps the
//! brains first, then stops, so only one process ever holds a store).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use brains::{MemorizeInput, Store, StoreOptions};
use serde_json::{json, Value};

use super::corpus::TOPICS;
use super::http::{require_binary, session, start_logged, Owner};
use super::runner::{header, pct};
use crate::mcp::Session;

fn fill(dir: &Path, n: usize, tag: &str) -> Result<()> {
    let (mut store, _) = Store::open(dir, StoreOptions::default())?;
    for start in (0..n).step_by(1000) {
        let batch: Vec<MemorizeInput> = (start..n.min(start + 1000))
            .map(|i| MemorizeInput {
                label: format!("{tag} claim {i}"),
                text: format!(
                    "{tag} observation {i}: the {} {} broke after the {} change on runner {}",
                    TOPICS[i % 12],
                    TOPICS[(i / 12) % 12],
                    TOPICS[(i / 144) % 12],
                    i % 97
                ),
                source_agent: "bench:maker".into(),
                ..Default::default()
            })
            .collect();
        for r in store.memorize_many(batch)? {
            r?;
        }
    }
    store.close()?;
    Ok(())
}

/// A home whose brains at `roots` hold `per` claims each, bootstrapped by an owner that
/// is stopped again before the stores are filled.
fn build_home(home: &Path, roots: &[String], per: usize) -> Result<()> {
    {
        let o = start_logged(home, false, None)?;
        for r in roots {
            o.call("bootstrap", json!({ "root": r }), r)?;
        }
    }
    let t = Instant::now();
    for e in std::fs::read_dir(home.join("brains"))? {
        let dir = e?.path();
        let m: Value = serde_json::from_slice(&std::fs::read(dir.join("brain.json"))?)?;
        let tag = m["root"]
            .as_str()
            .unwrap_or("x")
            .rsplit('/')
            .next()
            .unwrap_or("x")
            .to_string();
        fill(&dir, per, &tag)?;
    }
    eprintln!(
        "filled {} × {per} claims in {:.1} s",
        roots.len(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Clients seeking until `stop`: each seek's start and duration.
type Samples = Arc<Mutex<Vec<(Instant, Duration)>>>;

fn clients(
    o: &Owner,
    roots: &[String],
    n: usize,
    stop: &Arc<AtomicBool>,
    samples: &Samples,
) -> Result<Vec<std::thread::JoinHandle<Result<()>>>> {
    let mut handles = Vec::new();
    for c in 0..n {
        let root = roots[c % roots.len()].clone();
        let mut s = session(o, &root)?;
        // The first seek opens the brain: not part of either figure.
        s.call_tool("seek", json!({ "query": "cache", "tier": "project" }))?;
        let (stop, samples) = (stop.clone(), samples.clone());
        handles.push(std::thread::spawn(move || -> Result<()> {
            let mut i = c * 7919;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let q = format!(
                    "{} {} runner {}",
                    TOPICS[i % 12],
                    TOPICS[(i / 12) % 12],
                    i % 97
                );
                let t = Instant::now();
                let a = s.call_tool("seek", json!({ "query": q, "tier": "project" }))?;
                let d = t.elapsed();
                if a.is_error {
                    bail!("seek refused: {}", a.text);
                }
                samples.lock().unwrap().push((t, d));
            }
            Ok(())
        }));
    }
    Ok(handles)
}

struct Figures {
    stores: usize,
    claims: usize,
    bytes: u64,
    backup_s: f64,
    p99_alone: f64,
    p99_during: f64,
    seeks_during: usize,
    restore_s: f64,
    reopen_s: f64,
}

fn scenario(name: &str, brains: usize, per: usize, n_clients: usize, secs: u64) -> Result<Figures> {
    eprintln!("{name}: building {brains} × {per}…");
    let home = tempfile::tempdir()?;
    let projects = tempfile::tempdir()?;
    let base = std::fs::canonicalize(projects.path())?;
    let roots: Vec<String> = (0..brains)
        .map(|i| {
            let p = base.join(format!("p{i}"));
            std::fs::create_dir_all(&p).map(|_| p.to_string_lossy().into_owned())
        })
        .collect::<std::io::Result<_>>()?;
    build_home(home.path(), &roots, per)?;

    let o = start_logged(home.path(), false, None)?;
    let stop = Arc::new(AtomicBool::new(false));
    let samples: Samples = Arc::default();
    let seeking: Vec<String> = roots.iter().take(n_clients).cloned().collect();
    let handles = clients(&o, &seeking, n_clients, &stop, &samples)?;
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    let alone_end = Instant::now();
    let answer = o.call_as_founder(home.path(), "backup", json!({}), None)?;
    let backup_end = Instant::now();
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join()
            .map_err(|_| anyhow::anyhow!("a client panicked"))??;
    }
    let all = samples.lock().unwrap().clone();
    let mut alone: Vec<Duration> = all
        .iter()
        .filter(|(t, _)| *t >= t0 && *t < alone_end)
        .map(|(_, d)| *d)
        .collect();
    let mut during: Vec<Duration> = all
        .iter()
        .filter(|(t, _)| *t >= alone_end && *t < backup_end)
        .map(|(_, d)| *d)
        .collect();
    let m = &answer["manifest"];
    if m["failed"].as_array().is_some_and(|f| !f.is_empty()) {
        bail!("the backup could not copy every store: {}", m["failed"]);
    }
    let stores = m["stores"].as_array().context("no stores")?;
    let bytes: u64 = stores.iter().filter_map(|s| s["bytes"].as_u64()).sum();
    let claims: u64 = stores
        .iter()
        .filter_map(|s| s["counts"]["live_claims"].as_u64())
        .sum();
    if claims != (brains * per) as u64 {
        bail!(
            "the backup counts {claims} live claims, not {}",
            brains * per
        );
    }
    let dir = PathBuf::from(answer["dir"].as_str().context("no dir")?);
    drop(o);

    let fresh = tempfile::tempdir()?;
    let t = Instant::now();
    let out = std::process::Command::new(require_binary()?)
        .arg("restore")
        .arg(&dir)
        .arg("--home")
        .arg(fresh.path())
        .env("MEDULLA_HOME", fresh.path())
        .output()?;
    let restore_s = t.elapsed().as_secs_f64();
    if !out.status.success() {
        bail!(
            "restore failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let o = start_logged(fresh.path(), false, None)?;
    let t = Instant::now();
    for r in &roots {
        let v = o.call("seek", json!({ "query": "cache", "tier": "project" }), r)?;
        if v["results"].as_array().is_none_or(|r| r.is_empty()) {
            bail!("a restored brain answers nothing: {v}");
        }
    }
    let reopen_s = t.elapsed().as_secs_f64();
    Ok(Figures {
        stores: stores.len(),
        claims: claims as usize,
        bytes,
        backup_s: backup_end.duration_since(alone_end).as_secs_f64(),
        p99_alone: pct(&mut alone, 0.99),
        p99_during: pct(&mut during, 0.99),
        seeks_during: during.len(),
        restore_s,
        reopen_s,
    })
}

pub fn run(args: &[String]) -> Result<()> {
    const USAGE: &str = "usage: cargo xtask bench --backup [--claims 100000] [--brains 100] [--per-brain 1000] [--clients 8] [--secs 5]";
    for a in args.iter().filter(|a| a.starts_with("--")) {
        if ![
            "--backup",
            "--claims",
            "--brains",
            "--per-brain",
            "--clients",
            "--secs",
        ]
        .contains(&a.as_str())
        {
            bail!("unknown argument {a:?}: {USAGE}");
        }
    }
    require_binary()?;
    let claims = crate::flag_num(args, "--claims", 100_000)?;
    let brains = crate::flag_num(args, "--brains", 100)?;
    let per = crate::flag_num(args, "--per-brain", 1000)?;
    let n_clients = crate::flag_num(args, "--clients", 8)?.max(1);
    let secs = crate::flag_num(args, "--secs", 5)? as u64;
    let rows = [
        (
            format!("1 brain × {claims}"),
            scenario("one big brain", 1, claims, n_clients, secs)?,
        ),
        (
            format!("{brains} brains × {per}"),
            scenario("many brains", brains, per, n_clients, secs)?,
        ),
    ];
    println!("\n{n_clients} clients seeking on kept-alive MCP sessions (lexical), p99 alone over {secs} s and during the backup:\n");
    header("| home | stores (with the medulla) | live claims | backup size (MB) | backup (s) | seek p99 alone (ms) | seek p99 during backup (ms) | ratio | seeks during | restore (s) | first seek of every restored brain (s) |");
    for (name, f) in &rows {
        println!(
            "| {name} | {} | {} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {:.2} | {:.2} |",
            f.stores,
            f.claims,
            f.bytes as f64 / 1e6,
            f.backup_s,
            f.p99_alone,
            f.p99_during,
            f.p99_during / f.p99_alone,
            f.seeks_during,
            f.restore_s,
            f.reopen_s
        );
    }
    Ok(())
}
