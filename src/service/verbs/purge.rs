//! `purge`: erase a claim and every version of it, the way out for a secret that got in.

use brains::PurgeReport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{agent, write_target, BrainRef, Tier};
use crate::audit::AuditMsg;
use crate::error::Result;
use crate::service::check_query;
use crate::service::rows::StoreTier;
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct PurgeArgs {
    /// The claim's slug (a label is accepted and slugified).
    pub slug: String,
    /// `project` (default): the routed brain. `medulla`: the founder only.
    #[arg(
        long,
        value_enum,
        default_value = "project",
        help = "The store: project (this brain) or medulla (the founder's only)"
    )]
    pub tier: Option<Tier>,
    /// Who purges, `vendor:role`. Defaults to the Medulla-Agent header.
    #[arg(long = "agent", value_name = "AGENT", default_value = super::FOUNDER_AGENT, help = "Who purges (vendor:role)")]
    pub agent_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct PurgeAnswer {
    pub tier: StoreTier,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brain: Option<BrainRef>,
    pub purged: PurgeReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Answer for PurgeAnswer {}

pub struct Purge;

impl Verb for Purge {
    const NAME: &'static str = "purge";
    const DESCRIPTION: &'static str = "Erase a claim and every version of it (a secret that got in): the live version, its history, its vector, and the slug and notes of its acts; recorded as an act that keeps no content. tier medulla is the founder's only.";
    const EFFECT: Effect = Effect::Destructive;
    type Args = PurgeArgs;
    type Answer = PurgeAnswer;

    async fn run(cx: Cx<'_>, a: PurgeArgs) -> Result<PurgeAnswer> {
        super::no_team_tier(a.tier, "purge")?;
        let svc = cx.svc;
        check_query("slug", &a.slug)?;
        let slug = brains::slugify(&a.slug);
        let actor = agent(a.agent_id, cx.input)?;
        if a.tier == Some(Tier::Medulla) {
            svc.founder_only(cx.input, "purging the medulla")?;
            let purged = svc
                .owner
                .audit(|reply| AuditMsg::Purge {
                    agent: actor,
                    slug,
                    reply,
                })
                .await?;
            return Ok(PurgeAnswer {
                tier: StoreTier::Medulla,
                brain: None,
                purged,
                note: None,
            });
        }
        let target = write_target(cx.routed)?;
        let live = svc
            .owner
            .get(&StoreId::brain(&target.fingerprint), &slug)
            .await?;
        let purged = svc
            .owner
            .purge(&StoreId::brain(&target.fingerprint), &slug, &actor)
            .await?;
        svc.counters(&target.fingerprint).wrote();
        Ok(PurgeAnswer {
            tier: StoreTier::Project,
            brain: Some(BrainRef::from(target)),
            purged,
            note: live.and_then(|c| c.promoted_to).map(|stamp| {
                format!("this claim was promoted ({stamp}): its medulla copy is a separate record; the founder purges it with tier medulla")
            }),
        })
    }
}
