//! LoCoMo, read at run time: R@5, R@10 and nDCG@10 per ranking with the relevance
//! floor off and on, and the off-topic abstention (the other conversations' questions
//! asked of each store).

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use brains::{Embedder, RankMode, RecallQuery};
use serde_json::{json, Value};

use super::{open_store, query, Args, Figures, DEV_SPLIT, MODES};

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

/// Per ranking: floor off, floor on, floor on with `seek`'s weak rows counted as found.
type Table = [[Sums; 3]; 3];

/// The three ways a ranking is read: (floor on, weak rows asked, name in the figures).
const FLOORS: [(bool, usize, &str); 3] = [
    (false, 0, "floor_off"),
    (true, 0, "floor_on"),
    (true, 3, "floor_weak"),
];

/// One split's totals: the rankings' sums and the off-topic counts.
pub(super) struct Split {
    pub name: String,
    conversations: Vec<String>,
    totals: Table,
    /// Off-topic (queries, answered with a matched row) for fused and lexical-only.
    off: [(usize, usize); 2],
    /// Off-topic weak rows for fused and lexical-only: (queries with any, rows in all,
    /// the most on one query).
    off_weak: [(usize, usize, usize); 2],
}

impl Split {
    /// The figures `--check` reads, named `locomo.<split>.<ranking>.<floor>.<metric>`.
    fn record(&self, figures: &mut Figures) {
        let key = self.name.replace(' ', "_");
        for (m, (ranking, _)) in MODES.iter().enumerate() {
            let ranking = ranking.split(' ').next().unwrap_or(ranking);
            for (f, (_, _, floor)) in FLOORS.iter().enumerate() {
                let s = &self.totals[m][f];
                if s.n == 0 {
                    continue;
                }
                let n = s.n as f64;
                for (metric, v) in [("r5", s.r5), ("r10", s.r10), ("ndcg10", s.ndcg10)] {
                    figures.insert(format!("locomo.{key}.{ranking}.{floor}.{metric}"), v / n);
                }
            }
        }
        for (k, ranking) in ["fused", "lexical"].iter().enumerate() {
            let (n, a) = self.off[k];
            if n > 0 {
                figures.insert(
                    format!("locomo.{key}.off_topic.{ranking}"),
                    a as f64 / n as f64,
                );
                let (any, rows, _) = self.off_weak[k];
                figures.insert(
                    format!("locomo.{key}.off_topic_weak_share.{ranking}"),
                    any as f64 / n as f64,
                );
                figures.insert(
                    format!("locomo.{key}.off_topic_weak_rows.{ranking}"),
                    rows as f64 / n as f64,
                );
            }
        }
    }
}

/// The splits side by side: one row per ranking and floor, three columns per split.
fn print_splits(splits: &[Split]) {
    let mut head = String::from("| ranking | floor |");
    let mut rule = String::from("|---|---|");
    for s in splits {
        head.push_str(&format!(" {0} R@5 | {0} R@10 | {0} nDCG@10 |", s.name));
        rule.push_str("---|---|---|");
    }
    println!("{head}");
    println!("{rule}");
    for (m, (name, _)) in MODES.iter().enumerate() {
        for (f, floor) in ["off", "on", "on + weak"].iter().enumerate() {
            if splits.iter().all(|s| s.totals[m][f].n == 0) {
                continue;
            }
            let cells: Vec<String> = splits.iter().map(|s| s.totals[m][f].cells()).collect();
            println!("| {name} | {floor} | {} |", cells.join(" | "));
        }
    }
    for s in splits {
        println!(
            "{}: {} ({} questions with a relevant claim)",
            s.name,
            s.conversations.join(", "),
            s.totals[0][0].n
        );
    }
    println!();
    println!("Off-topic abstention (every question of the split's other conversations asked of each store; the share answered with a matched row, lower is better):");
    println!("| split | queries | fused | lexical-only |");
    println!("|---|---|---|---|");
    let pct = |(n, a): (usize, usize)| {
        if n == 0 {
            "–".to_string()
        } else {
            format!("{:.1} %", 100.0 * a as f64 / n as f64)
        }
    };
    for s in splits {
        println!(
            "| {} | {} | {} | {} |",
            s.name,
            s.off[1].0.max(s.off[0].0),
            pct(s.off[0]),
            pct(s.off[1])
        );
    }
    println!();
    println!("Off-topic weak rows (`seek` adds up to 3 below the floor, labelled; the share of off-topic queries given any, rows per query, the most on one):");
    println!("| split | fused: share | fused: rows/query | fused: most | lexical-only: share | lexical-only: rows/query | lexical-only: most |");
    println!("|---|---|---|---|---|---|---|");
    for s in splits {
        let cell = |k: usize| {
            let n = s.off[k].0;
            let (any, rows, most) = s.off_weak[k];
            if n == 0 {
                "– | – | –".to_string()
            } else {
                format!(
                    "{:.1} % | {:.2} | {most}",
                    100.0 * any as f64 / n as f64,
                    rows as f64 / n as f64
                )
            }
        };
        println!("| {} | {} | {} |", s.name, cell(0), cell(1));
    }
}

