//! `cargo xtask bench --reopen [--claims 100000] [--runs 3] [--seeks 40] [--bin PATH]`: a
//! large brain right after a bulk import and across restarts (issue 50). A release owner
//! imports `--claims` legacy files (`bench --import`'s, short claims over a vocabulary of
//! 24 topic words) into one brain and 1 000 into another, then:
//!
//! - **fresh scan**: right after the import returns (the graph still catching up, so a
//!   seek scans the vectors it lacks), seeks of two or three common words to the large
//!   brain and the small one, interleaved on one kept-alive connection;
//! - **restart mid catch-up**: the owner stopped right after an import returns and started
//!   again; the first seek to the large brain timed from the request sent (the owner
//!   already listening), the brain opening for it. Each run imports into a fresh home;
//! - **dormant once settled**: once the graph has caught up, the owner stopped (its brains
//!   saved and closed) and started again: the first seek to the large, dormant brain.
//!
//! `--bin` runs another build of `medulla` (a copy of an older one, to alternate against).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::corpus::TOPICS;
use super::http::{bin_arg, start_with, Owner};
use super::import::{import, wait_idle, write_legacy, EVIDENCE_FILES};
use super::runner::{header, pct, sample};

const USAGE: &str =
    "usage: cargo xtask bench --reopen [--claims 100000] [--runs 3] [--seeks 40] [--bin PATH]";

/// The small brain the large one's seeks are set against.
const SMALL: usize = 1000;

/// The owner logs when a brain opens and when the vector graph catches up.
const LOG_FILTER: &str = "warn,brains::vector=info,brains::store::open=debug,medulla::owner=info";

/// The seek of round `i`: two or three of the vocabulary's words, each shared by
/// thousands of claims.
fn query(i: usize) -> String {
    let w = |j: usize| TOPICS[j % TOPICS.len()];
    if i.is_multiple_of(2) {
        format!("{} {}", w(i * 5), w(i * 7 + 3))
    } else {
        format!("{} {} {}", w(i * 3 + 1), w(i * 11 + 2), w(i + 9))
    }
}

fn seek(o: &Owner, root: &str, i: usize) -> Result<Value> {
    o.call(
        "seek",
        json!({ "query": query(i), "tier": "project", "limit": 10 }),
        root,
    )
}

/// A project directory `base/name` with the source files the claims cite.
fn project(base: &Path, name: &str) -> Result<String> {
    let root = base.join(name);
    std::fs::create_dir_all(root.join("src"))?;
    for k in 0..EVIDENCE_FILES {
        let body: String = (0..40)
            .map(|l| format!("// line {l} of module {k}\n"))
            .collect();
        std::fs::write(root.join(format!("src/mod{k}.rs")), body)?;
    }
    Ok(root.to_string_lossy().into_owned())
}

/// Where the newest open of the owner's log spent its time (`store opened`, at debug),
/// as "claim index X ms, vectors Y ms (Z deferred)".
fn open_profile(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let Some(line) = text.lines().rev().find(|l| l.contains("store opened")) else {
        return "no open logged".into();
    };
    let field = |key: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    format!(
        "claim index {:.0} ms, vectors {:.0} ms ({} deferred)",
        field("claim_index_us") / 1000.0,
        field("vectors_us") / 1000.0,
        field("vectors_deferred")
    )
}

/// Stop the owner (SIGTERM: its brains are saved and closed) and start it again over
/// the same home, appending to its log.
fn restart(o: Owner, bin: &Path, home: &Path, log: &Path) -> Result<Owner> {
    drop(o);
    let next = log.with_extension("next");
    let o = start_with(bin, home, true, Some((&next, LOG_FILTER)))?;
    Ok(o)
}

/// The first seek of an owner just started, in milliseconds, and whether it found
/// anything.
fn first_answer(o: &Owner, root: &str, i: usize) -> Result<(f64, usize)> {
    let t = Instant::now();
    let v = seek(o, root, i)?;
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    let found = v["results"]
        .as_array()
        .or_else(|| v["claims"].as_array())
        .map_or(0, |r| r.len());
    Ok((ms, found))
}

