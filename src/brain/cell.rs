//! The cell that holds one open store: the store behind a read-write lock (readers
//! share it on the blocking pool, the actor takes the write side), and the store's
//! **fault**, if it has one.
//!
//! Faults, and what each does:
//! - **damaged** (`store_damaged`): the file failed redb's checks, held a record that
//!   does not decode, or a call panicked and the integrity check then failed. The store
//!   is quarantined: a marker file beside it (`QUARANTINE.json`) keeps it quarantined
//!   across restarts, and every read and write is refused with the fix until the store
//!   is restored or `medulla doctor --deep` finds it clean. Never a write on top of it.
//! - **disk full** (`disk_full`) and **other file faults** (`io`): redb refuses every
//!   later operation after one failed I/O, so the actor closes and reopens the store
//!   once the cause may be gone (on the next write, and on a timer with backoff).
//!   Meanwhile reads and writes answer the fault.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use brains::{Store, StoreError, StoreOptions};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The marker that keeps a damaged store quarantined across restarts.
pub const QUARANTINE_FILE: &str = "QUARANTINE.json";

/// What a store's fault is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// Quarantined: nothing reads or writes it until it is restored.
    Damaged,
    /// The disk is full; the store recovers by itself once there is room.
    DiskFull,
    /// A file operation failed; the store recovers by itself once the cause is gone.
    Io,
}

/// A store's fault, as doctor, `brains` and the Hall show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Fault {
    pub kind: FaultKind,
    /// The store's redb file.
    pub path: String,
    pub detail: String,
    /// When it was first seen (ms since the epoch).
    pub since: i64,
}

impl Fault {
    /// The fault an error reveals, if it is one.
    fn of(e: &StoreError, now: i64) -> Option<Fault> {
        let (kind, path, detail) = match e {
            StoreError::Damaged { path, detail } => (FaultKind::Damaged, path, detail.clone()),
            StoreError::DiskFull { path } => (
                FaultKind::DiskFull,
                path,
                "no space left on the disk".into(),
            ),
            StoreError::Io { path, detail } => (FaultKind::Io, path, detail.clone()),
            _ => return None,
        };
        Some(Fault {
            kind,
            path: path.clone(),
            detail,
            since: now,
        })
    }

    /// The typed error every call to a store with this fault answers.
    pub fn error(&self) -> StoreError {
        let path = self.path.clone();
        match self.kind {
            FaultKind::Damaged => StoreError::Damaged {
                path,
                detail: self.detail.clone(),
            },
            FaultKind::DiskFull => StoreError::DiskFull { path },
            FaultKind::Io => StoreError::Io {
                path,
                detail: self.detail.clone(),
            },
        }
    }
}

/// The quarantine marker of the store in `dir`, if it is quarantined.
pub fn quarantined(dir: &Path) -> Option<Fault> {
    let bytes = std::fs::read(dir.join(QUARANTINE_FILE)).ok()?;
    Some(serde_json::from_slice(&bytes).unwrap_or_else(|_| Fault {
        kind: FaultKind::Damaged,
        path: dir.join("store.redb").display().to_string(),
        detail: format!("quarantined ({} is unreadable)", QUARANTINE_FILE),
        since: 0,
    }))
}

/// One open store and its fault. See the module doc.
pub struct StoreCell {
    dir: PathBuf,
    store: RwLock<Option<Store>>,
    fault: Mutex<Option<Fault>>,
    /// The (device, inode) of the redb file the open store holds: a write first checks
    /// the path still names it, so no write lands in a file removed or replaced under
    /// the owner (it would be lost at the next open).
    file: Mutex<Option<(u64, u64)>>,
}

/// The (device, inode) at a path, if something is there.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The open store, shared between its actor (the writer) and readers.
pub type Shared = Arc<StoreCell>;

fn now_ms() -> i64 {
    use brains::Clock;
    brains::SystemClock.now_ms()
}

impl StoreCell {
    pub fn new(dir: PathBuf, store: Option<Store>, fault: Option<Fault>) -> Shared {
        let file = store
            .as_ref()
            .and_then(|_| file_id(&dir.join("store.redb")));
        Arc::new(StoreCell {
            dir,
            store: RwLock::new(store),
            fault: Mutex::new(fault),
            file: Mutex::new(file),
        })
    }

