//! `cargo xtask bench --autostart [--runs 10] [--no-model]`: what starting the owner on
//! demand costs (issue 47). A home whose `config.toml` listens on a free port holds one
//! bootstrapped project with a claim. Each run, with no owner running, times `medulla seek`
//! from the command's start to its exit (the cold start: the client finds no owner,
//! starts one, waits for it, and asks), then the same command with the owner running
//! (the warm call: one connection, nothing started), then stops the owner. The release
//! binary; medians of the runs, interleaved.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::http::require_binary;
use super::runner::{header, pct};

fn medulla(bin: &Path, home: &Path, cwd: &Path, args: &[&str]) -> Result<(Duration, String)> {
    let t = Instant::now();
    let out = Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .env("MEDULLA_HOME", home)
        .env("MEDULLA_LOG", "error")
        .env("NO_COLOR", "1")
        .env_remove("MEDULLA_URL")
        .env_remove("MEDULLA_NO_AUTOSTART")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("run medulla {args:?}"))?;
    let took = t.elapsed();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!(
            "medulla {args:?} failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok((took, text))
}

pub fn run(args: &[String]) -> Result<()> {
    let runs = crate::flag_num(args, "--runs", 10)?;
    let model = !args.iter().any(|a| a == "--no-model");
    let bin = require_binary()?;
    let home = tempfile::tempdir()?;
    let projects = tempfile::tempdir()?;
    let proj = std::fs::canonicalize(projects.path())?.join("p");
    std::fs::create_dir_all(&proj)?;
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "listen = \"127.0.0.1:0\"\nbackup_every_secs = 0\n{}",
            if model { "" } else { "no_model = true\n" }
        ),
    )?;
    let h = home.path();
    medulla(&bin, h, &proj, &["bootstrap"])?;
    medulla(
        &bin,
        h,
        &proj,
        &[
            "memorize",
            "--label",
            "release process",
            "--text",
            "we release with make release; never tag by hand",
        ],
    )?;
    let (_, status) = medulla(&bin, h, &proj, &["status", "--json"])?;
    let retrieval = serde_json::from_str::<serde_json::Value>(&status)?["retrieval"]
        .as_str()
        .unwrap_or("?")
        .to_string();
    if model && retrieval != "hybrid" {
        bail!("no embedding model was found (retrieval {retrieval}): `cargo xtask fetch-model` first, or pass --no-model");
    }
    medulla(&bin, h, &proj, &["stop"])?;
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (c, out) = medulla(&bin, h, &proj, &["seek", "release"])?;
        if !out.contains("release-process") {
            bail!("the cold seek did not find the claim: {out}");
        }
        let (w, _) = medulla(&bin, h, &proj, &["seek", "release"])?;
        cold.push(c);
        warm.push(w);
        medulla(&bin, h, &proj, &["stop"])?;
    }
    let ms = |d: Option<&Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3);
    let (cold_p50, warm_p50) = (pct(&mut cold, 0.5), pct(&mut warm, 0.5));
    println!(
        "autostart ({runs} runs, retrieval {retrieval}): `medulla seek` as a command, start to exit"
    );
    header("| case | p50 (ms) | max (ms) |");
    println!(
        "| no owner running: started, waited for, asked | {cold_p50:.1} | {:.1} |",
        ms(cold.last())
    );
    println!("| owner running | {warm_p50:.1} | {:.1} |", ms(warm.last()));
    println!(
        "| cold start to first answer (difference of the medians) | {:.1} | |",
        cold_p50 - warm_p50
    );
    Ok(())
}
