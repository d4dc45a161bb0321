//! The fresh set's scan: the `k` rows most similar to a query, exactly. A large set is
//! read through its eight-bit rows first (a quarter of the memory, integer arithmetic):
//! each row's cosine is known from them to within a bound, so only the rows whose bound
//! reaches the k-th best lower bound are rescored from the full vectors, and the answer
//! is the exact scan's, score for score; past [`PARALLEL_SCAN_MIN`] rows in two halves
//! on two cores, and for a backlog parted into cells, only the query's nearest cells.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

use super::super::arith::{
    dot, dot_codes, from_order_key, norm, order_key, widest, RowDot, Rows, BOUND_SLACK,
};
use super::super::cells::split_runs;
use super::super::Keep;
use super::Fresh;

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

impl Fresh {
    /// The `k` most similar vectors `keep` admits, best first: exactly, but for lean
    /// rows, which are scored by their eight bits, and for a set parted into cells,
    /// of which only the query's nearest are read (`cells.rs`).
    pub(in crate::vector) fn scan(&self, q: &[f32], k: usize, keep: &Keep<'_>) -> Vec<(u64, f32)> {
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
