//! `cargo xtask bench --scale [--claims 100000] [--small 1000] [--rounds 300] [--no-model]
//! [--bin PATH]`: whether a seek stays flat as a brain grows when every query word is
//! common (issue 50). Two brains of one release owner, filled through the real
//! `medulla import DIR --brain ROOT` with legacy files of the Zipf corpus (`zipf.rs`):
//! short claims from a small vocabulary, so tens of thousands of claims share each top
//! word. Seeks of two or three of those words go to the small and the large brain in
//! turn over one kept-alive connection, twice: right after the large import returns
//! (the vector graph still catching up), and once the owner logs that it has caught up and has gone idle.
//! The figure is the large brain's p50 over the small one's, within one run.
//!
//! `--bin` runs another build of `medulla` (a copy of an older one, to alternate runs).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde_json::json;

use super::http::{bin_arg, start_with, Owner};
use super::import::{legacy_claim, wait_idle};
use super::runner::{alternate, header, pct};
use super::zipf::{self, Zipf};

const USAGE: &str = "usage: cargo xtask bench --scale [--claims 100000] [--small 1000] \
                     [--rounds 300] [--no-model] [--bin PATH]";

/// The owner logs when the vector graph has caught up on a backlog; nothing else.
const LOG_FILTER: &str = "warn,brains::vector=info";

/// Corpus seeds: the two brains hold different claims of the same shape.
const SEED_SMALL: u64 = 11;
const SEED_LARGE: u64 = 29;

/// `n` legacy files of the Zipf corpus (`seed`) under `dir`, for the brain at `root`.
pub(crate) fn write_legacy(dir: &Path, root: &str, n: usize, seed: u64) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let z = Zipf::new();
    for i in 0..n {
        let (label, text) = zipf::claim(&z, seed, i);
        let c = legacy_claim(label, text, 1_780_000_000_000 + (i as i64) * 1000, root);
        std::fs::write(
            dir.join(format!("{}.light.md", c.slug)),
            brains::legacy::render(&c),
        )?;
    }
    Ok(())
}

/// `medulla import DIR --brain ROOT` (the import bench's runner), checked: every file
/// imported live; its wall time in seconds.
fn import(o: &Owner, bin: &Path, home: &Path, root: &str, dir: &Path, n: usize) -> Result<f64> {
    let (v, secs, _cpu) = super::import::import(bin, home, root, dir, false, o.child.id())?;
    if v["imported_live"].as_u64() != Some(n as u64) {
        bail!(
            "the import placed {} live, not {n}: {v}",
            v["imported_live"]
        );
    }
    Ok(secs)
}

/// The owner's log from byte `from` on (what one import made it say).
fn log_since(log: &Path, from: usize) -> String {
    let bytes = std::fs::read(log).unwrap_or_default();
    String::from_utf8_lossy(bytes.get(from..).unwrap_or_default()).into_owned()
}

fn log_len(log: &Path) -> usize {
    std::fs::metadata(log).map_or(0, |m| m.len() as usize)
}

/// Whether the owner's log (from byte `from`) says the vector graph has caught up on a
/// backlog.
fn caught_up(log: &Path, from: usize) -> bool {
    log_since(log, from).contains("caught up on its backlog")
}

