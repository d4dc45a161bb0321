//! `cargo xtask bench --near [--sizes 1000,10000] [--ops 300]`: what the near-duplicate
//! check adds to a memorize: `Store::similar` for a new claim against a store of each
//! size (the owner runs it once on the brain and once on the medulla after each write),
//! beside the memorize itself, lexical and hybrid.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use brains::{Embedder, Store, StoreOptions};

use crate::bench::{input, pct, Gen};

pub fn run(args: &[String]) -> Result<()> {
    let mut sizes = vec![1_000, 10_000];
    let mut ops = 300;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sizes" => {
                sizes = it
                    .next()
                    .context("--sizes takes a list like 1000,10000")?
                    .split(',')
                    .map(|s| s.trim().parse())
                    .collect::<Result<_, _>>()?
            }
            "--ops" => ops = it.next().context("--ops takes a number")?.parse()?,
            other => bail!("unknown argument {other:?}: usage: cargo xtask bench --near [--sizes 1000,10000] [--ops 300]"),
        }
    }
    let model: Option<Arc<dyn Embedder>> = medulla::model::load_default()?;
    println!("| claims | mode | memorize p50 / p95 (ms) | similar p50 / p95 (ms) |");
    println!("|---|---|---|---|");
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
            for start in (0..size).step_by(1000) {
                let batch = (start..size.min(start + 1000))
                    .map(|i| input(&mut g, i))
                    .collect();
                for r in store.memorize_many(batch)? {
                    r?;
                }
            }
            let (mut mem, mut sim) = (Vec::with_capacity(ops), Vec::with_capacity(ops));
            for i in 0..ops {
                let inp = input(&mut g, size + i);
                let (label, text) = (inp.label.clone(), inp.text.clone());
                let t = Instant::now();
                let slug = store.memorize(inp)?.claim().slug.clone();
                mem.push(t.elapsed());
                let t = Instant::now();
                std::hint::black_box(store.similar(&label, &text, Some(&slug))?);
                sim.push(t.elapsed());
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
