//! The owner: the supervisor actor. It spawns brain actors (linked, so it hears of their
//! failures), restarts a crashed one from disk, loads dormant brains on demand, unloads
//! idle ones, and keeps the shared [`Registry`] that request handlers read without
//! going through the actor.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use brains::StoreOptions;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use serde::Serialize;

use crate::audit::{AuditActor, AuditMsg};
use crate::brain::{BrainActor, BrainArgs, BrainMsg};
use crate::config::Config;
use crate::error::{OwnerError, Result};
use crate::mailbox::{Distributor, DistributorArgs, MailboxMsg, MailboxView};
use crate::roster::{self, Manifest, RosterEntry};

/// Per-brain counters, since the owner started. Never summed into an owner-wide number
/// on a brain's row.
#[derive(Debug, Default)]
pub struct BrainCounters {
    pub sessions: AtomicU64,
    pub recalls: AtomicU64,
    pub writes: AtomicU64,
    pub beats: AtomicU64,
}

impl BrainCounters {
    pub fn bump(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// A loaded brain.
#[derive(Clone)]
pub struct Warm {
    pub actor: ActorRef<BrainMsg>,
    last_used: Arc<AtomicI64>,
}

/// The state request handlers read directly. Only the owner actor writes `warm` and
/// `manifests`.
pub struct Registry {
    pub manifests: RwLock<HashMap<String, Manifest>>,
    pub warm: RwLock<HashMap<String, Warm>>,
    pub medulla: RwLock<ActorRef<BrainMsg>>,
    pub counters: RwLock<HashMap<String, Arc<BrainCounters>>>,
    pub audit: RwLock<Option<ActorRef<AuditMsg>>>,
    pub mailbox: RwLock<Option<ActorRef<MailboxMsg>>>,
    pub mailbox_view: Arc<MailboxView>,
    started: Instant,
}

impl Registry {
    fn elapsed_ms(&self) -> i64 {
        self.started.elapsed().as_millis() as i64
    }

    pub fn manifest(&self, fp: &str) -> Option<Manifest> {
        self.manifests
            .read()
            .expect("registry lock")
            .get(fp)
            .cloned()
    }

    pub fn all_manifests(&self) -> Vec<Manifest> {
        let mut v: Vec<Manifest> = self
            .manifests
            .read()
            .expect("registry lock")
            .values()
            .cloned()
            .collect();
        v.sort_by(|a, b| a.root.cmp(&b.root));
        v
    }

    /// The warm actor of a brain, marking it used.
    pub fn warm_actor(&self, fp: &str) -> Option<ActorRef<BrainMsg>> {
        let warm = self.warm.read().expect("registry lock");
        let w = warm.get(fp)?;
        w.last_used.store(self.elapsed_ms(), Ordering::Relaxed);
        Some(w.actor.clone())
    }

    pub fn is_warm(&self, fp: &str) -> bool {
        self.warm.read().expect("registry lock").contains_key(fp)
    }

    pub fn medulla(&self) -> ActorRef<BrainMsg> {
        self.medulla.read().expect("registry lock").clone()
    }

    pub fn counters(&self, fp: &str) -> Arc<BrainCounters> {
        if let Some(c) = self.counters.read().expect("registry lock").get(fp) {
            return c.clone();
        }
        self.counters
            .write()
            .expect("registry lock")
            .entry(fp.to_string())
            .or_default()
            .clone()
    }
}

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
    /// Spawn the audit actor under this supervisor (it needs the finished handle).
    StartAudit {
        handle: OwnerHandle,
        reply: RpcReplyPort<std::result::Result<(), String>>,
    },
}

pub struct OwnerArgs {
    pub config: Arc<Config>,
    pub opts: StoreOptions,
    pub registry_slot: tokio::sync::oneshot::Sender<Arc<Registry>>,
}

pub struct OwnerState {
    config: Arc<Config>,
    opts: StoreOptions,
    registry: Arc<Registry>,
    /// Actor id → brain fingerprint, to know which brain a supervision event is about.
    by_cell: HashMap<ractor::ActorId, String>,
    medulla_id: ractor::ActorId,
    audit: Option<(ractor::ActorId, OwnerHandle)>,
    mailbox: Option<(ractor::ActorId, DistributorArgs)>,
}

pub struct OwnerActor;

const MEDULLA: &str = "medulla";

async fn spawn_brain(
    me: &ActorRef<OwnerMsg>,
    dir: PathBuf,
    opts: StoreOptions,
) -> std::result::Result<ActorRef<BrainMsg>, String> {
    let (actor, _) = Actor::spawn_linked(None, BrainActor, BrainArgs { dir, opts }, me.get_cell())
        .await
        .map_err(|e| e.to_string())?;
    Ok(actor)
}

impl OwnerState {
    fn brain_dir(&self, fp: &str) -> PathBuf {
        self.config.brains_dir().join(fp)
    }

