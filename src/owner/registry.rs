//! The registry: the state request handlers read without a message round trip. Only the
//! owner actor writes `warm` and `manifests`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use ractor::ActorRef;

use super::counters::BrainCounters;
use crate::audit::AuditMsg;
use crate::brain::{BrainMsg, Shared};
use crate::events::Events;
use crate::mailbox::{MailboxMsg, MailboxView};
use crate::roster::Manifest;

/// A loaded brain: its actor (the writer) and its store for readers.
#[derive(Clone)]
pub struct Warm {
    pub actor: ActorRef<BrainMsg>,
    pub store: Shared,
    pub(super) last_used: Arc<AtomicI64>,
}

pub struct Registry {
    /// Where brains live, for their counters' files.
    brains_dir: PathBuf,
    medulla_dir: PathBuf,
    clock: Arc<dyn brains::Clock>,
    pub(super) manifests: RwLock<HashMap<String, Manifest>>,
    pub(super) warm: RwLock<HashMap<String, Warm>>,
    pub(super) medulla: RwLock<(ActorRef<BrainMsg>, Shared)>,
    counters: RwLock<HashMap<String, Arc<BrainCounters>>>,
    pub(super) audit: RwLock<Option<ActorRef<AuditMsg>>>,
    pub(super) mailbox: RwLock<Option<ActorRef<MailboxMsg>>>,
    pub mailbox_view: Arc<MailboxView>,
    /// Every change of state, announced for live views.
    pub events: Arc<Events>,
    started: Instant,
    /// Bumped whenever a brain is loaded or unloaded, so waiters need not poll.
    changes: tokio::sync::watch::Sender<u64>,
}

impl Registry {
    pub(super) fn new(
        medulla: (ActorRef<BrainMsg>, Shared),
        brains_dir: PathBuf,
        medulla_dir: PathBuf,
        clock: Arc<dyn brains::Clock>,
    ) -> Registry {
        Registry {
            brains_dir,
            medulla_dir,
            clock,
            manifests: RwLock::new(HashMap::new()),
            warm: RwLock::new(HashMap::new()),
            medulla: RwLock::new(medulla),
            counters: RwLock::new(HashMap::new()),
            audit: RwLock::new(None),
            mailbox: RwLock::new(None),
            mailbox_view: Arc::new(MailboxView::default()),
            events: Arc::new(Events::default()),
            started: Instant::now(),
            changes: tokio::sync::watch::channel(0).0,
        }
    }

    /// Notified whenever the set of warm brains changes.
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
    pub fn warm_actor(&self, fp: &str) -> Option<ActorRef<BrainMsg>> {
        self.warm(fp).map(|w| w.actor)
    }

    /// A warm brain, marking it used.
    pub fn warm(&self, fp: &str) -> Option<Warm> {
        let warm = self.warm.read().expect("registry lock");
        let w = warm.get(fp)?;
        w.last_used.store(self.elapsed_ms(), Ordering::Relaxed);
        Some(w.clone())
    }

    pub fn is_warm(&self, fp: &str) -> bool {
        self.warm.read().expect("registry lock").contains_key(fp)
    }

    pub fn warm_count(&self) -> usize {
        self.warm.read().expect("registry lock").len()
    }

    /// Fingerprints of the warm brains.
    pub fn warm_fps(&self) -> Vec<String> {
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

    pub fn audit(&self) -> Option<ActorRef<AuditMsg>> {
        self.audit.read().expect("registry lock").clone()
    }

    pub fn mailbox(&self) -> Option<ActorRef<MailboxMsg>> {
        self.mailbox.read().expect("registry lock").clone()
    }

    /// A brain's counters (`medulla` for the medulla's), loaded from disk on first use.
    pub fn counters(&self, fp: &str) -> Arc<BrainCounters> {
        if let Some(c) = self.counters.read().expect("registry lock").get(fp) {
            return c.clone();
        }
        let dir = if fp == "medulla" {
            self.medulla_dir.clone()
        } else {
            self.brains_dir.join(fp)
        };
        self.counters
            .write()
            .expect("registry lock")
            .entry(fp.to_string())
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
