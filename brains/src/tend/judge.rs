//! The judgement of one pair of claims: what differs between them (marks of one group
//! left unmatched on both sides, an opposite, a negation, a one-word swap), how alike
//! they are (word overlap, blended with the cosine of their embeddings), and from both
//! the verdict: the same thing, a disagreement, or different facts.

use std::collections::HashSet;

use serde::Serialize;

use super::calibration::Calibration;
use super::lexicon::OPPOSITES;
use super::marks::{Kind, Mark, Reading, Word};
use crate::lexical::tokenize;

/// One side of a pair: a claim's label and text.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub label: &'a str,
    pub text: &'a str,
}

/// How alike two claims are.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Evidence {
    /// The score the verdict's thresholds apply to, in 0..1: the overlap blended with
    /// the cosine (the overlap alone without a model).
    pub score: f64,
    /// Dice coefficient of the two claims' stemmed terms (label and text).
    pub overlap: f64,
    /// Cosine of the two embeddings, when a calibrated model made them.
    pub cosine: Option<f64>,
    /// The overlap with what differs left out: how alike the rest of the two claims'
    /// words is. By words alone, whatever the model: two claims that share little
    /// but their subject, each naming something, are different facts, not a
    /// disagreement, however near their embeddings.
    pub rest: f64,
}

/// One thing two claims say differently: a number, a version, a path, an identifier,
/// a name, a word or a negation, with its value on each side (empty where that side
/// says nothing in its place: a negation).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Difference {
    pub kind: Kind,
    /// As the first claim writes it (`5 attempts` is written `5`; a unit is kept:
    /// `15 minutes`).
    pub a: String,
    /// As the second claim writes it.
    pub b: String,
}

/// What the judgement says of a pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "judgement", rename_all = "snake_case")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum Judgement {
    /// They say the same thing: they may be joined.
    Same { evidence: Evidence },
    /// They are alike but for what differs: never joined; a person decides.
    Disagree {
        evidence: Evidence,
        differences: Vec<Difference>,
    },
    /// Different facts (or too little alike to say): left alone.
    Different { evidence: Evidence },
}

impl Judgement {
    pub fn evidence(&self) -> &Evidence {
        match self {
            Judgement::Same { evidence }
            | Judgement::Disagree { evidence, .. }
            | Judgement::Different { evidence } => evidence,
        }
    }

    pub fn is_same(&self) -> bool {
        matches!(self, Judgement::Same { .. })
    }

    pub fn is_disagree(&self) -> bool {
        matches!(self, Judgement::Disagree { .. })
    }

    /// `same`, `disagree` or `different`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Judgement::Same { .. } => "same",
            Judgement::Disagree { .. } => "disagree",
            Judgement::Different { .. } => "different",
        }
    }
}

/// Dice coefficient of two term sets.
fn dice(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    2.0 * a.intersection(b).count() as f64 / (a.len() + b.len()) as f64
}

/// Whether `runs` (a mark's words) stand in `seq` one after another, each the same word
/// or the same stem; a name of one word also as the start of a longer one (`docker` in
/// `Dockerfile`, `Postgres` in `PostgreSQL`).
fn occurs(runs: &[String], seq: &[Word], prefix: bool) -> bool {
    if runs.is_empty() || runs.len() > seq.len() {
        return false;
    }
    let want: Vec<Word> = runs.iter().map(|r| Word::of(r)).collect();
    let same = |w: &Word, x: &Word| !x.word.is_empty() && (w.word == x.word || w.stem == x.stem);
    if seq
        .windows(want.len())
        .any(|win| want.iter().zip(win).all(|(w, x)| same(w, x)))
    {
        return true;
    }
    const MIN_PREFIX: usize = 4;
    prefix
        && want.len() == 1
        && want[0].word.chars().count() >= MIN_PREFIX
        && seq.iter().any(|x| {
            x.word.chars().count() >= MIN_PREFIX
                && (x.word.starts_with(&want[0].word) || want[0].word.starts_with(&x.word))
        })
}

