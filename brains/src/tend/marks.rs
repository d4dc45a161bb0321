//! Reading one side of a pair: its marks (the tokens that pin a fact to one value:
//! numbers with their units, versions, paths, identifiers and names), its words, its
//! stemmed terms and its negations.

use std::collections::HashSet;

use serde::Serialize;

use super::lexicon::{EXTENSIONS, GENERIC, LOWER_NAMES, NEGATING_STEMS, NOT_PATHS};
use super::numbers;
use crate::lexical::tokenize;

/// What a mark is, and so what kind of thing two claims can differ in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum Kind {
    /// A count or a measure: `5`, `five`, `15 minutes`, `2 GB`, `80%`, `02:00`.
    Number,
    /// A version: `Node 20`, `3.11`, `v1.2.3`.
    Version,
    /// A file, a directory or an address: `src/db/pool.rs`, `migrations/`, `.env`.
    Path,
    /// A name made for code: `ledger_retry`, `RetryQueue`, `DATABASE_URL`, `--workspace`,
    /// a span in backticks.
    Identifier,
    /// A proper name: `Redis`, `Postgres`, `AWS`, a tool written in lower case (`pnpm`).
    Name,
    /// A plain word swapped for its opposite or another word in an otherwise alike claim
    /// (`tabs` and `spaces`, `enabled` and `disabled`).
    Word,
    /// One claim says not (`never`, `no`, `don't`) where the other, alike, does not.
    Negation,
}

impl Kind {
    /// Marks of one group can stand for one another: a number for a version, a name for
    /// an identifier ("Postgres" and `postgres_main`). Differences are looked for within
    /// a group.
    pub(crate) fn group(self) -> u8 {
        match self {
            Kind::Number | Kind::Version => 0,
            Kind::Path => 1,
            Kind::Identifier | Kind::Name => 2,
            Kind::Word => 3,
            Kind::Negation => 4,
        }
    }
}

/// A token that pins a fact to one value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mark {
    pub(crate) kind: Kind,
    /// What two spellings of the same value share: `dur:900` for "15 minutes" and "15m",
    /// `src/db/pool.rs` for "./src/db/pool.rs", `redis` for "Redis".
    pub(crate) key: String,
    /// As written (a number with its unit).
    pub(crate) shown: String,
    /// Its words, lower case (`ledger_retry`: `ledger`, `retry`), which the other side's
    /// words can stand for; and the same with CamelCase split (`RetryQueue`: `retry`,
    /// `queue`).
    pub(crate) runs: Vec<String>,
    pub(crate) split: Vec<String>,
    /// A command-line option (`--workspace`, `-D`): it differs only from another option.
    pub(crate) flag: bool,
}

/// A word of a claim in order: lower case, and its stem (the lexical tokenizer's; the
/// word itself for a stopword). An empty word stands between the label and the text.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Word {
    pub(crate) word: String,
    pub(crate) stem: String,
}

impl Word {
    pub(crate) fn of(w: &str) -> Word {
        let word = w.to_lowercase();
        let stem = tokenize(&word).pop().unwrap_or_else(|| word.clone());
        Word { word, stem }
    }
}

/// One side of a pair, read once (a store-level pass reads each claim once per lookup).
#[derive(Debug, Clone, Default)]
pub struct Reading {
    pub(crate) marks: Vec<Mark>,
    /// The label's words then the text's, in order (an empty word between them).
    pub(crate) seq: Vec<Word>,
    /// The text's words that are no stopwords, in order, each with its stem (the
    /// lexical tokenizer's terms).
    pub(crate) text_order: Vec<Word>,
    /// The same as a set.
    pub(crate) text_terms: HashSet<String>,
    /// Stemmed terms of the label.
    pub(crate) label_terms: HashSet<String>,
    /// The negating words of the text (`never`, `no`, `don't`), lower case.
    pub(crate) negations: Vec<String>,
    /// The text's plain words (no mark), lower case, for opposites.
    pub(crate) plain: HashSet<String>,
}

/// A word of the text as split on white space, with where it stands.
struct Piece {
    /// Cleaned of surrounding punctuation and a possessive `'s`.
    clean: String,
    /// First of a sentence (or of the text, or after a colon or a dash): a capital
    /// there says nothing.
    starts: bool,
    /// Inside backticks.
    code: bool,
}

