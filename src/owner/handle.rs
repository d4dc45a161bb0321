//! [`OwnerHandle`]: a running owner as the service sees it — the owner actor, the
//! registry it keeps, and one typed method per thing a store can be asked.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use brains::store::{Derivation, Integrity};
use brains::{
    Act, Claim, MemorizeInput, MemorizeOutcome, PurgeReport, RecallQuery, RecallResult, Store,
    StoreOptions, StoreStats, Verdict,
};
use ractor::{ActorRef, RpcReplyPort};

use super::registry::{Registry, Warm};
use super::{Loading, OwnerArgs, OwnerMsg};
use crate::audit::AuditMsg;
use crate::brain::stores::{ask, read, read_small, BoxFuture, Stores};
use crate::brain::{BrainMsg, Fault, Shared};
use crate::call::call_actor;
use crate::config::Config;
use crate::error::{OwnerError, Result};
use crate::mailbox::{MailboxMsg, PassReport};
use crate::roster::{Manifest, RosterEntry};
use crate::store_id::{Fingerprint, StoreId};

mod checkouts;

/// A running owner: its actor and the registry its handlers read.
#[derive(Clone)]
pub struct OwnerHandle {
    pub actor: ActorRef<OwnerMsg>,
    pub registry: Arc<Registry>,
    pub config: Arc<Config>,
    pub opts: StoreOptions,
}

impl OwnerHandle {
    /// How a store is opened now: under the model the owner serves with now (a change
    /// of model moves it, [`crate::owner::active_model`]).
    pub fn store_opts(&self) -> StoreOptions {
        StoreOptions {
            embedder: self.registry.model.current(),
            ..self.opts.clone()
        }
    }
}

impl Stores for OwnerHandle {
    fn actor<'a>(&'a self, id: &'a StoreId) -> BoxFuture<'a, Result<ActorRef<BrainMsg>>> {
        Box::pin(async move {
            match id {
                StoreId::Medulla => Ok(self.registry.medulla()),
                StoreId::Team => self.registry.team().ok_or(OwnerError::NoTeam),
                StoreId::Brain(fp) => Ok(self.warm_brain(fp).await?.actor),
            }
        })
    }

    fn store<'a>(&'a self, id: &'a StoreId) -> BoxFuture<'a, Result<Shared>> {
        Box::pin(async move {
            match id {
                StoreId::Medulla => Ok(self.registry.medulla_store()),
                StoreId::Team => self.registry.team_store().ok_or(OwnerError::NoTeam),
                StoreId::Brain(fp) => Ok(self.warm_brain(fp).await?.store),
            }
        })
    }

    fn call_timeout(&self) -> Duration {
        self.config.call_timeout
    }
}

