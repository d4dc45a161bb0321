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
//! scanned through an eight-bit copy of each vector first (`scan.rs`); a backlog of
//! [`CELLS_MIN`](super::cells::CELLS_MIN) rows or more, once parted into cells, is read
//! in part (`cells.rs`).

mod scan;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::arith::{dot, dot_codes, quantize, Rounding, BOUND_SLACK};
use super::bounds::{RowBound, Stand};
use super::cells::{placeable, Cells, Centroids, ASSIGN_STEP};

/// A vector on its way into the graph: its key, the vector, and what it stands for
/// when it is a lean row's eight bits ([`Stand`]).
pub(super) type Moving = (u64, Vec<f32>, Option<Stand>);

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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
