//! The brain actor: one per warm brain, plus the medulla's. Each owns exactly one
//! [`brains::Store`] (its redb file and its vector index); nothing else opens them.
//!
//! Store calls are synchronous and may take milliseconds (an fsync, an embedding), so
//! each runs on tokio's blocking pool while the actor awaits it. The actor handles one
//! message at a time, which keeps every store's writes in arrival order.
//!
//! Reads do not queue behind the actor: the store sits in a [`Shared`] read-write lock
//! that request handlers read from directly, on the blocking pool and concurrently,
//! while the actor takes the write side for each write. A slow read delays no other
//! read; a write waits only for the reads already under way.

pub mod cell;
mod embedding;
mod lifetime;
pub mod stores;
mod tending;

use std::sync::Arc;

use brains::store::{Derivation, Switched, ToEmbed};
use brains::{
    Claim, Embedder, MemorizeInput, MemorizeOutcome, PurgeReport, Store, StoreError, StoreOptions,
    Verdict,
};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use cell::FaultKind;
pub use cell::{Fault, Shared};
pub use lifetime::{close, open};
pub use tending::Tending;

type Reply<T> = RpcReplyPort<Result<T, StoreError>>;

/// What a brain actor does: every write to its store, one at a time, in arrival order.
/// Reads never come here: they take the store's read lock beside the actor ([`read`]).
pub enum BrainMsg {
    Memorize(Box<MemorizeInput>, Reply<MemorizeOutcome>),
    /// Several claims in one transaction (bulk import): one result per input, in order;
    /// with their vectors and terms when worked out ahead (`Store::memorize_many_ahead`).
    MemorizeMany(
        Vec<MemorizeInput>,
        Vec<Option<Derivation>>,
        Reply<Vec<Result<MemorizeOutcome, StoreError>>>,
    ),
    Learn {
        slug: String,
        verdict: Verdict,
        actor: String,
        note: Option<String>,
        reply: Reply<Claim>,
    },
    Demote {
        slug: String,
        actor: String,
        reason: String,
        reply: Reply<Claim>,
    },
    /// Several demotions in one turn and one transaction (a bulk import's versions that
    /// stay outdated), committed as `commit` says: every slug that is live is demoted;
    /// the reply is the first refusal, if any.
    DemoteMany {
        slugs: Vec<String>,
        actor: String,
        reason: String,
        commit: brains::store::Commit,
        reply: Reply<Vec<Claim>>,
    },
    Reanchor {
        slug: String,
        anchors: Vec<brains::Anchor>,
        actor: String,
        reply: Reply<Claim>,
    },
    Retire {
        slug: String,
        actor: String,
        reason: String,
        reply: Reply<Claim>,
    },
    /// A write of tending or of a person's review (SPEC §14).
    Tend {
        op: Tending,
        actor: String,
        reply: Reply<Vec<Claim>>,
    },
    StampPromoted {
        slug: String,
        stamp: String,
        actor: String,
        reply: Reply<Claim>,
    },
    Purge {
        slug: String,
        actor: String,
        reply: Reply<PurgeReport>,
    },
    KvSet {
        key: String,
        value: String,
        actor: String,
        reply: Reply<()>,
    },
    KvDelete {
        key: String,
        actor: String,
        reply: Reply<()>,
    },
    /// Every version of another brain of the same project (`brains merge`).
    Merge {
        incoming: Vec<Vec<Claim>>,
        actor: String,
        from: String,
        reply: Reply<brains::store::Merged>,
    },
    /// A checkout of the brain's repository asked for the first time (SPEC §3).
    NoteCheckout {
        kind: brains::ActKind,
        path: String,
        actor: String,
        note: Option<String>,
        reply: Reply<()>,
    },
    /// Share this store with the team (SPEC §13): every write from now on is queued,
    /// and every live claim now.
    StartSharing(
        brains::store::ShareState,
        Reply<brains::store::share::Shared>,
    ),
    /// Stop sharing (a team left while running): nothing more is queued; what was
    /// queued and never sent is dropped (its count replied).
    StopSharing(Reply<u64>),
    /// The team's log holds these outbox entries.
    Delivered(Vec<u64>, Reply<()>),
    /// Apply entries of the team's log, with their cursor.
    ApplyTeam(Vec<brains::store::Incoming>, Reply<brains::store::Applied>),
    /// The deep check (`medulla doctor --deep`): redb's integrity check, every record
    /// decoded, the derived indexes compared. Damage quarantines the store; a clean check
    /// of a quarantined store lifts the quarantine.
    CheckIntegrity(Reply<brains::store::Integrity>),
    /// A timed reopen of a store whose disk was full or whose file failed.
    Recover,
    /// Embed claims written without a vector (a model that defers), in the background.
    EmbedPending,
    /// Vectors the background made under the model (its id): take them.
    Attach(String, Vec<(ToEmbed, Vec<f32>)>),
    /// The background could not embed: try again later.
    EmbedFailed,
    /// Change the store's model, taking vectors made under it for its live claims
    /// (`Store::switch_model`).
    SwitchModel(Arc<dyn Embedder>, Vec<(ToEmbed, Vec<f32>)>, Reply<Switched>),
    /// Fail the actor on purpose; exercised by the supervision tests.
    #[cfg(test)]
    Crash,
    /// Hold the actor busy; exercised by the fail-open tests.
    #[cfg(test)]
    Stall(std::time::Duration),
    /// Keep the actor busy (not the store) until released; exercised by the test that
    /// reads never queue behind the actor.
    #[cfg(test)]
    Hold(tokio::sync::oneshot::Receiver<()>),
}

