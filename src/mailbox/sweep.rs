//! Reading the mailbox: the sweep (the union of the spool and every known box, each
//! letter once, with fates and the boxes that could not be reached), one box's letters,
//! and each brain's open count.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::distribute::{known_boxes, load_state};
use super::letter::{counts, fates, read_letters, Counts, Fate, Letter};
use super::{box_path, MEDULLA_BOX, SPOOL};

/// One letter as a box or the sweep shows it. The usual fields are lifted out of the
/// letter for convenience; `letter` is the whole of it, as written.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LetterRow {
    pub id: String,
    pub state: Option<Fate>,
    pub answers: Vec<String>,
    pub answered_by: Vec<String>,
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub letter: Value,
    #[serde(flatten)]
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub fields: serde_json::Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found_in: Option<Vec<String>>,
}

impl LetterRow {
    /// A lifted field of the letter (`class`, `kind`, `ts`, ...).
    pub fn field(&self, k: &str) -> Option<&Value> {
        self.fields.get(k)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Unreachable {
    #[serde(rename = "box")]
    pub box_file: PathBuf,
    pub why: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Sweep {
    pub letters: Vec<LetterRow>,
    pub counts: Counts,
    pub unreachable: Vec<Unreachable>,
    pub spool_garbage_lines: usize,
    pub pending_distribution: usize,
    pub refused_at_floor: usize,
}

const LIFTED: [&str; 10] = [
    "ts", "agent", "class", "kind", "repo", "brain", "tool", "what", "expected", "snippet",
];

fn row(
    l: &Letter,
    f: &HashMap<String, Fate>,
    all: &[Letter],
    found_in: Option<&Vec<String>>,
) -> LetterRow {
    LetterRow {
        id: l.id.clone(),
        state: f.get(&l.id).copied(),
        answers: l.answers(),
        answered_by: all
            .iter()
            .filter(|o| o.answers().contains(&l.id))
            .map(|o| o.id.clone())
            .collect(),
        letter: l.body.clone(),
        fields: LIFTED
            .iter()
            .filter_map(|k| l.body.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect(),
        found_in: found_in.cloned(),
    }
}

/// The union of the spool and every known box, each letter once, with fates, and the
/// boxes that could not be read named.
pub fn sweep(home: &Path, roots: &[PathBuf]) -> Sweep {
    let st = load_state(home);
    let (spool, garbage) = read_letters(&home.join(SPOOL)).unwrap_or_default();
    let mut all: Vec<Letter> = Vec::new();
    let mut seen = HashSet::new();
    let mut where_found: HashMap<String, Vec<String>> = HashMap::new();
    for l in spool {
        where_found
            .entry(l.id.clone())
            .or_default()
            .push("spool".into());
        if seen.insert(l.id.clone()) {
            all.push(l);
        }
    }
    let mut unreachable = Vec::new();
    for b in known_boxes(home, roots, &st) {
        let repo_dir = b.parent().and_then(Path::parent).map(Path::to_path_buf);
        if b != home.join(MEDULLA_BOX) && !repo_dir.as_ref().is_some_and(|d| d.is_dir()) {
            unreachable.push(Unreachable {
                box_file: b,
                why: "the repository is not on this machine".into(),
            });
            continue;
        }
        match read_letters(&b) {
            Ok((ls, _)) => {
                for l in ls {
                    where_found
                        .entry(l.id.clone())
                        .or_default()
                        .push(b.to_string_lossy().into_owned());
                    if seen.insert(l.id.clone()) {
                        all.push(l);
                    }
                }
            }
            Err(e) => unreachable.push(Unreachable {
                box_file: b,
                why: e.to_string(),
            }),
        }
    }
    for (repo, _) in st.pending.values() {
        unreachable.push(Unreachable {
            box_file: box_path(Path::new(repo)),
            why: "pending: the repository is not on this machine".into(),
        });
    }
    let f = fates(&all, &all);
    Sweep {
        letters: all
            .iter()
            .map(|l| {
                let r = row(l, &f, &all, where_found.get(&l.id));
                // A letter refused at the floor carries a secret: the sweep names it and
                // what matched (redacted), never its text.
                match st.refused.get(&l.id) {
                    Some(found) => withheld(r, found),
                    None => r,
                }
            })
            .collect(),
        counts: counts(&f),
        unreachable,
        spool_garbage_lines: garbage,
        pending_distribution: st.pending.len(),
        refused_at_floor: st.refused.len(),
    }
}

/// A refused letter's row with its content withheld.
fn withheld(mut r: LetterRow, found: &str) -> LetterRow {
    let keep = ["ts", "agent", "class", "kind"];
    r.fields.retain(|k, _| keep.contains(&k.as_str()));
    r.letter = serde_json::json!({
        "withheld": format!("refused at the hygiene floor ({found}); it stays in the spool only")
    });
    r
}

/// One box's letters with fates (answers looked up across the spool and the box).
pub fn read_box(home: &Path, box_file: &Path) -> std::io::Result<(Vec<LetterRow>, Counts)> {
    let (spool, _) = read_letters(&home.join(SPOOL)).unwrap_or_default();
    read_box_with(&spool, box_file)
}

/// One box's letters with fates, the spool already read (answers may live in either).
fn read_box_with(spool: &[Letter], box_file: &Path) -> std::io::Result<(Vec<LetterRow>, Counts)> {
    let (letters, _) = read_letters(box_file)?;
    let mut all = letters.clone();
    let ids: HashSet<&str> = letters.iter().map(|l| l.id.as_str()).collect();
    all.extend(
        spool
            .iter()
            .filter(|l| !ids.contains(l.id.as_str()))
            .cloned(),
    );
    let f = fates(&letters, &all);
    let rows = letters.iter().map(|l| row(l, &f, &all, None)).collect();
    Ok((rows, counts(&f)))
}

/// Each root's open count, reading the spool once for all of them.
pub fn open_counts(home: &Path, roots: &[PathBuf]) -> HashMap<String, usize> {
    let (spool, _) = read_letters(&home.join(SPOOL)).unwrap_or_default();
    roots
        .iter()
        .filter_map(|r| {
            let (_, c) = read_box_with(&spool, &box_path(r)).ok()?;
            Some((r.to_string_lossy().into_owned(), c.open))
        })
        .collect()
}
