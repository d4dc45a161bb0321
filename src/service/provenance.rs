//! What a recall answer says about promoted claims: a promoted claim surfaces once (the
//! medulla copy, naming its witness too), and a medulla copy whose project witness has
//! changed since says so (`witness_superseded`), with the new text only for the witness's
//! own brain or the founder.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::route::find_brain;
use super::rows::{Identities, Row, WitnessSuperseded};
use super::{RouteInput, Routed, Service};
use crate::audit::AuditMsg;
use crate::error::Result;
use crate::store_id::StoreId;

/// The medulla boot-memory key under which a copy's superseded witness is noted.
pub const MARKER: &str = "witness_superseded:";

/// What the marker holds (never the witness's new text: that stays in its project).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Marker {
    pub witness: String,
    pub at: i64,
    pub by_version: u64,
}

/// A promoted witness in `root` was just superseded: note it on the medulla copy, through
/// the audit actor (a recorded act), when the copy still stands for that witness.
pub async fn notice_superseded(
    svc: &Service,
    root: &str,
    previous: &brains::Claim,
    new: &brains::Claim,
) {
    if previous.promoted_to.is_none() {
        return;
    }
    let marker = Marker {
        witness: format!("{root}#{}", new.slug),
        at: new.created,
        by_version: new.version,
    };
    let r = svc
        .owner
        .audit(|reply| AuditMsg::WitnessSuperseded {
            slug: new.slug.clone(),
            marker: serde_json::to_string(&marker).expect("a marker serializes"),
            witness: marker.witness.clone(),
            reply,
        })
        .await;
    if let Err(e) = r {
        tracing::warn!(error = %e, "could not note a superseded witness on its medulla copy");
    }
}

/// Every noted superseded witness, by medulla slug.
pub async fn markers(svc: &Service) -> Result<HashMap<String, Marker>> {
    Ok(svc
        .owner
        .kv_list(&StoreId::Medulla)
        .await?
        .into_iter()
        .filter_map(|(k, v)| {
            let slug = k.strip_prefix(MARKER)?.to_string();
            serde_json::from_str::<Marker>(&v).ok().map(|m| (slug, m))
        })
        .collect())
}

/// One row per promoted claim: a project witness whose medulla copy is also in the
/// answer is dropped, and the copy names both identities (keeping the better score).
pub fn merge_promoted(project: &mut Vec<Row>, medulla: &mut [Row]) {
    let stamp_of = |m: &Row| format!("medulla@{}@{}", m.slug, m.created);
    for m in medulla.iter_mut() {
        let Some(origin) = m.promotion.as_ref().and_then(|p| p.origin_claim.clone()) else {
            continue;
        };
        let stamp = stamp_of(m);
        if let Some(i) = project.iter().position(|p| {
            p.promoted_to.as_deref() == Some(stamp.as_str())
                && format!("{}#{}", p.origin_brain, p.slug) == origin
        }) {
            let witness = project.remove(i);
            m.score = match (m.score, witness.score) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            m.identities = Some(Identities {
                medulla: format!("medulla#{}", m.slug),
                witness: origin,
            });
        }
    }
}

/// Mark medulla copies whose witness changed. The new text comes from the witness's own
/// brain, and only to a caller routed there or the founder.
pub async fn mark_superseded(
    svc: &Service,
    routed: &Routed,
    input: &RouteInput,
    rows: &mut [Row],
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let marks = markers(svc).await?;
    if marks.is_empty() {
        return Ok(());
    }
    for r in rows.iter_mut() {
        let Some(m) = marks.get(&r.slug) else {
            continue;
        };
        let (root, slug) = m.witness.rsplit_once('#').unwrap_or((&m.witness, &r.slug));
        let own = routed.brain.as_ref().is_some_and(|b| b.root == root);
        let new_text = if own || input.founder {
            match find_brain(&svc.owner.registry, root) {
                Some(b) => svc
                    .owner
                    .get(&StoreId::brain(&b.fingerprint), slug)
                    .await
                    .ok()
                    .flatten()
                    .map(|c| c.text),
                None => None,
            }
        } else {
            None
        };
        r.witness_superseded = Some(WitnessSuperseded {
            witness: m.witness.clone(),
            at: m.at,
            by_version: m.by_version,
            new_text,
        });
    }
    Ok(())
}
