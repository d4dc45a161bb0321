//! The graph: usearch's HNSW index over the vectors that have settled, with its file.
//! A saved file opens as a view (memory-mapped by usearch: milliseconds whatever its
//! size, only the pages a search touches read); the first change loads it into memory.
//!
//! The graph keeps a digest of the keys it holds (a sum of their hashes, kept as keys
//! come and go), written beside its file (`vectors.stamp`) with the file's length and
//! modification time. On open, a stamp that matches its file and whose digest equals the
//! live keys' says the file holds exactly them, without asking the index for each key
//! (a million look-ups: ~100 ms of a large brain's open). Any doubt (no stamp, another
//! file, another digest) falls back to checking key by key.
//!
//! `strays.rs`: the vectors a batch insert left that no search finds, and their
//! relinking.

mod strays;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use super::arith::{dot_codes, quantize};
use super::bounds::{Bounds, RowBound, Stand};
use super::locks::{read, write};
use super::precision::Precision;
use super::Keep;
use crate::error::StoreError;

/// The graph's file in the store's directory.
pub const INDEX_FILE: &str = "vectors.usearch";

/// A usearch failure as the store's error.
pub(super) fn err(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::VectorIndex {
        what: what.to_string(),
        detail: e.to_string(),
    }
}

/// usearch's matches as (key, cosine similarity): its distance is one minus the cosine.
fn similarities(m: usearch::ffi::Matches) -> Vec<(u64, f32)> {
    m.keys
        .into_iter()
        .zip(m.distances)
        .map(|(key, d)| (key, 1.0 - d))
        .collect()
}

/// How many usearch calls (searches, and the settler's inserts) may run at once. usearch
/// keeps one context per concurrent thread and refuses a call when every context is
/// taken, while the owner reads a store from as many threads as it has requests; calls
/// beyond this wait for a context instead (a search costs well under a millisecond).
pub const SEARCH_CONTEXTS: usize = 16;

/// Candidates kept while inserting (usearch's default is 128) and while searching (its
/// default 64). A graph built at 40 and searched at 128 builds 1.1-1.3× faster than at
/// 48 / 96 (itself 1.27× faster than 64 / 64) and finds as much of the exact top 10 or
/// more, for ~0.15-0.2 ms more a search at a million vectors (`cargo xtask bench
/// --hnsw`, docs/BENCHMARKS.md). Neither is kept in the file: a saved graph is searched
/// as these say.
const EXPANSION_ADD: usize = 40;
const EXPANSION_SEARCH: usize = 128;

/// Base links at or below which a just-inserted vector is checked for being stranded
/// ([`Graph::strays`]): the stranded ones measured had one to three; most vectors have
/// ten or more.
const FEW_LINKS: usize = 4;

/// A graph of at most this many vectors has every vector of a batch checked, suspected
/// or not: there the concurrent inserts strand the most (a few in a thousand), some in
/// clusters linked well to each other and by a single far link from the rest, which
/// only a search tells; and there a check of each costs well under a second.
const CHECK_EVERY_BELOW: usize = 20_000;

impl Precision {
    fn scalar(self) -> ScalarKind {
        match self {
            Precision::I8 => ScalarKind::I8,
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
        expansion_search: EXPANSION_SEARCH,
        multi: false,
    }
}

/// Room for `capacity` vectors and [`SEARCH_CONTEXTS`] concurrent calls.
fn reserve(index: &Index, capacity: usize) -> Result<(), String> {
    index
        .reserve_capacity_and_threads(capacity, SEARCH_CONTEXTS)
        .map_err(|e| e.to_string())
}

/// A batch's keys to their positions in it.
type Positions = foldhash::HashMap<u64, usize>;

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
    /// The sum of [`key_hash`] over the keys held, when known (a new graph, a stamp that
    /// matched its file, or a check of every key); `None` until then.
    digest: Option<AtomicU64>,
    /// An eight-bit graph's rows' bounds (`bounds.rs`): its codes are made here, each
    /// vector scaled by its largest component and rounded, so the rounding is known.
    bounds: RwLock<Bounds>,
}

