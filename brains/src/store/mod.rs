//! [`Store`]: one store on disk. A directory holding `store.redb` (the truth: claims,
//! history, act log, key-value, vector-key map, vectors, meta) and `vectors.usearch`
//! (derived, rebuilt or repaired from redb on open).
//!
//! One concern per file: `open` (open, reconcile and rebuild the derived indexes),
//! `write` (memorize, supersede, purge, learn, demote, stamp), `read` (get, history,
//! listings), `query` (recall), `kv` (boot memory), `acts` (the act log), `backup` (a
//! consistent copy from one read transaction), `tables` (the redb table definitions).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{Database, ReadableDatabase, ReadableTableMetadata};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::claim::Claim;
use crate::clock::{Clock, SystemClock};
use crate::embed::Embedder;
use crate::error::StoreError;
use crate::index::ClaimIndex;
use crate::progress::OpenProgress;
use crate::recall::{Aging, Retrieval};
use crate::vector::{Precision, VectorIndex};
use tables::{ACTS, CLAIMS, HISTORY, KV, VECTORS};

mod acts;
mod ahead;
mod apply;
pub mod backup;
mod consolidate;
mod embedding;
mod fault;
mod integrity;
mod kv;
mod memorize;
mod merge;
mod open;
mod query;
mod race;
mod read;
mod repair;
mod rescore;
pub mod review;
pub mod share;
pub mod similar;
mod snapshot;
mod stored;
mod tables;
mod tend;
mod write;

pub use ahead::Derivation;
pub use backup::{BackupSource, CopyCounts, StoreCopy};
pub use embedding::{Switched, ToEmbed};
pub use integrity::Integrity;
pub use merge::Merged;
pub use share::{Applied, Cursor, Entry, Incoming, Outgoing, ShareState, SharedAct, SharedOp};
pub use similar::{Clusters, SimilarHit};
pub use tend::TendWork;
pub use write::Commit;

/// How to open a store.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// `None` = lexical-only.
    pub embedder: Option<Arc<dyn Embedder>>,
    pub clock: Arc<dyn Clock>,
    pub aging: Aging,
    /// Where an open reports how far it has come (a rebuild or re-embed can be long).
    pub progress: Option<Arc<OpenProgress>>,
    /// How the vector index holds vectors; an index file of another precision is rebuilt.
    pub precision: Precision,
    /// Live claims from which a hybrid recall searches its lexical and dense sides on
    /// two cores at once (20 000 by default: below, the second thread's start costs
    /// about what it saves). The answer is the same either way.
    pub parallel_recall_min: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            embedder: None,
            clock: Arc::new(SystemClock),
            aging: Aging::default(),
            progress: None,
            precision: Precision::default(),
            parallel_recall_min: 20_000,
        }
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

/// What [`Store::purge`] erased.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct PurgeReport {
    /// What the purge act records instead of the slug.
    pub subject: String,
    pub versions_erased: u64,
    /// Earlier acts about the slug whose subject and note were replaced.
    pub acts_scrubbed: u64,
    /// Whether the database file was compacted afterwards.
    pub compacted: bool,
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
    /// The claim-index snapshot (lexical index and claim metadata) was missing,
    /// unreadable, of another store or not catchable-up, and was rebuilt from redb.
    pub claim_index_rebuilt: bool,
    /// Why, when it was rebuilt.
    pub claim_index_rebuild_reason: Option<String>,
    /// Vectors added to or removed from a saved vector index that had fallen behind
    /// (a crash since its last checkpoint), instead of rebuilding it.
    pub index_repaired: u64,
    /// Acts replayed onto a snapshot taken before the last writes (after a crash).
    pub claim_index_caught_up: u64,
    /// Live vector keys looked up in the saved index file one by one; 0 when the file's
    /// stamp vouched that it holds exactly the live keys.
    pub index_keys_checked: u64,
    /// Where the open's time went, in microseconds: redb and the claim index (snapshot
    /// read, caught up or rebuilt), then the vector side (viewed, repaired or rebuilt).
    pub claim_index_us: u64,
    pub vectors_us: u64,
    /// Vectors the saved index file lacked (a close in the middle of catching up) that
    /// are read from redb in the background after open returns; searches meanwhile find
    /// their claims by their words.
    pub vectors_deferred: u64,
}

