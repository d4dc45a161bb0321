//! `cargo xtask bench --worktree [--claims 5000] [--seeks 500] [--no-model]`: what routing
//! through the repository costs (issue 63). One release owner, one repository with a
//! brain, a linked worktree of it and a second clone: seek p50 from each, over kept-alive
//! MCP sessions, the three callers interleaved round by round. The target: a worktree's
//! and a clone's p50 within 1.3× of the main checkout's.

use std::path::Path;

use anyhow::{bail, Result};
use serde_json::json;

use super::http::{session, start_logged};
use super::runner::{header, pct, sample};
use crate::mcp::Session;

fn git(dir: &Path, args: &[&str]) -> Result<()> {
    crate::gitcmd::git(dir, args).map_err(anyhow::Error::msg)
}

pub fn run(args: &[String]) -> Result<()> {
    for a in args.iter().filter(|a| a.starts_with("--")) {
        if !["--claims", "--seeks", "--no-model"].contains(&a.as_str()) {
            bail!("unknown argument {a:?}: usage: cargo xtask bench --worktree [--claims 5000] [--seeks 500] [--no-model]");
        }
    }
    let claims = crate::flag_num(args, "--claims", 5_000)?;
    let seeks = crate::flag_num(args, "--seeks", 500)?.max(10);
    let model = !args.iter().any(|a| a == "--no-model");
    let home = tempfile::tempdir()?;
    let projects = tempfile::tempdir()?;
    let base = std::fs::canonicalize(projects.path())?;
    let main = base.join("shop");
    std::fs::create_dir_all(main.join("src"))?;
    std::fs::write(main.join("src/lib.rs"), "// shop\n")?;
    git(&main, &["init", "-q"])?;
    git(&main, &["add", "-A"])?;
    git(&main, &["commit", "-q", "-m", "first"])?;
    git(&main, &["worktree", "add", "-q", "../shop-feature"])?;
    git(&base, &["clone", "-q", "shop", "shop-clone"])?;
    let roots: Vec<String> = ["shop", "shop-feature", "shop-clone"]
        .iter()
        .map(|d| base.join(d).to_string_lossy().into_owned())
        .collect();
    let o = start_logged(home.path(), model, None)?;
    o.call("bootstrap", json!({ "root": roots[0] }), &roots[0])?;
    for i in 0..claims {
        o.call(
            "memorize",
            json!({
                "label": format!("note {i}"),
                "text": format!("the checkout flow {} retries the payment {} times", i % 89, i % 7),
            }),
            &roots[0],
        )?;
    }
    let mut sessions = roots
        .iter()
        .map(|r| session(&o, r))
        .collect::<Result<Vec<_>>>()?;
    // Each caller once before timing: the worktree's and the clone's first request reads
    // their repository (and records the checkout), as it would once per owner.
    for s in &mut sessions {
        let a = s.call_tool("seek", json!({ "query": "checkout flow 3" }))?;
        if a.is_error || !a.text.contains("note") {
            bail!("a caller found nothing: {}", a.text);
        }
    }
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for i in 0..seeks {
        let q = json!({ "query": format!("checkout flow {} payment", i % 89) });
        // The order rotates, so no caller always goes first.
        for k in 0..3 {
            let j = (i + k) % 3;
            let s = &mut sessions[j];
            sample(&mut times[j], || {
                s.call_tool("seek", q.clone())?;
                Ok(())
            })?;
        }
    }
    let p: Vec<f64> = times.iter_mut().map(|t| pct(t, 0.5)).collect();
    header(&format!(
        "| caller ({claims} claims, {seeks} seeks each, {}) | seek p50 (ms) | ÷ main checkout |",
        if model { "hybrid" } else { "lexical" }
    ));
    for (name, v) in ["main checkout", "linked worktree", "second clone"]
        .iter()
        .zip(&p)
    {
        println!("| {name} | {v:.3} | {:.2} |", v / p[0]);
    }
    Ok(())
}
