//! `cargo xtask eval --tend`: the judgement under `medulla tend` (`brains::tend`)
//! measured on its labelled set, `brains/tests/data/tend.tsv`: pairs of codebase facts
//! that say the same thing (`same`), that are alike but for a number, a version, a
//! path, an identifier, a name or a word (`disagree`), or that are another fact of the
//! same area (`different`).
//!
//! What is measured is JOINING: a pair judged the same that is labelled `same` is a true
//! positive; a `disagree` or `different` pair judged the same is a false positive (a
//! join that would lose a fact); a `same` pair judged otherwise is a false negative.
//! Beside it, how well disagreements are told (judged `disagree` against labelled
//! `disagree`), which decides what a person is asked to review.
//!
//! Three ways of comparing: words alone (no model), potion-base-8M (the static model,
//! when fetched: `cargo xtask fetch-model`) and all-MiniLM-L6-v2 (when assembled in the
//! cache by `medulla model fetch --minilm`, or with `--minilm`, which assembles it).
//!
//! Splits, by a fixed rule: rows before the `# fresh-1` line are split by their first
//! label, in the order first labels appear: the 1st, 3rd, 5th… tune, the others are
//! held out (an anchor's rows stay together). Rows after `# fresh-1` were written after
//! the judgement's rules were first frozen, rows after `# fresh-2` after they were
//! revised, both held out (the set's comments and `brains/src/tend/mod.rs` say what
//! their first measurements changed). The thresholds of `brains::tend::Calibration`
//! are the ones the rule below picks on the tuning half; a run prints what the rule
//! picks beside the constants, so a drift shows.
//!
//! The rule: the weight of the cosine is fixed at 0.5 with a model (0 without); `same`
//! (0.30…0.90, by 0.05) is the threshold with the highest tuning recall whose tuning
//! precision is 1 there and one step below (a margin); ties go to the higher threshold.
//! Then `alike` (0.10…0.90) is the lowest threshold with the most pairs told right
//! among those where something differs (disagree against not). `--grid` prints the
//! tuning precision and recall at every `same`.
//!
//! `--store` also puts every claim of the set in one store and runs the store-level pass
//! (`Store::tend_candidates`), counting the pairs its clusters join. `--errors` prints
//! every misjudged pair.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use brains::tend::{self, Calibration, Judgement, Reading};
use brains::Embedder;

const USAGE: &str = "usage: cargo xtask eval --tend [--store] [--errors] [--grid] [--minilm]";

/// The tuning precision a threshold must reach, and the one a step below it must (a
/// margin): no wrong join at all on the tuning half, so that text the thresholds never
/// saw has room (a rule that let the tuning half keep one wrong join in 30 gave 0.84 on
/// text written afterwards, `fresh-2`).
const PRECISION_AT: f64 = 1.0;
const PRECISION_BELOW: f64 = 1.0;

/// The weight of the cosine with a model, fixed beforehand (the write-time `similar`
/// signal's): the tuning half cannot tell weights apart, many separate it alike.
const VECTOR_WEIGHT: f64 = 0.5;

/// The labelled set, from the workspace root.
const SET: &str = "brains/tests/data/tend.tsv";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Split {
    Tune,
    Held,
    /// Rows after the `# fresh-1` line.
    Fresh1,
    /// Rows after the `# fresh-2` line.
    Fresh2,
}

impl Split {
    fn name(self) -> &'static str {
        match self {
            Split::Tune => "tuning",
            Split::Held => "held-out",
            Split::Fresh1 => "fresh-1",
            Split::Fresh2 => "fresh-2",
        }
    }
}

struct Row {
    kind: String,
    split: Split,
    a: (String, String),
    b: (String, String),
}

fn rows(text: &str) -> Result<Vec<Row>> {
    let mut out = Vec::new();
    let mut firsts: Vec<String> = Vec::new();
    let mut fresh = None;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("# fresh-1") {
            fresh = Some(Split::Fresh1);
        }
        if line.starts_with("# fresh-2") {
            fresh = Some(Split::Fresh2);
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 5 || !matches!(f[0], "same" | "disagree" | "different") {
            bail!("{SET}:{}: want `kind\\tlabel A\\ttext A\\tlabel B\\ttext B` with kind same, disagree or different", n + 1);
        }
        let split = if let Some(f) = fresh {
            f
        } else {
            let at = match firsts.iter().position(|x| x == f[1]) {
                Some(i) => i,
                None => {
                    firsts.push(f[1].to_string());
                    firsts.len() - 1
                }
            };
            if at % 2 == 0 {
                Split::Tune
            } else {
                Split::Held
            }
        };
        out.push(Row {
            kind: f[0].to_string(),
            split,
            a: (f[1].to_string(), f[2].to_string()),
            b: (f[3].to_string(), f[4].to_string()),
        });
    }
    Ok(out)
}