fn pieces(text: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut starts = true;
    let mut rest = text;
    while !rest.is_empty() {
        let (chunk, code, after) = match rest.find('`') {
            Some(0) => match rest[1..].find('`') {
                Some(close) => (&rest[1..1 + close], true, &rest[close + 2..]),
                None => (&rest[1..], false, ""),
            },
            Some(i) => (&rest[..i], false, &rest[i..]),
            None => (rest, false, ""),
        };
        if code {
            let clean = chunk.split_whitespace().collect::<Vec<_>>().join(" ");
            if !clean.is_empty() {
                out.push(Piece {
                    clean,
                    starts,
                    code: true,
                });
                starts = false;
            }
        } else {
            for raw in chunk.split_whitespace() {
                let clean = clean(raw);
                let ends = raw
                    .trim_end_matches(['"', '\'', ')', ']', '*', '`'])
                    .ends_with(['.', '!', '?', ':', ';']);
                let dash = matches!(raw, "-" | "--" | "—" | "–");
                if !clean.is_empty() && !dash {
                    out.push(Piece {
                        clean,
                        starts,
                        code: false,
                    });
                }
                starts = ends || dash;
            }
        }
        rest = after;
    }
    out
}

fn clean(raw: &str) -> String {
    let mut s = raw.trim_start_matches(['(', '[', '{', '"', '\'', '<', '*', '“', '‘']);
    loop {
        let t = s.trim_end_matches([
            ')', ']', '}', '"', '\'', '>', ',', '.', ';', ':', '!', '?', '*', '”', '’',
        ]);
        let t = t
            .strip_suffix("'s")
            .or_else(|| t.strip_suffix("’s"))
            .unwrap_or(t);
        if t.len() == s.len() {
            break;
        }
        s = t;
    }
    s.to_string()
}

/// Lower-case alphanumeric runs of `s` (`ledger_retry`: `ledger`, `retry`), and the
/// same with CamelCase split too (`RetryQueue`: `retry`, `queue`).
fn parts_of(s: &str) -> (Vec<String>, Vec<String>) {
    let mut runs = Vec::new();
    let mut split = Vec::new();
    for run in s
        .split(|c: char| !c.is_alphanumeric())
        .filter(|r| !r.is_empty())
    {
        runs.push(run.to_lowercase());
        let mut cur = String::new();
        let mut prev_lower = false;
        for c in run.chars() {
            if c.is_uppercase() && prev_lower {
                split.push(std::mem::take(&mut cur).to_lowercase());
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            cur.push(c);
        }
        split.push(cur.to_lowercase());
    }
    (runs, split)
}

fn is_camel(w: &str) -> bool {
    let b: Vec<char> = w.chars().collect();
    b.windows(2)
        .any(|p| p[0].is_lowercase() && p[1].is_uppercase())
}

fn is_path(w: &str) -> bool {
    let lower = w.to_lowercase();
    if NOT_PATHS.contains(&lower.as_str()) {
        return false;
    }
    if w.contains("://") {
        return true;
    }
    if w.contains('/') {
        let segs: Vec<&str> = w.split('/').filter(|s| !s.is_empty()).collect();
        return !segs.is_empty() && w.chars().any(|c| c.is_alphabetic());
    }
    // A dotfile (`.env`, `.github`) or `name.ext`.
    if let Some(rest) = w.strip_prefix('.') {
        return rest.len() > 1 && rest.starts_with(|c: char| c.is_ascii_lowercase());
    }
    match w.rsplit_once('.') {
        Some((stem, ext)) => {
            EXTENSIONS.contains(&ext)
                && stem.chars().any(|c| c.is_alphabetic())
                // `Node.js` and `Next.js` are names, not files.
                && !(ext == "js" && stem.starts_with(|c: char| c.is_uppercase()) && !stem.contains('.'))
        }
        None => false,
    }
}

/// `./src/db/pool.rs` and `src/db/pool.rs/` are `src/db/pool.rs`.
fn path_key(w: &str) -> String {
    let w = w.trim_start_matches("./").trim_end_matches('/');
    w.to_lowercase()
}

/// A dotted name for code (`config.max_retries`, `os.environ`, `staging.internal`):
/// every segment a word, not every one a single letter (`e.g`).
fn is_dotted(w: &str) -> bool {
    let segs: Vec<&str> = w.trim_end_matches("()").split('.').collect();
    segs.len() >= 2
        && segs.iter().all(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
                && s.starts_with(|c: char| c.is_alphabetic() || c == '_')
        })
        && segs.iter().any(|s| s.chars().count() > 1)
}

/// Words that negate what they stand in, and verbs that say something is kept from
/// happening ([`NEGATING_STEMS`]).
fn is_negation(lower: &str) -> bool {
    matches!(
        lower,
        "not" | "no" | "never" | "cannot" | "without" | "nobody" | "none" | "nothing" | "nor"
    ) || lower.ends_with("n't")
        || lower.ends_with("n’t")
        || tokenize(lower)
            .first()
            .is_some_and(|s| NEGATING_STEMS.contains(&s.as_str()))
}

