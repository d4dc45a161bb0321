//! Recall: lexical and dense candidates, scope and filters, fusion and the floor.

use std::collections::HashMap;
use std::sync::Arc;

use redb::ReadableDatabase;

use super::rescore::{Ranking, Rescore};
use super::stored::cosine_of;
use super::tables::CLAIMS;
use super::{decode, Store};
use crate::error::StoreError;
use crate::index::{ClaimIndex, DocId};
use crate::lexical::LexHit;
use crate::recall::{Fusion, Hit, RankMode, RecallQuery, RecallResult, Retrieval};

/// The dense side: the query's vector; the claims nearest it, each with its cosine
/// and its lexical evidence; what it learnt of their cosines.
type Dense = (Option<Arc<[f32]>>, Vec<(DocId, f64, f64)>, Rescore);

/// Scope and filters, prepared once per recall: the candidate predicate.
struct Admit<'a> {
    /// The scope, trimmed and lowercased; `None` admits every claim.
    scope: Option<String>,
    filter: &'a crate::recall::RecallFilter,
}

impl<'a> Admit<'a> {
    fn new(q: &'a RecallQuery) -> Admit<'a> {
        Admit {
            scope: q
                .scope
                .as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_lowercase),
            filter: &q.filter,
        }
    }

    fn is_open(&self) -> bool {
        self.scope.is_none() && self.filter.is_empty()
    }

    fn admits(&self, index: &ClaimIndex, d: DocId) -> bool {
        if self.is_open() {
            return true;
        }
        let Some(m) = index.meta(d) else {
            return false;
        };
        if let Some(p) = &self.scope {
            if !index.slug(d).starts_with(p.as_str()) && !m.label.starts_with(p.as_str()) {
                return false;
            }
        }
        self.filter.is_empty() || self.filter.admits(&m)
    }

    /// [`Admit::admits`] of a claim read whole from redb.
    fn admits_claim(&self, c: &crate::claim::Claim) -> bool {
        let m = crate::index::ClaimMeta::of(c);
        if let Some(p) = &self.scope {
            if !c.slug.starts_with(p.as_str()) && !m.label.starts_with(p.as_str()) {
                return false;
            }
        }
        self.filter.is_empty() || self.filter.admits(&m.as_ref())
    }
}

impl Store {
    /// A candidate's cosine: the one found, else 0 for a claim with a vector the search
    /// did not reach; `None` for a claim with no vector yet (a deferring model's
    /// background has not embedded it), which is then ranked by its words alone rather
    /// than as a claim unlike the query.
    fn cosine_or_none(&self, d: DocId, found: Option<f64>) -> Option<f64> {
        match (found, self.index.key(d)) {
            (Some(c), _) => Some(c),
            (None, Some(_)) => Some(0.0),
            (None, None) => None,
        }
    }

    /// The query's vector: the caller's when it fits this store's model, else embedded
    /// here. `None` without a model or when the text has no known token.
    fn query_vector(&self, q: &RecallQuery) -> Result<Option<Arc<[f32]>>, StoreError> {
        let Some(e) = &self.opts.embedder else {
            return Ok(None);
        };
        let v = match &q.vector {
            Some(v)
                if v.len() == e.dims() && q.vector_model.as_deref().is_none_or(|m| m == e.id()) =>
            {
                v.clone()
            }
            _ => crate::embed::embed_query(e.as_ref(), &q.text)
                .map_err(|e| StoreError::Embedding(e.to_string()))?,
        };
        Ok(v.iter().any(|x| *x != 0.0).then_some(v))
    }

    /// The query's vector: none in lexical mode, without a model, or for a query the
    /// model has no words of.
    fn dense_query(&self, q: &RecallQuery) -> Result<Option<Arc<[f32]>>, StoreError> {
        match (q.mode, &self.vindex) {
            (RankMode::Lexical, _) | (_, None) => Ok(None),
            (_, Some(_)) => self.query_vector(q),
        }
    }

    /// The nearest admitted claims to the query's vector.
    fn dense(
        &self,
        qv: Option<&[f32]>,
        admit: &Admit,
        depth: usize,
    ) -> Result<Vec<(DocId, f64)>, StoreError> {
        let (Some(ix), Some(v)) = (&self.vindex, qv) else {
            return Ok(vec![]);
        };
        let found = if admit.is_open() {
            ix.search_all(v, depth)?
        } else {
            let keep_key = |k: u64| {
                self.index
                    .doc_of_key(k)
                    .is_some_and(|d| admit.admits(&self.index, d))
            };
            ix.search(v, depth, &keep_key)?
        };
        Ok(found
            .into_iter()
            .filter_map(|(k, sim)| self.index.doc_of_key(k).map(|d| (d, sim as f64)))
            .collect())
    }

