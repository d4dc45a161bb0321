//! Writing a backup while the owner serves: every store copied from a read transaction
//! of its own (the medulla, then each brain on disk, a dormant one loaded for its copy
//! and let go again), the spool and the boxes' files up to their last whole line, the
//! config, each brain's manifest, and `manifest.json` with every file's sha256. The
//! backup is written as `<time>.partial` and renamed when complete.
//!
//! Never two at once: one gate per owner, which manual and scheduled backups share. The
//! schedule (`backup_every_secs`, `backup_keep`) writes into `$MEDULLA_HOME/backups/`
//! and rotates it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::progress::Progress;
use super::Service;
use crate::backup::manifest::{FailedStore, FileEntry, Manifest, StoreEntry, Trigger, FORMAT};
use crate::backup::{create_private_dir, name_for, rotate, BackupError, MANIFEST, PARTIAL};
use crate::error::{OwnerError, Result};
use crate::store_id::StoreId;

/// The owner's one backup gate: which backup is being written, if any.
#[derive(Debug, Default)]
pub struct Backups {
    running: Mutex<Option<PathBuf>>,
}

/// Holds the gate while a backup is written; opens it when dropped.
struct Held<'a>(&'a Backups);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        *self.0.running.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

impl Backups {
    fn enter(&self, dir: &Path) -> std::result::Result<Held<'_>, BackupError> {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(other) = running.as_ref() {
            return Err(BackupError::Running(other.display().to_string()));
        }
        *running = Some(dir.to_path_buf());
        Ok(Held(self))
    }
}

/// A written backup.
#[derive(Debug)]
pub struct Written {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub duration: Duration,
    /// Backups removed by rotation afterwards (scheduled backups only).
    pub rotated: Vec<PathBuf>,
}

/// The files at the top of the home a backup carries. The distributor's state comes
/// before the spool, so the offset it saved never points past the spool's copy.
const HOME_FILES: [(&str, bool); 4] = [
    ("config.toml", false),
    ("mailbox-state.json", false),
    (crate::mailbox::SPOOL, true),
    (crate::mailbox::MEDULLA_BOX, true),
];

/// A store directory's files a backup carries beside `store.redb`.
const STORE_FILES: [&str; 2] = [crate::roster::MANIFEST_FILE, "counters.json"];

/// Copy `src` into `dst` with its size and sha256 as the manifest records them; a file
/// that is appended to (`lines`) is copied up to its last whole line as of now. `None`
/// when there is no such file.
fn copy_file(
    src: &Path,
    dst: &Path,
    lines: bool,
) -> std::result::Result<Option<(u64, String)>, BackupError> {
    let mut f = match std::fs::File::open(src) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(BackupError::io(src)(e)),
    };
    let len = f.metadata().map_err(BackupError::io(src))?.len();
    let mut bytes = Vec::with_capacity(len as usize);
    (&mut f)
        .take(len)
        .read_to_end(&mut bytes)
        .map_err(BackupError::io(src))?;
    if lines {
        let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(whole);
    }
    let mut out = std::fs::File::create(dst).map_err(BackupError::io(dst))?;
    out.write_all(&bytes)
        .and_then(|_| out.sync_all())
        .map_err(BackupError::io(dst))?;
    Ok(Some((
        bytes.len() as u64,
        hex::encode(Sha256::digest(&bytes)),
    )))
}

/// Copy a top-level or store file into the backup, listing it in `files`.
fn carry(
    home: &Path,
    partial: &Path,
    rel: &str,
    lines: bool,
    files: &mut Vec<FileEntry>,
) -> std::result::Result<(), BackupError> {
    if let Some((bytes, sha256)) = copy_file(&home.join(rel), &partial.join(rel), lines)? {
        files.push(FileEntry {
            file: rel.to_string(),
            bytes,
            sha256,
        });
    }
    Ok(())
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::result::Result<T, BackupError> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| OwnerError::Internal(format!("a backup step panicked: {e}")))?
        .map_err(OwnerError::from)
}