impl OwnerHandle {
    /// Start the owner: the supervisor, the medulla actor, the audit actor and the
    /// mailbox distributor.
    pub async fn start(
        config: Arc<Config>,
        opts: StoreOptions,
    ) -> anyhow::Result<(OwnerHandle, ractor::concurrency::JoinHandle<()>)> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let (_actor, join) = ractor::Actor::spawn(
            None,
            super::OwnerActor,
            OwnerArgs {
                config,
                opts,
                handle_slot: tx,
            },
        )
        .await
        .map_err(|e| anyhow::anyhow!("the owner did not start: {e}"))?;
        let handle = rx.await?;
        Ok((handle, join))
    }

    fn timeout(&self) -> Duration {
        self.config.call_timeout
    }

    async fn call_owner<T: Send + 'static>(
        &self,
        build: impl FnOnce(RpcReplyPort<T>) -> OwnerMsg,
    ) -> Result<T> {
        call_actor(&self.actor, "owner", self.timeout(), build).await
    }

    /// A brain, warm now or once its load finishes. A load still under way when this
    /// request's deadline passes answers `brain_opening` with how far it has come; it
    /// never delays a request for another brain.
    pub async fn warm_brain(&self, fp: &Fingerprint) -> Result<Warm> {
        if let Some(w) = self.registry.warm(fp) {
            return Ok(w);
        }
        let opening = match self.registry.opening(fp) {
            Some(o) => o,
            None => {
                let want = fp.clone();
                match self
                    .call_owner(|reply| OwnerMsg::Load { fp: want, reply })
                    .await??
                {
                    Loading::Warm(w) => return Ok(w),
                    Loading::Opening(o) => o,
                }
            }
        };
        let mut done = opening.done.clone();
        let waited = tokio::time::timeout(self.timeout(), done.wait_for(|d| d.is_some())).await;
        match waited {
            Ok(Ok(outcome)) => match outcome.as_ref() {
                Some(Ok(w)) => {
                    self.registry.warm(fp);
                    Ok(w.clone())
                }
                Some(Err(f)) => Err(OwnerError::OpenFailed {
                    brain: fp.to_string(),
                    code: f.code,
                    detail: f.message.clone(),
                }),
                None => unreachable!("waited for an outcome"),
            },
            Ok(Err(_)) => Err(OwnerError::Unreachable {
                actor: StoreId::brain(fp).actor_name(),
                detail: "its load was abandoned (the owner is stopping)".into(),
            }),
            Err(_) => {
                let (phase, done, total) = opening.progress.snapshot();
                Err(OwnerError::BrainOpening {
                    brain: fp.to_string(),
                    elapsed_ms: opening.started.elapsed().as_millis() as u64,
                    phase: phase.as_str(),
                    done,
                    total,
                })
            }
        }
    }

    /// Wait until any close of a brain under way has released its store.
    #[cfg(test)]
    pub async fn closed(&self, fp: &Fingerprint) {
        let closing = self
            .registry
            .closing
            .read()
            .expect("registry lock")
            .get(fp)
            .cloned();
        if let Some(mut closed) = closing {
            let _ = closed.wait_for(|c| *c).await;
        }
    }

    /// Create a brain for a canonical root (idempotent), recording the repository it
    /// belongs to.
    pub async fn bootstrap(
        &self,
        root: PathBuf,
        repo: Option<crate::roster::RepoBinding>,
        own: bool,
    ) -> Result<(Manifest, bool)> {
        self.call_owner(|reply| OwnerMsg::Bootstrap {
            root,
            repo,
            own,
            reply,
        })
        .await?
    }

    /// Merge every version of brain `from` into brain `into` (one transaction in `into`),
    /// then record it in both manifests: `from` is never routed to again.
    pub async fn merge_brains(
        &self,
        from: &Manifest,
        into: &Manifest,
        actor: &str,
    ) -> Result<brains::store::Merged> {
        let incoming = self
            .read(&StoreId::brain(&from.fingerprint), |s| s.every_version())
            .await?;
        let (actor, name) = (actor.to_string(), from.root.clone());
        let done = self
            .ask(&StoreId::brain(&into.fingerprint), |reply| {
                BrainMsg::Merge {
                    incoming,
                    actor,
                    from: name,
                    reply,
                }
            })
            .await?;
        let (f, i) = (from.fingerprint.clone(), into.fingerprint.clone());
        self.call_owner(|reply| OwnerMsg::Merged {
            from: f,
            into: i,
            reply,
        })
        .await??;
        Ok(done)
    }

    pub async fn rescan(&self) -> Result<Vec<RosterEntry>> {
        self.call_owner(OwnerMsg::Rescan).await
    }

    pub async fn unload(&self, fp: &Fingerprint) -> Result<bool> {
        let fp = fp.clone();
        self.call_owner(|reply| OwnerMsg::Unload { fp, reply })
            .await
    }

    /// Ask the audit actor (the only writer of the medulla).
    pub async fn audit<T: Send + 'static>(
        &self,
        build: impl FnOnce(RpcReplyPort<Result<T>>) -> AuditMsg,
    ) -> Result<T> {
        let audit = self
            .registry
            .audit()
            .ok_or_else(|| OwnerError::Unreachable {
                actor: "audit".into(),
                detail: "the audit actor is not running".into(),
            })?;
        call_actor(&audit, "audit", self.timeout(), build).await?
    }

    /// Run a distribution pass now and wait for it.
    pub async fn distribute(&self) -> Result<PassReport> {
        let mb = self
            .registry
            .mailbox()
            .ok_or_else(|| OwnerError::Unreachable {
                actor: "mailbox".into(),
                detail: "the distributor is not running; letters wait safely in the spool".into(),
            })?;
        call_actor(&mb, "mailbox", self.timeout(), |r| {
            MailboxMsg::Distribute(Some(r))
        })
        .await?
        .map_err(|e| OwnerError::Mailbox(e.to_string()))
    }

    /// Ask a store's actor for a write.
    async fn ask<T: Send + 'static>(
        &self,
        id: &StoreId,
        build: impl FnOnce(RpcReplyPort<std::result::Result<T, brains::StoreError>>) -> BrainMsg,
    ) -> Result<T> {
        ask(self, id, build).await
    }

    /// Read a store beside its actor, concurrently with other reads.
    pub async fn read<T, F>(&self, id: &StoreId, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&Store) -> std::result::Result<T, brains::StoreError> + Clone + Send + 'static,
    {
        read(self, id, f).await
    }

    pub async fn memorize(&self, id: &StoreId, input: MemorizeInput) -> Result<MemorizeOutcome> {
        self.ask(id, |r| BrainMsg::Memorize(Box::new(input), r))
            .await
    }

    /// Several claims in one transaction: one result per input, in order (a refused item
    /// does not stop the others). `ahead[i]`, when given, is `inputs[i]`'s vector and
    /// terms worked out before; the store takes only those that fit.
    pub async fn memorize_many(
        &self,
        id: &StoreId,
        inputs: Vec<MemorizeInput>,
        ahead: Vec<Option<Derivation>>,
    ) -> Result<Vec<std::result::Result<MemorizeOutcome, brains::StoreError>>> {
        self.ask(id, |r| BrainMsg::MemorizeMany(inputs, ahead, r))
            .await
    }

    /// A bulk write into `id` is over ([`Store::bulk_written`]).
    pub async fn bulk_written(&self, id: &StoreId) -> Result<()> {
        self.read(id, |s| {
            s.bulk_written();
            Ok(())
        })
        .await
    }

    pub async fn recall(&self, id: &StoreId, q: RecallQuery) -> Result<RecallResult> {
        self.read(id, move |s| s.recall(&q)).await
    }

    pub async fn get(&self, id: &StoreId, slug: &str) -> Result<Option<Claim>> {
        let slug = slug.to_string();
        self.read(id, move |s| s.get(&slug)).await
    }

    pub async fn history(&self, id: &StoreId, slug: &str) -> Result<Vec<Claim>> {
        let slug = slug.to_string();
        self.read(id, move |s| s.history(&slug)).await
    }

    /// [`OwnerHandle::history`] of many slugs, in order, from one read of the store.
    pub async fn histories(&self, id: &StoreId, slugs: Vec<String>) -> Result<Vec<Vec<Claim>>> {
        self.read(id, move |s| s.histories(&slugs)).await
    }

    pub async fn live_claims(&self, id: &StoreId) -> Result<Vec<Claim>> {
        self.read(id, |s| s.live_claims()).await
    }

    pub async fn recent(&self, id: &StoreId, n: usize) -> Result<Vec<Claim>> {
        self.read(id, move |s| s.recent(n)).await
    }

    /// Read a warm brain in place without marking it used (`None` when it is dormant):
    /// a listing never keeps a brain warm.
    pub async fn read_warm<T, F>(&self, fp: &Fingerprint, f: F) -> Option<T>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> std::result::Result<T, brains::StoreError> + Send + 'static,
    {
        let store = self.registry.peek(fp)?;
        crate::brain::read(store, f).await.ok().flatten()
    }

    pub async fn stats(&self, id: &StoreId) -> Result<StoreStats> {
        self.read(id, |s| s.stats()).await
    }

    pub async fn acts_newest(&self, id: &StoreId, n: usize) -> Result<Vec<Act>> {
        self.read(id, move |s| s.acts_newest(n)).await
    }

    pub async fn acts_before(&self, id: &StoreId, before: u64, limit: usize) -> Result<Vec<Act>> {
        self.read(id, move |s| s.acts_before(before, limit)).await
    }

    /// Copy a store for a backup into `dest`: its read lock is held only to begin one
    /// read transaction; the copy runs from that transaction on the blocking pool while
    /// writes go on. A store closed under the copy (its brain unloaded) is copied again
    /// from a new transaction, once.
    pub async fn backup_store(&self, id: &StoreId, dest: PathBuf) -> Result<brains::StoreCopy> {
        let mut again = true;
        loop {
            let source = self.read(id, |s| s.backup_source()).await?;
            let to = dest.clone();
            let copied = tokio::task::spawn_blocking(move || source.write_to(&to))
                .await
                .map_err(|e| OwnerError::Internal(format!("a store copy panicked: {e}")))?;
            match copied {
                Err(brains::StoreError::Closed) if again => {
                    again = false;
                    let _ = std::fs::remove_dir_all(&dest);
                }
                other => return other.map_err(OwnerError::from),
            }
        }
    }

    pub async fn check_index(&self, id: &StoreId) -> Result<Option<String>> {
        self.read(id, |s| s.check_index()).await
    }

    /// A store's fault, without loading it: a warm store's (or the medulla's) as its
    /// cell holds it, a dormant brain's quarantine from the marker beside its file.
    pub fn fault(&self, id: &StoreId) -> Option<Fault> {
        match id {
            StoreId::Medulla => self.registry.medulla_store().fault(),
            StoreId::Team => self.registry.team_store().and_then(|s| s.fault()),
            // A look, not a use: asking for a fault never keeps a brain warm.
            StoreId::Brain(fp) => match self.registry.peek(fp) {
                Some(store) => store.fault(),
                None => crate::brain::cell::quarantined(&self.config.brains_dir().join(fp)),
            },
        }
    }

    /// The deep check of one store (loaded for it when dormant): redb's integrity check,
    /// every record, the derived indexes. Damage quarantines the store.
    pub async fn check_integrity(&self, id: &StoreId) -> Result<Integrity> {
        self.ask(id, BrainMsg::CheckIntegrity).await
    }

    pub async fn learn(
        &self,
        id: &StoreId,
        slug: &str,
        verdict: Verdict,
        actor: &str,
        note: Option<String>,
    ) -> Result<Claim> {
        self.ask(id, |reply| BrainMsg::Learn {
            slug: slug.to_string(),
            verdict,
            actor: actor.to_string(),
            note,
            reply,
        })
        .await
    }

    /// Demote several slugs in one turn of the store's actor and one transaction,
    /// committed as `commit` says: every live one is demoted; the first refusal, if any,
    /// is the answer.
    pub async fn demote_many(
        &self,
        id: &StoreId,
        slugs: Vec<String>,
        actor: &str,
        reason: &str,
        commit: brains::store::Commit,
    ) -> Result<Vec<Claim>> {
        self.ask(id, |reply| BrainMsg::DemoteMany {
            slugs,
            actor: actor.to_string(),
            reason: reason.to_string(),
            commit,
            reply,
        })
        .await
    }

    /// Replace a live claim's evidence anchors (one `reanchor` act).
    pub async fn reanchor(
        &self,
        id: &StoreId,
        slug: &str,
        anchors: Vec<brains::Anchor>,
        actor: &str,
    ) -> Result<Claim> {
        self.ask(id, |reply| BrainMsg::Reanchor {
            slug: slug.to_string(),
            anchors,
            actor: actor.to_string(),
            reply,
        })
        .await
    }

    /// A write of tending or of a person's review: a brain's by its own actor, the
    /// medulla's and the team medulla's through the audit actor.
    pub async fn tend_write(
        &self,
        id: &StoreId,
        op: crate::brain::Tending,
        actor: &str,
    ) -> Result<Vec<Claim>> {
        match id {
            StoreId::Brain(_) => {
                self.ask(id, |reply| BrainMsg::Tend {
                    op,
                    actor: actor.to_string(),
                    reply,
                })
                .await
            }
            _ => {
                let to = id.clone();
                self.audit(|reply| AuditMsg::Tend {
                    to,
                    agent: actor.to_string(),
                    op,
                    reply,
                })
                .await
            }
        }
    }

    pub async fn retire(
        &self,
        id: &StoreId,
        slug: &str,
        actor: &str,
        reason: &str,
    ) -> Result<Claim> {
        self.ask(id, |reply| BrainMsg::Retire {
            slug: slug.to_string(),
            actor: actor.to_string(),
            reason: reason.to_string(),
            reply,
        })
        .await
    }

    /// Join the team config.toml names, while running (whether it was joined now).
    pub async fn join_team(&self, team: crate::config::TeamConfig) -> Result<bool> {
        self.call_owner(|reply| OwnerMsg::JoinTeam { team, reply })
            .await?
    }

    /// Stop syncing with the team (whether one was joined).
    pub async fn stop_sync(&self) -> Result<bool> {
        self.call_owner(OwnerMsg::StopSync).await
    }

    /// Stop a shared store's sharing; what it had queued and never sent is dropped.
    pub async fn stop_sharing(&self, id: &StoreId) -> Result<u64> {
        self.ask(id, BrainMsg::StopSharing).await
    }

    /// Close the team medulla's mirror.
    pub async fn close_team_store(&self) -> Result<()> {
        self.call_owner(OwnerMsg::CloseTeamStore).await
    }

    pub async fn purge(&self, id: &StoreId, slug: &str, actor: &str) -> Result<PurgeReport> {
        self.ask(id, |reply| BrainMsg::Purge {
            slug: slug.to_string(),
            actor: actor.to_string(),
            reply,
        })
        .await
    }

    /// Boot memory is small (a look-up, or a listing of a few keys): read on the
    /// caller's task when the store is free ([`read_small`]).
    pub async fn kv_get(&self, id: &StoreId, key: &str) -> Result<Option<String>> {
        let key = key.to_string();
        read_small(self, id, move |s| s.kv_get(&key)).await
    }

    pub async fn kv_list(&self, id: &StoreId) -> Result<Vec<(String, String)>> {
        read_small(self, id, |s| s.kv_list()).await
    }

    pub async fn kv_set(&self, id: &StoreId, key: &str, value: &str, actor: &str) -> Result<()> {
        self.ask(id, |reply| BrainMsg::KvSet {
            key: key.to_string(),
            value: value.to_string(),
            actor: actor.to_string(),
            reply,
        })
        .await
    }

    pub async fn kv_delete(&self, id: &StoreId, key: &str, actor: &str) -> Result<()> {
        self.ask(id, |reply| BrainMsg::KvDelete {
            key: key.to_string(),
            actor: actor.to_string(),
            reply,
        })
        .await
    }
}
