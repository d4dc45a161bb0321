//! What a tending pass answers, and the report it keeps beside the store for review
//! (`tending.json`: derived, rewritten by each pass, never a claim's state).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{OwnerError, Result};
use crate::service::Service;
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

/// What a member of a join says that its survivor does not: left to history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dropped {
    pub slug: String,
    pub values: Vec<String>,
}

/// Claims that say the same thing, joined into one (or to be, on a dry run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Join {
    /// The label that survives: the strongest member, then the most recent.
    pub survivor: Named,
    /// The labels joined into it (outdated with `consolidated: into <survivor>`).
    pub joined: Vec<Named>,
    /// Details a joined claim gives that the survivor does not (kept in history).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<Dropped>,
    /// The join was made (an `--apply` pass); else proposed.
    pub done: bool,
    /// The command that undoes it.
    pub undo: String,
}

/// A store's last tending, for review.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// When the pass ran, ms since the epoch (0: never).
    pub at: i64,
    /// The joins it made or proposed.
    #[serde(default)]
    pub joins: Vec<Join>,
    pub disagreements: Vec<Disagreement>,
    pub retire: Vec<Stale>,
    /// The store's acts when the pass ended: a dormant brain with as many acts since has
    /// had nothing written, and the schedule lets it sleep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acts: Option<u64>,
}

/// One tending pass over one store (SPEC §14).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Pass {
    /// The store tended: a brain's root, `medulla` or `team`.
    pub store: String,
    /// The joins were made (`apply`); else only reported, nothing written.
    pub applied: bool,
    /// The calibration it judged with: `lexical`, `potion-base-8M`, `all-MiniLM-L6-v2`.
    pub mode: String,
    /// Live claims gone over, and distinct pairs judged.
    pub claims: usize,
    pub pairs_judged: usize,
    pub joins: Vec<Join>,
    /// Claims alike but for a number, a name, a path or an identifier: never joined; in
    /// the review list.
    pub disagreements: Vec<Disagreement>,
    /// Claims aged out that nothing used in their half-life: proposed for retirement in
    /// the review list.
    pub retire: Vec<Stale>,
    /// How long the pass took.
    pub ms: u64,
}

impl Service {
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