/// Where a backup may be written: anywhere but inside the home, apart from its
/// `backups/` directory (a copy among the stores would be scanned as one).
pub fn check_parent(svc: &Service, parent: &Path) -> Result<()> {
    let home = &svc.owner.config.canonical_home;
    if parent.starts_with(home) && !parent.starts_with(home.join(crate::backup::DIR)) {
        return Err(BackupError::DirRefused {
            dir: parent.display().to_string(),
            home: home.display().to_string(),
        }
        .into());
    }
    Ok(())
}

/// Write a backup of every store into a new directory under `parent`; with `keep`,
/// rotate `parent` afterwards to the newest `keep` backups.
pub async fn write(
    svc: &Service,
    parent: &Path,
    trigger: Trigger,
    keep: Option<usize>,
    progress: &Progress,
) -> Result<Written> {
    let started = Instant::now();
    let created = svc.now_ms();
    let mut name = name_for(created);
    for n in 1.. {
        if !parent.join(&name).exists() && !parent.join(format!("{name}{PARTIAL}")).exists() {
            break;
        }
        name = format!("{}-{n}", name_for(created));
    }
    let (dir, partial) = (parent.join(&name), parent.join(format!("{name}{PARTIAL}")));
    let _held = svc.backups.enter(&partial)?;
    let p = partial.clone();
    let parent_owned = parent.to_path_buf();
    blocking(move || {
        // A parent made here is private; an existing one (`/mnt/backups`) keeps its mode.
        if !parent_owned.exists() {
            create_private_dir(&parent_owned)?;
        }
        create_private_dir(&p)
    })
    .await?;
    let written = fill(svc, &partial, created, trigger, progress).await;
    let manifest = match written {
        Ok(m) => m,
        Err(e) => {
            let p = partial.clone();
            let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(p)).await;
            return Err(e);
        }
    };
    let (from, to, parent_owned) = (partial.clone(), dir.clone(), parent.to_path_buf());
    let rotated = blocking(move || {
        std::fs::rename(&from, &to).map_err(BackupError::io(&from))?;
        if let Ok(d) = std::fs::File::open(&parent_owned) {
            let _ = d.sync_all();
        }
        // The backup is complete and in place: a rotation that fails is only logged.
        Ok(match keep.map(|k| rotate(&parent_owned, k)) {
            Some(Ok(gone)) => gone,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "could not rotate old backups away; they stay until the next rotation");
                Vec::new()
            }
            None => Vec::new(),
        })
    })
    .await?;
    Ok(Written {
        dir,
        manifest,
        duration: started.elapsed(),
        rotated,
    })
}

