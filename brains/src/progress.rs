//! How far a store's open has come, readable from another thread while it runs: the
//! owner shows it to requests that wait on a brain being opened (a rebuild or a
//! re-embed can take minutes on a large store).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// What an open is doing now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenPhase {
    /// Opening the database and reading the snapshot.
    Opening,
    /// Rebuilding the lexical index and claim metadata from redb.
    RebuildingClaimIndex,
    /// Embedding claims that have no vector (a new or changed model).
    Embedding,
    /// Rebuilding the vector index from the vectors in redb.
    RebuildingVectors,
}

impl OpenPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            OpenPhase::Opening => "opening",
            OpenPhase::RebuildingClaimIndex => "rebuilding_claim_index",
            OpenPhase::Embedding => "embedding",
            OpenPhase::RebuildingVectors => "rebuilding_vectors",
        }
    }
}

/// Shared, lock-free progress of one open.
#[derive(Debug, Default)]
pub struct OpenProgress {
    phase: AtomicU8,
    done: AtomicU64,
    total: AtomicU64,
}

impl OpenProgress {
    pub fn set_phase(&self, phase: OpenPhase, total: u64) {
        self.phase.store(phase as u8, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    pub fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// The phase, and how many of how many items it has done (0 of 0 when it has no
    /// count).
    pub fn snapshot(&self) -> (OpenPhase, u64, u64) {
        let phase = match self.phase.load(Ordering::Relaxed) {
            1 => OpenPhase::RebuildingClaimIndex,
            2 => OpenPhase::Embedding,
            3 => OpenPhase::RebuildingVectors,
            _ => OpenPhase::Opening,
        };
        (
            phase,
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }
}
