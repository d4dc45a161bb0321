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
        Self { stale_after_ms: DEFAULT_STALE_AFTER_MS, half_life_ms: DEFAULT_HALF_LIFE_MS }
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
