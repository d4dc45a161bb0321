//! `learn`: grade a claim. On a medulla claim it goes through the audit actor, where
//! `wrong` demotes it (the project witness is never touched).

use brains::Verdict;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{agent, write_target, Cap, Etiquette, Tier};
use crate::audit::{AuditMsg, MedullaLearn};
use crate::error::Result;
use crate::service::rows::{Row, StoreTier};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct LearnArgs {
    /// The claim's slug (a label is accepted and slugified).
    #[arg(help = "The claim's slug")]
    pub slug: String,
    /// `correct`, `partial` or `wrong`. On a medulla claim, `wrong` demotes it (the project witness is untouched).
    #[arg(value_enum, help = "How it held")]
    pub verdict: Verdict,
    /// `project` (default) or `medulla`.
    #[arg(
        long,
        value_enum,
        default_value = "project",
        help = "The store graded: project (this brain) or medulla"
    )]
    pub tier: Option<Tier>,
    /// Why, in one line.
    #[arg(long, help = "Why (recorded with the act; a demotion's reason)")]
    pub note: Option<String>,
    #[arg(long = "agent", value_name = "AGENT", default_value = super::FOUNDER_AGENT, help = "Who grades (vendor:role)")]
    pub agent_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Graded {
    pub verdict: Verdict,
    pub claim: Row,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub etiquette: Option<Etiquette>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medulla_cap: Option<Cap>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Demoted {
    pub verdict: Verdict,
    pub demoted: Row,
    /// The project witness (`<root>#<slug>`), which demotion never touches.
    pub witness_untouched: Option<String>,
    pub etiquette: Etiquette,
    pub medulla_cap: Cap,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum LearnAnswer {
    Graded(Graded),
    Demoted(Demoted),
}

impl Answer for LearnAnswer {}

pub struct Learn;

impl Verb for Learn {
    const NAME: &'static str = "learn";
    const DESCRIPTION: &'static str = "Grade a claim: verdict correct | partial | wrong adjusts its trust. On a medulla or team claim (tier medulla | team), wrong demotes it; the project witness is untouched.";
    const EFFECT: Effect = Effect::Destructive;
    type Args = LearnArgs;
    type Answer = LearnAnswer;

    async fn run(cx: Cx<'_>, a: LearnArgs) -> Result<LearnAnswer> {
        let svc = cx.svc;
        let actor = agent(a.agent_id, cx.input)?;
        let slug = brains::slugify(&a.slug);
        let now = svc.now();
        if let Some((to, tier)) = a.tier.and_then(Tier::shared_store) {
            let (done, live) = svc
                .owner
                .audit(|reply| AuditMsg::Learn {
                    to,
                    agent: actor.clone(),
                    slug,
                    verdict: a.verdict,
                    note: a.note,
                    reply,
                })
                .await?;
            return Ok(match done {
                MedullaLearn::Demoted(c) => LearnAnswer::Demoted(Demoted {
                    verdict: a.verdict,
                    demoted: Row::of(&c, tier, now, None),
                    witness_untouched: c.origin_claim.clone(),
                    etiquette: Etiquette::of(&actor),
                    medulla_cap: Cap::of_store(tier, live),
                }),
                MedullaLearn::Graded(c) => LearnAnswer::Graded(Graded {
                    verdict: a.verdict,
                    claim: Row::of(&c, tier, now, None),
                    etiquette: Some(Etiquette::of(&actor)),
                    medulla_cap: Some(Cap::of_store(tier, live)),
                }),
            });
        }
        let target = write_target(cx.routed)?;
        let anchor_root = cx
            .routed
            .anchor_root()
            .unwrap_or_else(|| target.root.clone());
        let store = StoreId::brain(&target.fingerprint);
        let mut claim = svc
            .owner
            .learn(&store, &slug, a.verdict, &actor, a.note)
            .await?;
        svc.hint_used(Some(&target.fingerprint), &slug);
        if a.verdict == Verdict::Correct && !claim.evidence.is_empty() {
            // Judged correct as the code is now: its evidence is anchored to the files as
            // they are now (a recorded act of its own).
            let (anchors, _) =
                crate::service::anchors::take_async(&anchor_root, &claim.evidence, now.ms).await;
            if !crate::service::anchors::same(&anchors, &claim.anchors) {
                claim = svc.owner.reanchor(&store, &slug, anchors, &actor).await?;
            }
        }
        Ok(LearnAnswer::Graded(Graded {
            verdict: a.verdict,
            claim: Row::of(&claim, StoreTier::Project, now, None),
            etiquette: None,
            medulla_cap: None,
        }))
    }
}
