//! Distribution: one pass reads the spool from the saved offset, files each letter into
//! its one box, retries the pending ones and saves the new offset. Idempotent: a box
//! never gets a letter twice, and letters a box already holds are never touched.

use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::letter::{destination, read_letters, Context, Destination, Letter};
use super::{box_path, MEDULLA_BOX, SPOOL};

const STATE: &str = "mailbox-state.json";

/// Where one letter went: a box, pending, or refused at the hygiene floor (spool-only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "to", rename_all = "snake_case")]
pub enum Filed {
    /// `<repo>/.medulla/inbox.jsonl`.
    Project { repo: PathBuf },
    /// The medulla's box: a projectless letter.
    Medulla,
    /// Its repository is absent or no repository (yet): it waits in the spool.
    #[serde(rename = "pending_distribution")]
    Pending { repo: String },
    /// It carries a secret or a conflict marker: it stays in the spool only.
    Refused { found: String },
}

/// What the distributor remembers between runs.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct State {
    /// Bytes of the spool already read.
    pub offset: u64,
    /// Letters whose repository is absent: id → (repo, raw line).
    pub pending: BTreeMap<String, (String, String)>,
    /// Letters refused at the hygiene floor: id → what matched (redacted).
    pub refused: BTreeMap<String, String>,
    /// Spool lines that are not JSON objects: kept in the spool, counted here.
    pub garbage_lines: u64,
    /// Letters filed, by box path.
    pub filed: BTreeMap<String, u64>,
}

pub fn load_state(home: &Path) -> State {
    std::fs::read(home.join(STATE))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn save_state(home: &Path, st: &State) -> std::io::Result<()> {
    let tmp = home.join(format!("{STATE}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(st)?)?;
    std::fs::rename(tmp, home.join(STATE))
}

fn ids_in(path: &Path) -> HashSet<String> {
    read_letters(path)
        .map(|(ls, _)| ls.into_iter().map(|l| l.id).collect())
        .unwrap_or_default()
}

/// Append raw lines to a box, skipping ids it already holds (boxes travel with git and
/// may hold letters this spool never saw; those are never touched).
fn file_into(box_file: &Path, letters: &[&Letter]) -> std::io::Result<u64> {
    let have = ids_in(box_file);
    let new: Vec<&&Letter> = letters.iter().filter(|l| !have.contains(&l.id)).collect();
    if new.is_empty() {
        return Ok(0);
    }
    if let Some(dir) = box_file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(box_file)?;
    let mut buf = String::new();
    let mut seen = HashSet::new();
    for l in new {
        if seen.insert(&l.id) {
            buf.push_str(&l.raw);
            buf.push('\n');
        }
    }
    super::append_whole(&mut f, buf.as_bytes())?;
    Ok(seen.len() as u64)
}

/// What one distribution pass did.
#[derive(Debug, Default, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PassReport {
    pub read: u64,
    pub filed: u64,
    pub pending: usize,
    pub refused: usize,
    pub garbage_lines: u64,
    /// id → where it went, for the letters read in this pass.
    pub destinations: BTreeMap<String, Filed>,
    pub errors: Vec<String>,
}

/// One distribution pass: read the spool from the saved offset, file what can be filed,
/// retry pending letters, save the new offset.
pub fn distribute(home: &Path, roots: &[PathBuf]) -> std::io::Result<(PassReport, State)> {
    let mut st = load_state(home);
    let mut report = PassReport::default();
    let spool = home.join(SPOOL);
    let mut fresh = Vec::new();
    if let Ok(mut f) = std::fs::File::open(&spool) {
        let len = f.metadata()?.len();
        if len < st.offset {
            // The spool is never truncated by medulla; if something else did, start over.
            // Dedup by id keeps this from filing anything twice.
            report.errors.push(format!(
                "the spool shrank below the saved offset ({len} < {}); rescanned from the start",
                st.offset
            ));
            st.offset = 0;
        }
        f.seek(SeekFrom::Start(st.offset))?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)?;
        // Only complete lines: a writer may be mid-append.
        let complete = bytes
            .iter()
            .rposition(|b| *b == b'\n')
            .map(|i| i + 1)
            .unwrap_or(0);
        for line in bytes[..complete].split(|b| *b == b'\n') {
            let text = String::from_utf8_lossy(line);
            if text.trim().is_empty() {
                continue;
            }
            report.read += 1;
            match Letter::parse(&text) {
                Some(l) => fresh.push(l),
                None => st.garbage_lines += 1,
            }
        }
        st.offset += complete as u64;
    }
    let home_dir = std::env::var_os("HOME").map(PathBuf::from);
    let medulla_home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    let cx = Context {
        home_dir: home_dir.as_deref(),
        medulla_home: &medulla_home,
        roots,
    };
    let mut retry: Vec<Letter> = st
        .pending
        .values()
        .filter_map(|(_, raw)| Letter::parse(raw))
        .collect();
    retry.append(&mut fresh);
    let mut by_box: BTreeMap<PathBuf, Vec<&Letter>> = BTreeMap::new();
    for l in &retry {
        let findings = crate::floor::scan([("letter", l.raw.as_str())]);
        if !findings.is_empty() {
            let what = crate::floor::summary(&findings);
            report.destinations.insert(
                l.id.clone(),
                Filed::Refused {
                    found: what.clone(),
                },
            );
            st.refused.insert(l.id.clone(), what);
            st.pending.remove(&l.id);
            continue;
        }
        match destination(l, &cx) {
            Destination::Project { repo } => {
                by_box.entry(box_path(&repo)).or_default().push(l);
                report
                    .destinations
                    .insert(l.id.clone(), Filed::Project { repo });
            }
            Destination::Medulla => {
                report.destinations.insert(l.id.clone(), Filed::Medulla);
                by_box.entry(home.join(MEDULLA_BOX)).or_default().push(l);
            }
            Destination::Pending { repo } => {
                st.pending
                    .insert(l.id.clone(), (repo.clone(), l.raw.clone()));
                report
                    .destinations
                    .insert(l.id.clone(), Filed::Pending { repo });
            }
        }
    }
    for (box_file, letters) in &by_box {
        match file_into(box_file, letters) {
            Ok(n) => {
                report.filed += n;
                *st.filed
                    .entry(box_file.to_string_lossy().into_owned())
                    .or_default() += n;
                for l in letters {
                    st.pending.remove(&l.id);
                }
            }
            Err(e) => {
                // Not filed: keep them pending so the next pass tries again.
                report
                    .errors
                    .push(format!("cannot write {}: {e}", box_file.display()));
                for l in letters {
                    st.pending.insert(
                        l.id.clone(),
                        (box_file.to_string_lossy().into_owned(), l.raw.clone()),
                    );
                }
            }
        }
    }
    report.pending = st.pending.len();
    report.refused = st.refused.len();
    report.garbage_lines = st.garbage_lines;
    save_state(home, &st)?;
    Ok((report, st))
}

/// Every box the owner knows of: each registered root's, every box ever filed into,
/// and the medulla's.
pub fn known_boxes(home: &Path, roots: &[PathBuf], st: &State) -> Vec<PathBuf> {
    let mut boxes: Vec<PathBuf> = roots.iter().map(|r| box_path(r)).collect();
    boxes.extend(st.filed.keys().map(PathBuf::from));
    boxes.push(home.join(MEDULLA_BOX));
    boxes.sort();
    boxes.dedup();
    boxes
}
