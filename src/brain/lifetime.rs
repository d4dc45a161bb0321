//! A store's lifetime beside its actor: opened by the owner on the blocking pool before
//! its actor starts, closed by the owner on every way out of service.

use std::path::PathBuf;

use brains::store::OpenReport;
use brains::{Store, StoreError, StoreOptions};

use super::cell::{self, Shared, StoreCell};

/// Open a store on the blocking pool, beside any actor: opening may rebuild or
/// re-embed for minutes, and no mailbox waits on it. The store is handed to its actor
/// (the only writer) through [`BrainArgs`].
///
/// A store that is quarantined, or found damaged now, opens as a quarantined cell (every
/// call answers `store_damaged`); one whose disk is full or whose file cannot be read
/// opens as a faulted cell its actor keeps trying to reopen. Only a store held by
/// another process (or a bug) fails the open.
pub async fn open(dir: PathBuf, opts: StoreOptions) -> Result<(Shared, OpenReport), StoreError> {
    if let Some(fault) = cell::quarantined(&dir) {
        tracing::error!(store = %dir.display(), detail = %fault.detail, "store is quarantined: restore it from a backup or move it aside");
        return Ok((
            StoreCell::new(dir, None, Some(fault)),
            OpenReport::default(),
        ));
    }
    let shown = dir.display().to_string();
    let at = dir.clone();
    // redb checks the file as it opens it; a check that fails on a damaged file can
    // panic (debug builds) rather than return `Corrupted`: either way the file is damaged.
    let opened = tokio::task::spawn_blocking(move || Store::open(&at, opts))
        .await
        .unwrap_or_else(|e| {
            Err(StoreError::Damaged {
                path: dir.join("store.redb").display().to_string(),
                detail: format!("opening it panicked: {e}"),
            })
        });
    let (store, report) = match opened {
        Ok(x) => x,
        Err(e) if e.is_damage() || e.needs_reopen() => {
            let cell = StoreCell::new(dir, None, None);
            let e = if e.is_damage() {
                cell.quarantine_for(&e)
            } else {
                e
            };
            if e.needs_reopen() {
                tracing::error!(store = %shown, error = %e, "store could not be opened; its actor retries");
                cell.mark(&e);
            }
            return Ok((cell, OpenReport::default()));
        }
        Err(e) => return Err(e),
    };
    if report.index_rebuilt {
        // A store with no vectors yet (a fresh brain) has no index file to lose: that
        // is no news. Rebuilding a real one is worth saying.
        let had_vectors = store.stats().map(|s| s.vectors > 0).unwrap_or(true);
        if had_vectors {
            tracing::warn!(dir = %shown, reason = ?report.index_rebuild_reason, "vector index rebuilt from redb");
        } else {
            tracing::debug!(dir = %shown, "a new vector index");
        }
    }
    Ok((StoreCell::new(dir, Some(store), None), report))
}

/// Close a store and release its file. The owner opened it and the owner closes it, on
/// every way out of service (an unload once the actor has drained, an actor that failed
/// or stopped, the owner stopping): ractor runs no `post_stop` for an actor that fails,
/// so closing there would leave a failed actor's file held and its successor locked
/// out. Closing twice is a no-op.
pub async fn close(store: Shared) {
    let closed = tokio::task::spawn_blocking(move || store.close_now()).await;
    match closed {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::error!(error = %e, "closing store failed"),
        Err(e) => tracing::error!(error = %e, "closing store panicked"),
    }
}
