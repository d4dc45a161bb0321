//! The owner: the supervisor actor. In `pre_start` it spawns, linked, the medulla's
//! actor, the mailbox distributor and the audit actor; later it spawns a brain actor for
//! each brain a request needs, restarts any child that fails (each from disk), unloads
//! idle brains, and keeps the [`Registry`] request handlers read.
//!
//! The supervisor only decides. Opening a store (which may rebuild or re-embed for
//! minutes), draining and closing one, and reading counts all run in tasks beside it
//! that report back with a message; requests for a brain being opened wait on its
//! [`Opening`] entry with their own deadline, so one slow brain never delays another.
//!
//! - [`registry`]: what handlers read without a message.
//! - [`counters`]: per-brain counters.
//! - [`handle`]: [`OwnerHandle`], the typed front of a running owner.
//!
//! Architecture invariant: one map from actor id to the child it is ([`Child`]); a
//! supervision event about an id the map lacks is an unloaded brain finishing its stop.

pub mod active_model;
pub mod counters;
pub mod handle;
mod loading;
pub mod registry;
pub mod repository;
mod team;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use brains::StoreOptions;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use tokio::sync::watch;

use crate::audit::AuditActor;
use crate::brain::stores::Stores;
use crate::brain::{BrainMsg, Shared};
use crate::config::Config;
use crate::error::{OwnerError, Result};
use crate::mailbox::{Distributor, DistributorArgs};
use crate::roster::{Manifest, RosterEntry};
use crate::store_id::{Fingerprint, StoreId};
pub use counters::BrainCounters;
pub use handle::OwnerHandle;
use loading::open_and_spawn;
use registry::{OpenFailure, Opened, Opening};
pub use registry::{Registry, Warm};

/// Messages to the owner. Each is handled in microseconds: the owner only decides;
/// opening, draining and closing stores run beside it and report back.
pub enum OwnerMsg {
    /// A brain's writer: warm now, or a load to wait on (started now if none runs).
    Load {
        fp: Fingerprint,
        reply: RpcReplyPort<Result<Loading>>,
    },
    /// A load started by `Load` finished, well or not.
    Opened {
        fp: Fingerprint,
        result: std::result::Result<(ActorRef<BrainMsg>, Shared), OpenFailure>,
    },
    /// An unloaded brain's store is closed.
    Closed { fp: Fingerprint },
    /// The medulla's store was reopened after its actor failed.
    MedullaOpened(std::result::Result<(ActorRef<BrainMsg>, Shared), OpenFailure>),
    /// Create a brain for a canonical root (idempotent). Replies with the manifest and
    /// whether it was created now.
    Bootstrap {
        root: PathBuf,
        /// The repository it belongs to, read before (reading may run `git`).
        repo: Option<crate::roster::RepoBinding>,
        /// A checkout's brain of its own (`bootstrap --own`).
        own: bool,
        reply: RpcReplyPort<Result<(Manifest, bool)>>,
    },
    /// Record what a request learned about a brain's repository; replies what the
    /// brain's log is owed (a new checkout, an identity recorded anew).
    Learn {
        learned: repository::Learned,
        reply: RpcReplyPort<Result<repository::Recorded>>,
    },
    /// One brain was merged into another (`brains merge`): record it in both manifests.
    Merged {
        from: Fingerprint,
        into: Fingerprint,
        reply: RpcReplyPort<Result<Manifest>>,
    },
    /// Another project's checkouts of one brain are another's now (`brains split`):
    /// record it in both manifests.
    Separated {
        from: Fingerprint,
        into: Fingerprint,
        paths: Vec<String>,
        key: String,
        reply: RpcReplyPort<Result<Manifest>>,
    },
    /// Re-read the roster from disk; replies with every directory found.
    Rescan(RpcReplyPort<Vec<RosterEntry>>),
    /// Unload brains idle for longer than the configured time.
    UnloadIdle,
    /// Unload one brain now (replies whether it was warm).
    Unload {
        fp: Fingerprint,
        reply: RpcReplyPort<bool>,
    },
    /// Join a team while running (replies whether it was joined now).
    JoinTeam {
        team: crate::config::TeamConfig,
        reply: RpcReplyPort<Result<bool>>,
    },
    /// Stop the sync actor (replies whether a team was joined).
    StopSync(RpcReplyPort<bool>),
    /// Close the team medulla's mirror, its sharing stopped.
    CloseTeamStore(RpcReplyPort<()>),
}

