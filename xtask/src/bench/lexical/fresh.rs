//! The fresh process the lexical bench measures open time and resident memory in
//! (`xtask bench-lexical-child`), and what it reports back.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use brains::index::ClaimIndex;
use brains::recall::RankMode;
use brains::{RecallQuery, Store, StoreOptions};

use super::agree::meta;
use super::tantivy_index::{open_tantivy, View};
use super::{corpus, queries, K};

pub(super) fn dir_size(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let m = e.metadata()?;
        total += if m.is_dir() {
            dir_size(&e.path())?
        } else {
            m.len()
        };
    }
    Ok(total)
}

pub(super) fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Resident memory of this process (kB): all, anonymous, file-backed (mapped files).
fn rss_kb() -> Result<[u64; 3]> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let field = |name: &str| -> Result<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("no {name} in /proc/self/status"))
    };
    Ok([field("VmRSS:")?, field("RssAnon:")?, field("RssFile:")?])
}

/// What a fresh process reports: open, open + first query (ms), and its resident memory
/// after every query (kB: all, anonymous, file-backed).
pub(super) struct Fresh {
    pub(super) open_ms: f64,
    pub(super) first_ms: f64,
    pub(super) rss: [u64; 3],
}

pub(super) fn fresh(args: &[&str]) -> Result<Fresh> {
    let out = std::process::Command::new(std::env::current_exe()?)
        .arg("bench-lexical-child")
        .args(args)
        .output()?;
    if !out.status.success() {
        bail!(
            "bench-lexical-child {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .with_context(|| format!("bench-lexical-child printed {text:?}"))?;
    let [open_ms, first_ms, all, anon, file] = v[..] else {
        bail!("bench-lexical-child printed {text:?}");
    };
    Ok(Fresh {
        open_ms,
        first_ms,
        rss: [all as u64, anon as u64, file as u64],
    })
}

/// `xtask bench-lexical-child tantivy DIR SIZE OPS | store DIR SIZE OPS | index SIZE OPS`:
/// open (or, for `index`, build from the corpus: our bare index is not persisted on its
/// own), answer the bench queries, print "open_ms first_ms rss_kb anon_kb file_kb".
pub(crate) fn child(args: &[String]) -> Result<()> {
    let num = |s: &String| -> Result<usize> { s.parse().context("a number") };
    let (open_ms, first_ms) = match args {
        [kind, dir, size, ops] if kind == "tantivy" => {
            let qs = queries(num(size)?, num(ops)?);
            let t = Instant::now();
            let (_index, reader, body) = open_tantivy(Path::new(dir))?;
            let view = View::new(&reader, body)?;
            let open_ms = t.elapsed().as_secs_f64() * 1000.0;
            std::hint::black_box(view.search(&qs[0], K)?);
            let first_ms = t.elapsed().as_secs_f64() * 1000.0;
            for q in &qs {
                std::hint::black_box(view.search(q, K)?);
            }
            print_fresh(open_ms, first_ms)?;
            return Ok(());
        }
        [kind, dir, size, ops] if kind == "store" => {
            let qs = queries(num(size)?, num(ops)?);
            let t = Instant::now();
            let (store, _) = Store::open(Path::new(dir), StoreOptions::default())?;
            let open_ms = t.elapsed().as_secs_f64() * 1000.0;
            let recall = |text: &str| {
                store.recall(&RecallQuery {
                    text: text.to_string(),
                    limit: K,
                    mode: RankMode::Lexical,
                    ..Default::default()
                })
            };
            std::hint::black_box(recall(&qs[0])?);
            let first_ms = t.elapsed().as_secs_f64() * 1000.0;
            for q in &qs {
                std::hint::black_box(recall(q)?);
            }
            print_fresh(open_ms, first_ms)?;
            drop(store);
            return Ok(());
        }
        [kind, size, ops] if kind == "index" => {
            let size = num(size)?;
            let qs = queries(size, num(ops)?);
            let t = Instant::now();
            let mut idx = ClaimIndex::new();
            for (slug, c) in corpus(size) {
                idx.upsert(&slug, &c.label, &c.text, meta(&c.label), None);
            }
            idx.compact();
            let open_ms = t.elapsed().as_secs_f64() * 1000.0;
            for q in &qs {
                std::hint::black_box(idx.search(&idx.prepare(q), K, &|_| true));
            }
            (open_ms, open_ms)
        }
        _ => bail!("usage: xtask bench-lexical-child tantivy|store DIR SIZE OPS | index SIZE OPS"),
    };
    print_fresh(open_ms, first_ms)
}

fn print_fresh(open_ms: f64, first_ms: f64) -> Result<()> {
    let [all, anon, file] = rss_kb()?;
    println!("{open_ms:.3} {first_ms:.3} {all} {anon} {file}");
    Ok(())
}
