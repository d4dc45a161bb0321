//! The registry: the state request handlers read without a message round trip. Only the
//! owner actor writes `warm` and `manifests`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use ractor::ActorRef;
use tokio::sync::watch;

use super::counters::BrainCounters;
use crate::audit::AuditMsg;
use crate::brain::{BrainMsg, Shared};
use crate::error::OwnerError;
use crate::events::Events;
use crate::mailbox::{MailboxMsg, MailboxView};
use crate::roster::Manifest;
use crate::store_id::{Fingerprint, StoreId};

/// A loaded brain: its actor (the writer) and its store for readers.
#[derive(Clone)]
pub struct Warm {
    pub actor: ActorRef<BrainMsg>,
    pub store: Shared,
    pub(super) last_used: Arc<AtomicI64>,
}

/// How a load ended, as every request waiting on it sees it.
pub type Opened = Option<Result<Warm, OpenFailure>>;

/// Why a brain could not be opened, kept whole for every waiter: its stable code and
/// message.
#[derive(Debug, Clone)]
pub struct OpenFailure {
    pub code: &'static str,
    pub message: String,
}

impl From<&OwnerError> for OpenFailure {
    fn from(e: &OwnerError) -> OpenFailure {
        OpenFailure {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

/// A brain being opened beside the supervisor: requests for it wait on `done` with
/// their own deadline; every other brain loads and serves meanwhile.
#[derive(Clone)]
pub struct Opening {
    pub started: Instant,
    pub progress: Arc<brains::OpenProgress>,
    pub done: watch::Receiver<Opened>,
}

pub struct Registry {
    /// Where brains live, for their counters' files.
    brains_dir: PathBuf,
    medulla_dir: PathBuf,
    clock: Arc<dyn brains::Clock>,
    /// Every registered brain's manifest, shared as a whole with the readers that route
    /// (every request): written copy-on-write, read without a clone of each.
    pub(super) manifests: RwLock<Arc<HashMap<Fingerprint, Manifest>>>,
    pub(super) warm: RwLock<HashMap<Fingerprint, Warm>>,
    pub(super) opening: RwLock<HashMap<Fingerprint, Opening>>,
    /// Brains whose store is being closed (drained, released); a load of one waits for
    /// `true` before it opens the file again.
    pub(super) closing: RwLock<HashMap<Fingerprint, watch::Receiver<bool>>>,
    pub(super) medulla: RwLock<(ActorRef<BrainMsg>, Shared)>,
    /// The team medulla's mirror, when a team is joined.
    pub(super) team: RwLock<Option<(ActorRef<BrainMsg>, Shared)>>,
    /// The sync actor, when a team is joined.
    pub(super) sync: RwLock<Option<ActorRef<crate::team::sync::SyncMsg>>>,
    /// The team as answers show it, when a team is joined (set and cleared while the
    /// owner runs: `team_join`, `team_leave`).
    team_status: RwLock<Option<Arc<crate::team::status::TeamStatus>>>,
    /// Coalesces the sync actor's wake-ups.
    pub team_wake: Arc<std::sync::atomic::AtomicBool>,
    team_dir: PathBuf,
    counters: RwLock<HashMap<StoreId, Arc<BrainCounters>>>,
    pub(super) audit: RwLock<Option<ActorRef<AuditMsg>>>,
    pub(super) mailbox: RwLock<Option<ActorRef<MailboxMsg>>>,
    pub mailbox_view: Arc<MailboxView>,
    /// Every change of state, announced for live views.
    pub events: Arc<Events>,
    /// The model stores open under, and a change of model under way.
    pub model: crate::owner::active_model::ActiveModel,
    started: Instant,
    /// Bumped whenever a brain is loaded or unloaded, so waiters need not poll.
    changes: tokio::sync::watch::Sender<u64>,
    /// Repository identities by repository, checkouts by caller root (SPEC §3).
    pub repos: Arc<crate::repo::Repos>,
    /// True once the brains from before repositories were identified at start; routing
    /// through a repository waits for it.
    pub identified: watch::Sender<bool>,
}

impl Registry {
    pub(super) fn new(
        medulla: (ActorRef<BrainMsg>, Shared),
        brains_dir: PathBuf,
        medulla_dir: PathBuf,
        team_dir: PathBuf,
        team_status: Option<Arc<crate::team::status::TeamStatus>>,
        clock: Arc<dyn brains::Clock>,
    ) -> Registry {
        Registry {
            brains_dir,
            medulla_dir,
            team_dir,
            team: RwLock::new(None),
            sync: RwLock::new(None),
            team_status: RwLock::new(team_status),
            team_wake: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            clock,
            manifests: RwLock::new(Arc::new(HashMap::new())),
            warm: RwLock::new(HashMap::new()),
            opening: RwLock::new(HashMap::new()),
            closing: RwLock::new(HashMap::new()),
            medulla: RwLock::new(medulla),
            counters: RwLock::new(HashMap::new()),
            audit: RwLock::new(None),
            mailbox: RwLock::new(None),
            mailbox_view: Arc::new(MailboxView::default()),
            events: Arc::new(Events::default()),
            model: Default::default(),
            started: Instant::now(),
            changes: tokio::sync::watch::channel(0).0,
            repos: Arc::default(),
            identified: watch::channel(false).0,
        }
    }

    /// Notified whenever the set of warm brains changes.
    #[cfg(test)]
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    pub(super) fn changed(&self) {
        self.changes.send_modify(|g| *g += 1);
    }

    pub(super) fn elapsed_ms(&self) -> i64 {
        self.started.elapsed().as_millis() as i64
    }

    pub fn manifest(&self, fp: &str) -> Option<Manifest> {
        self.manifests
            .read()
            .expect("registry lock")
            .get(fp)
            .cloned()
    }

    /// Every registered brain's manifest as it is now, shared (no clone of each).
    pub fn manifests_view(&self) -> Arc<HashMap<Fingerprint, Manifest>> {
        self.manifests.read().expect("registry lock").clone()
    }

    /// Change the manifests (the owner's only): copied first while a reader holds the
    /// view it had.
    pub(super) fn manifests_mut<T>(
        &self,
        f: impl FnOnce(&mut HashMap<Fingerprint, Manifest>) -> T,
    ) -> T {
        let mut g = self.manifests.write().expect("registry lock");
        f(Arc::make_mut(&mut g))
    }

    /// Every registered brain, sorted by root.
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

    /// Every registered root.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.all_manifests()
            .into_iter()
            .map(|m| PathBuf::from(m.root))
            .collect()
    }

    /// The warm actor of a brain, marking it used.
    #[cfg(test)]
    pub fn warm_actor(&self, fp: &str) -> Option<ActorRef<BrainMsg>> {
        self.warm(fp).map(|w| w.actor)
    }

    /// The load under way for a brain, if one is.
    pub fn opening(&self, fp: &str) -> Option<Opening> {
        self.opening.read().expect("registry lock").get(fp).cloned()
    }

    /// A warm brain, marking it used.
    pub fn warm(&self, fp: &str) -> Option<Warm> {
        let warm = self.warm.read().expect("registry lock");
        let w = warm.get(fp)?;
        w.last_used.store(self.elapsed_ms(), Ordering::Relaxed);
        Some(w.clone())
    }

    /// A warm brain's store, without marking it used: the sync actor's bookkeeping reads
    /// never keep a brain warm.
    pub fn peek(&self, fp: &str) -> Option<Shared> {
        self.warm
            .read()
            .expect("registry lock")
            .get(fp)
            .map(|w| w.store.clone())
    }

    pub fn is_warm(&self, fp: &str) -> bool {
        self.warm.read().expect("registry lock").contains_key(fp)
    }

    pub fn warm_count(&self) -> usize {
        self.warm.read().expect("registry lock").len()
    }

    /// Fingerprints of the warm brains.
    pub fn warm_fps(&self) -> Vec<Fingerprint> {
        self.warm
            .read()
            .expect("registry lock")
            .keys()
            .cloned()
            .collect()
    }

    pub fn medulla(&self) -> ActorRef<BrainMsg> {
        self.medulla.read().expect("registry lock").0.clone()
    }

    /// The medulla's store, for readers.
    pub fn medulla_store(&self) -> Shared {
        self.medulla.read().expect("registry lock").1.clone()
    }

    /// The team medulla's writer, when a team is joined.
    pub fn team(&self) -> Option<ActorRef<BrainMsg>> {
        self.team
            .read()
            .expect("registry lock")
            .as_ref()
            .map(|t| t.0.clone())
    }

    /// The team medulla's store, for readers, when a team is joined.
    pub fn team_store(&self) -> Option<Shared> {
        self.team
            .read()
            .expect("registry lock")
            .as_ref()
            .map(|t| t.1.clone())
    }

    /// Ask the sync actor for a pass soon (after a local write to a shared store).
    pub fn kick_sync(&self) {
        if let Some(s) = self.sync.read().expect("registry lock").as_ref() {
            crate::team::sync::kick(s, &self.team_wake);
        }
    }

    /// The first pass of a new sync actor.
    pub(super) fn kick_sync_with(&self, s: &ActorRef<crate::team::sync::SyncMsg>) {
        self.team_wake
            .store(false, std::sync::atomic::Ordering::Release);
        crate::team::sync::kick(s, &self.team_wake);
    }

    /// The team as answers show it, when a team is joined.
    pub fn team_status(&self) -> Option<Arc<crate::team::status::TeamStatus>> {
        self.team_status.read().expect("registry lock").clone()
    }

    pub(super) fn set_team_status(&self, s: Option<Arc<crate::team::status::TeamStatus>>) {
        *self.team_status.write().expect("registry lock") = s;
    }

    pub fn sync(&self) -> Option<ActorRef<crate::team::sync::SyncMsg>> {
        self.sync.read().expect("registry lock").clone()
    }

    pub fn audit(&self) -> Option<ActorRef<AuditMsg>> {
        self.audit.read().expect("registry lock").clone()
    }

    pub fn mailbox(&self) -> Option<ActorRef<MailboxMsg>> {
        self.mailbox.read().expect("registry lock").clone()
    }

    /// The directory a store's files live in.
    pub fn store_dir(&self, id: &StoreId) -> std::path::PathBuf {
        match id {
            StoreId::Medulla => self.medulla_dir.clone(),
            StoreId::Team => self.team_dir.clone(),
            StoreId::Brain(fp) => self.brains_dir.join(fp.as_str()),
        }
    }

    /// A store's counters, loaded from disk on first use.
    pub fn counters(&self, id: &StoreId) -> Arc<BrainCounters> {
        if let Some(c) = self.counters.read().expect("registry lock").get(id) {
            return c.clone();
        }
        let dir = self.store_dir(id);
        self.counters
            .write()
            .expect("registry lock")
            .entry(id.clone())
            .or_insert_with(|| Arc::new(BrainCounters::load(dir, self.clock.clone())))
            .clone()
    }

    /// Write every counter that changed since it was last written.
    pub fn flush_counters(&self) {
        let all: Vec<Arc<BrainCounters>> = self
            .counters
            .read()
            .expect("registry lock")
            .values()
            .cloned()
            .collect();
        for c in all {
            if let Err(e) = c.flush() {
                tracing::warn!(error = %e, "could not write a brain's counters; they are kept and retried");
            }
        }
    }
}