    /// The store's file is still the one it opened; else the fault a write answers.
    fn same_file(&self) -> Result<(), StoreError> {
        let held = *self.file.lock().unwrap_or_else(|p| p.into_inner());
        let now = file_id(&self.db_path());
        match (held, now) {
            (Some(h), Some(n)) if h != n => Err(StoreError::Io {
                path: self.db_path().display().to_string(),
                detail: "the store file was replaced under the owner; its writes would be lost, so none is made until it is reopened".into(),
            }),
            (Some(_), None) => Err(StoreError::Io {
                path: self.db_path().display().to_string(),
                detail: "the store file was removed under the owner; its writes would be lost, so none is made: put the file back (or restore it from a backup)".into(),
            }),
            _ => Ok(()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn db_path(&self) -> PathBuf {
        self.dir.join("store.redb")
    }

    pub fn fault(&self) -> Option<Fault> {
        self.fault.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set_fault(&self, f: Option<Fault>) {
        *self.fault.lock().unwrap_or_else(|p| p.into_inner()) = f;
    }

    /// Is the store quarantined?
    pub fn is_damaged(&self) -> bool {
        self.fault().is_some_and(|f| f.kind == FaultKind::Damaged)
    }

    /// Quarantine the store for the damage `e` names (its detail, not its whole
    /// message, is kept).
    pub fn quarantine_for(&self, e: &StoreError) -> StoreError {
        match e {
            StoreError::Damaged { detail, .. } => self.quarantine(detail),
            other => self.quarantine(&other.to_string()),
        }
    }

    /// Quarantine the store: the fault is set (every later call is refused) and the
    /// marker written, so a restart keeps it quarantined.
    pub fn quarantine(&self, detail: &str) -> StoreError {
        let fault = Fault {
            kind: FaultKind::Damaged,
            path: self.db_path().display().to_string(),
            detail: detail.to_string(),
            since: now_ms(),
        };
        tracing::error!(store = %self.dir.display(), detail, "store damaged: quarantined; restore it from a backup or move it aside");
        match serde_json::to_vec_pretty(&fault) {
            Ok(bytes) => {
                if let Err(e) = std::fs::write(self.dir.join(QUARANTINE_FILE), bytes) {
                    tracing::error!(store = %self.dir.display(), error = %e, "could not write the quarantine marker; the store is quarantined until the owner stops");
                }
            }
            Err(e) => tracing::error!(error = %e, "quarantine marker"),
        }
        let err = fault.error();
        self.set_fault(Some(fault));
        err
    }

    /// Note what an error says about the store: damage quarantines it, a full disk or a
    /// failed file operation marks it for a reopen. Returns the error, typed.
    fn note(&self, e: StoreError) -> StoreError {
        let e = e.at_store(&self.db_path());
        if e.is_damage() {
            return self.quarantine_for(&e);
        }
        if let Some(f) = Fault::of(&e, now_ms()) {
            let mut slot = self.fault.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                tracing::warn!(store = %self.dir.display(), error = %e, "store fault: it will be reopened once the cause is gone");
                *slot = Some(f);
            }
        }
        e
    }

    /// Mark the store faulted by `e` (a full disk, a failed file), so its actor reopens it.
    pub fn mark(&self, e: &StoreError) {
        if let Some(f) = Fault::of(e, now_ms()) {
            self.set_fault(Some(f));
        }
    }

    /// A call panicked: damage, unless the store's integrity check passes (then a bug,
    /// answered `internal`, and the store serves on).
    fn after_panic(&self, what: String) -> StoreError {
        let mut guard = self.store.write().unwrap_or_else(|p| p.into_inner());
        let checked = guard.as_mut().map(|s| s.check_integrity());
        drop(guard);
        match checked.map(|r| r.map_err(|e| e.at_store(&self.db_path()))) {
            Some(Err(StoreError::Damaged { detail, .. })) => {
                self.quarantine(&format!("{what}, and the integrity check failed: {detail}"))
            }
            _ => StoreError::Internal(what),
        }
    }

    /// A quarantined store refuses every call before it touches the file.
    fn refuse_if_damaged(&self) -> Result<(), StoreError> {
        match self.fault() {
            Some(fault) if fault.kind == FaultKind::Damaged => Err(fault.error()),
            _ => Ok(()),
        }
    }

    /// The outcome of a call run on the blocking pool: its error noted as a fault, or its
    /// panic checked against the store's integrity.
    async fn settle<T>(
        self: &Arc<Self>,
        joined: Result<Result<T, StoreError>, tokio::task::JoinError>,
        what: &str,
    ) -> Result<T, StoreError> {
        match joined {
            Ok(r) => r.map_err(|e| self.note(e)),
            Err(e) => self.panicked(format!("a store {what} panicked: {e}")).await,
        }
    }

    /// A call panicked: the store's integrity is checked (on the blocking pool) and the
    /// answer says what was found.
    async fn panicked<T>(self: &Arc<Self>, what: String) -> Result<T, StoreError> {
        let cell = self.clone();
        tokio::task::spawn_blocking(move || cell.after_panic(what))
            .await
            .map_or_else(|e| Err(StoreError::Internal(e.to_string())), Err)
    }

    /// Run a read on the store, on the blocking pool, concurrently with other reads.
    /// `Ok(None)` when the store was closed meanwhile (unloaded): ask again.
    pub async fn read<T, F>(self: &Arc<Self>, f: F) -> Result<Option<T>, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        self.refuse_if_damaged()?;
        let cell = self.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let guard = cell.store.read().unwrap_or_else(|p| p.into_inner());
            cell.read_in(guard.as_ref(), f)
        })
        .await;
        self.settle(joined, "read").await
    }