/// The rows read once, each side's reading and cosine for one way of comparing.
struct Prepared<'r> {
    rows: &'r [Row],
    readings: Vec<(Reading, Reading)>,
    cosines: Vec<Option<f64>>,
}

fn prepare<'r>(rows: &'r [Row], embedder: Option<&dyn Embedder>) -> Result<Prepared<'r>> {
    let readings = rows
        .iter()
        .map(|r| (tend::read(&r.a.0, &r.a.1), tend::read(&r.b.0, &r.b.1)))
        .collect();
    let cosines = match embedder {
        None => vec![None; rows.len()],
        Some(e) => {
            // As a store embeds a claim: its label, a newline, its text.
            let texts: Vec<String> = rows
                .iter()
                .flat_map(|r| {
                    [
                        format!("{}\n{}", r.a.0, r.a.1),
                        format!("{}\n{}", r.b.0, r.b.1),
                    ]
                })
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vs = e.embed(&refs)?;
            vs.chunks(2)
                .map(|p| Some(f64::from(brains::vector::cosine(&p[0], &p[1]))))
                .collect()
        }
    };
    Ok(Prepared {
        rows,
        readings,
        cosines,
    })
}

impl Prepared<'_> {
    fn judge(&self, i: usize, cal: &Calibration) -> Judgement {
        let (a, b) = &self.readings[i];
        tend::judge_read(a, b, self.cosines[i], cal)
    }
}

/// Joining's counts over some rows.
#[derive(Default, Clone, Copy)]
struct Counts {
    pairs: usize,
    tp: usize,
    fp: usize,
    fn_: usize,
    /// Judged disagree and labelled so; judged disagree; labelled disagree.
    dis_right: usize,
    dis_judged: usize,
    dis_labelled: usize,
}

impl Counts {
    fn add(&mut self, kind: &str, j: &Judgement) {
        self.pairs += 1;
        match (kind, j.is_same()) {
            ("same", true) => self.tp += 1,
            ("same", false) => self.fn_ += 1,
            (_, true) => self.fp += 1,
            _ => {}
        }
        self.dis_judged += usize::from(j.is_disagree());
        self.dis_labelled += usize::from(kind == "disagree");
        self.dis_right += usize::from(j.is_disagree() && kind == "disagree");
    }
    fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }
    fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }
}

/// `n / d`, 1 when there is nothing to divide (no join made: none was wrong).
fn ratio(n: usize, d: usize) -> f64 {
    if d == 0 {
        1.0
    } else {
        n as f64 / d as f64
    }
}

fn count(p: &Prepared<'_>, cal: &Calibration, split: Option<Split>) -> Counts {
    let mut c = Counts::default();
    for (i, r) in p.rows.iter().enumerate() {
        if split.is_none_or(|s| s == r.split) {
            c.add(&r.kind, &p.judge(i, cal));
        }
    }
    c
}

/// What the rule in the module doc picks on the tuning half.
fn calibrate(p: &Prepared<'_>, base: &Calibration, model: bool, grid_too: bool) -> Calibration {
    let grid = |from: u32, to: u32| (from..=to).step_by(5).map(|x| f64::from(x) / 100.0);
    let weights: Vec<f64> = if model {
        vec![VECTOR_WEIGHT]
    } else {
        vec![0.0]
    };
    let with = |w: f64, same: f64, alike: f64| Calibration {
        vector_weight: w,
        same,
        alike,
        ..*base
    };
    let mut best: Option<(f64, f64, f64)> = None;
    for &w in &weights {
        for same in grid(30, 90) {
            let at = count(p, &with(w, same, base.alike), Some(Split::Tune));
            let below = count(p, &with(w, same - 0.05, base.alike), Some(Split::Tune));
            if at.precision() < PRECISION_AT || below.precision() < PRECISION_BELOW {
                continue;
            }
            let r = at.recall();
            let better =
                best.is_none_or(|(br, bs, _)| r > br + 1e-9 || (r > br - 1e-9 && same > bs + 1e-9));
            if better {
                best = Some((r, same, w));
            }
        }
    }
    if grid_too {
        for &w in &weights {
            let row: Vec<String> = grid(30, 90)
                .map(|same| {
                    let c = count(p, &with(w, same, base.alike), Some(Split::Tune));
                    format!("{same:.2} {:.3}/{:.2}", c.precision(), c.recall())
                })
                .collect();
            println!("    w {w:.2}: {}", row.join(" "));
        }
    }
    let (_, same, w) = best.unwrap_or((0.0, 0.9, weights[0]));
    // Among pairs where something differs, disagree told from not.
    let mut alike_best = (0usize, base.alike);
    for alike in grid(10, 90) {
        let cal = with(w, same, alike);
        let right = p
            .rows
            .iter()
            .enumerate()
            .filter(|(i, r)| r.split == Split::Tune && differs_at_all(p, *i))
            .filter(|(i, r)| p.judge(*i, &cal).is_disagree() == (r.kind == "disagree"))
            .count();
        if right > alike_best.0 {
            alike_best = (right, alike);
        }
    }
    with(w, same, alike_best.1)
}

