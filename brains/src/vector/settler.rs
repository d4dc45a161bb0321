//! The settler: what the store's thread and the settler thread share ([`Shared`]), and
//! the batches it moves from the fresh set into the graph, in the background.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::Instant;

use super::bounds::Stand;
use super::cells::{Centroids, ASSIGN_STEP};
use super::fresh::{Fresh, Moving};
use super::graph::{err, Contexts, Graph, SEARCH_CONTEXTS};
use super::locks::{lock, read, write};
use crate::error::StoreError;

/// Vectors the graph grows by, at least, between two checkpoints of its file.
const CHECKPOINT_EVERY: usize = 256;
/// Vectors the settler moves into the graph at a time.
const SETTLE_BATCH: usize = 256;

/// Threads a bulk insert uses: every core the process may run on.
pub(super) fn build_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(SEARCH_CONTEXTS)
}

/// Link again the vectors an insert stranded ([`Graph::strays`]). One still stranded
/// after is told in the log, never an error: its claim is still found by the lexical
/// side, and by its vector once a rebuild links it.
pub(super) fn relink(g: &mut Graph, strays: &[u64]) -> Result<(), StoreError> {
    if strays.is_empty() {
        return Ok(());
    }
    let linked = g.relink(strays)?;
    if linked < strays.len() {
        tracing::warn!(
            strays = strays.len(),
            linked,
            "some vectors no search reaches are still stranded after linking them again"
        );
    } else {
        tracing::debug!(strays = strays.len(), "linked stranded vectors again");
    }
    Ok(())
}

/// What the store's thread and the settler share.
pub(super) struct Shared {
    /// When both are held, `graph` is taken first.
    pub(super) graph: RwLock<Graph>,
    pub(super) fresh: RwLock<Fresh>,
    /// Rows the fresh set keeps in full precision ([`FRESH_MAX`](super::FRESH_MAX)).
    pub(super) full_max: usize,
    /// Whether fresh rows past `full_max` are kept lean (the graph's precision rescores)
    /// rather than settled by the writer.
    pub(super) lean: bool,
    pub(super) contexts: Contexts,
    /// Held while a batch moves from fresh to the graph: one mover at a time.
    pub(super) settling: Mutex<()>,
    /// Whether a settler thread is running.
    pub(super) running: Mutex<bool>,
    pub(super) idle: Condvar,
    pub(super) stop: AtomicBool,
    /// The graph changed since its file was last written.
    pub(super) dirty: AtomicBool,
    /// The graph's size when its file was last written.
    pub(super) saved_size: AtomicUsize,
    /// Before this moment the settler starts no batch: a bulk write in progress keeps
    /// the cores (see [`VectorIndex::hold_settling`](super::VectorIndex::hold_settling)).
    pub(super) held_until: Mutex<Option<Instant>>,
    /// Wakes a settler waiting out a hold (a stop, or the hold moved).
    pub(super) resume: Condvar,
    /// Keys held whose vectors are still being read from redb (`loading.rs`): counted
    /// and contained, not yet searched. Taken after `fresh` when both are held.
    pub(super) pending: Mutex<HashSet<u64>>,
    /// The thread reading them, while it runs.
    pub(super) loader: Mutex<Option<JoinHandle<()>>>,
    /// The thread working out an upgraded graph's bounds, while it runs (`backfill.rs`).
    pub(super) backfiller: Mutex<Option<JoinHandle<()>>>,
}

impl Shared {
    /// Start the settler unless it runs.
    pub(super) fn wake(self: &Arc<Self>) {
        let mut running = lock(&self.running);
        if *running || self.stop.load(Ordering::Acquire) {
            return;
        }
        let shared = self.clone();
        let spawned = std::thread::Builder::new()
            .name("vector-settler".into())
            .spawn(move || shared.run());
        match spawned {
            Ok(_) => *running = true,
            // No thread to be had: the vectors stay fresh (still found) until close.
            Err(e) => tracing::warn!(error = %e, "could not start the vector settler"),
        }
    }

