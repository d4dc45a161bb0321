//! The vectors an open reads after it returns: the ones the saved graph lacks (a close in
//! the middle of catching up on an import leaves up to all of them out) are held by key
//! at once (counted, contained) and read from redb by a thread of their own, a chunk at a
//! time, into the fresh set, where the scan finds them and the settler takes them.
//! Meanwhile a search does not find them by their vectors; their claims are found by
//! their words, as every claim is, and [`VectorIndex::loading`] says how many are left.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use super::locks::{lock, write};
use super::settler::Shared;
use super::VectorIndex;
use crate::error::StoreError;

/// Vectors read at a time: a chunk joins the fresh set under one lock.
const LOAD_CHUNK: usize = 2048;

/// What reads the vectors of some keys (those it finds; a key it lacks is left out).
pub type ReadVectors = Box<dyn FnMut(&[u64]) -> Result<Vec<(u64, Vec<f32>)>, StoreError> + Send>;

impl VectorIndex {
    /// Hold `keys` now and read their vectors with `read` on a thread of its own (on
    /// this one when no thread is to be had). A key removed before it is read is not.
    pub fn load_later(&self, keys: Vec<u64>, read: ReadVectors) {
        if keys.is_empty() {
            return;
        }
        lock(&self.shared.pending).extend(keys.iter().copied());
        let job = Arc::new(Mutex::new(Some((keys, read))));
        let (shared, taken) = (self.shared.clone(), job.clone());
        let spawned = std::thread::Builder::new()
            .name("vector-load".into())
            .spawn(move || {
                crate::background::yield_to_callers();
                if let Some((keys, read)) = lock(&taken).take() {
                    shared.load(&keys, read);
                }
            });
        match spawned {
            Ok(h) => *lock(&self.shared.loader) = Some(h),
            Err(e) => {
                tracing::warn!(error = %e, "no thread to read the vector backlog on: read now");
                if let Some((keys, read)) = lock(&job).take() {
                    self.shared.load(&keys, read);
                }
            }
        }
    }

    /// Vectors held that are still being read: not found by a vector search yet.
    pub fn loading(&self) -> usize {
        lock(&self.shared.pending).len()
    }

    /// Wait until every held vector is read (or the reader stopped).
    pub fn wait_loaded(&self) {
        let reader = lock(&self.shared.loader).take();
        if let Some(h) = reader {
            if h.join().is_err() {
                tracing::warn!("the vector backlog's reader panicked");
            }
        }
    }
}

impl Shared {
    /// Read the vectors of `keys` into the fresh set a chunk at a time, waking the
    /// settler after each. On a stop the rest stay held (the index is being dropped);
    /// on an error they are let go, told in the log: the index then counts fewer vectors
    /// than redb holds, which the store's check reports, and a rebuild repairs.
    fn load(self: &Arc<Self>, keys: &[u64], mut read: ReadVectors) {
        let started = std::time::Instant::now();
        for chunk in keys.chunks(LOAD_CHUNK) {
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            let wanted: Vec<u64> = {
                let p = lock(&self.pending);
                chunk.iter().filter(|k| p.contains(k)).copied().collect()
            };
            let rows = match read(&wanted) {
                Ok(rows) => rows,
                Err(e) => {
                    let left = std::mem::take(&mut *lock(&self.pending)).len();
                    tracing::warn!(error = %e, vectors = left, "could not read the vector backlog; the index is out of step until it is repaired");
                    return;
                }
            };
            {
                let mut f = write(&self.fresh);
                let mut p = lock(&self.pending);
                for (k, v) in &rows {
                    // Let go since it was asked for: not added.
                    if p.remove(k) {
                        self.push_fresh(&mut f, *k, v, None);
                    }
                }
                let missing: Vec<u64> = wanted.into_iter().filter(|k| p.remove(k)).collect();
                if !missing.is_empty() {
                    tracing::warn!(
                        vectors = missing.len(),
                        "vectors of the backlog are missing from redb; the index is out of step until it is repaired"
                    );
                }
            }
            self.wake();
        }
        tracing::info!(
            vectors = keys.len(),
            ms = started.elapsed().as_millis() as u64,
            "the vector backlog is read"
        );
    }
}