/// Whether anything differs in pair `i`, whatever the thresholds.
fn differs_at_all(p: &Prepared<'_>, i: usize) -> bool {
    let open = Calibration {
        vector_weight: 0.0,
        same: 0.0,
        alike: 0.0,
        ..Calibration::LEXICAL
    };
    let (a, b) = &p.readings[i];
    tend::judge_read(a, b, Some(0.0), &open).is_disagree()
}

struct Mode {
    cal: Calibration,
    embedder: Option<Arc<dyn Embedder>>,
}

pub fn run(args: &[String]) -> Result<()> {
    let (mut store, mut errors, mut minilm, mut grid) = (false, false, false, false);
    for a in args {
        match a.as_str() {
            "--tend" => {}
            "--store" => store = true,
            "--errors" => errors = true,
            "--minilm" => minilm = true,
            "--grid" => grid = true,
            "--help" | "-h" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument {other:?}: {USAGE}"),
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text =
        std::fs::read_to_string(root.join(SET)).with_context(|| format!("cannot read {SET}"))?;
    let rows = rows(&text)?;
    let mut modes = vec![Mode {
        cal: Calibration::LEXICAL,
        embedder: None,
    }];
    match medulla::model::load_default()? {
        Some(e) => modes.push(Mode {
            cal: Calibration::for_model(Some(e.id())),
            embedder: Some(e),
        }),
        None => println!("potion-base-8M: not fetched (`cargo xtask fetch-model`), not measured"),
    }
    match load_minilm(minilm)? {
        Some(e) => modes.push(Mode {
            cal: Calibration::for_model(Some(e.id())),
            embedder: Some(e),
        }),
        None => println!("all-MiniLM-L6-v2: not assembled (`medulla model fetch --minilm`, or --minilm), not measured"),
    }
    let by = |k: &str| rows.iter().filter(|r| r.kind == k).count();
    println!(
        "{SET}: {} pairs ({} same, {} disagree, {} different); tuning {}, held-out {}, fresh-1 {}, fresh-2 {}",
        rows.len(),
        by("same"),
        by("disagree"),
        by("different"),
        rows.iter().filter(|r| r.split == Split::Tune).count(),
        rows.iter().filter(|r| r.split == Split::Held).count(),
        rows.iter().filter(|r| r.split == Split::Fresh1).count(),
        rows.iter().filter(|r| r.split == Split::Fresh2).count(),
    );
    for mode in &modes {
        let name = match &mode.embedder {
            Some(e) => format!("{} ({})", mode.cal.mode, e.id()),
            None => "lexical (words alone)".to_string(),
        };
        if mode.embedder.is_some() && mode.cal.mode == Calibration::LEXICAL.mode {
            println!(
                "\n{name}: no calibration for this model; a store under it judges by words alone"
            );
            continue;
        }
        let p = prepare(&rows, mode.embedder.as_deref())?;
        let cal = mode.cal;
        println!(
            "\n{name}: w {:.2}, same {:.2}, alike {:.2}, negation {:.2}",
            cal.vector_weight, cal.same, cal.alike, cal.negation
        );
        println!("  split     pairs   TP  FP  FN  precision  recall | disagree: precision  recall");
        for split in [
            Some(Split::Tune),
            Some(Split::Held),
            Some(Split::Fresh1),
            Some(Split::Fresh2),
            None,
        ] {
            let c = count(&p, &cal, split);
            if c.pairs == 0 {
                continue;
            }
            println!(
                "  {:<9} {:>5} {:>4} {:>3} {:>3}  {:>9.3} {:>7.3} |           {:>9.3} {:>7.3}",
                split.map_or("all", Split::name),
                c.pairs,
                c.tp,
                c.fp,
                c.fn_,
                c.precision(),
                c.recall(),
                ratio(c.dis_right, c.dis_judged),
                ratio(c.dis_right, c.dis_labelled),
            );
        }
        let picked = calibrate(&p, &cal, mode.embedder.is_some(), grid);
        let agrees = (picked.vector_weight - cal.vector_weight).abs() < 1e-9
            && (picked.same - cal.same).abs() < 1e-9
            && (picked.alike - cal.alike).abs() < 1e-9;
        println!(
            "  the rule on the tuning half picks w {:.2}, same {:.2}, alike {:.2}{}",
            picked.vector_weight,
            picked.same,
            picked.alike,
            if agrees {
                " (the constants)"
            } else {
                ": NOT the constants in brains/src/tend/calibration.rs"
            }
        );
        for split in [Split::Tune, Split::Held, Split::Fresh1, Split::Fresh2] {
            let row: Vec<String> = (8..=15)
                .map(|x| {
                    let same = f64::from(x) * 0.05;
                    let c = count(&p, &Calibration { same, ..cal }, Some(split));
                    format!("{same:.2} {:.2}/{:.2}", c.precision(), c.recall())
                })
                .collect();
            println!(
                "  {} precision/recall by same: {}",
                split.name(),
                row.join(", ")
            );
        }
        if errors {
            print_errors(&p, &cal);
        }
        if store {
            store_pass(&rows, mode)?;
        }
    }
    Ok(())
}

/// all-MiniLM-L6-v2 when it is assembled in the cache (or `fetch` says to assemble it).
fn load_minilm(fetch: bool) -> Result<Option<Arc<dyn Embedder>>> {
    let dir = medulla::model::cache_root().join(medulla::model::MINILM);
    let present = dir.join("READY").is_file() && medulla::model::locate_runtime().is_some();
    if !present && !fetch {
        return Ok(None);
    }
    let mut progress = |s: &str| eprintln!("  {s}");
    medulla::model::fetch_runtime(&mut progress)?;
    let dir = medulla::model::fetch_minilm(None, &mut progress)?;
    Ok(Some(Arc::new(medulla::model::Transformer::from_dir(
        &dir, None,
    )?)))
}

fn print_errors(p: &Prepared<'_>, cal: &Calibration) {
    println!("  misjudged:");
    for (i, r) in p.rows.iter().enumerate() {
        let j = p.judge(i, cal);
        if j.as_str() == r.kind {
            continue;
        }
        let e = j.evidence();
        let what = match &j {
            Judgement::Disagree { differences, .. } => differences
                .iter()
                .map(|d| format!("{:?} {:?}/{:?}", d.kind, d.a, d.b))
                .collect::<Vec<_>>()
                .join(", "),
            _ => String::new(),
        };
        println!(
            "    [{}] {} judged {} (score {:.2}, overlap {:.2}, cosine {}) {what}\n      A: {}\n      B: {}",
            r.split.name(),
            r.kind,
            j.as_str(),
            e.score,
            e.overlap,
            e.cosine.map_or("-".into(), |c| format!("{c:.2}")),
            r.a.1,
            r.b.1
        );
    }
}

/// Every claim of the set in one store, tended: the pairs its clusters join, against the
/// labels (a joined pair the set does not label is counted apart and printed).
fn store_pass(rows: &[Row], mode: &Mode) -> Result<()> {
    let mut claims: BTreeMap<String, String> = BTreeMap::new();
    for r in rows {
        for (label, text) in [&r.a, &r.b] {
            claims.insert(label.clone(), text.clone());
        }
    }
    let labelled: HashMap<(String, String), &str> = rows
        .iter()
        .flat_map(|r| {
            [
                ((r.a.0.clone(), r.b.0.clone()), r.kind.as_str()),
                ((r.b.0.clone(), r.a.0.clone()), r.kind.as_str()),
            ]
        })
        .collect();
    let dir = tempfile::tempdir()?;
    let list: Vec<(String, String)> = claims.into_iter().collect();
    let store = super::open_store(dir.path(), &mode.embedder, "/eval/tend", &list)?;
    let started = std::time::Instant::now();
    let t = store.tend_candidates()?;
    let took = started.elapsed();
    let (mut tp, mut fp, mut unlabelled) = (0usize, 0usize, BTreeSet::new());
    for c in &t.clusters {
        for (k, x) in c.members.iter().enumerate() {
            for y in &c.members[k + 1..] {
                match labelled.get(&(x.label.clone(), y.label.clone())) {
                    Some(&"same") => tp += 1,
                    Some(_) => fp += 1,
                    None => {
                        unlabelled.insert((x.label.clone(), y.label.clone()));
                    }
                }
            }
        }
    }
    let same = rows.iter().filter(|r| r.kind == "same").count();
    let disagree_found = t
        .disagreements
        .iter()
        .filter(|d| labelled.get(&(d.a_label.clone(), d.b_label.clone())) == Some(&"disagree"))
        .count();
    println!(
        "  store pass ({} claims, {} pairs judged, {took:.1?}): {} clusters; joined pairs: {tp} labelled same, {fp} labelled disagree or different, {} unlabelled; recall {:.3}; {} disagreements ({} of {} labelled disagree)",
        t.claims,
        t.pairs_judged,
        t.clusters.len(),
        unlabelled.len(),
        ratio(tp, same),
        t.disagreements.len(),
        disagree_found,
        rows.iter().filter(|r| r.kind == "disagree").count(),
    );
    for (a, b) in unlabelled {
        println!("    unlabelled join: {a:?} + {b:?}");
    }
    Ok(())
}