    /// Move up to `n` fresh vectors into the graph, inserted on `threads` threads.
    /// Returns how many moved. A vector removed while it moved is taken out again.
    pub(super) fn settle(&self, n: usize, threads: usize) -> Result<usize, StoreError> {
        let _one = lock(&self.settling);
        let batch = write(&self.fresh).take_batch(n);
        if batch.is_empty() {
            return Ok(0);
        }
        let keys: Vec<u64> = batch.iter().map(|(k, _, _)| *k).collect();
        self.dirty.store(true, Ordering::Release);
        let added = self.insert(&batch, &keys, threads);
        let gone = write(&self.fresh).settled(&keys);
        if added.is_err() {
            // Back to fresh as they were: nothing is lost, the next settle retries.
            let mut f = write(&self.fresh);
            f.forget_dropped(&gone);
            for (k, v, stand) in batch.iter().filter(|(k, _, _)| !gone.contains(k)) {
                self.push_fresh(&mut f, *k, v, *stand);
            }
            drop(f);
            let mut g = write(&self.graph);
            for k in &keys {
                g.remove(*k)?;
            }
            return added.map(|_| 0);
        }
        if !gone.is_empty() {
            let mut g = write(&self.graph);
            for k in &gone {
                g.remove(*k)?;
            }
        }
        write(&self.fresh).forget_dropped(&gone);
        Ok(batch.len())
    }

    /// Add a vector to the fresh set: in full precision while it holds fewer than
    /// `full_max` so, lean past that when the index keeps lean rows (`stand`: what a
    /// lean row's eight bits handed back stand for; such a row stays lean).
    pub(super) fn push_fresh(&self, f: &mut Fresh, key: u64, v: &[f32], stand: Option<Stand>) {
        let lean = self.lean && f.full() >= self.full_max;
        f.push_as(key, v, lean, stand);
    }

