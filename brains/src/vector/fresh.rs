//! Fresh vectors: written, not yet settled into the graph. Kept flat and searched by a
//! scan, so a claim is found by its vector the moment its write returns, whatever the
//! graph's insert costs.
//!
//! A row is kept in full precision (scored exactly) or, past what the index lets it
//! hold that way, **lean**: its eight bits alone, a quarter of the memory, scored by them
//! (within its bound of the exact cosine), as an eight-bit graph scores what it holds.
//! Only an index whose candidates are rescored from their stored vectors keeps lean rows
//! ([`super::Precision::rescores`]): a bulk import leaves a million vectors for the graph
//! to catch up on in ~300 MB, and none of them waits for it.
//!
//! A large fresh set (a bulk import leaves its vectors here while the settler is held) is
//! scanned through an eight-bit copy of each vector first: a quarter of the memory read
//! per query, and integer arithmetic. Each row's cosine is known from it to within a
//! bound the row carries (its rounding residual), so only the rows whose bound reaches
//! the k-th best lower bound are rescored from the full vectors, and the answer is the
//! exact scan's, score for score. A backlog of [`CELLS_MIN`](super::cells::CELLS_MIN) rows
//! or more, once parted into cells, is read in part (`cells.rs`).

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use super::arith::{
    dot, dot_codes, from_order_key, norm, order_key, quantize, widest, Rounding, RowDot, Rows,
    BOUND_SLACK,
};
use super::bounds::{RowBound, Stand};
use super::cells::{placeable, split_runs, Cells, Centroids, ASSIGN_STEP};
use super::Keep;

/// A vector on its way into the graph: its key, the vector, and what it stands for
/// when it is a lean row's eight bits ([`Stand`]).
pub(super) type Moving = (u64, Vec<f32>, Option<Stand>);

/// Fresh sets below this are scanned in full precision alone.
const QUANTIZED_SCAN_MIN: usize = 4096;
/// From this many rows read the eight-bit pass runs on two cores (a hop to the pool
/// costs tens of microseconds; a pass over this many rows about a quarter of a
/// millisecond).
const PARALLEL_SCAN_MIN: usize = 8192;

/// The query in sixteen bits for the eight-bit pass: `q ≈ qscale × qi`, `qerr` the norm
/// of what that rounding left, `qn` the query's norm. Made once a scan, read by both
/// halves.
struct Query16 {
    qi: Vec<i16>,
    qscale: f32,
    qerr: f32,
    qn: f32,
}

impl Query16 {
    fn of(q: &[f32], qn: f32) -> Query16 {
        let qmax = q.iter().fold(0f32, |m, x| m.max(x.abs()));
        let qscale = qmax / 32767.0;
        let qi: Vec<i16> = q
            .iter()
            .map(|x| (x / qscale).round().clamp(-32767.0, 32767.0) as i16)
            .collect();
        let qerr = q
            .iter()
            .zip(&qi)
            .map(|(x, c)| (x - qscale * f32::from(*c)).powi(2))
            .sum::<f32>()
            .sqrt();
        Query16 {
            qi,
            qscale,
            qerr,
            qn,
        }
    }
}

/// The shortlist of some runs of rows ([`Fresh::shortlist_of`]) as a loop [`widest`] runs with the
/// machine's widest eight-bit kernel.
struct Shortlist<'a, 'k> {
    fresh: &'a Fresh,
    runs: &'a [Range<usize>],
    q16: &'a Query16,
    k: usize,
    keep: &'a Keep<'k>,
}

impl Rows for Shortlist<'_, '_> {
    type Output = Vec<usize>;

    #[inline(always)]
    fn run<K: RowDot>(self, kernel: K) -> Vec<usize> {
        self.fresh
            .shortlist_rows(kernel, self.runs, self.q16, self.k, self.keep)
    }
}

/// A row kept lean: no full-precision slot.
const LEAN: u32 = u32::MAX;

