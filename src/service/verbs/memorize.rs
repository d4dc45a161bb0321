//! `memorize`: a claim into the routed brain (created, superseded, unchanged, or refused
//! as a downgrade), or with `tier: medulla`, doctrine birth through the audit actor.

use std::borrow::Cow;

use brains::{MemorizeInput, MemorizeOutcome, Strength};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{agent, write_target, BrainRef, Cap, Etiquette, Outcome, Tier};
use crate::audit::AuditMsg;
use crate::config::SecretPolicy;
use crate::error::{OwnerError, Result};
use crate::floor;
use crate::service::anchors::{take_async, Unanchored};
use crate::service::rows::{Row, StoreTier};
use crate::service::similar::{near, Near};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::service::Service;
use crate::store_id::StoreId;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct MemorizeArgs {
    /// The claim's name; its identity within the store (a slug is derived from it).
    #[arg(
        long,
        help = "A short title; its slug (`Release build` → `release-build`) names the claim"
    )]
    pub label: String,
    /// The claim itself.
    #[arg(long, help = "What holds")]
    pub text: String,
    /// `hint`, `observed` (default) or `verified`. A weaker write than the live version is refused.
    #[arg(long, value_enum, help = "How sure [default: observed]")]
    pub strength: Option<Strength>,
    /// Paths or references backing the claim.
    #[arg(
        long,
        value_name = "EVIDENCE",
        help = "A file, link or commit that backs the claim (repeat for several)"
    )]
    pub evidence: Option<Vec<String>>,
    /// `project` (default). `medulla` is doctrine birth: written straight into the medulla through the audit actor.
    #[arg(
        long,
        value_enum,
        default_value = "project",
        help = "Where to write: project (this brain) or medulla (doctrine birth, the founder's)"
    )]
    pub tier: Option<Tier>,
    /// Who writes it, `vendor:role` (e.g. `claude:maker`). Defaults to the Medulla-Agent header.
    #[arg(long = "agent", value_name = "AGENT", default_value = super::FOUNDER_AGENT, help = "Who writes (vendor:role)")]
    pub agent_id: Option<String>,
}

/// A secret accepted under `project_secrets = "flag"`, said so.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Flagged {
    pub flagged: bool,
    #[schemars(with = "Vec<serde_json::Map<String, Value>>")]
    pub findings: Value,
    pub note: Cow<'static, str>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ProjectWrite {
    pub outcome: Outcome,
    pub unchanged: bool,
    pub claim: Row,
    pub brain: BrainRef,
    /// The version this write superseded, now in history as outdated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<Row>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hygiene: Option<Flagged>,
    /// Evidence entries that name a file the owner did not anchor, and why (outside the
    /// brain's root, no such file, ...). Files inside the root are anchored silently.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unanchored: Vec<Unanchored>,
    /// Live claims in this brain and the medulla that say nearly the same thing under
    /// another label: supersede one of them instead of keeping two. The write landed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub similar: Vec<Near>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DoctrineBirth {
    pub outcome: Outcome,
    pub unchanged: bool,
    pub claim: Row,
    pub etiquette: Etiquette,
    pub medulla_cap: Cap,
    /// Live medulla claims that say nearly the same thing under another label.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub similar: Vec<Near>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum MemorizeAnswer {
    Project(Box<ProjectWrite>),
    Doctrine(Box<DoctrineBirth>),
}

impl Answer for MemorizeAnswer {}

pub struct Memorize;

impl Verb for Memorize {
    const NAME: &'static str = "memorize";
    const DESCRIPTION: &'static str = "Write a claim into this project's brain. Same label at equal or greater strength supersedes (old version kept in history); weaker is refused; identical is a no-op. tier medulla (or team, when a team is joined) is doctrine birth, through the audit actor.";
    const EFFECT: Effect = Effect::Write;
    const IDEMPOTENT: bool = true;
    type Args = MemorizeArgs;
    type Answer = MemorizeAnswer;

