//! `debrief`: a child's findings memorized project-private under the child's agent id in
//! the bound brain. Never writes the medulla.

use brains::{MemorizeInput, Strength};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::memorize::project_floor;
use super::{agent, write_target, ErrorBody, Outcome, Tier};
use crate::error::{OwnerError, Result};
use crate::service::rows::{Row, StoreTier};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::{Fingerprint, StoreId};

/// Most findings in one debrief.
const MAX_FINDINGS: usize = 100;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub label: String,
    pub text: String,
    pub strength: Option<Strength>,
    pub evidence: Option<Vec<String>>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebriefArgs {
    /// What the child found; each becomes a project-private claim under the child's id.
    pub findings: Vec<Finding>,
    /// The child's agent id. Defaults to the Medulla-Agent header.
    pub agent_id: Option<String>,
    /// Only `project` is accepted: a debrief never writes the medulla.
    pub tier: Option<Tier>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BrainId {
    pub root: String,
    pub fingerprint: Fingerprint,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FindingResult {
    Written {
        label: String,
        outcome: Outcome,
        claim: Box<Row>,
    },
    Refused {
        label: String,
        error: ErrorBody,
    },
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DebriefAnswer {
    pub brain: BrainId,
    pub agent: String,
    pub findings: Vec<FindingResult>,
}

impl Answer for DebriefAnswer {}

pub struct Debrief;

impl Verb for Debrief {
    const NAME: &'static str = "debrief";
    const DESCRIPTION: &'static str = "Memorize a child's findings project-private under the child's agent id in the bound brain. Never writes the medulla.";
    const EFFECT: Effect = Effect::Write;
    const IDEMPOTENT: bool = true;
    type Args = DebriefArgs;
    type Answer = DebriefAnswer;

    async fn run(cx: Cx<'_>, a: DebriefArgs) -> Result<DebriefAnswer> {
        super::no_team_tier(a.tier, "debrief")?;
        let svc = cx.svc;
        if a.tier == Some(Tier::Medulla) {
            return Err(OwnerError::BadInput(
                "debrief writes only the project tier, not \"medulla\": findings are proposed here and promoted by an orchestrator".into(),
            ));
        }
        if a.findings.is_empty() {
            return Err(OwnerError::BadInput(
                "debrief needs at least one finding".into(),
            ));
        }
        let target = write_target(cx.routed)?.clone();
        let anchor_root = cx
            .routed
            .anchor_root()
            .unwrap_or_else(|| target.root.clone());
        let agent = agent(a.agent_id, cx.input)?;
        if a.findings.len() > MAX_FINDINGS {
            return Err(OwnerError::BadInput(format!(
                "a debrief carries at most {MAX_FINDINGS} findings, this one {}: split it",
                a.findings.len()
            )));
        }
        // Validate all before writing any, so a bad finding never leaves a half debrief.
        let mut inputs = Vec::new();
        for f in a.findings {
            let mut mi = MemorizeInput {
                label: f.label,
                text: f.text,
                source_agent: agent.clone(),
                strength: f.strength.unwrap_or_default(),
                evidence: f.evidence.unwrap_or_default(),
                origin_brain: Some(target.root.clone()),
                written_from: cx.routed.written_from(),
                session: cx.input.session.clone(),
                ..Default::default()
            };
            mi.validate()?;
            project_floor(
                svc,
                crate::floor::claim_fields(&mi.label, &mi.text, &mi.evidence),
            )?;
            let (anchors, _) =
                crate::service::anchors::take_async(&anchor_root, &mi.evidence, svc.now().ms).await;
            mi.anchors = anchors;
            inputs.push(mi);
        }
        let now = svc.now();
        let mut findings = Vec::new();
        for mi in inputs {
            let label = mi.label.clone();
            match svc
                .owner
                .memorize(&StoreId::brain(&target.fingerprint), mi)
                .await
            {
                Ok(outcome) => {
                    svc.counters(&target.fingerprint).wrote();
                    if let brains::MemorizeOutcome::Superseded { claim, previous } = &outcome {
                        crate::service::provenance::notice_superseded(
                            svc,
                            &target.root,
                            previous,
                            claim,
                        )
                        .await;
                    }
                    findings.push(FindingResult::Written {
                        label,
                        outcome: Outcome::from(&outcome),
                        claim: Box::new(Row::of(outcome.claim(), StoreTier::Project, now, None)),
                    })
                }
                Err(e) => findings.push(FindingResult::Refused {
                    label,
                    error: ErrorBody::from(&e),
                }),
            }
        }
        Ok(DebriefAnswer {
            brain: BrainId {
                root: target.root,
                fingerprint: target.fingerprint,
            },
            agent,
            findings,
        })
    }
}
