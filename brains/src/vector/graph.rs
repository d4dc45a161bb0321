//! The graph: usearch's HNSW index over the vectors that have settled, with its file.
//! A saved file opens as a view (memory-mapped by usearch: milliseconds whatever its
//! size, only the pages a search touches read); the first change loads it into memory.

use std::path::{Path, PathBuf};

use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use super::{err, Precision, INDEX_FILE};
use crate::error::StoreError;

/// How many usearch calls (searches, and the settler's inserts) may run at once. usearch
/// keeps one context per concurrent thread and refuses a call when every context is
/// taken, while the owner reads a store from as many threads as it has requests; calls
/// beyond this wait for a context instead (a search costs well under a millisecond).
pub const SEARCH_CONTEXTS: usize = 16;

/// Candidates kept while inserting (usearch's default is 128): half of it builds an
/// index twice as fast for nearly the same neighbours (`cargo xtask bench --hnsw`).
const EXPANSION_ADD: usize = 64;

impl Precision {
    fn scalar(self) -> ScalarKind {
        match self {
            Precision::F16 => ScalarKind::F16,
            Precision::F32 => ScalarKind::F32,
        }
    }
}

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

/// Room for `capacity` vectors and [`SEARCH_CONTEXTS`] concurrent calls.
fn reserve(index: &Index, capacity: usize) -> Result<(), String> {
    index
        .reserve_capacity_and_threads(capacity, SEARCH_CONTEXTS)
        .map_err(|e| e.to_string())
}

/// A counting semaphore over the index's thread contexts.
#[derive(Default)]
pub(super) struct Contexts {
    busy: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
}

impl Contexts {
    pub(super) fn with<T>(&self, f: impl FnOnce() -> T) -> T {
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

pub(super) struct Graph {
    index: Index,
    dims: usize,
    precision: Precision,
    path: PathBuf,
    /// The index is a read-only view of `path`.
    viewed: bool,
}

impl Graph {
    pub(super) fn empty(
        dir: &Path,
        dims: usize,
        precision: Precision,
    ) -> Result<Graph, StoreError> {
        let index = Index::new(&options(dims, precision)).map_err(|e| err("create", e))?;
        reserve(&index, 1024).map_err(|e| err("reserve", e))?;
        Ok(Graph {
            index,
            dims,
            precision,
            path: dir.join(INDEX_FILE),
            viewed: false,
        })
    }

    /// View the saved file; `Err` says why it cannot be used.
    pub(super) fn load(dir: &Path, dims: usize, precision: Precision) -> Result<Graph, String> {
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
        // The thread contexts reserved before the view are kept by it.
        reserve(&index, 1024).map_err(|e| format!("cannot make room in the index: {e}"))?;
        index
            .view(&path.to_string_lossy())
            .map_err(|e| format!("the index file is unreadable: {e}"))?;
        Ok(Graph {
            index,
            dims,
            precision,
            path,
            viewed: true,
        })
    }

    pub(super) fn is_viewed(&self) -> bool {
        self.viewed
    }

    /// Make room for `extra` more vectors; a view is first loaded into memory.
    pub(super) fn room(&mut self, extra: usize) -> Result<(), StoreError> {
        if self.viewed {
            let index =
                Index::new(&options(self.dims, self.precision)).map_err(|e| err("create", e))?;
            index
                .load(&self.path.to_string_lossy())
                .map_err(|e| err("load", e))?;
            reserve(&index, (index.size() + extra + 1).max(1024)).map_err(|e| err("reserve", e))?;
            self.index = index;
            self.viewed = false;
        }
        let need = self.index.size() + extra + 1;
        if need >= self.index.capacity() {
            let grow = need.max(self.index.capacity() * 2).max(1024);
            reserve(&self.index, grow).map_err(|e| err("reserve", e))?;
        }
        Ok(())
    }

    /// Insert a vector; [`Graph::room`] made space for it. Safe beside other inserts and
    /// searches (usearch locks what it touches; each call holds a thread context).
    pub(super) fn add(&self, key: u64, v: &[f32]) -> Result<(), StoreError> {
        if v.len() != self.dims {
            return Err(err(
                "add",
                format!("vector has {} dimensions, expected {}", v.len(), self.dims),
            ));
        }
        self.index.add(key, v).map_err(|e| err("add", e))
    }

    pub(super) fn remove(&mut self, key: u64) -> Result<bool, StoreError> {
        if !self.index.contains(key) {
            return Ok(false);
        }
        self.room(0)?;
        self.index.remove(key).map_err(|e| err("remove", e))?;
        Ok(true)
    }

    pub(super) fn contains(&self, key: u64) -> bool {
        self.index.contains(key)
    }

    pub(super) fn size(&self) -> usize {
        self.index.size()
    }

    pub(super) fn search(&self, q: &[f32], k: usize) -> Result<Vec<(u64, f32)>, StoreError> {
        if self.index.size() == 0 || k == 0 {
            return Ok(vec![]);
        }
        let m = self.index.search(q, k).map_err(|e| err("search", e))?;
        Ok(m.keys
            .into_iter()
            .zip(m.distances)
            .map(|(key, d)| (key, 1.0 - d))
            .collect())
    }

    pub(super) fn filtered_search(
        &self,
        q: &[f32],
        k: usize,
        keep: &dyn Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        if self.index.size() == 0 || k == 0 {
            return Ok(vec![]);
        }
        let m = self
            .index
            .filtered_search(q, k, keep)
            .map_err(|e| err("search", e))?;
        Ok(m.keys
            .into_iter()
            .zip(m.distances)
            .map(|(key, d)| (key, 1.0 - d))
            .collect())
    }

    /// The stored vector of `key` (as the index holds it).
    pub(super) fn get(&self, key: u64) -> Option<Vec<f32>> {
        if !self.index.contains(key) {
            return None;
        }
        let mut buf = vec![0f32; self.dims];
        self.index.get(key, &mut buf).ok().filter(|n| *n > 0)?;
        Some(buf)
    }

    /// Write the file atomically: a temp file, then a rename. A view is its file already.
    pub(super) fn save(&self) -> Result<(), StoreError> {
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