#[derive(Debug, Default)]
pub(super) struct Fresh {
    dims: usize,
    keys: Vec<u64>,
    /// Each row's slot in `data`, or [`LEAN`].
    slots: Vec<u32>,
    /// Full-precision rows, `dims` components a slot; freed slots are reused.
    data: Vec<f32>,
    free: Vec<u32>,
    /// The norm of each row's full-precision vector (kept for lean rows too).
    norms: Vec<f32>,
    /// The rows in eight bits (`keys.len() × dims`), and how each was rounded.
    codes: Vec<i8>,
    roundings: Vec<Rounding>,
    pos: HashMap<u64, usize>,
    /// Keys the settler is inserting into the graph (still here until it is done).
    moving: HashSet<u64>,
    /// Keys removed while moving: the graph may hold them for a moment; they are not
    /// found, and the settler takes them out of the graph when it is done.
    dropped: HashSet<u64>,
    /// Which cell each row is in, once the set is large (`cells.rs`).
    cells: Cells,
}

impl Fresh {
    pub(super) fn new(dims: usize) -> Fresh {
        Fresh {
            dims,
            ..Fresh::default()
        }
    }

    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub(super) fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// Rows kept in full precision.
    pub(super) fn full(&self) -> usize {
        self.data.len() / self.dims.max(1) - self.free.len()
    }

    pub(super) fn contains(&self, key: u64) -> bool {
        self.pos.contains_key(&key)
    }

    /// Row `i` in full precision, unless it is lean.
    fn row(&self, i: usize) -> Option<&[f32]> {
        let s = self.slots[i];
        (s != LEAN).then(|| &self.data[s as usize * self.dims..(s as usize + 1) * self.dims])
    }

    fn codes(&self, i: usize) -> &[i8] {
        &self.codes[i * self.dims..(i + 1) * self.dims]
    }

