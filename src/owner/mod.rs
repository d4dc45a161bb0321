//! The owner: the supervisor actor. In `pre_start` it spawns, linked, the medulla's
//! actor, the mailbox distributor and the audit actor; later it spawns a brain actor for
//! each brain a request needs, restarts any child that fails (each from disk), unloads
//! idle brains, and keeps the [`Registry`] request handlers read.
//!
//! - [`registry`]: what handlers read without a message.
//! - [`counters`]: per-brain counters.
//! - [`handle`]: [`OwnerHandle`], the typed front of a running owner.
//!
//! Architecture invariant: one map from actor id to the child it is ([`Child`]); a
//! supervision event about an id the map lacks is an unloaded brain finishing its stop.

pub mod counters;
pub mod handle;
pub mod registry;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use brains::StoreOptions;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

use crate::audit::AuditActor;
use crate::brain::stores::Stores;
use crate::brain::{BrainActor, BrainArgs, BrainMsg, Shared};
use crate::config::Config;
use crate::error::{OwnerError, Result};
use crate::mailbox::{Distributor, DistributorArgs};
use crate::roster::{self, Manifest, RosterEntry};
pub use counters::BrainCounters;
pub use handle::OwnerHandle;
pub use registry::{Registry, Warm};

/// Messages to the owner.
pub enum OwnerMsg {
    /// The actor of a registered brain, loading it when dormant.
    Load {
        fp: String,
        reply: RpcReplyPort<Result<ActorRef<BrainMsg>>>,
    },
    /// Create a brain for a canonical root (idempotent). Replies with the manifest and
    /// whether it was created now.
    Bootstrap {
        root: PathBuf,
        reply: RpcReplyPort<Result<(Manifest, bool)>>,
    },
    /// Re-read the roster from disk; replies with every directory found.
    Rescan(RpcReplyPort<Vec<RosterEntry>>),
    /// Unload brains idle for longer than the configured time.
    UnloadIdle,
    /// Unload one brain now (replies whether it was warm).
    Unload {
        fp: String,
        reply: RpcReplyPort<bool>,
    },
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
    Brain(String),
    Medulla,
    Audit,
    Mailbox,
}

pub struct OwnerState {
    handle: OwnerHandle,
    children: HashMap<ractor::ActorId, Child>,
    mailbox_args: DistributorArgs,
}

pub struct OwnerActor;

async fn spawn_brain(
    me: &ActorRef<OwnerMsg>,
    dir: PathBuf,
    opts: StoreOptions,
    what: &str,
) -> Result<(ActorRef<BrainMsg>, Shared)> {
    let shared = Shared::default();
    let args = BrainArgs {
        dir,
        opts,
        shared: shared.clone(),
    };
    let (actor, _) = Actor::spawn_linked(None, BrainActor, args, me.get_cell())
        .await
        .map_err(|e| OwnerError::Unreachable {
            actor: what.to_string(),
            detail: e.to_string(),
        })?;
    Ok((actor, shared))
}

impl OwnerState {
    fn config(&self) -> &Config {
        &self.handle.config
    }

    fn registry(&self) -> &Registry {
        &self.handle.registry
    }

    fn brain_dir(&self, fp: &str) -> PathBuf {
        self.config().brains_dir().join(fp)
    }

    async fn load(&mut self, me: &ActorRef<OwnerMsg>, fp: &str) -> Result<ActorRef<BrainMsg>> {
        if let Some(a) = self.registry().warm_actor(fp) {
            return Ok(a);
        }
        if self.registry().manifest(fp).is_none() {
            self.rescan();
            if self.registry().manifest(fp).is_none() {
                return Err(OwnerError::UnknownBrain {
                    name: fp.to_string(),
                });
            }
        }
        let (actor, store) = spawn_brain(
            me,
            self.brain_dir(fp),
            self.handle.opts.clone(),
            &format!("brain {fp}"),
        )
        .await?;
        self.children
            .insert(actor.get_id(), Child::Brain(fp.to_string()));
        let warm = Warm {
            actor: actor.clone(),
            store,
            last_used: Arc::new(AtomicI64::new(self.registry().elapsed_ms())),
        };
        self.registry()
            .warm
            .write()
            .expect("registry lock")
            .insert(fp.to_string(), warm);
        self.registry().changed();
        tracing::info!(brain = fp, "brain loaded");
        self.keep_within_budget(fp).await;
        Ok(actor)
    }