/// Run a read on a shared store, on the blocking pool, concurrently with other reads.
/// `Ok(None)` when the store was closed meanwhile (unloaded): ask again. A store with a
/// fault answers it (see [`cell`]).
pub async fn read<T, F>(store: Shared, f: F) -> Result<Option<T>, StoreError>
where
    T: Send + 'static,
    F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
{
    store.read(f).await
}

/// [`read`] of a read known to be small: run on the caller's task when the store is free
/// ([`cell::Cell::read_small`]).
pub async fn read_small<T, F>(store: Shared, f: F) -> Result<Option<T>, StoreError>
where
    T: Send + 'static,
    F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
{
    store.read_small(f).await
}

/// What a brain actor is started with: its store, already open, and how to open it
/// again after a fault. The actor is the store's only writer while it serves; it
/// neither opens nor closes it, but reopens it after a full disk or a failed file
/// operation.
pub struct BrainArgs {
    pub shared: Shared,
    pub opts: StoreOptions,
}

pub struct BrainState {
    store: Shared,
    opts: StoreOptions,
    /// The wait before the next timed reopen of a faulted store (doubles to a minute).
    backoff: std::time::Duration,
    /// A timed reopen is scheduled.
    retry_pending: bool,
    /// A batch of claims is being embedded in the background.
    embedding: bool,
}

pub struct BrainActor;

/// The first wait before a timed reopen of a faulted store.
const FIRST_RETRY: std::time::Duration = std::time::Duration::from_millis(250);
const LAST_RETRY: std::time::Duration = std::time::Duration::from_secs(60);

impl BrainState {
    /// Run `f` on the store on the blocking pool. A store with a full disk or a failed
    /// file is reopened first; a quarantined one refuses untouched.
    async fn run<T, F>(
        &mut self,
        me: &ActorRef<BrainMsg>,
        f: F,
    ) -> Result<Result<T, StoreError>, ActorProcessingErr>
    where
        T: Send + 'static,
        F: FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
    {
        if self
            .store
            .fault()
            .is_some_and(|f| f.kind != FaultKind::Damaged)
        {
            if let Err(e) = self.recover(me).await {
                return Ok(Err(e));
            }
        }
        let r = self.store.write(f).await;
        if matches!(&r, Err(e) if e.needs_reopen()) {
            self.schedule_retry(me);
        }
        Ok(r)
    }

    /// Reopen a faulted store now; schedule another try if it still fails.
    async fn recover(&mut self, me: &ActorRef<BrainMsg>) -> Result<(), StoreError> {
        match self.store.reopen(self.opts.clone()).await {
            Ok(()) => {
                self.backoff = FIRST_RETRY;
                Ok(())
            }
            Err(e) => {
                self.schedule_retry(me);
                Err(e)
            }
        }
    }

