//! The sync actor: one per owner with a team, supervised like the others, the only
//! holder of the team database's connections. Brain actors stay the only writers of
//! their stores: the sync actor reads outboxes beside them and hands them what the log
//! brings, by message.
//!
//! A pass, for every shared store (the team medulla, each shared brain): send what the
//! outbox holds (idempotent by hash), then apply what the log holds past the mirror's
//! cursor, up to the oldest transaction in flight. Passes run on a wake-up from the
//! dedicated LISTEN connection (LISTEN is issued before the catch-up it triggers), after
//! a local write, and on a periodic poll behind both. Any database error drops the
//! connections: the team is offline (reads serve the mirrors, writes queue) and the next
//! pass reconnects, catching up first.

mod exchange;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use brains::store::{Cursor, ShareState};
use futures::StreamExt;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio_postgres::{AsyncMessage, Client};

use super::db::{self, Target};
use super::shares::{self, Share};
use super::status::TeamStatus;
use super::TEAM_KEY;
use crate::brain::stores::{ask, read, Stores};
use crate::brain::BrainMsg;
use crate::config::TeamConfig;
use crate::repo::Repo;
use crate::store_id::{Fingerprint, StoreId};

/// Most outbox entries sent, and log entries read, per store and round.
const BATCH: usize = 1000;
/// The first and last wait before reconnecting.
const FIRST_RETRY: Duration = Duration::from_millis(200);
const LAST_RETRY: Duration = Duration::from_secs(2);
/// How soon a pass that left entries behind the horizon looks again.
const LAG_RETRY: Duration = Duration::from_millis(100);
/// Members and the team's shared brains are re-read every this many passes.
const REFRESH_EVERY: u64 = 10;

pub enum SyncMsg {
    /// Run a pass now (a notification, a local write, the poll).
    Pass,
    /// The LISTEN connection ended.
    ListenerDown(String),
    /// Share a brain with the team; replies with what was queued and the name the team
    /// knows the store by.
    Share {
        fp: Fingerprint,
        root: String,
        repo: Repo,
        reply: RpcReplyPort<Result<(brains::store::share::Shared, String), String>>,
    },
}

/// A warm brain's store, if it is warm, without marking it used.
pub type Peek = dyn Fn(&Fingerprint) -> Option<crate::brain::Shared> + Send + Sync;

/// What the sync actor sees of the owner: the stores (through the narrow [`Stores`]
/// handle, as the audit actor does), which brains are warm, and the brains on disk.
#[derive(Clone)]
pub struct OwnerView {
    pub stores: Arc<dyn Stores>,
    pub is_warm: Arc<dyn Fn(&Fingerprint) -> bool + Send + Sync>,
    /// A warm brain's store, read without marking the brain used.
    pub peek: Arc<Peek>,
    /// Every brain on disk: (fingerprint, root).
    pub brains: Arc<dyn Fn() -> Vec<(Fingerprint, String)> + Send + Sync>,
    pub home: std::path::PathBuf,
    pub clock: Arc<dyn brains::Clock>,
}

impl OwnerView {
    fn team_dir(&self) -> std::path::PathBuf {
        self.home.join("team")
    }

    async fn read<T, F>(&self, id: &StoreId, f: F) -> crate::error::Result<T>
    where
        T: Send + 'static,
        F: Fn(&brains::Store) -> Result<T, brains::StoreError> + Clone + Send + 'static,
    {
        read(self.stores.as_ref(), id, f).await
    }

    /// Read a store without keeping it warm: a warm brain is read in place (not marked
    /// used, so the sync actor's passes never stop it unloading); a dormant one is
    /// loaded only when `load` says it must be (an outbox that may hold something).
    async fn read_quietly<T, F>(&self, id: &StoreId, load: bool, f: F) -> Option<T>
    where
        T: Send + 'static,
        F: Fn(&brains::Store) -> Result<T, brains::StoreError> + Clone + Send + 'static,
    {
        if let StoreId::Brain(fp) = id {
            if let Some(shared) = (self.peek)(fp) {
                if let Ok(Some(v)) = crate::brain::read(shared, f.clone()).await {
                    return Some(v);
                }
            }
            if !load {
                return None;
            }
        }
        self.read(id, f).await.ok()
    }
}