/// Whether an acronym (`RLS`, `DLQ`) stands in `seq` spelt out: as many words one after
/// another, each starting with its letter ("row-level security", "dead letter queue").
fn spelt_out(acronym: &str, seq: &[Word]) -> bool {
    let letters: Vec<char> = acronym.chars().collect();
    if !(2..=6).contains(&letters.len()) || !letters.iter().all(|c| c.is_ascii_uppercase()) {
        return false;
    }
    seq.windows(letters.len()).any(|win| {
        win.iter()
            .zip(&letters)
            .all(|(w, l)| w.word.starts_with(l.to_ascii_lowercase()))
    })
}

/// Whether the other side says `m` too: the same value (any spelling of it), the same
/// file named by a longer or shorter path, or the same name in its words
/// (`ledger_retry` in "the ledger retry table", `Redis` in "redis", `cargo` in
/// `` `cargo test` ``).
fn matched(m: &Mark, mine: &Reading, other: &Reading) -> bool {
    let group = m.kind.group();
    let same_key = |o: &Mark| o.kind.group() == group && o.key == m.key;
    match m.kind {
        Kind::Number | Kind::Version => other.marks.iter().any(same_key),
        // A path both sides name (`src/`) stands for itself, not for every file under it.
        Kind::Path => other.marks.iter().any(|o| {
            o.kind == Kind::Path
                && (o.key == m.key
                    || (paths_agree(&m.key, &o.key)
                        && !mine
                            .marks
                            .iter()
                            .any(|x| x.kind == Kind::Path && x.key == o.key)))
        }),
        // An option is the option it names: `--test` is not said by "tests".
        _ if m.flag => other.marks.iter().any(same_key),
        _ => {
            let name = m.kind == Kind::Name;
            other.marks.iter().any(same_key)
                || occurs(&m.runs, &other.seq, name)
                || (m.split.len() > m.runs.len() && occurs(&m.split, &other.seq, false))
                || (name && spelt_out(&m.shown, &other.seq))
        }
    }
}

/// Two paths that can name the same thing: equal, one the other's tail (`pool.rs`,
/// `db/pool.rs`, `src/db/pool.rs`), or one inside the other (`locales/` and
/// `locales/*.json`). `src/db/pool.rs` and `src/db/conn.rs` do not agree.
fn paths_agree(a: &str, b: &str) -> bool {
    let inside = |long: &str, short: &str| {
        long.len() > short.len()
            && (long.ends_with(short) && long[..long.len() - short.len()].ends_with('/')
                || long.starts_with(short) && long[short.len()..].starts_with('/'))
    };
    a == b || inside(a, b) || inside(b, a)
}

/// What `a` says that `b` does not: its marks `b` has no match for, as `a` writes them.
pub(crate) fn unsaid(a: &Reading, b: &Reading) -> Vec<String> {
    a.marks
        .iter()
        .filter(|m| !matched(m, a, b))
        .map(|m| m.shown.clone())
        .collect()
}

/// A number mark's family: `dur`, `size`, `pct`, … or `` for a bare count.
fn family(key: &str) -> &str {
    match key.split_once(':') {
        Some((f, _)) if f.chars().all(|c| c.is_ascii_lowercase()) => f,
        _ => "",
    }
}

/// The marks each side holds that the other does not, of one group, paired in the
/// order they are written (numbers of one family first: a duration with a duration).
/// A mark left over on one side is a detail the other lacks, no difference.
fn pair_unmatched(a: &[&Mark], b: &[&Mark], out: &mut Vec<Difference>) {
    // Like for like: a duration with a duration, an option with an option.
    let class = |m: &Mark| (family(&m.key).to_string(), m.flag);
    let mut used_b = vec![false; b.len()];
    let mut left_a = Vec::new();
    for ma in a {
        match (0..b.len()).find(|j| !used_b[*j] && class(b[*j]) == class(ma)) {
            Some(j) => {
                used_b[j] = true;
                out.push(difference(ma, b[j]));
            }
            None => left_a.push(*ma),
        }
    }
    // Then numbers of other units ("5 attempts" and "5 minutes"); an option never
    // stands for anything but an option.
    for ma in left_a.into_iter().filter(|m| !m.flag) {
        match (0..b.len()).find(|j| !used_b[*j] && !b[*j].flag) {
            Some(j) => {
                used_b[j] = true;
                out.push(difference(ma, b[j]));
            }
            None => break,
        }
    }
}

