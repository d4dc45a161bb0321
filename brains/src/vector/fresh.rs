//! Fresh vectors: written, not yet settled into the graph. Kept flat, in full precision,
//! and searched exactly (a scan), so a claim is found by its vector the moment its write
//! returns, whatever the graph's insert costs.
//!
//! A large fresh set (a bulk import leaves up to 131 072 while the settler is held) is
//! scanned through an eight-bit copy of each vector first: a quarter of the memory read
//! per query, and integer arithmetic. Each row's cosine is known from it to within a
//! bound the row carries (its rounding residual), so only the rows whose bound reaches
//! the k-th best lower bound are rescored from the full vectors, and the answer is the
//! exact scan's, score for score.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

/// The dot product, in eight lanes the compiler turns into vector instructions.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for j in 0..8 {
            acc[j] += x[j] * y[j];
        }
    }
    acc.iter().sum::<f32>() + tail
}

pub(super) fn norm(v: &[f32]) -> f32 {
    dot(v, v).sqrt()
}

/// The integer dot product of an eight-bit row and a sixteen-bit query, exact.
fn dot_i8(a: &[i8], b: &[i16]) -> i32 {
    let mut acc = [0i32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: i32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    for (x, y) in ca.zip(cb) {
        for j in 0..16 {
            acc[j] += i32::from(x[j]) * i32::from(y[j]);
        }
    }
    acc.iter().sum::<i32>() + tail
}

/// An f32's place in the order of f32s (NaN aside), as an unsigned integer.
fn order_key(x: f32) -> u32 {
    let b = x.to_bits();
    if b >> 31 == 1 {
        !b
    } else {
        b | 0x8000_0000
    }
}

fn from_order_key(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & 0x7fff_ffff } else { !k })
}

/// Fresh sets below this are scanned in full precision alone.
const QUANTIZED_SCAN_MIN: usize = 4096;

/// Slack added to every bound for the rounding of the arithmetic itself (cosines are
/// computed in f32 to ~1e-6).
const BOUND_SLACK: f32 = 1e-4;

/// How a row's eight bits stand for it: `v ≈ scale × codes`, how far the rounding left
/// it (`residual`, the norm of the difference) and the rounded vector's norm.
#[derive(Debug, Clone, Copy)]
struct Rounding {
    scale: f32,
    residual: f32,
    rounded: f32,
}

/// Append `v` in eight bits to `codes`, and say how it was rounded.
fn quantize(v: &[f32], codes: &mut Vec<i8>) -> Rounding {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        codes.extend(std::iter::repeat_n(0, v.len()));
        return Rounding {
            scale: 0.0,
            residual: norm(v),
            rounded: 0.0,
        };
    }
    let scale = max / 127.0;
    let (mut residual, mut rounded) = (0f32, 0f32);
    for x in v {
        let c = (x / scale).round().clamp(-127.0, 127.0) as i8;
        let r = scale * f32::from(c);
        residual += (x - r) * (x - r);
        rounded += r * r;
        codes.push(c);
    }
    Rounding {
        scale,
        residual: residual.sqrt(),
        rounded: rounded.sqrt(),
    }
}

/// Cosine similarity; 0 when either vector is zero.
pub(super) fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot(a, b) / (na * nb)
    }
}

#[derive(Debug, Default)]
pub(super) struct Fresh {
    dims: usize,
    keys: Vec<u64>,
    /// `keys.len() × dims` components, row by row.
    data: Vec<f32>,
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

    pub(super) fn contains(&self, key: u64) -> bool {
        self.pos.contains_key(&key)
    }

    fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dims..(i + 1) * self.dims]
    }

    pub(super) fn get(&self, key: u64) -> Option<&[f32]> {
        self.pos.get(&key).map(|i| self.row(*i))
    }

    /// Add a vector (its key replaces an earlier one).
    pub(super) fn push(&mut self, key: u64, v: &[f32]) {
        self.remove(key);
        self.pos.insert(key, self.keys.len());
        self.keys.push(key);
        self.data.extend_from_slice(v);
        self.norms.push(norm(v));
        let rounding = quantize(v, &mut self.codes);
        self.roundings.push(rounding);
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
        let last = self.keys.len() - 1;
        if i != last {
            self.keys.swap(i, last);
            self.norms.swap(i, last);
            self.roundings.swap(i, last);
            let d = self.dims;
            let (head, tail) = self.data.split_at_mut(last * d);
            head[i * d..(i + 1) * d].copy_from_slice(&tail[..d]);
            let (head, tail) = self.codes.split_at_mut(last * d);
            head[i * d..(i + 1) * d].copy_from_slice(&tail[..d]);
            self.pos.insert(self.keys[i], i);
        }
        self.keys.pop();
        self.norms.pop();
        self.roundings.pop();
        self.data.truncate(last * self.dims);
        self.codes.truncate(last * self.dims);
        true
    }

    /// Up to `n` vectors for the settler, marked moving (copies: they stay here, found
    /// by the scan, until [`Fresh::settled`]).
    pub(super) fn take_batch(&mut self, n: usize) -> Vec<(u64, Vec<f32>)> {
        let batch: Vec<(u64, Vec<f32>)> = (0..self.len().min(n))
            .map(|i| (self.keys[i], self.row(i).to_vec()))
            .collect();
        self.moving.extend(batch.iter().map(|(k, _)| *k));
        batch
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

    /// The `k` most similar vectors `keep` admits, exactly, best first.
    pub(super) fn scan(&self, q: &[f32], k: usize, keep: &dyn Fn(u64) -> bool) -> Vec<(u64, f32)> {
        self.scan_from(q, k, keep, QUANTIZED_SCAN_MIN)
    }

    /// [`Fresh::scan`], through the eight-bit rows once the set holds `quantized_min`.
    fn scan_from(
        &self,
        q: &[f32],
        k: usize,
        keep: &dyn Fn(u64) -> bool,
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
                dot(self.row(i), q) / (n * qn)
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
    fn shortlist(&self, q: &[f32], qn: f32, k: usize, keep: &dyn Fn(u64) -> bool) -> Vec<usize> {
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
        let d = self.dims;
        // |q·v − q̂·v̂| ≤ |q|·|v − v̂| + |v̂|·|q − q̂|: each row's cosine within its bound.
        // The k best lower bounds so far (a min-heap) give a floor no row whose upper
        // bound falls short of can pass; the floor only rises.
        let mut best: BinaryHeap<Reverse<u32>> = BinaryHeap::with_capacity(k + 1);
        let mut floor = f32::NEG_INFINITY;
        let mut rows: Vec<(usize, f32)> = Vec::new();
        for i in 0..self.len() {
            if !keep(self.keys[i]) {
                continue;
            }
            let n = self.norms[i];
            let (lower, upper) = if n == 0.0 {
                (0.0, 0.0)
            } else {
                let r = self.roundings[i];
                let approx = r.scale * qscale * dot_i8(&self.codes[i * d..(i + 1) * d], &qi) as f32;
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
            f.push(k, &[k as f32, 1.0, 0.0]);
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
        f.push(1, &[1.0, 0.0]);
        f.push(2, &[0.0, 1.0]);
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
        f.push(1, &[1.0, 0.0, 0.0]);
        f.push(2, &[f32::NAN, 1.0, 0.0]);
        f.push(3, &[f32::INFINITY, 0.0, 0.0]);
        f.push(4, &[0.5, 0.5, 0.0]);
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
            queries in proptest::collection::vec((0usize..200, proptest::collection::vec(-0.05f32..0.05, 19), 1usize..12, 0u64..4), 1..6),
        ) {
            let mut f = Fresh::new(19);
            for (i, v) in vs.iter().enumerate() {
                f.push(i as u64 + 1, v);
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
