//! Cells: a coarse partition of a large fresh set, so that a seek while the graph catches
//! up on a bulk import reads a tenth of the backlog rather than all of it.
//!
//! Past [`CELLS_MIN`] fresh rows, most of them in no cell yet, the import's end (before
//! it returns) or else the settler (before its next batch, in the background) draws a
//! sample, finds centroids in it (spherical k-means), and puts every row in the cell of
//! its nearest centroid, read by its eight bits. A seek then scores the centroids by the
//! query's own eight bits, reads the rows of the best cells until it has read a tenth of
//! the rows that are in a cell (at least [`PROBE_MIN`]), and every row in none (written
//! since the cells were made, or not finite). Within what it reads the scan is what it
//! was (eight bits first, the rest rescored); what it leaves unread is the approximation
//! a graph makes too, and these rows are on their way into one: in `cargo xtask bench
//! --fresh` the exact top 10 is found ~0.98 of the time. A row is always found by its
//! own vector: the query's eight bits are then the row's, so the query's best cell is
//! the row's.
//!
//! Rows leave as the settler moves them (the cells shrink with them); rows written later
//! are in no cell and always read, until they outnumber the rest and the cells are made
//! again over all of them. A set of fewer than [`CELLS_MIN`] rows is read whole, exactly.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use super::arith::{norm, quantize, widest, RowDot, Rows};

/// Fresh sets from this size are parted into cells (below it the whole scan takes
/// ~1 ms on one core).
pub(super) const CELLS_MIN: usize = 32_768;
/// A seek reads at least this share (one in ten) of the rows in cells ...
const PROBE_SHARE: usize = 10;
/// ... and at least this many rows.
const PROBE_MIN: usize = 4096;
/// Rows a cell holds on average, within [`FEWEST`] and [`MOST`] cells.
const ROWS_PER_CELL: usize = 512;
const FEWEST: usize = 64;
const MOST: usize = 256;
/// Rows of the sample the centroids are found in, per cell.
const SAMPLE_PER_CELL: usize = 16;
/// Rounds of k-means over the sample.
const ROUNDS: usize = 4;
/// Rows assigned a step: the fresh set is read-locked one step at a time.
pub(super) const ASSIGN_STEP: usize = 2048;
/// A row in no cell.
const NONE: u16 = u16::MAX;

/// The cells' centroids (unit vectors), in sixteen bits on one common scale, so a row's
/// nearest is the one its eight bits have the largest integer dot product with.
#[derive(Debug)]
pub(super) struct Centroids {
    dims: usize,
    codes: Vec<i16>,
}

impl Centroids {
    /// How many cells for a set of `rows` rows.
    pub(super) fn count_for(rows: usize) -> usize {
        (rows / ROWS_PER_CELL).clamp(FEWEST, MOST)
    }

    /// How many sample rows for `cells` cells.
    pub(super) fn sample_for(cells: usize) -> usize {
        cells * SAMPLE_PER_CELL
    }

    /// `cells` centroids found in `sample` by spherical k-means (each round: every sample
    /// row to its nearest centroid by eight bits, each centroid to its rows' normalised
    /// mean). `None` when the sample has no finite, non-zero row.
    pub(super) fn of(sample: &[Vec<f32>], cells: usize) -> Option<Centroids> {
        let dims = sample.first()?.len();
        let unit: Vec<Vec<f32>> = sample
            .iter()
            .filter_map(|v| {
                let n = norm(v);
                (n > 0.0 && n.is_finite()).then(|| v.iter().map(|x| x / n).collect())
            })
            .collect();
        if unit.is_empty() {
            return None;
        }
        let cells = cells.min(unit.len()).min(usize::from(NONE));
        let mut codes = Vec::with_capacity(unit.len() * dims);
        for v in &unit {
            quantize(v, &mut codes);
        }
        // Spread over the sample, which is itself spread over the set.
        let mut centroids: Vec<Vec<f32>> = (0..cells)
            .map(|j| unit[j * unit.len() / cells].clone())
            .collect();
        for _ in 0..ROUNDS {
            let c = Centroids::quantized(&centroids, dims);
            let nearest = c.nearest_all(&codes);
            let mut sums = vec![vec![0f32; dims]; cells];
            for (v, j) in unit.iter().zip(&nearest) {
                for (s, x) in sums[usize::from(*j)].iter_mut().zip(v) {
                    *s += x;
                }
            }
            for (c, s) in centroids.iter_mut().zip(sums) {
                let n = norm(&s);
                // A cell left empty keeps its centroid.
                if n > 0.0 && n.is_finite() {
                    *c = s.iter().map(|x| x / n).collect();
                }
            }
        }
        Some(Centroids::quantized(&centroids, dims))
    }

