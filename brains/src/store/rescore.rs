//! Which of a recall's candidates can reach its answer, from bounds on their scores: a
//! candidate whose best possible score falls short of the `m`-th best sure score has at
//! least `m` candidates certainly above it, so it is not among the first `m` rows, and
//! its stored vector need not be read.

use std::collections::HashMap;

use redb::ReadTransaction;

use super::Store;
use crate::error::StoreError;
use crate::index::DocId;
use crate::recall::{Fusion, RankMode};

/// How a recall ranks, for bounding its candidates' scores: the fusion and mode it ranks
/// by, and how many rows it can show (its limit, and its weak rows).
pub(super) struct Ranking {
    pub(super) fusion: Fusion,
    pub(super) mode: RankMode,
    pub(super) shown: usize,
}

/// What a recall has learnt of its candidates' cosines: bounds from what the index holds
/// (`None`: only the stored vector tells), and the stored vectors read.
#[derive(Default)]
pub(super) struct Rescore {
    bounds: HashMap<DocId, Option<(f32, f32)>>,
    pub(super) stored: HashMap<DocId, Option<Vec<f32>>>,
}

impl Rescore {
    /// What another side learnt, added.
    pub(super) fn extend(&mut self, other: Rescore) {
        self.bounds.extend(other.bounds);
        self.stored.extend(other.stored);
    }
}

impl Store {
    /// Of `cands` (a claim and its lexical evidence), which can be among the first
    /// `how.shown` rows by score ([`reachable`]), from bounds on their cosines with `qv`;
    /// the stored vectors of those that can, read in `rx` into `r` (once each).
    pub(super) fn rescore(
        &self,
        rx: &ReadTransaction,
        qv: &[f32],
        cands: &[(DocId, f64)],
        how: &Ranking,
        r: &mut Rescore,
    ) -> Result<Vec<bool>, StoreError> {
        let Some(ix) = &self.vindex else {
            return Ok(vec![true; cands.len()]);
        };
        let new: Vec<(DocId, u64)> = cands
            .iter()
            .filter(|(d, _)| !r.bounds.contains_key(d))
            .filter_map(|(d, _)| self.index.key(*d).map(|k| (*d, k)))
            .collect();
        let keys: Vec<u64> = new.iter().map(|(_, k)| *k).collect();
        for ((d, _), b) in new.iter().zip(ix.cosine_bounds(&keys, qv)) {
            r.bounds.insert(*d, b);
        }
        let scores: Vec<(f64, f64)> = cands
            .iter()
            .map(|(d, lex)| {
                let of = |cos: f64| how.fusion.score(how.mode, *lex, Some(cos));
                match r.bounds.get(d) {
                    // No vector: ranked by its words alone.
                    None => {
                        let s = how.fusion.score(how.mode, *lex, None);
                        (s, s)
                    }
                    Some(Some((lo, hi))) => (of(f64::from(*lo)), of(f64::from(*hi))),
                    Some(None) => (of(-1.0), f64::INFINITY),
                }
            })
            .collect();
        let reach = reachable(&scores, how.shown);
        let unread: Vec<DocId> = cands
            .iter()
            .zip(&reach)
            .filter(|((d, _), reaches)| **reaches && !r.stored.contains_key(d))
            .map(|((d, _), _)| *d)
            .collect();
        let read = self.stored_vectors(rx, unread.into_iter())?;
        r.stored.extend(read);
        Ok(reach)
    }
}

/// For each candidate's `(lower, upper)` score bounds, whether it can be among the
/// first `m` of the ranking by its exact score (which lies within its bounds): its
/// upper bound reaches the `m`-th largest lower bound. Ties are kept (they may rank by
/// slug).
pub(super) fn reachable(bounds: &[(f64, f64)], m: usize) -> Vec<bool> {
    if m == 0 {
        return vec![false; bounds.len()];
    }
    if bounds.len() <= m {
        return vec![true; bounds.len()];
    }
    let mut lower: Vec<f64> = bounds.iter().map(|b| b.0).collect();
    let (_, sure, _) = lower.select_nth_unstable_by(m - 1, |a, b| b.total_cmp(a));
    let sure = *sure;
    bounds.iter().map(|b| b.1 >= sure).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_candidate_whose_best_falls_short_of_enough_sure_ones_is_let_go() {
        let bounds = [(0.8, 0.9), (0.7, 0.75), (0.1, 0.69), (0.1, 0.7), (0.0, 1.0)];
        // Two sure above 0.7: the third (upper 0.69) cannot be in the first two; the
        // fourth ties the second's lower bound and is kept.
        assert_eq!(reachable(&bounds, 2), vec![true, true, false, true, true]);
        assert_eq!(reachable(&bounds, 5), vec![true; 5]);
        assert_eq!(reachable(&bounds, 9), vec![true; 5]);
        assert_eq!(reachable(&bounds, 0), vec![false; 5]);
    }

    proptest! {
        /// Whatever exact scores lie within the bounds, every candidate among the first
        /// `m` by exact score (ties by position, as a slug would break them) is kept.
        #[test]
        fn the_first_m_by_any_exact_scores_within_the_bounds_are_kept(
            rows in prop::collection::vec((0.0f64..1.0, 0.0f64..0.3, 0.0f64..1.0), 1..60),
            m in 1usize..20,
        ) {
            let bounds: Vec<(f64, f64)> = rows.iter().map(|(lo, w, _)| (*lo, lo + w)).collect();
            let exact: Vec<f64> = rows.iter().map(|(lo, w, t)| lo + w * t).collect();
            let keep = reachable(&bounds, m);
            let mut order: Vec<usize> = (0..rows.len()).collect();
            order.sort_by(|a, b| exact[*b].total_cmp(&exact[*a]).then(a.cmp(b)));
            for i in order.into_iter().take(m) {
                prop_assert!(keep[i], "row {i} of the first {m} was let go");
            }
        }
    }
}
