//! A backup's `manifest.json`: what it holds (every store with its counts, every file),
//! each file with its size and sha256, and the check of those hashes that comes before
//! anything is restored.

use std::path::{Component, Path, PathBuf};

use brains::store::backup::hash_file;
use brains::store::CopyCounts;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{BackupError, MANIFEST, PARTIAL};

/// The manifest's format; a restore refuses a format it does not know.
pub const FORMAT: u32 = 1;

/// What started a backup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// `medulla backup`, the REST call or the Hall.
    Manual,
    /// The owner's schedule (`backup_every_secs`).
    Scheduled,
}

/// One store in a backup.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StoreEntry {
    /// `medulla`, or the brain's fingerprint.
    pub store: String,
    /// The brain's root (absent for the medulla).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// The copy, relative to the backup (`medulla/store.redb`, `brains/<fp>/store.redb`).
    pub file: String,
    /// Counted from the read transaction the copy was made from.
    pub counts: CopyCounts,
    pub bytes: u64,
    pub sha256: String,
}

impl StoreEntry {
    /// The store's directory relative to a home (and to the backup).
    pub fn dir(&self) -> PathBuf {
        Path::new(&self.file)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }
}

/// A file copied beside the stores (the spool, a box, the config, a brain's manifest).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FileEntry {
    /// Relative to the backup, and to the home it came from.
    pub file: String,
    pub bytes: u64,
    pub sha256: String,
}

/// A store the backup could not copy, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FailedStore {
    pub store: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    pub error: String,
}

/// `manifest.json`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Manifest {
    pub format: u32,
    /// When the backup began, ms since the epoch; also its directory's name, as UTC.
    pub created: i64,
    pub owner_version: String,
    /// The home it was taken of.
    pub home: String,
    pub trigger: Trigger,
    pub stores: Vec<StoreEntry>,
    pub files: Vec<FileEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<FailedStore>,
}

impl Manifest {
    /// The store a name means: `medulla`, a fingerprint, or a brain's root.
    pub fn store(&self, name: &str) -> Result<&StoreEntry, BackupError> {
        let name_t = name.trim_end_matches('/');
        self.stores
            .iter()
            .find(|s| s.store == name_t || s.root.as_deref() == Some(name_t))
            .ok_or_else(|| BackupError::UnknownStore {
                name: name.to_string(),
                holds: self
                    .stores
                    .iter()
                    .map(|s| s.root.clone().unwrap_or_else(|| s.store.clone()))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The side files that belong with a store (its directory's files).
    pub fn files_of<'a>(&'a self, store: &StoreEntry) -> impl Iterator<Item = &'a FileEntry> {
        let dir = store.dir();
        self.files
            .iter()
            .filter(move |f| Path::new(&f.file).parent() == Some(dir.as_path()))
    }

    /// The files at the top of the home (spool, box, mailbox state, config).
    pub fn home_files(&self) -> impl Iterator<Item = &FileEntry> {
        self.files
            .iter()
            .filter(|f| Path::new(&f.file).components().count() == 1)
    }
}

/// Read a backup's manifest: refused when the directory is unfinished, is not a backup,
/// or its manifest does not parse or is of an unknown format.
pub fn read(dir: &Path) -> Result<Manifest, BackupError> {
    if dir
        .to_string_lossy()
        .trim_end_matches('/')
        .ends_with(PARTIAL)
    {
        return Err(BackupError::Incomplete {
            dir: dir.display().to_string(),
        });
    }
    let path = dir.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(BackupError::ManifestMissing {
                dir: dir.display().to_string(),
            })
        }
        Err(e) => return Err(BackupError::io(&path)(e)),
    };
    let invalid = |detail: String| BackupError::ManifestInvalid {
        path: path.display().to_string(),
        detail,
    };
    let m: Manifest = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    if m.format != FORMAT {
        return Err(invalid(format!(
            "format {} is not {FORMAT}, the one this version reads",
            m.format
        )));
    }
    for st in &m.stores {
        let p = Path::new(&st.file);
        if p.components().count() < 2
            || p.file_name() != Some(std::ffi::OsStr::new(brains::store::DB_FILE))
        {
            return Err(invalid(format!(
                "{:?} is not a store file inside a store's directory",
                st.file
            )));
        }
    }
    let rels = m
        .stores
        .iter()
        .map(|s| &s.file)
        .chain(m.files.iter().map(|f| &f.file));
    for rel in rels {
        if !is_plain_relative(rel) {
            return Err(invalid(format!(
                "{rel:?} is not a plain relative path inside the backup"
            )));
        }
    }
    Ok(m)
}

/// A manifest path never leaves the backup (nor, restored, the home).
fn is_plain_relative(rel: &str) -> bool {
    let p = Path::new(rel);
    !rel.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Check one file of a backup against its size and hash.
pub fn verify(dir: &Path, file: &str, bytes: u64, sha256: &str) -> Result<(), BackupError> {
    let path = dir.join(file);
    if !path.is_file() {
        return Err(BackupError::Damaged {
            file: file.to_string(),
            problem: "is missing".into(),
        });
    }
    let (n, sha) = hash_file(&path).map_err(|e| BackupError::Damaged {
        file: file.to_string(),
        problem: format!("cannot be read ({e})"),
    })?;
    if n != bytes || sha != sha256 {
        return Err(BackupError::Damaged {
            file: file.to_string(),
            problem: format!(
                "does not match the manifest (sha256 {sha}, {n} bytes; the manifest says {sha256}, {bytes} bytes)"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_paths_stay_inside_the_backup() {
        assert!(is_plain_relative("brains/abc/store.redb"));
        assert!(!is_plain_relative("../outside"));
        assert!(!is_plain_relative("/etc/passwd"));
        assert!(!is_plain_relative("brains/../../x"));
        assert!(!is_plain_relative(""));
    }
}