    /// Insert a batch (its `keys` in order) into the graph on `threads` threads, then
    /// link again what the threads stranded ([`Graph::strays`]).
    pub(super) fn insert(
        &self,
        batch: &[Moving],
        keys: &[u64],
        threads: usize,
    ) -> Result<(), StoreError> {
        let was_empty = {
            let mut g = write(&self.graph);
            g.room(batch.len())?;
            let was_empty = g.size() == 0;
            // An empty graph takes its first vector alone: usearch counts a first node
            // before it stores its vector, and a search beside it then reads a null
            // vector (a segfault, seen under load in the owner's tests). Every later
            // node's vector is stored before any link reaches it.
            if let (true, Some((key, v, stand))) = (was_empty, batch.first()) {
                g.add(*key, v, *stand)?;
            }
            was_empty
        };
        let g = read(&self.graph);
        let part = batch.len().div_ceil(threads.max(1));
        let inserted = std::thread::scope(|s| {
            let workers: Vec<_> = batch
                .chunks(part)
                .map(|chunk| {
                    let (g, contexts) = (&g, &self.contexts);
                    s.spawn(move || -> Result<(), StoreError> {
                        for (key, v, stand) in chunk {
                            if !g.contains(*key) {
                                contexts.with(|| g.add(*key, v, *stand))?;
                            }
                        }
                        Ok(())
                    })
                })
                .collect();
            workers.into_iter().try_for_each(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(err("add", "a settling thread panicked")))
            })
        });
        inserted?;
        let strays = g.strays(keys, was_empty, &self.contexts);
        drop(g);
        relink(&mut write(&self.graph), &strays)
    }

    /// Write the graph's file as it stands. The settler waits; searches do not (a save
    /// only reads the graph).
    pub(super) fn save(&self) -> Result<(), StoreError> {
        let _one = lock(&self.settling);
        self.dirty.store(false, Ordering::Release);
        let g = read(&self.graph);
        let saved = g.save();
        match &saved {
            Ok(()) => self.saved_size.store(g.size(), Ordering::Release),
            Err(_) => self.dirty.store(true, Ordering::Release),
        }
        saved
    }

    /// Whether the graph grew enough since its file was written to write it again:
    /// by [`CHECKPOINT_EVERY`] vectors or an eighth of its size, whichever is more, so a
    /// checkpoint's cost per vector stays constant as the index grows.
    pub(super) fn checkpoint_due(&self) -> bool {
        let size = read(&self.graph).size();
        let grown = size.saturating_sub(self.saved_size.load(Ordering::Acquire));
        self.dirty.load(Ordering::Acquire) && grown >= CHECKPOINT_EVERY.max(size / 8)
    }

    /// Wait while settling is held; false when the index is being dropped.
    pub(super) fn wait_out_hold(&self) -> bool {
        let mut held = self.held_until.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if self.stop.load(Ordering::Acquire) {
                return false;
            }
            match *held {
                Some(until) if until > Instant::now() => {
                    let wait = until.saturating_duration_since(Instant::now());
                    held = self
                        .resume
                        .wait_timeout(held, wait)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
                _ => return true,
            }
        }
    }

    /// Part the fresh set into cells when it is due ([`Cells::due`]), on every core the
    /// process may use (at the calling thread's priority), the set read-locked a step at a
    /// time (a write waits for one step at most, a search for none). Whether cells were
    /// made; one making at a time (a second call meanwhile finds them not due).
    pub(super) fn make_cells(&self) -> bool {
        if !read(&self.fresh).cells_due() {
            return false;
        }
        let (sample, cells) = {
            let mut f = write(&self.fresh);
            if !f.cells_due() {
                return false;
            }
            f.begin_cells()
        };
        let t = std::time::Instant::now();
        let made = Centroids::of(&sample, cells).and_then(|c| {
            let c = Arc::new(c);
            let assigned = self.assign_all(&c)?;
            Some((c, assigned))
        });
        let mut f = write(&self.fresh);
        let Some((centroids, assigned)) = made else {
            f.abandon_cells();
            return false;
        };
        f.install_cells(centroids.clone(), &assigned);
        tracing::debug!(
            rows = f.len(),
            in_cells = f.in_cells(),
            cells = centroids.len(),
            ms = t.elapsed().as_millis() as u64,
            "the fresh vectors were parted into cells"
        );
        true
    }

    /// Each fresh row's cell among `centroids`, by key, the steps dealt round the
    /// threads; `None` when the index is being dropped.
    fn assign_all(&self, centroids: &Centroids) -> Option<Vec<(u64, u16)>> {
        let threads = build_threads();
        let parts: Vec<Option<Vec<(u64, u16)>>> = std::thread::scope(|s| {
            let run = |first: usize| {
                let mut out = Vec::new();
                let mut start = first * ASSIGN_STEP;
                while let Some(step) = read(&self.fresh).assign_cells(centroids, start) {
                    if self.stop.load(Ordering::Acquire) {
                        return None;
                    }
                    out.extend(step);
                    start += threads * ASSIGN_STEP;
                }
                Some(out)
            };
            let others: Vec<_> = (1..threads).map(|t| s.spawn(move || run(t))).collect();
            let mut parts = vec![run(0)];
            parts.extend(others.into_iter().map(|h| h.join().ok().flatten()));
            parts
        });
        parts.into_iter().try_fold(Vec::new(), |mut all, p| {
            all.extend(p?);
            Some(all)
        })
    }

    /// The settler: batches until nothing is fresh (or the index is dropped). One thread
    /// while the fresh set is within [`FRESH_MAX`](super::FRESH_MAX); every core for a
    /// backlog beyond it.
    pub(super) fn run(self: Arc<Self>) {
        // The inserts it spawns start at its priority too.
        crate::background::yield_to_callers();
        // A backlog past the bound being caught up on: since when, and how many moved.
        let mut backlog: Option<(Instant, usize)> = None;
        loop {
            if self.stop.load(Ordering::Acquire) || !self.wait_out_hold() {
                break;
            }
            // A large backlog is parted into cells first: until the graph has it, a
            // search reads a tenth of it (`cells.rs`).
            self.make_cells();
            let fresh = read(&self.fresh).len();
            let threads = if fresh > self.full_max {
                if backlog.is_none() {
                    tracing::info!(
                        vectors = fresh,
                        "the vector graph is catching up on a backlog"
                    );
                    backlog = Some((Instant::now(), 0));
                }
                build_threads()
            } else {
                1
            };
            let moved = self.settle(SETTLE_BATCH * threads, threads);
            if let (Some((_, n)), Ok(m)) = (backlog.as_mut(), &moved) {
                *n += m;
            }
            match moved {
                Ok(0) => {
                    if let Some((since, n)) = backlog.take() {
                        tracing::info!(
                            vectors = n,
                            secs = since.elapsed().as_secs_f64(),
                            "the vector graph caught up on its backlog"
                        );
                    }
                    // Settled: the file is checkpointed here, off the write path.
                    if self.checkpoint_due() {
                        if let Err(e) = self.save() {
                            tracing::warn!(error = %e, "could not save the settled vector index; it is repaired from redb on open");
                        }
                    }
                    let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
                    // Checked again under the flag: a write since spawns no second thread.
                    if read(&self.fresh).is_empty() || self.stop.load(Ordering::Acquire) {
                        *running = false;
                        self.idle.notify_all();
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    // The fresh vectors stay searchable; the next write or close retries.
                    tracing::warn!(error = %e, "could not settle fresh vectors into the vector index");
                    break;
                }
            }
        }
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        *running = false;
        self.idle.notify_all();
    }
}
