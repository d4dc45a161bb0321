//! Upgraded graphs (issue 67): an eight-bit graph written before its rows carried bounds
//! (usearch's own codes, no `vectors.bounds`) gets them in the background, without a
//! rebuild. Each row's bound is worked out from its codes as the graph holds them and
//! its stored vector: the scale that brings the codes nearest to the vector, the
//! residual it leaves, the vector's norm; a bound for any codes, so the graph is not
//! touched. Until a row has one its stored vector is read at recall, as before; recall
//! serves throughout, and answers the same rows (the bounds only spare reads).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::arith::{dot, norm};
use super::bounds::RowBound;
use super::graph::Graph;
use super::loading::ReadVectors;
use super::locks::{lock, read};
use super::settler::Shared;
use super::VectorIndex;

/// Rows worked out at a time: one read of their stored vectors, one lock of the graph.
const CHUNK: usize = 2048;

impl Graph {
    /// The bound of the row `key` holds, for `v`, the vector it stands for; `None` when
    /// the graph does not hold it or holds it in full precision.
    fn bound_for(&self, key: u64, v: &[f32]) -> Option<RowBound> {
        let codes = self.codes_of(key)?;
        let c: Vec<f32> = codes.iter().map(|x| f32::from(*x)).collect();
        let cc = dot(&c, &c);
        let scale = if cc > 0.0 { dot(v, &c) / cc } else { 0.0 };
        let residual = v
            .iter()
            .zip(&c)
            .map(|(x, y)| (x - scale * y).powi(2))
            .sum::<f32>()
            .sqrt();
        Some(RowBound {
            scale,
            residual,
            norm: norm(v),
        })
    }
}

impl Shared {
    /// Work out and keep the bounds of `keys`, reading their stored vectors with `read`.
    fn backfill(self: &Arc<Self>, keys: &[u64], mut read_vectors: ReadVectors) {
        let mut done = 0usize;
        for chunk in keys.chunks(CHUNK) {
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            let rows = match read_vectors(chunk) {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(error = %e, "the graph's bounds could not be worked out; its rows' vectors are read at recall, as before");
                    return;
                }
            };
            // The graph may not lose a row meanwhile: a removal takes it whole.
            let graph = read(&self.graph);
            for (key, v) in &rows {
                if let Some(b) = graph.bound_for(*key, v) {
                    graph.set_bound(*key, b);
                    done += 1;
                }
            }
        }
        read(&self.graph).save_bounds();
        tracing::info!(rows = done, "an upgraded graph's rows have their bounds");
    }
}

impl VectorIndex {
    /// Bounds for the rows of `keys` the graph holds without one (a graph written before
    /// rows carried bounds), worked out on a thread of its own at low priority from the
    /// vectors `read` gives. Nothing for a graph that holds no eight-bit rows, or whose
    /// rows all have bounds.
    pub fn backfill_bounds(&self, keys: impl IntoIterator<Item = u64>, read_vectors: ReadVectors) {
        let keys: Vec<u64> = {
            let graph = read(&self.shared.graph);
            if !graph.holds_codes() {
                return;
            }
            keys.into_iter().filter(|k| graph.lacks_bound(*k)).collect()
        };
        if keys.is_empty() {
            return;
        }
        tracing::info!(rows = keys.len(), "the graph's rows carry no bounds (a graph from before them): working them out in the background");
        let shared = self.shared.clone();
        let spawned = std::thread::Builder::new()
            .name("vector-bounds".into())
            .spawn(move || {
                crate::background::yield_to_callers();
                shared.backfill(&keys, read_vectors);
            });
        match spawned {
            Ok(h) => *lock(&self.shared.backfiller) = Some(h),
            Err(e) => {
                tracing::warn!(error = %e, "no thread to work the graph's bounds out on: its rows' vectors are read at recall, as before")
            }
        }
    }

    /// Wait until the bounds being worked out are (or the work stopped).
    pub fn wait_backfilled(&self) {
        let h = lock(&self.shared.backfiller).take();
        if let Some(h) = h {
            let _ = h.join();
        }
    }
}
