//! Evidence anchors, the owner's side: taking them when a claim is written (the evidence
//! files inside the brain's root, hashed) and checking them when a claim is shown (has
//! the file changed or disappeared since?).
//!
//! Checking never reads a file on every recall: each file's hash is cached by its
//! (size, mtime, inode), and a file is read again only when those move; and where the
//! kernel tells of changes (inotify, `anchor_watch`), a file nobody touched is not even
//! stat'ed. A file outside
//! the brain's root is never read: `..`, symlinks out of the root and absolute paths
//! elsewhere are refused at write time and said so.

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use brains::Anchor;

use super::anchor_watch::{Told, Watcher};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Largest evidence file that is hashed; a larger one is left unanchored (said so).
const MAX_ANCHOR_BYTES: u64 = 8 * 1024 * 1024;

/// An evidence entry that names a file but could not be anchored, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Unanchored {
    pub evidence: String,
    pub why: String,
}

/// What became of an anchored evidence file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Drift {
    /// It (or the anchored lines) now reads differently.
    Changed,
    /// It is gone.
    Missing,
}

/// One anchored evidence file that no longer matches, on a row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvidenceChange {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<(u32, u32)>,
    pub state: Drift,
    /// When the change happened as far as the owner can tell: the file's modification
    /// time when it changed, the moment it was first found gone when it is missing (ms).
    pub since: i64,
}

/// What a file looked like the last time it was looked at: its identity (device, inode,
/// size, modification time) and hashes, or that it was missing.
#[derive(Debug)]
struct Seen {
    /// `None`: the file was missing (or led out of the root) when last looked at.
    file: Option<Hashed>,
    /// When it was first found missing (ms), while it is.
    missing_since: Option<i64>,
    /// Its directory is watched and no change was told since it was looked at: the next
    /// check need not stat it.
    clean: bool,
}

/// A present file's identity and hashes.
#[derive(Debug)]
struct Hashed {
    key: FileKey,
    mtime_ms: i64,
    /// Hash of the whole file, and of each line range asked for (`None`: past the end).
    whole: String,
    ranges: HashMap<(u32, u32), Option<String>>,
}

/// What a stat says of a file: the same key means the same bytes as last read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileKey {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
}

impl FileKey {
    fn of(m: &std::fs::Metadata) -> FileKey {
        FileKey {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: mtime_ns(m),
        }
    }
}

/// The cache of file hashes, shared by every check.
#[derive(Debug, Default)]
pub struct AnchorCache {
    seen: Mutex<Files>,
}

#[derive(Debug, Default)]
struct Files {
    by_path: HashMap<PathBuf, Seen>,
    /// What tells which files changed (inotify on Linux), made on the first check.
    watcher: Option<Watcher>,
    tried: bool,
}

impl Files {
    /// Take in what the watcher was told since the last check.
    fn catch_up(&mut self) {
        if !self.tried {
            self.tried = true;
            self.watcher = Watcher::new();
        }
        let Some(w) = self.watcher.as_mut() else {
            return;
        };
        match w.drain() {
            Told::Everything => self.by_path.values_mut().for_each(|s| s.clean = false),
            Told::Changed { files, dirs } => {
                for f in files {
                    if let Some(s) = self.by_path.get_mut(&f) {
                        s.clean = false;
                    }
                }
                if !dirs.is_empty() {
                    for (p, s) in self.by_path.iter_mut() {
                        if dirs.iter().any(|d| p.starts_with(d)) {
                            s.clean = false;
                        }
                    }
                }
            }
        }
    }
}

/// A spec in an evidence entry: `path`, `path:LINE` or `path:START-END`.
fn parse_spec(entry: &str) -> Option<(&str, Option<(u32, u32)>)> {
    let e = entry.trim();
    if e.is_empty() || e.chars().any(char::is_whitespace) || e.contains("://") {
        return None;
    }
    if let Some((p, range)) = e.rsplit_once(':') {
        let parsed = match range.split_once('-') {
            Some((a, b)) => a.parse::<u32>().ok().zip(b.parse::<u32>().ok()),
            None => range.parse::<u32>().ok().map(|n| (n, n)),
        };
        if let Some((a, b)) = parsed {
            if a >= 1 && a <= b && !p.is_empty() {
                return Some((p, Some((a, b))));
            }
        }
    }
    Some((e, None))
}

