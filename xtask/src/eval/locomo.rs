//! LoCoMo, read at run time: R@5, R@10 and nDCG@10 per ranking with the relevance
//! floor off and on, and the off-topic abstention (the other conversations' questions
//! asked of each store).

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use brains::{Embedder, RankMode};
use serde_json::{json, Value};

use super::{open_store, query, Args, DEV_SPLIT, MODES};

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
    fn cells(&self) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "{:.3} | {:.3} | {:.3}",
            self.r5 / n,
            self.r10 / n,
            self.ndcg10 / n
        )
    }
}

/// Per ranking: floor off, floor on.
type Table = [[Sums; 2]; 3];

fn print_table(t: &Table, questions: usize) {
    println!(
        "| ranking | R@5 | R@10 | nDCG@10 | R@5 floor on | R@10 floor on | nDCG@10 floor on |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (m, (name, _)) in MODES.iter().enumerate() {
        if t[m][0].n > 0 {
            println!("| {name} | {} | {} |", t[m][0].cells(), t[m][1].cells());
        }
    }
    println!("({questions} questions with a relevant claim)");
}

pub(super) fn locomo(args: &Args, embedder: &Option<Arc<dyn Embedder>>) -> Result<()> {
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
    let mut conversations = args.conversations.clone();
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
        if args.dump.is_some() {
            bail!("--dump is for the dev split only: held-out conversations are never tuned on");
        }
        eprintln!(
            "note: measuring on held-out conversations {held_out:?}; never tune on these numbers"
        );
    }
    let mut dump = match &args.dump {
        Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p)?)),
        None => None,
    };
    let started = Instant::now();
    let mut loaded = Vec::new();
    for id in &conversations {
        let conv = all
            .iter()
            .find(|c| c["sample_id"].as_str() == Some(id))
            .with_context(|| format!("no conversation {id}"))?;
        loaded.push((id.clone(), load_conversation(conv)));
    }
    let mut totals: Table = Default::default();
    // Off-topic: (queries, answered with a matched row) for fused and lexical-only.
    let mut off = [(0usize, 0usize); 2];
    for (id, (claims, questions)) in &loaded {
        let dir = tempfile::tempdir()?;
        let pairs: Vec<(String, String)> = claims
            .iter()
            .map(|c| (c.label.clone(), c.text.clone()))
            .collect();
        let store = open_store(dir.path(), embedder, id, &pairs)?;
        let mut per: Table = Default::default();
        for q in questions {
            let relevant_of = |label: &str| {
                claims
                    .iter()
                    .any(|c| c.label == label && c.turns.iter().any(|t| q.evidence.contains(t)))
            };
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
                for (f, floor) in [false, true].into_iter().enumerate() {
                    let res = store.recall(&query(&q.text, 10, *mode, floor))?;
                    let ranked: Vec<bool> = res
                        .hits
                        .iter()
                        .map(|h| relevant_of(&h.claim.label))
                        .collect();
                    per[m][f].add(&ranked, relevant);
                }
            }
            if let Some(w) = dump.as_mut() {
                let res = store.recall(&query(&q.text, 200, RankMode::Auto, false))?;
                let cands: Vec<Value> = res
                    .hits
                    .iter()
                    .map(|h| json!([relevant_of(&h.claim.label) as u8, h.lexical, h.vector]))
                    .collect();
                writeln!(
                    w,
                    "{}",
                    json!({"conv": id, "kind": "in", "relevant": relevant, "q": q.text, "c": cands})
                )?;
            }
        }
        // Questions of the other conversations asked of this store.
        for (other, (_, oq)) in &loaded {
            if other == id {
                continue;
            }
            for q in oq {
                for (k, mode) in [RankMode::Auto, RankMode::Lexical].into_iter().enumerate() {
                    if embedder.is_none() && mode != RankMode::Lexical {
                        continue;
                    }
                    let res = store.recall(&query(&q.text, 10, mode, true))?;
                    off[k].0 += 1;
                    off[k].1 += usize::from(!res.hits.is_empty());
                }
                if let Some(w) = dump.as_mut() {
                    let res = store.recall(&query(&q.text, 200, RankMode::Auto, false))?;
                    let cands: Vec<Value> = res
                        .hits
                        .iter()
                        .map(|h| json!([0, h.lexical, h.vector]))
                        .collect();
                    writeln!(
                        w,
                        "{}",
                        json!({"conv": id, "kind": "off", "from": other, "q": q.text, "c": cands})
                    )?;
                }
            }
        }
        println!(
            "{id}: {} claims, {} questions with relevant claims",
            claims.len(),
            per[0][0].n
        );
        for (m, (name, _)) in MODES.iter().enumerate() {
            if per[m][0].n > 0 {
                println!(
                    "  | {name} | {} | {} |",
                    per[m][0].cells(),
                    per[m][1].cells()
                );
            }
            for f in 0..2 {
                totals[m][f].merge(&per[m][f]);
            }
        }
    }
    println!();
    println!("LoCoMo, conversations: {}", conversations.join(", "));
    print_table(&totals, totals[0][0].n);
    let share = |(n, a): (usize, usize)| a as f64 / n.max(1) as f64;
    if off[0].0 > 0 {
        println!(
            "off-topic (questions of the other conversations): fused answers {:.1} % of {} with a matched row",
            100.0 * share(off[0]),
            off[0].0
        );
    }
    if off[1].0 > 0 {
        println!(
            "off-topic, lexical-only (no model): {:.1} % of {} answered with a matched row",
            100.0 * share(off[1]),
            off[1].0
        );
    }
    println!("({:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
}
