//! `cargo xtask bench --tend [--claims 10000,100000] [--rounds 200] [--no-model]
//! [--bin PATH]`: how long `medulla tend --apply` takes over a large brain, and what it
//! costs the seeks served while it runs (issue 73). Each brain is filled through the
//! real `medulla import` with claims of words drawn evenly from 8 000 (a project's
//! vocabulary of names and terms; the Zipf corpus's few common words would make every
//! claim alike), one in five a
//! restatement of another (the same words in another order, under another label), one in
//! twenty a disagreement with another (the same words, another number), the rest facts
//! of their own. Then, on one release owner: seeks over one kept-alive connection alone
//! (the baseline), then the same seeks while a tending pass with `apply` runs on another
//! connection; the pass's wall time, what it joined and found disagreeing against what
//! was planted, and the p50 of the seeks during the pass over the baseline's.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde_json::{json, Value};

use super::http::{bin_arg, start_with, Owner};
use super::import::{legacy_claim, wait_idle};
use super::runner::{header, list, pct, sample};
use super::zipf::{self, Rng};

const USAGE: &str = "usage: cargo xtask bench --tend [--claims 10000,100000] [--rounds 200] \
                     [--no-model] [--bin PATH]";

/// Of every 100 claims: 20 restate another, 5 disagree with another.
const BLOCK: usize = 100;
const RESTATED: usize = 20;
const DISAGREEING: usize = 5;

/// What a brain was filled with, to check the pass against.
struct Planted {
    restatements: usize,
    disagreements: usize,
}

/// Words in the vocabulary: each distinct ([`zipf::word`]).
const VOCAB: usize = 8000;

/// `n` words drawn evenly from the vocabulary.
fn words(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|_| zipf::word(rng.below(VOCAB)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A label of three or four words no other claim has (and no number: a number in a
/// label is a fact a judgement reads).
fn label(rng: &mut Rng, seen: &mut HashSet<String>) -> String {
    loop {
        let n = 3 + rng.below(2);
        let l = words(rng, n);
        if seen.insert(brains::slugify(&l)) {
            return l;
        }
    }
}

/// The same words in another order: the last half first.
fn restated(text: &str) -> String {
    let words: Vec<&str> = text.trim_end_matches('.').split(' ').collect();
    let (a, b) = words.split_at(words.len() / 2);
    format!("{} {}.", b.join(" "), a.join(" "))
}

/// The claims of a brain of `n`, as (label, text).
fn corpus(n: usize, seed: u64) -> (Vec<(String, String)>, Planted) {
    let mut rng = Rng::new(seed);
    let mut seen = HashSet::new();
    let mut out: Vec<(String, String)> = Vec::with_capacity(n);
    let mut planted = Planted {
        restatements: 0,
        disagreements: 0,
    };
    for start in (0..n).step_by(BLOCK) {
        let len = BLOCK.min(n - start);
        // The block's own facts first, then what restates or disagrees with them.
        let mut texts: Vec<String> = (0..len)
            .map(|_| {
                let k = 8 + rng.below(8);
                format!("{}.", words(&mut rng, k))
            })
            .collect();
        for j in 0..len {
            if j < RESTATED && RESTATED + j < len {
                texts[j] = restated(&texts[RESTATED + j]);
                planted.restatements += 1;
            } else if (2 * RESTATED..2 * RESTATED + DISAGREEING).contains(&j)
                && j + DISAGREEING < len
            {
                let base = texts[j + DISAGREEING].trim_end_matches('.').to_string();
                texts[j + DISAGREEING] = format!("{base} after 5 attempts.");
                texts[j] = format!("{base} after 11 attempts.");
                planted.disagreements += 1;
            }
        }
        for t in texts {
            out.push((label(&mut rng, &mut seen), t));
        }
    }
    (out, planted)
}

/// The legacy files of `claims` under `dir`, for the brain at `root`.
fn write_legacy(dir: &Path, root: &str, claims: &[(String, String)]) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for (i, (l, t)) in claims.iter().enumerate() {
        let c = legacy_claim(
            l.clone(),
            t.clone(),
            1_780_000_000_000 + (i as i64) * 1000,
            root,
        );
        std::fs::write(
            dir.join(format!("{}.light.md", c.slug)),
            brains::legacy::render(&c),
        )?;
    }
    Ok(())
}

struct Run {
    n: usize,
    planted: Planted,
    import_s: f64,
    pass: Value,
    tend_s: f64,
    base: (f64, f64),
    during: (f64, f64),
    seeks_during: usize,
}

/// Seek `i`: two words of a claim of the corpus.
fn seek(o: &Owner, root: &str, claims: &[(String, String)], i: usize) -> Result<()> {
    let text = &claims[i * 7919 % claims.len()].1;
    let q: Vec<&str> = text.trim_end_matches('.').split(' ').take(2).collect();
    let v = o.call(
        "seek",
        json!({ "query": q.join(" "), "tier": "project" }),
        root,
    )?;
    if v["results"].as_array().is_none_or(Vec::is_empty) {
        bail!("seek {q:?} found nothing: {v}");
    }
    Ok(())
}

fn one(bin: &Path, model: bool, n: usize, rounds: usize) -> Result<Run> {
    let home = tempfile::tempdir()?;
    let work = tempfile::tempdir()?;
    let base_dir = std::fs::canonicalize(work.path())?;
    let root = base_dir.join("brain");
    std::fs::create_dir_all(&root)?;
    let root = root.to_string_lossy().into_owned();
    let (claims, planted) = corpus(n, 0x7e4d + n as u64);
    write_legacy(&base_dir.join("legacy"), &root, &claims)?;

    // The owner's log at `warn`, and the pass's phases (`debug`), to say where its time went.
    let log = home.path().join("owner.log");
    let o = start_with(
        bin,
        home.path(),
        model,
        Some((&log, "warn,medulla::service::tending=debug")),
    )?;
    o.call("bootstrap", json!({ "root": root }), &root)?;
    let (v, import_s, _) = super::import::import(
        bin,
        home.path(),
        &root,
        &base_dir.join("legacy"),
        false,
        o.child.id(),
    )?;
    if v["imported_live"].as_u64() != Some(n as u64) {
        bail!(
            "the import placed {} live, not {n}: {v}",
            v["imported_live"]
        );
    }
    wait_idle(o.child.id())?;
    for i in 0..10 {
        seek(&o, &root, &claims, i)?;
    }
    // The baseline: the seeks alone.
    let mut alone = Vec::with_capacity(rounds);
    for i in 0..rounds {
        sample(&mut alone, || seek(&o, &root, &claims, i))?;
    }
    // The pass, on a connection of its own, and the same seeks meanwhile.
    let (url, token) = (
        o.url.clone(),
        std::fs::read_to_string(home.path().join("founder.token"))?,
    );
    let pass_root = root.clone();
    let t = Instant::now();
    let pass = std::thread::spawn(move || -> Result<(Value, f64)> {
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(900))
            .build()?;
        let r = http
            .post(format!("{url}/api/call/tend"))
            .header("Medulla-Founder-Token", token.trim())
            .json(&json!({ "brain": pass_root, "apply": true }))
            .send()?;
        let ok = r.status().is_success();
        let v: Value = r.json()?;
        let took = t.elapsed().as_secs_f64();
        if !ok {
            bail!("tend: {v}");
        }
        Ok((v, took))
    });
    let mut during = Vec::new();
    let mut i = 0;
    while !pass.is_finished() {
        sample(&mut during, || seek(&o, &root, &claims, i))?;
        i += 1;
    }
    let (pass, tend_s) = pass
        .join()
        .map_err(|_| anyhow::anyhow!("the pass panicked"))??;
    // A few seeks land after the pass ended: leave the last one out.
    during.pop();
    let phases: Vec<String> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("tending's judgement") || l.contains("tending pass"))
        .map(|l| {
            let at = l.find("medulla::service::tending").unwrap_or(0);
            l[at..].to_string()
        })
        .collect();
    for p in &phases {
        eprintln!("  {p}");
    }
    Ok(Run {
        n,
        planted,
        import_s,
        pass,
        tend_s,
        base: (pct(&mut alone, 0.5), pct(&mut alone, 0.99)),
        seeks_during: during.len(),
        during: (pct(&mut during, 0.5), pct(&mut during, 0.99)),
    })
}

