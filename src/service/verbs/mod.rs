//! The verbs, one concern per file, and what several of them share: the tier arguments,
//! the brain reference, the agent and write-target rules, the medulla's cap and the
//! etiquette verdict.

pub mod acts;
pub mod audit_log;
pub mod backup;
pub mod beat;
pub mod boot_memory;
pub mod bootstrap;
pub mod debrief;
pub mod delegate;
pub mod export;
pub mod history;
pub mod import;
pub mod instances;
pub mod learn;
pub mod memorize;
pub mod merge;
pub mod promote;
pub mod purge;
pub mod report;
pub mod retire;
pub mod review;
pub mod seek;
pub mod split;
pub mod team;
pub mod team_link;
pub mod tend;
pub mod triage;

use std::borrow::Cow;

use brains::MemorizeOutcome;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::route::Routed;
use super::RouteInput;
use crate::error::{OwnerError, Result};
use crate::roster::Manifest;
use crate::store_id::Fingerprint;

/// A store named by a write or a read of one tier.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The routed brain.
    #[value(help = "This project's brain (the working directory's)")]
    Project,
    /// The shared medulla.
    #[value(help = "The shared medulla (the founder's doctrine)")]
    Medulla,
    /// The team medulla (a joined team's shared doctrine, SPEC §13).
    #[value(help = "The team medulla (the team's doctrine, when a team is joined)")]
    Team,
}

impl Tier {
    /// The shared store a `medulla` or `team` tier names; `None` for a project.
    pub fn shared_store(
        self,
    ) -> Option<(crate::store_id::StoreId, crate::service::rows::StoreTier)> {
        match self {
            Tier::Project => None,
            Tier::Medulla => Some((
                crate::store_id::StoreId::Medulla,
                crate::service::rows::StoreTier::Medulla,
            )),
            Tier::Team => Some((
                crate::store_id::StoreId::Team,
                crate::service::rows::StoreTier::Team,
            )),
        }
    }
}

/// Verbs that have no team tier say so, naming what does.
pub fn no_team_tier(tier: Option<Tier>, verb: &str) -> crate::error::Result<()> {
    if tier == Some(Tier::Team) {
        return Err(crate::error::OwnerError::BadInput(format!(
            "{verb} has no team tier: the team medulla is written by memorize --tier team, promote --to team, learn and retire --tier team"
        )));
    }
    Ok(())
}

/// The agent id of the founder surface (the command line, the Hall) when it names none.
pub const FOUNDER_AGENT: &str = "human:founder";

/// A brain as answers name it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BrainRef {
    pub root: String,
    pub fingerprint: Fingerprint,
    pub created: i64,
}

impl From<&Manifest> for BrainRef {
    fn from(m: &Manifest) -> Self {
        BrainRef {
            root: m.root.clone(),
            fingerprint: m.fingerprint.clone(),
            created: m.created,
        }
    }
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Created,
    Superseded,
    Unchanged,
}

impl From<&MemorizeOutcome> for Outcome {
    fn from(o: &MemorizeOutcome) -> Self {
        match o {
            MemorizeOutcome::Created { .. } => Outcome::Created,
            MemorizeOutcome::Superseded { .. } => Outcome::Superseded,
            MemorizeOutcome::Unchanged { .. } => Outcome::Unchanged,
        }
    }
}

/// The brain a write must land on, or the `unbootstrapped` refusal with the fix.
pub fn write_target(routed: &Routed) -> Result<&Manifest> {
    routed
        .brain
        .as_ref()
        .ok_or_else(|| OwnerError::Unbootstrapped {
            caller_root: routed
                .caller_root
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|| "an unnamed caller".into()),
            fix: routed.fix.clone(),
        })
}

/// The agent id of a call: the argument, else the `Medulla-Agent` header, else the MCP
/// client's name; the founder surface that names none acts as `human:founder`.
pub fn agent(arg: Option<String>, input: &RouteInput) -> Result<String> {
    let founder = input.founder.then(|| FOUNDER_AGENT.to_string());
    let a = arg.or_else(|| input.agent.clone()).or(founder).ok_or_else(|| {
        OwnerError::BadInput(
            "no agent id: pass agent_id (vendor:role, e.g. claude:maker) or send the Medulla-Agent header".into(),
        )
    })?;
    brains::claim::validate_agent_id(&a)?;
    Ok(a)
}

/// The medulla's soft cap on live claims, and the count from which it warns.
pub const SOFT_CAP: u64 = 200;
pub const WARN_FROM: u64 = 300;
/// The team medulla's own: the doctrine of several people, not one person's index, so
/// twice the personal medulla's (issue 51: a team answer reported the personal cap).
pub const TEAM_SOFT_CAP: u64 = 400;
pub const TEAM_WARN_FROM: u64 = 600;

/// The written store's live count against its soft cap, on every medulla and team
/// medulla write (INV-8): the personal medulla's cap for the medulla, the team's for the
/// team medulla.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Cap {
    /// Whose cap: `medulla` or `team`.
    pub tier: crate::service::rows::StoreTier,
    pub live: u64,
    pub soft_cap: u64,
    pub warn_from: u64,
    /// `ok`, `over_soft_cap` or `warn`.
    pub status: Cow<'static, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Cap {
    /// The personal medulla's.
    pub fn of(live: u64) -> Cap {
        Cap::of_store(crate::service::rows::StoreTier::Medulla, live)
    }

    /// The cap of the store written: the team medulla's for `team`, else the medulla's.
    pub fn of_store(tier: crate::service::rows::StoreTier, live: u64) -> Cap {
        let team = tier == crate::service::rows::StoreTier::Team;
        let (soft_cap, warn_from, name, scope) = if team {
            (
                TEAM_SOFT_CAP,
                TEAM_WARN_FROM,
                "the team medulla",
                "across the team",
            )
        } else {
            (SOFT_CAP, WARN_FROM, "the medulla", "across projects")
        };
        let status = if live >= warn_from {
            "warn"
        } else if live > soft_cap {
            "over_soft_cap"
        } else {
            "ok"
        };
        Cap {
            tier: if team {
                crate::service::rows::StoreTier::Team
            } else {
                crate::service::rows::StoreTier::Medulla
            },
            live,
            soft_cap,
            warn_from,
            status: status.into(),
            message: (status != "ok").then(|| format!(
                "{name} holds {live} live claims (soft cap {soft_cap}): it is an index, not a warehouse; demote what no longer holds {scope}"
            )),
        }
    }
}

/// The etiquette verdict: expected of `*:orchestrator` and `human:founder`; anyone
/// else's medulla write lands, flagged. Audited, not enforced (INV-5).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Etiquette {
    pub expected: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flag: Option<Cow<'static, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Etiquette {
    pub fn of(agent: &str) -> Etiquette {
        if crate::audit::etiquette_ok(agent) {
            Etiquette {
                expected: true,
                flag: None,
                message: None,
            }
        } else {
            Etiquette {
                expected: false,
                flag: Some("etiquette_breach".into()),
                message: Some(format!("{agent} is not an orchestrator or the founder: the write landed and is flagged in the audit log (etiquette is audited, not enforced)")),
            }
        }
    }
}

/// An error carried inside a successful answer (a failed part of a composite read).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody(
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")] pub serde_json::Value,
);

impl From<&OwnerError> for ErrorBody {
    fn from(e: &OwnerError) -> Self {
        ErrorBody(e.to_json())
    }
}