/// What was swapped in two texts otherwise word for word the same (compared by stems,
/// stopwords left out): one word put for another wherever it stands, or a few words (at
/// most three on each side) between a common beginning and end (`make release` and
/// `make ship`; `thiserror enums` and `snafu errors`; `Node 20 … Node 22` and `Node 22
/// … Node 20`). A restatement rewords more than that, so this names the swap.
fn swapped(a: &[Word], b: &[Word]) -> Option<Difference> {
    /// Most words swapped on either side.
    const MAX_SWAP: usize = 3;
    /// Fewest words the two texts share around the swap.
    const MIN_SHARED: usize = 3;
    let stems = |s: &[Word]| -> Vec<String> { s.iter().map(|w| w.stem.clone()).collect() };
    let (sa, sb) = (stems(a), stems(b));
    let shown = |s: &[Word]| -> String {
        s.iter()
            .map(|w| w.word.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    // One word put for another wherever it stands, the rest word for word ("the orders
    // cache … an order" and "the products cache … a product").
    if sa.len() == sb.len() {
        let differing: Vec<usize> = (0..sa.len()).filter(|&i| sa[i] != sb[i]).collect();
        let shared = sa.len() - differing.len();
        if let Some(&first) = differing.first() {
            let (x, y) = (&sa[first], &sb[first]);
            if differing.iter().all(|&i| (&sa[i], &sb[i]) == (x, y))
                && shared >= MIN_SHARED
                && 2 * shared >= sa.len()
                && !sa.contains(y)
                && !sb.contains(x)
            {
                return Some(Difference {
                    kind: Kind::Word,
                    a: a[first].word.clone(),
                    b: b[first].word.clone(),
                });
            }
        }
    }
    let prefix = sa.iter().zip(&sb).take_while(|(x, y)| x == y).count();
    let max_suffix = sa.len().min(sb.len()) - prefix;
    let suffix = sa
        .iter()
        .rev()
        .zip(sb.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let (mid_a, mid_b) = (
        &sa[prefix..sa.len() - suffix],
        &sb[prefix..sb.len() - suffix],
    );
    let shared = prefix + suffix;
    // The same words in another order say the same ("order events are published", "we
    // publish order events"), unless they hold numbers: `Node 20 … Node 22` turned round
    // is another fact.
    let mut sorted_a = mid_a.to_vec();
    let mut sorted_b = mid_b.to_vec();
    sorted_a.sort();
    sorted_b.sort();
    let reordered = sorted_a == sorted_b;
    let numeric = mid_a.iter().any(|w| w.chars().any(|c| c.is_ascii_digit()));
    let ok = (!reordered || numeric)
        && (1..=MAX_SWAP).contains(&mid_a.len())
        && (1..=MAX_SWAP).contains(&mid_b.len())
        && shared >= MIN_SHARED
        && 2 * shared >= sa.len().max(sb.len());
    ok.then(|| Difference {
        kind: Kind::Word,
        a: shown(&a[prefix..a.len() - suffix]),
        b: shown(&b[prefix..b.len() - suffix]),
    })
}

fn in_group<'m>(marks: &[&'m Mark], group: u8) -> Vec<&'m Mark> {
    marks
        .iter()
        .filter(|m| m.kind.group() == group)
        .copied()
        .collect()
}

fn difference(a: &Mark, b: &Mark) -> Difference {
    // A number and a version differ as versions when either is one.
    let kind = if a.kind == Kind::Version || b.kind == Kind::Version {
        Kind::Version
    } else if a.kind == Kind::Identifier || b.kind == Kind::Identifier {
        Kind::Identifier
    } else {
        a.kind
    };
    Difference {
        kind,
        a: a.shown.clone(),
        b: b.shown.clone(),
    }
}

