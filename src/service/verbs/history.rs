//! `history`: every version of a claim, oldest first, outdated ones included.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{write_target, Tier};
use crate::error::Result;
use crate::service::check_query;
use crate::service::rows::{Row, StoreTier};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// The claim's slug (a label is accepted and slugified).
    #[arg(help = "The claim's slug (a label is accepted)")]
    pub slug: String,
    /// Absent = this brain, then the medulla; `project`; `medulla`.
    #[arg(
        long,
        value_enum,
        help = "The store [default: this brain, else the medulla]"
    )]
    pub tier: Option<Tier>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct HistoryAnswer {
    pub slug: String,
    pub versions: Vec<Row>,
}

impl Answer for HistoryAnswer {}

pub struct History;

impl Verb for History {
    const NAME: &'static str = "history";
    const DESCRIPTION: &'static str =
        "Every version of a claim, oldest first, including outdated ones.";
    const EFFECT: Effect = Effect::Read;
    const IDEMPOTENT: bool = true;
    type Args = HistoryArgs;
    type Answer = HistoryAnswer;

    async fn run(cx: Cx<'_>, a: HistoryArgs) -> Result<HistoryAnswer> {
        super::no_team_tier(a.tier, "history")?;
        check_query("slug", &a.slug)?;
        let svc = cx.svc;
        let slug = brains::slugify(&a.slug);
        let now = svc.now();
        let mut versions = Vec::new();
        if a.tier != Some(Tier::Medulla) {
            if let Some(b) = cx.routed.brain.as_ref() {
                let vs = svc
                    .owner
                    .history(&StoreId::brain(&b.fingerprint), &slug)
                    .await?;
                versions.extend(Row::all(&vs, StoreTier::Project, now));
            } else if a.tier == Some(Tier::Project) {
                write_target(cx.routed)?;
            }
        }
        if a.tier == Some(Tier::Medulla) || (a.tier.is_none() && versions.is_empty()) {
            let vs = svc.owner.history(&StoreId::Medulla, &slug).await?;
            versions.extend(Row::all(&vs, StoreTier::Medulla, now));
        }
        crate::service::drift::mark(svc, cx.routed, cx.input, &mut versions).await;
        if versions.is_empty() {
            return Err(brains::StoreError::UnknownClaim { slug }.into());
        }
        Ok(HistoryAnswer { slug, versions })
    }
}