    /// A read known to be small (a boot-memory look-up or listing: microseconds), run
    /// here on the caller's task when the store can be read at once; when a writer
    /// holds it (or waits for it), on the blocking pool like any read. Saves the pool's
    /// two thread hops, most of a small call's time on two cores (issue 50: the MCP
    /// edge). Its error or panic is settled as a pooled read's is.
    pub async fn read_small<T, F>(self: &Arc<Self>, f: F) -> Result<Option<T>, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        self.refuse_if_damaged()?;
        let ran = match self.run_if_free(f) {
            Ok(ran) => ran,
            Err(f) => return self.read(f).await,
        };
        match ran {
            Ok(r) => r.map_err(|e| self.note(e)),
            Err(_) => self.panicked("a store read panicked".into()).await,
        }
    }

    /// `f` on the store here if it can be read at once (its panic caught); `Err(f)` back
    /// when a writer holds it or waits for it.
    #[allow(clippy::type_complexity)]
    fn run_if_free<T, F>(
        &self,
        f: F,
    ) -> Result<std::thread::Result<Result<Option<T>, StoreError>>, F>
    where
        F: FnOnce(&Store) -> Result<T, StoreError>,
    {
        let guard = match self.store.try_read() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Err(f),
        };
        Ok(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
            || self.read_in(guard.as_ref(), f),
        )))
    }

    /// `f` on the store a read guard holds: `Ok(None)` when it was closed (unloaded),
    /// its fault when it was let go for one.
    fn read_in<T>(
        &self,
        store: Option<&Store>,
        f: impl FnOnce(&Store) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        match store {
            Some(s) => f(s).map(Some),
            None => match self.fault() {
                Some(fault) => Err(fault.error()),
                None => Ok(None),
            },
        }
    }

    /// Run a write (or anything that needs the store to itself) on the blocking pool.
    /// A quarantined store refuses it untouched.
    pub async fn write<T, F>(self: &Arc<Self>, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
    {
        self.refuse_if_damaged()?;
        let cell = self.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let mut guard = cell.store.write().unwrap_or_else(|p| p.into_inner());
            match guard.as_mut() {
                Some(s) => {
                    cell.same_file()?;
                    f(s)
                }
                None => Err(cell.fault().map_or(StoreError::Closed, |f| f.error())),
            }
        })
        .await;
        self.settle(joined, "write").await
    }

    /// Close the store and open it again from disk (after a full disk or a failed file
    /// operation). On success the fault is cleared; on failure it says why, and the
    /// store stays closed until the next try. A quarantined store is never reopened.
    pub async fn reopen(self: &Arc<Self>, opts: StoreOptions) -> Result<(), StoreError> {
        self.refuse_if_damaged()?;
        let cell = self.clone();
        let done = tokio::task::spawn_blocking(move || {
            let path = cell.db_path();
            if !path.exists() {
                // Keep what is open (reads still serve from it): a fresh empty store is
                // never made in the place of a file that vanished.
                return Err(StoreError::Io {
                    path: path.display().to_string(),
                    detail: "the store file is missing: put it back (or restore it from a backup); no empty store is made in its place".into(),
                });
            }
            let mut guard = cell.store.write().unwrap_or_else(|p| p.into_inner());
            if let Some(old) = guard.take() {
                // Its derived files may not save on a full disk: they are caught up or
                // rebuilt from redb by the open below.
                if let Err(e) = old.close() {
                    tracing::debug!(error = %e, "closing a faulted store");
                }
            }
            let (store, _report) = Store::open(&cell.dir, opts)?;
            *guard = Some(store);
            *cell.file.lock().unwrap_or_else(|p| p.into_inner()) = file_id(&path);
            Ok(())
        })
        .await
        .unwrap_or_else(|e| Err(StoreError::Internal(format!("reopening panicked: {e}"))));
        match done {
            Ok(()) => {
                tracing::info!(store = %self.dir.display(), "store reopened: the fault is gone");
                self.set_fault(None);
                Ok(())
            }
            Err(e) => {
                let e = e.at_store(&self.db_path());
                if e.is_damage() {
                    return Err(self.quarantine_for(&e));
                }
                if let Some(f) = Fault::of(&e, now_ms()) {
                    let mut slot = self.fault.lock().unwrap_or_else(|p| p.into_inner());
                    let since = slot.as_ref().map_or(f.since, |old| old.since);
                    *slot = Some(Fault { since, ..f });
                }
                Err(e)
            }
        }
    }

    /// Lift the quarantine after a deep check found the store clean (or a restore put a
    /// good copy in place): the marker is removed and the fault cleared.
    pub fn lift_quarantine(&self) {
        let _ = std::fs::remove_file(self.dir.join(QUARANTINE_FILE));
        self.set_fault(None);
        tracing::info!(store = %self.dir.display(), "quarantine lifted");
    }

    /// Close the store and release its file. Closing twice is a no-op.
    pub fn close_now(&self) -> Result<(), StoreError> {
        let taken = self.store.write().unwrap_or_else(|p| p.into_inner()).take();
        taken.map(|s| s.close()).transpose().map(|_| ())
    }

    /// A writer holds the store now (tests wait for a stalled write with it).
    #[cfg(test)]
    pub fn write_held(&self) -> bool {
        self.store.try_read().is_err()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A small read runs at once on a free store; behind a writer it goes to the pool
    /// and answers once the writer is done (never an error, never a worker blocked).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_small_read_waits_for_a_writer_on_the_pool() {
        let d = tempfile::tempdir().unwrap();
        let (mut store, _) = Store::open(d.path(), StoreOptions::default()).unwrap();
        store.kv_set("k", "v1", "test:maker").unwrap();
        let cell = StoreCell::new(d.path().to_path_buf(), Some(store), None);
        let got = cell.read_small(|s| s.kv_get("k")).await.unwrap();
        assert_eq!(got.flatten().as_deref(), Some("v1"));
        // A writer holds the store, as the actor does for a write.
        let held = cell.clone();
        let (go, hold) = std::sync::mpsc::channel::<()>();
        let (taken, wait_taken) = std::sync::mpsc::channel::<()>();
        let writer = std::thread::spawn(move || {
            let mut g = held.store.write().unwrap();
            taken.send(()).unwrap();
            hold.recv().unwrap();
            if let Some(s) = g.as_mut() {
                s.kv_set("k", "v2", "test:maker").unwrap();
            }
        });
        wait_taken.recv().unwrap();
        let reader = cell.clone();
        let read = tokio::spawn(async move { reader.read_small(|s| s.kv_get("k")).await });
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(!read.is_finished(), "the read waits for the writer");
        go.send(()).unwrap();
        writer.join().unwrap();
        let got = read.await.unwrap().unwrap();
        assert_eq!(
            got.flatten().as_deref(),
            Some("v2"),
            "and reads what it wrote"
        );
    }
}