pub struct SyncArgs {
    pub owner: OwnerView,
    pub team: TeamConfig,
    pub status: Arc<TeamStatus>,
    /// Set while a pass is asked for and not yet begun: wake-ups coalesce.
    pub wake: Arc<AtomicBool>,
}

pub struct SyncState {
    owner: OwnerView,
    target: Result<Target, String>,
    status: Arc<TeamStatus>,
    wake: Arc<AtomicBool>,
    client: Option<Client>,
    /// Prepared on `client` when it connects.
    statements: Option<db::Statements>,
    listener: Option<tokio::task::JoinHandle<()>>,
    retry_at: Instant,
    backoff: Duration,
    shares: Vec<Share>,
    /// Each store's cursor as last applied (read from the mirror once).
    cursors: HashMap<String, Cursor>,
    /// Stores whose outbox may hold something.
    dirty: HashMap<String, bool>,
    /// Repository identities of local brains, computed once each.
    repos: HashMap<Fingerprint, Option<Repo>>,
    passes: u64,
    team_started: bool,
}

pub struct SyncActor;

/// Ask for a pass; a no-op when one is already asked for.
pub fn kick(sync: &ActorRef<SyncMsg>, wake: &AtomicBool) {
    if !wake.swap(true, Ordering::AcqRel) {
        let _ = sync.cast(SyncMsg::Pass);
    }
}

impl SyncState {
    fn now(&self) -> i64 {
        self.owner.clock.now_ms()
    }

    fn stores(&self) -> Vec<(String, StoreId)> {
        let mut v = vec![(TEAM_KEY.to_string(), StoreId::Team)];
        v.extend(
            self.shares
                .iter()
                .map(|s| (s.key.clone(), StoreId::brain(&s.fingerprint))),
        );
        v
    }

    fn member(&self) -> String {
        self.target
            .as_ref()
            .map(|t| t.member.clone())
            .unwrap_or_default()
    }

    /// The database, without its password: what a mirror's cursor belongs to.
    fn db_shown(&self) -> String {
        self.target
            .as_ref()
            .map(|t| t.shown.clone())
            .unwrap_or_default()
    }

    fn disconnect(&mut self, why: String) {
        if self.client.is_some() {
            tracing::warn!(error = %why, "the team database is unreachable: offline, reads serve the mirrors, writes queue");
        }
        self.client = None;
        self.statements = None;
        if let Some(l) = self.listener.take() {
            l.abort();
        }
        let now = self.now();
        self.status.offline(now, why);
        self.retry_at = Instant::now() + self.backoff;
        self.backoff = (self.backoff * 2).min(LAST_RETRY);
    }

    async fn connect(&mut self, me: &ActorRef<SyncMsg>) -> Result<(), String> {
        let target = self.target.clone()?;
        let home = self.owner.home.clone();
        let client = db::connect_client(&target, &home).await?;
        if !db::schema_ready(&client).await? {
            return Err(format!(
                "the team database {} has no medulla schema: a team admin runs `medulla team init URL` once",
                target.shown
            ));
        }
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let me2 = me.clone();
        let wake = self.wake.clone();
        self.listener = Some(tokio::spawn(async move {
            let why = listen(&target, &home, &me2, &wake, ready_tx).await;
            let _ = me2.cast(SyncMsg::ListenerDown(why));
        }));
        // LISTEN is in place before the catch-up this pass makes.
        match tokio::time::timeout(Duration::from_secs(10), ready_rx).await {
            Ok(Ok(())) => {}
            _ => return Err("the LISTEN connection did not come up".into()),
        }
        self.statements = Some(db::Statements::prepare(&client).await?);
        self.client = Some(client);
        self.backoff = FIRST_RETRY;
        for k in self.dirty.values_mut() {
            *k = true;
        }
        tracing::info!("team database reached: catching up, then sending what queued");
        Ok(())
    }

