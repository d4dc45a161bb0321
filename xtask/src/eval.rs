//! `cargo xtask eval`: retrieval quality on LoCoMo, read from ../shared at run time
//! (never copied into the repository). One store per conversation; its observations are
//! the claims; questions of categories 1–4 are the queries; a claim is relevant when its
//! evidence turn is one of the question's evidence turns. Reports R@5, R@10 and nDCG@10
//! for lexical, vector and fused rankings.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use brains::recall::RankMode;
use brains::{Embedder, MemorizeInput, RecallQuery, Store, StoreOptions};
use serde_json::Value;

/// The conversations tuning may look at. The other seven are held out.
pub const DEV_SPLIT: [&str; 3] = ["conv-26", "conv-30", "conv-41"];

fn data_path() -> PathBuf {
    if let Some(p) = std::env::var_os("MEDULLA_LOCOMO") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/locomo/locomo10.json")
}

struct Claim {
    label: String,
    text: String,
    turns: Vec<String>,
}

struct Question {
    text: String,
    evidence: HashSet<String>,
}

fn turn_ids(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => s
            .split([',', ';', ' '])
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        Value::Array(a) => a.iter().flat_map(turn_ids).collect(),
        _ => vec![],
    }
}

fn load_conversation(conv: &Value) -> (Vec<Claim>, Vec<Question>) {
    let mut claims = Vec::new();
    if let Some(obs) = conv["observation"].as_object() {
        let mut sessions: Vec<(&String, &Value)> = obs.iter().collect();
        sessions.sort_by_key(|(k, _)| {
            k.trim_start_matches("session_")
                .split('_')
                .next()
                .and_then(|n| n.parse::<u32>().ok())
        });
        for (session, per_speaker) in sessions {
            let n = session
                .trim_start_matches("session_")
                .split('_')
                .next()
                .unwrap_or("?");
            for (speaker, items) in per_speaker.as_object().into_iter().flatten() {
                for (i, item) in items.as_array().into_iter().flatten().enumerate() {
                    let Some(text) = item.get(0).and_then(Value::as_str) else {
                        continue;
                    };
                    claims.push(Claim {
                        label: format!("{speaker} session {n} observation {i}"),
                        text: text.to_string(),
                        turns: item.get(1).map(turn_ids).unwrap_or_default(),
                    });
                }
            }
        }
    }
    let questions = conv["qa"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|q| matches!(q["category"].as_u64(), Some(1..=4)))
        .filter_map(|q| {
            Some(Question {
                text: q["question"].as_str()?.to_string(),
                evidence: turn_ids(&q["evidence"]).into_iter().collect(),
            })
        })
        .collect();
    (claims, questions)
}

#[derive(Default, Clone, Copy)]
struct Sums {
    r5: f64,
    r10: f64,
    ndcg10: f64,
    n: usize,
}

impl Sums {
    fn add(&mut self, ranked: &[bool], relevant: usize) {
        let hits = |k: usize| ranked.iter().take(k).filter(|r| **r).count() as f64;
        self.r5 += hits(5) / relevant as f64;
        self.r10 += hits(10) / relevant as f64;
        let dcg: f64 = ranked
            .iter()
            .take(10)
            .enumerate()
            .filter(|(_, r)| **r)
            .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
            .sum();
        let idcg: f64 = (0..relevant.min(10))
            .map(|i| 1.0 / ((i + 2) as f64).log2())
            .sum();
        self.ndcg10 += dcg / idcg;
        self.n += 1;
    }
    fn merge(&mut self, o: &Sums) {
        self.r5 += o.r5;
        self.r10 += o.r10;
        self.ndcg10 += o.ndcg10;
        self.n += o.n;
    }
    fn row(&self, name: &str) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "| {name} | {:.3} | {:.3} | {:.3} | {} |",
            self.r5 / n,
            self.r10 / n,
            self.ndcg10 / n,
            self.n
        )
    }
}

const MODES: [(&str, RankMode); 3] = [
    ("lexical", RankMode::Lexical),
    ("vector", RankMode::Vector),
    ("fused", RankMode::Auto),
];