    /// Unload the least recently used brains beyond `max_warm_brains` (never `keep`).
    async fn keep_within_budget(&mut self, keep: &str) {
        let max = self.config().max_warm_brains;
        loop {
            let victim = {
                let warm = self.registry().warm.read().expect("registry lock");
                if warm.len() <= max {
                    return;
                }
                warm.iter()
                    .filter(|(fp, _)| fp.as_str() != keep)
                    .min_by_key(|(_, w)| w.last_used.load(Ordering::Relaxed))
                    .map(|(fp, _)| fp.clone())
            };
            match victim {
                Some(fp) => {
                    tracing::debug!(
                        brain = fp,
                        "over the warm budget: unloading the least recently used"
                    );
                    self.unload(&fp).await;
                }
                None => return,
            }
        }
    }

    fn rescan(&mut self) -> Vec<RosterEntry> {
        let entries = roster::scan(&self.config().brains_dir());
        let map = entries
            .iter()
            .filter_map(|e| e.manifest.clone())
            .map(|m| (m.fingerprint.clone(), m))
            .collect();
        *self.registry().manifests.write().expect("registry lock") = map;
        entries
    }

    async fn unload(&mut self, fp: &str) -> bool {
        let Some(warm) = self
            .registry()
            .warm
            .write()
            .expect("registry lock")
            .remove(fp)
        else {
            return false;
        };
        self.children.remove(&warm.actor.get_id());
        self.registry().changed();
        // Persist the counts into the manifest so a dormant row still says something true.
        if let Ok(ractor::rpc::CallResult::Success(Ok(stats))) = warm
            .actor
            .call(BrainMsg::Stats, Some(Duration::from_secs(5)))
            .await
        {
            self.registry().counters(fp).note_live(stats.live_claims);
            if let Some(mut m) = self.registry().manifest(fp) {
                m.counts = roster::ManifestCounts {
                    live_claims: stats.live_claims,
                    history_versions: stats.history_versions,
                    acts: stats.acts,
                    as_of: self.handle.opts.clock.now_ms(),
                };
                if let Err(e) = roster::write_manifest(&self.brain_dir(fp), &m) {
                    tracing::warn!(brain = fp, error = %e, "could not refresh manifest counts");
                }
                self.registry()
                    .manifests
                    .write()
                    .expect("registry lock")
                    .insert(fp.to_string(), m);
            }
        }
        // Drain: queued requests finish before the store closes.
        if let Err(e) = warm
            .actor
            .drain_and_wait(Some(Duration::from_secs(30)))
            .await
        {
            tracing::warn!(brain = fp, error = %e, "brain did not drain cleanly");
        }
        tracing::info!(brain = fp, "brain unloaded");
        true
    }

