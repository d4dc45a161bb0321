//! `bootstrap`: create the brain for a project root. Idempotent; never rebinds a session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BrainRef;
use crate::error::{OwnerError, Result};
use crate::roster;
use crate::service::verb::{Answer, Cx, Effect, Verb};

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct BootstrapArgs {
    /// Absolute path of the project root. Defaults to the caller root.
    #[arg(
        value_name = "PATH",
        help = "The project root [default: the working directory]"
    )]
    pub root: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BootstrapAnswer {
    pub brain: BrainRef,
    /// False when the brain already existed.
    pub created: bool,
    /// The header a child sends to be bound to this brain from anywhere.
    pub binding_header: String,
}

impl Answer for BootstrapAnswer {}

pub struct Bootstrap;

impl Verb for Bootstrap {
    const NAME: &'static str = "bootstrap";
    const DESCRIPTION: &'static str = "Create the brain for a project root (idempotent). Without `root`, the caller root is used. Refuses `/`, system directories, the medulla home and the home directory itself.";
    const EFFECT: Effect = Effect::Write;
    const IDEMPOTENT: bool = true;
    // What was routed before the brain existed is moot once it does.
    const ROUTED: bool = false;
    type Args = BootstrapArgs;
    type Answer = BootstrapAnswer;

    async fn run(cx: Cx<'_>, a: BootstrapArgs) -> Result<BootstrapAnswer> {
        let raw = match a.root {
            Some(r) => r,
            None => cx
                .routed
                .caller_root
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned())
                .ok_or_else(|| {
                    OwnerError::BadInput(
                        "no root given and no caller root header: pass root".into(),
                    )
                })?,
        };
        let cfg = &cx.svc.owner.config;
        let root = roster::canonical_root(&raw, &cfg.canonical_home, cfg.user_home.as_deref())?;
        let (m, created) = cx.svc.owner.bootstrap(root).await?;
        Ok(BootstrapAnswer {
            binding_header: format!("Medulla-Brain: {}", m.root),
            brain: BrainRef::from(&m),
            created,
        })
    }
}
