//! `team_status` and `team_share` (SPEC §13): what this owner's team link is doing, and
//! sharing the routed brain with the team. Sharing sends a project's memory to everyone
//! in the team's database: the founder's decision only.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::write_target;
use crate::error::{OwnerError, Result};
use crate::service::rows::{Row, StoreTier};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;
use crate::team::status::TeamView;

#[derive(Debug, Default, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct TeamStatusArgs {}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TeamStatusAnswer {
    #[serde(flatten)]
    pub view: TeamView,
    /// Versions that another member superseded at the same time, and live versions a
    /// verdict or retirement raced (`races`), in the team medulla and this owner's shared
    /// brains: shown, never resolved silently.
    pub conflicts: Vec<Row>,
    /// Purges members asked the team admin for (a local purge of a shared claim is
    /// refused and sent as a request): the admin's `medulla team purge` clears them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub purge_requests: Vec<PurgeRequest>,
    /// The team medulla's live claims against the team's own soft cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap: Option<super::Cap>,
}

impl Answer for TeamStatusAnswer {}

/// A member's request that the team admin erase a claim everywhere.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PurgeRequest {
    /// The shared store: `team`, or `repo:<root commit>`.
    pub store: String,
    pub slug: String,
    /// Who asked (as the database stamped it, or this owner's member).
    pub member: String,
    /// The command that does it.
    pub fix: String,
}

pub struct TeamStatus;

impl Verb for TeamStatus {
    const NAME: &'static str = "team_status";
    const DESCRIPTION: &'static str = "The team link (SPEC §13): connected or offline since when, what is queued, the log not yet applied, members, shared brains, and conflicts between members' versions.";
    const EFFECT: Effect = Effect::Read;
    const IDEMPOTENT: bool = true;
    const ALSO: &'static [&'static str] = &["GET /api/team"];
    const ROUTED: bool = false;
    type Args = TeamStatusArgs;
    type Answer = TeamStatusAnswer;

    async fn run(cx: Cx<'_>, _a: TeamStatusArgs) -> Result<TeamStatusAnswer> {
        report(cx.svc).await?.ok_or(OwnerError::NoTeam)
    }
}

/// The team's status with its conflicts, when a team is joined (`team_status`, doctor).
pub async fn report(svc: &crate::service::Service) -> Result<Option<TeamStatusAnswer>> {
    let Some(status) = svc.owner.registry.team_status() else {
        return Ok(None);
    };
    let view = status.view();
    let now = svc.now();
    let mut conflicts = Vec::new();
    let mut purge_requests = Vec::new();
    let mut stores = vec![(crate::team::TEAM_KEY.to_string(), StoreId::Team, true)];
    stores.extend(view.shared.iter().map(|s| {
        let warm = svc.owner.registry.is_warm(&s.fingerprint);
        (s.key.clone(), StoreId::brain(&s.fingerprint), warm)
    }));
    for (key, id, warm) in stores {
        let tier = if id == StoreId::Team {
            StoreTier::Team
        } else {
            StoreTier::Project
        };
        // A warm store is read (and what it says kept); a dormant brain is never loaded
        // for this: its conflicts as of its last apply or warm read are shown.
        if warm {
            if let Ok(cs) = svc.owner.live_claims(&id).await {
                status.conflicts.set(&key, cs);
            }
            if let Ok(r) = svc.owner.read(&id, |s| s.purge_requests()).await {
                status.conflicts.set_requests(&key, r);
            }
        }
        for c in status.conflicts.get(&key) {
            conflicts.push(Row::of(&c, tier, now, None));
        }
        for (slug, member) in status.conflicts.requests(&key) {
            purge_requests.push(PurgeRequest {
                fix: format!("medulla team purge --url ADMIN_URL --store {key} --slug {slug}"),
                store: key.clone(),
                slug,
                member,
            });
        }
    }
    let cap = svc
        .owner
        .stats(&StoreId::Team)
        .await
        .ok()
        .map(|s| super::Cap::of_store(StoreTier::Team, s.live_claims));
    Ok(Some(TeamStatusAnswer {
        view,
        conflicts,
        purge_requests,
        cap,
    }))
}

#[derive(Debug, Default, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct TeamShareArgs {}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TeamShareAnswer {
    /// The brain shared.
    pub root: String,
    /// Its team identity: `repo:<root commit>`.
    pub key: String,
    /// The normalized remote URL.
    pub label: String,
    /// Live claims queued for the team now.
    pub queued: u64,
    /// Live claims the hygiene floor kept on this machine.
    pub refused: u64,
}

impl Answer for TeamShareAnswer {}

pub struct TeamShare;

impl Verb for TeamShare {
    const NAME: &'static str = "team_share";
    const DESCRIPTION: &'static str = "Share this project's brain with the team (SPEC §13): identified by its project (its repository's root commit and its remote), so every clone converges on it and projects that merely share history do not; every live claim and every later write is queued for the team after the hygiene floor. The founder's only.";
    const EFFECT: Effect = Effect::Write;
    const ALSO: &'static [&'static str] = &["POST /api/team/share"];
    type Args = TeamShareArgs;
    type Answer = TeamShareAnswer;

    async fn run(cx: Cx<'_>, _a: TeamShareArgs) -> Result<TeamShareAnswer> {
        let svc = cx.svc;
        svc.founder_only(cx.input, "sharing a brain with the team")?;
        let sync = svc.owner.registry.sync().ok_or(OwnerError::NoTeam)?;
        let brain = write_target(cx.routed)?.clone();
        let root = std::path::PathBuf::from(&brain.root);
        let repo = tokio::task::spawn_blocking(move || crate::repo::identify(&root))
            .await
            .map_err(|e| OwnerError::Internal(e.to_string()))?
            .map_err(OwnerError::BadInput)?;
        svc.owner.warm_brain(&brain.fingerprint).await?;
        let r = repo.clone();
        let (done, key) =
            crate::call::call_actor(&sync, "team sync", svc.owner.config.call_timeout, |reply| {
                crate::team::sync::SyncMsg::Share {
                    fp: brain.fingerprint.clone(),
                    root: brain.root.clone(),
                    repo: r,
                    reply,
                }
            })
            .await?
            .map_err(OwnerError::Team)?;
        Ok(TeamShareAnswer {
            root: brain.root,
            key,
            label: repo.label,
            queued: done.queued,
            refused: done.refused,
        })
    }
}
