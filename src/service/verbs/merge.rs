//! `brains_merge`: two brains of one repository that split before brains belonged to
//! repositories (SPEC §3) joined into one. Founder only; every version kept.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BrainRef;
use crate::error::{OwnerError, Result};
use crate::service::route::find_brain;
use crate::service::verb::{Answer, Cx, Effect, Verb};

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct MergeArgs {
    /// The brain merged in (its root or fingerprint): kept on disk, never routed to again.
    #[arg(
        value_name = "FROM",
        help = "The brain to merge in (its root or fingerprint)"
    )]
    pub from: String,
    /// The brain that holds both afterwards (its root or fingerprint).
    #[arg(
        value_name = "INTO",
        help = "The brain that keeps both (its root or fingerprint)"
    )]
    pub into: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct MergeAnswer {
    pub from: BrainRef,
    pub into: BrainRef,
    /// Labels merged in, each one `merge` act in `into`'s log.
    pub labels: usize,
    /// Versions written into `into`, live or into history.
    pub versions: usize,
    /// Labels whose live version is now `from`'s.
    pub live_from_other: usize,
    /// Versions `into` already held (a merge run again writes nothing).
    pub already_held: usize,
    /// Labels both held live: the later (when at least as strong) is live, the other in
    /// history.
    pub met: Vec<String>,
    /// Every checkout `into` serves now, its own root first.
    pub checkouts: Vec<String>,
}

impl Answer for MergeAnswer {}

pub struct BrainsMerge;

impl Verb for BrainsMerge {
    const NAME: &'static str = "brains_merge";
    const DESCRIPTION: &'static str = "Merge one brain into another of the same repository (brains that split before a brain belonged to its repository): every live claim and every version of history, labels that meet resolved by the supersession rules with nothing dropped, one act per label; `from` is kept on disk and never routed to again. The founder's only.";
    const EFFECT: Effect = Effect::Write;
    const IDEMPOTENT: bool = true;
    const ROUTED: bool = false;
    const ALSO: &'static [&'static str] = &["POST /api/brains/merge"];
    type Args = MergeArgs;
    type Answer = MergeAnswer;

    async fn run(cx: Cx<'_>, a: MergeArgs) -> Result<MergeAnswer> {
        cx.svc.founder_only(cx.input, "merging brains")?;
        let reg = &cx.svc.owner.registry;
        let find = |name: &str| {
            find_brain(reg, name).ok_or_else(|| OwnerError::UnknownBrain {
                name: name.to_string(),
            })
        };
        let (from, into) = (find(&a.from)?, find(&a.into)?);
        let refuse = |why: String| OwnerError::MergeRefused {
            from: from.root.clone(),
            into: into.root.clone(),
            why,
        };
        if from.fingerprint == into.fingerprint {
            return Err(refuse("they are the same brain: name two brains".into()));
        }
        if let Some(other) = &into.merged_into {
            return Err(refuse(format!(
                "{} was itself merged into {other}: merge into {other}",
                into.root
            )));
        }
        if let (Some(f), Some(i)) = (&from.repo, &into.repo) {
            if f.key != i.key {
                return Err(refuse(format!(
                    "they belong to different repositories ({} is {}, {} is {}): a brain holds one project's memory; leave them apart",
                    from.root, f.key, into.root, i.key
                )));
            }
        }
        let done = cx
            .svc
            .owner
            .merge_brains(&from, &into, "human:founder")
            .await?;
        let into_now = reg.manifest(&into.fingerprint).unwrap_or(into);
        Ok(MergeAnswer {
            from: BrainRef::from(&from),
            into: BrainRef::from(&into_now),
            labels: done.labels,
            versions: done.versions,
            live_from_other: done.live_from_other,
            already_held: done.already_held,
            met: done.met,
            checkouts: into_now.checkout_paths().map(str::to_string).collect(),
        })
    }
}