    /// Record this week's live claim count of every warm store (dormant ones have not
    /// changed since their last record).
    async fn note_live_counts(&self) {
        let mut stores: Vec<(String, ActorRef<BrainMsg>)> = self
            .registry()
            .warm
            .read()
            .expect("registry lock")
            .iter()
            .map(|(fp, w)| (fp.clone(), w.actor.clone()))
            .collect();
        stores.push(("medulla".into(), self.registry().medulla()));
        for (fp, actor) in stores {
            if let Ok(ractor::rpc::CallResult::Success(Ok(s))) = actor
                .call(BrainMsg::Stats, Some(Duration::from_secs(5)))
                .await
            {
                self.registry().counters(&fp).note_live(s.live_claims);
            }
        }
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

    async fn spawn_medulla(&mut self, me: &ActorRef<OwnerMsg>) -> Result<()> {
        let medulla = spawn_brain(
            me,
            self.config().medulla_dir(),
            self.handle.opts.clone(),
            "medulla",
        )
        .await?;
        self.children.insert(medulla.0.get_id(), Child::Medulla);
        *self.registry().medulla.write().expect("registry lock") = medulla;
        Ok(())
    }

    async fn bootstrap(
        &mut self,
        me: &ActorRef<OwnerMsg>,
        root: &Path,
    ) -> Result<(Manifest, bool)> {
        let root_s = root.to_string_lossy().into_owned();
        let fp = roster::fingerprint(&root_s);
        if let Some(m) = self.registry().manifest(&fp) {
            return Ok((m, false));
        }
        let dir = self.brain_dir(&fp);
        if let Ok(m) = roster::read_manifest(&dir) {
            self.registry()
                .manifests
                .write()
                .expect("registry lock")
                .insert(fp.clone(), m.clone());
            return Ok((m, false));
        }
        let m = Manifest {
            root: root_s,
            fingerprint: fp.clone(),
            created: self.handle.opts.clock.now_ms(),
            counts: Default::default(),
        };
        roster::write_manifest(&dir, &m).map_err(|e| {
            OwnerError::Internal(format!("cannot write manifest in {}: {e}", dir.display()))
        })?;
        self.registry()
            .manifests
            .write()
            .expect("registry lock")
            .insert(fp.clone(), m.clone());
        self.load(me, &fp).await?;
        tracing::info!(brain = fp, root = %m.root, "brain bootstrapped");
        Ok((m, true))
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
        let medulla =
            spawn_brain(&me, args.config.medulla_dir(), args.opts.clone(), "medulla").await?;
        let medulla_id = medulla.0.get_id();
        let registry = Arc::new(Registry::new(
            medulla.clone(),
            args.config.brains_dir(),
            args.config.medulla_dir(),
            args.opts.clock.clone(),
        ));
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
        };
        state.spawn_mailbox(&me).await?;
        state.spawn_audit(&me).await?;
        state.rescan();
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
        st.note_live_counts().await;
        for fp in st.registry().warm_fps() {
            st.unload(&fp).await;
        }
        st.registry().flush_counters();
        let medulla = st.registry().medulla();
        let _ = medulla.drain_and_wait(Some(Duration::from_secs(30))).await;
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
                let _ = reply.send(st.load(&me, &fp).await);
            }
            OwnerMsg::Bootstrap { root, reply } => {
                let _ = reply.send(st.bootstrap(&me, &root).await);
            }
            OwnerMsg::Rescan(reply) => {
                let _ = reply.send(st.rescan());
            }
            OwnerMsg::UnloadIdle => {
                st.note_live_counts().await;
                st.registry().flush_counters();
                let now = st.registry().elapsed_ms();
                let idle_ms = st.config().idle_unload.as_millis() as i64;
                let idle: Vec<String> = st
                    .registry()
                    .warm
                    .read()
                    .expect("registry lock")
                    .iter()
                    .filter(|(_, w)| now - w.last_used.load(Ordering::Relaxed) >= idle_ms)
                    .map(|(fp, _)| fp.clone())
                    .collect();
                for fp in idle {
                    st.unload(&fp).await;
                }
            }
            OwnerMsg::Unload { fp, reply } => {
                let was = st.unload(&fp).await;
                let _ = reply.send(was);
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
            Child::Mailbox => st.spawn_mailbox(&me).await,
            Child::Medulla => st.spawn_medulla(&me).await,
            Child::Brain(fp) => {
                st.registry()
                    .warm
                    .write()
                    .expect("registry lock")
                    .remove(fp);
                st.load(&me, fp).await.map(|_| ())
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
