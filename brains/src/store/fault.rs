//! Store faults: what a failure of the disk or the file under a store means, as a typed
//! error naming the store's path and the fix.
//!
//! Three kinds matter to whoever holds the store:
//! - **damage** (`store_damaged`): the file fails redb's checks or holds a record that
//!   does not decode. The holder quarantines the store: nothing reads or writes it.
//! - **a full disk** (`disk_full`) and **other file faults** (`io`: permission lost, a
//!   read-only mount, a file removed under the owner). redb refuses every later
//!   operation after one failed I/O until the database is closed and opened again, so
//!   the holder reopens the store once the cause may be gone. Nothing acknowledged is
//!   lost: a failed commit never acknowledged anything.
//! - anything else is passed through unchanged.

use std::path::Path;

use crate::error::StoreError;

/// An I/O error that says the disk (or the user's quota on it) is full.
fn is_full(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

pub(crate) fn io_fault(path: &Path, e: &std::io::Error) -> StoreError {
    if is_full(e) {
        StoreError::DiskFull {
            path: path.display().to_string(),
        }
    } else {
        StoreError::Io {
            path: path.display().to_string(),
            detail: e.to_string(),
        }
    }
}

/// A redb error met on the store whose file is `path`, as a typed fault.
fn of_redb(path: &Path, e: &redb::Error) -> Option<StoreError> {
    match e {
        redb::Error::Io(io) => Some(io_fault(path, io)),
        redb::Error::Corrupted(detail) => Some(StoreError::Damaged {
            path: path.display().to_string(),
            detail: detail.clone(),
        }),
        redb::Error::PreviousIo => Some(StoreError::Io {
            path: path.display().to_string(),
            detail: "an earlier write to this store failed".into(),
        }),
        _ => None,
    }
}

/// Why opening the file at `path` failed, as a typed error.
pub(crate) fn open_error(path: &Path, e: redb::DatabaseError) -> StoreError {
    let shown = path.display().to_string();
    match e {
        redb::DatabaseError::DatabaseAlreadyOpen | redb::DatabaseError::LockProtocolMismatch => {
            StoreError::StoreLocked { path: shown }
        }
        redb::DatabaseError::Storage(redb::StorageError::Io(io))
            if io.kind() == std::io::ErrorKind::WouldBlock =>
        {
            StoreError::StoreLocked { path: shown }
        }
        redb::DatabaseError::Storage(redb::StorageError::Io(io)) => io_fault(path, &io),
        other => StoreError::Damaged {
            path: shown,
            detail: other.to_string(),
        },
    }
}

impl StoreError {
    /// This error as a fault of the store whose redb file is `path`: a full disk, a
    /// failed file operation, or damage, each naming the path and the fix. Any other
    /// error is returned as it is.
    pub fn at_store(self, path: &Path) -> StoreError {
        match &self {
            StoreError::Storage(e) => of_redb(path, e).unwrap_or(self),
            StoreError::CorruptRecord { what, source } => StoreError::Damaged {
                path: path.display().to_string(),
                detail: format!("a stored {what} does not decode: {source}"),
            },
            _ => self,
        }
    }

    /// The store's file is damaged: quarantine it.
    pub fn is_damage(&self) -> bool {
        matches!(self, StoreError::Damaged { .. })
    }

    /// The disk or the file failed under the store: it must be closed and opened again
    /// once the cause is gone.
    pub fn needs_reopen(&self) -> bool {
        matches!(self, StoreError::DiskFull { .. } | StoreError::Io { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_damage_and_a_failed_write_are_told_apart() {
        let p = Path::new("/h/brains/x/store.redb");
        let full = std::io::Error::from_raw_os_error(28); // ENOSPC
        let e = StoreError::Storage(redb::Error::Io(full)).at_store(p);
        assert_eq!(e.code(), "disk_full");
        assert!(e.needs_reopen() && !e.is_damage());
        assert!(e.to_string().contains("/h/brains/x/store.redb"));

        let e = StoreError::Storage(redb::Error::Corrupted("page 7".into())).at_store(p);
        assert_eq!(e.code(), "store_damaged");
        assert!(e.is_damage() && !e.needs_reopen());
        assert!(e.to_string().contains("medulla restore"));

        let e = StoreError::Storage(redb::Error::PreviousIo).at_store(p);
        assert_eq!(e.code(), "io");
        assert!(e.needs_reopen());

        let denied = std::io::Error::from_raw_os_error(13); // EACCES
        let e = StoreError::Storage(redb::Error::Io(denied)).at_store(p);
        assert_eq!(e.code(), "io");

        let bad = serde_json::from_slice::<u32>(b"{").unwrap_err();
        let e = StoreError::corrupt("claim record")(bad).at_store(p);
        assert_eq!(e.code(), "store_damaged");

        let e = StoreError::EmptyText.at_store(p);
        assert_eq!(e.code(), "empty_text");
    }
}
