//! `cargo xtask bench --hnsw [--sizes 100000] [--queries 200]`: the vector index's
//! settings measured on the bench corpus's real embeddings (the model `bench` uses), to
//! choose the store's by measurement: for each precision, connectivity and insert
//! expansion, the build rate on every core; at each search expansion, the search
//! latency of a recall's depth (50) and the share of the exact top 10 found (as the
//! graph ranks them, and once the 50 it nominates are rescored with their f32 vectors,
//! as an eight-bit store does); and the memory the index takes. A last row measures the
//! store's own graph (`VectorIndex`: its own eight-bit codes, its settings) the same way.
//!
//! `--strays` measures instead, in the store's settings built on every core, how many
//! vectors a search for their own vector does not find: usearch's build alone against
//! the store's (`VectorIndex::build_from`, which links such strays again), with the
//! time each build takes.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use super::corpus::{input, Gen};
use super::runner::{header, list, pct, sample};

/// (precision, connectivity (0 = usearch's 16), insert expansion (0 = usearch's 128),
/// the search expansions each built index is measured at (64 is usearch's default)).
#[allow(clippy::type_complexity)]
const CONFIGS: &[(ScalarKind, usize, usize, &[usize])] = &[
    (ScalarKind::F32, 0, 0, &[64]),
    (ScalarKind::F16, 0, 64, &[64]),
    (ScalarKind::BF16, 0, 64, &[64]),
    (ScalarKind::I8, 0, 64, &[64, 96]),
    (ScalarKind::I8, 0, 48, &[64, 96, 128]),
    (ScalarKind::I8, 0, 40, &[96, 112, 128]),
    (ScalarKind::I8, 0, 32, &[96, 128, 160]),
    (ScalarKind::I8, 12, 48, &[96, 128]),
];

const DEPTH: usize = 50;

/// The dot product (the cosine of unit vectors, as the model's are).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub fn run(args: &[String]) -> Result<()> {
    let mut sizes = vec![100_000];
    let mut queries = 200;
    let mut strays = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sizes" => {
                sizes = list(it.next(), "--sizes takes a list like 10000,100000")?
            }
            "--queries" => queries = it.next().context("--queries takes a number")?.parse()?,
            "--strays" => strays = true,
            other => bail!("unknown argument {other:?}: usage: cargo xtask bench --hnsw [--sizes 100000] [--queries 200] [--strays]"),
        }
    }
    let Some(model) = medulla::model::load_default()? else {
        bail!("no embedding model: run `cargo xtask fetch-model`");
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "usearch kernels: {}; {threads} build threads",
        usearch::hardware_acceleration_available()
    );
    if strays {
        header("| vectors | build | build time (s) | not found by their own vector |");
    } else {
        header(&format!("| vectors | precision | connectivity | expansion (add) | expansion (search) | build (vectors/s) | search k={DEPTH} p50 / p99 (ms) | exact top 10 found | … after rescoring the {DEPTH} | index memory (MB) |"));
    }
    for &size in &sizes {
        let mut g = Gen(0x9E37_79B9_7F4A_7C15 ^ size as u64);
        let texts: Vec<String> = (0..size)
            .map(|i| {
                let c = input(&mut g, i);
                format!("{}\n{}", c.label, c.text)
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut vecs: Vec<Vec<f32>> = Vec::with_capacity(size);
        for chunk in refs.chunks(4096) {
            vecs.extend(model.embed(chunk)?);
        }
        if strays {
            stray_counts(&vecs, threads)?;
            continue;
        }
        let qtexts: Vec<String> = (0..queries)
            .map(|_| format!("{} {}", g.words(2), g.rare(2)))
            .collect();
        let qrefs: Vec<&str> = qtexts.iter().map(String::as_str).collect();
        let qs = model.embed(&qrefs)?;
        // The exact tenth-best cosine of each query, by brute force over the f32 vectors:
        // a found vector at least that similar is one of the exact top 10 (ties count,
        // and this corpus has many).
        let tenth: Vec<f32> = qs
            .iter()
            .map(|q| {
                let mut all: Vec<f32> = vecs.iter().map(|v| dot(v, q)).collect();
                all.select_nth_unstable_by(9, |a, b| b.total_cmp(a));
                all[9]
            })
            .collect();
        for &(q, conn, exp, searches) in CONFIGS {
            let opts = IndexOptions {
                dimensions: model.dims(),
                metric: MetricKind::Cos,
                quantization: q,
                connectivity: conn,
                expansion_add: exp,
                expansion_search: 0,
                multi: false,
            };
            let (index, took) = build(&opts, &vecs, threads)?;
            let rate = size as f64 / took;
            for &search in searches {
                index.change_expansion_search(search);
                let mut lat = Vec::with_capacity(qs.len());
                let (mut found, mut rescored) = (0usize, 0usize);
                for (q, tenth) in qs.iter().zip(&tenth) {
                    let m = sample(&mut lat, || Ok(index.search(q, DEPTH)?))?;
                    let (f, r) = exact_found(&m.keys, &vecs, q, *tenth);
                    found += f;
                    rescored += r;
                }
                println!(
                    "| {size} | {q:?} | {} | {} | {} | {rate:.0} | {:.3} / {:.3} | {:.3} | {:.3} | {:.0} |",
                    if conn == 0 { 16 } else { conn },
                    if exp == 0 { 128 } else { exp },
                    search,
                    pct(&mut lat, 0.5),
                    pct(&mut lat, 0.99),
                    found as f64 / (10 * qs.len()) as f64,
                    rescored as f64 / (10 * qs.len()) as f64,
                    index.memory_usage() as f64 / 1e6
                );
            }
        }
        store_row(&vecs, &qs, &tenth)?;
    }
    Ok(())
}

/// The store's own graph (`VectorIndex`, built as a rebuild on open builds it: its own
/// eight-bit codes, each vector scaled by its largest component and rounded, insert
/// expansion 40, search expansion 128) measured as the rows above measure usearch's.
fn store_row(vecs: &[Vec<f32>], qs: &[Vec<f32>], tenth: &[f32]) -> Result<()> {
    let (size, dims) = (vecs.len(), vecs[0].len());
    let dir = tempfile::tempdir()?;
    let mut store =
        brains::vector::VectorIndex::empty(dir.path(), dims, brains::vector::Precision::I8)?;
    let t = Instant::now();
    store.build_from(size, keyed_chunks(vecs))?;
    let rate = size as f64 / t.elapsed().as_secs_f64();
    let mut lat = Vec::with_capacity(qs.len());
    let (mut found, mut rescored) = (0usize, 0usize);
    for (q, tenth) in qs.iter().zip(tenth) {
        let m = sample(&mut lat, || Ok(store.search_all(q, DEPTH)?))?;
        let keys: Vec<u64> = m.iter().map(|(k, _)| *k).collect();
        let (f, r) = exact_found(&keys, vecs, q, *tenth);
        found += f;
        rescored += r;
    }
    println!(
        "| {size} | I8, the store's own codes | 16 | 40 | 128 | {rate:.0} | {:.3} / {:.3} | {:.3} | {:.3} | |",
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99),
        found as f64 / (10 * qs.len()) as f64,
        rescored as f64 / (10 * qs.len()) as f64,
    );
    Ok(())
}