    fn schedule_retry(&mut self, me: &ActorRef<BrainMsg>) {
        if self.retry_pending || self.store.is_damaged() {
            return;
        }
        self.retry_pending = true;
        let wait = self.backoff;
        self.backoff = (self.backoff * 2).min(LAST_RETRY);
        me.send_after(wait, || BrainMsg::Recover);
    }
}

impl BrainState {
    /// The deep check. A quarantined store is opened afresh for it (it is not read
    /// otherwise); found clean, its quarantine is lifted.
    async fn check_integrity(
        &mut self,
        me: &ActorRef<BrainMsg>,
    ) -> Result<brains::store::Integrity, StoreError> {
        if self.store.is_damaged() {
            // The check opens the file afresh: release any handle this cell still holds.
            let cell = self.store.clone();
            let _ = tokio::task::spawn_blocking(move || cell.close_now()).await;
            let dir = self.store.dir().to_path_buf();
            let opts = self.opts.clone();
            let checked = tokio::task::spawn_blocking(move || {
                let (mut store, _) = Store::open(&dir, opts)?;
                let r = store.check_integrity();
                drop(store);
                r
            })
            .await
            .unwrap_or_else(|e| {
                // A check that panics on the file (redb's debug builds) found it damaged.
                Err(StoreError::Damaged {
                    path: self.store.dir().join("store.redb").display().to_string(),
                    detail: format!("the integrity check panicked: {e}"),
                })
            });
            return match checked {
                Ok(report) => {
                    self.store.lift_quarantine();
                    self.recover(me).await?;
                    Ok(report)
                }
                Err(e) => Err(e.at_store(&self.store.dir().join("store.redb"))),
            };
        }
        match self.run(me, |s| s.check_integrity()).await {
            Ok(r) => r,
            Err(e) => Err(StoreError::Internal(e.to_string())),
        }
    }
}

fn send<T>(reply: RpcReplyPort<T>, value: T) {
    // The caller may have timed out and gone; that is not this actor's failure.
    let _ = reply.send(value);
}

impl Actor for BrainActor {
    type Msg = BrainMsg;
    type State = BrainState;
    type Arguments = BrainArgs;

    async fn pre_start(
        &self,
        _me: ActorRef<BrainMsg>,
        args: BrainArgs,
    ) -> Result<BrainState, ActorProcessingErr> {
        let st = BrainState {
            store: args.shared,
            opts: args.opts,
            backoff: FIRST_RETRY,
            retry_pending: false,
            embedding: false,
        };
        // Claims a deferring model has not embedded yet (written before a restart, or
        // the store just changed model on open) are embedded from the start.
        if st.defers() {
            let _ = _me.send_message(BrainMsg::EmbedPending);
        }
        Ok(st)
    }