    async fn pass(&mut self, me: &ActorRef<SyncMsg>) {
        self.wake.store(false, Ordering::Release);
        if !self.team_started {
            self.start_team_medulla().await;
        }
        if self.client.is_none() {
            if Instant::now() < self.retry_at {
                self.refresh_queued().await;
                return;
            }
            if let Err(e) = self.connect(me).await {
                self.disconnect(e);
                self.refresh_queued().await;
                return;
            }
        }
        self.passes += 1;
        let r = self.sync_all().await;
        match r {
            Ok(lag) => {
                let now = self.now();
                self.status.connected(now);
                self.status.update(|v| v.lag = lag);
                // Entries the horizon held back (a transaction still in flight): their
                // notification is spent, so look again soon rather than at the poll.
                if lag > 0 {
                    let (me, wake) = (me.clone(), self.wake.clone());
                    tokio::spawn(async move {
                        tokio::time::sleep(LAG_RETRY).await;
                        kick(&me, &wake);
                    });
                }
                if self.passes % REFRESH_EVERY == 1 {
                    if let Err(e) = self.refresh_team().await {
                        self.disconnect(e);
                    }
                }
            }
            Err(e) => self.disconnect(e),
        }
        self.refresh_queued().await;
    }

    async fn start_team_medulla(&mut self) {
        let state = ShareState {
            key: TEAM_KEY.into(),
            member: self.member(),
            db: self.db_shown(),
        };
        if self.member().is_empty() {
            return;
        }
        match ask(self.owner.stores.as_ref(), &StoreId::Team, |r| {
            BrainMsg::StartSharing(state, r)
        })
        .await
        {
            Ok(_) => self.team_started = true,
            Err(e) => tracing::warn!(error = %e, "the team medulla's mirror is not ready"),
        }
    }

    /// Members, the team's shared brains, and local brains that are clones of one.
    async fn refresh_team(&mut self) -> Result<(), String> {
        let client = self.client.as_ref().ok_or("not connected")?;
        let members = db::members(client).await?;
        let team_brains = db::shared_brains(client).await?;
        let mine = self.shares.clone();
        self.status.update(|v| {
            v.members = members;
            v.team_brains = team_brains.clone();
            v.shared = mine;
        });
        // A clone of a shared repository, wherever it lives, joins its shared brain.
        let keys: HashMap<String, String> = team_brains.into_iter().collect();
        for (fp, root) in (self.owner.brains)() {
            if self.shares.iter().any(|s| s.fingerprint == fp) {
                continue;
            }
            let repo = match self.repos.get(&fp) {
                Some(r) => r.clone(),
                None => {
                    // `git` runs on the blocking pool, never on the actor's thread.
                    let at = std::path::PathBuf::from(&root);
                    let r = tokio::task::spawn_blocking(move || crate::repo::identify(&at).ok())
                        .await
                        .unwrap_or(None);
                    self.repos.insert(fp.clone(), r.clone());
                    r
                }
            };
            if let Some(repo) = repo.filter(|r| keys.contains_key(&r.key)) {
                tracing::info!(root = %root, key = %repo.key, "a clone of a shared repository: joining its shared brain");
                if let Err(e) = self.share(fp, root.clone(), repo).await {
                    tracing::warn!(root = %root, error = %e, "could not join the shared brain");
                }
            }
        }
        Ok(())
    }

    async fn share(
        &mut self,
        fp: Fingerprint,
        root: String,
        repo: Repo,
    ) -> Result<(brains::store::share::Shared, String), String> {
        let client = self
            .client
            .as_ref()
            .ok_or("the team database is unreachable: sharing a brain needs it once; try again when `medulla team status` says connected")?;
        // A project the team shared before a project was its remote too keeps its name.
        let repo = Repo {
            key: db::team_key(client, &repo).await?,
            label: repo.label,
        };
        db::announce(client, &repo.key, &repo.label).await?;
        let state = ShareState {
            key: repo.key.clone(),
            member: self.member(),
            db: self.db_shown(),
        };
        let done = ask(self.owner.stores.as_ref(), &StoreId::brain(&fp), |r| {
            BrainMsg::StartSharing(state, r)
        })
        .await
        .map_err(|e| e.to_string())?;
        if !self.shares.iter().any(|s| s.fingerprint == fp) {
            self.shares.push(Share {
                fingerprint: fp,
                root,
                key: repo.key.clone(),
                label: repo.label,
            });
            shares::save(&self.owner.team_dir(), &self.shares)
                .map_err(|e| format!("cannot record the share: {e}"))?;
        }
        self.dirty.insert(repo.key.clone(), true);
        let mine = self.shares.clone();
        self.status.update(|v| v.shared = mine);
        Ok((done, repo.key))
    }