    fn quantized(centroids: &[Vec<f32>], dims: usize) -> Centroids {
        let max = centroids.iter().flatten().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { 32767.0 / max } else { 0.0 };
        Centroids {
            dims,
            codes: centroids
                .iter()
                .flatten()
                .map(|x| (x * scale).round().clamp(-32767.0, 32767.0) as i16)
                .collect(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.codes.len() / self.dims.max(1)
    }

    /// The cell nearest each row of `codes` (rows of eight bits, `dims` each).
    pub(super) fn nearest_all(&self, codes: &[i8]) -> Vec<u16> {
        widest(Nearest { c: self, codes })
    }

    /// Each cell's integer dot product with one row of eight bits.
    fn scores(&self, row: &[i8]) -> Vec<i64> {
        widest(Scores { c: self, row })
    }
}

/// [`Centroids::nearest_all`]'s loop.
struct Nearest<'a> {
    c: &'a Centroids,
    codes: &'a [i8],
}

impl Rows for Nearest<'_> {
    type Output = Vec<u16>;

    #[inline(always)]
    fn run<K: RowDot>(self, k: K) -> Vec<u16> {
        let d = self.c.dims.max(1);
        // Each row's best (score, cell) so far. The centroids are taken a block at a
        // time, small enough to stay in the nearest cache while every row is scored
        // against them (all the centroids, read again for each row, would stream from a
        // farther one): the first of equals wins, as the probe's order has it.
        let mut best = vec![(i64::MIN, 0u16); self.codes.len() / d];
        let mut scores = Vec::with_capacity(NEAREST_BLOCK);
        for (b, block) in self.c.codes.chunks(NEAREST_BLOCK * d).enumerate() {
            let first = b * NEAREST_BLOCK;
            for (row, best) in self.codes.chunks_exact(d).zip(best.iter_mut()) {
                scores.clear();
                score_into(k, block, d, row, &mut scores);
                for (j, s) in scores.iter().enumerate() {
                    if *s > best.0 {
                        *best = (*s, (first + j) as u16);
                    }
                }
            }
        }
        best.into_iter().map(|(_, c)| c).collect()
    }
}

/// Centroids a row is scored against at a time in [`Centroids::nearest_all`]: 32 of 256
/// sixteen-bit components are 16 KiB, within the nearest cache.
const NEAREST_BLOCK: usize = 32;

/// [`Centroids::scores`]'s loop.
struct Scores<'a> {
    c: &'a Centroids,
    row: &'a [i8],
}

impl Rows for Scores<'_> {
    type Output = Vec<i64>;

    #[inline(always)]
    fn run<K: RowDot>(self, k: K) -> Vec<i64> {
        let mut out = Vec::with_capacity(self.c.len());
        score_into(k, &self.c.codes, self.c.dims.max(1), self.row, &mut out);
        out
    }
}

/// The integer dot product of `row` with each of `codes`' rows of `d` components, onto
/// `out`. A plain loop, no closure: a closure is not built at the kernel's level, so the
/// kernel would be called rather than inlined (tens of times slower).
#[inline(always)]
fn score_into<K: RowDot>(k: K, codes: &[i16], d: usize, row: &[i8], out: &mut Vec<i64>) {
    // Four at a time, the row read once for the four.
    let fours = codes.chunks_exact(4 * d);
    let rest = fours.remainder();
    for c in fours {
        let (c0, c) = c.split_at(d);
        let (c1, c) = c.split_at(d);
        let (c2, c3) = c.split_at(d);
        out.extend(k.dot_i8_4(row, [c0, c1, c2, c3]));
    }
    for c in rest.chunks_exact(d) {
        out.push(k.dot_i8(row, c));
    }
}

/// Which cell each row of a fresh set is in (kept beside its rows, moved as they move).
#[derive(Debug, Default)]
pub(super) struct Cells {
    centroids: Option<Arc<Centroids>>,
    /// Each row's cell, or [`NONE`].
    of_row: Vec<u16>,
    sizes: Vec<u32>,
    /// Rows in a cell.
    assigned: usize,
    /// While cells are being made: keys written again meanwhile (their new vector was
    /// not the one assigned).
    building: Option<HashSet<u64>>,
}

impl Cells {
    /// A row added (in no cell).
    pub(super) fn push(&mut self, key: u64) {
        self.of_row.push(NONE);
        if let Some(b) = self.building.as_mut() {
            b.insert(key);
        }
    }

    /// Row `i` taken out, the last row moved into its place.
    pub(super) fn swap_remove(&mut self, i: usize) {
        let c = self.of_row.swap_remove(i);
        if c != NONE {
            self.sizes[usize::from(c)] -= 1;
            self.assigned -= 1;
        }
    }

    /// Rows in a cell.
    pub(super) fn assigned(&self) -> usize {
        self.assigned
    }