/// Judge two readings. `cosine` is the cosine of their embeddings (`label\ntext`, as a
/// store embeds a claim) by the model `cal` was calibrated for; it is ignored when
/// `cal` has no vector weight.
pub fn judge_read(a: &Reading, b: &Reading, cosine: Option<f64>, cal: &Calibration) -> Judgement {
    // A pair with no cosine (a claim not embedded yet) is judged by words alone, with
    // the thresholds calibrated for words alone.
    let cal = match cosine {
        None if cal.vector_weight > 0.0 => &Calibration::LEXICAL,
        _ => cal,
    };
    let cosine = cosine.filter(|_| cal.vector_weight > 0.0);
    let blend = |overlap: f64| match cosine {
        Some(c) => (1.0 - cal.vector_weight) * overlap + cal.vector_weight * c.max(0.0),
        None => overlap,
    };
    let all = |r: &'_ Reading| -> HashSet<String> {
        r.text_terms.iter().chain(&r.label_terms).cloned().collect()
    };
    let (all_a, all_b) = (all(a), all(b));
    let overlap = dice(&all_a, &all_b);

    // What each side holds that the other does not, group by group.
    let lone_a: Vec<&Mark> = a.marks.iter().filter(|m| !matched(m, a, b)).collect();
    let lone_b: Vec<&Mark> = b.marks.iter().filter(|m| !matched(m, b, a)).collect();
    let mut differences = Vec::new();
    for group in 0..3 {
        let (ga, gb) = (in_group(&lone_a, group), in_group(&lone_b, group));
        if !ga.is_empty() && !gb.is_empty() {
            pair_unmatched(&ga, &gb, &mut differences);
        }
    }
    // The rest: the terms of the marks that differ left out.
    let differing =
        |v: &[&Mark]| -> HashSet<String> { v.iter().flat_map(|m| tokenize(&m.shown)).collect() };
    let (off_a, off_b) = (differing(&lone_a), differing(&lone_b));
    let rest_of = |terms: &HashSet<String>, off: &HashSet<String>| -> HashSet<String> {
        terms
            .iter()
            .filter(|t| !off.contains(*t))
            .cloned()
            .collect()
    };
    let (rest_a, rest_b) = (rest_of(&all_a, &off_a), rest_of(&all_b, &off_b));
    let rest = dice(&rest_a, &rest_b);

    // Plain words: an opposite, a negation, or a few words swapped in place.
    let mut words = Vec::new();
    let lone = |r: &Reading, o: &Reading, w: &str| r.plain.contains(w) && !o.plain.contains(w);
    for (x, y) in OPPOSITES {
        let (l, r) = if lone(a, b, x) && lone(b, a, y) {
            (x, y)
        } else if lone(a, b, y) && lone(b, a, x) {
            (y, x)
        } else {
            continue;
        };
        words.push(Difference {
            kind: Kind::Word,
            a: l.to_string(),
            b: r.to_string(),
        });
    }
    // "Not blocked" says the opposite of "blocked", "don't deploy" what "deploys are
    // frozen" says: the count of negating words, odd or even.
    if a.negations.len() % 2 != b.negations.len() % 2 {
        let cues: HashSet<String> = a
            .negations
            .iter()
            .chain(&b.negations)
            .flat_map(|n| tokenize(n))
            .collect();
        let text_a = rest_of(&a.text_terms, &cues);
        let text_b = rest_of(&b.text_terms, &cues);
        if dice(&text_a, &text_b) >= cal.negation {
            words.push(Difference {
                kind: Kind::Negation,
                a: a.negations.join(" "),
                b: b.negations.join(" "),
            });
        }
    }
    if differences.is_empty() && words.is_empty() {
        if let Some(d) = swapped(&a.text_order, &b.text_order) {
            words.push(d);
        }
    }
    differences.extend(words);
    differences.sort();
    differences.dedup();

    let evidence = Evidence {
        score: blend(overlap),
        overlap,
        cosine,
        rest,
    };
    if !differences.is_empty() {
        if evidence.rest >= cal.alike {
            return Judgement::Disagree {
                evidence,
                differences,
            };
        }
        return Judgement::Different { evidence };
    }
    if evidence.score >= cal.same {
        Judgement::Same { evidence }
    } else {
        Judgement::Different { evidence }
    }
}