/// Whether an entry that names no existing file still looks like a path (worth saying
/// it could not be anchored) rather than other evidence (a commit, a ticket).
fn looks_like_a_path(p: &str) -> bool {
    p.contains('/')
        || Path::new(p)
            .extension()
            .is_some_and(|x| x.len() <= 6 && x.to_string_lossy().chars().all(char::is_alphanumeric))
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The bytes of lines `a..=b` (1-based, terminators kept), or `None` past the end.
fn line_range(bytes: &[u8], (a, b): (u32, u32)) -> Option<&[u8]> {
    let mut starts = vec![0usize];
    for (i, c) in bytes.iter().enumerate() {
        if *c == b'\n' && i + 1 < bytes.len() {
            starts.push(i + 1);
        }
    }
    let (a, b) = (a as usize, b as usize);
    if b > starts.len() || bytes.is_empty() {
        return None;
    }
    let start = starts[a - 1];
    let end = starts.get(b).copied().unwrap_or(bytes.len());
    Some(&bytes[start..end])
}

/// git's id for a blob of these bytes (`git hash-object`).
fn git_blob_id(bytes: &[u8]) -> String {
    use sha1::Digest as _;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    hex::encode(h.finalize())
}

fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut f = std::fs::File::open(path)?;
    let mut out = Vec::new();
    f.by_ref()
        .take(MAX_ANCHOR_BYTES + 1)
        .read_to_end(&mut out)?;
    Ok(out)
}

/// Resolve an entry's path to a file inside `root` (canonical), or say why not.
fn resolve(root: &Path, p: &str) -> Result<(PathBuf, String), String> {
    let joined = if Path::new(p).is_absolute() {
        PathBuf::from(p)
    } else {
        root.join(p)
    };
    let lexical = crate::roster::lexical_normal(&joined);
    if !lexical.starts_with(root) {
        return Err("outside the brain's root: never read".into());
    }
    let real = match std::fs::canonicalize(&lexical) {
        Ok(r) => r,
        Err(_) => return Err("no such file under the brain's root".into()),
    };
    if !real.starts_with(root) {
        return Err("a link that leads outside the brain's root: never read".into());
    }
    if !real.is_file() {
        return Err("not a file".into());
    }
    let rel = real
        .strip_prefix(root)
        .map(|r| r.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    Ok((real, rel))
}

/// Anchor a claim's evidence in `root` (canonical): each entry naming a file inside the
/// root is hashed (its lines, when it names a range). Entries that name a file the owner
/// must not or cannot read come back as unanchored, with why; entries that are not
/// paths (a commit, a ticket, prose) are neither. Blocking: run it on the blocking pool.
pub fn take(root: &Path, evidence: &[String], now: i64) -> (Vec<Anchor>, Vec<Unanchored>) {
    let git = root.join(".git").exists();
    let mut anchors = Vec::new();
    let mut unanchored = Vec::new();
    for entry in evidence {
        match take_one(root, git, entry, now) {
            Some(Ok(a)) => anchors.push(a),
            Some(Err(u)) => unanchored.push(u),
            None => {}
        }
    }
    (anchors, unanchored)
}

/// [`take`]'s anchors for many claims at once (a bulk import's batch): an entry several
/// of them cite is resolved, read and hashed once.
pub fn take_many(root: &Path, evidence: &[Vec<String>], now: i64) -> Vec<Vec<Anchor>> {
    let git = root.join(".git").exists();
    let mut taken: HashMap<&str, Option<Anchor>> = HashMap::new();
    evidence
        .iter()
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| {
                    taken
                        .entry(e)
                        .or_insert_with(|| take_one(root, git, e, now).and_then(Result::ok))
                        .clone()
                })
                .collect()
        })
        .collect()
}

/// One evidence entry: its anchor, why the file it names cannot be anchored, or `None`
/// when it names no file (a commit, a ticket, prose).
fn take_one(root: &Path, git: bool, entry: &str, now: i64) -> Option<Result<Anchor, Unanchored>> {
    let (p, lines) = parse_spec(entry)?;
    let refuse = |why: String| {
        Some(Err(Unanchored {
            evidence: entry.to_string(),
            why,
        }))
    };
    let (real, rel) = match resolve(root, p) {
        Ok(r) => r,
        Err(why) => {
            let escapes = why.contains("never read");
            return if escapes || looks_like_a_path(p) {
                refuse(why)
            } else {
                None
            };
        }
    };
    let bytes = match read_bounded(&real) {
        Ok(b) if b.len() as u64 > MAX_ANCHOR_BYTES => {
            return refuse(format!(
                "larger than {} MiB: not hashed",
                MAX_ANCHOR_BYTES / (1024 * 1024)
            ));
        }
        Ok(b) => b,
        Err(e) => return refuse(format!("unreadable: {e}")),
    };
    let covered = match lines {
        Some(r) => match line_range(&bytes, r) {
            Some(c) => c,
            None => {
                return refuse(format!(
                    "lines {}-{} are past the end of the file",
                    r.0, r.1
                ))
            }
        },
        None => &bytes[..],
    };
    Some(Ok(Anchor {
        evidence: entry.to_string(),
        path: rel,
        lines,
        sha256: sha256_hex(covered),
        git_blob: git.then(|| git_blob_id(&bytes)),
        at: now,
    }))
}