pub fn run(args: &[String]) -> Result<()> {
    let mut conversations: Vec<String> = DEV_SPLIT.iter().map(|s| s.to_string()).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--conversations" => {
                let list = it.next().context("--conversations takes a comma-separated list (or `all`)")?;
                conversations = list.split(',').map(|s| s.trim().to_string()).collect();
            }
            other => bail!("unknown argument {other:?}: usage: cargo xtask eval [--conversations conv-26,conv-30|all]"),
        }
    }
    let path = data_path();
    let data: Value = serde_json::from_slice(&std::fs::read(&path).with_context(|| {
        format!(
            "cannot read LoCoMo at {}: set MEDULLA_LOCOMO to locomo10.json",
            path.display()
        )
    })?)?;
    let all: Vec<&Value> = data
        .as_array()
        .context("locomo10.json is not a list")?
        .iter()
        .collect();
    if conversations == ["all"] {
        conversations = all
            .iter()
            .filter_map(|c| c["sample_id"].as_str().map(str::to_string))
            .collect();
    }
    let held_out: Vec<&String> = conversations
        .iter()
        .filter(|c| !DEV_SPLIT.contains(&c.as_str()))
        .collect();
    if !held_out.is_empty() {
        eprintln!(
            "note: measuring on held-out conversations {held_out:?}; never tune on these numbers"
        );
    }
    let embedder: Option<Arc<dyn Embedder>> = match brains::embed::ModelFiles::locate() {
        Some(files) => Some(Arc::new(brains::embed::MiniLm::load(&files)?)),
        None => {
            eprintln!(
                "no embedding model: run `cargo xtask fetch-model`; vector and fused rows need it"
            );
            None
        }
    };
    let mut totals = [Sums::default(); 3];
    let started = Instant::now();
    for id in &conversations {
        let conv = all
            .iter()
            .find(|c| c["sample_id"].as_str() == Some(id))
            .with_context(|| format!("no conversation {id}"))?;
        let (claims, questions) = load_conversation(conv);
        let dir = tempfile::tempdir()?;
        let opts = StoreOptions {
            embedder: embedder.clone(),
            ..Default::default()
        };
        let (mut store, _) = Store::open(dir.path(), opts)?;
        for c in &claims {
            store.memorize(MemorizeInput {
                label: c.label.clone(),
                text: c.text.clone(),
                source_agent: "locomo:observer".into(),
                origin_brain: Some(id.clone()),
                ..Default::default()
            })?;
        }
        let mut per = [Sums::default(); 3];
        for q in &questions {
            let relevant = claims
                .iter()
                .filter(|c| c.turns.iter().any(|t| q.evidence.contains(t)))
                .count();
            if relevant == 0 {
                continue;
            }
            for (m, (_, mode)) in MODES.iter().enumerate() {
                if embedder.is_none() && *mode != RankMode::Lexical {
                    continue;
                }
                let res = store.recall(&RecallQuery {
                    text: q.text.clone(),
                    scope: None,
                    limit: 10,
                    mode: *mode,
                })?;
                let ranked: Vec<bool> = res
                    .hits
                    .iter()
                    .map(|h| {
                        claims.iter().any(|c| {
                            c.label == h.claim.label
                                && c.turns.iter().any(|t| q.evidence.contains(t))
                        })
                    })
                    .collect();
                per[m].add(&ranked, relevant);
            }
        }
        println!(
            "{id}: {} claims, {} questions with relevant claims",
            claims.len(),
            per[0].n
        );
        for (m, (name, _)) in MODES.iter().enumerate() {
            if per[m].n > 0 {
                println!("  {}", per[m].row(name));
            }
            totals[m].merge(&per[m]);
        }
    }
    println!();
    println!("conversations: {}", conversations.join(", "));
    println!("| ranking | R@5 | R@10 | nDCG@10 | questions |");
    println!("|---|---|---|---|---|");
    for (m, (name, _)) in MODES.iter().enumerate() {
        if totals[m].n > 0 {
            println!("{}", totals[m].row(name));
        }
    }
    println!("({:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
}
