//! Online backup of one store: a consistent copy of every redb table, taken from ONE read
//! transaction, written into a fresh redb file while the store keeps serving.
//!
//! Two steps, so the caller decides what is held when. [`Store::backup_source`] begins
//! the read transaction (it needs the store for an instant: the owner holds its read
//! lock only that long); [`BackupSource::write_to`] copies from that transaction with no
//! lock at all, so writers are never blocked for the copy's duration. redb's MVCC keeps
//! the pages the transaction sees until it ends.
//!
//! Derived files (`vectors.usearch`, `claims.snapshot`) are never copied: they are
//! rebuilt from redb when the copy is opened. A copy is a `store.redb` alone.
//!
//! [`count_copy`] opens a copy read-only and counts it the same way, which is how a
//! restore checks a copy opens clean and says what the manifest says before it puts it
//! in place.

use std::io::Read;
use std::path::{Path, PathBuf};

use redb::{
    Database, Key, ReadOnlyDatabase, ReadTransaction, ReadableDatabase, ReadableTable,
    ReadableTableMetadata, TableDefinition, TableHandle, Value, WriteTransaction,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::tables::{
    ACTS, CLAIMS, HISTORY, KV, META, REVIEWED, TEAM_OUTBOX, TEAM_PENDING, TEAM_REQUESTS, TEAM_SEEN,
    TEAM_SLUGS, VECTORS, VEC_KEYS,
};
use super::{Store, DB_FILE};
use crate::error::StoreError;

/// The counts of a copy, all read from the transaction it was copied from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct CopyCounts {
    pub live_claims: u64,
    pub history_versions: u64,
    pub acts: u64,
    pub kv_keys: u64,
    pub vectors: u64,
}

/// What [`BackupSource::write_to`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoreCopy {
    /// The written file (`<dest>/store.redb`).
    pub file: PathBuf,
    pub counts: CopyCounts,
    pub bytes: u64,
    /// Lowercase hex sha256 of the written file.
    pub sha256: String,
}

/// One store's state at an instant: a read transaction begun on it, to copy from.
pub struct BackupSource {
    rx: ReadTransaction,
    dir: PathBuf,
}

impl std::fmt::Debug for BackupSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackupSource")
            .field("dir", &self.dir)
            .finish()
    }
}

impl Store {
    /// Begin the read transaction a backup copies from. Quick: it holds nothing but
    /// the transaction, which stays valid while this store is open, whatever is
    /// written meanwhile.
    pub fn backup_source(&self) -> Result<BackupSource, StoreError> {
        Ok(BackupSource {
            rx: self.db.begin_read()?,
            dir: self.dir.clone(),
        })
    }

    /// Begin a backup and write it into `dest` in one go (a caller that need not
    /// release a lock between the two steps).
    pub fn backup_to(&self, dest: &Path) -> Result<StoreCopy, StoreError> {
        self.backup_source()?.write_to(dest)
    }
}

/// The tables a copy holds; a source with any other table is refused rather than
/// copied without it.
const TABLES: [&str; 13] = [
    "claims",
    "history",
    "acts",
    "kv",
    "vec_keys",
    "vectors",
    "meta",
    // A shared store's outbox, echoes awaited and acts seen (only when shared).
    "team_outbox",
    "team_pending",
    "team_seen",
    "team_slugs",
    "team_requests",
    // A person's review marks (only once a person reviewed a claim).
    "reviewed",
];

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |e| StoreError::Io {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}

/// A store closed under a running copy (its brain unloaded) reads as `Closed`, which
/// a caller retries from a new source.
fn closed_or(e: impl Into<StoreError>) -> StoreError {
    match e.into() {
        StoreError::Storage(redb::Error::DatabaseClosed) => StoreError::Closed,
        other => other,
    }
}

fn copy_table<K: Key + 'static, V: Value + 'static>(
    rx: &ReadTransaction,
    tx: &WriteTransaction,
    def: TableDefinition<K, V>,
) -> Result<u64, StoreError> {
    let src = rx.open_table(def).map_err(closed_or)?;
    let mut dst = tx.open_table(def)?;
    let mut n = 0;
    for row in src.iter().map_err(closed_or)? {
        let (k, v) = row.map_err(closed_or)?;
        dst.insert(k.value(), v.value())?;
        n += 1;
    }
    Ok(n)
}

