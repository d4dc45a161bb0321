//! Near-duplicates: live claims that say nearly what a new claim says, under another
//! label, so its writer can supersede instead of duplicating. Candidates come from the
//! store's own recall (the new claim as the query); each is scored by how much of the two
//! claims' words they share (Dice over stemmed terms, label and text) and, with a model,
//! by the cosine of their embeddings. The weights and the threshold were calibrated on a
//! labelled set of codebase facts (`tests/data/near-duplicates.tsv`; figures in
//! docs/BENCHMARKS.md).

use std::collections::HashSet;

use super::Store;
use crate::claim::Claim;
use crate::error::StoreError;
use crate::lexical::tokenize;
use crate::recall::{RankMode, RecallQuery};

/// How many candidates of the recall are scored.
const CANDIDATES: usize = 8;

/// The weight of the cosine in the hybrid score; the rest is the word overlap.
pub const VECTOR_WEIGHT: f64 = 0.5;
/// A candidate at or above this hybrid score is said to be near (model loaded).
pub const THRESHOLD_HYBRID: f64 = 0.5;
/// The same for the word overlap alone (no model).
pub const THRESHOLD_LEXICAL: f64 = 0.4;

/// A live claim that says nearly what the new one says.
#[derive(Debug, Clone)]
pub struct SimilarHit {
    pub claim: Claim,
    /// The score the threshold is applied to, in 0..1.
    pub score: f64,
    /// Dice coefficient of the two claims' stemmed terms.
    pub overlap: f64,
    /// Cosine of the two embeddings, with a model.
    pub cosine: Option<f64>,
}

/// Dice over stemmed term sets.
pub fn overlap(a: &str, b: &str) -> f64 {
    let ta: HashSet<String> = tokenize(a).into_iter().collect();
    let tb: HashSet<String> = tokenize(b).into_iter().collect();
    if ta.is_empty() || tb.is_empty() {
        return 0.0;
    }
    2.0 * ta.intersection(&tb).count() as f64 / (ta.len() + tb.len()) as f64
}

/// The score of a candidate: the overlap, blended with the cosine when there is one.
pub fn score(overlap: f64, cosine: Option<f64>) -> f64 {
    match cosine {
        Some(c) => (1.0 - VECTOR_WEIGHT) * overlap + VECTOR_WEIGHT * c.max(0.0),
        None => overlap,
    }
}

impl Store {
    /// Live claims, other than `exclude`, that say nearly what `label`/`text` says, best
    /// first, each at or above the threshold of this store's retrieval mode.
    pub fn similar(
        &self,
        label: &str,
        text: &str,
        exclude: Option<&str>,
    ) -> Result<Vec<SimilarHit>, StoreError> {
        let mut out = self.similar_scored(label, text, exclude)?;
        let threshold = if self.vindex.is_some() {
            THRESHOLD_HYBRID
        } else {
            THRESHOLD_LEXICAL
        };
        out.retain(|h| h.score >= threshold);
        Ok(out)
    }

    /// Every candidate with its score, best first, whatever its score: for calibration.
    pub fn similar_scored(
        &self,
        label: &str,
        text: &str,
        exclude: Option<&str>,
    ) -> Result<Vec<SimilarHit>, StoreError> {
        let whole = format!("{label} {text}");
        let q = RecallQuery {
            text: whole.clone(),
            limit: CANDIDATES,
            mode: RankMode::default(),
            matched_only: false,
            ..Default::default()
        };
        let mut out: Vec<SimilarHit> = self
            .recall(&q)?
            .hits
            .into_iter()
            .filter(|h| Some(h.claim.slug.as_str()) != exclude)
            .map(|h| {
                let o = overlap(&whole, &format!("{} {}", h.claim.label, h.claim.text));
                SimilarHit {
                    score: score(o, h.vector),
                    overlap: o,
                    cosine: h.vector,
                    claim: h.claim,
                }
            })
            .collect();
        out.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(out)
    }
}

/// Clusters of live claims that say nearly the same thing, found among the `max` most
/// recent live claims (each checked against the whole store); `true` when the store held
/// more than that and older claims were not checked.
#[derive(Debug, Clone, Default)]
pub struct Clusters {
    /// Each cluster's (slug, label) pairs, by slug; clusters by their first slug.
    pub clusters: Vec<Vec<(String, String)>>,
    pub capped: bool,
}

impl Store {
    /// Group near-duplicate live claims (see [`Store::similar`]) into clusters.
    pub fn near_duplicate_clusters(&self, max: usize) -> Result<Clusters, StoreError> {
        let recent = self.recent(max)?;
        let capped = self.meta.len() > max;
        let mut parent: std::collections::HashMap<String, String> = Default::default();
        fn root(p: &mut std::collections::HashMap<String, String>, x: &str) -> String {
            let mut cur = x.to_string();
            while let Some(next) = p.get(&cur).filter(|n| **n != cur).cloned() {
                cur = next;
            }
            cur
        }
        let mut labels: std::collections::HashMap<String, String> = Default::default();
        for c in &recent {
            labels.insert(c.slug.clone(), c.label.clone());
            for h in self.similar(&c.label, &c.text, Some(&c.slug))? {
                labels.insert(h.claim.slug.clone(), h.claim.label.clone());
                let (a, b) = (root(&mut parent, &c.slug), root(&mut parent, &h.claim.slug));
                if a != b {
                    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                    parent.insert(hi, lo.clone());
                    parent.entry(lo.clone()).or_insert(lo);
                }
            }
        }
        let mut groups: std::collections::BTreeMap<String, Vec<(String, String)>> =
            Default::default();
        let members: Vec<String> = parent.keys().cloned().collect();
        for m in members {
            let r = root(&mut parent, &m);
            let label = labels.get(&m).cloned().unwrap_or_default();
            groups.entry(r).or_default().push((m, label));
        }
        let clusters = groups
            .into_values()
            .filter(|g| g.len() > 1)
            .map(|mut g| {
                g.sort();
                g
            })
            .collect();
        Ok(Clusters { clusters, capped })
    }
}