/// The truth of a store, in its directory.
pub const DB_FILE: &str = "store.redb";
/// redb's page cache per store. Its default (1 GiB) lets one large brain's reads and
/// writes fill a gigabyte of the owner's memory; recall reads a few records a query
/// and writes touch a few pages, and the operating system caches the file besides.
const DB_CACHE_BYTES: usize = 32 * 1024 * 1024;
const SCHEMA_VERSION: &str = "1";
/// Checkpoints of the claim-index snapshot: after this many acts, or after an eighth of
/// the store's size when that is more (also on flush, close and drop; the vector index's
/// file is the settler's to checkpoint, on the same spacing). A checkpoint rewrites its
/// file, so spacing them by the store's size keeps their cost per write constant as the
/// store grows; what a crash leaves behind is caught up on open (the acts replayed onto
/// the snapshot, the vectors added to the index), never rebuilt.
const SAVE_EVERY: u32 = 256;
/// The share of the store's size between two checkpoints (see [`SAVE_EVERY`]).
const SAVE_SHARE: usize = 8;
/// The share after a bulk batch (an import's): a checkpoint once the acts unsaved are
/// half the store, so the store doubles between two of them. Each costs the whole
/// store's size (the fold, and every claim the writer changes meanwhile laid again onto
/// the folded base), and an import into an empty store would otherwise pay for a
/// checkpoint each time it grew by an eighth; a crash mid-import leaves at most half
/// the store to catch up from the act log on open, never a rebuild.
const BULK_SAVE_SHARE: usize = 2;
/// A checkpoint after a write folds the claim index into one segment, encodes it and
/// writes the file on a thread of its own (the writer goes on, and takes the folded
/// base back when it is done); the next waits until that one is back and this many
/// times its whole time (fold, encoding and file) has passed since. A batched import (an
/// eighth of a 100 000-claim store arrives in under a second) then spends at most a
/// fifth of a core on checkpoints, while a trickle of single writes is spaced by
/// [`SAVE_SHARE`] alone.
const SAVE_PACE: u32 = 4;
/// A checkpoint folded in the background: the claim index's new base (`None` when it
/// was one segment already), how long the fold took, and whether its snapshot file was
/// written.
struct Folded {
    base: Option<std::sync::Arc<crate::index::Segment>>,
    took: std::time::Duration,
    saved: Result<(), StoreError>,
}

/// Unsettled vectors a close settles before saving the vector index (more are left to
/// the next open, which hands them to the settler again).
const CLOSE_SETTLE_MAX: usize = 4096;
/// Vectors read from redb and inserted at a time when the index is rebuilt or repaired.
const REBUILD_CHUNK: usize = 8192;
const MAX_KV_KEY: usize = 256;
/// Log re-embedding progress on open every this many claims.
const EMBED_PROGRESS_EVERY: u64 = 1000;
const MAX_KV_VALUE: usize = 64 * 1024;

/// One store: a project brain or the medulla.
pub struct Store {
    dir: PathBuf,
    opts: StoreOptions,
    db: Database,
    /// Every live claim's terms, metadata and vector key (see [`crate::index`]).
    index: ClaimIndex,
    vindex: Option<VectorIndex>,
    next_key: u64,
    next_act: u64,
    /// Acts since the claim-index snapshot was saved (or handed to `snapshot_job`).
    acts_unsaved: u32,
    /// The checkpoint being folded, encoded and written on a thread of its own, if one
    /// is: its folded base comes back to the claim index when it is done.
    snapshot_job: Option<std::thread::JoinHandle<Folded>>,
    /// When the last checkpoint came back, and how long its thread took
    /// ([`SAVE_PACE`]).
    last_fold: Option<(std::time::Instant, std::time::Duration)>,
    /// The store's creation stamp (meta `created`), which the snapshot carries.
    created: String,
    /// The team store this one mirrors, when shared (SPEC §13).
    share: Option<share::ShareState>,
    /// The next outbox entry's id.
    next_outbox: u64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("dir", &self.dir)
            .field("live", &self.index.len())
            .finish()
    }
}