    /// Whether the cells should be made (again): the set is large and most of it is in
    /// no cell.
    pub(super) fn due(&self) -> bool {
        let rows = self.of_row.len();
        self.building.is_none()
            && rows >= CELLS_MIN
            && rows - self.assigned >= self.assigned.max(CELLS_MIN / 2)
    }

    /// Cells are being made from now: rows written meanwhile are told apart (and no
    /// second making starts).
    pub(super) fn begin(&mut self) {
        self.building = Some(HashSet::new());
    }

    /// The making begun was given up: the cells stay as they were, and may be made again.
    pub(super) fn abandon(&mut self) {
        self.building = None;
    }

    /// The cells made: `centroids`, and each assigned key's cell (`pos`: each key's
    /// row). A key gone meanwhile is skipped; one written again is left in no cell.
    pub(super) fn install(
        &mut self,
        centroids: Arc<Centroids>,
        assigned: &[(u64, u16)],
        pos: &HashMap<u64, usize>,
    ) {
        let again = self.building.take().unwrap_or_default();
        self.of_row = vec![NONE; self.of_row.len()];
        self.sizes = vec![0; centroids.len()];
        self.assigned = 0;
        for (key, c) in assigned {
            if again.contains(key) || *c == NONE {
                continue;
            }
            if let Some(i) = pos.get(key) {
                self.of_row[*i] = *c;
                self.sizes[usize::from(*c)] += 1;
                self.assigned += 1;
            }
        }
        self.centroids = Some(centroids);
    }

    /// The rows' places in order of their cells (those in none last), for
    /// [`Cells::reorder`]: `order[j]` is the row that goes to place `j`.
    pub(super) fn by_cell(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.of_row.len()).collect();
        order.sort_by_key(|i| self.of_row[*i]);
        order
    }

    /// The rows were put in `order` (see [`Cells::by_cell`]).
    pub(super) fn reorder(&mut self, order: &[usize]) {
        self.of_row = order.iter().map(|i| self.of_row[*i]).collect();
    }

    /// The rows a seek for `q` reads, as runs of places: those of its cells, nearest
    /// cell first (its rows raise the scan's floor early, so fewer of the rest are
    /// kept), then those in none; `None`: all of them.
    pub(super) fn probe(&self, q: &[f32]) -> Option<Vec<Range<usize>>> {
        let c = self.centroids.as_ref()?;
        let budget = (self.assigned / PROBE_SHARE).max(PROBE_MIN);
        if budget >= self.assigned {
            return None;
        }
        let mut codes = Vec::with_capacity(q.len());
        quantize(q, &mut codes);
        let scores = c.scores(&codes);
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|a, b| scores[*b].cmp(&scores[*a]).then(a.cmp(b)));
        // Each cell's rank among those read (u16::MAX: not read), and last of all the
        // rows in none (always read).
        let cells = scores.len();
        let mut rank = vec![u16::MAX; cells + 1];
        rank[cells] = NONE - 1;
        let mut rows = 0usize;
        for (r, j) in order.into_iter().enumerate() {
            if rows >= budget {
                break;
            }
            rank[j] = r as u16;
            rows += self.sizes[j] as usize;
        }
        let mut runs: Vec<(u16, Range<usize>)> = Vec::new();
        for (i, c) in self.of_row.iter().enumerate() {
            let r = rank[usize::from(*c).min(cells)];
            if r == u16::MAX {
                continue;
            }
            match runs.last_mut() {
                Some((last, run)) if run.end == i && *last == r => run.end = i + 1,
                _ => runs.push((r, i..i + 1)),
            }
        }
        runs.sort_by_key(|(r, run)| (*r, run.start));
        Some(runs.into_iter().map(|(_, run)| run).collect())
    }
}

/// Rows a run is cut into at most, to be dealt.
const DEAL: usize = 1024;

/// `runs` dealt into two parts of about as many rows each, in order (a run cut into
/// pieces of at most [`DEAL`] rows), each piece to the part with fewer rows so far:
/// each part reads some of the nearest cells first.
pub(super) fn split_runs(runs: &[Range<usize>]) -> [Vec<Range<usize>>; 2] {
    let mut parts: [Vec<Range<usize>>; 2] = [Vec::new(), Vec::new()];
    let mut rows = [0usize; 2];
    for run in runs {
        for start in run.clone().step_by(DEAL) {
            let piece = start..run.end.min(start + DEAL);
            let p = usize::from(rows[1] < rows[0]);
            rows[p] += piece.len();
            parts[p].push(piece);
        }
    }
    parts
}

/// Whether a row can be put in a cell: a finite vector its eight bits stand for (one
/// that is not is always read, as the whole scan reads it).
pub(super) fn placeable(norm: f32, scale: f32) -> bool {
    norm.is_finite() && norm > 0.0 && scale > 0.0 && scale.is_finite()
}

#[cfg(test)]
mod tests;
