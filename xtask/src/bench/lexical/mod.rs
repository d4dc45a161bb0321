//! `cargo xtask bench-lexical [--sizes 100000,1000000] [--ops 300]` (built with
//! `--features tantivy-compare`): the lexical index against tantivy on `cargo xtask
//! bench`'s corpus and queries (issue 24). For each size and engine: build time, size on
//! disk, open time and resident memory in a fresh process, top-50 query latency, the
//! overlap of the two top-10s, and what a write costs until the next query sees it.
//!
//! Tantivy is given our exact tokens (a [`Tokenizer`] over [`brains::lexical::tokenize`])
//! and one field that holds the label twice and the text once: a term's frequency is
//! then 2 × label + text and the length 2 × label + text, which is how our index counts
//! them, so both compute the same BM25 (k1 1.2, b 0.75). What still differs: our idf adds
//! 100 pseudo-documents, tantivy scores in f32 and quantises lengths above 40 tokens, and
//! our search lets a common term (held by more than max(500, 2 % of the claims)) add to
//! the candidates of a query's selective terms without nominating its own. A third row
//! runs our index with that split off (plain BM25 over every term) to show which of the
//! differences moves the results.

mod agree;
mod fresh;
mod measure;
mod tantivy_index;

use anyhow::{bail, Context, Result};
use brains::MemorizeInput;

use crate::bench::corpus::{input, Gen};
use crate::bench::runner::{fsync_probe, header, pct};

pub(crate) use fresh::child;
use measure::bench_size;

const USAGE: &str = "usage: cargo xtask bench-lexical [--sizes 100000,1000000] [--ops 300]";
/// Results per query, as recall asks the lexical side for.
const K: usize = 50;
/// The depth at which the two engines' answers are compared.
const AGREE_AT: usize = 10;
/// Tantivy's indexing memory, shared by its writer threads (one per core here).
const WRITER_BUDGET: usize = 256 << 20;
/// Timed write-then-find cycles per engine.
const WRITE_CYCLES: usize = 100;
const TOKENIZER: &str = "medulla";

fn corpus_seed(size: usize) -> u64 {
    0x9E37_79B9_7F4A_7C15 ^ size as u64
}

fn query_seed(size: usize) -> u64 {
    0xC0FF_EE00_D15E_A5E5 ^ size as u64
}

/// The queries of `cargo xtask bench`: two frequent words and two from the Zipf tail.
fn queries(size: usize, n: usize) -> Vec<String> {
    let mut g = Gen(query_seed(size));
    (0..n)
        .map(|_| format!("{} {}", g.words(2), g.rare(2)))
        .collect()
}

/// The corpus of `cargo xtask bench`, claim `i` under the slug `c{i}`.
fn corpus(size: usize) -> impl Iterator<Item = (String, MemorizeInput)> {
    let mut g = Gen(corpus_seed(size));
    (0..size).map(move |i| (format!("c{i}"), input(&mut g, i)))
}

pub fn run(args: &[String]) -> Result<()> {
    let mut sizes = vec![100_000, 1_000_000];
    let mut ops = 300;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sizes" => {
                sizes = it
                    .next()
                    .context(USAGE)?
                    .split(',')
                    .map(|s| s.trim().parse())
                    .collect::<Result<_, _>>()
                    .context(USAGE)?
            }
            "--ops" => ops = it.next().context(USAGE)?.parse().context(USAGE)?,
            other => bail!("unknown argument {other:?}: {USAGE}"),
        }
    }
    if ops == 0 {
        bail!("--ops must be at least 1");
    }
    // The durable commit's floor on this disk (tantivy's commit syncs several files).
    let mut samples = fsync_probe(100)?;
    println!(
        "disk: write 4 KiB + fsync p50 {:.3} ms, p99 {:.3} ms",
        pct(&mut samples, 0.5),
        pct(&mut samples, 0.99)
    );
    let mut lines = vec![];
    let mut notes = vec![];
    for &size in &sizes {
        let r = bench_size(size, ops)?;
        lines.extend(r.lines);
        notes.extend(r.notes);
    }
    header(&format!("| claims | engine | build | on disk (MB) | open, fresh process (ms) | open + first query (ms) | top-{K} query p50 / p99 (ms) | RSS after open + {ops} queries (MB) | write until visible p50 / p99 (ms) |"));
    for l in lines {
        println!("{l}");
    }
    for n in notes {
        println!("- {n}");
    }
    Ok(())
}
