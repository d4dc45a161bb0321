//! The health of the stores, as doctor shows it: each store's fault (quarantined, disk
//! full, a failed file) and, with `--deep`, the integrity check of every store.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Service;
use crate::brain::cell::FaultKind;
use crate::store_id::StoreId;

/// One store whose check found something, or that could not be checked.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DeepCheck {
    /// A brain's root, or `medulla`.
    pub store: String,
    /// `clean`, `repaired` (redb rebuilt its allocator state; nothing was lost),
    /// `index_out_of_step` (a derived index differs from redb; it is rebuilt on the next
    /// open), `damaged` (quarantined), or `unchecked` (see `error`).
    pub verdict: String,
    /// Records decoded (live claims, history versions, acts).
    pub records: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_index: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_index: Option<String>,
    /// Why the store is damaged or could not be checked (code and message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<serde_json::Value>,
}

/// A problem doctor lists under `broken`.
pub struct Problem {
    pub store: String,
    pub kind: FaultKind,
    pub since: i64,
    pub text: String,
}

/// Every store with a fault now: warm brains and the medulla from their cells, dormant
/// brains from their quarantine markers. Reads nothing else.
pub fn faults(svc: &Service, stores: &[(StoreId, String)]) -> Vec<Problem> {
    stores
        .iter()
        .filter_map(|(id, name)| {
            let f = svc.owner.fault(id)?;
            let what = match f.kind {
                FaultKind::Damaged => "quarantined (store_damaged)",
                FaultKind::DiskFull => "disk full (disk_full)",
                FaultKind::Io => "file fault (io)",
            };
            let text = format!("{what}: {}", f.error());
            Some(Problem {
                store: name.clone(),
                kind: f.kind,
                since: f.since,
                text,
            })
        })
        .collect()
}

/// The integrity check of every store, one at a time (each reads every page of its
/// file). Damage found here quarantines the store; a quarantined store found clean is
/// released.
pub async fn deep(svc: &Service, stores: &[(StoreId, String)]) -> Vec<DeepCheck> {
    let mut out = Vec::new();
    for (id, name) in stores {
        let checked = svc.owner.check_integrity(id).await;
        out.push(match checked {
            Ok(r) => DeepCheck {
                store: name.clone(),
                verdict: if r.claim_index.is_some() || r.vector_index.is_some() {
                    "index_out_of_step"
                } else if r.repaired {
                    "repaired"
                } else {
                    "clean"
                }
                .into(),
                records: r.records,
                claim_index: r.claim_index,
                vector_index: r.vector_index,
                error: None,
            },
            Err(e) => DeepCheck {
                store: name.clone(),
                verdict: if e.code() == "store_damaged" {
                    "damaged"
                } else {
                    "unchecked"
                }
                .into(),
                records: 0,
                claim_index: None,
                vector_index: None,
                error: Some(e.to_json()),
            },
        });
    }
    out
}
