//! `retire`: take a live claim out of recall without a replacement. The version becomes
//! `outdated` with the reason and who retired it, history kept, one recorded act. On
//! the medulla it goes through the audit actor, with the rules of a demotion (the
//! project witness is never touched). Retirement is not erasure: `purge` is.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{agent, write_target, BrainRef, Cap, Etiquette, Tier};
use crate::audit::AuditMsg;
use crate::error::Result;
use crate::service::check_query;
use crate::service::rows::{Row, StoreTier};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct RetireArgs {
    /// The claim's slug (a label is accepted and slugified).
    pub slug: String,
    /// Why it no longer holds, in one line. Kept on the retired version.
    #[arg(long, help = "Why it no longer holds, in one line")]
    pub reason: String,
    /// `project` (default): the routed brain. `medulla`: through the audit actor.
    #[arg(
        long,
        value_enum,
        default_value = "project",
        help = "The store: project (this brain) or medulla (through the audit actor)"
    )]
    pub tier: Option<Tier>,
    /// Who retires, `vendor:role`. Defaults to the Medulla-Agent header.
    #[arg(long = "agent", value_name = "AGENT", default_value = super::FOUNDER_AGENT, help = "Who retires (vendor:role)")]
    pub agent_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RetireAnswer {
    pub tier: StoreTier,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brain: Option<BrainRef>,
    /// The retired version, as history now holds it (`state: outdated`,
    /// `outdated_reason: "retired: …"`, `outdated_by`).
    pub retired: Row,
    /// The project witness (`<root>#<slug>`) of a medulla copy, which retirement never
    /// touches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness_untouched: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub etiquette: Option<Etiquette>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medulla_cap: Option<Cap>,
}

impl Answer for RetireAnswer {}

pub struct Retire;

impl Verb for Retire {
    const NAME: &'static str = "retire";
    const DESCRIPTION: &'static str = "Take a live claim out of recall without a replacement, with a one-line reason: the version goes to history as outdated (who and why kept), a recorded act. tier medulla or team goes through the audit actor; the project witness is untouched. The label may be memorized again later. Not erasure: purge erases.";
    const EFFECT: Effect = Effect::Destructive;
    type Args = RetireArgs;
    type Answer = RetireAnswer;

    async fn run(cx: Cx<'_>, a: RetireArgs) -> Result<RetireAnswer> {
        let svc = cx.svc;
        check_query("slug", &a.slug)?;
        let slug = brains::slugify(&a.slug);
        let actor = agent(a.agent_id, cx.input)?;
        let now = svc.now();
        if let Some((to, tier)) = a.tier.and_then(Tier::shared_store) {
            let (retired, live) = svc
                .owner
                .audit(|reply| AuditMsg::Retire {
                    to,
                    agent: actor.clone(),
                    slug,
                    reason: a.reason,
                    reply,
                })
                .await?;
            return Ok(RetireAnswer {
                tier,
                brain: None,
                witness_untouched: retired.origin_claim.clone(),
                retired: Row::of(&retired, tier, now, None),
                etiquette: Some(Etiquette::of(&actor)),
                medulla_cap: Some(Cap::of_store(tier, live)),
            });
        }
        let target = write_target(cx.routed)?;
        let retired = svc
            .owner
            .retire(
                &StoreId::brain(&target.fingerprint),
                &slug,
                &actor,
                &a.reason,
            )
            .await?;
        svc.counters(&target.fingerprint).wrote();
        svc.hint_used(Some(&target.fingerprint), &slug);
        Ok(RetireAnswer {
            tier: StoreTier::Project,
            brain: Some(BrainRef::from(target)),
            retired: Row::of(&retired, StoreTier::Project, now, None),
            witness_untouched: None,
            etiquette: None,
            medulla_cap: None,
        })
    }
}