/// Whether two sets of anchors say the same of the same files (when they were taken
/// aside).
pub fn same(a: &[Anchor], b: &[Anchor]) -> bool {
    let key = |x: &Anchor| (x.path.clone(), x.lines, x.sha256.clone());
    a.len() == b.len() && a.iter().map(key).eq(b.iter().map(key))
}

/// [`take`] on the blocking pool.
pub async fn take_async(
    root: &str,
    evidence: &[String],
    now: i64,
) -> (Vec<Anchor>, Vec<Unanchored>) {
    if evidence.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let (root, evidence) = (PathBuf::from(root), evidence.to_vec());
    tokio::task::spawn_blocking(move || take(&root, &evidence, now))
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "anchoring evidence panicked; the claim is written unanchored");
            (Vec::new(), Vec::new())
        })
}

fn mtime_ns(m: &std::fs::Metadata) -> i128 {
    m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128
}

impl AnchorCache {
    /// The changed anchors of each claim (one list per claim, in order). Each distinct
    /// file is looked at once, under one lock: one stat, so a change shows on the very
    /// next recall; read and hashed again, after checking once more that it resolves
    /// inside the root, only when its (device, inode, size, mtime) moved since it was
    /// last read. Blocking: run it on the blocking pool.
    pub fn check_many(
        &self,
        root: &Path,
        claims: &[&[Anchor]],
        now: i64,
    ) -> Vec<Vec<EvidenceChange>> {
        let mut files = self.seen.lock().expect("anchor cache lock");
        files.catch_up();
        let Files {
            by_path: cache,
            watcher,
            ..
        } = &mut *files;
        let mut looked: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for a in claims.iter().flat_map(|c| c.iter()) {
            let path = root.join(&a.path);
            if looked.insert(a.path.as_str()) && !cache.get(&path).is_some_and(|s| s.clean) {
                // Watched first, then looked at: a change after the look is told.
                let watched = watcher.as_mut().is_some_and(|w| w.watch(&path));
                let before = cache.remove(&path);
                let mut seen = look(root, &path, before, now);
                seen.clean = watched;
                cache.insert(path.clone(), seen);
            }
            if let (Some(r), Some(Seen { file: Some(h), .. })) = (a.lines, cache.get_mut(&path)) {
                h.ranges.entry(r).or_insert_with(|| {
                    read_bounded(&path)
                        .ok()
                        .and_then(|b| line_range(&b, r).map(sha256_hex))
                });
            }
        }
        claims
            .iter()
            .map(|anchors| {
                anchors
                    .iter()
                    .filter_map(|a| {
                        let seen = cache.get(&root.join(&a.path))?;
                        let change = |state, since| EvidenceChange {
                            path: a.path.clone(),
                            lines: a.lines,
                            state,
                            since,
                        };
                        match &seen.file {
                            None => Some(change(Drift::Missing, seen.missing_since.unwrap_or(now))),
                            Some(h) => {
                                let now_hash = match a.lines {
                                    None => Some(&h.whole),
                                    Some(r) => h.ranges.get(&r).and_then(Option::as_ref),
                                };
                                (now_hash != Some(&a.sha256))
                                    .then(|| change(Drift::Changed, h.mtime_ms))
                            }
                        }
                    })
                    .collect()
            })
            .collect()
    }
}

