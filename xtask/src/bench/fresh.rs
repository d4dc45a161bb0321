//! `cargo xtask bench --fresh [--claims 100000] [--queries 200]`: the vector index alone
//! (no store, no owner) right after a bulk write, on the `--scale` corpus (`zipf.rs`)
//! embedded by the model: how long a search takes and how much of the exact top 10 it
//! finds (a) while the settler is held and the whole backlog is scanned, (b) once the
//! backlog is parted into cells (`brains/src/vector/cells.rs`), the settler still held,
//! (c) the same while the graph catches up, (d) once the graph holds everything. Searches ask for 50, as a recall of 10 does.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use brains::vector::{Precision, VectorIndex};

use super::runner::{header, pct, sample};
use super::zipf::{self, Zipf};

const USAGE: &str = "usage: cargo xtask bench --fresh [--claims 100000] [--queries 200]";
/// Candidates a search asks for (a recall of 10 asks its dense side for 50).
const DEPTH: usize = 50;

fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
    v
}

/// One phase: p50 and p99 of the searches, the share of the exact top 10 found, and the
/// fresh vectors before and after.
fn phase(name: &str, ix: &VectorIndex, queries: &[Vec<f32>], truth: &[Vec<u64>]) -> Result<()> {
    let before = ix.fresh();
    let mut times: Vec<Duration> = vec![];
    let mut found = 0usize;
    for (q, t) in queries.iter().zip(truth) {
        let hits = sample(&mut times, || Ok(ix.search_all(q, DEPTH)?))?;
        found += t.iter().filter(|k| hits.iter().any(|h| h.0 == **k)).count();
    }
    println!(
        "| {name} | {before} → {} | {} | {:.3} | {:.3} | {:.3} |",
        ix.fresh(),
        ix.fresh_in_cells(),
        pct(&mut times, 0.5),
        pct(&mut times, 0.99),
        found as f64 / (10 * truth.len()) as f64
    );
    Ok(())
}

pub fn run(args: &[String]) -> Result<()> {
    let (mut n, mut nq) = (100_000usize, 200usize);
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let mut num =
            || -> Result<usize> { Ok(it.next().context(USAGE)?.replace('_', "").parse()?) };
        match a.as_str() {
            "--claims" => n = num()?,
            "--queries" => nq = num()?,
            other => bail!("unknown argument {other:?}: {USAGE}"),
        }
    }
    let Some(embedder) = medulla::model::load_default()? else {
        bail!("no embedding model: this bench embeds its corpus (cargo xtask fetch-model)");
    };
    let z = Zipf::new();
    let texts: Vec<String> = (0..n)
        .map(|i| {
            let (label, text) = zipf::claim(&z, 29, i);
            format!("{label}\n{text}")
        })
        .collect();
    let t = Instant::now();
    let mut rows: Vec<Vec<f32>> = Vec::with_capacity(n);
    for chunk in texts.chunks(1000) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        rows.extend(embedder.embed(&refs)?);
    }
    let queries: Vec<Vec<f32>> = (0..nq)
        .map(|i| Ok(brains::embed_query(embedder.as_ref(), &zipf::query(i))?.to_vec()))
        .collect::<Result<_>>()?;
    // The exact top 10 of each query, by cosine over every row.
    let units: Vec<Vec<f32>> = rows.iter().cloned().map(unit).collect();
    let truth: Vec<Vec<u64>> = queries
        .iter()
        .map(|q| {
            let q = unit(q.clone());
            let mut s: Vec<(u64, f32)> = units
                .iter()
                .enumerate()
                .map(|(i, v)| (i as u64 + 1, v.iter().zip(&q).map(|(a, b)| a * b).sum()))
                .collect();
            s.select_nth_unstable_by(9, |a, b| b.1.total_cmp(&a.1));
            s[..10].iter().map(|p| p.0).collect()
        })
        .collect();
    drop(units);
    println!(
        "{n} rows of {} dimensions embedded and their exact top 10 found in {:.1} s",
        embedder.dims(),
        t.elapsed().as_secs_f64()
    );
    let temp = tempfile::tempdir()?;
    let mut ix = VectorIndex::empty(temp.path(), embedder.dims(), Precision::default())?;
    ix.hold_settling(Duration::from_secs(3600));
    for (start, chunk) in rows.chunks(1000).enumerate() {
        let items: Vec<(u64, &[f32])> = chunk
            .iter()
            .enumerate()
            .map(|(i, v)| ((start * 1000 + i) as u64 + 1, v.as_slice()))
            .collect();
        ix.add_many(&items)?;
    }
    header("| phase | fresh vectors (start → end) | in cells | p50 (ms) | p99 (ms) | exact top 10 found |");
    phase("held: the backlog scanned whole", &ix, &queries, &truth)?;
    // The cells alone, the settler still held (it makes them itself once it runs).
    let t = Instant::now();
    ix.part_fresh();
    let parted = t.elapsed();
    phase("held: the backlog in cells", &ix, &queries, &truth)?;
    let t = Instant::now();
    ix.hold_settling(Duration::ZERO);
    phase("catching up: the backlog in cells", &ix, &queries, &truth)?;
    ix.settle_all()?;
    phase("settled: the graph alone", &ix, &queries, &truth)?;
    println!(
        "parted into cells in {:.0} ms; settled {:.1} s after the hold ended",
        parted.as_secs_f64() * 1000.0,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