pub fn run(args: &[String]) -> Result<()> {
    let valued = ["--claims", "--rounds", "--bin"];
    for (i, a) in args.iter().enumerate() {
        let value = i > 0 && valued.contains(&args[i - 1].as_str());
        if !value
            && !valued.contains(&a.as_str())
            && !["--tend", "--no-model"].contains(&a.as_str())
        {
            bail!("unknown argument {a:?}: {USAGE}");
        }
    }
    let sizes = match args.iter().position(|a| a == "--claims") {
        Some(i) => list(args.get(i + 1), USAGE)?,
        None => vec![10_000, 100_000],
    };
    let rounds = crate::flag_num(args, "--rounds", 200)?.max(10);
    let model = !args.iter().any(|a| a == "--no-model");
    let bin = bin_arg(args, USAGE)?;
    let mut runs = Vec::new();
    for n in sizes {
        eprintln!("tending a brain of {n} claims...");
        let r = one(&bin, model, n, rounds)?;
        eprintln!("  {:.1} s", r.tend_s);
        runs.push(r);
    }
    println!(
        "\n`medulla tend --apply` over a brain filled by import (1 claim in 5 restates \
         another, 1 in 20 disagrees with another), {}, {}; seeks over one kept-alive \
         connection alone, then while the pass runs on another:\n",
        if model {
            "the model loaded"
        } else {
            "lexical-only"
        },
        bin.display()
    );
    header(
        "| claims | import (s) | tend --apply (s) | joined / planted restatements | disagreements found / planted | seek p50 alone (ms) | p50 during (ms) | ratio | p99 alone / during (ms) |",
    );
    for r in &runs {
        let p = &r.pass;
        let joined: usize = p["joins"]
            .as_array()
            .map(|js| {
                js.iter()
                    .filter(|j| j["done"] == true)
                    .map(|j| j["joined"].as_array().map_or(0, Vec::len))
                    .sum()
            })
            .unwrap_or(0);
        let disagreements = p["disagreements"].as_array().map_or(0, Vec::len);
        println!(
            "| {} | {:.1} | **{:.1}** ({}, {} pairs judged) | {joined} / {} | {disagreements} / {} | {:.2} | {:.2} | **{:.2}×** ({} seeks) | {:.1} / {:.1} |",
            r.n,
            r.import_s,
            r.tend_s,
            p["mode"].as_str().unwrap_or("?"),
            p["pairs_judged"],
            r.planted.restatements,
            r.planted.disagreements,
            r.base.0,
            r.during.0,
            r.during.0 / r.base.0,
            r.seeks_during,
            r.base.1,
            r.during.1,
        );
    }
    Ok(())
}