    /// What waits in every outbox (warm stores only: a dormant brain's count is kept).
    async fn refresh_queued(&mut self) {
        let mut queued = 0;
        let mut refused = 0;
        for (key, id) in self.stores() {
            if let StoreId::Brain(fp) = &id {
                if !(self.owner.is_warm)(fp) {
                    continue;
                }
            }
            if let Some((q, r)) = self
                .owner
                .read_quietly(&id, false, |s| s.outbox_len())
                .await
            {
                queued += q;
                refused += r;
                if q > 0 {
                    self.dirty.insert(key, true);
                }
            }
        }
        self.status.update(|v| {
            v.queued = queued;
            v.refused = refused;
        });
    }
}

/// The dedicated LISTEN connection: never a pooled one; ids only in the payload. Says
/// it is ready once LISTEN is in place; returns why it ended.
async fn listen(
    target: &Target,
    home: &std::path::Path,
    me: &ActorRef<SyncMsg>,
    wake: &AtomicBool,
    ready: tokio::sync::oneshot::Sender<()>,
) -> String {
    let (client, mut conn) = match db::connect(target, home).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let driver = tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| conn.poll_message(cx));
        while let Some(m) = messages.next().await {
            match m {
                Ok(AsyncMessage::Notification(_)) => {
                    let _ = tx.send(());
                }
                Ok(_) => {}
                Err(e) => return db::describe(&e),
            }
        }
        "the LISTEN connection closed".to_string()
    });
    if let Err(e) = client
        .batch_execute(&format!("LISTEN {}", db::CHANNEL))
        .await
    {
        driver.abort();
        return db::describe(&e);
    }
    let _ = ready.send(());
    while rx.recv().await.is_some() {
        kick(me, wake);
    }
    drop(client);
    driver.await.unwrap_or_else(|e| e.to_string())
}

impl Actor for SyncActor {
    type Msg = SyncMsg;
    type State = SyncState;
    type Arguments = SyncArgs;

    async fn pre_start(
        &self,
        me: ActorRef<SyncMsg>,
        args: SyncArgs,
    ) -> Result<SyncState, ActorProcessingErr> {
        let target = Target::parse(&args.team.url);
        if let Err(e) = &target {
            args.status.offline(args.owner.clock.now_ms(), e.clone());
        }
        let shares = shares::load(&args.owner.team_dir());
        let dirty = shares.iter().map(|s| (s.key.clone(), true)).collect();
        // The poll behind the notifications.
        let (ticker, wake, every) = (me.clone(), args.wake.clone(), args.team.poll);
        tokio::spawn(async move {
            let mut iv = tokio::time::interval(every);
            loop {
                iv.tick().await;
                if ticker.get_status() != ractor::ActorStatus::Running
                    && ticker.get_status() != ractor::ActorStatus::Starting
                {
                    break;
                }
                kick(&ticker, &wake);
            }
        });
        let mine = shares.clone();
        args.status.update(|v| v.shared = mine);
        Ok(SyncState {
            owner: args.owner,
            target,
            status: args.status,
            wake: args.wake,
            client: None,
            statements: None,
            listener: None,
            retry_at: Instant::now(),
            backoff: FIRST_RETRY,
            shares,
            cursors: HashMap::new(),
            dirty,
            repos: HashMap::new(),
            passes: 0,
            team_started: false,
        })
    }

    async fn post_stop(
        &self,
        _me: ActorRef<SyncMsg>,
        st: &mut SyncState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(l) = st.listener.take() {
            l.abort();
        }
        Ok(())
    }

    async fn handle(
        &self,
        me: ActorRef<SyncMsg>,
        msg: SyncMsg,
        st: &mut SyncState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SyncMsg::Pass => st.pass(&me).await,
            SyncMsg::ListenerDown(why) => {
                if st.client.is_some() {
                    st.disconnect(why);
                }
            }
            SyncMsg::Share {
                fp,
                root,
                repo,
                reply,
            } => {
                if st.client.is_none() {
                    st.pass(&me).await;
                }
                let r = st.share(fp, root, repo).await;
                let _ = reply.send(r);
                st.pass(&me).await;
            }
        }
        Ok(())
    }
}
