//! `bootstrap`: create the brain for a project root. Idempotent; never rebinds a session.
//! In a worktree or clone of a repository that already has a brain, that brain is the
//! answer (SPEC §3); `own` gives the checkout a brain of its own.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BrainRef;
use crate::error::{OwnerError, Result};
use crate::roster::{self, RepoBinding};
use crate::service::checkout;
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
    /// A brain of this checkout's own, even where its repository has a brain already (a
    /// worktree or clone kept apart): reached only through this root.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[arg(
        long,
        help = "Give this worktree or clone a brain of its own instead of its repository's"
    )]
    pub own: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BootstrapAnswer {
    pub brain: BrainRef,
    /// False when the brain already existed.
    pub created: bool,
    /// The header a child sends to be bound to this brain from anywhere.
    pub binding_header: String,
    /// The repository (`repo:<root commit>`) the brain belongs to, when it is in one
    /// with a commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Set when the root is a checkout (a worktree, a clone, a moved copy) of a
    /// repository whose brain already exists: that brain serves it; `own` makes a
    /// separate one instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub through_repository: Option<String>,
    /// A checkout's brain of its own (`own`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own: bool,
}

impl Answer for BootstrapAnswer {
    /// A brain made, or a checkout of a repository recorded for its brain.
    fn wrote(&self) -> bool {
        self.created || self.through_repository.is_some()
    }
}

pub struct Bootstrap;

impl Verb for Bootstrap {
    const NAME: &'static str = "bootstrap";
    const DESCRIPTION: &'static str = "Create the brain for a project root (idempotent). Without `root`, the caller root is used. In a worktree or clone of a repository that has a brain, that brain is the answer (`own: true` makes the checkout a brain of its own). Refuses `/`, system directories, the medulla home and the home directory itself.";
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
        let owner = &cx.svc.owner;
        let cfg = &owner.config;
        let root = roster::canonical_root(&raw, &cfg.canonical_home, cfg.user_home.as_deref())?;
        let located = checkout::locate(&owner.registry.repos, &root).await;
        let repo = located.as_ref().and_then(|l| {
            l.repo.as_ref().map(|r| RepoBinding {
                key: r.key.clone(),
                label: r.label.clone(),
                subdir: l.rel.to_string_lossy().into_owned(),
            })
        });
        // Outside every registered root, a checkout of a repository with a brain is
        // that brain's: a worktree, a moved checkout, a second clone. Inside one, a
        // brain here is a nested project's, as it always was.
        let manifests = owner.registry.all_manifests();
        let inside = roster::longest_prefix(manifests.iter(), &root).is_some();
        if let (false, false, Some(l)) = (a.own, inside, &located) {
            if let Some(r) = checkout::reach(&manifests.iter().collect::<Vec<_>>(), l) {
                if let Some(learned) = r.learned {
                    let actor = cx.input.agent.as_deref().unwrap_or("human:founder");
                    let actor = brains::claim::validate_agent_id(actor)
                        .map(|_| actor)
                        .unwrap_or(crate::service::ROUTER_AGENT);
                    owner.record_learned(learned, actor).await?;
                }
                return Ok(BootstrapAnswer {
                    binding_header: format!("Medulla-Brain: {}", r.brain.root),
                    brain: BrainRef::from(&r.brain),
                    created: false,
                    repository: r.brain.repo.as_ref().map(|x| x.key.clone()),
                    through_repository: Some(format!(
                        "{} is a checkout of {} ({}), whose brain is {}: it serves this checkout; bootstrap with own: true (`medulla bootstrap --own`) for a brain of this checkout's own",
                        root.display(),
                        r.brain.repo.as_ref().map(|x| x.label.as_str()).unwrap_or("its repository"),
                        r.brain.repo.as_ref().map(|x| x.key.as_str()).unwrap_or("?"),
                        r.brain.root
                    )),
                    own: false,
                });
            }
        }
        let (m, created) = owner.bootstrap(root, repo, a.own).await?;
        Ok(BootstrapAnswer {
            binding_header: format!("Medulla-Brain: {}", m.root),
            brain: BrainRef::from(&m),
            created,
            repository: m.repo.as_ref().map(|r| r.key.clone()),
            through_repository: None,
            own: m.own,
        })
    }
}
