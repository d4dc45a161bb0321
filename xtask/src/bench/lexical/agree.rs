//! How far the two engines agree: our index's answers to the bench queries and the
//! overlap of two engines' top-10s, with and without ties forgiven.

use std::time::Instant;

use brains::index::ClaimIndex;
use brains::recall::ClaimMeta;
use brains::Strength;

use crate::bench::runner::pct;

use super::{AGREE_AT, K};

/// The metadata a bench claim carries in the claim index.
pub(super) fn meta(label: &str) -> ClaimMeta {
    ClaimMeta {
        label: label.to_lowercase(),
        source_agent: "bench:maker".into(),
        strength: Strength::Observed,
        trust: 0.5,
        created: 0,
        evidence: vec![],
    }
}

/// Top-50 latency (p50, p99 in ms) and each query's top-10 slugs with the 10th score.
pub(super) struct Answers {
    pub(super) p50: f64,
    pub(super) p99: f64,
    pub(super) top: Vec<Vec<String>>,
}

pub(super) fn ours_answers(idx: &ClaimIndex, qs: &[String]) -> Answers {
    let mut lat = Vec::with_capacity(qs.len());
    let mut top = Vec::with_capacity(qs.len());
    for q in qs {
        let t = Instant::now();
        let hits = idx.search(&idx.prepare(q), K, &|_| true);
        lat.push(t.elapsed());
        top.push(
            hits.into_iter()
                .take(AGREE_AT)
                .map(|h| idx.slug(h.doc).to_string())
                .collect(),
        );
    }
    Answers {
        p50: pct(&mut lat, 0.5),
        p99: pct(&mut lat, 0.99),
        top,
    }
}

/// Mean of |A ∩ B| / max(|A|, |B|) over the queries (1 when both are empty).
pub(super) fn overlap(a: &[Vec<String>], b: &[Vec<String>]) -> f64 {
    let sum: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| {
            let n = x.len().max(y.len());
            if n == 0 {
                1.0
            } else {
                x.iter().filter(|s| y.contains(s)).count() as f64 / n as f64
            }
        })
        .sum();
    sum / a.len().max(1) as f64
}

/// Overlap with ties forgiven: a slug of `b` agrees when it is in `a` or scores (by
/// `idx`, our scoring) at least `a`'s last score. Same-score claims fill a top-10 in an
/// order each engine picks for itself (ours by slug, tantivy by document address).
pub(super) fn overlap_ties(
    idx: &ClaimIndex,
    qs: &[String],
    a: &[Vec<String>],
    b: &[Vec<String>],
) -> f64 {
    let mut sum = 0.0;
    for ((q, x), y) in qs.iter().zip(a).zip(b) {
        let n = x.len().max(y.len());
        if n == 0 {
            sum += 1.0;
            continue;
        }
        let p = idx.prepare(q);
        let score = |s: &str| {
            idx.doc(s)
                .and_then(|d| idx.score(&p, d))
                .map(|h| h.score)
                .unwrap_or(0.0)
        };
        let last = x.last().map(|s| score(s)).unwrap_or(0.0);
        let agree = y
            .iter()
            .filter(|s| x.contains(s) || score(s) >= last * (1.0 - 1e-9))
            .count();
        sum += agree.min(n) as f64 / n as f64;
    }
    sum / qs.len().max(1) as f64
}