pub fn run(args: &[String]) -> Result<()> {
    for (i, a) in args.iter().enumerate() {
        let value =
            i > 0 && ["--claims", "--bin", "--runs", "--seeks"].contains(&args[i - 1].as_str());
        let known = ["--reopen", "--claims", "--bin", "--runs", "--seeks"];
        if !value && !known.contains(&a.as_str()) {
            bail!("unknown argument {a:?}: {USAGE}");
        }
    }
    let claims = crate::flag_num(args, "--claims", 100_000)?.max(1);
    let runs = crate::flag_num(args, "--runs", 3)?.max(1);
    let seeks = crate::flag_num(args, "--seeks", 40)?.max(1);
    let bin = bin_arg(args, USAGE)?;

    let work = tempfile::tempdir()?;
    let base = std::fs::canonicalize(work.path())?;
    let big = project(&base, "big")?;
    let small = project(&base, "small")?;
    let t = Instant::now();
    let big_files = base.join("legacy-big");
    let small_files = base.join("legacy-small");
    let made = write_legacy(&big_files, &big, claims)?;
    write_legacy(&small_files, &small, SMALL)?;
    eprintln!(
        "wrote {} + {SMALL} legacy files in {:.1} s",
        made.files,
        t.elapsed().as_secs_f64()
    );

    // Each run: a fresh home, the large brain imported; the owner stopped as soon as the
    // import returns and started again. The first run also times the fresh scan.
    let (mut big_ms, mut small_ms) = (Vec::new(), Vec::new());
    let mut restarted = Vec::new();
    let mut last: Option<(tempfile::TempDir, Owner, PathBuf)> = None;
    for run in 0..runs {
        // The previous run's owner stops first: its catching up is not this run's load.
        if let Some((_, prev, _)) = last.take() {
            drop(prev);
        }
        let home = tempfile::tempdir()?;
        let log = base.join(format!("owner-{run}.log"));
        let o = start_with(&bin, home.path(), true, Some((&log, LOG_FILTER)))?;
        let pid = o.child.id();
        o.call("bootstrap", json!({ "root": big }), &big)?;
        if run == 0 {
            o.call("bootstrap", json!({ "root": small }), &small)?;
            import(&bin, home.path(), &small, &small_files, false, pid)?;
            // The small brain's graph settles before the large import begins.
            std::thread::sleep(Duration::from_secs(3));
        }
        let t = Instant::now();
        import(&bin, home.path(), &big, &big_files, false, pid)?;
        eprintln!("run {run}: import {:.1} s", t.elapsed().as_secs_f64());
        if run == 0 {
            for i in 0..seeks {
                sample(&mut big_ms, || seek(&o, &big, i))?;
                sample(&mut small_ms, || seek(&o, &small, i))?;
            }
        }
        let o = restart(o, &bin, home.path(), &log)?;
        let (ms, found) = first_answer(&o, &big, run)?;
        let next = log.with_extension("next");
        eprintln!(
            "run {run}: first answer after the restart {ms:.0} ms ({found} found); open: {}",
            open_profile(&next)
        );
        restarted.push((ms, found));
        last = Some((home, o, log.with_extension("next")));
    }

    // Dormant once settled: the last run's owner catches up, then restarts leave the
    // brain dormant; the first seek opens it.
    let (home, mut o, log) = last.context("no run")?;
    wait_idle(o.child.id())?;
    eprintln!("settled (the owner idle)");
    let mut dormant = Vec::new();
    for run in 0..runs {
        o = restart(o, &bin, home.path(), &log)?;
        let (ms, found) = first_answer(&o, &big, run + 1)?;
        eprintln!(
            "dormant {run}: first answer {ms:.0} ms ({found} found); open: {}",
            open_profile(&log)
        );
        dormant.push((ms, found));
    }
    drop(o);

    let (p50b, p50s) = (pct(&mut big_ms, 0.5), pct(&mut small_ms, 0.5));
    let (p99b, p99s) = (pct(&mut big_ms, 0.99), pct(&mut small_ms, 0.99));
    let list = |v: &[(f64, usize)]| {
        v.iter()
            .map(|(ms, _)| format!("{ms:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let med = |v: &[(f64, usize)]| {
        let mut m: Vec<f64> = v.iter().map(|p| p.0).collect();
        super::runner::median(&mut m).unwrap_or(f64::NAN)
    };
    println!(
        "\n{} claims imported ({} files) against {SMALL}; seeks of two or three common words, \
         one kept-alive connection; {}:\n",
        made.live,
        made.files,
        bin.display()
    );
    header("| figure | value | goal |");
    println!(
        "| seek right after the import (graph catching up), p50 {claims} vs {SMALL} ({seeks} each, interleaved) | {p50b:.2} vs {p50s:.2} ms (**{:.1}×**); p99 {p99b:.1} vs {p99s:.1} ms | ≤ 3× |",
        p50b / p50s
    );
    println!(
        "| a restart right after the import: first answer from the {claims} brain ({runs} runs, median) | **{:.0} ms** ({}) | ≤ 100 ms |",
        med(&restarted),
        list(&restarted)
    );
    println!(
        "| first answer from the dormant {claims} brain once settled ({runs} restarts, median) | **{:.0} ms** ({}) | ≤ 50 ms |",
        med(&dormant),
        list(&dormant)
    );
    let empty = restarted
        .iter()
        .chain(&dormant)
        .filter(|p| p.1 == 0)
        .count();
    if empty > 0 {
        println!("\n{empty} first answers found nothing");
    }
    Ok(())
}
