//! `cargo xtask bench`: store-level latency figures. Memorize and recall p50/p95 at
//! several store sizes, lexical-only and hybrid; embedding throughput; store open time;
//! vector index rebuild time; memorize one by one against `memorize_many` batches.
//! `--batch-fill` fills the stores with `memorize_many` (faster at 100k claims; the
//! figures measured after the fill do not depend on how it was filled). Run it in
//! release (`cargo xtask` builds xtask in dev, but dependencies are optimised; pass
//! `--release` through `cargo run --release -p xtask` for final figures).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use brains::recall::RankMode;
use brains::vector::{INDEX_FILE, STAMP_FILE};
use brains::{Embedder, Store, StoreOptions};

use super::corpus::{fill_batched, input, query, Gen};
use super::runner::{fsync_probe, header, list, pct, sample};

/// `n` bench queries recalled one after another, each timed.
fn timed_recalls(store: &Store, g: &mut Gen, mode: RankMode, n: usize) -> Result<Vec<Duration>> {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let q = query(g, mode);
        let r = sample(&mut samples, || Ok(store.recall(&q)?))?;
        std::hint::black_box(r);
    }
    Ok(samples)
}

struct Row {
    size: usize,
    mode: &'static str,
    fill_s: f64,
    /// Settling the vectors the fill left unsettled.
    settle_s: f64,
    mem: (f64, f64),
    rec: (f64, f64),
    open_ms: f64,
    /// Open plus the first recall: what a dormant brain costs its first caller.
    open_recall_ms: f64,
    /// Claims per second memorized one by one, and with `memorize_many` in batches.
    single_rate: f64,
    batch_rate: f64,
    rebuild_ms: Option<f64>,
    reembed_ms: Option<f64>,
    /// Resident memory of a fresh process holding the store open after recalls and
    /// memorizes (MB): what that brain costs the owner when warm.
    rss_mb: f64,
}

/// The same model under another id: opening a store with it re-embeds every claim, as
/// a model change does.
#[derive(Debug)]
struct Renamed(Arc<dyn Embedder>);