impl BackupSource {
    /// Copy every table into a fresh `dest/store.redb` (refused when one is there),
    /// commit it durably, and hash it.
    pub fn write_to(self, dest: &Path) -> Result<StoreCopy, StoreError> {
        let rx = self.rx;
        let tables: Vec<String> = rx
            .list_tables()
            .map_err(closed_or)?
            .map(|t| t.name().to_string())
            .collect();
        if let Some(unknown) = tables.iter().find(|t| !TABLES.contains(&t.as_str())) {
            return Err(StoreError::Invalid(format!(
                "the store at {} has a table {unknown:?} this version does not know: back it up with the medulla version that wrote it",
                self.dir.display()
            )));
        }
        std::fs::create_dir_all(dest).map_err(io(dest))?;
        let file = dest.join(DB_FILE);
        if file.exists() {
            return Err(StoreError::Io {
                path: file.display().to_string(),
                detail: "a copy is already there; write each backup into a new directory".into(),
            });
        }
        let db = Database::create(&file).map_err(|e| StoreError::Io {
            path: file.display().to_string(),
            detail: e.to_string(),
        })?;
        let tx = db.begin_write()?;
        let counts = CopyCounts {
            live_claims: copy_table(&rx, &tx, CLAIMS)?,
            history_versions: copy_table(&rx, &tx, HISTORY)?,
            acts: copy_table(&rx, &tx, ACTS)?,
            kv_keys: copy_table(&rx, &tx, KV)?,
            vectors: {
                copy_table(&rx, &tx, VEC_KEYS)?;
                copy_table(&rx, &tx, VECTORS)?
            },
        };
        copy_table(&rx, &tx, META)?;
        let has = |name: &str| tables.iter().any(|t| t == name);
        if has("team_outbox") {
            copy_table(&rx, &tx, TEAM_OUTBOX)?;
        }
        if has("team_pending") {
            copy_table(&rx, &tx, TEAM_PENDING)?;
        }
        if has("team_seen") {
            copy_table(&rx, &tx, TEAM_SEEN)?;
        }
        if has("team_slugs") {
            copy_table(&rx, &tx, TEAM_SLUGS)?;
        }
        if has("team_requests") {
            copy_table(&rx, &tx, TEAM_REQUESTS)?;
        }
        if has("reviewed") {
            copy_table(&rx, &tx, REVIEWED)?;
        }
        tx.commit()?;
        drop(rx);
        drop(db);
        let (bytes, sha256) = hash_file(&file)?;
        Ok(StoreCopy {
            file,
            counts,
            bytes,
            sha256,
        })
    }
}

/// The size and lowercase hex sha256 of a file, read in blocks.
pub fn hash_file(path: &Path) -> Result<(u64, String), StoreError> {
    let mut f = std::fs::File::open(path).map_err(io(path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let read = f.read(&mut buf).map_err(io(path))?;
        if read == 0 {
            break;
        }
        h.update(&buf[..read]);
        n += read as u64;
    }
    Ok((n, hex::encode(h.finalize())))
}

/// Open a copy (a `store.redb` file) read-only and count it as a backup counts it:
/// the check that it opens clean.
pub fn count_copy(file: &Path) -> Result<CopyCounts, StoreError> {
    let corrupt = |detail: String| StoreError::Damaged {
        path: file.display().to_string(),
        detail,
    };
    let db = ReadOnlyDatabase::open(file).map_err(|e| corrupt(e.to_string()))?;
    let rx = db.begin_read().map_err(|e| corrupt(e.to_string()))?;
    let len = |name: &str, n: Result<u64, redb::StorageError>| {
        n.map_err(|e| corrupt(format!("table {name}: {e}")))
    };
    macro_rules! count {
        ($def:expr) => {{
            let t = rx
                .open_table($def)
                .map_err(|e| corrupt(format!("table {}: {e}", $def.name())))?;
            len($def.name(), t.len())?
        }};
    }
    // Every table must be there and readable, not only the counted ones.
    count!(META);
    count!(VEC_KEYS);
    Ok(CopyCounts {
        live_claims: count!(CLAIMS),
        history_versions: count!(HISTORY),
        acts: count!(ACTS),
        kv_keys: count!(KV),
        vectors: count!(VECTORS),
    })
}

/// Is this store file held open by a running owner (redb's file lock)? A file that is
/// missing, or unreadable for any other reason, is not held.
pub fn held_by_another(file: &Path) -> bool {
    if !file.is_file() {
        return false;
    }
    match ReadOnlyDatabase::open(file) {
        Ok(_) => false,
        Err(
            redb::DatabaseError::DatabaseAlreadyOpen | redb::DatabaseError::LockProtocolMismatch,
        ) => true,
        Err(redb::DatabaseError::Storage(redb::StorageError::Io(e))) => {
            e.kind() == std::io::ErrorKind::WouldBlock
        }
        Err(_) => false,
    }
}
