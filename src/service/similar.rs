//! Near-duplicates at the service edge: after a write, the live claims of the target
//! store and of the medulla that say nearly the same thing under another label, so the
//! writer can supersede instead of duplicating. The write has landed either way.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::rows::StoreTier;
use super::Service;
use crate::store_id::StoreId;

/// A live claim that says nearly what the one just written says.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Near {
    pub slug: String,
    pub label: String,
    /// The near-duplicate score (word overlap, blended with the embeddings' cosine when
    /// a model is loaded), at or above the store's threshold.
    pub score: f64,
    pub tier: StoreTier,
}

/// The near claims in `stores`, best first; a store that cannot be read adds none (the
/// write is already acknowledged, and this is advice).
pub async fn near(
    svc: &Service,
    label: &str,
    text: &str,
    written_slug: &str,
    stores: &[(StoreId, StoreTier)],
) -> Vec<Near> {
    let mut out = Vec::new();
    for (store, tier) in stores {
        let (label, text, slug) = (
            label.to_string(),
            text.to_string(),
            written_slug.to_string(),
        );
        let tier = *tier;
        let found = svc
            .owner
            .read(store, move |s| s.similar(&label, &text, Some(&slug)))
            .await;
        match found {
            Ok(hits) => out.extend(hits.into_iter().map(|h| Near {
                slug: h.claim.slug,
                label: h.claim.label,
                score: (h.score * 1000.0).round() / 1000.0,
                tier,
            })),
            Err(e) => tracing::debug!(error = %e, "near-duplicate check skipped"),
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out.truncate(5);
    out
}