/// What `Load` answers: the writer, or the load to wait on.
pub enum Loading {
    Warm(Warm),
    Opening(Opening),
}

pub struct OwnerArgs {
    pub config: Arc<Config>,
    pub opts: StoreOptions,
    /// Where the owner sends its handle once its children run.
    pub handle_slot: tokio::sync::oneshot::Sender<OwnerHandle>,
}

/// What a linked child actor is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Child {
    Brain(Fingerprint),
    Medulla,
    Audit,
    Mailbox,
    /// The team medulla's mirror.
    Team,
    /// The team's sync actor.
    Sync,
}

pub struct OwnerState {
    handle: OwnerHandle,
    children: HashMap<ractor::ActorId, Child>,
    mailbox_args: DistributorArgs,
    /// The writer side of each load under way.
    loads: HashMap<Fingerprint, watch::Sender<Opened>>,
    /// The writer side of each close under way.
    closes: HashMap<Fingerprint, watch::Sender<bool>>,
    /// The team joined: config.toml's at start, then what `team_join` and `team_leave`
    /// made it.
    team: Option<crate::config::TeamConfig>,
}

pub struct OwnerActor;

impl OwnerState {
    fn config(&self) -> &Config {
        &self.handle.config
    }

    fn registry(&self) -> &Registry {
        &self.handle.registry
    }

    async fn spawn_mailbox(&mut self, me: &ActorRef<OwnerMsg>) -> Result<()> {
        let (mb, _) =
            Actor::spawn_linked(None, Distributor, self.mailbox_args.clone(), me.get_cell())
                .await
                .map_err(|e| OwnerError::Unreachable {
                    actor: "mailbox".into(),
                    detail: e.to_string(),
                })?;
        self.children.insert(mb.get_id(), Child::Mailbox);
        *self.registry().mailbox.write().expect("registry lock") = Some(mb);
        Ok(())
    }

    async fn spawn_audit(&mut self, me: &ActorRef<OwnerMsg>) -> Result<()> {
        let stores: Arc<dyn Stores> = Arc::new(self.handle.clone());
        let (audit, _) = Actor::spawn_linked(None, AuditActor, stores, me.get_cell())
            .await
            .map_err(|e| OwnerError::Unreachable {
                actor: "audit".into(),
                detail: e.to_string(),
            })?;
        self.children.insert(audit.get_id(), Child::Audit);
        *self.registry().audit.write().expect("registry lock") = Some(audit);
        Ok(())
    }

    /// Reopen the medulla after its actor failed, beside the supervisor: the failed
    /// actor ran no `post_stop`, so its store is released first, then opened again.
    fn restart_medulla(&mut self, me: &ActorRef<OwnerMsg>) {
        let old = self.registry().medulla_store();
        let (me, dir, opts) = (
            me.clone(),
            self.config().medulla_dir(),
            self.handle.store_opts(),
        );
        tokio::spawn(async move {
            crate::brain::close(old).await;
            let result = open_and_spawn(me.get_cell(), dir, opts, None).await;
            if let Err(ractor::MessagingErr::SendErr(OwnerMsg::MedullaOpened(Ok((
                actor,
                shared,
            ))))) = me.send_message(OwnerMsg::MedullaOpened(result))
            {
                actor.stop(None);
                crate::brain::close(shared).await;
            }
        });
    }
}

impl Actor for OwnerActor {
    type Msg = OwnerMsg;
    type State = OwnerState;
    type Arguments = OwnerArgs;

