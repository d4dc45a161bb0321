//! `cargo xtask eval`: retrieval quality.
//!
//! - LoCoMo, read from ../shared at run time (never copied into the repository). One
//!   store per conversation; its observations are the claims; questions of categories
//!   1–4 are the queries; a claim is relevant when its evidence turn is one of the
//!   question's evidence turns. R@5, R@10 and nDCG@10 for the lexical list, the dense
//!   list and the fused ranking, each with the relevance floor off and on.
//! - Off-topic abstention: every question of the OTHER selected conversations asked of
//!   a conversation's store; the share that returns any matched row (lower is better).
//! - Synthetic codebase facts: "service × topic" sentences at 200 and 2,000 facts, half
//!   the queries verbatim and half paraphrased, hit@5 per ranking.
//!
//! Tune on the dev split only (`DEV_SPLIT`); the other seven conversations are held out.
//! A plain run measures both and prints them side by side (each split's off-topic set
//! is its own conversations' questions asked across); `--dev-only` skips the held-out
//! ones. `--check` then holds the dev split's figures to `xtask/eval-check.json` (within
//! its tolerance) and fails naming every figure that fell; held-out figures are printed,
//! never checked, so nothing is ever tuned against them.
//!
//! Layout: this file parses the flags and holds what both measures share (the
//! rankings, opening a store, building a query); `locomo` runs LoCoMo and the
//! off-topic abstention; `synthetic` generates and asks the codebase facts; `tend`
//! (`--tend`, a run of its own) measures the judgement under `medulla tend`.

mod locomo;
mod synthetic;
mod tend;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use brains::vector::Precision;
use brains::{Embedder, MemorizeInput, RankMode, RecallQuery, Store, StoreOptions};

const USAGE: &str = "usage: cargo xtask eval [--check] [--dev-only | --conversations conv-26,conv-30|all] [--no-synthetic|--synthetic-only] [--dump FILE] [--f16|--f32] [--minilm]
       cargo xtask eval --tend [--store] [--errors] [--grid] [--minilm]";

/// The dev-split figures `--check` holds the ranking to (kept in the repository).
const THRESHOLDS: &str = "eval-check.json";

/// Every figure of a run by name (`locomo.dev.fused.floor_on.r10`, …), for `--check`.
pub(super) type Figures = std::collections::BTreeMap<String, f64>;

/// How the stores of this run hold their vectors: the default (eight bits, rescored), or
/// half or full precision with `--f16` / `--f32` to measure the default against.
static PRECISION: std::sync::OnceLock<Precision> = std::sync::OnceLock::new();

/// The conversations tuning may look at. The other seven are held out.
pub const DEV_SPLIT: [&str; 3] = ["conv-26", "conv-30", "conv-41"];

pub(super) const MODES: [(&str, RankMode); 3] = [
    ("lexical", RankMode::Lexical),
    ("dense", RankMode::Vector),
    ("fused", RankMode::Auto),
];

pub(super) fn open_store(
    dir: &Path,
    embedder: &Option<Arc<dyn Embedder>>,
    origin: &str,
    claims: &[(String, String)],
) -> Result<Store> {
    let opts = StoreOptions {
        embedder: embedder.clone(),
        precision: PRECISION.get().copied().unwrap_or_default(),
        ..Default::default()
    };
    let (mut store, _) = Store::open(dir, opts)?;
    for (label, text) in claims {
        store.memorize(MemorizeInput {
            label: label.clone(),
            text: text.clone(),
            source_agent: "eval:observer".into(),
            origin_brain: Some(origin.to_string()),
            ..Default::default()
        })?;
    }
    // A model that defers (a transformer) leaves the vectors to the owner's background:
    // made here, as it would, before anything is asked.
    if let Some(e) = embedder.as_ref().filter(|e| e.deferred()) {
        loop {
            let todo = store.unembedded(256)?;
            if todo.is_empty() {
                break;
            }
            let texts: Vec<&str> = todo.iter().map(|t| t.text.as_str()).collect();
            let vs = e.embed(&texts)?;
            store.attach_vectors(e.id(), todo.into_iter().zip(vs).collect())?;
        }
    }
    Ok(store)
}

pub(super) fn query(text: &str, limit: usize, mode: RankMode, matched_only: bool) -> RecallQuery {
    RecallQuery {
        text: text.to_string(),
        limit,
        mode,
        matched_only,
        ..Default::default()
    }
}