impl Embedder for Renamed {
    fn id(&self) -> &str {
        "bench-renamed-model"
    }
    fn dims(&self) -> usize {
        self.0.dims()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, brains::EmbedError> {
        self.0.embed(texts)
    }
}

/// Claims per `memorize_many` call in the batched figures and the batched fill.
const BATCH: usize = 100;

fn bench_size(
    size: usize,
    embedder: Option<Arc<dyn Embedder>>,
    ops: usize,
    batch_fill: bool,
    keep: Option<&std::path::Path>,
) -> Result<Row> {
    let temp = tempfile::tempdir()?;
    let kept = keep.map(|k| {
        k.join(format!(
            "{size}-{}",
            if embedder.is_some() {
                "hybrid"
            } else {
                "lexical"
            }
        ))
    });
    if let Some(k) = &kept {
        if k.exists() {
            bail!(
                "{} exists: --keep fills a new store (remove it first)",
                k.display()
            );
        }
    }
    let path = kept.as_deref().unwrap_or(temp.path());
    let hybrid = embedder.is_some();
    let opts = StoreOptions {
        embedder: embedder.clone(),
        ..Default::default()
    };
    let (mut store, _) = Store::open(path, opts.clone())?;
    let mut g = Gen(0x9E37_79B9_7F4A_7C15 ^ size as u64);
    let t = Instant::now();
    if batch_fill {
        fill_batched(&mut store, &mut g, size)?;
    } else {
        for i in 0..size {
            store.memorize(input(&mut g, i))?;
        }
    }
    let fill_s = t.elapsed().as_secs_f64();
    if hybrid && store.vectors_unsettled() > 0 {
        // Right after a bulk fill the graph has not taken its vectors yet: what a recall
        // costs meanwhile (the fresh set is scanned exactly).
        let unsettled = store.vectors_unsettled();
        let mut during = timed_recalls(&store, &mut g, RankMode::Auto, 100)?;
        println!(
            "{size} hybrid: recall right after the fill, {unsettled} vectors unsettled: p50 {:.3} ms, p99 {:.3} ms",
            pct(&mut during, 0.5),
            pct(&mut during, 0.99)
        );
    }
    // Writes leave their vectors to settle into the graph in the background: the figures
    // below are taken once it has (a recall meanwhile also scans the unsettled ones).
    let t = Instant::now();
    store.settle_vectors()?;
    let settle_s = t.elapsed().as_secs_f64();
    let mut mem = Vec::with_capacity(ops);
    for i in 0..ops {
        let inp = input(&mut g, size + i);
        sample(&mut mem, || Ok(store.memorize(inp)?))?;
    }
    let single_rate = ops as f64 / mem.iter().sum::<Duration>().as_secs_f64();
    let batched = ops.max(BATCH);
    let t = Instant::now();
    for start in (0..batched).step_by(BATCH) {
        let batch = (start..batched.min(start + BATCH))
            .map(|i| input(&mut g, size + ops + i))
            .collect();
        for r in store.memorize_many(batch)? {
            r?;
        }
    }
    let batch_rate = batched as f64 / t.elapsed().as_secs_f64();
    store.settle_vectors()?;
    let mode = if hybrid {
        RankMode::Auto
    } else {
        RankMode::Lexical
    };
    let mut rec = timed_recalls(&store, &mut g, mode, ops)?;
    store.close()?;
    let first = query(&mut g, mode);
    let t = Instant::now();
    let (store, _) = Store::open(path, opts.clone())?;
    let open_ms = t.elapsed().as_secs_f64() * 1000.0;
    std::hint::black_box(store.recall(&first)?);
    let open_recall_ms = t.elapsed().as_secs_f64() * 1000.0;
    store.close()?;
    let row = Row {
        size,
        mode: if hybrid { "hybrid" } else { "lexical" },
        fill_s,
        settle_s,
        mem: (pct(&mut mem, 0.5), pct(&mut mem, 0.95)),
        rec: (pct(&mut rec, 0.5), pct(&mut rec, 0.99)),
        open_ms,
        open_recall_ms,
        single_rate,
        batch_rate,
        rebuild_ms: None,
        reembed_ms: None,
        rss_mb: f64::NAN,
    };
    if let Some(k) = &kept {
        // A kept store is for `bench --open`: the figures that would change it stop here.
        println!("kept the store in {}", k.display());
        return Ok(row);
    }
    let rss_mb = warm_rss(path, hybrid)?;
    // Every derived file gone: the claim index and (with a model) the vector index are
    // rebuilt from redb.
    std::fs::remove_file(path.join("claims.snapshot")).context("snapshot file")?;
    if hybrid {
        std::fs::remove_file(path.join("vectors.usearch")).context("index file")?;
    }
    let t = Instant::now();
    let (store, report) = Store::open(path, opts.clone())?;
    let rebuild_ms = Some(t.elapsed().as_secs_f64() * 1000.0);
    if !report.claim_index_rebuilt || (hybrid && !report.index_rebuilt) {
        bail!("the derived files were deleted but the store did not report a rebuild");
    }
    store.close()?;
    let reembed_ms = match &embedder {
        Some(e) => {
            let renamed = StoreOptions {
                embedder: Some(Arc::new(Renamed(e.clone()))),
                ..opts
            };
            let t = Instant::now();
            let (store, report) = Store::open(path, renamed)?;
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            let expected = size + ops + batched + RSS_MEMORIZES;
            if report.embedded_on_open as usize != expected {
                bail!(
                    "a model change re-embedded {} claims, not {expected}",
                    report.embedded_on_open
                );
            }
            store.close()?;
            Some(ms)
        }
        None => None,
    };
    Ok(Row {
        rebuild_ms,
        reembed_ms,
        rss_mb,
        ..row
    })
}

/// What the warm-memory child does to the store: recalls, and memorizes among them.
const RSS_RECALLS: usize = 200;
const RSS_MEMORIZES: usize = 50;

/// Open the store in `dir` in a fresh process (`xtask bench-rss`), warm it with recalls
/// and memorizes, and return its resident memory in MB.
fn warm_rss(dir: &std::path::Path, hybrid: bool) -> Result<f64> {
    let out = std::process::Command::new(std::env::current_exe()?)
        .arg("bench-rss")
        .arg(dir)
        .arg(if hybrid { "hybrid" } else { "lexical" })
        .output()?;
    if !out.status.success() {
        bail!("bench-rss failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    println!(
        "warm RSS of {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
            .trim()
            .replace('\n', ", ")
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let kb: f64 = text
        .trim()
        .parse()
        .with_context(|| format!("bench-rss printed {text:?}"))?;
    Ok(kb / 1024.0)
}

/// `xtask bench-rss DIR hybrid|lexical`: the child of [`warm_rss`]. Prints VmRSS in kB.
pub fn rss_child(args: &[String]) -> Result<()> {
    let [dir, mode] = args else {
        bail!("usage: xtask bench-rss DIR hybrid|lexical");
    };
    let embedder = if mode == "hybrid" {
        medulla::model::load_default()?
    } else {
        None
    };
    let hybrid = embedder.is_some();
    let (mut store, _) = Store::open(
        std::path::Path::new(dir),
        StoreOptions {
            embedder,
            ..Default::default()
        },
    )?;
    let mut g = Gen(0xBEEF);
    let mode = if hybrid {
        RankMode::Auto
    } else {
        RankMode::Lexical
    };
    for i in 0..RSS_RECALLS {
        let q = query(&mut g, mode);
        std::hint::black_box(store.recall(&q)?);
        if i % (RSS_RECALLS / RSS_MEMORIZES) == 0 {
            store.memorize(input(&mut g, 10_000_000 + i))?;
        }
    }
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .context("no VmRSS in /proc/self/status")?;
    println!("{kb}");
    // Where it lives: the heap, or pages of mapped files (the graph's view).
    for l in status
        .lines()
        .filter(|l| l.starts_with("RssAnon:") || l.starts_with("RssFile:"))
    {
        eprintln!("{}", l.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    drop(store);
    Ok(())
}

pub fn run(args: &[String]) -> Result<()> {
    let mut sizes = vec![1_000, 10_000];
    let mut ops = 300;
    let mut lexical = true;
    let mut hybrid = true;
    let mut batch_fill = false;
    let mut keep: Option<std::path::PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sizes" => {
                sizes = list(it.next(), "--sizes takes a list like 1000,10000,100000")?
            }
            "--ops" => ops = it.next().context("--ops takes a number")?.parse()?,
            "--batch-fill" => batch_fill = true,
            "--keep" => keep = Some(it.next().context("--keep takes a directory")?.into()),
            "--modes" => {
                let m = it.next().context("--modes takes lexical, hybrid or lexical,hybrid")?;
                lexical = m.split(',').any(|m| m.trim() == "lexical");
                hybrid = m.split(',').any(|m| m.trim() == "hybrid");
            }
            other => bail!("unknown argument {other:?}: usage: cargo xtask bench [--sizes 1000,10000,100000] [--ops 300] [--modes lexical,hybrid] [--batch-fill] [--keep DIR]"),
        }
    }
    let embedder: Option<Arc<dyn Embedder>> = medulla::model::load_default()?;
    if embedder.is_none() {
        eprintln!("no embedding model: hybrid rows skipped (run `cargo xtask fetch-model`)");
    }
    if let Some(e) = &embedder {
        let mut g = Gen(7);
        let texts: Vec<String> = (0..512).map(|_| g.words(12)).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = Instant::now();
        e.embed(&refs)?;
        let batch = 512.0 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        for s in refs.iter().take(128) {
            e.embed(&[s])?;
        }
        let single = 128.0 / t.elapsed().as_secs_f64();
        println!("embedding throughput: {batch:.0} sentences/s batched, {single:.0} sentences/s one at a time");
    }
    // The durable commit's floor on this disk.
    let mut samples = fsync_probe(ops)?;
    println!(
        "disk: write 4 KiB + fsync p50 {:.3} ms, p95 {:.3} ms ({ops} samples)",
        pct(&mut samples, 0.5),
        pct(&mut samples, 0.95)
    );
    header(&format!("| claims | mode | fill (s) | vectors settled after the fill (s) | memorize p50 / p95 (ms) | recall p50 / p99 (ms) | open (ms) | open + first recall (ms) | memorize one by one / memorize_many of {BATCH} (claims/s) | open, every derived index rebuilt (ms) | open, model changed: re-embed all (ms) | RSS warm (MB) |"));
    for &size in &sizes {
        let mut modes: Vec<Option<Arc<dyn Embedder>>> = vec![];
        if lexical {
            modes.push(None);
        }
        if hybrid && embedder.is_some() {
            modes.push(embedder.clone());
        }
        for e in modes {
            let r = bench_size(size, e, ops, batch_fill, keep.as_deref())?;
            println!(
                "| {} | {} | {:.1} | {:.1} | {:.3} / {:.3} | {:.3} / {:.3} | {:.1} | {:.1} | {:.0} / {:.0} | {} | {} | {:.0} |",
                r.size,
                r.mode,
                r.fill_s,
                r.settle_s,
                r.mem.0,
                r.mem.1,
                r.rec.0,
                r.rec.1,
                r.open_ms,
                r.open_recall_ms,
                r.single_rate,
                r.batch_rate,
                r.rebuild_ms
                    .map(|m| format!("{m:.0}"))
                    .unwrap_or_else(|| "–".into()),
                r.reembed_ms
                    .map(|m| format!("{m:.0}"))
                    .unwrap_or_else(|| "–".into()),
                r.rss_mb
            );
        }
    }
    Ok(())
}

const OPEN_USAGE: &str =
    "usage: cargo xtask bench --open DIR [--times 5] [--recalls N] [--cold] [--rebuild]";

/// `bench --open DIR [--times 5] [--recalls N] [--cold] [--rebuild]`: open a store
/// `bench --keep` left (or any store directory) again and again, and say where each
/// open's time went; `--recalls N` then times N recalls of the bench's queries on each
/// open. `--cold` drops the page cache before each open (needs root), as after a
/// reboot; `--rebuild` deletes the derived files first, so each open rebuilds them.
pub fn run_open(args: &[String]) -> Result<()> {
    let mut dir: Option<std::path::PathBuf> = None;
    let mut times = 5;
    let mut recalls = 0;
    let mut cold = false;
    let mut rebuild = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--times" => times = it.next().context("--times takes a number")?.parse()?,
            "--recalls" => recalls = it.next().context("--recalls takes a number")?.parse()?,
            "--cold" => cold = true,
            "--rebuild" => rebuild = true,
            d if dir.is_none() && !d.starts_with("--") => dir = Some(d.into()),
            other => bail!("unknown argument {other:?}: {OPEN_USAGE}"),
        }
    }
    let dir = dir.context(OPEN_USAGE)?;
    let hybrid = dir.join(INDEX_FILE).exists();
    let embedder = if hybrid {
        Some(medulla::model::load_default()?.context("the store has vectors: fetch the model")?)
    } else {
        None
    };
    let mode = if hybrid {
        RankMode::Auto
    } else {
        RankMode::Lexical
    };
    header("| open | claim index (ms) | vectors (ms) | open (ms) | open + first recall (ms) | repaired | rebuilt |");
    let mut g = Gen(0x0BE4);
    for i in 0..times {
        if cold {
            std::process::Command::new("sync").status()?;
            std::fs::write("/proc/sys/vm/drop_caches", "3")
                .context("--cold drops the page cache, which needs root")?;
        }
        if rebuild {
            // Every derived file gone: each open rebuilds them from redb.
            for f in ["claims.snapshot", INDEX_FILE, STAMP_FILE] {
                match std::fs::remove_file(dir.join(f)) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(e).with_context(|| format!("removing {f}"))
                    }
                    _ => {}
                }
            }
        }
        let q = query(&mut g, mode);
        let t = Instant::now();
        let (store, report) = Store::open(
            &dir,
            StoreOptions {
                embedder: embedder.clone(),
                ..Default::default()
            },
        )?;
        let open_ms = t.elapsed().as_secs_f64() * 1000.0;
        std::hint::black_box(store.recall(&q)?);
        let first_ms = t.elapsed().as_secs_f64() * 1000.0;
        println!(
            "| {} | {:.1} | {:.1} | {open_ms:.1} | {first_ms:.1} | {} | {} |",
            i + 1,
            report.claim_index_us as f64 / 1000.0,
            report.vectors_us as f64 / 1000.0,
            report.index_repaired,
            report.index_rebuilt || report.claim_index_rebuilt
        );
        if recalls > 0 {
            let mut samples = timed_recalls(&store, &mut g, mode, recalls)?;
            println!(
                "  then {recalls} recalls: p50 {:.3} ms, p99 {:.3} ms",
                pct(&mut samples, 0.5),
                pct(&mut samples, 0.99)
            );
        }
        store.close()?;
    }
    Ok(())
}
