//! [`Store`]: one store on disk. A directory holding `store.redb` (the truth: claims,
//! history, act log, key-value, vector-key map, vectors, meta) and `vectors.usearch`
//! (derived, rebuilt or repaired from redb on open).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::claim::{Act, Claim, MemorizeInput, MemorizeOutcome, Verdict};
use crate::clock::{Clock, SystemClock};
use crate::embed::Embedder;
use crate::error::StoreError;
use crate::recall::{Aging, RecallQuery, RecallResult, Retrieval};

/// How to open a store.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// `None` = lexical-only.
    pub embedder: Option<Arc<dyn Embedder>>,
    pub clock: Arc<dyn Clock>,
    pub aging: Aging,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self { embedder: None, clock: Arc::new(SystemClock), aging: Aging::default() }
    }
}

/// Counts of one store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StoreStats {
    pub live_claims: u64,
    pub history_versions: u64,
    pub acts: u64,
    pub kv_keys: u64,
    pub vectors: u64,
    pub retrieval: Option<Retrieval>,
}

/// What [`Store::open`] found and did about the derived indexes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OpenReport {
    /// The vector index file was missing, unreadable or out of step and was rebuilt.
    pub index_rebuilt: bool,
    /// Why, when it was rebuilt.
    pub index_rebuild_reason: Option<String>,
    /// Vectors computed on open for claims that had none (model newly present or changed).
    pub embedded_on_open: u64,
}

/// One store: a project brain or the medulla.
pub struct Store {
    dir: PathBuf,
    opts: StoreOptions,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.dir).finish()
    }
}
