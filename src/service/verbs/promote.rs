//! `promote`: copy a project claim into the medulla through the audit actor (hygiene
//! floor, provenance chain, the witness stamped `promoted_to`). Who may ask: a caller
//! routed to the claim's own brain, or the founder.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{agent, write_target, Cap, Etiquette, Outcome};
use crate::audit::AuditMsg;
use crate::error::{OwnerError, Result};
use crate::service::check_query;
use crate::service::route::find_brain;
use crate::service::rows::{Row, StoreTier};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct PromoteArgs {
    /// The claim's slug in the source brain (a label is accepted and slugified).
    #[arg(long, value_name = "SLUG", help = "The claim's slug in its brain")]
    pub claim: String,
    /// Why this holds beyond its project, in one line.
    #[arg(long, help = "Why it holds beyond its project, in one line")]
    pub reason: String,
    /// The source brain (root or fingerprint), or `medulla` to promote a personal medulla
    /// claim to the team (`to: team`, the founder only). Defaults to the routed brain.
    #[arg(
        long,
        value_name = "ROOT",
        help = "The source brain's root or fingerprint [default: the working directory's brain]"
    )]
    pub brain: Option<String>,
    /// Where to: the personal medulla (default) or the team medulla (`team`).
    #[arg(long, value_enum, help = "Where to promote [default: the medulla]")]
    pub to: Option<PromoteTo>,
    /// The promoter, `vendor:role`. Expected: `*:orchestrator` or `human:founder` (audited, not enforced).
    #[arg(long = "agent", value_name = "AGENT", default_value = super::FOUNDER_AGENT, help = "Who promotes (vendor:role)")]
    pub agent_id: Option<String>,
}

/// Where a promotion copies the claim.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum PromoteTo {
    /// The personal medulla (this machine's doctrine).
    Medulla,
    /// The team medulla (shared with the team through its database).
    Team,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Identities {
    /// `medulla#<slug>`.
    pub medulla: String,
    /// `<root>#<slug>`.
    pub witness: String,
    /// `medulla@<slug>@<ms>`.
    pub promoted_to: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct PromoteAnswer {
    pub outcome: Outcome,
    pub medulla_claim: Row,
    pub witness: Row,
    pub identities: Identities,
    pub etiquette: Etiquette,
    pub medulla_cap: Cap,
}

impl Answer for PromoteAnswer {}

pub struct Promote;

impl Verb for Promote {
    const NAME: &'static str = "promote";
    const DESCRIPTION: &'static str = "Copy a project claim into the medulla (to: team for the team medulla) through the audit actor (hygiene floor, provenance chain, witness stamped promoted_to). Only for a caller routed to the claim's brain, or the founder. Expected of *:orchestrator and human:founder; others land flagged.";
    const EFFECT: Effect = Effect::Write;
    const IDEMPOTENT: bool = true;
    const ALSO: &'static [&'static str] = &["POST /api/promote"];
    type Args = PromoteArgs;
    type Answer = PromoteAnswer;

    async fn run(cx: Cx<'_>, a: PromoteArgs) -> Result<PromoteAnswer> {
        let svc = cx.svc;
        // The founder surface acts as the founder unless it names another agent.
        let agent = match (a.agent_id, cx.input.founder) {
            (None, true) => "human:founder".to_string(),
            (id, _) => agent(id, cx.input)?,
        };
        let (to, tier) = match a.to {
            Some(PromoteTo::Team) => {
                svc.owner.registry.team().ok_or(OwnerError::NoTeam)?;
                (StoreId::Team, StoreTier::Team)
            }
            _ => (StoreId::Medulla, StoreTier::Medulla),
        };
        let (from, witness_tier) = match a.brain.as_deref() {
            // The personal medulla's doctrine, to the team: the founder's call alone.
            Some("medulla") => {
                svc.founder_only(cx.input, "promoting a personal medulla claim to the team")?;
                (
                    (StoreId::Medulla, "medulla".to_string()),
                    StoreTier::Medulla,
                )
            }
            Some(b) => {
                let brain =
                    find_brain(&svc.owner.registry, b).ok_or_else(|| OwnerError::UnknownBrain {
                        name: b.to_string(),
                    })?;
                // Anyone else would be copying another project's private claim into the
                // memory every brain reads.
                svc.authorize_brain(cx.routed, cx.input, &brain, "promote a claim of")?;
                (
                    (StoreId::brain(&brain.fingerprint), brain.root),
                    StoreTier::Project,
                )
            }
            None => {
                let brain = write_target(cx.routed)?.clone();
                svc.authorize_brain(cx.routed, cx.input, &brain, "promote a claim of")?;
                (
                    (StoreId::brain(&brain.fingerprint), brain.root),
                    StoreTier::Project,
                )
            }
        };
        check_query("claim", &a.claim)?;
        let slug = brains::slugify(&a.claim);
        let done = svc
            .owner
            .audit(|reply| AuditMsg::Promote {
                to,
                agent: agent.clone(),
                from,
                slug,
                reason: a.reason,
                reply,
            })
            .await?;
        let now = svc.now();
        Ok(PromoteAnswer {
            outcome: Outcome::from(&done.outcome),
            medulla_claim: Row::of(done.outcome.claim(), tier, now, None),
            witness: Row::of(&done.witness, witness_tier, now, None),
            identities: Identities {
                medulla: format!("{}#{}", tier.as_str(), done.outcome.claim().slug),
                witness: done.origin_claim,
                promoted_to: done.stamp,
            },
            etiquette: Etiquette::of(&agent),
            medulla_cap: Cap::of_store(tier, done.medulla_live),
        })
    }
}