fn load_data() -> Result<Vec<Value>> {
    let path = data_path();
    let data: Value = serde_json::from_slice(&std::fs::read(&path).with_context(|| {
        format!(
            "cannot read LoCoMo at {}: set MEDULLA_LOCOMO to locomo10.json",
            path.display()
        )
    })?)?;
    match data {
        Value::Array(all) => Ok(all),
        _ => bail!("locomo10.json is not a list"),
    }
}

/// The splits to measure: the dev split and the held-out conversations side by side, or
/// the conversations `--conversations` names as one split.
fn splits_of(args: &Args, all: &[Value]) -> Vec<(String, Vec<String>)> {
    let every: Vec<String> = all
        .iter()
        .filter_map(|c| c["sample_id"].as_str().map(str::to_string))
        .collect();
    let dev: Vec<String> = DEV_SPLIT.iter().map(|s| s.to_string()).collect();
    match &args.conversations {
        Some(list) if list == &["all"] => vec![("all".into(), every)],
        Some(list) if list == &dev => vec![("dev".into(), dev)],
        Some(list) => vec![("selected".into(), list.clone())],
        None if args.dev_only => vec![("dev".into(), dev)],
        None => {
            let held: Vec<String> = every.into_iter().filter(|c| !dev.contains(c)).collect();
            vec![("dev".into(), dev), ("held-out".into(), held)]
        }
    }
}

pub(super) fn locomo(
    args: &Args,
    embedder: &Option<Arc<dyn Embedder>>,
    figures: &mut Figures,
) -> Result<()> {
    let all = load_data()?;
    let plan = splits_of(args, &all);
    let held_out: Vec<&String> = plan
        .iter()
        .flat_map(|(_, c)| c)
        .filter(|c| !DEV_SPLIT.contains(&c.as_str()))
        .collect();
    if !held_out.is_empty() {
        if args.dump.is_some() {
            bail!("--dump is for the dev split only (add --dev-only): held-out conversations are never tuned on");
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
    let mut splits = Vec::new();
    for (name, conversations) in plan {
        let split = run_split(&all, name, conversations, embedder, &mut dump)?;
        split.record(figures);
        splits.push(split);
    }
    println!();
    println!("LoCoMo (R@5 | R@10 | nDCG@10; floor on is what `seek` returns by default):");
    print_splits(&splits);
    println!("({:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
}

fn run_split(
    all: &[Value],
    name: String,
    conversations: Vec<String>,
    embedder: &Option<Arc<dyn Embedder>>,
    dump: &mut Option<std::io::BufWriter<std::fs::File>>,
) -> Result<Split> {
    let mut loaded = Vec::new();
    for id in &conversations {
        let conv = all
            .iter()
            .find(|c| c["sample_id"].as_str() == Some(id))
            .with_context(|| format!("no conversation {id}"))?;
        loaded.push((id.clone(), load_conversation(conv)));
    }
    let mut totals: Table = Default::default();
    let mut off = [(0usize, 0usize); 2];
    let mut off_weak = [(0usize, 0usize, 0usize); 2];
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
                for (f, (floor, weak, _)) in FLOORS.into_iter().enumerate() {
                    let res = store.recall(&RecallQuery {
                        weak,
                        ..query(&q.text, 10, *mode, floor)
                    })?;
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
                    let res = store.recall(&RecallQuery {
                        weak: 3,
                        ..query(&q.text, 10, mode, true)
                    })?;
                    let matched = res.hits.iter().filter(|h| h.matched).count();
                    let weak = res.hits.len() - matched;
                    off[k].0 += 1;
                    off[k].1 += usize::from(matched > 0);
                    off_weak[k].0 += usize::from(weak > 0);
                    off_weak[k].1 += weak;
                    off_weak[k].2 = off_weak[k].2.max(weak);
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
                    "  | {name} | {} | {} | {} |",
                    per[m][0].cells(),
                    per[m][1].cells(),
                    per[m][2].cells()
                );
            }
            for f in 0..3 {
                totals[m][f].merge(&per[m][f]);
            }
        }
    }
    Ok(Split {
        name,
        conversations,
        totals,
        off,
        off_weak,
    })
}
