//! The team link's actors (SPEC §13): the team medulla's mirror and the sync actor,
//! started when config.toml names a team, started and stopped while the owner runs
//! (`team_join`, `team_leave`), and restarted like any child.

use std::sync::Arc;

use ractor::{Actor, ActorRef};

use super::{open_and_spawn, Child, OwnerMsg, OwnerState};
use crate::config::TeamConfig;
use crate::error::{OwnerError, Result};
use crate::team::status::TeamStatus;

impl OwnerState {
    /// The team medulla's mirror: opened like the medulla, written only by its actor.
    pub(super) async fn spawn_team_store(&mut self, me: &ActorRef<OwnerMsg>) -> Result<()> {
        let team = open_and_spawn(
            me.get_cell(),
            self.config().team_dir().join("medulla"),
            self.handle.store_opts(),
            None,
        )
        .await
        .map_err(|f| {
            OwnerError::Internal(format!(
                "the team medulla's mirror could not be opened: {}",
                f.message
            ))
        })?;
        self.children.insert(team.0.get_id(), Child::Team);
        *self.registry().team.write().expect("registry lock") = Some(team);
        Ok(())
    }

    pub(super) async fn spawn_sync(&mut self, me: &ActorRef<OwnerMsg>) -> Result<()> {
        let (Some(team), Some(status)) = (self.team.clone(), self.registry().team_status()) else {
            return Ok(());
        };
        let (r1, r2, r3) = (
            self.handle.registry.clone(),
            self.handle.registry.clone(),
            self.handle.registry.clone(),
        );
        let owner = crate::team::sync::OwnerView {
            stores: Arc::new(self.handle.clone()),
            is_warm: Arc::new(move |fp| r1.is_warm(fp)),
            peek: Arc::new(move |fp| r3.peek(fp)),
            brains: Arc::new(move || {
                r2.all_manifests()
                    .into_iter()
                    .map(|m| (m.fingerprint, m.root))
                    .collect()
            }),
            home: self.config().home.clone(),
            clock: self.handle.opts.clock.clone(),
        };
        let args = crate::team::sync::SyncArgs {
            owner,
            team,
            status,
            wake: self.registry().team_wake.clone(),
        };
        let (sync, _) =
            Actor::spawn_linked(None, crate::team::sync::SyncActor, args, me.get_cell())
                .await
                .map_err(|e| OwnerError::Unreachable {
                    actor: "team sync".into(),
                    detail: e.to_string(),
                })?;
        self.children.insert(sync.get_id(), Child::Sync);
        self.registry().kick_sync_with(&sync);
        *self.registry().sync.write().expect("registry lock") = Some(sync);
        Ok(())
    }

    /// Join a team while running: its status first (every answer carries it from now
    /// on), the team medulla's mirror, then the sync actor, whose first pass catches up.
    /// `false`: already joined to this database.
    pub(super) async fn join_team(
        &mut self,
        me: &ActorRef<OwnerMsg>,
        team: TeamConfig,
    ) -> Result<bool> {
        if let Some(t) = &self.team {
            if t.url == team.url {
                return Ok(false);
            }
            return Err(OwnerError::BadInput(format!(
                "this owner is joined to {}: leave it first (`medulla team leave`), then join another",
                crate::team::db::without_password(&t.url)
            )));
        }
        let member = crate::team::db::Target::parse(&team.url)
            .map(|t| t.member)
            .unwrap_or_default();
        self.registry()
            .set_team_status(Some(Arc::new(TeamStatus::new(
                crate::team::db::without_password(&team.url),
                member,
                &self.config().team_dir(),
            ))));
        self.team = Some(team);
        if self.registry().team_store().is_none() {
            self.spawn_team_store(me).await?;
        }
        self.spawn_sync(me).await?;
        tracing::info!("joined the team while running: syncing");
        Ok(true)
    }

    /// Stop syncing: the sync actor stops (nothing more is sent or applied) and answers
    /// stop carrying `team`. The mirrors stay open until their sharing is stopped and
    /// [`OwnerState::close_team_store`] runs. `false`: no team was joined.
    pub(super) fn stop_sync(&mut self) -> bool {
        if self.team.take().is_none() {
            return false;
        }
        let sync = self.registry().sync.write().expect("registry lock").take();
        if let Some(s) = sync {
            // Out of the child map first: its stop is not a failure to restart.
            self.children.remove(&s.get_id());
            s.stop(None);
        }
        self.registry().set_team_status(None);
        tracing::info!("left the team while running: no longer syncing");
        true
    }

    /// Close the team medulla's mirror (its file stays on disk); `tier: team` answers
    /// `no_team` from now on.
    pub(super) async fn close_team_store(&mut self) {
        let old = self.registry().team.write().expect("registry lock").take();
        if let Some((actor, shared)) = old {
            self.children.remove(&actor.get_id());
            actor.stop(None);
            crate::brain::close(shared).await;
        }
    }
}
