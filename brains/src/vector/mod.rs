//! The vector index, derived from the f32 vectors kept in redb; never the truth: a
//! missing, unreadable or out-of-step file is rebuilt or repaired.
//!
//! Two parts, searched together: the **graph** (`graph.rs`, usearch's HNSW over
//! eight-bit vectors by default ([`Precision`]), saved in `vectors.usearch`), and the
//! **fresh** vectors (`fresh.rs`), written but not yet in the graph, searched by a scan
//! (exactly; a large backlog in part, by cells: `cells.rs`).
//! A write only adds to the fresh set, so a memorize never waits for a graph insert and
//! a claim is found by its vector as soon as its write returns; a settler thread moves
//! fresh vectors into the graph in the background, one batch at a time, and exits when
//! there are none left. Past [`FRESH_MAX`] fresh vectors an eight-bit index keeps the
//! rest lean (their eight bits alone, `fresh.rs`) and the writer still never waits: a
//! million-claim import runs at the pace of its writes and the graph catches up after,
//! on every core. An index of finer precision has the writer settle the excess itself.
//! A checkpoint or
//! a close saves the graph as it stands; what the file lacks is handed to the settler
//! again, from redb, on the next open.

mod arith;
mod backfill;
mod bounds;
mod cells;
mod fresh;
mod graph;
mod loading;
mod locks;
mod precision;
mod settler;

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Instant;

use crate::error::StoreError;
use fresh::Fresh;
use graph::{err, Contexts, Graph};
use locks::{lock, read, write};
use settler::{build_threads, relink, Shared};

pub use bounds::BOUNDS_FILE;
pub use graph::{key_hash, INDEX_FILE, SEARCH_CONTEXTS, STAMP_FILE};
pub use loading::ReadVectors;
pub use precision::Precision;

/// Fresh vectors kept in full precision. Beyond this an eight-bit index keeps them lean
/// (a quarter of the memory, scored by their eight bits, as its graph scores them; a
/// search's scan grows with them until the settler catches up); any other index has the
/// writer settle the excess itself before it returns, so its scan stays bounded (~4 ms
/// at 256 dimensions).
const FRESH_MAX: usize = 131_072;

/// A store's vector index: the graph and the fresh vectors.
pub struct VectorIndex {
    shared: Arc<Shared>,
    dims: usize,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("dims", &self.dims)
            .field("graph", &read(&self.shared.graph).size())
            .field("fresh", &read(&self.shared.fresh).len())
            .field("loading", &lock(&self.shared.pending).len())
            .finish()
    }
}

impl VectorIndex {
    fn of(graph: Graph, dims: usize, precision: Precision) -> VectorIndex {
        Self::bounded(graph, dims, precision, FRESH_MAX)
    }

    /// [`VectorIndex::of`] keeping `full_max` fresh rows in full precision.
    fn bounded(graph: Graph, dims: usize, precision: Precision, full_max: usize) -> VectorIndex {
        let saved = if graph.is_viewed() { graph.size() } else { 0 };
        VectorIndex {
            shared: Arc::new(Shared {
                graph: RwLock::new(graph),
                fresh: RwLock::new(Fresh::new(dims)),
                full_max,
                lean: precision.rescores(),
                contexts: Contexts::default(),
                settling: Mutex::new(()),
                running: Mutex::new(false),
                idle: Condvar::new(),
                stop: AtomicBool::new(false),
                dirty: AtomicBool::new(false),
                saved_size: AtomicUsize::new(saved),
                held_until: Mutex::new(None),
                resume: Condvar::new(),
                pending: Mutex::new(HashSet::new()),
                loader: Mutex::new(None),
                backfiller: Mutex::new(None),
            }),
            dims,
        }
    }

    /// An empty index for vectors of `dims` dimensions, saved at `dir/vectors.usearch`.
    pub fn empty(dir: &Path, dims: usize, precision: Precision) -> Result<Self, StoreError> {
        Ok(Self::of(
            Graph::empty(dir, dims, precision)?,
            dims,
            precision,
        ))
    }