    async fn load(&mut self, me: &ActorRef<OwnerMsg>, fp: &str) -> Result<ActorRef<BrainMsg>> {
        if let Some(a) = self.registry.warm_actor(fp) {
            return Ok(a);
        }
        if self.registry.manifest(fp).is_none() {
            self.rescan();
            if self.registry.manifest(fp).is_none() {
                return Err(OwnerError::UnknownBrain {
                    name: fp.to_string(),
                });
            }
        }
        let actor = spawn_brain(me, self.brain_dir(fp), self.opts.clone())
            .await
            .map_err(|detail| OwnerError::Unreachable {
                actor: format!("brain {fp}"),
                detail,
            })?;
        self.by_cell.insert(actor.get_id(), fp.to_string());
        let warm = Warm {
            actor: actor.clone(),
            last_used: Arc::new(AtomicI64::new(self.registry.elapsed_ms())),
        };
        self.registry
            .warm
            .write()
            .expect("registry lock")
            .insert(fp.to_string(), warm);
        tracing::info!(brain = fp, "brain loaded");
        Ok(actor)
    }

    fn rescan(&mut self) -> Vec<RosterEntry> {
        let entries = roster::scan(&self.config.brains_dir());
        let mut map = HashMap::new();
        for e in &entries {
            if let Some(m) = &e.manifest {
                map.insert(m.fingerprint.clone(), m.clone());
            }
        }
        *self.registry.manifests.write().expect("registry lock") = map;
        entries
    }

