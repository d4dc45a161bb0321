//! The vector index: usearch (cosine, vectors held as f16), derived from the f32 vectors
//! kept in redb. It is never the truth: a missing, unreadable or out-of-step file is
//! rebuilt.

use std::path::{Path, PathBuf};

use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use crate::error::StoreError;

pub const INDEX_FILE: &str = "vectors.usearch";

fn err(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::VectorIndex {
        what: what.to_string(),
        detail: e.to_string(),
    }
}

/// How many searches of one index may run at once. usearch keeps one search context per
/// concurrent thread and refuses a search when every context is taken, while the owner
/// reads a store from as many threads as it has requests; searches beyond this wait for a
/// context instead (a search costs well under a millisecond).
pub const SEARCH_CONTEXTS: usize = 16;

/// A usearch index with the bookkeeping the store needs.
///
/// A saved index opens as a view of its file (memory-mapped by usearch: milliseconds,
/// whatever its size, and only the pages a search touches are read); the first change
/// loads it into memory, where it can grow. A dormant brain's first answer therefore
/// never waits for its whole vector file to be read.
pub struct VectorIndex {
    index: Index,
    dims: usize,
    precision: Precision,
    path: PathBuf,
    contexts: Contexts,
    /// The index is a read-only view of `path`.
    viewed: bool,
}

/// A counting semaphore over the index's search contexts.
#[derive(Default)]
struct Contexts {
    busy: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
}

impl Contexts {
    fn with<T>(&self, f: impl FnOnce() -> T) -> T {
        {
            let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
            while *busy >= SEARCH_CONTEXTS {
                busy = self.freed.wait(busy).unwrap_or_else(|p| p.into_inner());
            }
            *busy += 1;
        }
        struct Release<'a>(&'a Contexts);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                let mut busy = self.0.busy.lock().unwrap_or_else(|p| p.into_inner());
                *busy -= 1;
                self.0.freed.notify_one();
            }
        }
        let _release = Release(self);
        f()
    }
}

/// Threads a bulk insert uses: every core the process may run on.
fn build_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(SEARCH_CONTEXTS)
}

/// Room for `capacity` vectors and [`SEARCH_CONTEXTS`] concurrent searches.
fn reserve(index: &Index, capacity: usize) -> Result<(), String> {
    index
        .reserve_capacity_and_threads(capacity, SEARCH_CONTEXTS)
        .map_err(|e| e.to_string())
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("dims", &self.dims)
            .field("size", &self.index.size())
            .finish()
    }
}

/// How the index holds a vector (redb always keeps the f32 vector: this is derived).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// Half precision (the default): half the memory and the file of a large brain, and
    /// every distance faster; a cosine moves by ~1e-3, below what the ranking can tell
    /// apart (`cargo xtask eval --f32` measures both side by side: docs/BENCHMARKS.md).
    #[default]
    F16,
    /// Full precision: the reference the default is measured against.
    F32,
}

impl Precision {
    fn scalar(self) -> ScalarKind {
        match self {
            Precision::F16 => ScalarKind::F16,
            Precision::F32 => ScalarKind::F32,
        }
    }
}
/// Candidates kept while inserting (usearch's default is 128). Half of it builds a
/// 100 000-vector index twice as fast, with the same neighbours found for a query
/// (`cargo xtask bench` reports the index's recall against an exact search).
const EXPANSION_ADD: usize = 64;

fn options(dims: usize, precision: Precision) -> IndexOptions {
    IndexOptions {
        dimensions: dims,
        metric: MetricKind::Cos,
        quantization: precision.scalar(),
        connectivity: 0,
        expansion_add: EXPANSION_ADD,
        expansion_search: 0,
        multi: false,
    }
}