    /// Recall over live versions: lexical and dense evidence for every candidate of
    /// either list, fused, then the relevance floor (see [`Fusion`]).
    pub fn recall(&self, q: &RecallQuery) -> Result<RecallResult, StoreError> {
        let limit = q.limit.max(1);
        let now = self.now_ms();
        if q.text.trim().is_empty() {
            let admit = Admit::new(q);
            let all = self.recent_where(limit, &|d| admit.admits(&self.index, d), &|c| {
                admit.admits_claim(c)
            })?;
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
                // A listing: nothing was looked for by meaning.
                vectors_loading: 0,
            });
        }
        // Read before the search: a vector read meanwhile is counted, never one missed.
        let vectors_loading = if q.mode == RankMode::Lexical {
            0
        } else {
            self.vectors_loading()
        };
        // One calibration for both models: swept on the dev split with all-MiniLM-L6-v2,
        // the best floors found came within 0.004 of its R@10 (docs/BENCHMARKS.md).
        let fusion = Fusion::DEFAULT;
        let depth = (limit * 4).max(50);
        let admit = Admit::new(q);
        let keep = |d: DocId| admit.admits(&self.index, d);
        let lq = self.index.prepare(&q.text);
        // One snapshot for the stored vectors and the claims read below.
        let rx = self.db.begin_read()?;
        // An eight-bit graph only nominates: the candidates that can reach the answer are
        // ranked by their stored vectors. What the index holds bounds each candidate's
        // cosine, so its score; one whose best possible score falls short of what enough
        // others are sure to reach cannot be shown and is not read (`rescore.rs`). Each
        // side reads its own candidates that can reach the first rows among them as soon
        // as it has them, so those reads overlap the other side's search; what the
        // candidates of both then show is read after (at 100 000 claims each read is a
        // redb page, and reading every candidate was a third of a settled recall).
        let rescore =
            q.mode != RankMode::Lexical && self.vindex.is_some() && self.opts.precision.rescores();
        let how = Ranking {
            fusion,
            mode: q.mode,
            shown: if q.matched_only {
                limit.saturating_add(q.weak)
            } else {
                limit
            },
        };
        // The query's vector, for the lexical side once the dense side has made it.
        let made: std::sync::OnceLock<Arc<[f32]>> = std::sync::OnceLock::new();
        let lexical = || -> Result<(Vec<LexHit>, Rescore), StoreError> {
            let mut r = Rescore::default();
            if q.mode == RankMode::Vector {
                return Ok((vec![], r));
            }
            let hits = self.index.search(&lq, depth, &keep);
            // Not made yet (the dense side still embedding): read after both.
            if let (true, Some(qv)) = (rescore, made.get()) {
                let cands: Vec<(DocId, f64)> = hits.iter().map(|h| (h.doc, h.norm)).collect();
                self.rescore(&rx, qv, &cands, &how, &mut r)?;
            }
            Ok((hits, r))
        };
        let dense = || -> Result<Dense, StoreError> {
            let qv = self.dense_query(q)?;
            if let Some(v) = &qv {
                let _ = made.set(v.clone());
            }
            let found: Vec<(DocId, f64, f64)> = self
                .dense(qv.as_deref(), &admit, depth)?
                .into_iter()
                .map(|(d, sim)| {
                    let lex = if q.mode == RankMode::Vector {
                        0.0
                    } else {
                        self.index.score(&lq, d).map_or(0.0, |h| h.norm)
                    };
                    (d, sim, lex)
                })
                .collect();
            let mut r = Rescore::default();
            if let (true, Some(v)) = (rescore, &qv) {
                let cands: Vec<(DocId, f64)> = found.iter().map(|(d, _, l)| (*d, *l)).collect();
                self.rescore(&rx, v, &cands, &how, &mut r)?;
            }
            Ok((qv, found, r))
        };
        // In a large store each side takes a millisecond or more: the dense side (embed
        // the query, search the graph, scan the fresh vectors) runs on a second core.
        let (lexical, dense) = if q.mode == RankMode::Auto
            && self.vindex.is_some()
            && self.index.len() >= self.opts.parallel_recall_min
        {
            let (lexical, dense) = crate::par::join(lexical, dense);
            let dense = dense
                .unwrap_or_else(|| Err(StoreError::Invalid("a recall thread panicked".into())));
            (lexical, dense)
        } else {
            // The dense side first: the lexical side then has the query's vector.
            let dense = dense();
            (lexical(), dense)
        };
        let (lexical, mut known) = lexical?;
        let (qv, vector, dense_known) = dense?;
        known.extend(dense_known);
        let hybrid = qv.is_some();
        let mode = match q.mode {
            RankMode::Auto if !hybrid => RankMode::Lexical,
            RankMode::Vector if !hybrid => RankMode::Vector,
            m => m,
        };
        // Every candidate of either list gets both kinds of evidence, exactly.
        struct Cand {
            lex: f64,
            cos: Option<f64>,
            lex_rank: Option<usize>,
            vec_rank: Option<usize>,
        }
        let mut cands: HashMap<DocId, Cand> = HashMap::with_capacity(lexical.len() + vector.len());
        for (i, h) in lexical.iter().enumerate() {
            cands.insert(
                h.doc,
                Cand {
                    lex: h.norm,
                    cos: None,
                    lex_rank: Some(i + 1),
                    vec_rank: None,
                },
            );
        }
        for (i, (d, sim, lex)) in vector.iter().enumerate() {
            let c = cands.entry(*d).or_insert_with(|| Cand {
                lex: *lex,
                cos: None,
                lex_rank: None,
                vec_rank: None,
            });
            c.cos = Some(*sim);
            c.vec_rank = Some(i + 1);
        }
        if let (true, Some(qv)) = (rescore, &qv) {
            // The candidates of both sides: those that can be shown, by their stored
            // vectors; the rest let go.
            let all: Vec<(DocId, f64)> = cands.iter().map(|(d, c)| (*d, c.lex)).collect();
            let reach = self.rescore(&rx, qv, &all, &how, &mut known)?;
            for ((d, _), reaches) in all.iter().zip(reach) {
                if !reaches {
                    cands.remove(d);
                }
            }
            for (d, c) in cands.iter_mut() {
                let exact = known.stored.get(d).map(|v| cosine_of(v.as_deref(), qv));
                c.cos = self.cosine_or_none(*d, exact);
            }
        } else if let (Some(ix), Some(qv)) = (&self.vindex, &qv) {
            for (d, c) in cands.iter_mut().filter(|(_, c)| c.cos.is_none()) {
                let sim = self
                    .index
                    .key(*d)
                    .and_then(|k| ix.similarity(k, qv))
                    .map(f64::from);
                c.cos = self.cosine_or_none(*d, sim);
            }
        }
        let floor = fusion.floor(mode, hybrid);
        let scored: Vec<(DocId, Cand, f64)> = cands
            .into_iter()
            .map(|(d, c)| {
                let score = fusion.score(mode, c.lex, c.cos);
                (d, c, score)
            })
            .collect();
        let best = scored.iter().map(|r| r.2).fold(0.0, f64::max);
        let mut ranked: Vec<(&str, Cand, f64, bool)> = scored
            .into_iter()
            .map(|(d, c, score)| {
                let matched = floor.passes(score, best);
                (self.index.slug(d), c, score, matched)
            })
            .collect();
        ranked.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(b.0)));
        if q.matched_only {
            // The matched rows, best first; then, when they are fewer than asked, the
            // best weak rows (below the floor, at or above its weak bound), labelled.
            let matched = ranked.iter().filter(|r| r.3).count().min(limit);
            let weak = if matched < limit { q.weak } else { 0 };
            let mut weak_left = weak;
            let mut kept = 0;
            ranked.retain(|r| {
                if r.3 {
                    kept += 1;
                    kept <= limit
                } else if weak_left > 0 && r.2 >= floor.weak && r.2 > 0.0 {
                    weak_left -= 1;
                    true
                } else {
                    false
                }
            });
        } else {
            ranked.truncate(limit);
        }
        let claims = rx.open_table(CLAIMS)?;
        let mut hits = Vec::with_capacity(ranked.len());
        for (slug, c, score, matched) in ranked {
            let Some(v) = claims.get(slug)? else {
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
            vectors_loading: if hybrid { vectors_loading } else { 0 },
        })
    }
}