fn to_bytes(v: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

fn from_bytes(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn decode(b: &[u8]) -> Result<Claim, StoreError> {
    serde_json::from_slice(b).map_err(StoreError::corrupt("claim record"))
}

fn encode(c: &Claim) -> Vec<u8> {
    // Sized for the record at once: grown from serde_json's default, a claim's JSON was
    // copied three or four times on the way.
    let mut out = Vec::with_capacity(512 + c.label.len() + c.text.len());
    serde_json::to_writer(&mut out, c).expect("a claim serializes");
    out
}

fn sha(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

fn embed_text(label: &str, text: &str) -> String {
    format!("{label}\n{text}")
}

impl Store {
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The redb file: the truth of this store.
    pub fn db_path(&self) -> PathBuf {
        self.dir.join(DB_FILE)
    }

    pub fn now_ms(&self) -> i64 {
        self.opts.clock.now_ms()
    }

    pub fn aging(&self) -> Aging {
        self.opts.aging
    }

    pub fn retrieval(&self) -> Retrieval {
        if self.opts.embedder.is_some() {
            Retrieval::Hybrid
        } else {
            Retrieval::Lexical
        }
    }
    pub fn stats(&self) -> Result<StoreStats, StoreError> {
        let rx = self.db.begin_read()?;
        Ok(StoreStats {
            live_claims: rx.open_table(CLAIMS)?.len()?,
            history_versions: rx.open_table(HISTORY)?.len()?,
            acts: rx.open_table(ACTS)?.len()?,
            kv_keys: rx.open_table(KV)?.len()?,
            vectors: rx.open_table(VECTORS)?.len()?,
            retrieval: Some(self.retrieval()),
        })
    }

    /// Persist the derived files now: the vector index's graph as it stands and the
    /// claim-index snapshot when acts were written since it was saved. Vectors not yet
    /// settled into the graph are not waited for: the next open finds them missing from
    /// the file and hands them to the settler again (from redb), so closing a store
    /// right after a large import is as quick as any other close.
    pub fn flush_index(&mut self) -> Result<(), StoreError> {
        self.finish_snapshot();
        if let Some(ix) = &self.vindex {
            ix.save()?;
        }
        if self.acts_unsaved > 0 {
            self.save_claim_index()?;
        }
        Ok(())
    }

    /// Settle every vector written so far into the vector index's graph, on every core,
    /// and save it: what a benchmark or a test measures a settled store after.
    pub fn settle_vectors(&mut self) -> Result<(), StoreError> {
        if let Some(ix) = &self.vindex {
            ix.settle_all()?;
        }
        self.flush_index()
    }

    /// Write the claim-index snapshot (see [`snapshot`]) at the current act sequence,
    /// the claim index compacted into one segment first; one being written in the
    /// background is finished first, so the newer file is the one that stays.
    fn save_claim_index(&mut self) -> Result<(), StoreError> {
        self.finish_snapshot();
        let stamp = self.snapshot_stamp();
        snapshot::save(&self.dir, &stamp, &self.index.frozen())?;
        self.acts_unsaved = 0;
        Ok(())
    }

    fn snapshot_stamp(&self) -> snapshot::Stamp {
        snapshot::Stamp {
            next_act: self.next_act,
            next_key: self.next_key,
            created: self.created.clone(),
            live: self.index.len() as u64,
        }
    }

    /// A checkpoint after a write: a copy of what the claim index needs to fold is taken
    /// here; the fold into one segment, its snapshot's encoding and the file are done
    /// on a thread of their own while the writer goes on, and the folded base comes
    /// back to the index at a later write ([`Store::finish_snapshot`]).
    fn checkpoint(&mut self) {
        let stamp = self.snapshot_stamp();
        // `None`: the index is one segment already, which the file holds as it is.
        let input = self.index.fold_input();
        let whole = self.index.base();
        let dir = self.dir.clone();
        let job = std::thread::Builder::new()
            .name("claim-snapshot".into())
            .spawn(move || {
                crate::background::yield_to_callers();
                let started = std::time::Instant::now();
                let base = input.map(|mut input| {
                    input.compact();
                    input.base()
                });
                let saved = snapshot::save(&dir, &stamp, base.as_ref().unwrap_or(&whole));
                Folded {
                    base,
                    took: started.elapsed(),
                    saved,
                }
            });
        match job {
            Ok(job) => self.snapshot_job = Some(job),
            Err(e) => {
                tracing::warn!(error = %e, "no thread for the claim-index snapshot; written here");
                let started = std::time::Instant::now();
                self.save_derived("claim-index snapshot", |s| s.save_claim_index());
                self.last_fold = Some((std::time::Instant::now(), started.elapsed()));
            }
        }
        self.acts_unsaved = 0;
    }

    /// Wait for the checkpoint being folded and written in the background, if one is,
    /// and take its folded base. A failure to write the file (a full disk) is logged:
    /// the acts it would have saved are caught up on open.
    fn finish_snapshot(&mut self) {
        let Some(job) = self.snapshot_job.take() else {
            return;
        };
        let failed = match job.join() {
            Ok(Folded { base, took, saved }) => {
                if let Some(base) = base {
                    self.index.install_fold(base);
                }
                self.last_fold = Some((std::time::Instant::now(), took));
                match saved {
                    Ok(()) => return,
                    Err(e) => e.to_string(),
                }
            }
            Err(_) => "its thread panicked".to_string(),
        };
        tracing::warn!(dir = %self.dir.display(), error = %failed, "could not save the claim-index snapshot; it is caught up from the act log on open");
    }

    /// Save a derived file after the truth is committed, or say why not: derived files
    /// are caught up or rebuilt from redb on open, so their failure (a full disk) never
    /// fails the act or the open that wrote them.
    fn save_derived(
        &mut self,
        what: &str,
        save: impl FnOnce(&mut Store) -> Result<(), StoreError>,
    ) {
        if let Err(e) = save(self) {
            tracing::warn!(dir = %self.dir.display(), error = %e, "could not save the {what}; it is caught up or rebuilt from redb on open");
        }
    }

    /// Count a committed act; checkpoint the claim-index snapshot when one is due. The
    /// act is committed whatever happens here: a snapshot that cannot be written (a full
    /// disk) is derived state, left behind and caught up from the act log on open, so
    /// the failure is logged and never reported as a failed write.
    fn note_act(&mut self) -> Result<(), StoreError> {
        self.note_acts(1, SAVE_SHARE)
    }

    /// [`Store::note_act`] for `n` acts committed together, checkpointing once the acts
    /// unsaved reach `1 / share` of the store ([`SAVE_SHARE`], or [`BULK_SAVE_SHARE`]
    /// after a bulk batch).
    fn note_acts(&mut self, n: usize, share: usize) -> Result<(), StoreError> {
        self.acts_unsaved = self
            .acts_unsaved
            .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
        if self.snapshot_job.as_ref().is_some_and(|j| j.is_finished()) {
            self.finish_snapshot();
        }
        if self.checkpoint_due(self.acts_unsaved, self.index.len(), share) {
            self.finish_snapshot();
            self.checkpoint();
        }
        Ok(())
    }

    /// Whether `unsaved` acts on a claim index of `size` claims call for a checkpoint:
    /// enough of them ([`SAVE_EVERY`], a `share` of the store), the last snapshot
    /// written and paid for ([`SAVE_PACE`]).
    fn checkpoint_due(&self, unsaved: u32, size: usize, share: usize) -> bool {
        unsaved as usize >= (SAVE_EVERY as usize).max(size / share)
            && self.snapshot_job.as_ref().is_none_or(|j| j.is_finished())
            && self
                .last_fold
                .is_none_or(|(ended, took)| ended.elapsed() >= took * SAVE_PACE)
    }

    /// Vectors written and not yet settled into the vector index's graph (they are
    /// found all the same, by a scan).
    #[doc(hidden)]
    pub fn vectors_unsettled(&self) -> usize {
        self.vindex.as_ref().map_or(0, |ix| ix.fresh())
    }

    /// Vectors an open handed to its background reader that are not read yet (counted in
    /// [`Store::vectors_unsettled`] too): their claims are found by their words meanwhile.
    #[doc(hidden)]
    pub fn vectors_loading(&self) -> usize {
        self.vindex.as_ref().map_or(0, |ix| ix.loading())
    }

    /// Is the vector index in step with redb? `None` when it is (or when there is no model).
    pub fn check_index(&self) -> Result<Option<String>, StoreError> {
        match &self.vindex {
            Some(ix) => self.index_out_of_step(ix),
            None => Ok(None),
        }
    }

    /// Flush what changed since the last save, and close.
    pub fn close(mut self) -> Result<(), StoreError> {
        self.close_index()
    }

    /// On close: a few unsettled vectors are settled (a second at most) so the file is
    /// whole; many are left to the next open. The derived files are saved when they
    /// changed.
    fn close_index(&mut self) -> Result<(), StoreError> {
        self.finish_snapshot();
        let mut graph_dirty = false;
        if let Some(ix) = &self.vindex {
            if ix.fresh() <= CLOSE_SETTLE_MAX {
                ix.settle_all()?;
            }
            graph_dirty = ix.is_dirty();
        }
        if let (true, Some(ix)) = (graph_dirty, &self.vindex) {
            ix.save()?;
        }
        if self.acts_unsaved > 0 {
            self.save_claim_index()?;
        }
        Ok(())
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Err(e) = self.close_index() {
            tracing::warn!(dir = %self.dir.display(), error = %e, "could not save the derived indexes on drop; they will be rebuilt or caught up on open");
        }
    }
}