    async fn unload(&mut self, fp: &str) -> bool {
        let Some(warm) = self
            .registry
            .warm
            .write()
            .expect("registry lock")
            .remove(fp)
        else {
            return false;
        };
        self.by_cell.remove(&warm.actor.get_id());
        // Persist the counts into the manifest so a dormant row still says something true.
        if let Ok(ractor::rpc::CallResult::Success(Ok(stats))) = warm
            .actor
            .call(BrainMsg::Stats, Some(Duration::from_secs(5)))
            .await
        {
            if let Some(mut m) = self.registry.manifest(fp) {
                m.counts = roster::ManifestCounts {
                    live_claims: stats.live_claims,
                    history_versions: stats.history_versions,
                    acts: stats.acts,
                    as_of: self.opts.clock.now_ms(),
                };
                if let Err(e) = roster::write_manifest(&self.brain_dir(fp), &m) {
                    tracing::warn!(brain = fp, error = %e, "could not refresh manifest counts");
                }
                self.registry
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
        let medulla = spawn_brain(&me, args.config.medulla_dir(), args.opts.clone()).await?;
        let registry = Arc::new(Registry {
            manifests: RwLock::new(HashMap::new()),
            warm: RwLock::new(HashMap::new()),
            medulla: RwLock::new(medulla.clone()),
            counters: RwLock::new(HashMap::new()),
            audit: RwLock::new(None),
            mailbox: RwLock::new(None),
            mailbox_view: Arc::new(MailboxView::default()),
            started: Instant::now(),
        });
        let _ = args.registry_slot.send(registry.clone());
        let mut state = OwnerState {
            config: args.config,
            opts: args.opts,
            registry,
            by_cell: HashMap::new(),
            medulla_id: medulla.get_id(),
            audit: None,
            mailbox: None,
        };
        let reg = state.registry.clone();
        let margs = DistributorArgs {
            home: state.config.home.clone(),
            roots: Arc::new(move || {
                reg.all_manifests()
                    .into_iter()
                    .map(|m| PathBuf::from(m.root))
                    .collect()
            }),
            view: state.registry.mailbox_view.clone(),
            rescan_every: state.config.mailbox_rescan,
        };
        spawn_mailbox(&me, &mut state, margs).await?;
        state.rescan();
        // The idle sweep: a tick a quarter of the idle time (bounded to [1 s, 60 s]).
        let every =
            (state.config.idle_unload / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
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
        Ok(state)
    }

    async fn post_stop(
        &self,
        _me: ActorRef<OwnerMsg>,
        st: &mut OwnerState,
    ) -> std::result::Result<(), ActorProcessingErr> {
        let fps: Vec<String> = st
            .registry
            .warm
            .read()
            .expect("registry lock")
            .keys()
            .cloned()
            .collect();
        for fp in fps {
            st.unload(&fp).await;
        }
        let medulla = st.registry.medulla();
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
                let r = st.load(&me, &fp).await;
                let _ = reply.send(r);
            }
            OwnerMsg::Bootstrap { root, reply } => {
                let r = bootstrap(st, &me, &root).await;
                let _ = reply.send(r);
            }
            OwnerMsg::Rescan(reply) => {
                let _ = reply.send(st.rescan());
            }
            OwnerMsg::UnloadIdle => {
                let now = st.registry.elapsed_ms();
                let idle_ms = st.config.idle_unload.as_millis() as i64;
                let idle: Vec<String> = st
                    .registry
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
            OwnerMsg::StartAudit { handle, reply } => {
                let r = spawn_audit(&me, st, handle).await;
                let _ = reply.send(r);
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
        let id = cell.get_id();
        if let Some((audit_id, handle)) = st.audit.clone() {
            if audit_id == id {
                tracing::error!(why, "audit actor down; restarting it");
                if let Err(e) = spawn_audit(&me, st, handle).await {
                    tracing::error!(error = %e, "the audit actor did not restart; medulla writes answer 503 until it does");
                }
                return Ok(());
            }
        }
        if let Some((mailbox_id, args)) = st.mailbox.clone() {
            if mailbox_id == id {
                tracing::error!(why, "mailbox distributor down; restarting it");
                if let Err(e) = spawn_mailbox(&me, st, args).await {
                    tracing::error!(error = %e, "the distributor did not restart; the spool keeps every letter meanwhile");
                }
                return Ok(());
            }
        }
        if id == st.medulla_id {
            tracing::error!(why, "medulla actor down; restarting it");
            let medulla = spawn_brain(&me, st.config.medulla_dir(), st.opts.clone()).await?;
            st.medulla_id = medulla.get_id();
            *st.registry.medulla.write().expect("registry lock") = medulla;
            return Ok(());
        }
        let Some(fp) = st.by_cell.remove(&id) else {
            return Ok(()); // an unloaded brain finishing its stop
        };
        st.registry.warm.write().expect("registry lock").remove(&fp);
        tracing::error!(brain = fp, why, "brain actor down; restarting it from disk");
        if let Err(e) = st.load(&me, &fp).await {
            tracing::error!(brain = fp, error = %e, "restart failed; the brain stays dormant until its next request");
        }
        Ok(())
    }
}

async fn spawn_mailbox(
    me: &ActorRef<OwnerMsg>,
    st: &mut OwnerState,
    args: DistributorArgs,
) -> std::result::Result<(), String> {
    let (mb, _) = Actor::spawn_linked(None, Distributor, args.clone(), me.get_cell())
        .await
        .map_err(|e| e.to_string())?;
    st.mailbox = Some((mb.get_id(), args));
    *st.registry.mailbox.write().expect("registry lock") = Some(mb);
    Ok(())
}

async fn spawn_audit(
    me: &ActorRef<OwnerMsg>,
    st: &mut OwnerState,
    handle: OwnerHandle,
) -> std::result::Result<(), String> {
    let (audit, _) = Actor::spawn_linked(None, AuditActor, handle.clone(), me.get_cell())
        .await
        .map_err(|e| e.to_string())?;
    st.audit = Some((audit.get_id(), handle));
    *st.registry.audit.write().expect("registry lock") = Some(audit);
    Ok(())
}

async fn bootstrap(
    st: &mut OwnerState,
    me: &ActorRef<OwnerMsg>,
    root: &Path,
) -> Result<(Manifest, bool)> {
    let root_s = root.to_string_lossy().into_owned();
    let fp = roster::fingerprint(&root_s);
    if let Some(m) = st.registry.manifest(&fp) {
        return Ok((m, false));
    }
    let dir = st.brain_dir(&fp);
    if let Ok(m) = roster::read_manifest(&dir) {
        st.registry
            .manifests
            .write()
            .expect("registry lock")
            .insert(fp.clone(), m.clone());
        return Ok((m, false));
    }
    let m = Manifest {
        root: root_s,
        fingerprint: fp.clone(),
        created: st.opts.clock.now_ms(),
        counts: Default::default(),
    };
    roster::write_manifest(&dir, &m).map_err(|e| {
        OwnerError::Internal(format!("cannot write manifest in {}: {e}", dir.display()))
    })?;
    st.registry
        .manifests
        .write()
        .expect("registry lock")
        .insert(fp.clone(), m.clone());
    st.load(me, &fp).await?;
    tracing::info!(brain = fp, root = %m.root, "brain bootstrapped");
    Ok((m, true))
}

/// A running owner: its actor and the registry its handlers read.
#[derive(Clone)]
pub struct OwnerHandle {
    pub actor: ActorRef<OwnerMsg>,
    pub registry: Arc<Registry>,
    pub config: Arc<Config>,
    pub opts: StoreOptions,
}

impl OwnerHandle {
    /// Start the owner and its medulla actor.
    pub async fn start(
        config: Arc<Config>,
        opts: StoreOptions,
    ) -> anyhow::Result<(OwnerHandle, ractor::concurrency::JoinHandle<()>)> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let (actor, join) = Actor::spawn(
            None,
            OwnerActor,
            OwnerArgs {
                config: config.clone(),
                opts: opts.clone(),
                registry_slot: tx,
            },
        )
        .await
        .map_err(|e| anyhow::anyhow!("the owner did not start: {e}"))?;
        let registry = rx.await?;
        let handle = OwnerHandle {
            actor,
            registry,
            config,
            opts,
        };
        let h = handle.clone();
        handle
            .call_owner(|reply| OwnerMsg::StartAudit { handle: h, reply })
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .map_err(|e| anyhow::anyhow!("the audit actor did not start: {e}"))?;
        Ok((handle, join))
    }

    fn timeout(&self) -> Duration {
        self.config.call_timeout
    }

    /// The actor of a brain by fingerprint: warm, or loaded now.
    pub async fn brain(&self, fp: &str) -> Result<ActorRef<BrainMsg>> {
        if let Some(a) = self.registry.warm_actor(fp) {
            return Ok(a);
        }
        self.call_owner(|reply| OwnerMsg::Load {
            fp: fp.to_string(),
            reply,
        })
        .await?
    }

    pub async fn bootstrap(&self, root: PathBuf) -> Result<(Manifest, bool)> {
        self.call_owner(|reply| OwnerMsg::Bootstrap { root, reply })
            .await?
    }

    pub async fn rescan(&self) -> Result<Vec<RosterEntry>> {
        self.call_owner(OwnerMsg::Rescan).await
    }

    pub async fn unload(&self, fp: &str) -> Result<bool> {
        self.call_owner(|reply| OwnerMsg::Unload {
            fp: fp.to_string(),
            reply,
        })
        .await
    }

    async fn call_owner<T: Send + 'static>(
        &self,
        build: impl FnOnce(RpcReplyPort<T>) -> OwnerMsg,
    ) -> Result<T> {
        call_actor(&self.actor, MEDULLA_OWNER, self.timeout(), build).await
    }

    /// Ask the audit actor (the only writer of the medulla).
    pub async fn audit<T: Send + 'static>(
        &self,
        build: impl FnOnce(RpcReplyPort<Result<T>>) -> AuditMsg,
    ) -> Result<T> {
        let audit = self
            .registry
            .audit
            .read()
            .expect("registry lock")
            .clone()
            .ok_or_else(|| OwnerError::Unreachable {
                actor: "audit".into(),
                detail: "the audit actor is not running".into(),
            })?;
        call_actor(&audit, "audit", self.timeout(), build).await?
    }

    /// Ask a brain actor something, mapping delivery failure to 503 and timeout to 504.
    /// A brain that went away between lookup and send (unloaded, restarted) is loaded
    /// again and asked once more.
    pub async fn ask<T, B>(&self, fp: Option<&str>, build: B) -> Result<T>
    where
        T: Send + 'static,
        B: Fn(RpcReplyPort<std::result::Result<T, brains::StoreError>>) -> BrainMsg,
    {
        use ractor::rpc::CallResult;
        let name = fp.unwrap_or(MEDULLA).to_string();
        for attempt in 0..2 {
            let actor = match fp {
                Some(fp) => self.brain(fp).await?,
                None => self.registry.medulla(),
            };
            match actor.call(&build, Some(self.timeout())).await {
                Ok(CallResult::Success(r)) => return r.map_err(OwnerError::from),
                Ok(CallResult::Timeout) => {
                    return Err(OwnerError::Timeout {
                        actor: format!("brain {name}"),
                        ms: self.timeout().as_millis() as u64,
                    })
                }
                Ok(CallResult::SenderError) | Err(_) if attempt == 0 => {
                    tokio::task::yield_now().await;
                    continue;
                }
                Ok(CallResult::SenderError) | Err(_) => break,
            }
        }
        Err(OwnerError::Unreachable {
            actor: format!("brain {name}"),
            detail: "it stopped before answering".into(),
        })
    }
}

const MEDULLA_OWNER: &str = "owner";

/// Call an actor with a deadline: a missed deadline is `timeout` (504), an actor that is
/// gone or stopped before answering is `actor_unreachable` (503).
pub async fn call_actor<M: ractor::Message, T: Send + 'static>(
    actor: &ActorRef<M>,
    name: &str,
    timeout: Duration,
    build: impl FnOnce(RpcReplyPort<T>) -> M,
) -> Result<T> {
    use ractor::rpc::CallResult;
    match actor.call(build, Some(timeout)).await {
        Ok(CallResult::Success(v)) => Ok(v),
        Ok(CallResult::Timeout) => Err(OwnerError::Timeout {
            actor: name.to_string(),
            ms: timeout.as_millis() as u64,
        }),
        Ok(CallResult::SenderError) | Err(_) => Err(OwnerError::Unreachable {
            actor: name.to_string(),
            detail: "it stopped before answering".into(),
        }),
    }
}

/// The serializable view of one roster row.
#[derive(Debug, Clone, Serialize)]
pub struct RosterRow {
    pub root: Option<String>,
    pub fingerprint: String,
    pub warm: bool,
    pub created: Option<i64>,
    pub problem: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use brains::MemorizeInput;