    async fn pre_start(
        &self,
        me: ActorRef<OwnerMsg>,
        args: OwnerArgs,
    ) -> std::result::Result<OwnerState, ActorProcessingErr> {
        std::fs::create_dir_all(args.config.brains_dir())?;
        let medulla = open_and_spawn(
            me.get_cell(),
            args.config.medulla_dir(),
            args.opts.clone(),
            None,
        )
        .await
        .map_err(|f| format!("the medulla could not be opened: {}", f.message))?;
        let medulla_id = medulla.0.get_id();
        let registry = Arc::new(Registry::new(
            medulla.clone(),
            args.config.brains_dir(),
            args.config.medulla_dir(),
            args.config.team_dir().join("medulla"),
            args.config.team.as_ref().map(|t| {
                Arc::new(crate::team::status::TeamStatus::new(
                    crate::team::db::without_password(&t.url),
                    crate::team::db::Target::parse(&t.url)
                        .map(|t| t.member)
                        .unwrap_or_default(),
                    &args.config.team_dir(),
                ))
            }),
            args.opts.clock.clone(),
        ));
        registry.model.set(args.opts.embedder.clone());
        let handle = OwnerHandle {
            actor: me.clone(),
            registry: registry.clone(),
            config: args.config.clone(),
            opts: args.opts,
        };
        let reg = registry.clone();
        let mailbox_args = DistributorArgs {
            home: args.config.home.clone(),
            roots: Arc::new(move || reg.roots()),
            view: registry.mailbox_view.clone(),
            rescan_every: args.config.mailbox_rescan,
            events: registry.events.clone(),
            clock: handle.opts.clock.clone(),
        };
        let mut state = OwnerState {
            handle: handle.clone(),
            children: HashMap::from([(medulla_id, Child::Medulla)]),
            mailbox_args,
            loads: HashMap::new(),
            closes: HashMap::new(),
            team: args.config.team.clone(),
        };
        state.spawn_mailbox(&me).await?;
        state.spawn_audit(&me).await?;
        if state.team.is_some() {
            state.spawn_team_store(&me).await?;
            state.spawn_sync(&me).await?;
        }
        state.rescan();
        let recorder = handle.clone();
        repository::identify_all(
            me.clone(),
            registry.clone(),
            move |l| {
                let h = recorder.clone();
                // What the owner identified on its own is recorded as the router's.
                async move { h.record_learned(l, "medulla:router").await.map(|_| ()) }
            },
            args.config.call_timeout,
        );
        // The idle sweep: a tick a quarter of the idle time (bounded to [1 s, 60 s]).
        let every =
            (args.config.idle_unload / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
        let ticker = me.clone();
        tokio::spawn(async move {
            let mut iv = tokio::time::interval(every);
            iv.tick().await;
            loop {
                iv.tick().await;
                if ticker.cast(OwnerMsg::UnloadIdle).is_err() {
                    break;
                }
            }
        });
        let _ = args.handle_slot.send(handle);
        Ok(state)
    }

    async fn post_stop(
        &self,
        _me: ActorRef<OwnerMsg>,
        st: &mut OwnerState,
    ) -> std::result::Result<(), ActorProcessingErr> {
        // Counts are read, every brain is drained and closed, then the medulla.
        let registry = st.handle.registry.clone();
        for fp in registry.warm_fps() {
            if let Some(w) = registry.warm(&fp) {
                if let Ok(Some(s)) = crate::brain::read(w.store.clone(), |s| s.stats()).await {
                    registry
                        .counters(&StoreId::brain(&fp))
                        .note_live(s.live_claims);
                }
            }
            st.unload(&fp);
        }
        let pending: Vec<watch::Receiver<bool>> = registry
            .closing
            .read()
            .expect("registry lock")
            .values()
            .cloned()
            .collect();
        for mut closed in pending {
            let _ = tokio::time::timeout(Duration::from_secs(35), closed.wait_for(|c| *c)).await;
        }
        if let Ok(Some(s)) = crate::brain::read(registry.medulla_store(), |s| s.stats()).await {
            registry
                .counters(&StoreId::Medulla)
                .note_live(s.live_claims);
        }
        registry.flush_counters();
        let medulla = registry.medulla();
        let _ = medulla.drain_and_wait(Some(Duration::from_secs(30))).await;
        crate::brain::close(registry.medulla_store()).await;
        Ok(())
    }

    async fn handle(
        &self,
        me: ActorRef<OwnerMsg>,
        msg: OwnerMsg,
        st: &mut OwnerState,
    ) -> std::result::Result<(), ActorProcessingErr> {
        match msg {
            OwnerMsg::Load { fp, reply } => {
                let _ = reply.send(st.load(&me, &fp));
            }
            OwnerMsg::Opened { fp, result } => st.opened(fp, result),
            OwnerMsg::Closed { fp } => st.closed(fp),
            OwnerMsg::MedullaOpened(result) => match result {
                Ok((actor, shared)) => {
                    st.children.insert(actor.get_id(), Child::Medulla);
                    *st.registry().medulla.write().expect("registry lock") = (actor, shared);
                    st.registry().changed();
                    tracing::info!("medulla reopened");
                }
                Err(f) => {
                    tracing::error!(code = f.code, error = %f.message, "the medulla could not be reopened; medulla writes answer 503 until the owner restarts");
                }
            },
            OwnerMsg::Bootstrap {
                root,
                repo,
                own,
                reply,
            } => {
                let _ = reply.send(st.bootstrap(&me, &root, repo, own).await);
            }
            OwnerMsg::Learn { learned, reply } => {
                let _ = reply.send(st.learn(learned));
            }
            OwnerMsg::Merged { from, into, reply } => {
                let _ = reply.send(st.merged(&from, &into));
            }
            OwnerMsg::Separated {
                from,
                into,
                paths,
                key,
                reply,
            } => {
                let _ = reply.send(st.separated(&from, &into, &paths, &key));
            }
            OwnerMsg::Rescan(reply) => {
                let _ = reply.send(st.rescan());
            }
            OwnerMsg::UnloadIdle => {
                st.note_live_counts();
                let now = st.registry().elapsed_ms();
                let idle_ms = st.config().idle_unload.as_millis() as i64;
                let idle: Vec<Fingerprint> = st
                    .registry()
                    .warm
                    .read()
                    .expect("registry lock")
                    .iter()
                    .filter(|(_, w)| now - w.last_used.load(Ordering::Relaxed) >= idle_ms)
                    .map(|(fp, _)| fp.clone())
                    .collect();
                for fp in idle {
                    st.unload(&fp);
                }
            }
            OwnerMsg::Unload { fp, reply } => {
                let was = st.unload(&fp);
                let _ = reply.send(was);
            }
            OwnerMsg::JoinTeam { team, reply } => {
                let _ = reply.send(st.join_team(&me, team).await);
            }
            OwnerMsg::StopSync(reply) => {
                let _ = reply.send(st.stop_sync());
            }
            OwnerMsg::CloseTeamStore(reply) => {
                st.close_team_store().await;
                let _ = reply.send(());
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        me: ActorRef<OwnerMsg>,
        evt: SupervisionEvent,
        st: &mut OwnerState,
    ) -> std::result::Result<(), ActorProcessingErr> {
        let (cell, why): (ActorCell, String) = match evt {
            SupervisionEvent::ActorFailed(cell, err) => (cell, format!("failed: {err}")),
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                (cell, format!("stopped: {reason:?}"))
            }
            _ => return Ok(()),
        };
        // An id the map lacks is an unloaded brain finishing its stop.
        let Some(child) = st.children.remove(&cell.get_id()) else {
            return Ok(());
        };
        tracing::error!(?child, why, "child actor down; restarting it");
        let restarted = match &child {
            Child::Audit => st.spawn_audit(&me).await,
            Child::Sync => st.spawn_sync(&me).await,
            Child::Team => {
                // Its store is released, then opened again by a new actor.
                let old = st.registry().team.write().expect("registry lock").take();
                if let Some((_, shared)) = old {
                    crate::brain::close(shared).await;
                }
                st.spawn_team_store(&me).await
            }
            Child::Mailbox => st.spawn_mailbox(&me).await,
            Child::Medulla => {
                st.restart_medulla(&me);
                Ok(())
            }
            Child::Brain(fp) => {
                // A failed actor ran no `post_stop`: release its store, then load the
                // brain again from disk once the file is free.
                let warm = st
                    .registry()
                    .warm
                    .write()
                    .expect("registry lock")
                    .remove(fp);
                st.registry().changed();
                if let Some(w) = warm {
                    let closed = st.closing(fp);
                    let (me, fp) = (me.clone(), fp.clone());
                    tokio::spawn(async move {
                        crate::brain::close(w.store).await;
                        let _ = closed.send(true);
                        let _ = me.cast(OwnerMsg::Closed { fp });
                    });
                }
                st.load(&me, fp).map(|_| ())
            }
        };
        if let Err(e) = restarted {
            tracing::error!(?child, error = %e, "restart failed; a brain stays dormant until its next request, the medulla writes answer 503, letters wait in the spool");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
