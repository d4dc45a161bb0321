//! Recall types, hybrid fusion, and the aging overlay computed at read time.

use serde::{Deserialize, Serialize};

use crate::claim::Claim;

/// Default staleness threshold: 30 days.
pub const DEFAULT_STALE_AFTER_MS: i64 = 30 * 24 * 3600 * 1000;
/// Default aging half-life: 720 hours.
pub const DEFAULT_HALF_LIFE_MS: i64 = 720 * 3600 * 1000;

/// Aging thresholds. Ages are never stored; they are computed from `created` and now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Aging {
    pub stale_after_ms: i64,
    pub half_life_ms: i64,
}

impl Default for Aging {
    fn default() -> Self {
        Self {
            stale_after_ms: DEFAULT_STALE_AFTER_MS,
            half_life_ms: DEFAULT_HALF_LIFE_MS,
        }
    }
}

/// The read-time overlay of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overlay {
    pub age_ms: i64,
    pub stale: bool,
    pub aged_out: bool,
}

impl Aging {
    pub fn overlay(&self, created: i64, now_ms: i64) -> Overlay {
        let age_ms = (now_ms - created).max(0);
        Overlay {
            age_ms,
            stale: age_ms > self.stale_after_ms,
            aged_out: age_ms > self.half_life_ms,
        }
    }
}

/// How a recall was ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum Retrieval {
    /// Lexical and vector rankings fused.
    Hybrid,
    /// No embedding model: lexical ranking only.
    Lexical,
}

impl Retrieval {
    pub fn as_str(self) -> &'static str {
        match self {
            Retrieval::Hybrid => "hybrid",
            Retrieval::Lexical => "lexical",
        }
    }
}

/// Which ranking(s) to use; `Auto` = hybrid when a model is loaded, else lexical.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankMode {
    #[default]
    Auto,
    Lexical,
    Vector,
}

/// A recall request against one store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecallQuery {
    pub text: String,
    /// Slug or label prefix filter (case-insensitive on the label).
    pub scope: Option<String>,
    pub limit: usize,
    #[serde(default)]
    pub mode: RankMode,
}

/// One surfaced claim with its score and the read-time overlay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub claim: Claim,
    pub score: f64,
    pub overlay: Overlay,
    /// 1-based rank in the lexical list, if it appeared there.
    pub lexical_rank: Option<usize>,
    /// 1-based rank in the vector list, if it appeared there.
    pub vector_rank: Option<usize>,
}

/// The answer of one recall.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallResult {
    pub hits: Vec<Hit>,
    pub retrieval: Retrieval,
}

/// The constant of reciprocal rank fusion: larger flattens the advantage of the top ranks.
pub const RRF_K: f64 = 60.0;

/// Reciprocal rank fusion of ranked lists of ids: `score(d) = Σ 1 / (k + rank)`, with
/// 1-based ranks. Best first; ties broken by id for determinism.
pub fn fuse(lists: &[&[String]], k: f64) -> Vec<(String, f64)> {
    let mut scores: std::collections::HashMap<&str, f64> = std::collections::HashMap::new();
    for list in lists {
        for (i, id) in list.iter().enumerate() {
            *scores.entry(id.as_str()).or_default() += 1.0 / (k + (i + 1) as f64);
        }
    }
    let mut out: Vec<(String, f64)> = scores
        .into_iter()
        .map(|(id, s)| (id.to_string(), s))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn fusion_rewards_agreement() {
        let a = ids(&["x", "y", "z"]);
        let b = ids(&["y", "w", "x"]);
        let f = fuse(&[&a, &b], RRF_K);
        assert_eq!(f[0].0, "y", "second and first beats first and third");
        assert_eq!(f[1].0, "x");
        assert_eq!(f.len(), 4);
        let single = fuse(&[&a], RRF_K);
        assert_eq!(
            single.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
            vec!["x", "y", "z"]
        );
    }

    #[test]
    fn aging_thresholds_are_strict() {
        let a = Aging::default();
        let created = 1_000_000;
        assert!(!a.overlay(created, created + DEFAULT_STALE_AFTER_MS).stale);
        assert!(
            a.overlay(created, created + DEFAULT_STALE_AFTER_MS + 1)
                .stale
        );
        assert!(!a.overlay(created, created + DEFAULT_HALF_LIFE_MS).aged_out);
        assert!(
            a.overlay(created, created + DEFAULT_HALF_LIFE_MS + 1)
                .aged_out
        );
        assert_eq!(
            a.overlay(created, created - 5).age_ms,
            0,
            "a clock behind the claim is not a negative age"
        );
    }
}
