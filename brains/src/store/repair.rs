//! Bringing a saved vector-index file that fell behind redb back in step on open: the
//! vectors it lacks added (a few read at once, many read after open returns), the ones
//! let go since removed; and the check that an index is in step.

use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata};

use super::tables::VECTORS;
use super::{from_bytes, Store, REBUILD_CHUNK};
use crate::error::StoreError;
use crate::vector::{key_hash, ReadVectors, VectorIndex};

/// Vectors missing from a saved index file that an open reads itself (a few
/// milliseconds); more are read after it returns.
const DEFER_MIN: usize = 4096;

/// A saved index file brought back in step with redb: how many vectors were added or
/// removed, how many live keys were looked up, and how many are read after open returns.
pub(super) struct Repaired {
    pub(super) ix: VectorIndex,
    pub(super) repaired: u64,
    pub(super) checked: u64,
    pub(super) deferred: u64,
}

impl Store {
    /// Bring a saved index file that fell behind (a crash since its last checkpoint)
    /// back in step with redb: add the vectors written since, remove the ones let go
    /// since. `Ok(Err(why))` when it is better rebuilt. Keys are never reused and a
    /// key's vector never changes, so a key the file holds that redb also holds is right.
    pub(super) fn repair_index(
        &self,
        mut ix: VectorIndex,
    ) -> Result<Result<Repaired, String>, StoreError> {
        let rx = self.db.begin_read()?;
        let vectors = rx.open_table(VECTORS)?;
        let n = vectors.len()?;
        let keys: Vec<u64> = self
            .index
            .docs()
            .filter_map(|d| self.index.key(d))
            .collect();
        if keys.len() as u64 != n {
            return Ok(Err(format!(
                "redb holds {n} vectors, the claim index {} vector keys",
                keys.len()
            )));
        }
        // A stamp written with the file says which keys it holds: when they are the live
        // ones, there is nothing to check key by key.
        let live = keys.iter().fold(0u64, |d, k| d.wrapping_add(key_hash(*k)));
        if ix.holds_exactly(live, keys.len()) {
            return Ok(Ok(Repaired {
                ix,
                repaired: 0,
                checked: 0,
                deferred: 0,
            }));
        }
        // However many are missing (a close right after a large import leaves most of
        // them unsettled), they go to the fresh set: open stays quick, and the settler
        // does what a rebuild would.
        let checked = keys.len() as u64;
        let mut missing: Vec<u64> = keys.into_iter().filter(|k| !ix.contains(*k)).collect();
        missing.sort_unstable();
        let in_graph = missing
            .iter()
            .fold(live, |d, k| d.wrapping_sub(key_hash(*k)));
        let mut repaired = missing.len() as u64;
        // What the file holds that is no longer live goes first, while nothing is fresh.
        if ix.size() + missing.len() != n as usize {
            repaired += ix.remove_stale(self.next_key, &|k| self.index.doc_of_key(k).is_some())?;
        }
        // Checked key by key: the graph holds the live keys but the missing ones. Known
        // before they are added, as the settler may start on them at once.
        ix.know_digest(in_graph);
        // A few are read now, found at once by their vectors. Many (a close in the
        // middle of catching up on an import) are held now and read after open returns
        // (in this read's snapshot: a key's vector never changes), into the fresh set,
        // where the settler takes them; their claims are found by their words meanwhile.
        if missing.len() <= DEFER_MIN {
            for keys in missing.chunks(REBUILD_CHUNK) {
                let mut chunk = Vec::with_capacity(keys.len());
                for k in keys {
                    match vectors.get(*k)? {
                        Some(v) => chunk.push((*k, from_bytes(v.value()))),
                        None => return Ok(Err(format!("vector {k} is missing from redb"))),
                    }
                }
                ix.add_many(&chunk)?;
            }
            return Ok(Ok(Repaired {
                ix,
                repaired,
                checked,
                deferred: 0,
            }));
        }
        let deferred = missing.len() as u64;
        ix.load_later(missing, reader(vectors));
        if ix.size() as u64 != n {
            return Ok(Err(format!(
                "the index holds {} vectors, redb {n}",
                ix.size()
            )));
        }
        Ok(Ok(Repaired {
            ix,
            repaired,
            checked,
            deferred,
        }))
    }

    /// An eight-bit graph from before its rows carried bounds gets them in the
    /// background, from the stored vectors of this read's snapshot (a key's vector never
    /// changes).
    pub(super) fn backfill_bounds(&self) -> Result<(), StoreError> {
        let Some(ix) = &self.vindex else {
            return Ok(());
        };
        let keys: Vec<u64> = self
            .index
            .docs()
            .filter_map(|d| self.index.key(d))
            .collect();
        let rx = self.db.begin_read()?;
        ix.backfill_bounds(keys, reader(rx.open_table(VECTORS)?));
        Ok(())
    }

    pub(super) fn index_out_of_step(&self, ix: &VectorIndex) -> Result<Option<String>, StoreError> {
        let rx = self.db.begin_read()?;
        let vt = rx.open_table(VECTORS)?;
        let n = vt.len()?;
        if ix.size() as u64 != n {
            return Ok(Some(format!(
                "the index holds {} vectors, redb {n}",
                ix.size()
            )));
        }
        for row in vt.iter()? {
            let (k, _) = row?;
            if !ix.contains(k.value()) {
                return Ok(Some(format!(
                    "vector {} is missing from the index",
                    k.value()
                )));
            }
        }
        Ok(None)
    }
}

/// What reads stored vectors by key from a read snapshot's table (a key it lacks is
/// left out), for the threads that read them after open returns.
fn reader(vectors: redb::ReadOnlyTable<u64, &'static [u8]>) -> ReadVectors {
    Box::new(move |keys| {
        let mut rows = Vec::with_capacity(keys.len());
        for k in keys {
            if let Some(v) = vectors.get(*k)? {
                rows.push((*k, from_bytes(v.value())));
            }
        }
        Ok(rows)
    })
}
