//! The near-duplicate signal (`memorize` answers `similar`) measured on a labelled set of
//! codebase facts, `tests/data/near-duplicates.tsv`: pairs that say the same thing (or
//! update it) under another label, and pairs about the same area that say something
//! else. Every first claim goes into one store, so each second claim is checked against
//! the whole set, as a write is in a real brain. The precision and recall of the signal,
//! with and without the model, must stay at or above the goals (0.9 and 0.7).

use std::collections::BTreeMap;
use std::sync::Arc;

use brains::store::similar::{THRESHOLD_HYBRID, THRESHOLD_LEXICAL};
use brains::{MemorizeInput, Store, StoreOptions};

use crate::common::model_dir;

struct Pair {
    dup: bool,
    a_label: String,
    b_label: String,
    b_text: String,
}

fn set() -> (Vec<Pair>, BTreeMap<String, String>) {
    let text = include_str!("../data/near-duplicates.tsv");
    let mut pairs = Vec::new();
    let mut firsts = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 5, "five fields: {line}");
        firsts.insert(f[1].to_string(), f[2].to_string());
        pairs.push(Pair {
            dup: f[0] == "dup",
            a_label: f[1].to_string(),
            b_label: f[3].to_string(),
            b_text: f[4].to_string(),
        });
    }
    (pairs, firsts)
}

/// One pair as checked: whether it is a same-thing pair, its first claim's slug, and
/// every candidate the check scored (slug, score).
type Checked = (bool, String, Vec<(String, f64)>);

/// (precision, recall, flags) at `threshold`, from every pair's scored candidates.
fn measure(scored: &[Checked], threshold: f64) -> (f64, f64, usize) {
    let (mut tp, mut flags, mut dups) = (0usize, 0usize, 0usize);
    for (dup, a_slug, cands) in scored {
        dups += usize::from(*dup);
        for (slug, score) in cands {
            if *score < threshold {
                continue;
            }
            flags += 1;
            if *dup && slug == a_slug {
                tp += 1;
            }
        }
    }
    let precision = if flags == 0 {
        1.0
    } else {
        tp as f64 / flags as f64
    };
    (precision, tp as f64 / dups as f64, flags)
}

fn scored(opts: StoreOptions) -> Vec<Checked> {
    let (pairs, firsts) = set();
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = Store::open(dir.path(), opts).unwrap();
    for (label, text) in &firsts {
        store
            .memorize(MemorizeInput {
                label: label.clone(),
                text: text.clone(),
                source_agent: "claude:maker".into(),
                ..Default::default()
            })
            .unwrap();
    }
    pairs
        .iter()
        .map(|p| {
            let cands = store
                .similar_scored(&p.b_label, &p.b_text, None)
                .unwrap()
                .into_iter()
                .map(|h| (h.claim.slug, h.score))
                .collect();
            (p.dup, brains::slugify(&p.a_label), cands)
        })
        .collect()
}

fn report(mode: &str, s: &[Checked], at: f64) -> (f64, f64) {
    println!("{mode}: threshold  precision  recall  flags");
    for t in [0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7] {
        let (p, r, n) = measure(s, t);
        println!("{mode}:   {t:.2}       {p:.3}      {r:.3}   {n}");
    }
    let (p, r, _) = measure(s, at);
    println!("{mode}: at {at:.2}: precision {p:.3}, recall {r:.3}");
    (p, r)
}

#[test]
fn the_near_duplicate_signal_meets_its_goals_with_and_without_the_model() {
    let lexical = scored(StoreOptions::default());
    let (p, r) = report("lexical", &lexical, THRESHOLD_LEXICAL);
    assert!(
        p >= 0.9 && r >= 0.7,
        "lexical: precision {p:.3}, recall {r:.3}"
    );

    let model = medulla::model::load(&model_dir()).expect("the model loads");
    let hybrid = scored(StoreOptions {
        embedder: Some(Arc::clone(&model)),
        ..Default::default()
    });
    let (p, r) = report("hybrid", &hybrid, THRESHOLD_HYBRID);
    assert!(
        p >= 0.9 && r >= 0.7,
        "hybrid: precision {p:.3}, recall {r:.3}"
    );
}

/// Two agents write one fact under two labels: the second write lands and is told which
/// claim says nearly the same, on MCP/REST and in the CLI; doctor lists the cluster; a
/// fact about the same area that says something else is not flagged.
#[test]
fn a_write_is_told_of_the_claim_that_already_says_it() {
    use serde_json::json;
    let o = crate::common::Owner::start();
    let b = o.brain("p");
    let root = b.path();
    let v = b.memorize(
        "deploy command",
        "Deploy with make release, never by hand from a laptop",
    );
    assert!(v.get("similar").is_none(), "nothing near yet: {v}");
    let v = b.memorize(
        "release notes",
        "Release notes are generated from merged PR titles by the changelog script",
    );
    assert!(
        v.get("similar").is_none(),
        "another fact of the same area: {v}"
    );
    let r = crate::cli::medulla(
        &o,
        &root,
        &[
            "memorize",
            "--label",
            "how to deploy",
            "--text",
            "Deploy with make release; never deploy by hand from a laptop",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("near:") && r.stdout.contains("deploy-command"),
        "the CLI says which claim is near: {}",
        r.stdout
    );
    let (_, v) = b.call(
        "memorize",
        json!({ "label": "deploying", "text": "deploy with make release, never by hand" }),
    );
    let near: Vec<&str> = v["similar"]
        .as_array()
        .unwrap_or_else(|| panic!("similar in the answer: {v}"))
        .iter()
        .map(|n| n["slug"].as_str().unwrap())
        .collect();
    assert!(near.contains(&"deploy-command"), "{v}");
    assert_eq!(v["similar"][0]["tier"], "project");
    assert_eq!(v["outcome"], "created", "the write landed all the same");

    let (_, doctor) = o.get("/api/doctor");
    let clusters = doctor["near_duplicates"][0]["clusters"]
        .as_array()
        .unwrap_or_else(|| panic!("doctor lists the cluster: {doctor}"));
    let slugs: Vec<&str> = clusters[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, vec!["deploy-command", "deploying", "how-to-deploy"]);
}