/// Of a search's `keys` (best first, as the graph ranks them; a key is its position in
/// `vecs` plus one), how many of its first 10, and of the 10 best once rescored with
/// their f32 vectors, are among the exact top 10 of `q` (as similar as the exact
/// `tenth`).
fn exact_found(keys: &[u64], vecs: &[Vec<f32>], q: &[f32], tenth: f32) -> (usize, usize) {
    let exact = |k: &u64| dot(&vecs[*k as usize - 1], q);
    let found = keys
        .iter()
        .take(10)
        .filter(|k| exact(k) >= tenth - 1e-6)
        .count();
    let mut sims: Vec<f32> = keys.iter().map(exact).collect();
    sims.sort_by(|a, b| b.total_cmp(a));
    let rescored = sims.iter().take(10).filter(|s| **s >= tenth - 1e-6).count();
    (found, rescored)
}

/// `vecs` in chunks of 4 096 as a rebuild reads them, keyed by position + 1.
fn keyed_chunks(
    vecs: &[Vec<f32>],
) -> impl Iterator<Item = Result<Vec<(u64, Vec<f32>)>, brains::StoreError>> + '_ {
    vecs.chunks(4096).enumerate().map(|(c, chunk)| {
        Ok(chunk
            .iter()
            .enumerate()
            .map(|(j, v)| ((c * 4096 + j) as u64 + 1, v.clone()))
            .collect())
    })
}

/// The vectors of `vecs` (key = position + 1) that a search for their own vector does
/// not find, in usearch's build on `threads` threads and in the store's, in the store's
/// settings (eight bits, insert expansion 40, search expansion 128). A vector whose
/// twin is found first counts as found.
fn stray_counts(vecs: &[Vec<f32>], threads: usize) -> Result<()> {
    let (size, dims) = (vecs.len(), vecs[0].len());
    let missed = |found: &dyn Fn(&[f32]) -> Option<u64>| {
        (1..=size as u64)
            .filter(|k| {
                let v = &vecs[*k as usize - 1];
                found(v).is_none_or(|t| t != *k && dot(&vecs[t as usize - 1], v) < 0.9999)
            })
            .count()
    };
    let options = IndexOptions {
        dimensions: dims,
        metric: MetricKind::Cos,
        quantization: ScalarKind::I8,
        connectivity: 0,
        expansion_add: 40,
        expansion_search: 128,
        multi: false,
    };
    let (index, took) = build(&options, vecs, threads)?;
    let lost = missed(&|v| index.search(v, 1).ok()?.keys.first().copied());
    println!("| {size} | usearch on {threads} threads | {took:.2} | {lost} |");
    drop(index);

    let dir = tempfile::tempdir()?;
    let mut store =
        brains::vector::VectorIndex::empty(dir.path(), dims, brains::vector::Precision::I8)?;
    let t = Instant::now();
    store.build_from(size, keyed_chunks(vecs))?;
    let took = t.elapsed().as_secs_f64();
    let lost = missed(&|v| Some(store.search_all(v, 1).ok()?.first()?.0));
    println!("| {size} | the store's (strays linked again) | {took:.2} | {lost} |");
    Ok(())
}

/// usearch's index of `vecs` (key = position + 1), built on `threads` threads, each
/// inserting its own part; and the seconds the build took.
fn build(options: &IndexOptions, vecs: &[Vec<f32>], threads: usize) -> Result<(Index, f64)> {
    let size = vecs.len();
    let index = Index::new(options)?;
    index.reserve_capacity_and_threads(size + 1, threads)?;
    let t = Instant::now();
    std::thread::scope(|s| {
        let part = size.div_ceil(threads);
        for (ti, chunk) in vecs.chunks(part).enumerate() {
            let index = &index;
            s.spawn(move || {
                for (j, v) in chunk.iter().enumerate() {
                    index
                        .add((ti * part + j) as u64 + 1, v)
                        .expect("an add succeeds");
                }
            });
        }
    });
    Ok((index, t.elapsed().as_secs_f64()))
}
