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
//!
//! Layout: this file parses the flags and holds what both measures share (the
//! rankings, opening a store, building a query); `locomo` runs LoCoMo and the
//! off-topic abstention; `synthetic` generates and asks the codebase facts.

mod locomo;
mod synthetic;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use brains::vector::Precision;
use brains::{Embedder, MemorizeInput, RankMode, RecallQuery, Store, StoreOptions};

const USAGE: &str = "usage: cargo xtask eval [--conversations conv-26,conv-30|all] [--no-synthetic|--synthetic-only] [--dump FILE] [--f32]";

/// How the stores of this run hold their vectors: the default (half precision), or
/// full precision with `--f32` to measure the default against.
static PRECISION: std::sync::OnceLock<Precision> = std::sync::OnceLock::new();

/// The conversations tuning may look at. The other seven are held out.
pub const DEV_SPLIT: [&str; 3] = ["conv-26", "conv-30", "conv-41"];

pub(super) const MODES: [(&str, RankMode); 3] = [
    ("lexical", RankMode::Lexical),
    ("dense (static)", RankMode::Vector),
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
    conversations: Vec<String>,
    dump: Option<PathBuf>,
    synthetic: bool,
    locomo: bool,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        conversations: DEV_SPLIT.iter().map(|s| s.to_string()).collect(),
        dump: None,
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
                a.conversations = list.split(',').map(|s| s.trim().to_string()).collect();
            }
            "--dump" => a.dump = Some(it.next().context("--dump takes a file")?.into()),
            "--no-synthetic" => a.synthetic = false,
            "--synthetic-only" => a.locomo = false,
            "--f32" => {
                let _ = PRECISION.set(Precision::F32);
            }
            other => bail!("unknown argument {other:?}: {USAGE}"),
        }
    }
    Ok(a)
}

pub fn run(args: &[String]) -> Result<()> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return Ok(());
    }
    let args = parse(args)?;
    let embedder: Option<Arc<dyn Embedder>> = medulla::model::load_default()?;
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
    if args.locomo {
        locomo::locomo(&args, &embedder)?;
    }
    if args.synthetic {
        synthetic::synthetic(&embedder)?;
    }
    Ok(())
}