    /// Open the saved file (as a view until the first change); `Err` says why it cannot
    /// be used.
    pub fn load(dir: &Path, dims: usize, precision: Precision) -> Result<Self, String> {
        Ok(Self::of(
            Graph::load(dir, dims, precision)?,
            dims,
            precision,
        ))
    }

    /// Whether the graph holds exactly the `count` keys whose [`key_hash`]es sum to
    /// `digest`, and nothing is fresh: what a matching stamp says of a file just opened.
    pub fn holds_exactly(&self, digest: u64, count: usize) -> bool {
        let g = read(&self.shared.graph);
        g.digest() == Some(digest)
            && g.size() == count
            && read(&self.shared.fresh).is_empty()
            && lock(&self.shared.pending).is_empty()
    }

    /// The digest of the keys the graph holds, learnt by checking each (a repair).
    /// A view whose every key was found live is stamped at once, so the next open of
    /// the same file need not check again.
    pub fn know_digest(&self, digest: u64) {
        let mut g = write(&self.shared.graph);
        g.know_digest(digest);
        if g.is_viewed()
            && read(&self.shared.fresh).is_empty()
            && lock(&self.shared.pending).is_empty()
        {
            g.write_stamp();
        }
    }

    /// Whether the graph is still a read-only view of its file.
    pub fn is_viewed(&self) -> bool {
        read(&self.shared.graph).is_viewed()
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Vectors held, settled or fresh. Counted between two settling batches: the graph
    /// takes a batch's vectors on several threads under a shared lock, and counts one
    /// before it can say it holds it, so a count taken mid-batch could be one over.
    pub fn size(&self) -> usize {
        let _between = lock(&self.shared.settling);
        let g = read(&self.shared.graph);
        let f = read(&self.shared.fresh);
        // A dropped vector the graph still holds is not counted (nor, were one ever
        // caught moving, is it counted twice). One still being read is in neither.
        let moving = f.keys().iter().filter(|k| g.contains(**k)).count();
        let dropped = f.dropped().iter().filter(|k| g.contains(**k)).count();
        g.size() + f.len() + lock(&self.shared.pending).len() - moving - dropped
    }

    /// About how many vectors are held (a moving one may count twice): cheap, for
    /// spacing checkpoints.
    pub fn approx_size(&self) -> usize {
        read(&self.shared.graph).size() + read(&self.shared.fresh).len()
    }

    /// Vectors written and not yet in the graph, the ones still being read included.
    pub fn fresh(&self) -> usize {
        let f = read(&self.shared.fresh);
        f.len() + lock(&self.shared.pending).len()
    }

    /// Part a large fresh backlog into cells now, if it is due (`cells.rs`), on every
    /// core, whether or not the settler is held: the settler does so before its next
    /// batch; this is for a bulk write's end (an import holds the settler a second
    /// after its last batch, and its seeks would read the whole backlog meanwhile) and
    /// for a bench measuring the cells alone. Whether cells were made.
    pub fn part_fresh(&self) -> bool {
        self.shared.make_cells()
    }

    /// Fresh vectors parted into cells (`cells.rs`): 0 until a large backlog is.
    pub fn fresh_in_cells(&self) -> usize {
        read(&self.shared.fresh).in_cells()
    }

    pub fn contains(&self, key: u64) -> bool {
        // Locks nest graph first, then fresh, everywhere.
        let g = read(&self.shared.graph);
        let f = read(&self.shared.fresh);
        !f.is_dropped(key)
            && (f.contains(key) || g.contains(key) || lock(&self.shared.pending).contains(&key))
    }

    /// Add a vector: fresh at once, settled into the graph in the background.
    pub fn add(&mut self, key: u64, v: &[f32]) -> Result<(), StoreError> {
        self.add_many(&[(key, v)])
    }

    /// Add vectors written together (a batch): fresh at once, settled in the background
    /// (past [`FRESH_MAX`], lean or settled by the writer: see there).
    pub fn add_many<V: AsRef<[f32]>>(&mut self, items: &[(u64, V)]) -> Result<(), StoreError> {
        if let Some((_, v)) = items.iter().find(|(_, v)| v.as_ref().len() != self.dims) {
            return Err(err(
                "add",
                format!(
                    "vector has {} dimensions, expected {}",
                    v.as_ref().len(),
                    self.dims
                ),
            ));
        }
        if items.is_empty() {
            return Ok(());
        }
        let over = {
            let mut f = write(&self.shared.fresh);
            for (k, v) in items {
                self.shared.push_fresh(&mut f, *k, v.as_ref(), None);
            }
            if self.shared.lean {
                0
            } else {
                f.len().saturating_sub(self.shared.full_max)
            }
        };
        if over > 0 {
            self.shared.settle(over, build_threads())?;
        }
        self.wake();
        Ok(())
    }

    /// Keep the settler from starting another batch for `d` from now: a bulk write
    /// (an import's batches) has the cores to itself while it goes on, and the graph
    /// catches up once the writes stop. Meanwhile the vectors stay fresh (found at once,
    /// by a scan; past [`FRESH_MAX`] lean, or settled by the writer at finer precision),
    /// and an explicit settle or a close ignores the hold.
    pub fn hold_settling(&self, d: std::time::Duration) {
        *lock(&self.shared.held_until) = Some(Instant::now() + d);
        self.shared.resume.notify_all();
    }

    /// Start the settler unless it runs.
    fn wake(&self) {
        self.shared.wake();
    }

    /// Build the graph from `chunks` of about `total` vectors in all, straight into it
    /// on every core: a rebuild on open, before anything is searched. The caller's
    /// iterator reads the next chunk while the cores insert (a bounded queue between
    /// them), so no core waits on the reads, on a chunk's slowest thread or on the
    /// settler; room for `total` is made once. What the threads stranded is linked
    /// again at the end ([`Graph::strays`]).
    pub fn build_from<I>(&mut self, total: usize, chunks: I) -> Result<(), StoreError>
    where
        I: Iterator<Item = Result<Vec<(u64, Vec<f32>)>, StoreError>>,
    {
        let threads = build_threads();
        write(&self.shared.graph).room(total)?;
        self.shared.dirty.store(true, Ordering::Release);
        let g = read(&self.shared.graph);
        let was_empty = g.size() == 0;
        let (queue, taken) = std::sync::mpsc::sync_channel::<Vec<(u64, Vec<f32>)>>(threads * 2);
        let taken = Mutex::new(taken);
        let added = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let (g, taken, contexts) = (&g, &taken, &self.shared.contexts);
                    s.spawn(move || -> Result<Vec<u64>, StoreError> {
                        let mut added = Vec::new();
                        loop {
                            let next = taken.lock().unwrap_or_else(|p| p.into_inner()).recv();
                            // Closed: every chunk was taken.
                            let Ok(chunk) = next else { return Ok(added) };
                            for (key, v) in &chunk {
                                if !g.contains(*key) {
                                    contexts.with(|| g.add(*key, v, None))?;
                                    added.push(*key);
                                }
                            }
                        }
                    })
                })
                .collect();
            let mut read = Ok(());
            for chunk in chunks {
                match chunk {
                    // A send fails only when every worker has stopped on an error.
                    Ok(chunk) => {
                        if queue.send(chunk).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        read = Err(e);
                        break;
                    }
                }
            }
            drop(queue);
            let mut added = Vec::new();
            for w in workers {
                let keys = w
                    .join()
                    .unwrap_or_else(|_| Err(err("add", "a building thread panicked")));
                // Every worker is joined before an error is answered.
                match (keys, &read) {
                    (Ok(keys), Ok(())) => added.extend(keys),
                    (Err(e), Ok(())) => read = Err(e),
                    (_, Err(_)) => {}
                }
            }
            read.map(|()| added)
        })?;
        let strays = g.strays(&added, was_empty, &self.shared.contexts);
        drop(g);
        relink(&mut write(&self.shared.graph), &strays)
    }

    /// Move every fresh vector into the graph now, on every core (the ones still being
    /// read once they are).
    pub fn settle_all(&self) -> Result<(), StoreError> {
        self.wait_loaded();
        while self.shared.settle(usize::MAX, build_threads())? > 0 {}
        Ok(())
    }

    /// Remove every key below `below` that the index holds and `live` does not name: the
    /// vectors a store let go after the file was last saved. Keys are never reused, so
    /// the range is every key ever given out.
    pub fn remove_stale(
        &mut self,
        below: u64,
        live: &dyn Fn(u64) -> bool,
    ) -> Result<u64, StoreError> {
        let stale: Vec<u64> = (1..below)
            .filter(|k| !live(*k) && self.contains(*k))
            .collect();
        for k in &stale {
            self.remove(*k)?;
        }
        Ok(stale.len() as u64)
    }

    pub fn remove(&mut self, key: u64) -> Result<(), StoreError> {
        {
            let mut f = write(&self.shared.fresh);
            // Not read yet: it never will be.
            if lock(&self.shared.pending).remove(&key) {
                return Ok(());
            }
            if f.remove(key) {
                // Were it moving, the settler takes it out of the graph again.
                return Ok(());
            }
        }
        if write(&self.shared.graph).remove(key)? {
            self.shared.dirty.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Whether the graph changed since its file was last written.
    pub fn is_dirty(&self) -> bool {
        self.shared.dirty.load(Ordering::Acquire)
    }

    /// Nearest keys by cosine similarity, best first: the graph's nearest and an exact
    /// scan of the fresh vectors, merged.
    pub fn search(
        &self,
        q: &[f32],
        k: usize,
        keep: &Keep<'_>,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        self.search_both(q, k, keep, |g| {
            self.shared.contexts.with(|| g.filtered_search(q, k, keep))
        })
    }

    /// [`VectorIndex::search`] with no predicate: usearch's plain search, which skips a
    /// callback per visited node.
    pub fn search_all(&self, q: &[f32], k: usize) -> Result<Vec<(u64, f32)>, StoreError> {
        self.search_both(q, k, &|_| true, |g| {
            self.shared.contexts.with(|| g.search(q, k))
        })
    }

    /// The fresh scan first, then the graph: a vector leaves the fresh set only once the
    /// graph holds it whole, so whichever moment it moves, one of the two finds it. The
    /// keys let go while moving are read before the graph is searched, so a removal that
    /// returned before the search began is never seen.
    fn search_both(
        &self,
        q: &[f32],
        k: usize,
        keep: &Keep<'_>,
        graph: impl FnOnce(&Graph) -> Result<Vec<(u64, f32)>, StoreError>,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        let (fresh, dropped) = {
            let f = read(&self.shared.fresh);
            let dropped: Vec<u64> = f.dropped().iter().copied().collect();
            (f.scan(q, k, keep), dropped)
        };
        let mut settled = graph(&read(&self.shared.graph))?;
        if !dropped.is_empty() {
            settled.retain(|(key, _)| !dropped.contains(key));
        }
        Ok(merge(settled, fresh, k))
    }

    /// Cosine similarity of the stored vector of `key` to `q`; `None` when the key is
    /// not held. Exact for a fresh vector kept in full; from the eight bits of a lean one
    /// or the graph's copy once settled.
    pub fn similarity(&self, key: u64, q: &[f32]) -> Option<f32> {
        if q.len() != self.dims {
            return None;
        }
        let f = read(&self.shared.fresh);
        if f.is_dropped(key) {
            return None;
        }
        if let Some(v) = f.get(key) {
            return Some(arith::cosine(&v, q));
        }
        drop(f);
        read(&self.shared.graph)
            .get(key)
            .map(|v| arith::cosine(&v, q))
    }

    /// Bounds on the cosine with `q` of each of `keys`' stored vectors, from what the
    /// index holds in memory: a fresh row (exact when kept in full), or an eight-bit
    /// row with its rounding's bound (`bounds.rs`). `None` for a key only its stored
    /// vector can tell of: not held, still being read, or a row of a graph file written
    /// before rows carried bounds.
    pub fn cosine_bounds(&self, keys: &[u64], q: &[f32]) -> Vec<Option<(f32, f32)>> {
        if q.len() != self.dims {
            return vec![None; keys.len()];
        }
        let qn = arith::norm(q);
        let mut out: Vec<Option<(f32, f32)>> = {
            let f = read(&self.shared.fresh);
            keys.iter().map(|k| f.cosine_bounds(*k, q, qn)).collect()
        };
        let rest: Vec<usize> = (0..keys.len()).filter(|i| out[*i].is_none()).collect();
        if !rest.is_empty() {
            let of: Vec<u64> = rest.iter().map(|i| keys[*i]).collect();
            let settled = read(&self.shared.graph).cosine_bounds(&of, q, qn);
            for (i, b) in rest.into_iter().zip(settled) {
                out[i] = b;
            }
        }
        out
    }

    /// The keys the graph links `key` to (its nearest as the graph placed it, by its
    /// own metric): near neighbours without a search, for a pass over every vector.
    /// `None` while `key` is not settled into the graph (fresh, or still being read):
    /// search for it instead.
    pub fn linked(&self, key: u64) -> Option<Vec<u64>> {
        let f = read(&self.shared.fresh);
        if f.is_dropped(key) || f.get(key).is_some() {
            return None;
        }
        drop(f);
        let g = read(&self.shared.graph);
        g.contains(key).then(|| g.linked(key))
    }

    /// The stored vector of `key`, if the index holds it.
    pub fn vector(&self, key: u64) -> Option<Vec<f32>> {
        let f = read(&self.shared.fresh);
        if f.is_dropped(key) {
            return None;
        }
        if let Some(v) = f.get(key) {
            return Some(v.into_owned());
        }
        drop(f);
        read(&self.shared.graph).get(key)
    }

    /// Write the graph's file as it stands (fresh vectors not in it are added from redb
    /// on the next open). The settler waits for the write; searches do not.
    pub fn save(&self) -> Result<(), StoreError> {
        self.shared.save()
    }
}

/// The best `k` of two lists, a key once (a moving vector may be in both).
fn merge(mut a: Vec<(u64, f32)>, b: Vec<(u64, f32)>, k: usize) -> Vec<(u64, f32)> {
    if b.is_empty() {
        return a;
    }
    for (key, sim) in b {
        match a.iter_mut().find(|p| p.0 == key) {
            Some(p) => p.1 = p.1.max(sim),
            None => a.push((key, sim)),
        }
    }
    a.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    a.truncate(k);
    a
}

impl Drop for VectorIndex {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        // The reader and the bounds' worker stop between two chunks.
        self.wait_loaded();
        self.wait_backfilled();
        {
            // Under the hold's lock: a settler between its stop check and its wait
            // cannot miss this.
            let _held = lock(&self.shared.held_until);
            self.shared.resume.notify_all();
        }
        let mut running = lock(&self.shared.running);
        while *running {
            running = self
                .shared
                .idle
                .wait(running)
                .unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Which keys a search may return (a scope or filter over the claims they stand for);
/// shared by the threads a large search runs on.
pub type Keep<'a> = dyn Fn(u64) -> bool + Sync + 'a;

/// Cosine similarity; 0 when either vector is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    arith::cosine(a, b)
}

#[cfg(test)]
mod tests;
