//! Near-duplicates: live claims that say nearly what a new claim says, under another
//! label, so its writer can supersede instead of duplicating. Candidates come from the
//! store's own recall (the new claim as the query); each is scored by how much of the two
//! claims' words they share (Dice over stemmed terms, label and text) and, with a model,
//! by the cosine of their embeddings. The weights and the threshold were calibrated on a
//! labelled set of codebase facts (`tests/data/near-duplicates.tsv`; figures in
//! docs/BENCHMARKS.md).

use std::collections::HashSet;

use redb::ReadableDatabase;

use super::Store;
use crate::claim::Claim;
use crate::error::StoreError;
use crate::lexical::tokenize;

/// How many candidates of the recall are scored.
pub(super) const CANDIDATES: usize = 5;

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
    /// Candidates are the few nearest by words and by embedding (not a full recall: no
    /// fusion over dozens of candidates, no relevance floor), each read once.
    pub fn similar_scored(
        &self,
        label: &str,
        text: &str,
        exclude: Option<&str>,
    ) -> Result<Vec<SimilarHit>, StoreError> {
        let whole = format!("{label} {text}");
        // One snapshot for the stored vectors and the claims read below.
        let rx = self.db.begin_read()?;
        let ix_claims = &self.index;
        let excluded = exclude.and_then(|s| ix_claims.doc(s));
        let keep = |d: crate::index::DocId| Some(d) != excluded;
        let mut cands: Vec<(crate::index::DocId, Option<f64>)> = ix_claims
            .search(&ix_claims.prepare(&whole), CANDIDATES, &keep)
            .into_iter()
            .map(|h| (h.doc, None))
            .collect();
        // The claim's own vector, as a stored claim's is made: the one just written when
        // it is in the index (no second embedding on the write path), else embedded now.
        let qv: Option<Vec<f32>> = match (&self.opts.embedder, &self.vindex) {
            (Some(e), Some(ix)) => {
                let stored = match excluded {
                    Some(d) if self.opts.precision.rescores() => self.stored_vector(&rx, d)?,
                    Some(d) => ix_claims.key(d).and_then(|k| ix.vector(k)),
                    None => None,
                };
                match stored {
                    Some(v) => Some(v),
                    // A model that defers is not waited for on the write path: the
                    // words alone find the neighbours until the vector comes.
                    None if e.deferred() => None,
                    None => e
                        .embed(&[super::embed_text(label, text).as_str()])
                        .map_err(|e| StoreError::Embedding(e.to_string()))?
                        .pop(),
                }
            }
            _ => None,
        };
        if let (Some(ix), Some(qv)) = (&self.vindex, &qv) {
            for (key, sim) in ix.search_all(qv, CANDIDATES + 1)? {
                let Some(d) = ix_claims.doc_of_key(key) else {
                    continue;
                };
                if !keep(d) {
                    continue;
                }
                match cands.iter_mut().find(|(c, _)| *c == d) {
                    Some(c) => c.1 = Some(f64::from(sim)),
                    None => cands.push((d, Some(f64::from(sim)))),
                }
            }
            if self.opts.precision.rescores() {
                let exact = self.stored_cosines(&rx, qv, cands.iter().map(|(d, _)| *d))?;
                for (d, cos) in cands.iter_mut() {
                    *cos = exact.get(d).copied().or(Some(0.0));
                }
            } else {
                for (d, cos) in cands.iter_mut().filter(|(_, c)| c.is_none()) {
                    *cos = ix_claims
                        .key(*d)
                        .and_then(|k| ix.similarity(k, qv))
                        .map(f64::from)
                        .or(Some(0.0));
                }
            }
        }
        let claims = rx.open_table(super::tables::CLAIMS)?;
        let mut out = Vec::with_capacity(cands.len());
        for (d, cosine) in cands {
            let Some(v) = claims.get(ix_claims.slug(d))? else {
                continue;
            };
            let claim = super::decode(v.value())?;
            let o = overlap(&whole, &format!("{} {}", claim.label, claim.text));
            out.push(SimilarHit {
                score: score(o, cosine),
                overlap: o,
                cosine,
                claim,
            });
        }
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
        let capped = self.index.len() > max;
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
