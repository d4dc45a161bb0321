//! `team_join` and `team_leave` (SPEC §13, issue 51): joining and leaving a team while
//! the owner runs. `medulla team join URL` writes config.toml and the pgpass file, then
//! asks a running owner to join what config.toml names: the sync actor starts, catches
//! the mirrors up, and every answer carries `team` at once. `medulla team leave` asks
//! it to stop: the sync actor stops, every shared store stops queueing (what was never
//! sent is dropped and counted), and the team medulla's mirror closes (its file stays).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{OwnerError, Result};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;

#[derive(Debug, Default, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct TeamJoinArgs {}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TeamJoinAnswer {
    /// The database, without its password.
    pub url: String,
    /// True when joined now; false when this owner was already joined to it.
    pub joined: bool,
}

impl Answer for TeamJoinAnswer {}

pub struct TeamJoin;

impl Verb for TeamJoin {
    const NAME: &'static str = "team_join";
    const DESCRIPTION: &'static str = "Join the team config.toml's [team] names, while the owner runs (SPEC §13): the sync actor starts and catches the mirrors up, and every answer carries team from now on. `medulla team join URL` writes config.toml, then calls this. The founder's only.";
    const EFFECT: Effect = Effect::Write;
    const IDEMPOTENT: bool = true;
    const ALSO: &'static [&'static str] = &["POST /api/team/join"];
    const ROUTED: bool = false;
    type Args = TeamJoinArgs;
    type Answer = TeamJoinAnswer;

    async fn run(cx: Cx<'_>, _a: TeamJoinArgs) -> Result<TeamJoinAnswer> {
        let svc = cx.svc;
        svc.founder_only(cx.input, "joining a team")?;
        let home = svc.owner.config.home.clone();
        let team = crate::config::Config::load(&home)
            .map_err(|e| OwnerError::BadInput(format!("{e:#}")))?
            .team
            .ok_or_else(|| {
                OwnerError::BadInput(
                    "config.toml names no team: run `medulla team join URL`, which writes it and then joins".into(),
                )
            })?;
        let url = crate::team::db::without_password(&team.url);
        let joined = svc.owner.join_team(team).await?;
        Ok(TeamJoinAnswer { url, joined })
    }
}

#[derive(Debug, Default, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct TeamLeaveArgs {}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TeamLeaveAnswer {
    /// True when a team was left now; false when none was joined.
    pub left: bool,
    /// Acts that were queued and never sent, dropped.
    pub dropped: u64,
    /// The stores that stopped sharing: `team`, and each shared brain's root.
    pub stopped: Vec<String>,
}

impl Answer for TeamLeaveAnswer {}

pub struct TeamLeave;

impl Verb for TeamLeave {
    const NAME: &'static str = "team_leave";
    const DESCRIPTION: &'static str = "Leave the team while the owner runs (SPEC §13): the sync actor stops, every shared store stops queueing (what was never sent is dropped and counted), the team medulla's mirror closes (its file stays). `medulla team leave` calls this, then takes [team] out of config.toml. The founder's only.";
    const EFFECT: Effect = Effect::Write;
    const IDEMPOTENT: bool = true;
    const ALSO: &'static [&'static str] = &["POST /api/team/leave"];
    const ROUTED: bool = false;
    type Args = TeamLeaveArgs;
    type Answer = TeamLeaveAnswer;

    async fn run(cx: Cx<'_>, _a: TeamLeaveArgs) -> Result<TeamLeaveAnswer> {
        let svc = cx.svc;
        svc.founder_only(cx.input, "leaving the team")?;
        // Nothing is sent or applied from here on; then each store stops queueing.
        let left = svc.owner.stop_sync().await?;
        let team_dir = svc.owner.config.team_dir();
        let mut stores = Vec::new();
        if svc.owner.registry.team_store().is_some() {
            stores.push(("team".to_string(), StoreId::Team));
        }
        for s in crate::team::shares::load(&team_dir) {
            stores.push((s.root.clone(), StoreId::brain(&s.fingerprint)));
        }
        let (mut dropped, mut stopped, mut failed) = (0, Vec::new(), None);
        for (name, id) in stores {
            match svc.owner.stop_sharing(&id).await {
                Ok(n) => {
                    dropped += n;
                    stopped.push(name);
                }
                Err(e) => failed = Some((name, e)),
            }
        }
        svc.owner.close_team_store().await?;
        if let Some((name, e)) = failed {
            // The list of shared brains stays, so running leave again finishes the job.
            return Err(OwnerError::Team(format!(
                "{name} could not stop sharing ({e}): it would still queue; fix that, then run `medulla team leave` again"
            )));
        }
        let _ = std::fs::remove_file(team_dir.join("shares.json"));
        Ok(TeamLeaveAnswer {
            left,
            dropped,
            stopped,
        })
    }
}
