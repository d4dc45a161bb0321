//! What tending leaves for a person (SPEC §14): the disagreements it found (claims alike
//! but for a number, a name, a path, an identifier: never joined) and the claims it
//! proposes to retire (aged out, used by nothing in their half-life). Kept in
//! `tending.json` beside the store (derived, rewritten by each pass, never a claim's
//! state), read by `review`'s list and the Hall. And which store a person names.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::route::find_brain;
use super::Service;
use crate::error::{OwnerError, Result};
use crate::store_id::StoreId;

const FILE: &str = "tending.json";

/// One side of a disagreement, or a claim proposed for retirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Named {
    pub slug: String,
    pub label: String,
    pub text: String,
}

/// What differs between two claims that disagree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Differs {
    /// `number`, `version`, `path`, `identifier`, `name`, …
    pub kind: String,
    pub a: String,
    pub b: String,
}

/// Two claims alike but for what differs: for a person to settle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Disagreement {
    pub a: Named,
    pub b: Named,
    pub differences: Vec<Differs>,
}

/// A claim aged out that nothing used in its half-life.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Stale {
    #[serde(flatten)]
    pub claim: Named,
    pub created: i64,
    /// When something last used it (a seek row, a hint, a citation), if ever recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used: Option<i64>,
}

/// A store's last tending, for review.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// When the pass ran, ms since the epoch (0: never).
    pub at: i64,
    pub disagreements: Vec<Disagreement>,
    pub retire: Vec<Stale>,
}

impl Service {
    /// The store a person names: `medulla`, `team`, a brain's root or fingerprint, else
    /// the brain serving `routed` (the caller's).
    pub fn named_store(
        &self,
        name: Option<&str>,
        routed: &super::route::Routed,
    ) -> Result<(StoreId, String)> {
        match name.map(str::trim).filter(|n| !n.is_empty()) {
            Some("medulla") => Ok((StoreId::Medulla, "medulla".into())),
            Some("team") => {
                self.owner.registry.team().ok_or(OwnerError::NoTeam)?;
                Ok((StoreId::Team, "team".into()))
            }
            Some(n) => {
                let m = find_brain(&self.owner.registry, n).ok_or_else(|| {
                    OwnerError::UnknownBrain {
                        name: n.to_string(),
                    }
                })?;
                Ok((StoreId::brain(&m.fingerprint), m.root))
            }
            None => {
                let b = super::verbs::write_target(routed)?;
                Ok((StoreId::brain(&b.fingerprint), b.root.clone()))
            }
        }
    }

    /// A store's last tending report (empty when it was never tended).
    pub fn tending(&self, store: &StoreId) -> Report {
        std::fs::read(self.owner.registry.store_dir(store).join(FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Keep a store's tending report (written whole, then renamed over the old one).
    pub fn keep_tending(&self, store: &StoreId, r: &Report) -> Result<()> {
        let dir = self.owner.registry.store_dir(store);
        let tmp = dir.join(format!("{FILE}.tmp"));
        let bytes = serde_json::to_vec(r).map_err(|e| OwnerError::Internal(e.to_string()))?;
        std::fs::write(&tmp, bytes)
            .and_then(|_| std::fs::rename(&tmp, dir.join(FILE)))
            .map_err(|e| {
                OwnerError::Internal(format!("cannot write {}: {e}", dir.join(FILE).display()))
            })
    }
}
