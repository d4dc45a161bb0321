//! The owner's loading and unloading of brains: opening a store and spawning its actor,
//! a load's progress and waiters, the warm budget, draining and closing, and the live
//! counts kept as brains go.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use brains::StoreOptions;
use ractor::{Actor, ActorCell, ActorRef};
use tokio::sync::watch;

use super::registry::{OpenFailure, Opening};
use super::{Child, Loading, OwnerHandle, OwnerMsg, OwnerState, Warm};
use crate::brain::{BrainActor, BrainArgs, BrainMsg, Shared};
use crate::error::{OwnerError, Result};
use crate::roster::{self, RosterEntry};
use crate::store_id::{Fingerprint, StoreId};

/// Open a store beside the supervisor and start its actor, linked to the owner. Waits
/// first for any close of the same directory still under way (one file, one holder).
pub(super) async fn open_and_spawn(
    owner: ActorCell,
    dir: PathBuf,
    opts: StoreOptions,
    after_close: Option<watch::Receiver<bool>>,
) -> std::result::Result<(ActorRef<BrainMsg>, Shared), OpenFailure> {
    if let Some(mut closed) = after_close {
        let _ = closed.wait_for(|done| *done).await;
    }
    let (shared, _report) = crate::brain::open(dir, opts.clone())
        .await
        .map_err(|e| OpenFailure::from(&OwnerError::from(e)))?;
    match Actor::spawn_linked(
        None,
        BrainActor,
        BrainArgs {
            shared: shared.clone(),
            opts,
        },
        owner,
    )
    .await
    {
        Ok((actor, _)) => Ok((actor, shared)),
        Err(e) => {
            crate::brain::close(shared).await;
            Err(OpenFailure {
                code: "actor_unreachable",
                message: format!("the brain actor did not start: {e}"),
            })
        }
    }
}

/// Keep an unloaded brain's counts: in its counters and its manifest, so a dormant row
/// still says something true. The manifest's counts are the only field written beside
/// the supervisor; the rest of it is the owner's.
fn keep_counts(
    handle: &OwnerHandle,
    fp: &Fingerprint,
    stats: &brains::StoreStats,
    unreviewed: u64,
) {
    let registry = &handle.registry;
    registry
        .counters(&StoreId::brain(fp))
        .note_live(stats.live_claims);
    let mut guard = registry.manifests.write().expect("registry lock");
    if let Some(m) = Arc::make_mut(&mut guard).get_mut(fp) {
        m.counts = roster::ManifestCounts {
            live_claims: stats.live_claims,
            history_versions: stats.history_versions,
            acts: stats.acts,
            as_of: handle.opts.clock.now_ms(),
            unreviewed,
        };
        let dir = handle.config.brains_dir().join(fp);
        if let Err(e) = roster::write_manifest(&dir, m) {
            tracing::warn!(brain = %fp, error = %e, "could not refresh manifest counts");
        }
    }
}

impl OwnerState {
    pub(super) fn brain_dir(&self, fp: &str) -> PathBuf {
        self.config().brains_dir().join(fp)
    }

    /// A brain's writer if warm; else the load under way, started now when none runs.
    /// Never waits for the store to open.
    pub(super) fn load(&mut self, me: &ActorRef<OwnerMsg>, fp: &Fingerprint) -> Result<Loading> {
        if let Some(w) = self.registry().warm(fp) {
            return Ok(Loading::Warm(w));
        }
        if let Some(o) = self.registry().opening(fp) {
            return Ok(Loading::Opening(o));
        }
        if self.registry().manifest(fp).is_none() {
            self.rescan();
            if self.registry().manifest(fp).is_none() {
                return Err(OwnerError::UnknownBrain {
                    name: fp.to_string(),
                });
            }
        }
        let progress = Arc::new(brains::OpenProgress::default());
        let opts = StoreOptions {
            progress: Some(progress.clone()),
            ..self.handle.store_opts()
        };
        let (tx, rx) = watch::channel(None);
        let opening = Opening {
            started: std::time::Instant::now(),
            progress,
            done: rx,
        };
        self.loads.insert(fp.clone(), tx);
        self.registry()
            .opening
            .write()
            .expect("registry lock")
            .insert(fp.clone(), opening.clone());
        let after_close = self
            .registry()
            .closing
            .read()
            .expect("registry lock")
            .get(fp)
            .cloned();
        let (me, fp, dir) = (me.clone(), fp.clone(), self.brain_dir(fp));
        tokio::spawn(async move {
            let result = open_and_spawn(me.get_cell(), dir, opts, after_close).await;
            if let Err(ractor::MessagingErr::SendErr(OwnerMsg::Opened {
                result: Ok((actor, shared)),
                ..
            })) = me.send_message(OwnerMsg::Opened { fp, result })
            {
                // The owner stopped meanwhile: nobody will serve this store.
                actor.stop(None);
                crate::brain::close(shared).await;
            }
        });
        Ok(Loading::Opening(opening))
    }