/// Read one side: `label` and `text` of a claim.
pub fn read(label: &str, text: &str) -> Reading {
    // A number stands by its value, with its unit ("5" and "five", "15 minutes" and
    // "900 seconds" are one word each here).
    let runs: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let mut text_order: Vec<Word> = Vec::with_capacity(runs.len());
    let mut i = 0;
    while i < runs.len() {
        let w = runs[i];
        let next = runs.get(i + 1).map(|n| n.to_lowercase());
        i += 1;
        let number = numbers::read(w, next.as_deref());
        // A stopword is left out, unless it counts ("a week").
        if tokenize(w).is_empty() && number.is_none() {
            continue;
        }
        let mut word = Word::of(w);
        if let Some(q) = number {
            if q.took_next {
                word.word = format!("{} {}", word.word, next.unwrap_or_default());
                i += 1;
            }
            word.stem = q.key;
        }
        text_order.push(word);
    }
    let mut r = Reading {
        text_terms: tokenize(text).into_iter().collect(),
        text_order,
        label_terms: tokenize(label).into_iter().collect(),
        ..Reading::default()
    };
    let runs = |s: &str| -> Vec<Word> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(Word::of)
            .collect()
    };
    r.seq = runs(label);
    r.seq.push(Word::default());
    r.seq.extend(runs(text));
    // The label is read as a sentence of its own: it can name a value too.
    for (source, is_text) in [(label, false), (text, true)] {
        let ps = pieces(source);
        let listed = list_units(&ps);
        let mut skip_next = false;
        let mut prev_name = false;
        for (i, p) in ps.iter().enumerate() {
            if skip_next {
                skip_next = false;
                prev_name = false;
                continue;
            }
            let next = ps
                .get(i + 1)
                .filter(|n| !n.code)
                .map(|n| n.clean.to_lowercase());
            // "A quarter of an hour", "half an hour": no hour of its own.
            let part_of = i > 0
                && matches!(p.clean.to_lowercase().as_str(), "a" | "an")
                && matches!(
                    ps[i - 1].clean.to_lowercase().as_str(),
                    "of" | "half" | "quarter"
                );
            let (mark, took_next) = match &listed[i] {
                _ if part_of => (None, false),
                // A number of a list whose last one carries the unit: the word after it
                // is the list's next number, not its unit.
                Some(u) => (classify(p, Some(u), prev_name).0, false),
                None => classify(p, next.as_deref(), prev_name),
            };
            skip_next = took_next;
            prev_name = matches!(&mark, Some(m) if m.kind == Kind::Name);
            let mark_none = mark.is_none();
            // The options of a command in backticks are options too: `cargo test
            // --lib` and `cargo test --test it` differ in one.
            let options: Vec<Mark> = if p.code {
                p.clean
                    .split_whitespace()
                    .filter(|w| w.len() > 1 && w.starts_with('-'))
                    .filter_map(|w| {
                        let piece = Piece {
                            clean: w.to_string(),
                            starts: false,
                            code: false,
                        };
                        classify(&piece, None, false).0
                    })
                    .collect()
            } else {
                Vec::new()
            };
            for m in mark.into_iter().chain(options) {
                if !r
                    .marks
                    .iter()
                    .any(|x| x.key == m.key && x.kind.group() == m.kind.group())
                {
                    r.marks.push(m);
                }
            }
            if mark_none && is_text {
                let lower = p.clean.to_lowercase();
                if is_negation(&lower) {
                    r.negations.push(lower.clone());
                }
                for w in lower
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    r.plain.insert(w.to_string());
                }
            }
        }
    }
    r
}

/// For each piece, the unit of the list of numbers it is in when only the last says it:
/// "150, 300 and 600 pixels" and "between 5 and 10 seconds" measure every number of the
/// list in the last one's unit.
fn list_units(ps: &[Piece]) -> Vec<Option<String>> {
    let lower: Vec<String> = ps.iter().map(|p| p.clean.to_lowercase()).collect();
    let number = |i: usize| {
        ps.get(i).is_some_and(|p| !p.code)
            && numbers::read(&lower[i], None).is_some_and(|q| !q.version)
    };
    let bare = |i: usize| {
        numbers::read(&lower[i], None).is_some_and(|q| !q.key.contains(':'))
            && !lower.get(i + 1).is_some_and(|n| numbers::is_unit(n))
    };
    let mut out = vec![None; ps.len()];
    let mut i = 0;
    while i < ps.len() {
        if !(number(i) && bare(i)) {
            i += 1;
            continue;
        }
        let mut run = vec![i];
        let mut j = i + 1;
        loop {
            let k = if lower
                .get(j)
                .is_some_and(|w| matches!(w.as_str(), "and" | "or" | "to"))
            {
                j + 1
            } else {
                j
            };
            if !number(k) {
                break;
            }
            run.push(k);
            if !bare(k) {
                break;
            }
            j = k + 1;
        }
        let last = *run.last().expect("a run has a number");
        let unit = lower
            .get(last + 1)
            .filter(|n| numbers::is_unit(n))
            .cloned()
            .or_else(|| {
                let w = &lower[last];
                let suffix = w.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                numbers::is_unit(suffix).then(|| suffix.to_string())
            });
        if let Some(u) = unit.filter(|_| run.len() > 1) {
            for &n in &run[..run.len() - 1] {
                out[n] = Some(u.clone());
            }
        }
        i = last + 1;
    }
    out
}