/// A row as the index holds it (or a query as it takes it).
pub(super) enum Row<'a> {
    Codes(Vec<i8>),
    Floats(Cow<'a, [f32]>),
}

/// The stamp beside the graph's file.
pub const STAMP_FILE: &str = "vectors.stamp";

/// A key's share of a digest: a mixing function (splitmix64's finalizer), so that two
/// different sets of keys sum to the same digest only by a 2^-64 accident.
pub fn key_hash(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What identifies a file's contents well enough to trust a stamp written for it: its
/// length and modification time (a rewrite or a replacement changes one of them).
fn file_mark(path: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((meta.len(), mtime))
}

/// The digest a stamp gives for the file at `path`, if it was written for that file.
fn read_stamp(path: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(path.with_file_name(STAMP_FILE)).ok()?;
    let mut parts = text.split_whitespace();
    let (len, mtime, digest) = (parts.next()?, parts.next()?, parts.next()?);
    let mark = file_mark(path)?;
    (parts.next().is_none() && len.parse() == Ok(mark.0) && mtime.parse() == Ok(mark.1))
        .then(|| u64::from_str_radix(digest, 16).ok())
        .flatten()
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
            digest: Some(AtomicU64::new(0)),
            bounds: RwLock::default(),
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
        let digest = read_stamp(&path).map(AtomicU64::new);
        let bounds = if precision == Precision::I8 {
            Bounds::load(&path, file_mark(&path))
        } else {
            Bounds::default()
        };
        Ok(Graph {
            index,
            dims,
            precision,
            path,
            viewed: true,
            digest,
            bounds: RwLock::new(bounds),
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
        // Grown by an eighth, not doubled: usearch keeps per-slot arrays for its whole
        // capacity, which doubling left half empty (~48 MB at a million vectors).
        let need = self.index.size() + extra + 1;
        if need >= self.index.capacity() {
            let capacity = self.index.capacity();
            let grow = need.max(capacity + capacity / 8).max(1024);
            reserve(&self.index, grow).map_err(|e| err("reserve", e))?;
        }
        Ok(())
    }

    /// Insert a vector (`stand`: what it stands in for, when it is not the vector the
    /// store holds); [`Graph::room`] made space for it. Safe beside other inserts and
    /// searches (usearch locks what it touches; each call holds a thread context).
    pub(super) fn add(&self, key: u64, v: &[f32], stand: Option<Stand>) -> Result<(), StoreError> {
        if v.len() != self.dims {
            return Err(err(
                "add",
                format!("vector has {} dimensions, expected {}", v.len(), self.dims),
            ));
        }
        if self.precision != Precision::I8 {
            return self.add_row(key, &Row::Floats(Cow::Borrowed(v)), None);
        }
        let mut codes = Vec::with_capacity(self.dims);
        let r = quantize(v, &mut codes);
        let bound = RowBound::of(v, &r, stand);
        self.add_row(key, &Row::Codes(codes), Some(bound))
    }

    /// Insert a row as the index holds it, with its bound.
    fn add_row(&self, key: u64, row: &Row, bound: Option<RowBound>) -> Result<(), StoreError> {
        // The bound is in place before a search can find the row.
        if let Some(b) = bound {
            write(&self.bounds).set(key, b);
        }
        match row {
            Row::Codes(c) => self.index.add(key, c.as_slice()),
            Row::Floats(v) => self.index.add(key, v.as_ref()),
        }
        .map_err(|e| err("add", e))?;
        if let Some(d) = &self.digest {
            d.fetch_add(key_hash(key), Ordering::Relaxed);
        }
        Ok(())
    }

    pub(super) fn remove(&mut self, key: u64) -> Result<bool, StoreError> {
        if !self.index.contains(key) {
            return Ok(false);
        }
        self.room(0)?;
        self.index.remove(key).map_err(|e| err("remove", e))?;
        write(&self.bounds).remove(key);
        if let Some(d) = &self.digest {
            d.fetch_sub(key_hash(key), Ordering::Relaxed);
        }
        Ok(true)
    }

    /// The digest of the keys held, when known.
    pub(super) fn digest(&self) -> Option<u64> {
        self.digest.as_ref().map(|d| d.load(Ordering::Relaxed))
    }

    /// The digest of the keys held, learnt by checking every one.
    pub(super) fn know_digest(&mut self, digest: u64) {
        self.digest = Some(AtomicU64::new(digest));
    }

    pub(super) fn contains(&self, key: u64) -> bool {
        self.index.contains(key)
    }

    /// The keys `key` links to on the base layer: the nearest the graph gave it when it
    /// was placed, and those placed later that chose it.
    pub(super) fn linked(&self, key: u64) -> Vec<u64> {
        let mut from = self.index.neighbors(key, 0);
        let mut out = vec![0; from.total()];
        let n = from.drain_into(&mut out);
        out.truncate(n);
        out
    }

    pub(super) fn size(&self) -> usize {
        self.index.size()
    }

    /// The query as the index takes it: an eight-bit graph's codes are made here, as its
    /// rows' are (usearch's own cast truncates to the unit vector's hundred-and-
    /// twenty-sevenths: a 256-dimensional vector's components to a few codes each).
    fn probe<'a>(&self, q: &'a [f32]) -> Row<'a> {
        if self.precision == Precision::I8 {
            let mut codes = Vec::with_capacity(q.len());
            quantize(q, &mut codes);
            Row::Codes(codes)
        } else {
            Row::Floats(Cow::Borrowed(q))
        }
    }

    pub(super) fn search(&self, q: &[f32], k: usize) -> Result<Vec<(u64, f32)>, StoreError> {
        if self.index.size() == 0 || k == 0 {
            return Ok(vec![]);
        }
        self.search_row(&self.probe(q), k)
    }

    fn search_row(&self, q: &Row, k: usize) -> Result<Vec<(u64, f32)>, StoreError> {
        let m = match q {
            Row::Codes(c) => self.index.search(c.as_slice(), k),
            Row::Floats(v) => self.index.search(v.as_ref(), k),
        }
        .map_err(|e| err("search", e))?;
        Ok(similarities(m))
    }

    pub(super) fn filtered_search(
        &self,
        q: &[f32],
        k: usize,
        keep: &Keep<'_>,
    ) -> Result<Vec<(u64, f32)>, StoreError> {
        if self.index.size() == 0 || k == 0 {
            return Ok(vec![]);
        }
        let m = match self.probe(q) {
            Row::Codes(c) => self.index.filtered_search(c.as_slice(), k, keep),
            Row::Floats(v) => self.index.filtered_search(v.as_ref(), k, keep),
        }
        .map_err(|e| err("search", e))?;
        Ok(similarities(m))
    }

    /// The row of `key` as the index holds it.
    fn row(&self, key: u64) -> Option<Row<'static>> {
        if !self.index.contains(key) {
            return None;
        }
        if self.precision == Precision::I8 {
            let mut buf = vec![0i8; self.dims];
            self.index.get(key, &mut buf).ok().filter(|n| *n > 0)?;
            Some(Row::Codes(buf))
        } else {
            let mut buf = vec![0f32; self.dims];
            self.index.get(key, &mut buf).ok().filter(|n| *n > 0)?;
            Some(Row::Floats(Cow::Owned(buf)))
        }
    }

    /// The eight-bit codes the graph holds for `key`; `None` for a key it does not hold,
    /// or a graph of floats.
    pub(in crate::vector) fn codes_of(&self, key: u64) -> Option<Vec<i8>> {
        match self.row(key)? {
            Row::Codes(c) => Some(c),
            Row::Floats(_) => None,
        }
    }

    /// Does the graph hold eight-bit rows (whose bounds it keeps)?
    pub(in crate::vector) fn holds_codes(&self) -> bool {
        self.precision == Precision::I8
    }

    /// A row the graph holds without a bound.
    pub(in crate::vector) fn lacks_bound(&self, key: u64) -> bool {
        self.index.contains(key) && read(&self.bounds).get(key).is_none()
    }

    /// Keep a row's bound (worked out after it was inserted).
    pub(in crate::vector) fn set_bound(&self, key: u64, b: RowBound) {
        if self.index.contains(key) {
            write(&self.bounds).set(key, b);
        }
    }

    /// Write the bounds beside the graph's file as it is on disk (a key the file holds
    /// has the codes it has in memory: keys are never reused).
    pub(in crate::vector) fn save_bounds(&self) {
        if let (Precision::I8, Some(mark)) = (self.precision, file_mark(&self.path)) {
            read(&self.bounds).save(&self.path, mark);
        }
    }

    /// The vector of `key` as the index holds it: an eight-bit row scaled as its bound
    /// says (by a hundred-and-twenty-seventh when the bound is not known, as usearch
    /// made rows before this graph made its own).
    pub(super) fn get(&self, key: u64) -> Option<Vec<f32>> {
        match self.row(key)? {
            Row::Floats(v) => Some(v.into_owned()),
            Row::Codes(c) => {
                let scale = read(&self.bounds).get(key).map_or(1.0 / 127.0, |b| b.scale);
                Some(c.iter().map(|x| scale * f32::from(*x)).collect())
            }
        }
    }

    /// Bounds on the cosine of each of `keys`' vectors with `q` (of norm `qn`), from the
    /// rows held; `None` for a key not held or whose bound is not known.
    pub(super) fn cosine_bounds(
        &self,
        keys: &[u64],
        q: &[f32],
        qn: f32,
    ) -> Vec<Option<(f32, f32)>> {
        if self.precision != Precision::I8 {
            return vec![None; keys.len()];
        }
        let bounds = read(&self.bounds);
        let mut codes = vec![0i8; self.dims];
        keys.iter()
            .map(|k| {
                let b = bounds.get(*k)?;
                self.index.get(*k, &mut codes).ok().filter(|n| *n > 0)?;
                b.cosine(dot_codes(&codes, q), qn)
            })
            .collect()
    }

    /// Write the file atomically: a temp file, then a rename; then its stamp (a crash
    /// between the two leaves a stamp that does not match the new file: not trusted).
    /// A view is its file already.
    pub(super) fn save(&self) -> Result<(), StoreError> {
        if self.viewed {
            return Ok(());
        }
        let stamp = self.path.with_file_name(STAMP_FILE);
        // The old stamp goes first: it must never be read beside the new file.
        let _ = std::fs::remove_file(&stamp);
        let tmp = self.path.with_extension("usearch.tmp");
        if let Err(e) = self.index.save(&tmp.to_string_lossy()) {
            // Leave no half-written file taking the room a full disk lacks.
            let _ = std::fs::remove_file(&tmp);
            return Err(err("save", e));
        }
        Bounds::discard(&self.path);
        std::fs::rename(&tmp, &self.path).map_err(|e| StoreError::Io {
            path: self.path.display().to_string(),
            detail: e.to_string(),
        })?;
        self.write_stamp();
        self.save_bounds();
        Ok(())
    }

    /// Stamp the file with the digest of the keys held (best effort: without a stamp
    /// the next open checks key by key). The file must be what the graph holds: just
    /// saved, or viewed and unchanged.
    pub(super) fn write_stamp(&self) {
        let stamp = self.path.with_file_name(STAMP_FILE);
        if let (Some(digest), Some((len, mtime))) = (self.digest(), file_mark(&self.path)) {
            let tmp = stamp.with_extension("stamp.tmp");
            if std::fs::write(&tmp, format!("{len} {mtime} {digest:x}\n")).is_ok() {
                let _ = std::fs::rename(&tmp, &stamp);
            }
        }
    }
}
