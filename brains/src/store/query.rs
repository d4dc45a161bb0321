//! Recall: lexical and dense candidates, scope and filters, fusion and the floor.

use std::collections::HashMap;
use std::sync::Arc;

use redb::ReadableDatabase;

use super::tables::CLAIMS;
use super::{decode, Store};
use crate::error::StoreError;
use crate::recall::{Fusion, Hit, RankMode, RecallQuery, RecallResult, Retrieval};

impl Store {
    fn in_scope(&self, scope: &Option<String>, slug: &str) -> bool {
        match scope.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            None => true,
            Some(p) => {
                let p = p.to_lowercase();
                slug.starts_with(&p) || self.meta.get(slug).is_some_and(|m| m.label.starts_with(&p))
            }
        }
    }

    /// Scope and filters: the candidate predicate of a recall.
    fn admits(&self, q: &RecallQuery, slug: &str) -> bool {
        self.in_scope(&q.scope, slug)
            && (q.filter.is_empty() || self.meta.get(slug).is_some_and(|m| q.filter.admits(m)))
    }

    /// The query's vector: the caller's when it fits this store's model, else embedded
    /// here. `None` without a model or when the text has no known token.
    fn query_vector(&self, q: &RecallQuery) -> Result<Option<Arc<[f32]>>, StoreError> {
        let Some(e) = &self.opts.embedder else {
            return Ok(None);
        };
        let v = match &q.vector {
            Some(v) if v.len() == e.dims() => v.clone(),
            _ => crate::embed::embed_query(e.as_ref(), &q.text)
                .map_err(|e| StoreError::Embedding(e.to_string()))?,
        };
        Ok(v.iter().any(|x| *x != 0.0).then_some(v))
    }

    /// Recall over live versions: lexical and dense evidence for every candidate of
    /// either list, fused, then the relevance floor (see [`Fusion`]).
    pub fn recall(&self, q: &RecallQuery) -> Result<RecallResult, StoreError> {
        let limit = q.limit.max(1);
        let now = self.now_ms();
        if q.text.trim().is_empty() {
            let mut all = self.live_claims()?;
            all.retain(|c| self.admits(q, &c.slug));
            all.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.slug.cmp(&b.slug)));
            all.truncate(limit);
            let hits = all
                .into_iter()
                .map(|c| Hit {
                    overlay: self.opts.aging.overlay(c.created, now),
                    claim: c,
                    score: 0.0,
                    lexical_rank: None,
                    vector_rank: None,
                    lexical: 0.0,
                    vector: None,
                    // A listing, not a search: there is no query to fall short of.
                    matched: true,
                })
                .collect();
            return Ok(RecallResult {
                hits,
                retrieval: self.retrieval(),
            });
        }
        let fusion = Fusion::DEFAULT;
        let depth = (limit * 4).max(50);
        let keep = |slug: &str| self.admits(q, slug);
        let lq = self.lexical.prepare(&q.text);
        let lexical = if q.mode == RankMode::Vector {
            vec![]
        } else {
            self.lexical.search_prepared(&lq, depth, &keep)
        };
        let qv = match (q.mode, &self.vindex) {
            (RankMode::Lexical, _) | (_, None) => None,
            (_, Some(_)) => self.query_vector(q)?,
        };
        let mut vector: Vec<(String, f64)> = vec![];
        if let (Some(ix), Some(qv)) = (&self.vindex, &qv) {
            let keep_key = |k: u64| self.key_to_slug.get(&k).is_some_and(|s| keep(s));
            let unfiltered =
                q.scope.as_deref().is_none_or(|s| s.trim().is_empty()) && q.filter.is_empty();
            let found = if unfiltered {
                ix.search_all(qv, depth)?
            } else {
                ix.search(qv, depth, &keep_key)?
            };
            vector = found
                .into_iter()
                .filter_map(|(k, sim)| self.key_to_slug.get(&k).map(|s| (s.clone(), sim as f64)))
                .collect();
        }
        let hybrid = qv.is_some();
        // Every candidate of either list gets both kinds of evidence, exactly.
        struct Cand {
            lex: f64,
            cos: Option<f64>,
            lex_rank: Option<usize>,
            vec_rank: Option<usize>,
        }
        let mut cands: HashMap<String, Cand> = HashMap::new();
        for (i, h) in lexical.iter().enumerate() {
            cands.insert(
                h.slug.clone(),
                Cand {
                    lex: h.norm,
                    cos: None,
                    lex_rank: Some(i + 1),
                    vec_rank: None,
                },
            );
        }
        for (i, (slug, sim)) in vector.iter().enumerate() {
            let c = cands.entry(slug.clone()).or_insert_with(|| Cand {
                lex: if q.mode == RankMode::Vector {
                    0.0
                } else {
                    self.lexical.score(&lq, slug).map(|h| h.norm).unwrap_or(0.0)
                },
                cos: None,
                lex_rank: None,
                vec_rank: None,
            });
            c.cos = Some(*sim);
            c.vec_rank = Some(i + 1);
        }
        if let (Some(ix), Some(qv)) = (&self.vindex, &qv) {
            for (slug, c) in cands.iter_mut().filter(|(_, c)| c.cos.is_none()) {
                c.cos = self
                    .slug_to_key
                    .get(slug)
                    .and_then(|k| ix.similarity(*k, qv))
                    .map(f64::from)
                    .or(Some(0.0));
            }
        }
        let mode = match q.mode {
            RankMode::Auto if !hybrid => RankMode::Lexical,
            RankMode::Vector if !hybrid => RankMode::Vector,
            m => m,
        };
        let floor = fusion.floor(mode, hybrid);
        let scored: Vec<(String, Cand, f64)> = cands
            .into_iter()
            .map(|(slug, c)| {
                let score = fusion.score(mode, c.lex, c.cos);
                (slug, c, score)
            })
            .collect();
        let best = scored.iter().map(|r| r.2).fold(0.0, f64::max);
        let mut ranked: Vec<(String, Cand, f64, bool)> = scored
            .into_iter()
            .map(|(slug, c, score)| {
                let matched = floor.passes(score, best);
                (slug, c, score, matched)
            })
            .filter(|r| r.3 || !q.matched_only)
            .collect();
        ranked.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
        ranked.truncate(limit);
        let rx = self.db.begin_read()?;
        let claims = rx.open_table(CLAIMS)?;
        let mut hits = Vec::with_capacity(ranked.len());
        for (slug, c, score, matched) in ranked {
            let Some(v) = claims.get(slug.as_str())? else {
                continue;
            };
            let claim = decode(v.value())?;
            hits.push(Hit {
                overlay: self.opts.aging.overlay(claim.created, now),
                claim,
                score,
                lexical_rank: c.lex_rank,
                vector_rank: c.vec_rank,
                lexical: c.lex,
                vector: c.cos,
                matched,
            });
        }
        Ok(RecallResult {
            hits,
            retrieval: if self.vindex.is_some() && q.mode != RankMode::Lexical {
                Retrieval::Hybrid
            } else {
                Retrieval::Lexical
            },
        })
    }
}
