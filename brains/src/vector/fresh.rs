//! Fresh vectors: written, not yet settled into the graph. Kept flat, in full precision,
//! and searched exactly (a scan), so a claim is found by its vector the moment its write
//! returns, whatever the graph's insert costs.

use std::collections::{HashMap, HashSet};

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
            let d = self.dims;
            let (head, tail) = self.data.split_at_mut(last * d);
            head[i * d..(i + 1) * d].copy_from_slice(&tail[..d]);
            self.pos.insert(self.keys[i], i);
        }
        self.keys.pop();
        self.norms.pop();
        self.data.truncate(last * self.dims);
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
        let qn = norm(q);
        if k == 0 || qn == 0.0 || self.is_empty() {
            return vec![];
        }
        let mut all: Vec<(u64, f32)> = (0..self.len())
            .filter(|i| keep(self.keys[*i]))
            .map(|i| {
                let n = self.norms[i];
                let sim = if n == 0.0 {
                    0.0
                } else {
                    dot(self.row(i), q) / (n * qn)
                };
                (self.keys[i], sim)
            })
            .collect();
        let order = |a: &(u64, f32), b: &(u64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if all.len() > k {
            all.select_nth_unstable_by(k - 1, order);
            all.truncate(k);
        }
        all.sort_by(order);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
