//! `cargo xtask bench --scale-store [--claims 100000] [--small 1000] [--rounds 300]`:
//! the `--scale` corpus (`zipf.rs`, every query word common) in two stores opened in
//! this process, no owner and no HTTP: where a seek's time goes as a store grows. Each
//! mode (lexical, vector, hybrid) is timed on the small and the large store in turn,
//! once the vectors are settled into the graph; the figure is the large store's p50 over
//! the small one's, per mode, within one run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use brains::recall::{RankMode, RecallQuery};
use brains::{Embedder, MemorizeInput, Store, StoreOptions};

use super::runner::{header, pct, sample};
use super::zipf::{self, Zipf};

const USAGE: &str =
    "usage: cargo xtask bench --scale-store [--claims 100000] [--small 1000] [--rounds 300]";

/// A store of `n` claims of the Zipf corpus (`seed`), vectors settled.
fn filled(
    dir: &std::path::Path,
    n: usize,
    seed: u64,
    embedder: &Arc<dyn Embedder>,
) -> Result<Store> {
    let opts = StoreOptions {
        embedder: Some(embedder.clone()),
        ..Default::default()
    };
    let (mut store, _) = Store::open(dir, opts)?;
    let z = Zipf::new();
    let t = Instant::now();
    for start in (0..n).step_by(1000) {
        let batch = (start..n.min(start + 1000))
            .map(|i| {
                let (label, text) = zipf::claim(&z, seed, i);
                MemorizeInput {
                    label,
                    text,
                    source_agent: "bench:scale".into(),
                    origin_brain: Some("/bench".into()),
                    ..Default::default()
                }
            })
            .collect();
        for r in store.memorize_many(batch)? {
            r?;
        }
    }
    let fill = t.elapsed().as_secs_f64();
    if store.vectors_unsettled() > 0 {
        // Right after the fill, the settler catching up in the background.
        let unsettled = store.vectors_unsettled();
        let mut during = vec![];
        for i in 0..100 {
            let q = RecallQuery {
                text: zipf::query(i),
                limit: 10,
                ..Default::default()
            };
            std::hint::black_box(sample(&mut during, || Ok(store.recall(&q)?))?);
        }
        println!(
            "{n} claims, hybrid right after the fill ({unsettled} vectors unsettled): p50 {:.3} ms, p99 {:.3} ms",
            pct(&mut during, 0.5),
            pct(&mut during, 0.99)
        );
    }
    let t = Instant::now();
    store.settle_vectors()?;
    println!(
        "{n} claims: filled in {fill:.1} s, vectors settled in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    Ok(store)
}

pub fn run(args: &[String]) -> Result<()> {
    let (mut large_n, mut small_n, mut rounds) = (100_000usize, 1_000usize, 300usize);
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let mut num =
            || -> Result<usize> { Ok(it.next().context(USAGE)?.replace('_', "").parse()?) };
        match a.as_str() {
            "--claims" => large_n = num()?,
            "--small" => small_n = num()?,
            "--rounds" => rounds = num()?,
            other => bail!("unknown argument {other:?}: {USAGE}"),
        }
    }
    let Some(embedder) = medulla::model::load_default()? else {
        bail!("no embedding model: the vector and hybrid rows need one (cargo xtask fetch-model)");
    };
    let temp = tempfile::tempdir()?;
    let small = filled(&temp.path().join("small"), small_n, 11, &embedder)?;
    let large = filled(&temp.path().join("large"), large_n, 29, &embedder)?;
    header("| mode | small p50 (ms) | p99 | large p50 (ms) | p99 | ratio |");
    for (name, mode) in [
        ("lexical", RankMode::Lexical),
        ("vector", RankMode::Vector),
        ("hybrid", RankMode::Auto),
    ] {
        let (mut s, mut l): (Vec<Duration>, Vec<Duration>) = (vec![], vec![]);
        for i in 0..rounds + 5 {
            let q = RecallQuery {
                text: zipf::query(i),
                limit: 10,
                mode,
                ..Default::default()
            };
            let (mut s1, mut l1) = (vec![], vec![]);
            std::hint::black_box(sample(&mut s1, || Ok(small.recall(&q)?))?);
            std::hint::black_box(sample(&mut l1, || Ok(large.recall(&q)?))?);
            if i >= 5 {
                s.extend(s1);
                l.extend(l1);
            }
        }
        let (sp, lp) = (pct(&mut s, 0.5), pct(&mut l, 0.5));
        println!(
            "| {name} | {sp:.3} | {:.3} | {lp:.3} | {:.3} | {:.1}× |",
            pct(&mut s, 0.99),
            pct(&mut l, 0.99),
            lp / sp
        );
    }
    Ok(())
}