impl VectorIndex {
    /// An empty index for vectors of `dims` dimensions, saved at `dir/vectors.usearch`.
    pub fn empty(dir: &Path, dims: usize, precision: Precision) -> Result<Self, StoreError> {
        let index = Index::new(&options(dims, precision)).map_err(|e| err("create", e))?;
        reserve(&index, 1024).map_err(|e| err("reserve", e))?;
        Ok(Self {
            index,
            dims,
            precision,
            path: dir.join(INDEX_FILE),
            contexts: Contexts::default(),
            viewed: false,
        })
    }

    /// Open the saved file as a view; `Err` says why it cannot be used.
    pub fn load(dir: &Path, dims: usize, precision: Precision) -> Result<Self, String> {
        let path = dir.join(INDEX_FILE);
        if !path.exists() {
            return Err("the index file is missing".into());
        }
        let meta = Index::metadata(&path.to_string_lossy())
            .map_err(|e| format!("the index file is unreadable: {e}"))?;
        if meta.dimensions as usize != dims {
            return Err(format!(
                "the index holds {}-dimensional vectors, the model makes {dims}",
                meta.dimensions
            ));
        }
        if meta.quantization != precision.scalar() {
            return Err(format!(
                "the index holds its vectors as {:?}, the store keeps them as {precision:?}",
                meta.quantization
            ));
        }
        let index = Index::new(&options(dims, precision)).map_err(|e| e.to_string())?;
        // The search contexts reserved before the view are kept by it.
        reserve(&index, 1024).map_err(|e| format!("cannot make room in the index: {e}"))?;
        index
            .view(&path.to_string_lossy())
            .map_err(|e| format!("the index file is unreadable: {e}"))?;
        Ok(Self {
            index,
            dims,
            precision,
            path,
            contexts: Contexts::default(),
            viewed: true,
        })
    }

    /// Whether the index is still a read-only view of its file.
    pub fn is_viewed(&self) -> bool {
        self.viewed
    }