    fn config(home: &Path) -> Arc<Config> {
        let mut c = Config::load(home).unwrap();
        c.call_timeout = Duration::from_secs(10);
        Arc::new(c)
    }

    async fn memorize(owner: &OwnerHandle, fp: &str, label: &str) {
        let input = MemorizeInput {
            label: label.into(),
            text: format!("text of {label}"),
            source_agent: "claude:maker".into(),
            ..Default::default()
        };
        owner
            .ask(Some(fp), |r| BrainMsg::Memorize(input.clone(), r))
            .await
            .unwrap();
    }

    async fn live(owner: &OwnerHandle, fp: &str) -> Vec<String> {
        let mut v: Vec<String> = owner
            .ask(Some(fp), BrainMsg::LiveClaims)
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.label)
            .collect();
        v.sort();
        v
    }

    /// A brain actor that fails is restarted from disk; its acknowledged claims are all
    /// there, and another brain's actor is never touched.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_crashed_brain_restarts_and_other_brains_never_notice() {
        let home = tempfile::tempdir().unwrap();
        let projects = tempfile::tempdir().unwrap();
        let (owner, _join) = OwnerHandle::start(config(home.path()), StoreOptions::default())
            .await
            .unwrap();
        let (a, _) = owner
            .bootstrap(std::fs::canonicalize(projects.path()).unwrap())
            .await
            .unwrap();
        let b_root = projects.path().join("b");
        std::fs::create_dir_all(&b_root).unwrap();
        let (b, _) = owner
            .bootstrap(std::fs::canonicalize(&b_root).unwrap())
            .await
            .unwrap();
        memorize(&owner, &a.fingerprint, "a1").await;
        memorize(&owner, &a.fingerprint, "a2").await;
        memorize(&owner, &b.fingerprint, "b1").await;
        let b_actor = owner.registry.warm_actor(&b.fingerprint).unwrap().get_id();
        let a_actor = owner.registry.warm_actor(&a.fingerprint).unwrap();
        let a_id = a_actor.get_id();