/// A piece read as a mark, and whether the next word was taken as its unit.
fn classify(p: &Piece, next: Option<&str>, after_name: bool) -> (Option<Mark>, bool) {
    let w = p.clean.as_str();
    let mark = |kind: Kind, key: String| {
        let (runs, split) = parts_of(w);
        Mark {
            kind,
            key,
            shown: w.to_string(),
            runs,
            split,
            flag: false,
        }
    };
    if let Some(q) = numbers::read(w, if p.code { None } else { next }) {
        let kind = if q.version || after_name {
            Kind::Version
        } else {
            Kind::Number
        };
        let mut m = mark(kind, q.key);
        if let Some(n) = next.filter(|_| q.took_next) {
            m.shown = format!("{w} {n}");
        }
        return (Some(m), q.took_next);
    }
    // `3-node`, `three-node`, `15-minute`: the number, with its unit when the word
    // after the hyphen is one.
    if let Some((head, tail)) = w.split_once('-') {
        if let Some(q) = numbers::read(head, Some(&tail.to_lowercase())) {
            let kind = if q.version {
                Kind::Version
            } else {
                Kind::Number
            };
            return (Some(mark(kind, q.key)), false);
        }
    }
    if w.starts_with(|c: char| c.is_ascii_digit()) {
        // `2fa`, `4xx`, `24/7`: a value all the same, kept as written.
        return (Some(mark(Kind::Name, w.to_lowercase())), false);
    }
    if is_path(w) {
        return (Some(mark(Kind::Path, path_key(w))), false);
    }
    let lower = w.to_lowercase();
    if p.code {
        return (Some(mark(Kind::Identifier, lower)), false);
    }
    let alpha = w.chars().any(|c| c.is_alphabetic());
    if !alpha {
        return (None, false);
    }
    if w.starts_with('-') && w.len() > 1 {
        let mut m = mark(Kind::Identifier, lower);
        m.flag = true;
        return (Some(m), false);
    }
    if w.contains('_')
        || w.contains("::")
        || w.contains('=')
        || w.ends_with("()")
        || is_camel(w)
        || (w.contains('.') && is_dotted(w))
    {
        // `Node.js`: the name of the runtime.
        if let Some(stem) = w.strip_suffix(".js").filter(|s| !s.contains('.')) {
            return (Some(mark(Kind::Name, stem.to_lowercase())), false);
        }
        return (Some(mark(Kind::Identifier, lower)), false);
    }
    let has_digit = w.chars().any(|c| c.is_ascii_digit());
    let caps = w.chars().filter(|c| c.is_uppercase()).count();
    let letters = w.chars().filter(|c| c.is_alphabetic()).count();
    if has_digit {
        // `s3`, `ec2`, `p95`, `sha256`, `utf-8`.
        return (Some(mark(Kind::Name, lower)), false);
    }
    if LOWER_NAMES.contains(&lower.as_str()) {
        return (Some(mark(Kind::Name, lower)), false);
    }
    // A capital on a common word or a generic acronym (`FROM`, `API`, `HTTP`) names
    // nothing in particular.
    if tokenize(&lower).is_empty() || GENERIC.contains(&lower.as_str()) {
        return (None, false);
    }
    if caps >= 2 && caps == letters {
        // An acronym: `AWS`, `UTC`, `HMAC-SHA`.
        return (Some(mark(Kind::Name, lower)), false);
    }
    if caps >= 1 && w.contains('-') {
        // `X-Signature`, `Content-Type`.
        return (Some(mark(Kind::Name, lower)), false);
    }
    if w.contains('-') && w.split('-').all(|s| !s.is_empty()) {
        // `acme-tf-state`, `export-events`: a name made for code, which the other side
        // says too when it has its words (`dead-letter queue`, "dead letter queue").
        return (Some(mark(Kind::Identifier, lower)), false);
    }
    if !p.starts && w.starts_with(|c: char| c.is_uppercase()) && letters > 1 {
        return (Some(mark(Kind::Name, lower)), false);
    }
    (None, false)
}
