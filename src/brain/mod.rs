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

pub mod stores;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use brains::store::OpenReport;
use brains::{
    Claim, MemorizeInput, MemorizeOutcome, PurgeReport, Store, StoreError, StoreOptions, Verdict,
};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

type Reply<T> = RpcReplyPort<Result<T, StoreError>>;

/// What a brain actor does: every write to its store, one at a time, in arrival order.
/// Reads never come here: they take the store's read lock beside the actor ([`read`]).
pub enum BrainMsg {
    Memorize(Box<MemorizeInput>, Reply<MemorizeOutcome>),
    /// Several claims in one transaction (bulk import): one result per input, in order.
    MemorizeMany(
        Vec<MemorizeInput>,
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

/// The open store, shared between its actor (the writer) and readers. `None` once closed.
pub type Shared = Arc<RwLock<Option<Store>>>;

/// Run a read on a shared store, on the blocking pool, concurrently with other reads.
/// `Ok(None)` when the store was closed meanwhile (unloaded): ask again.
pub async fn read<T, F>(store: Shared, f: F) -> Result<Option<T>, StoreError>
where
    T: Send + 'static,
    F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
{
    let joined = tokio::task::spawn_blocking(move || {
        let guard = store.read().unwrap_or_else(|p| p.into_inner());
        guard.as_ref().map(f).transpose()
    })
    .await;
    joined.unwrap_or_else(|e| Err(StoreError::Internal(format!("a store read panicked: {e}"))))
}

/// Open a store on the blocking pool, beside any actor: opening may rebuild or
/// re-embed for minutes, and no mailbox waits on it. The store is handed to its actor
/// (the only writer) through [`BrainArgs`].
pub async fn open(dir: PathBuf, opts: StoreOptions) -> Result<(Shared, OpenReport), StoreError> {
    let shown = dir.display().to_string();
    let opened = tokio::task::spawn_blocking(move || Store::open(&dir, opts))
        .await
        .map_err(|e| StoreError::Internal(format!("opening {shown} panicked: {e}")))?;
    let (store, report) = opened?;
    if report.index_rebuilt {
        // A store with no vectors yet (a fresh brain) has no index file to lose: that
        // is no news. Rebuilding a real one is worth saying.
        let had_vectors = store.stats().map(|s| s.vectors > 0).unwrap_or(true);
        if had_vectors {
            tracing::warn!(dir = %shown, reason = ?report.index_rebuild_reason, "vector index rebuilt from redb");
        } else {
            tracing::debug!(dir = %shown, "a new vector index");
        }
    }
    Ok((Arc::new(RwLock::new(Some(store))), report))
}

/// Close a store and release its file. The owner opened it and the owner closes it, on
/// every way out of service (an unload once the actor has drained, an actor that failed
/// or stopped, the owner stopping): ractor runs no `post_stop` for an actor that fails,
/// so closing there would leave a failed actor's file held and its successor locked
/// out. Closing twice is a no-op.
pub async fn close(store: Shared) {
    let closed = tokio::task::spawn_blocking(move || {
        let taken = store.write().unwrap_or_else(|p| p.into_inner()).take();
        taken.map(|s| s.close()).transpose()
    })
    .await;
    match closed {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => tracing::error!(error = %e, "closing store failed"),
        Err(e) => tracing::error!(error = %e, "closing store panicked"),
    }
}

/// What a brain actor is started with: its store, already open. The actor is the
/// store's only writer while it serves; it neither opens nor closes it.
pub struct BrainArgs {
    pub shared: Shared,
}

pub struct BrainState {
    store: Shared,
}

pub struct BrainActor;

impl BrainState {
    /// Run `f` on the store on the blocking pool.
    async fn run<T, F>(&self, f: F) -> Result<Result<T, StoreError>, ActorProcessingErr>
    where
        T: Send + 'static,
        F: FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
    {
        let store = self.store.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let mut guard = store.write().unwrap_or_else(|p| p.into_inner());
            match guard.as_mut() {
                Some(s) => f(s),
                None => Err(StoreError::Closed),
            }
        })
        .await;
        // A panic inside the store fails this actor; the supervisor reopens the store
        // from disk, where every acknowledged write already is.
        joined.map_err(|e| ActorProcessingErr::from(format!("store call panicked: {e}")))
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
        Ok(BrainState { store: args.shared })
    }

    async fn handle(
        &self,
        _me: ActorRef<BrainMsg>,
        msg: BrainMsg,
        st: &mut BrainState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            BrainMsg::Memorize(input, r) => send(r, st.run(move |s| s.memorize(*input)).await?),
            BrainMsg::MemorizeMany(inputs, r) => {
                send(r, st.run(move |s| s.memorize_many(inputs)).await?)
            }
            BrainMsg::Learn {
                slug,
                verdict,
                actor,
                note,
                reply,
            } => send(
                reply,
                st.run(move |s| s.learn(&slug, verdict, &actor, note.as_deref()))
                    .await?,
            ),
            BrainMsg::Demote {
                slug,
                actor,
                reason,
                reply,
            } => send(
                reply,
                st.run(move |s| s.demote(&slug, &actor, &reason)).await?,
            ),
            BrainMsg::Reanchor {
                slug,
                anchors,
                actor,
                reply,
            } => send(
                reply,
                st.run(move |s| s.reanchor(&slug, anchors, &actor)).await?,
            ),
            BrainMsg::Retire {
                slug,
                actor,
                reason,
                reply,
            } => send(
                reply,
                st.run(move |s| s.retire(&slug, &actor, &reason)).await?,
            ),
            BrainMsg::StampPromoted {
                slug,
                stamp,
                actor,
                reply,
            } => send(
                reply,
                st.run(move |s| s.stamp_promoted_to(&slug, &stamp, &actor))
                    .await?,
            ),
            BrainMsg::Purge { slug, actor, reply } => {
                send(reply, st.run(move |s| s.purge(&slug, &actor)).await?)
            }
            BrainMsg::KvSet {
                key,
                value,
                actor,
                reply,
            } => send(
                reply,
                st.run(move |s| s.kv_set(&key, &value, &actor)).await?,
            ),
            BrainMsg::KvDelete { key, actor, reply } => {
                send(reply, st.run(move |s| s.kv_delete(&key, &actor)).await?)
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
                    .run(move |_| {
                        std::thread::sleep(d);
                        Ok(())
                    })
                    .await?;
            }
        }
        Ok(())
    }
}
