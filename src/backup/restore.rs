//! Restoring a backup into a home whose owner is stopped: the whole home, or one store.
//!
//! Nothing is touched before everything is checked: the manifest is read, every file the
//! restore will use is hashed against it, every store copy is opened read-only and
//! counted against it, and no store in the home may be held by a running owner. Then
//! the files are copied into a staging directory inside the home and checked again;
//! only then is each replaced store or file moved aside, under
//! `$MEDULLA_HOME/replaced/<time>/` (never deleted), and the staged copy renamed into
//! its place. Derived files (vector index, claim-index snapshot) move aside with the
//! store they belonged to and are rebuilt when the owner next opens it.

use std::path::{Path, PathBuf};

use brains::store::backup::{count_copy, held_by_another};
use brains::store::CopyCounts;
use serde::Serialize;

use super::manifest::{self, FileEntry, Manifest, StoreEntry};
use super::{create_private_dir, name_for, BackupError};

/// What to restore.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// Every store and file of the backup.
    Home,
    /// One store: `medulla`, a brain's fingerprint or its root.
    Store(&'a str),
}

/// One thing put in place.
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    /// `medulla`, `brain <root>`, or a file's name.
    pub what: String,
    /// Where it now is.
    pub path: PathBuf,
    /// Where what was there before went; `None` when nothing was there.
    pub replaced_to: Option<PathBuf>,
    /// A store's counts, as the manifest says and the copy was checked to hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<CopyCounts>,
}

/// What a restore did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub backup: PathBuf,
    /// The directory named, when it held backups and `backup` is the newest of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen_from: Option<PathBuf>,
    pub home: PathBuf,
    pub restored: Vec<Restored>,
    /// Brains in the home the backup does not hold: left as they were.
    pub untouched: Vec<String>,
}

/// A unit of the restore: a store's directory, or one file at the top of the home.
struct Unit<'a> {
    what: String,
    /// Relative to the backup and the home.
    rel: PathBuf,
    store: Option<&'a StoreEntry>,
    files: Vec<&'a FileEntry>,
}

fn units<'a>(m: &'a Manifest, target: Target<'_>) -> Result<Vec<Unit<'a>>, BackupError> {
    let store_unit = |s: &'a StoreEntry| Unit {
        what: match &s.root {
            Some(root) => format!("brain {root}"),
            None => s.store.clone(),
        },
        rel: s.dir(),
        store: Some(s),
        files: m.files_of(s).collect(),
    };
    Ok(match target {
        Target::Store(name) => vec![store_unit(m.store(name)?)],
        Target::Home => m
            .stores
            .iter()
            .map(store_unit)
            .chain(m.home_files().map(|f| Unit {
                what: f.file.clone(),
                rel: PathBuf::from(&f.file),
                store: None,
                files: vec![f],
            }))
            .collect(),
    })
}

/// Check every file of the units against the manifest in `dir`; each store copy must
/// also open and count what the manifest says.
fn check(dir: &Path, units: &[Unit<'_>]) -> Result<(), BackupError> {
    for u in units {
        if let Some(s) = u.store {
            manifest::verify(dir, &s.file, s.bytes, &s.sha256)?;
            let counts = count_copy(&dir.join(&s.file)).map_err(|e| BackupError::Damaged {
                file: s.file.clone(),
                problem: format!(
                    "does not open ({})",
                    match &e {
                        brains::StoreError::Damaged { detail, .. } => detail.clone(),
                        other => other.to_string(),
                    }
                ),
            })?;
            if counts != s.counts {
                return Err(BackupError::Damaged {
                    file: s.file.clone(),
                    problem: format!(
                        "holds other counts than the manifest says ({counts:?}, not {:?})",
                        s.counts
                    ),
                });
            }
        }
        for f in &u.files {
            manifest::verify(dir, &f.file, f.bytes, &f.sha256)?;
        }
    }
    Ok(())
}

fn copy_file(from: &Path, to: &Path) -> Result<(), BackupError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(BackupError::io(parent))?;
    }
    std::fs::copy(from, to).map_err(BackupError::io(to))?;
    std::fs::File::open(to)
        .and_then(|f| f.sync_all())
        .map_err(BackupError::io(to))
}

/// Restore `target` of the backup at `backup` into `home`. `now_ms` names the directory
/// that what is replaced moves to.
pub fn restore(
    backup: &Path,
    home: &Path,
    target: Target<'_>,
    now_ms: i64,
) -> Result<Report, BackupError> {
    let m = manifest::read(backup)?;
    let units = units(&m, target)?;
    check(backup, &units)?;
    for u in units.iter().filter(|u| u.store.is_some()) {
        let file = home.join(&u.rel).join(brains::store::DB_FILE);
        if held_by_another(&file) {
            return Err(BackupError::OwnerRunning {
                home: home.display().to_string(),
                url: format!("{} is held open", file.display()),
            });
        }
    }

    // Stage inside the home (one filesystem, so putting in place is a rename), check again.
    let stamp = name_for(now_ms);
    let staging = home.join(format!(".restoring-{stamp}"));
    create_private_dir(&staging)?;
    let staged = (|| {
        for u in &units {
            let files = u.store.map(|s| s.file.as_str()).into_iter();
            for rel in files.chain(u.files.iter().map(|f| f.file.as_str())) {
                copy_file(&backup.join(rel), &staging.join(rel))?;
            }
        }
        check(&staging, &units)
    })();
    if let Err(e) = staged {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }

    let aside = home.join("replaced").join(&stamp);
    let mut restored = Vec::new();
    for u in &units {
        let place = home.join(&u.rel);
        let replaced_to = if place.exists() {
            let to = aside.join(&u.rel);
            create_private_dir(to.parent().unwrap_or(&aside))?;
            std::fs::rename(&place, &to).map_err(BackupError::io(&place))?;
            Some(to)
        } else {
            if let Some(parent) = place.parent() {
                std::fs::create_dir_all(parent).map_err(BackupError::io(parent))?;
            }
            None
        };
        let from = staging.join(&u.rel);
        std::fs::rename(&from, &place).map_err(BackupError::io(&from))?;
        restored.push(Restored {
            what: u.what.clone(),
            path: place,
            replaced_to,
            counts: u.store.map(|s| s.counts.clone()),
        });
    }
    let _ = std::fs::remove_dir_all(&staging);

    let in_backup: Vec<&str> = m.stores.iter().map(|s| s.store.as_str()).collect();
    let untouched = match target {
        Target::Store(_) => Vec::new(),
        Target::Home => crate::roster::scan(&home.join("brains"))
            .into_iter()
            .filter(|e| !in_backup.contains(&e.fingerprint().as_str()))
            .map(|e| match e.manifest {
                Some(m) => format!("brain {}", m.root),
                None => e.dir.display().to_string(),
            })
            .collect(),
    };
    Ok(Report {
        backup: backup.to_path_buf(),
        chosen_from: None,
        home: home.to_path_buf(),
        restored,
        untouched,
    })
}
