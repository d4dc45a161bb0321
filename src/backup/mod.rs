//! Backups on disk: what a backup directory holds, its names, rotation, and restoring
//! one into a home. Writing a backup needs the running owner (each store is copied from
//! a read transaction of its open store) and lives in the service; everything here
//! works on files only, so `medulla restore` can run with no owner at all.
//!
//! A backup is a directory `<parent>/<time>` (written as `<time>.partial` and renamed
//! when complete, so a half-written backup is never taken for a good one) laid out as
//! the home it came from:
//!
//! ```text
//! manifest.json                 format, time, owner version, every file with its sha256
//! medulla/store.redb            the medulla, copied from one read transaction
//! brains/<fp>/store.redb        each brain likewise, beside its brain.json
//! field-reports.jsonl           the spool up to its last whole line
//! inbox.jsonl, mailbox-state.json, config.toml   when present
//! ```
//!
//! - [`manifest`]: the manifest and its verification.
//! - [`catalog`]: the backups a directory holds, and the one a restore of it takes.
//! - [`restore`]: putting a verified backup (or one store of it) in place.

pub mod catalog;
pub mod manifest;
pub mod restore;

use std::path::{Path, PathBuf};

/// The manifest's file name inside a backup.
pub const MANIFEST: &str = "manifest.json";
/// The suffix of a backup still being written.
pub const PARTIAL: &str = ".partial";
/// The default parent of backups: `$MEDULLA_HOME/backups`.
pub const DIR: &str = "backups";

/// Everything that can go wrong with a backup or a restore, each with the fix.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("a backup is already being written ({0}): wait for it to finish; backups never run two at once")]
    Running(String),
    #[error("{dir} is not a backup and holds none: neither it nor any directory in it has a {MANIFEST}; name a directory `medulla backup DIR` wrote into (or one backup in it, e.g. under $MEDULLA_HOME/backups/); `medulla restore DIR --list` shows what a directory holds")]
    ManifestMissing { dir: String },
    #[error("{dir} is an unfinished backup (its name ends in .partial): it was interrupted; restore from a complete one")]
    Incomplete { dir: String },
    #[error("{path} is not a valid backup manifest ({detail}): restore from another backup")]
    ManifestInvalid { path: String, detail: String },
    #[error(
        "the backup is damaged: {file} {problem}; nothing was touched; restore from another backup"
    )]
    Damaged { file: String, problem: String },
    #[error("the backup holds no store {name:?}; it holds: {holds}; name one of them")]
    UnknownStore { name: String, holds: String },
    #[error(
        "an owner is running on {home} ({url}): stop it first with `medulla stop`, then restore"
    )]
    OwnerRunning { home: String, url: String },
    #[error("refusing to write a backup into {dir}: it is inside the medulla home ({home}) but not under its backups/ directory; give a directory outside it, or none for the default")]
    DirRefused { dir: String, home: String },
    #[error("io error at {path}: {detail}")]
    Io { path: String, detail: String },
}

impl BackupError {
    /// A stable code for machines.
    pub fn code(&self) -> &'static str {
        match self {
            BackupError::Running(_) => "backup_running",
            BackupError::ManifestMissing { .. } => "backup_manifest_missing",
            BackupError::Incomplete { .. } => "backup_incomplete",
            BackupError::ManifestInvalid { .. } => "backup_manifest_invalid",
            BackupError::Damaged { .. } => "backup_damaged",
            BackupError::UnknownStore { .. } => "backup_unknown_store",
            BackupError::OwnerRunning { .. } => "owner_running",
            BackupError::DirRefused { .. } => "backup_dir_refused",
            BackupError::Io { .. } => "backup_io",
        }
    }

    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BackupError + '_ {
        move |e| BackupError::Io {
            path: path.display().to_string(),
            detail: e.to_string(),
        }
    }
}

/// A time in ms as UTC `2026-11-25T08-30-00.123Z`: sortable, and a file name everywhere.
pub fn name_for(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = crate::clock::civil(days);
    let (h, mi, s, milli) = (
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}-{mi:02}-{s:02}.{milli:03}Z")
}

/// The complete backups under `parent`, oldest first (a name is its time).
pub fn list(parent: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = read
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p.join(MANIFEST).is_file())
        .filter(|p| !p.to_string_lossy().ends_with(PARTIAL))
        .collect();
    out.sort();
    out
}

/// Remove the oldest complete backups beyond `keep`, and any `.partial` left by an
/// interrupted one (only called while no backup is being written). Returns what went.
pub fn rotate(parent: &Path, keep: usize) -> Result<Vec<PathBuf>, BackupError> {
    let mut removed = Vec::new();
    if let Ok(read) = std::fs::read_dir(parent) {
        for e in read.filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() && p.to_string_lossy().ends_with(PARTIAL) {
                std::fs::remove_dir_all(&p).map_err(BackupError::io(&p))?;
                removed.push(p);
            }
        }
    }
    let all = list(parent);
    let over = all.len().saturating_sub(keep);
    for p in all.into_iter().take(over) {
        std::fs::remove_dir_all(&p).map_err(BackupError::io(&p))?;
        removed.push(p);
    }
    Ok(removed)
}

/// Create a directory (and its parents) readable by its owner only: a backup holds
/// every store's text.
pub fn create_private_dir(dir: &Path) -> Result<(), BackupError> {
    std::fs::create_dir_all(dir).map_err(BackupError::io(dir))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(BackupError::io(dir))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_utc_times_that_sort() {
        assert_eq!(name_for(0), "1970-01-01T00-00-00.000Z");
        assert_eq!(name_for(1_795_595_400_123), "2026-11-25T08-30-00.123Z");
        assert_eq!(name_for(951_782_400_000), "2000-02-29T00-00-00.000Z");
        assert!(name_for(1_795_595_400_123) < name_for(1_795_595_400_124));
    }

    #[test]
    fn rotation_keeps_the_newest_and_clears_unfinished_ones() {
        let tmp = tempfile::tempdir().unwrap();
        for ms in [3_000, 1_000, 2_000, 4_000] {
            let d = tmp.path().join(name_for(ms));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(MANIFEST), "{}").unwrap();
        }
        let partial = tmp.path().join(format!("{}{PARTIAL}", name_for(5_000)));
        std::fs::create_dir_all(&partial).unwrap();
        let removed = rotate(tmp.path(), 2).unwrap();
        assert_eq!(removed.len(), 3);
        assert!(!partial.exists());
        let kept: Vec<_> = list(tmp.path())
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(kept, vec![name_for(3_000), name_for(4_000)]);
    }
}
