//! Which backups a directory holds, and which one a restore takes: `medulla backup DIR`
//! writes `DIR/<time>/`, so the directory a user names may be one backup or the parent
//! of several. The newest complete one (by its manifest's time) is the one a restore of
//! the parent takes; unfinished (`.partial`) ones are never taken.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::manifest::{self, Trigger};
use super::{BackupError, MANIFEST, PARTIAL};

/// One backup found in a directory, as its manifest describes it.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub path: PathBuf,
    /// When it began, ms since the epoch.
    pub created: i64,
    pub trigger: Trigger,
    pub owner_version: String,
    /// How many stores it holds.
    pub stores: usize,
    /// The bytes of every store and file it holds.
    pub bytes: u64,
}

/// A directory whose manifest does not read, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Unreadable {
    pub path: PathBuf,
    pub error: String,
}

/// What a directory holds.
#[derive(Debug, Clone, Serialize)]
pub struct Catalog {
    pub dir: PathBuf,
    /// Complete backups, newest first.
    pub backups: Vec<Entry>,
    /// Subdirectories with a manifest that does not read (never chosen).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<Unreadable>,
    /// Unfinished backups (`<time>.partial`), never chosen.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<PathBuf>,
}

fn entry(path: &Path) -> Result<Entry, BackupError> {
    let m = manifest::read(path)?;
    Ok(Entry {
        path: path.to_path_buf(),
        created: m.created,
        trigger: m.trigger,
        owner_version: m.owner_version.clone(),
        stores: m.stores.len(),
        bytes: m.stores.iter().map(|s| s.bytes).sum::<u64>()
            + m.files.iter().map(|f| f.bytes).sum::<u64>(),
    })
}

/// The backups in `dir`: `dir` itself when it is one, else every complete backup directly
/// under it, newest first.
pub fn scan(dir: &Path) -> Result<Catalog, BackupError> {
    let mut c = Catalog {
        dir: dir.to_path_buf(),
        backups: Vec::new(),
        unreadable: Vec::new(),
        unfinished: Vec::new(),
    };
    if dir.join(MANIFEST).is_file() {
        c.backups.push(entry(dir)?);
        return Ok(c);
    }
    if !dir.is_dir() {
        return Err(BackupError::ManifestMissing {
            dir: dir.display().to_string(),
        });
    }
    let read = std::fs::read_dir(dir).map_err(BackupError::io(dir))?;
    for p in read.filter_map(|e| e.ok()).map(|e| e.path()) {
        if !p.is_dir() {
            continue;
        }
        if p.to_string_lossy().ends_with(PARTIAL) {
            c.unfinished.push(p);
        } else if p.join(MANIFEST).is_file() {
            match entry(&p) {
                Ok(e) => c.backups.push(e),
                Err(e) => c.unreadable.push(Unreadable {
                    path: p,
                    error: e.to_string(),
                }),
            }
        }
    }
    c.backups
        .sort_by(|a, b| (b.created, &b.path).cmp(&(a.created, &a.path)));
    c.unreadable.sort_by(|a, b| a.path.cmp(&b.path));
    c.unfinished.sort();
    Ok(c)
}

/// The backup a restore of `dir` takes: `dir` itself when it has a manifest (or is an
/// unfinished one, which [`manifest::read`] then refuses), else the newest complete
/// backup under it. `Some(parent)` in the answer when it was chosen from a parent.
pub fn choose(dir: &Path) -> Result<(PathBuf, Option<Catalog>), BackupError> {
    let own = dir.join(MANIFEST).is_file()
        || dir
            .to_string_lossy()
            .trim_end_matches('/')
            .ends_with(PARTIAL);
    if own || !dir.is_dir() {
        return Ok((dir.to_path_buf(), None));
    }
    let c = scan(dir)?;
    match c.backups.first() {
        Some(newest) => Ok((newest.path.clone(), Some(c))),
        None => Err(BackupError::ManifestMissing {
            dir: dir.display().to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backup::manifest::{Manifest, FORMAT};

    fn write_backup(parent: &Path, name: &str, created: i64) -> PathBuf {
        let d = parent.join(name);
        std::fs::create_dir_all(&d).unwrap();
        let m = Manifest {
            format: FORMAT,
            created,
            owner_version: "test".into(),
            home: "/h".into(),
            trigger: Trigger::Manual,
            stores: Vec::new(),
            files: vec![manifest::FileEntry {
                file: "config.toml".into(),
                bytes: 7,
                sha256: "x".into(),
            }],
            failed: Vec::new(),
        };
        std::fs::write(d.join(MANIFEST), serde_json::to_string(&m).unwrap()).unwrap();
        d
    }

    #[test]
    fn a_parent_of_backups_yields_the_newest_complete_one() {
        let tmp = tempfile::tempdir().unwrap();
        write_backup(tmp.path(), "2026-01-01T00-00-00.000Z", 1_000);
        let newer = write_backup(tmp.path(), "2026-01-02T00-00-00.000Z", 2_000);
        // Unfinished and unreadable ones are never chosen, however new.
        write_backup(tmp.path(), "2026-01-03T00-00-00.000Z.partial", 3_000);
        let bad = tmp.path().join("2026-01-04T00-00-00.000Z");
        std::fs::create_dir_all(&bad).unwrap();
        std::fs::write(bad.join(MANIFEST), "not json").unwrap();
        std::fs::create_dir_all(tmp.path().join("not-a-backup")).unwrap();

        let (chosen, from) = choose(tmp.path()).unwrap();
        assert_eq!(chosen, newer);
        let c = from.expect("chosen from a parent");
        assert_eq!(c.backups.len(), 2);
        assert_eq!(c.backups[0].created, 2_000, "newest first");
        assert_eq!(c.backups[0].bytes, 7);
        assert_eq!(c.unfinished.len(), 1);
        assert_eq!(c.unreadable.len(), 1);

        // A backup itself is taken as it is.
        let (own, from) = choose(&newer).unwrap();
        assert_eq!((own, from.is_none()), (newer, true));
    }

    #[test]
    fn a_directory_holding_no_backup_is_refused_with_the_fix() {
        let tmp = tempfile::tempdir().unwrap();
        write_backup(tmp.path(), "only.partial", 1_000);
        let e = choose(tmp.path()).unwrap_err();
        assert_eq!(e.code(), "backup_manifest_missing");
        let msg = e.to_string();
        assert!(
            msg.contains("--list") && msg.contains("medulla backup DIR"),
            "{msg}"
        );
    }
}
