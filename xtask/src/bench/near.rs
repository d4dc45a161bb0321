//! `cargo xtask bench --near [--sizes 1000,10000] [--ops 300]`: what the near-duplicate
//! check adds to a memorize: `Store::similar` for a new claim against a store of each
//! size (the owner runs it once on the brain and once on the medulla after each write),
//! beside the memorize itself, lexical and hybrid.

use std::sync::Arc;

use anyhow::{bail, Context, Result};
use brains::{Embedder, Store, StoreOptions};

use super::corpus::{fill_batched, input, Gen};
use super::runner::{header, list, pct, sample};

pub fn run(args: &[String]) -> Result<()> {
    let mut sizes = vec![1_000, 10_000];
    let mut ops = 300;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sizes" => {
                sizes = list(it.next(), "--sizes takes a list like 1000,10000")?
            }
            "--ops" => ops = it.next().context("--ops takes a number")?.parse()?,
            other => bail!("unknown argument {other:?}: usage: cargo xtask bench --near [--sizes 1000,10000] [--ops 300]"),
        }
    }
    let model: Option<Arc<dyn Embedder>> = medulla::model::load_default()?;
    header("| claims | mode | memorize p50 / p95 (ms) | similar p50 / p95 (ms) |");
    for &size in &sizes {
        let mut modes: Vec<Option<Arc<dyn Embedder>>> = vec![None];
        if model.is_some() {
            modes.push(model.clone());
        }
        for e in modes {
            let mode = if e.is_some() { "hybrid" } else { "lexical" };
            let dir = tempfile::tempdir()?;
            let (mut store, _) = Store::open(
                dir.path(),
                StoreOptions {
                    embedder: e,
                    ..Default::default()
                },
            )?;
            let mut g = Gen(0x5EED ^ size as u64);
            fill_batched(&mut store, &mut g, size)?;
            let (mut mem, mut sim) = (Vec::with_capacity(ops), Vec::with_capacity(ops));
            for i in 0..ops {
                let inp = input(&mut g, size + i);
                let (label, text) = (inp.label.clone(), inp.text.clone());
                let slug = sample(&mut mem, || Ok(store.memorize(inp)?.claim().slug.clone()))?;
                let near = sample(&mut sim, || {
                    Ok(store.similar(&label, &text, Some(&slug))?)
                })?;
                std::hint::black_box(near);
            }
            store.close()?;
            println!(
                "| {size} | {mode} | {:.3} / {:.3} | {:.3} / {:.3} |",
                pct(&mut mem, 0.5),
                pct(&mut mem, 0.95),
                pct(&mut sim, 0.5),
                pct(&mut sim, 0.95)
            );
        }
    }
    Ok(())
}
