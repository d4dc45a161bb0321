//! Whether the end-of-turn nudge pays, per brain: the agent sessions the client hooks
//! saw working in it, those `nudge` asked for a debrief, and the claims written in the
//! half hour after each ask (`doctor`'s `nudges`).

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Service;
use crate::error::{OwnerError, Result};
use crate::store_id::{Fingerprint, StoreId};

/// Claims written this long after a nudge count as its answer.
pub const ANSWER_WINDOW_MS: i64 = 30 * 60 * 1000;

/// One brain's sessions as the hooks saw them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct NudgeCount {
    /// The brain's root.
    pub brain: String,
    pub sessions_seen: u64,
    pub sessions_nudged: u64,
    /// Live claims of the brain created within half an hour after a nudge.
    pub claims_after_nudge: u64,
}

/// Every brain some recorded session worked in, with its counts. Only brains with a
/// nudge are read (their live claims, for what was written after it).
pub async fn counts(svc: &Service) -> Result<Vec<NudgeCount>> {
    let home = svc.owner.config.home.clone();
    let sessions = tokio::task::spawn_blocking(move || crate::hook_sessions::read_all(&home))
        .await
        .map_err(|e| OwnerError::Internal(e.to_string()))?;
    if sessions.is_empty() {
        return Ok(Vec::new());
    }
    let manifests = svc.owner.registry.all_manifests();
    // The brain a directory belongs to: the deepest registered root that holds it.
    let brain_of = |cwd: &str| {
        manifests
            .iter()
            .filter(|m| Path::new(cwd).starts_with(&m.root))
            .max_by_key(|m| m.root.len())
            .map(|m| (m.root.clone(), m.fingerprint.clone()))
    };
    let mut per: BTreeMap<String, (Fingerprint, NudgeCount, Vec<i64>)> = BTreeMap::new();
    for s in &sessions {
        let Some((root, fp)) = brain_of(&s.cwd) else {
            continue;
        };
        let e = per.entry(root.clone()).or_insert_with(|| {
            (
                fp,
                NudgeCount {
                    brain: root,
                    sessions_seen: 0,
                    sessions_nudged: 0,
                    claims_after_nudge: 0,
                },
                Vec::new(),
            )
        });
        e.1.sessions_seen += 1;
        if let Some(at) = s.nudged_at {
            e.1.sessions_nudged += 1;
            e.2.push(at);
        }
    }
    let mut out = Vec::with_capacity(per.len());
    for (_, (fp, mut count, nudges)) in per {
        if !nudges.is_empty() {
            let claims = svc.owner.live_claims(&StoreId::brain(&fp)).await?;
            count.claims_after_nudge = claims
                .iter()
                .filter(|c| {
                    nudges
                        .iter()
                        .any(|&at| c.created >= at && c.created <= at + ANSWER_WINDOW_MS)
                })
                .count() as u64;
        }
        out.push(count);
    }
    Ok(out)
}
