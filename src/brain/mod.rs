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
    Act, Claim, MemorizeInput, MemorizeOutcome, PurgeReport, RecallQuery, RecallResult, Store,
    StoreError, StoreOptions, StoreStats, Verdict,
};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

type Reply<T> = RpcReplyPort<Result<T, StoreError>>;

/// Everything a brain actor can be asked.
pub enum BrainMsg {
    Memorize(MemorizeInput, Reply<MemorizeOutcome>),
    /// Several claims in one transaction (bulk import): one result per input, in order.
    MemorizeMany(
        Vec<MemorizeInput>,
        Reply<Vec<Result<MemorizeOutcome, StoreError>>>,
    ),
    Get(String, Reply<Option<Claim>>),
    History(String, Reply<Vec<Claim>>),
    Recall(RecallQuery, Reply<RecallResult>),
    Recent(usize, Reply<Vec<Claim>>),
    LiveClaims(Reply<Vec<Claim>>),
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
    KvGet(String, Reply<Option<String>>),
    KvSet {
        key: String,
        value: String,
        actor: String,
        reply: Reply<()>,
    },
    KvList(Reply<Vec<(String, String)>>),
    KvDelete {
        key: String,
        actor: String,
        reply: Reply<()>,
    },
    ActsNewest(usize, Reply<Vec<Act>>),
    /// One page of the act log: acts with `seq < before`, newest first.
    ActsBefore {
        before: u64,
        limit: usize,
        reply: Reply<Vec<Act>>,
    },
    Stats(Reply<StoreStats>),
    CheckIndex(Reply<Option<String>>),
    Flush(Reply<()>),
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

/// What a brain actor is started with.
pub struct BrainArgs {
    pub dir: PathBuf,
    pub opts: StoreOptions,
    /// Where the actor puts its open store for readers.
    pub shared: Shared,
}

pub struct BrainState {
    store: Shared,
    pub open_report: OpenReport,
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
        let dir = args.dir.clone();
        let (open_dir, opts) = (args.dir.clone(), args.opts.clone());
        let opened = tokio::task::spawn_blocking(move || Store::open(&open_dir, opts)).await?;
        let (store, open_report) =
            opened.map_err(|e| format!("cannot open store at {}: {e}", dir.display()))?;
        if open_report.index_rebuilt {
            // A store with no vectors yet (a fresh brain) has no index file to lose: that
            // is no news. Rebuilding a real one is worth saying.
            let had_vectors = store.stats().map(|s| s.vectors > 0).unwrap_or(true);
            if had_vectors {
                tracing::warn!(dir = %dir.display(), reason = ?open_report.index_rebuild_reason, "vector index rebuilt from redb");
            } else {
                tracing::debug!(dir = %dir.display(), "a new vector index");
            }
        }
        *args.shared.write().unwrap_or_else(|p| p.into_inner()) = Some(store);
        Ok(BrainState {
            store: args.shared,
            open_report,
        })
    }

    async fn post_stop(
        &self,
        _me: ActorRef<BrainMsg>,
        state: &mut BrainState,
    ) -> Result<(), ActorProcessingErr> {
        let store = state.store.clone();
        let closed = tokio::task::spawn_blocking(move || {
            let taken = store.write().unwrap_or_else(|p| p.into_inner()).take();
            taken.map(|s| s.close()).transpose()
        })
        .await?;
        if let Err(e) = closed {
            tracing::error!(error = %e, "closing store failed");
        }
        Ok(())
    }

    async fn handle(
        &self,
        _me: ActorRef<BrainMsg>,
        msg: BrainMsg,
        st: &mut BrainState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            BrainMsg::Memorize(input, r) => send(r, st.run(move |s| s.memorize(input)).await?),
            BrainMsg::MemorizeMany(inputs, r) => {
                send(r, st.run(move |s| s.memorize_many(inputs)).await?)
            }
            BrainMsg::Get(slug, r) => send(r, st.run(move |s| s.get(&slug)).await?),
            BrainMsg::History(slug, r) => send(r, st.run(move |s| s.history(&slug)).await?),
            BrainMsg::Recall(q, r) => send(r, st.run(move |s| s.recall(&q)).await?),
            BrainMsg::Recent(n, r) => send(r, st.run(move |s| s.recent(n)).await?),
            BrainMsg::LiveClaims(r) => send(r, st.run(|s| s.live_claims()).await?),
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
            BrainMsg::KvGet(key, r) => send(r, st.run(move |s| s.kv_get(&key)).await?),
            BrainMsg::KvSet {
                key,
                value,
                actor,
                reply,
            } => send(
                reply,
                st.run(move |s| s.kv_set(&key, &value, &actor)).await?,
            ),
            BrainMsg::KvList(r) => send(r, st.run(|s| s.kv_list()).await?),
            BrainMsg::KvDelete { key, actor, reply } => {
                send(reply, st.run(move |s| s.kv_delete(&key, &actor)).await?)
            }
            BrainMsg::ActsNewest(n, r) => send(r, st.run(move |s| s.acts_newest(n)).await?),
            BrainMsg::ActsBefore {
                before,
                limit,
                reply,
            } => send(reply, st.run(move |s| s.acts_before(before, limit)).await?),
            BrainMsg::Stats(r) => send(r, st.run(|s| s.stats()).await?),
            BrainMsg::CheckIndex(r) => send(r, st.run(|s| s.check_index()).await?),
            BrainMsg::Flush(r) => send(r, st.run(|s| s.flush_index()).await?),
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
