//! `cargo xtask bench --peers`: one memory workload, one MCP client, several servers:
//! medulla over HTTP and through its stdio bridge, the MCP reference memory server
//! (`@modelcontextprotocol/server-memory`, installed with npm under `target/peers/`) and
//! basic-memory (installed with pip into a virtualenv under `target/peers/`), with its
//! full-text search and with its hybrid search on a local model. `medulla-http-fresh`
//! opens a new connection per call, to show medulla's cost without a kept-alive stall.
//!
//! The workload: N writes of codebase facts ("service × topic" sentences, deterministic,
//! each with a distinct label), then searches, half verbatim and half paraphrased by
//! hand-written templates; hit@5 is the target's label among the first five results.
//! Every server runs alone, loopback or stdio only, and every loop is bounded.
//!
//! Layout: `workload` generates the facts and the searches; `install` fetches the
//! other servers (npm, pip, a local model cache); `drive` starts each peer and speaks
//! its tools; `report` prints the table. This file runs the workload against each.

mod drive;
mod install;
mod report;
mod workload;

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::mcp;
use drive::{search, start_peer, write, Running};
use install::Installs;
use report::{print_table, Outcome};
use workload::{facts, searches, MAX_FACTS};

const ALL_PEERS: &[&str] = &[
    "medulla-http",
    "medulla-bridge",
    "medulla-http-lexical",
    "medulla-http-fresh",
    "server-memory",
    "basic-memory-text",
    "basic-memory-hybrid",
];

fn measure(
    name: &str,
    size: usize,
    n_search: usize,
    budget: Duration,
    installs: &mut Installs,
) -> Outcome {
    let mut out = Outcome {
        peer: name.into(),
        size,
        ..Default::default()
    };
    let mut r = match start_peer(name, installs) {
        Ok(r) => r,
        Err(e) => {
            out.skipped = Some(format!("cannot run: {e:#}"));
            return out;
        }
    };
    out.note = r.note.clone();
    out.startup_ms = r.startup.as_secs_f64() * 1000.0;
    let facts = facts(size, 42);
    let t = Instant::now();
    for f in &facts {
        if t.elapsed() > budget {
            out.skipped = Some(format!(
                "wrote {} of {size} facts in the {} s budget; searches skipped",
                out.written,
                budget.as_secs()
            ));
            break;
        }
        let s = Instant::now();
        match write(&mut r, f) {
            Ok(()) => {
                out.write.push(s.elapsed());
                out.written += 1;
            }
            Err(e) => {
                out.write_errors += 1;
                out.first_error.get_or_insert(format!("write: {e}"));
                if out.write_errors >= 20 && out.written == 0 {
                    out.skipped = Some(format!("every write failed: {e}"));
                    break;
                }
            }
        }
    }
    if out.skipped.is_none() {
        for (target, q, verbatim) in searches(&facts, n_search) {
            let s = Instant::now();
            let got = search(&mut r, &q);
            let took = s.elapsed();
            if verbatim {
                out.verbatim += 1;
            } else {
                out.para += 1;
            }
            match got {
                Ok(labels) => {
                    out.search.push(took);
                    let want = facts[target].label.to_lowercase();
                    if labels.iter().any(|l| l.trim().to_lowercase() == want) {
                        if verbatim {
                            out.hits_verbatim += 1;
                        } else {
                            out.hits_para += 1;
                        }
                    }
                }
                Err(e) => {
                    out.search_errors += 1;
                    out.first_error.get_or_insert(format!("search: {e}"));
                }
            }
        }
    }
    out.rss_kib = r.pids.iter().map(|p| mcp::rss_tree_kib(*p)).sum();
    if let Some(o) = &r.owner {
        // The bridge's row counts the owner too; say so.
        if r.pids.len() > 1 {
            out.note = format!(
                "{}; RSS is owner {:.0} MiB + bridge {:.0} MiB",
                out.note,
                o.rss_kib() as f64 / 1024.0,
                mcp::rss_tree_kib(r.pids[1]) as f64 / 1024.0
            );
        }
    }
    let Running { session, owner, .. } = r;
    drop(session);
    drop(owner);
    out
}

pub fn run(args: &[String]) -> Result<()> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "usage: cargo xtask bench --peers [--sizes 200,2000] [--searches 100] [--budget-secs 300] [--only {}]",
            ALL_PEERS.join(",")
        );
        return Ok(());
    }
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let sizes: Vec<usize> = value("--sizes")
        .unwrap_or_else(|| "200,2000".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .context("--sizes takes numbers, e.g. 200,2000")
        })
        .collect::<Result<_>>()?;
    let n_search = crate::flag_num(args, "--searches", 100)?;
    let budget = Duration::from_secs(crate::flag_num(args, "--budget-secs", 300)? as u64);
    let only: Vec<String> = value("--only")
        .map(|o| o.split(',').map(str::to_string).collect())
        .unwrap_or_else(|| ALL_PEERS.iter().map(|s| s.to_string()).collect());
    for p in &only {
        if !ALL_PEERS.contains(&p.as_str()) {
            bail!("unknown peer {p:?}: one of {}", ALL_PEERS.join(", "));
        }
    }
    if sizes.iter().any(|&s| s == 0 || s > MAX_FACTS) || n_search == 0 {
        bail!("--sizes must be within 1..={MAX_FACTS} and --searches at least 1");
    }
    println!(
        "workload: per size, that many facts written one by one, then {n_search} searches (half verbatim, half paraphrased); hit@5 = the target's label among the first 5 results; write budget {} s per peer and size",
        budget.as_secs()
    );
    let mut installs = Installs::default();
    let mut results = Vec::new();
    for &size in &sizes {
        for p in &only {
            eprintln!("{p}: {size} facts…");
            let t = Instant::now();
            let o = measure(p, size, n_search, budget, &mut installs);
            eprintln!(
                "{p}: {size} facts done in {:.0} s{}",
                t.elapsed().as_secs_f64(),
                o.skipped
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            );
            results.push(o);
        }
    }
    print_table(&mut results);
    Ok(())
}
