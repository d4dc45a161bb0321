//! `cargo xtask bench --team [--owners 3] [--samples 200] [--catchup 10000] [--offline 1000]
//! [--writes 500] [--poll-ms MS]`: the team tier on a real local PostgreSQL (a throwaway
//! server, `pg.rs`), every owner a release `medulla serve --no-model` over its own home,
//! joined through `medulla team join` as the team admin's `add-member` printed it. Each
//! phase has its own database, so no phase reads another's log:
//!
//! 1. local writes: memorize p50 on an owner with a team joined against one without
//!    (project tier into a routed brain; team tier against the personal medulla's
//!    doctrine birth, the same path), interleaved;
//! 2. propagation with `--owners` owners, then with 10: one writer, every other owner
//!    polling `seek --tier team` on its own kept-alive connection, in a tight loop, then
//!    pausing 5 ms between seeks; the time from the writer's memorize answer to each
//!    reader's first seek that returns the row. The slow samples are taken apart (when
//!    the writer's push began and committed, from the log's `at` and the commit
//!    timestamp), and, with the first owner count, writes are made while another
//!    database's transaction holds a transaction id (a reader pulls only up to the
//!    server's oldest transaction in flight);
//! 3. catch-up: `--catchup` team acts written through one owner, then fresh owners join,
//!    each timed from its start until `GET /api/team` says connected with lag 0 and a
//!    seek returns the newest act;
//! 4. offline: the server stopped, `--offline` team writes queue on one owner, the
//!    server started again; the time until the log holds every one, exactly once.
//!
//! Missed targets are reported, not failed: the bench exits non-zero on errors only.

mod catchup;
mod cluster;
mod local;
mod propagation;

use std::time::Duration;

use anyhow::{bail, Result};

use crate::bench::http::require_binary;
use crate::bench::runner::{header, median};
use crate::pg::Postgres;

use catchup::{catch_up, offline};
use local::local_writes;
use propagation::propagation;

const USAGE: &str = "usage: cargo xtask bench --team [--owners 3] [--samples 200] [--catchup 10000] [--offline 1000] [--writes 500] [--poll-ms MS]";

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "missed"
    }
}

struct Opts {
    owners: usize,
    samples: usize,
    catchup: usize,
    offline: usize,
    writes: usize,
    poll_ms: Option<usize>,
}

pub fn run(args: &[String]) -> Result<()> {
    let known = [
        "--owners",
        "--samples",
        "--catchup",
        "--offline",
        "--writes",
        "--poll-ms",
    ];
    for a in args.iter().filter(|a| a.starts_with("--")) {
        if !known.contains(&a.as_str()) {
            bail!("unknown argument {a:?}: {USAGE}");
        }
    }
    let opts = Opts {
        owners: crate::flag_num(args, "--owners", 3)?.max(2),
        samples: crate::flag_num(args, "--samples", 200)?.max(1),
        catchup: crate::flag_num(args, "--catchup", 10_000)?.max(1),
        offline: crate::flag_num(args, "--offline", 1000)?.max(1),
        writes: crate::flag_num(args, "--writes", 500)?.max(1),
        poll_ms: match args.iter().any(|a| a == "--poll-ms") {
            true => Some(crate::flag_num(args, "--poll-ms", 1000)?),
            false => None,
        },
    };
    require_binary()?;
    let mut pg = Postgres::start();
    // Commit times, for the slow samples' profile (a restart applies it).
    pg.psql("postgres", "ALTER SYSTEM SET track_commit_timestamp = on");
    pg.stop();
    pg.start_again();
    println!(
        "team bench: PostgreSQL on 127.0.0.1:{}, owners `serve --no-model`, poll {}",
        pg.port(),
        opts.poll_ms
            .map_or("the default (1000 ms)".to_string(), |ms| format!("{ms} ms"))
    );
    let local = local_writes(&pg, &opts)?;
    let mut props = Vec::new();
    let mut sizes = vec![opts.owners];
    if opts.owners != 10 {
        sizes.push(10);
    }
    for (k, n) in sizes.into_iter().enumerate() {
        props.extend(propagation(&pg, &opts, n, k == 0)?);
    }
    let catchup = catch_up(&pg, &opts)?;
    let offline = offline(&mut pg, &opts)?;

    println!("\n## summary\n");
    header("| figure | measured | target | |");
    for p in &props {
        println!(
            "| propagation, {} owners (1 writer, {} readers polling {}, {} samples): p50 / p99 / max | {:.1} / {:.1} / {:.1} ms | p50 ≤ 100 ms, p99 ≤ 1000 ms | {} |",
            p.owners,
            p.owners - 1,
            p.pause.map_or("in a tight loop".to_string(), |d| format!("every {} ms", d.as_millis())),
            opts.samples,
            p.p50,
            p.p99,
            p.max,
            verdict(p.p50 <= 100.0 && p.p99 <= 1000.0)
        );
    }
    println!(
        "| catch-up of {} acts on join, from the owner's start (median of {} / max) | {:.2} / {:.2} s | ≤ 3 s | {} |",
        opts.catchup,
        catchup.len(),
        median_secs(&catchup),
        max_secs(&catchup),
        verdict(max_secs(&catchup) <= 3.0)
    );
    for (what, without, with) in &local {
        let r = with / without;
        println!(
            "| memorize p50, {what}: with a team / without | {with:.3} / {without:.3} ms = {r:.2}× | ≤ 1.2× | {} |",
            verdict(r <= 1.2)
        );
    }
    println!(
        "| {} writes queued offline: in the log after the restart / exactly once | {:.2} s / {} | ≤ 5 s, once | {} |",
        opts.offline,
        offline.delivered.as_secs_f64(),
        if offline.once { "yes" } else { "NO" },
        verdict(offline.delivered <= Duration::from_secs(5) && offline.once)
    );
    Ok(())
}

fn median_secs(v: &[Duration]) -> f64 {
    median(&mut v.to_vec()).unwrap_or_default().as_secs_f64()
}

fn max_secs(v: &[Duration]) -> f64 {
    v.iter().max().copied().unwrap_or_default().as_secs_f64()
}