        a_actor.cast(BrainMsg::Crash).unwrap();
        // The restart happens in the owner; a request in between is either served by the
        // new actor or retried into it by `ask`.
        let mut restarted = false;
        for _ in 0..200 {
            if owner
                .registry
                .warm_actor(&a.fingerprint)
                .is_some_and(|r| r.get_id() != a_id)
            {
                restarted = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(restarted, "the owner restarted the failed brain actor");
        assert_eq!(live(&owner, &a.fingerprint).await, vec!["a1", "a2"]);
        memorize(&owner, &a.fingerprint, "a3").await;
        assert_eq!(live(&owner, &a.fingerprint).await, vec!["a1", "a2", "a3"]);
        assert_eq!(
            owner.registry.warm_actor(&b.fingerprint).unwrap().get_id(),
            b_actor,
            "b was never restarted"
        );
        assert_eq!(live(&owner, &b.fingerprint).await, vec!["b1"]);
    }

    /// Idle brains unload (store closed, counts in the manifest) and reload on demand.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unload_closes_the_store_and_the_next_request_reloads_it() {
        let home = tempfile::tempdir().unwrap();
        let projects = tempfile::tempdir().unwrap();
        let (owner, _join) = OwnerHandle::start(config(home.path()), StoreOptions::default())
            .await
            .unwrap();
        let (a, _) = owner
            .bootstrap(std::fs::canonicalize(projects.path()).unwrap())
            .await
            .unwrap();
        memorize(&owner, &a.fingerprint, "x").await;
        assert!(owner.unload(&a.fingerprint).await.unwrap());
        assert!(!owner.registry.is_warm(&a.fingerprint));
        let m = roster::read_manifest(&owner.config.brains_dir().join(&a.fingerprint)).unwrap();
        assert_eq!(m.counts.live_claims, 1, "counts persisted on unload");
        assert_eq!(live(&owner, &a.fingerprint).await, vec!["x"]);
        assert!(owner.registry.is_warm(&a.fingerprint));
    }
}