/// Wait until the graph has caught up on the import's backlog (the log from byte `from`
/// on), then until the owner `pid` is idle: the import's other background work (the claim
/// index's checkpoint, the graph's save) done too. The seconds waited.
fn settle(log: &Path, from: usize, pid: u32) -> Result<f64> {
    let t = Instant::now();
    std::thread::sleep(Duration::from_secs(3));
    if log_since(log, from).contains("catching up on a backlog") {
        let deadline = Instant::now() + Duration::from_secs(3600);
        while !caught_up(log, from) {
            if Instant::now() > deadline {
                bail!("the vector graph had not caught up on the import's backlog within an hour");
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    // A few seconds after the graph catches up, the owner still folds the claim index
    // and saves both indexes: seeks meanwhile compete with that for the cores.
    wait_idle(pid)?;
    Ok(t.elapsed().as_secs_f64())
}

/// One phase's figures: (small p50, small p99, large p50, large p99) in ms.
type Phase = (f64, f64, f64, f64);

/// `rounds` seeks of the Zipf queries, small brain then large brain each round, over the
/// owner's one kept-alive client.
fn interleaved(o: &Owner, small: &str, large: &str, rounds: usize) -> Result<Phase> {
    let seek = |root: &str, i: usize| -> Result<()> {
        let v = o.call(
            "seek",
            json!({ "query": zipf::query(i), "tier": "project" }),
            root,
        )?;
        if v.to_string().len() < 40 {
            bail!("seek found nothing in {root}: {v}");
        }
        Ok(())
    };
    // A few warm-up rounds (connection, caches), not counted.
    for i in 0..5 {
        seek(small, i)?;
        seek(large, i)?;
    }
    let t = Instant::now();
    let (mut a, mut b) = alternate(rounds, |i| seek(small, i), |i| seek(large, i))?;
    fifths(&a, &b, t.elapsed());
    Ok((
        pct(&mut a, 0.5),
        pct(&mut a, 0.99),
        pct(&mut b, 0.5),
        pct(&mut b, 0.99),
    ))
}

/// The large brain's p50 over the small one's in each fifth of the rounds, on stderr: how
/// the ratio moves while background work (the hold after an import, the cells, the
/// graph catching up) comes and goes within a phase.
fn fifths(a: &[Duration], b: &[Duration], took: Duration) {
    let n = a.len().min(b.len());
    if n < 5 {
        return;
    }
    let parts: Vec<String> = (0..5)
        .map(|k| {
            let (from, to) = (n * k / 5, n * (k + 1) / 5);
            let (mut x, mut y) = (a[from..to].to_vec(), b[from..to].to_vec());
            format!("{:.2}/{:.2}", pct(&mut y, 0.5), pct(&mut x, 0.5))
        })
        .collect();
    eprintln!(
        "  by fifth of the {:.1} s (large/small p50, ms): {}",
        took.as_secs_f64(),
        parts.join(", ")
    );
}

pub fn run(args: &[String]) -> Result<()> {
    let valued = ["--claims", "--small", "--rounds", "--bin"];
    for (i, a) in args.iter().enumerate() {
        let value = i > 0 && valued.contains(&args[i - 1].as_str());
        if !value
            && !valued.contains(&a.as_str())
            && !["--scale", "--no-model"].contains(&a.as_str())
        {
            bail!("unknown argument {a:?}: {USAGE}");
        }
    }
    let large_n = crate::flag_num(args, "--claims", 100_000)?.max(1);
    let small_n = crate::flag_num(args, "--small", 1000)?.max(1);
    let rounds = crate::flag_num(args, "--rounds", 300)?.max(1);
    let model = !args.iter().any(|a| a == "--no-model");
    let bin = bin_arg(args, USAGE)?;

    let home = tempfile::tempdir()?;
    let work = tempfile::tempdir()?;
    let base = std::fs::canonicalize(work.path())?;
    let small = base.join("small");
    let large = base.join("large");
    std::fs::create_dir_all(&small)?;
    std::fs::create_dir_all(&large)?;
    let (small, large) = (
        small.to_string_lossy().into_owned(),
        large.to_string_lossy().into_owned(),
    );
    let t = Instant::now();
    write_legacy(&base.join("legacy-small"), &small, small_n, SEED_SMALL)?;
    write_legacy(&base.join("legacy-large"), &large, large_n, SEED_LARGE)?;
    eprintln!(
        "wrote {} legacy files in {:.1} s",
        small_n + large_n,
        t.elapsed().as_secs_f64()
    );

    let log = base.join("owner.log");
    let o = start_with(&bin, home.path(), model, Some((&log, LOG_FILTER)))?;
    o.call("bootstrap", json!({ "root": small }), &small)?;
    o.call("bootstrap", json!({ "root": large }), &large)?;
    let from = log_len(&log);
    import(
        &o,
        &bin,
        home.path(),
        &small,
        &base.join("legacy-small"),
        small_n,
    )?;
    settle(&log, from, o.child.id())?;
    let from = log_len(&log);
    let import_s = import(
        &o,
        &bin,
        home.path(),
        &large,
        &base.join("legacy-large"),
        large_n,
    )?;
    eprintln!("import of {large_n}: {import_s:.1} s");

    let fresh = interleaved(&o, &small, &large, rounds)?;
    let fresh_caught_up = caught_up(&log, from);
    let waited = settle(&log, from, o.child.id())?;
    eprintln!("settled after {waited:.1} s more");
    let settled = interleaved(&o, &small, &large, rounds)?;

    println!(
        "\nseek over HTTP, {small_n}-claim vs {large_n}-claim brain of the Zipf corpus \
         (every query word common), interleaved over one kept-alive connection, {rounds} \
         rounds ({}), {}:\n",
        if model {
            "hybrid: the model loaded"
        } else {
            "lexical-only"
        },
        bin.display()
    );
    header(&format!(
        "| when | {small_n}: p50 (ms) | p99 | {large_n}: p50 (ms) | p99 | p50 ratio |"
    ));
    let row = |when: &str, (a50, a99, b50, b99): Phase| {
        println!(
            "| {when} | {a50:.2} | {a99:.2} | {b50:.2} | {b99:.2} | **{:.1}×** |",
            b50 / a50
        )
    };
    row(
        &format!(
            "right after the import ({import_s:.1} s){}",
            if fresh_caught_up {
                "; the graph caught up during these rounds"
            } else {
                ""
            }
        ),
        fresh,
    );
    row("once the graph has caught up", settled);
    Ok(())
}
