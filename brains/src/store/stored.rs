//! Claims' stored vectors, read from redb: the exact f32 a claim was embedded to. The
//! graph of an eight-bit index only nominates candidates; their cosines come from here
//! ([`crate::vector::Precision::rescores`]).

use std::collections::HashMap;

use redb::ReadTransaction;

use super::tables::VECTORS;
use super::{from_bytes, Store};
use crate::error::StoreError;
use crate::index::DocId;

impl Store {
    /// The cosine of each claim's stored vector with `q`, read in the caller's
    /// transaction (the one its claims are read in); a claim with no stored vector gets
    /// 0 (no dense evidence).
    pub(super) fn stored_cosines(
        &self,
        rx: &ReadTransaction,
        q: &[f32],
        docs: impl Iterator<Item = DocId>,
    ) -> Result<HashMap<DocId, f64>, StoreError> {
        Ok(self
            .stored_vectors(rx, docs)?
            .into_iter()
            .map(|(d, v)| (d, cosine_of(v.as_deref(), q)))
            .collect())
    }

    /// Each claim's stored vector, read in the caller's transaction: `None` for a claim
    /// whose vector is not stored. A claim with no vector yet is left out: it has no
    /// cosine to rank by.
    pub(super) fn stored_vectors(
        &self,
        rx: &ReadTransaction,
        docs: impl Iterator<Item = DocId>,
    ) -> Result<HashMap<DocId, Option<Vec<f32>>>, StoreError> {
        let vectors = rx.open_table(VECTORS)?;
        let mut out = HashMap::new();
        for d in docs {
            if let Some(k) = self.index.key(d) {
                out.insert(d, vectors.get(k)?.map(|v| from_bytes(v.value())));
            }
        }
        Ok(out)
    }

    /// A claim's stored vector, read in the caller's transaction.
    pub(super) fn stored_vector(
        &self,
        rx: &ReadTransaction,
        d: DocId,
    ) -> Result<Option<Vec<f32>>, StoreError> {
        let Some(k) = self.index.key(d) else {
            return Ok(None);
        };
        let vectors = rx.open_table(VECTORS)?;
        Ok(vectors.get(k)?.map(|v| from_bytes(v.value())))
    }
}

/// A stored vector's cosine with `q`; 0 (no dense evidence) when none is stored.
pub(super) fn cosine_of(v: Option<&[f32]>, q: &[f32]) -> f64 {
    v.map_or(0.0, |v| f64::from(crate::vector::cosine(v, q)))
}