    /// Row `i`'s vector: as written, or as its eight bits give it when it is lean.
    fn vector_at(&self, i: usize) -> Cow<'_, [f32]> {
        match self.row(i) {
            Some(v) => Cow::Borrowed(v),
            None => {
                let scale = self.roundings[i].scale;
                Cow::Owned(
                    self.codes(i)
                        .iter()
                        .map(|c| scale * f32::from(*c))
                        .collect(),
                )
            }
        }
    }

    /// The vector of `key` (see [`Fresh::vector_at`]).
    pub(super) fn get(&self, key: u64) -> Option<Cow<'_, [f32]>> {
        self.pos.get(&key).map(|i| self.vector_at(*i))
    }

    /// Add a vector (its key replaces an earlier one), in full precision or lean.
    #[cfg(test)]
    pub(super) fn push(&mut self, key: u64, v: &[f32], lean: bool) {
        self.push_as(key, v, lean, None);
    }

    /// [`Fresh::push`] of a vector standing in for another (`stand`: a lean row's eight
    /// bits handed back), kept lean so that it is never taken for the vector itself.
    pub(super) fn push_as(&mut self, key: u64, v: &[f32], lean: bool, stand: Option<Stand>) {
        let lean = lean || stand.is_some();
        self.remove(key);
        self.pos.insert(key, self.keys.len());
        self.keys.push(key);
        let slot = if lean {
            LEAN
        } else if let Some(s) = self.free.pop() {
            let at = s as usize * self.dims;
            self.data[at..at + self.dims].copy_from_slice(v);
            s
        } else {
            self.data.extend_from_slice(v);
            (self.data.len() / self.dims - 1) as u32
        };
        self.slots.push(slot);
        let mut rounding = quantize(v, &mut self.codes);
        let bound = RowBound::of(v, &rounding, stand);
        rounding.residual = bound.residual;
        self.norms.push(bound.norm);
        self.roundings.push(rounding);
        self.cells.push(key);
    }

    /// Take a vector out (a write let it go); whether it was here.
    pub(super) fn remove(&mut self, key: u64) -> bool {
        if !self.take(key) {
            return false;
        }
        if self.moving.contains(&key) {
            self.dropped.insert(key);
        }
        true
    }

    /// Whether `key` was let go while the graph may still hold it.
    pub(super) fn is_dropped(&self, key: u64) -> bool {
        self.dropped.contains(&key)
    }

    pub(super) fn dropped(&self) -> &HashSet<u64> {
        &self.dropped
    }

    /// Take a vector's row out; whether it was here.
    fn take(&mut self, key: u64) -> bool {
        let Some(i) = self.pos.remove(&key) else {
            return false;
        };
        if self.slots[i] != LEAN {
            self.free.push(self.slots[i]);
        }
        let last = self.keys.len() - 1;
        if i != last {
            self.keys.swap(i, last);
            self.slots.swap(i, last);
            self.norms.swap(i, last);
            self.roundings.swap(i, last);
            let d = self.dims;
            let (head, tail) = self.codes.split_at_mut(last * d);
            head[i * d..(i + 1) * d].copy_from_slice(&tail[..d]);
            self.pos.insert(self.keys[i], i);
        }
        self.cells.swap_remove(i);
        self.keys.pop();
        self.slots.pop();
        self.norms.pop();
        self.roundings.pop();
        self.codes.truncate(last * self.dims);
        if self.keys.is_empty() {
            // Drained (an import's backlog settled): its memory goes back, not kept for
            // the next one.
            *self = Fresh {
                dims: self.dims,
                moving: std::mem::take(&mut self.moving),
                dropped: std::mem::take(&mut self.dropped),
                ..Fresh::default()
            };
        }
        true
    }

    /// Up to `n` vectors for the settler, marked moving (copies: they stay here, found
    /// by the scan, until [`Fresh::settled`]). A lean row goes as its eight bits give it:
    /// the graph that takes it rounds every vector to eight bits of its own, far coarser.
    ///
    /// The last rows, last first: settled in that order, each leaves from the end, so
    /// no row is moved to fill its place and rows kept in order of their cells stay so.
    pub(super) fn take_batch(&mut self, n: usize) -> Vec<Moving> {
        let batch: Vec<Moving> = (self.len().saturating_sub(n)..self.len())
            .rev()
            .map(|i| (self.keys[i], self.vector_at(i).into_owned(), self.stand(i)))
            .collect();
        self.moving.extend(batch.iter().map(|(k, _, _)| *k));
        batch
    }

    /// What row `i`'s vector stands for when it is lean (its eight bits, scaled).
    fn stand(&self, i: usize) -> Option<Stand> {
        self.row(i).is_none().then(|| Stand {
            residual: self.roundings[i].residual,
            norm: self.norms[i],
        })
    }

    /// How row `i`'s eight bits stand for its vector.
    fn bound(&self, i: usize) -> RowBound {
        RowBound {
            scale: self.roundings[i].scale,
            residual: self.roundings[i].residual,
            norm: self.norms[i],
        }
    }

    /// Bounds on the cosine of `key`'s vector with `q` (of norm `qn`): exact, to the
    /// arithmetic's slack, for a row in full precision; from its eight bits for a lean
    /// one. `None` for a key not here (or dropped), or a row nothing bounds.
    pub(super) fn cosine_bounds(&self, key: u64, q: &[f32], qn: f32) -> Option<(f32, f32)> {
        if self.dropped.contains(&key) {
            return None;
        }
        let i = *self.pos.get(&key)?;
        let Some(v) = self.row(i) else {
            return self.bound(i).cosine(dot_codes(self.codes(i), q), qn);
        };
        let n = self.norms[i];
        let c = if n == 0.0 || qn == 0.0 {
            0.0
        } else {
            dot(v, q) / (n * qn)
        };
        let (lower, upper) = (c - BOUND_SLACK, c + BOUND_SLACK);
        (lower.is_finite() && upper.is_finite()).then_some((lower, upper))
    }

    /// The settler inserted `keys` into the graph: they leave the fresh set. Returns the
    /// ones let go meanwhile, which the graph must lose (they stay dropped until
    /// [`Fresh::forget_dropped`], so no search finds them in between).
    pub(super) fn settled(&mut self, keys: &[u64]) -> Vec<u64> {
        let mut gone = Vec::new();
        for k in keys {
            self.moving.remove(k);
            if self.dropped.contains(k) {
                gone.push(*k);
            } else {
                self.take(*k);
            }
        }
        gone
    }

    pub(super) fn forget_dropped(&mut self, keys: &[u64]) {
        for k in keys {
            self.dropped.remove(k);
        }
    }

    /// Whether the set should be parted into cells (again): see `cells.rs`.
    pub(super) fn cells_due(&self) -> bool {
        self.cells.due()
    }

    /// Cells are to be made now: a sample of the rows, spread over the set, for their
    /// centroids, and how many cells. Rows written from now until
    /// [`Fresh::install_cells`] stay in no cell.
    pub(super) fn begin_cells(&mut self) -> (Vec<Vec<f32>>, usize) {
        self.cells.begin();
        let cells = Centroids::count_for(self.len());
        let n = Centroids::sample_for(cells).min(self.len());
        let sample = (0..n)
            .map(|j| j * self.len() / n.max(1))
            .filter(|i| self.placeable(*i))
            .map(|i| self.vector_at(i).into_owned())
            .collect();
        (sample, cells)
    }

    /// The cell of each row from `start` (at most [`ASSIGN_STEP`] rows), by key; `None`
    /// once `start` is past the end. A row that cannot be placed is left in none.
    pub(super) fn assign_cells(
        &self,
        centroids: &Centroids,
        start: usize,
    ) -> Option<Vec<(u64, u16)>> {
        if start >= self.len() {
            return None;
        }
        let end = self.len().min(start + ASSIGN_STEP);
        let nearest = centroids.nearest_all(&self.codes[start * self.dims..end * self.dims]);
        Some(
            (start..end)
                .zip(nearest)
                .filter(|(i, _)| self.placeable(*i))
                .map(|(i, c)| (self.keys[i], c))
                .collect(),
        )
    }

    /// Whether row `i` can be put in a cell (see [`placeable`]).
    fn placeable(&self, i: usize) -> bool {
        placeable(self.norms[i], self.roundings[i].scale)
    }

    /// The cells begun were not made (see [`Cells::abandon`]).
    pub(super) fn abandon_cells(&mut self) {
        self.cells.abandon();
    }

    /// The cells made (see [`Cells::install`]), and the rows put in order of their
    /// cells, so a seek reads each of its cells as one run of memory, not row by row
    /// across the whole set.
    pub(super) fn install_cells(&mut self, centroids: Arc<Centroids>, assigned: &[(u64, u16)]) {
        self.cells.install(centroids, assigned, &self.pos);
        let order = self.cells.by_cell();
        self.reorder(&order);
    }

    /// Put the rows in `order` (`order[j]`: the row that goes to place `j`), in place,
    /// one cycle of the permutation at a time.
    fn reorder(&mut self, order: &[usize]) {
        let d = self.dims;
        let mut done = vec![false; order.len()];
        let mut row = vec![0i8; d];
        for start in 0..order.len() {
            if done[start] || order[start] == start {
                continue;
            }
            let (key, slot, norm, rounding) = (
                self.keys[start],
                self.slots[start],
                self.norms[start],
                self.roundings[start],
            );
            row.copy_from_slice(&self.codes[start * d..(start + 1) * d]);
            let mut j = start;
            loop {
                done[j] = true;
                let from = order[j];
                if from == start {
                    self.keys[j] = key;
                    self.slots[j] = slot;
                    self.norms[j] = norm;
                    self.roundings[j] = rounding;
                    self.codes[j * d..(j + 1) * d].copy_from_slice(&row);
                    break;
                }
                self.keys[j] = self.keys[from];
                self.slots[j] = self.slots[from];
                self.norms[j] = self.norms[from];
                self.roundings[j] = self.roundings[from];
                self.codes.copy_within(from * d..(from + 1) * d, j * d);
                j = from;
            }
        }
        for (i, k) in self.keys.iter().enumerate() {
            self.pos.insert(*k, i);
        }
        self.cells.reorder(order);
    }

    #[cfg(test)]
    pub(super) fn cells(&self) -> &Cells {
        &self.cells
    }

    /// Rows in a cell.
    pub(super) fn in_cells(&self) -> usize {
        self.cells.assigned()
    }

    /// The `k` most similar vectors `keep` admits, best first: exactly, but for lean
    /// rows, which are scored by their eight bits, and for a set parted into cells,
    /// of which only the query's nearest are read (`cells.rs`).
    pub(super) fn scan(&self, q: &[f32], k: usize, keep: &Keep<'_>) -> Vec<(u64, f32)> {
        self.scan_from(q, k, keep, QUANTIZED_SCAN_MIN)
    }

    /// [`Fresh::scan`], through the eight-bit rows once the set holds `quantized_min`.
    fn scan_from(
        &self,
        q: &[f32],
        k: usize,
        keep: &Keep<'_>,
        quantized_min: usize,
    ) -> Vec<(u64, f32)> {
        let qn = norm(q);
        if k == 0 || qn == 0.0 || self.is_empty() {
            return vec![];
        }
        let exact = |i: usize| {
            let n = self.norms[i];
            let sim = if n == 0.0 {
                0.0
            } else {
                match self.row(i) {
                    Some(v) => dot(v, q) / (n * qn),
                    None => self.roundings[i].scale * dot_codes(self.codes(i), q) / (n * qn),
                }
            };
            (self.keys[i], sim)
        };
        let mut all: Vec<(u64, f32)> = if self.len() < quantized_min {
            (0..self.len())
                .filter(|i| keep(self.keys[*i]))
                .map(exact)
                .collect()
        } else {
            self.shortlist(q, qn, k, keep)
                .into_iter()
                .map(exact)
                .collect()
        };
        let order = |a: &(u64, f32), b: &(u64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if all.len() > k {
            all.select_nth_unstable_by(k - 1, order);
            all.truncate(k);
        }
        all.sort_by(order);
        all
    }

    /// The rows `keep` admits that may be among the `k` most similar: each row's cosine
    /// lies within its bound of the one its eight bits give, so a row whose upper bound
    /// falls short of the k-th best lower bound cannot be.
    ///
    /// A large set is read in two halves at once (on the recall pool): each half's
    /// shortlist holds every row of the k best that lies in it, so together they hold
    /// the k best.
    fn shortlist(&self, q: &[f32], qn: f32, k: usize, keep: &Keep<'_>) -> Vec<usize> {
        let q16 = Query16::of(q, qn);
        let runs = self
            .cells
            .probe(q)
            .unwrap_or_else(|| std::iter::once(0..self.len()).collect());
        let rows: usize = runs.iter().map(ExactSizeIterator::len).sum();
        if rows < PARALLEL_SCAN_MIN {
            return self.shortlist_of(&runs, &q16, k, keep);
        }
        let [first, second] = split_runs(&runs);
        let (mut a, b) = crate::par::halves(
            || self.shortlist_of(&first, &q16, k, keep),
            || self.shortlist_of(&second, &q16, k, keep),
        );
        a.extend(b);
        a
    }

    /// [`Fresh::shortlist`] of the rows in `runs`.
    fn shortlist_of(
        &self,
        runs: &[Range<usize>],
        q16: &Query16,
        k: usize,
        keep: &Keep<'_>,
    ) -> Vec<usize> {
        widest(Shortlist {
            fresh: self,
            runs,
            q16,
            k,
            keep,
        })
    }

    /// [`Fresh::shortlist_of`]'s loop with `kernel`, built into each level's code whole.
    #[inline(always)]
    fn shortlist_rows<K: RowDot>(
        &self,
        kernel: K,
        runs: &[Range<usize>],
        q16: &Query16,
        k: usize,
        keep: &Keep<'_>,
    ) -> Vec<usize> {
        let Query16 {
            ref qi,
            qscale,
            qerr,
            qn,
        } = *q16;
        // |q·v − q̂·v̂| ≤ |q|·|v − v̂| + |v̂|·|q − q̂|: each row's cosine within its bound.
        // The k best lower bounds so far (a min-heap) give a floor no row whose upper
        // bound falls short of can pass; the floor only rises.
        let mut best: BinaryHeap<Reverse<u32>> = BinaryHeap::with_capacity(k + 1);
        let mut floor = f32::NEG_INFINITY;
        let mut rows: Vec<(usize, f32)> = Vec::new();
        for run in runs {
            for i in run.clone() {
                if !keep(self.keys[i]) {
                    continue;
                }
                let n = self.norms[i];
                let (lower, upper) = if n == 0.0 {
                    (0.0, 0.0)
                } else {
                    let r = self.roundings[i];
                    let approx = r.scale * qscale * kernel.dot_i8(self.codes(i), qi) as f32;
                    let bound = qn * r.residual + r.rounded * qerr;
                    let inv = 1.0 / (n * qn);
                    (
                        (approx - bound) * inv - BOUND_SLACK,
                        (approx + bound) * inv + BOUND_SLACK,
                    )
                };
                if !(lower.is_finite() && upper.is_finite()) {
                    // Nothing to bound it by (a vector that is not finite): always rescored.
                    rows.push((i, f32::INFINITY));
                    continue;
                }
                if upper < floor {
                    continue;
                }
                rows.push((i, upper));
                if best.len() < k {
                    best.push(Reverse(order_key(lower)));
                } else if best.peek().is_some_and(|m| order_key(lower) > m.0) {
                    best.pop();
                    best.push(Reverse(order_key(lower)));
                }
                if best.len() == k {
                    floor = best
                        .peek()
                        .map_or(f32::NEG_INFINITY, |m| from_order_key(m.0));
                }
            }
        }
        rows.retain(|r| r.1 >= floor);
        rows.into_iter().map(|r| r.0).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_dot_product_of_any_length_matches_the_plain_sum() {
        for n in [0, 1, 7, 8, 9, 64, 257] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "length {n}");
        }
    }

    #[test]
    fn removal_keeps_every_other_vector_in_place() {
        let mut f = Fresh::new(3);
        for k in 1..=5u64 {
            f.push(k, &[k as f32, 1.0, 0.0], false);
        }
        assert!(f.remove(2));
        assert!(!f.remove(2));
        assert_eq!(f.len(), 4);
        for k in [1u64, 3, 4, 5] {
            assert_eq!(f.get(k).unwrap()[0], k as f32);
        }
        let best = f.scan(&[1.0, 0.0, 0.0], 2, &|_| true);
        assert_eq!(best.iter().map(|p| p.0).collect::<Vec<_>>(), vec![5, 4]);
        let kept = f.scan(&[1.0, 0.0, 0.0], 2, &|k| k != 5);
        assert_eq!(kept[0].0, 4);
    }

    #[test]
    fn a_vector_let_go_while_it_moves_stays_dropped_until_the_graph_lost_it() {
        let mut f = Fresh::new(2);
        f.push(1, &[1.0, 0.0], false);
        f.push(2, &[0.0, 1.0], true);
        let batch = f.take_batch(10);
        assert_eq!(batch.len(), 2);
        assert!(f.remove(1), "still fresh while it moves");
        assert!(f.is_dropped(1));
        let gone = f.settled(&[1, 2]);
        assert_eq!(gone, vec![1]);
        assert!(f.is_empty());
        assert!(f.is_dropped(1), "dropped until the graph lost it");
        f.forget_dropped(&gone);
        assert!(!f.is_dropped(1));
    }

    #[test]
    fn a_vector_that_is_not_finite_is_scanned_as_the_full_scan_does() {
        let mut f = Fresh::new(3);
        f.push(1, &[1.0, 0.0, 0.0], false);
        f.push(2, &[f32::NAN, 1.0, 0.0], false);
        f.push(3, &[f32::INFINITY, 0.0, 0.0], false);
        f.push(4, &[0.5, 0.5, 0.0], false);
        let bits = |r: Vec<(u64, f32)>| {
            r.into_iter()
                .map(|(k, s)| (k, s.to_bits()))
                .collect::<Vec<_>>()
        };
        for k in 1..=4 {
            let q = [1.0, 0.2, 0.0];
            assert_eq!(
                bits(f.scan_from(&q, k, &|_| true, 0)),
                bits(f.scan_from(&q, k, &|_| true, usize::MAX)),
                "k = {k}"
            );
        }
    }

    /// Issue 50: past [`PARALLEL_SCAN_MIN`] rows the eight-bit pass runs in two halves
    /// on two cores; the answer is still exactly the full scan's, lean rows, a filter
    /// and near-ties included.
    #[test]
    fn a_set_read_in_two_halves_answers_as_the_full_scan() {
        let dims = 16;
        let mut f = Fresh::new(dims);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Few distinct values: many rows tie with others.
            (x % 9) as f32 / 4.0 - 1.0
        };
        let n = PARALLEL_SCAN_MIN + 3_001;
        for k in 0..n as u64 {
            let v: Vec<f32> = (0..dims).map(|_| next()).collect();
            f.push(k, &v, k % 3 != 0);
        }
        let bits = |r: Vec<(u64, f32)>| {
            r.into_iter()
                .map(|(k, s)| (k, s.to_bits()))
                .collect::<Vec<_>>()
        };
        for (i, k) in [1usize, 10, 50].into_iter().enumerate() {
            let q: Vec<f32> = (0..dims).map(|d| ((d + i) as f32 * 0.7).sin()).collect();
            assert_eq!(
                bits(f.scan_from(&q, k, &|_| true, 0)),
                bits(f.scan_from(&q, k, &|_| true, usize::MAX)),
                "k = {k}"
            );
            let odd = |key: u64| key % 2 == 1;
            assert_eq!(
                bits(f.scan_from(&q, k, &odd, 0)),
                bits(f.scan_from(&q, k, &odd, usize::MAX)),
                "k = {k}, odd keys"
            );
        }
    }

    #[test]
    fn a_lean_row_is_found_by_its_eight_bits_and_its_slot_is_reused() {
        let dims = 32;
        // Computed once: an optimised build may round `sin` a bit differently at two
        // call sites, and the comparisons below are exact.
        let table: Vec<Vec<f32>> = (0..=8u64)
            .map(|k| {
                (0..dims)
                    .map(|j| ((k as f32 + 1.0) * 0.7 + j as f32 * 0.31).sin())
                    .collect()
            })
            .collect();
        let v = |k: u64| table[k as usize].clone();
        let mut f = Fresh::new(dims);
        for k in 1..=6u64 {
            f.push(k, &v(k), k > 3);
        }
        assert_eq!((f.len(), f.full()), (6, 3));
        for k in 1..=6u64 {
            let got = f.get(k).unwrap();
            let off = got
                .iter()
                .zip(v(k))
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            let step = v(k).iter().fold(0f32, |m, x| m.max(x.abs())) / 127.0;
            if k > 3 {
                assert!(off > 0.0 && off <= step / 2.0 + 1e-6, "lean {k}: {off}");
            } else {
                assert_eq!(off, 0.0, "full {k}");
            }
            // Each finds itself first, a lean one with its cosine to within its rounding.
            let best = f.scan(&v(k), 1, &|_| true);
            assert_eq!(best[0].0, k);
            assert!((best[0].1 - 1.0).abs() < 1e-3, "{k}: {}", best[0].1);
        }
        let batch = f.take_batch(6);
        assert_eq!(batch.len(), 6);
        let gone = f.settled(&[1, 4]);
        assert!(gone.is_empty());
        assert_eq!((f.len(), f.full()), (4, 2));
        // The freed full-precision slot is taken by the next full row, not grown.
        let held = f.data.len();
        f.push(7, &v(7), false);
        assert_eq!((f.full(), f.data.len()), (3, held));
        assert_eq!(f.get(7).unwrap().as_ref(), v(7).as_slice());
        assert_eq!(f.get(2).unwrap().as_ref(), v(2).as_slice());
    }

    #[test]
    fn a_drained_set_gives_its_memory_back() {
        let mut f = Fresh::new(8);
        for k in 0..1000u64 {
            f.push(k, &[k as f32; 8], k % 2 == 0);
        }
        f.take_batch(1000);
        f.settled(&(0..1000).collect::<Vec<_>>());
        assert!(f.is_empty());
        assert_eq!((f.data.capacity(), f.codes.capacity()), (0, 0));
    }

    /// Vectors near one another (ties and near-ties are where a bound would show), a
    /// few exact copies, a few zero vectors, and removals in between.
    fn near_vectors() -> impl Strategy<Value = (Vec<Vec<f32>>, Vec<usize>)> {
        let dims = 19usize;
        (
            proptest::collection::vec(proptest::collection::vec(-1.0f32..1.0, dims), 1..4),
            proptest::collection::vec(
                (
                    0usize..4,
                    proptest::collection::vec(-0.02f32..0.02, dims),
                    0u8..12,
                ),
                1..120,
            ),
            proptest::collection::vec(0usize..200, 0..20),
        )
            .prop_map(|(centres, rows, removed)| {
                let vs = rows
                    .into_iter()
                    .map(|(c, jitter, kind)| {
                        let c = &centres[c % centres.len()];
                        match kind {
                            0 => vec![0.0; c.len()],
                            1 => c.clone(),
                            2 => c.iter().map(|x| x * 1e-3).collect(),
                            _ => c.iter().zip(&jitter).map(|(x, j)| x + j).collect(),
                        }
                    })
                    .collect();
                (vs, removed)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        /// The scan through the eight-bit rows returns exactly what the full-precision
        /// scan does: the same keys, the same scores to the bit, in the same order.
        #[test]
        fn the_eight_bit_scan_returns_exactly_the_full_precision_top_k(
            (vs, removed) in near_vectors(),
            lean_every in 0usize..4,
            queries in proptest::collection::vec((0usize..200, proptest::collection::vec(-0.05f32..0.05, 19), 1usize..12, 0u64..4), 1..6),
        ) {
            let mut f = Fresh::new(19);
            // Lean rows (every `lean_every`-th, none when 0) are scored by their eight
            // bits either way: the shortlist never drops one that belongs in the top k.
            for (i, v) in vs.iter().enumerate() {
                f.push(i as u64 + 1, v, lean_every > 0 && i % lean_every == 0);
            }
            for r in removed {
                f.remove(r as u64 + 1);
            }
            for (from, jitter, k, skip) in queries {
                let q: Vec<f32> = vs[from % vs.len()].iter().zip(&jitter).map(|(x, j)| x + j).collect();
                let keep = |key: u64| skip == 0 || key % 4 != skip;
                let bits = |r: Vec<(u64, f32)>| r.into_iter().map(|(k, s)| (k, s.to_bits())).collect::<Vec<_>>();
                prop_assert_eq!(bits(f.scan_from(&q, k, &keep, 0)), bits(f.scan_from(&q, k, &keep, usize::MAX)));
            }
        }
    }
}