    async fn handle(
        &self,
        me: ActorRef<BrainMsg>,
        msg: BrainMsg,
        st: &mut BrainState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            BrainMsg::Memorize(input, r) => {
                send(r, st.run(&me, move |s| s.memorize(*input)).await?);
                st.embed_pending(&me).await;
            }
            BrainMsg::MemorizeMany(inputs, ahead, r) => {
                send(
                    r,
                    st.run(&me, move |s| s.memorize_many_ahead(inputs, ahead))
                        .await?,
                );
                st.embed_pending(&me).await;
            }
            BrainMsg::EmbedPending => st.embed_pending(&me).await,
            BrainMsg::Attach(model, items) => {
                st.embedding = false;
                match st
                    .run(&me, move |s| s.attach_vectors(&model, items))
                    .await?
                {
                    Ok(_) => st.embed_pending(&me).await,
                    Err(e) => {
                        tracing::warn!(store = %st.store.dir().display(), error = %e, "could not take the background's vectors; retrying later");
                        me.send_after(embedding::EMBED_RETRY, || BrainMsg::EmbedPending);
                    }
                }
            }
            BrainMsg::EmbedFailed => {
                st.embedding = false;
                me.send_after(embedding::EMBED_RETRY, || BrainMsg::EmbedPending);
            }
            BrainMsg::SwitchModel(model, staged, reply) => {
                let next = model.clone();
                let r = st.run(&me, move |s| s.switch_model(next, staged)).await?;
                if r.is_ok() {
                    // A reopen after a fault opens under the new model too.
                    st.opts.embedder = Some(model);
                }
                send(reply, r);
                st.embed_pending(&me).await;
            }
            BrainMsg::Learn {
                slug,
                verdict,
                actor,
                note,
                reply,
            } => send(
                reply,
                st.run(&me, move |s| {
                    s.learn(&slug, verdict, &actor, note.as_deref())
                })
                .await?,
            ),
            BrainMsg::Demote {
                slug,
                actor,
                reason,
                reply,
            } => send(
                reply,
                st.run(&me, move |s| s.demote(&slug, &actor, &reason))
                    .await?,
            ),
            BrainMsg::DemoteMany {
                slugs,
                actor,
                reason,
                commit,
                reply,
            } => send(
                reply,
                st.run(&me, move |s| {
                    s.demote_many(&slugs, &actor, &reason, commit)?
                        .into_iter()
                        .collect()
                })
                .await?,
            ),
            BrainMsg::Reanchor {
                slug,
                anchors,
                actor,
                reply,
            } => send(
                reply,
                st.run(&me, move |s| s.reanchor(&slug, anchors, &actor))
                    .await?,
            ),
            BrainMsg::Retire {
                slug,
                actor,
                reason,
                reply,
            } => send(
                reply,
                st.run(&me, move |s| s.retire(&slug, &actor, &reason))
                    .await?,
            ),
            BrainMsg::Tend { op, actor, reply } => {
                send(reply, st.run(&me, move |s| op.apply(s, &actor)).await?)
            }
            BrainMsg::StampPromoted {
                slug,
                stamp,
                actor,
                reply,
            } => send(
                reply,
                st.run(&me, move |s| s.stamp_promoted_to(&slug, &stamp, &actor))
                    .await?,
            ),
            BrainMsg::Purge { slug, actor, reply } => {
                send(reply, st.run(&me, move |s| s.purge(&slug, &actor)).await?)
            }
            BrainMsg::KvSet {
                key,
                value,
                actor,
                reply,
            } => send(
                reply,
                st.run(&me, move |s| s.kv_set(&key, &value, &actor)).await?,
            ),
            BrainMsg::KvDelete { key, actor, reply } => send(
                reply,
                st.run(&me, move |s| s.kv_delete(&key, &actor)).await?,
            ),
            BrainMsg::Merge {
                incoming,
                actor,
                from,
                reply,
            } => send(
                reply,
                st.run(&me, move |s| s.merge_in(incoming, &actor, &from))
                    .await?,
            ),
            BrainMsg::NoteCheckout {
                kind,
                path,
                actor,
                note,
                reply,
            } => send(
                reply,
                st.run(&me, move |s| s.note_checkout(kind, &path, &actor, note))
                    .await?,
            ),
            BrainMsg::StartSharing(state, reply) => {
                send(reply, st.run(&me, move |s| s.start_sharing(state)).await?)
            }
            BrainMsg::StopSharing(reply) => {
                send(reply, st.run(&me, move |s| s.stop_sharing()).await?)
            }
            BrainMsg::Delivered(ids, reply) => {
                send(reply, st.run(&me, move |s| s.delivered(&ids)).await?)
            }
            BrainMsg::ApplyTeam(batch, reply) => {
                send(reply, st.run(&me, move |s| s.apply_team(batch)).await?);
                st.embed_pending(&me).await;
            }
            BrainMsg::CheckIntegrity(reply) => send(reply, st.check_integrity(&me).await),
            BrainMsg::Recover => {
                st.retry_pending = false;
                if st
                    .store
                    .fault()
                    .is_some_and(|f| f.kind != FaultKind::Damaged)
                {
                    let _ = st.recover(&me).await;
                }
            }
            #[cfg(test)]
            BrainMsg::Crash => return Err("crash requested by a test".into()),
            #[cfg(test)]
            BrainMsg::Hold(release) => {
                let _ = release.await;
            }
            // A slow write: it holds the store, as a long fsync would, so reads wait too.
            #[cfg(test)]
            BrainMsg::Stall(d) => {
                let _ = st
                    .run(&me, move |_| {
                        std::thread::sleep(d);
                        Ok(())
                    })
                    .await?;
            }
        }
        Ok(())
    }
}