struct Args {
    /// `None`: the dev split and the held-out conversations side by side.
    conversations: Option<Vec<String>>,
    dev_only: bool,
    check: bool,
    dump: Option<PathBuf>,
    /// The transformer all-MiniLM-L6-v2 (`medulla model use`) instead of the static model.
    minilm: bool,
    synthetic: bool,
    locomo: bool,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        conversations: None,
        dev_only: false,
        check: false,
        dump: None,
        minilm: false,
        synthetic: true,
        locomo: true,
    };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--conversations" => {
                let list = it
                    .next()
                    .context("--conversations takes a comma-separated list (or `all`)")?;
                a.conversations = Some(list.split(',').map(|s| s.trim().to_string()).collect());
            }
            "--dev-only" => a.dev_only = true,
            "--check" => a.check = true,
            "--minilm" => a.minilm = true,
            "--dump" => a.dump = Some(it.next().context("--dump takes a file")?.into()),
            "--no-synthetic" => a.synthetic = false,
            "--synthetic-only" => a.locomo = false,
            "--f16" => {
                let _ = PRECISION.set(Precision::F16);
            }
            "--f32" => {
                let _ = PRECISION.set(Precision::F32);
            }
            other => bail!("unknown argument {other:?}: {USAGE}"),
        }
    }
    if a.check && (a.conversations.is_some() || !a.locomo || !a.synthetic || a.minilm) {
        bail!("--check measures the default run (dev and held-out, LoCoMo and synthetic): drop the other flags");
    }
    Ok(a)
}

pub fn run(args: &[String]) -> Result<()> {
    if args.iter().any(|a| a == "--tend") {
        return tend::run(args);
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return Ok(());
    }
    let args = parse(args)?;
    let embedder: Option<Arc<dyn Embedder>> = if args.minilm {
        let mut progress = |s: &str| eprintln!("  {s}");
        medulla::model::fetch_runtime(&mut progress)?;
        let dir = medulla::model::fetch_minilm(None, &mut progress)?;
        Some(Arc::new(medulla::model::Transformer::from_dir(&dir, None)?))
    } else {
        medulla::model::load_default()?
    };
    match &embedder {
        Some(e) => println!(
            "model: {} ({} dimensions), vectors held as {:?}",
            e.id(),
            e.dims(),
            PRECISION.get().copied().unwrap_or_default()
        ),
        None => eprintln!(
            "no embedding model: run `cargo xtask fetch-model`; dense and fused rows need it"
        ),
    }
    let mut figures = Figures::new();
    if args.locomo {
        locomo::locomo(&args, &embedder, &mut figures)?;
    }
    if args.synthetic {
        synthetic::synthetic(&embedder, &mut figures)?;
    }
    if args.check {
        check(
            &figures,
            &Path::new(env!("CARGO_MANIFEST_DIR")).join(THRESHOLDS),
        )?;
    }
    Ok(())
}

/// The threshold file: figures that must reach at least, or stay at most, a value
/// (within `tolerance`).
#[derive(serde::Deserialize)]
struct Thresholds {
    tolerance: f64,
    at_least: std::collections::BTreeMap<String, f64>,
    at_most: std::collections::BTreeMap<String, f64>,
}

/// `--check`: every dev-split threshold met, or a failure naming each figure that fell.
fn check(figures: &Figures, path: &Path) -> Result<()> {
    let t: Thresholds = serde_json::from_slice(
        &std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?,
    )
    .with_context(|| format!("{} is not a threshold file", path.display()))?;
    let mut failed = Vec::new();
    let rows = t
        .at_least
        .iter()
        .map(|(k, v)| (k, *v, true))
        .chain(t.at_most.iter().map(|(k, v)| (k, *v, false)));
    println!();
    println!(
        "check against {} (tolerance {}):",
        path.display(),
        t.tolerance
    );
    for (name, bound, at_least) in rows {
        let Some(got) = figures.get(name) else {
            failed.push(format!(
                "{name}: not measured (no model? run `cargo xtask fetch-model`)"
            ));
            continue;
        };
        let ok = if at_least {
            *got >= bound - t.tolerance
        } else {
            *got <= bound + t.tolerance
        };
        let rel = if at_least { "≥" } else { "≤" };
        println!(
            "  {} {name} = {got:.3} ({rel} {bound:.3})",
            if ok { "ok  " } else { "FELL" }
        );
        if !ok {
            failed.push(format!("{name} = {got:.3}, threshold {rel} {bound:.3}"));
        }
    }
    if !failed.is_empty() {
        bail!(
            "retrieval quality regressed on the dev split:\n  {}",
            failed.join("\n  ")
        );
    }
    println!("every threshold met");
    Ok(())
}