    /// A load finished: register the brain, or tell its waiters why not.
    pub(super) fn opened(
        &mut self,
        fp: Fingerprint,
        result: std::result::Result<(ActorRef<BrainMsg>, Shared), OpenFailure>,
    ) {
        self.registry()
            .opening
            .write()
            .expect("registry lock")
            .remove(&fp);
        let tx = self.loads.remove(&fp);
        let outcome = match result {
            Ok((actor, store)) => {
                self.children
                    .insert(actor.get_id(), Child::Brain(fp.clone()));
                let warm = Warm {
                    actor,
                    store,
                    last_used: Arc::new(AtomicI64::new(self.registry().elapsed_ms())),
                };
                self.registry()
                    .warm
                    .write()
                    .expect("registry lock")
                    .insert(fp.clone(), warm.clone());
                self.registry().changed();
                tracing::info!(brain = %fp, "brain loaded");
                Ok(warm)
            }
            Err(failure) => {
                tracing::error!(brain = %fp, code = failure.code, error = %failure.message, "brain could not be opened");
                Err(failure)
            }
        };
        let loaded = outcome.is_ok();
        if let Some(tx) = tx {
            let _ = tx.send(Some(outcome));
        }
        if loaded {
            self.keep_within_budget(&fp);
        }
    }

    /// Unload the least recently used brains beyond `max_warm_brains` (never `keep`).
    pub(super) fn keep_within_budget(&mut self, keep: &Fingerprint) {
        let max = self.config().max_warm_brains;
        loop {
            let victim = {
                let warm = self.registry().warm.read().expect("registry lock");
                if warm.len() <= max {
                    return;
                }
                warm.iter()
                    .filter(|(fp, _)| *fp != keep)
                    .min_by_key(|(_, w)| w.last_used.load(Ordering::Relaxed))
                    .map(|(fp, _)| fp.clone())
            };
            match victim {
                Some(fp) => {
                    tracing::debug!(
                        brain = %fp,
                        "over the warm budget: unloading the least recently used"
                    );
                    self.unload(&fp);
                }
                None => return,
            }
        }
    }

    pub(super) fn rescan(&mut self) -> Vec<RosterEntry> {
        let entries = roster::scan(&self.config().brains_dir());
        let map = entries
            .iter()
            .filter_map(|e| e.manifest.clone())
            .map(|m| (m.fingerprint.clone(), m))
            .collect();
        *self.registry().manifests.write().expect("registry lock") = Arc::new(map);
        entries
    }

    /// Take a brain out of service now and close its store beside the supervisor:
    /// queued writes finish first (drain), then the file is released. A load of the same
    /// brain meanwhile waits for the close.
    pub(super) fn unload(&mut self, fp: &Fingerprint) -> bool {
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
        let closed = self.closing(fp);
        let (me, fp, handle) = (self.handle.actor.clone(), fp.clone(), self.handle.clone());
        tokio::spawn(async move {
            if let Err(e) = warm
                .actor
                .drain_and_wait(Some(Duration::from_secs(30)))
                .await
            {
                tracing::warn!(brain = %fp, error = %e, "brain did not drain cleanly");
            }
            // The counts, read once the writes are in, so a dormant row still says
            // something true.
            let stats = crate::brain::read(warm.store.clone(), |s| {
                Ok((s.stats()?, s.unreviewed_count()? as u64))
            })
            .await
            .ok()
            .flatten();
            crate::brain::close(warm.store).await;
            if let Some((stats, unreviewed)) = &stats {
                keep_counts(&handle, &fp, stats, *unreviewed);
            }
            let _ = closed.send(true);
            tracing::info!(brain = %fp, "brain unloaded");
            let _ = me.cast(OwnerMsg::Closed { fp });
        });
        true
    }

    /// Mark a brain's store as closing; the returned sender says when it is closed.
    pub(super) fn closing(&mut self, fp: &Fingerprint) -> watch::Sender<bool> {
        let (tx, rx) = watch::channel(false);
        self.closes.insert(fp.clone(), tx.clone());
        self.registry()
            .closing
            .write()
            .expect("registry lock")
            .insert(fp.clone(), rx);
        tx
    }

    /// An unloaded brain's store is closed: forget the close (unless a newer one began).
    pub(super) fn closed(&mut self, fp: Fingerprint) {
        let finished = self.closes.get(&fp).is_some_and(|tx| *tx.borrow());
        if finished {
            self.closes.remove(&fp);
            self.registry()
                .closing
                .write()
                .expect("registry lock")
                .remove(&fp);
        }
    }

    /// Record this week's live claim count of every warm store and write the counters,
    /// beside the supervisor: each count is a read of the store, never a message that
    /// queues behind its writes.
    pub(super) fn note_live_counts(&self) {
        let registry = self.handle.registry.clone();
        let mut stores: Vec<(StoreId, Shared)> = registry
            .warm
            .read()
            .expect("registry lock")
            .iter()
            .map(|(fp, w)| (StoreId::brain(fp), w.store.clone()))
            .collect();
        stores.push((StoreId::Medulla, registry.medulla_store()));
        tokio::spawn(async move {
            for (id, store) in stores {
                if let Ok(Some(s)) = crate::brain::read(store, |s| s.stats()).await {
                    registry.counters(&id).note_live(s.live_claims);
                }
            }
            let flushed = tokio::task::spawn_blocking(move || registry.flush_counters()).await;
            if let Err(e) = flushed {
                tracing::warn!(error = %e, "writing the counters panicked");
            }
        });
    }
}