/// One file now, given what was seen of it before: unchanged hashes when its stat says it
/// has not moved; else resolved (it must lead inside the root: a link planted since is
/// never followed out) and read again.
fn look(root: &Path, path: &Path, before: Option<Seen>, now: i64) -> Seen {
    let missing_since = before.as_ref().and_then(|b| b.missing_since);
    let missing = || Seen {
        file: None,
        missing_since: Some(missing_since.unwrap_or(now)),
        clean: false,
    };
    let Some(meta) = std::fs::metadata(path).ok().filter(|m| m.is_file()) else {
        return missing();
    };
    let key = FileKey::of(&meta);
    if let Some(Seen { file: Some(h), .. }) = before {
        if h.key == key {
            return Seen {
                file: Some(h),
                missing_since: None,
                clean: false,
            };
        }
    }
    let inside = std::fs::canonicalize(path).is_ok_and(|r| r.starts_with(root));
    let Some(bytes) = inside.then(|| read_bounded(path).ok()).flatten() else {
        return missing();
    };
    Seen {
        file: Some(Hashed {
            key,
            mtime_ms: (key.mtime_ns / 1_000_000) as i64,
            whole: sha256_hex(&bytes),
            ranges: HashMap::new(),
        }),
        missing_since: None,
        clean: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_name_a_path_and_maybe_lines() {
        assert_eq!(parse_spec("src/a.rs"), Some(("src/a.rs", None)));
        assert_eq!(
            parse_spec("src/a.rs:10-40"),
            Some(("src/a.rs", Some((10, 40))))
        );
        assert_eq!(parse_spec("src/a.rs:7"), Some(("src/a.rs", Some((7, 7)))));
        assert_eq!(parse_spec("src/a.rs:40-10"), Some(("src/a.rs:40-10", None)));
        assert_eq!(parse_spec("see the pool"), None);
        assert_eq!(parse_spec("https://example.com/x"), None);
    }

    /// A bulk import anchors a batch at once, each cited file read once: the anchors of
    /// every claim are exactly those `take` gives it alone.
    #[test]
    fn a_batch_is_anchored_as_each_claim_alone() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(root.join("b.md"), "notes\n").unwrap();
        let evidence: Vec<Vec<String>> = [
            &["src/a.rs", "src/a.rs:2-3", "commit 1a2b3c"][..],
            &["src/a.rs:2-3", "b.md", "src/missing.rs"],
            &[],
            &["../outside.rs", "src/a.rs:9-12", "b.md", "src/a.rs"],
        ]
        .iter()
        .map(|e| e.iter().map(|s| s.to_string()).collect())
        .collect();
        let alone: Vec<Vec<Anchor>> = evidence.iter().map(|e| take(&root, e, 7).0).collect();
        assert_eq!(alone.iter().map(Vec::len).sum::<usize>(), 6);
        assert_eq!(take_many(&root, &evidence, 7), alone);
    }

    #[test]
    fn line_ranges_cover_their_lines_only() {
        let text = b"one\ntwo\nthree\n";
        assert_eq!(line_range(text, (2, 2)), Some(&b"two\n"[..]));
        assert_eq!(line_range(text, (2, 3)), Some(&b"two\nthree\n"[..]));
        assert_eq!(line_range(text, (3, 4)), None);
        assert_eq!(line_range(b"no newline", (1, 1)), Some(&b"no newline"[..]));
    }

    #[test]
    fn the_blob_id_is_gits() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            git_blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }

    #[test]
    fn a_change_shows_on_the_next_check_however_the_file_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/pool.rs"), "const POOL: usize = 20;\n").unwrap();
        let (anchors, _) = take(&root, &["src/pool.rs".to_string()], 1);
        assert_eq!(anchors.len(), 1);
        let cache = AnchorCache::default();
        let check = || cache.check_many(&root, &[anchors.as_slice()], 2)[0].clone();
        assert!(check().is_empty());
        assert!(check().is_empty(), "unchanged, twice");
        // Written in place.
        std::fs::write(root.join("src/pool.rs"), "const POOL: usize = 64;\n").unwrap();
        assert_eq!(check()[0].state, Drift::Changed);
        // Put back as an editor saves: a temp file renamed over it.
        std::fs::write(root.join("src/.pool.rs.swp"), "const POOL: usize = 20;\n").unwrap();
        std::fs::rename(root.join("src/.pool.rs.swp"), root.join("src/pool.rs")).unwrap();
        assert!(check().is_empty(), "back as it was");
        // Its directory moved away: missing.
        std::fs::rename(root.join("src"), root.join("old")).unwrap();
        assert_eq!(check()[0].state, Drift::Missing);
        std::fs::rename(root.join("old"), root.join("src")).unwrap();
        assert!(check().is_empty(), "back again");
    }
}
