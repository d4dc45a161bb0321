//! `tend`: keep a store lean without a language model (SPEC §14). Live claims that say
//! the same thing under different labels are joined (`apply`: one `consolidate` act each,
//! undone by `undo`), claims that disagree are listed for review and never joined,
//! claims aged out and unused are proposed for retirement. Without `apply` it writes no
//! claim and no act. The founder's only: an agent neither joins nor undoes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::service::tending::{Named, Pass};
use crate::service::verb::{Answer, Cx, Effect, Verb};

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct TendArgs {
    /// The store: a brain's root or fingerprint, `medulla` or `team`. Default: the
    /// caller's brain.
    #[arg(
        long,
        value_name = "ROOT",
        help = "The store: a brain's root or fingerprint, medulla or team (default: this directory's brain)"
    )]
    pub brain: Option<String>,
    /// Make the joins (each one `consolidate` act). Without it nothing is written.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", help = "Make the joins; without it, only report")]
    #[serde(default)]
    pub apply: Option<bool>,
    /// Undo a join: its surviving label (every label joined into it comes back) or one
    /// label it took out.
    #[arg(
        long,
        value_name = "SLUG",
        conflicts_with = "apply",
        help = "Undo a join: its surviving label, or one label it took out"
    )]
    pub undo: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TendAnswer {
    /// The pass (absent for an undo).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub pass: Option<Pass>,
    /// An undo: the labels brought back live (each a `revive` act).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revived: Vec<Named>,
}

impl Answer for TendAnswer {
    fn wrote(&self) -> bool {
        !self.revived.is_empty()
            || self
                .pass
                .as_ref()
                .is_some_and(|p| p.joins.iter().any(|j| j.done))
    }
}

pub struct Tend;

impl Verb for Tend {
    const NAME: &'static str = "tend";
    const DESCRIPTION: &'static str = "Keep a store lean (the founder's): live claims that say the same thing under different labels are joined (`apply`: one `consolidate` act each; one label survives with the strongest, most recent text, the others go to history with `consolidated: into <slug>`; `undo` brings them back); claims alike but for a number, a name, a path or an identifier are a disagreement, never joined, listed for review; claims aged out that nothing used in their half-life are proposed for retirement. Without `apply` nothing is written. Runs on a schedule too (`tend_every_secs`).";
    const EFFECT: Effect = Effect::Write;
    const IDEMPOTENT: bool = true;
    const ROUTED: bool = false;
    const ALSO: &'static [&'static str] = &["POST /api/tend"];
    type Args = TendArgs;
    type Answer = TendAnswer;

    async fn run(cx: Cx<'_>, a: TendArgs) -> Result<TendAnswer> {
        let svc = cx.svc;
        svc.founder_only(cx.input, "tending a store")?;
        let (store, name) = svc.named_store(a.brain.as_deref(), cx.routed)?;
        let actor = super::review::person(cx.input);
        if let Some(slug) = a.undo.as_deref() {
            return Ok(TendAnswer {
                pass: None,
                revived: svc.tend_undo(&store, slug, &actor).await?,
            });
        }
        let pass = svc
            .tend_pass(&store, &name, a.apply.unwrap_or(false), &actor)
            .await?;
        Ok(TendAnswer {
            pass: Some(pass),
            revived: Vec::new(),
        })
    }
}