    /// Before a change: a viewed index is loaded into memory from its file.
    fn own(&mut self) -> Result<(), StoreError> {
        if !self.viewed {
            return Ok(());
        }
        let index =
            Index::new(&options(self.dims, self.precision)).map_err(|e| err("create", e))?;
        index
            .load(&self.path.to_string_lossy())
            .map_err(|e| err("load", e))?;
        reserve(&index, (index.size() + 1).max(1024)).map_err(|e| err("reserve", e))?;
        self.index = index;
        self.viewed = false;
        Ok(())
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    pub fn size(&self) -> usize {
        self.index.size()
    }

    pub fn contains(&self, key: u64) -> bool {
        self.index.contains(key)
    }

    pub fn add(&mut self, key: u64, v: &[f32]) -> Result<(), StoreError> {
        self.own()?;
        if v.len() != self.dims {
            return Err(err(
                "add",
                format!("vector has {} dimensions, expected {}", v.len(), self.dims),
            ));
        }
        if self.index.contains(key) {
            self.index.remove(key).map_err(|e| err("remove", e))?;
        }
        if self.index.size() + 1 >= self.index.capacity() {
            let grow = (self.index.capacity() * 2).max(1024);
            reserve(&self.index, grow).map_err(|e| err("reserve", e))?;
        }
        self.index.add(key, v).map_err(|e| err("add", e))
    }

    /// Add many vectors whose keys the index does not hold, on every core: a rebuild or
    /// a repair on open. usearch inserts concurrently, each thread taking one of the
    /// index's thread contexts.
    pub fn add_parallel(&mut self, items: &[(u64, Vec<f32>)]) -> Result<(), StoreError> {
        if items.is_empty() {
            return Ok(());
        }
        self.own()?;
        if let Some((_, v)) = items.iter().find(|(_, v)| v.len() != self.dims) {
            return Err(err(
                "add",
                format!("vector has {} dimensions, expected {}", v.len(), self.dims),
            ));
        }
        let need = self.index.size() + items.len() + 1;
        if need >= self.index.capacity() {
            reserve(&self.index, need.max(self.index.capacity() * 2).max(1024))
                .map_err(|e| err("reserve", e))?;
        }
        let threads = build_threads().min(items.len().div_ceil(256)).max(1);
        let index = &self.index;
        let chunk = items.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let workers: Vec<_> = items
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || -> Result<(), StoreError> {
                        for (key, v) in part {
                            index.add(*key, v).map_err(|e| err("add", e))?;
                        }
                        Ok(())
                    })
                })
                .collect();
            workers.into_iter().try_for_each(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(err("add", "a build thread panicked")))
            })
        })
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
            .filter(|k| !live(*k) && self.index.contains(*k))
            .collect();
        if stale.is_empty() {
            return Ok(0);
        }
        self.own()?;
        let mut n = 0;
        for key in stale {
            if !live(key) && self.index.contains(key) {
                self.index.remove(key).map_err(|e| err("remove", e))?;
                n += 1;
            }
        }
        Ok(n)
    }

    pub fn remove(&mut self, key: u64) -> Result<(), StoreError> {
        if self.index.contains(key) {
            self.own()?;
            self.index.remove(key).map_err(|e| err("remove", e))?;
        }
        Ok(())
    }

    /// Nearest keys by cosine similarity (1 - distance), best first.
    pub fn search(
        &self,
        q: &[f32],
        k: usize,
        keep: &dyn Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        if self.index.size() == 0 || k == 0 {
            return Ok(vec![]);
        }
        let m = self
            .contexts
            .with(|| self.index.filtered_search(q, k, keep))
            .map_err(|e| err("search", e))?;
        Ok(m.keys
            .into_iter()
            .zip(m.distances)
            .map(|(key, d)| (key, 1.0 - d))
            .collect())
    }

    /// Nearest keys with no predicate: usearch's plain search, which skips a callback
    /// per visited node.
    pub fn search_all(&self, q: &[f32], k: usize) -> Result<Vec<(u64, f32)>, StoreError> {
        if self.index.size() == 0 || k == 0 {
            return Ok(vec![]);
        }
        let m = self
            .contexts
            .with(|| self.index.search(q, k))
            .map_err(|e| err("search", e))?;
        Ok(m.keys
            .into_iter()
            .zip(m.distances)
            .map(|(key, d)| (key, 1.0 - d))
            .collect())
    }

    /// Cosine similarity of the stored vector of `key` to `q`; `None` when the key is
    /// not in the index. Exact: used to score candidates the nearest-neighbour search
    /// did not return.
    pub fn similarity(&self, key: u64, q: &[f32]) -> Option<f32> {
        if !self.index.contains(key) || q.len() != self.dims {
            return None;
        }
        let mut buf = vec![0f32; self.dims];
        self.index.get(key, &mut buf).ok().filter(|n| *n > 0)?;
        Some(cosine(&buf, q))
    }

    /// The stored vector of `key`, if the index holds it.
    pub fn vector(&self, key: u64) -> Option<Vec<f32>> {
        if !self.index.contains(key) {
            return None;
        }
        let mut buf = vec![0f32; self.dims];
        self.index.get(key, &mut buf).ok().filter(|n| *n > 0)?;
        Some(buf)
    }

    /// Write the file atomically: a temp file, then a rename. A view is its file already.
    pub fn save(&self) -> Result<(), StoreError> {
        if self.viewed {
            return Ok(());
        }
        let tmp = self.path.with_extension("usearch.tmp");
        if let Err(e) = self.index.save(&tmp.to_string_lossy()) {
            // Leave no half-written file taking the room a full disk lacks.
            let _ = std::fs::remove_file(&tmp);
            return Err(err("save", e));
        }
        std::fs::rename(&tmp, &self.path).map_err(|e| StoreError::Io {
            path: self.path.display().to_string(),
            detail: e.to_string(),
        })
    }
}

/// Cosine similarity; 0 when either vector is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}