    async fn run(cx: Cx<'_>, a: MemorizeArgs) -> Result<MemorizeAnswer> {
        let svc = cx.svc;
        let mut mi = MemorizeInput {
            label: a.label,
            text: a.text,
            source_agent: agent(a.agent_id, cx.input)?,
            strength: a.strength.unwrap_or_default(),
            evidence: a.evidence.unwrap_or_default(),
            ..Default::default()
        };
        if let Some((to, _)) = a.tier.and_then(Tier::shared_store) {
            return doctrine_birth(svc, to, mi)
                .await
                .map(|d| MemorizeAnswer::Doctrine(Box::new(d)));
        }
        let target = write_target(cx.routed)?;
        let anchor_root = cx
            .routed
            .anchor_root()
            .unwrap_or_else(|| target.root.clone());
        mi.origin_brain = Some(target.root.clone());
        mi.written_from = cx.routed.written_from();
        mi.session = cx.input.session.clone();
        mi.validate()?;
        let flagged = project_floor(svc, floor::claim_fields(&mi.label, &mi.text, &mi.evidence))?;
        let (anchors, unanchored) = take_async(&anchor_root, &mi.evidence, svc.now().ms).await;
        mi.anchors = anchors;
        let outcome = svc
            .owner
            .memorize(&StoreId::brain(&target.fingerprint), mi)
            .await?;
        svc.counters(&target.fingerprint).wrote();
        let written = outcome.claim();
        if matches!(outcome, brains::MemorizeOutcome::Superseded { .. }) {
            svc.hint_used(Some(&target.fingerprint), &written.slug);
        }
        let similar = near(
            svc,
            &written.label,
            &written.text,
            &written.slug,
            &[
                (StoreId::brain(&target.fingerprint), StoreTier::Project),
                (StoreId::Medulla, StoreTier::Medulla),
            ],
        )
        .await;
        if let MemorizeOutcome::Superseded { claim, previous } = &outcome {
            crate::service::provenance::notice_superseded(svc, &target.root, previous, claim).await;
        }
        let now = svc.now();
        Ok(MemorizeAnswer::Project(Box::new(ProjectWrite {
            outcome: Outcome::from(&outcome),
            unchanged: outcome.unchanged(),
            claim: Row::of(outcome.claim(), StoreTier::Project, now, None),
            brain: BrainRef::from(target),
            previous: match &outcome {
                MemorizeOutcome::Superseded { previous, .. } => {
                    Some(Row::of(previous, StoreTier::Project, now, None))
                }
                _ => None,
            },
            hygiene: flagged.map(|findings| Flagged {
                flagged: true,
                findings,
                note: "accepted because project_secrets = \"flag\"; this claim can never be promoted or exported until the secret is gone".into(),
            }),
            unanchored,
            similar,
        })))
    }
}

/// Doctrine birth: straight into the medulla through the audit actor.
pub async fn doctrine_birth(
    svc: &Service,
    to: StoreId,
    mut input: MemorizeInput,
) -> Result<DoctrineBirth> {
    input.validate()?;
    let agent = input.source_agent.clone();
    let tier = if to == StoreId::Team {
        svc.owner
            .registry
            .team()
            .ok_or(crate::error::OwnerError::NoTeam)?;
        StoreTier::Team
    } else {
        StoreTier::Medulla
    };
    let (outcome, live) = svc
        .owner
        .audit(|reply| AuditMsg::DoctrineBirth {
            to: to.clone(),
            input,
            reply,
        })
        .await?;
    let c = outcome.claim();
    let similar = near(svc, &c.label, &c.text, &c.slug, &[(to, tier)]).await;
    Ok(DoctrineBirth {
        outcome: Outcome::from(&outcome),
        unchanged: outcome.unchanged(),
        claim: Row::of(outcome.claim(), tier, svc.now(), None),
        etiquette: Etiquette::of(&agent),
        medulla_cap: Cap::of_store(tier, live),
        similar,
    })
}

/// The floor for a project write: refused by default; under `project_secrets = "flag"`
/// accepted, with the (redacted) findings to put in the answer.
pub fn project_floor<'a>(
    svc: &Service,
    fields: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Option<Value>> {
    let findings = floor::scan(fields);
    if findings.is_empty() {
        return Ok(None);
    }
    match svc.owner.config.project_secrets {
        SecretPolicy::Flag => Ok(Some(floor::to_json(&findings))),
        SecretPolicy::Refuse => Err(OwnerError::HygieneRefused {
            found: floor::summary(&findings),
            findings: floor::to_json(&findings),
            fix: floor::FIX_PROJECT.to_string(),
        }),
    }
}