/// Copy everything into `partial` and write its manifest.
async fn fill(
    svc: &Service,
    partial: &Path,
    created: i64,
    trigger: Trigger,
    progress: &Progress,
) -> Result<Manifest> {
    let home = svc.owner.config.home.clone();
    let mut files = Vec::new();
    {
        let (home, partial) = (home.clone(), partial.to_path_buf());
        files = blocking(move || {
            for (rel, lines) in HOME_FILES {
                carry(&home, &partial, rel, lines, &mut files)?;
            }
            Ok(files)
        })
        .await?;
    }
    let roster = svc.owner.rescan().await?;
    let total = roster.len() as u64 + 1;
    let mut stores = Vec::new();
    let mut failed = Vec::new();
    progress.tick(0, Some(total), "stores");

    match copy_store(svc, &StoreId::Medulla, partial, "medulla").await {
        Ok(entry) => {
            stores.push(entry);
            let (home, partial) = (home.clone(), partial.to_path_buf());
            files = blocking(move || {
                carry(&home, &partial, "medulla/counters.json", false, &mut files)?;
                Ok(files)
            })
            .await?;
        }
        Err(e) => failed.push(FailedStore {
            store: "medulla".into(),
            root: None,
            error: e.to_string(),
        }),
    }
    // A joined team's mirror: its outbox holds what is queued and not yet sent.
    if svc.owner.registry.team_store().is_some() {
        match copy_store(svc, &StoreId::Team, partial, "team/medulla").await {
            Ok(entry) => {
                stores.push(entry);
                let (home, partial) = (home.clone(), partial.to_path_buf());
                files = blocking(move || {
                    carry(&home, &partial, "team/shares.json", false, &mut files)?;
                    Ok(files)
                })
                .await?;
            }
            Err(e) => failed.push(FailedStore {
                store: "team".into(),
                root: None,
                error: e.to_string(),
            }),
        }
    }
    progress.tick(1, Some(total), "stores");
    for (i, entry) in roster.into_iter().enumerate() {
        let fp = entry.fingerprint();
        let Some(m) = entry.manifest else {
            failed.push(FailedStore {
                store: fp.to_string(),
                root: None,
                error: entry.problem.unwrap_or_else(|| "no manifest".into()),
            });
            continue;
        };
        let was_warm = svc.owner.registry.is_warm(&fp);
        let rel = format!("brains/{fp}");
        let copied = copy_store(svc, &StoreId::brain(&fp), partial, &rel).await;
        if !was_warm {
            let _ = svc.owner.unload(&fp).await;
        }
        match copied {
            Ok(mut s) => {
                s.root = Some(m.root.clone());
                stores.push(s);
                let (home, partial) = (home.clone(), partial.to_path_buf());
                files = blocking(move || {
                    for f in STORE_FILES {
                        carry(&home, &partial, &format!("{rel}/{f}"), false, &mut files)?;
                    }
                    Ok(files)
                })
                .await?;
            }
            Err(e) => failed.push(FailedStore {
                store: fp.to_string(),
                root: Some(m.root),
                error: e.to_string(),
            }),
        }
        progress.tick(i as u64 + 2, Some(total), "stores");
    }
    let manifest = Manifest {
        format: FORMAT,
        created,
        owner_version: env!("CARGO_PKG_VERSION").to_string(),
        home: home.display().to_string(),
        trigger,
        stores,
        files,
        failed,
    };
    let (m, path) = (manifest.clone(), partial.join(MANIFEST));
    blocking(move || {
        let text = serde_json::to_vec_pretty(&m).expect("a manifest serializes");
        let mut f = std::fs::File::create(&path).map_err(BackupError::io(&path))?;
        f.write_all(&text)
            .and_then(|_| f.sync_all())
            .map_err(BackupError::io(&path))
    })
    .await?;
    Ok(manifest)
}

/// One store's copy as a manifest entry.
async fn copy_store(svc: &Service, id: &StoreId, partial: &Path, rel: &str) -> Result<StoreEntry> {
    let copy = svc.owner.backup_store(id, partial.join(rel)).await?;
    Ok(StoreEntry {
        store: match id {
            StoreId::Medulla => "medulla".into(),
            StoreId::Team => "team".into(),
            StoreId::Brain(fp) => fp.to_string(),
        },
        root: None,
        file: format!("{rel}/{}", brains::store::DB_FILE),
        counts: copy.counts,
        bytes: copy.bytes,
        sha256: copy.sha256,
    })
}

/// A home that has no backup yet gets its first this long after the owner starts (or
/// after `backup_every_secs`, when that is shorter).
const FIRST_AFTER: Duration = Duration::from_secs(10 * 60);

/// Write scheduled backups into `$MEDULLA_HOME/backups/` every `backup_every_secs`,
/// rotating to `backup_keep`, until the owner stops. The first is due one period after
/// the newest backup there.
pub async fn schedule(svc: Service) {
    let cfg = svc.owner.config.clone();
    let Some(every) = cfg.backup_every else {
        return;
    };
    let parent = cfg.home.join(crate::backup::DIR);
    let newest = crate::backup::list(&parent)
        .last()
        .and_then(|d| crate::backup::manifest::read(d).ok())
        .map(|m| m.created);
    let mut wait = match newest {
        Some(created) => {
            let since = Duration::from_millis(svc.now_ms().saturating_sub(created).max(0) as u64);
            every.saturating_sub(since)
        }
        None => every.min(FIRST_AFTER),
    };
    loop {
        tokio::time::sleep(wait).await;
        wait = every;
        match write(
            &svc,
            &parent,
            Trigger::Scheduled,
            Some(cfg.backup_keep),
            &Progress::none(),
        )
        .await
        {
            Ok(w) => tracing::info!(
                dir = %w.dir.display(),
                stores = w.manifest.stores.len(),
                failed = w.manifest.failed.len(),
                rotated = w.rotated.len(),
                ms = w.duration.as_millis() as u64,
                "scheduled backup written"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "the scheduled backup failed; the next is due in one period")
            }
        }
    }
}
