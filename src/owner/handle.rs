//! [`OwnerHandle`]: a running owner as the service sees it — the owner actor, the
//! registry it keeps, and one typed method per thing a store can be asked.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use brains::{
    Act, Claim, MemorizeInput, MemorizeOutcome, PurgeReport, RecallQuery, RecallResult, Store,
    StoreOptions, StoreStats, Verdict,
};
use ractor::{ActorRef, RpcReplyPort};

use super::registry::Registry;
use super::{OwnerArgs, OwnerMsg};
use crate::audit::AuditMsg;
use crate::brain::stores::{ask, BoxFuture, Stores};
use crate::brain::BrainMsg;
use crate::call::call_actor;
use crate::config::Config;
use crate::error::{OwnerError, Result};
use crate::mailbox::{MailboxMsg, PassReport};
use crate::roster::{Manifest, RosterEntry};

/// A running owner: its actor and the registry its handlers read.
#[derive(Clone)]
pub struct OwnerHandle {
    pub actor: ActorRef<OwnerMsg>,
    pub registry: Arc<Registry>,
    pub config: Arc<Config>,
    pub opts: StoreOptions,
}

impl Stores for OwnerHandle {
    fn actor<'a>(&'a self, fp: Option<&'a str>) -> BoxFuture<'a, Result<ActorRef<BrainMsg>>> {
        Box::pin(async move {
            match fp {
                None => Ok(self.registry.medulla()),
                Some(fp) => self.brain(fp).await,
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

    /// Ask a store (a brain by fingerprint, or the medulla for `None`) something.
    pub async fn ask<T, B>(&self, fp: Option<&str>, build: B) -> Result<T>
    where
        T: Send + 'static,
        B: Fn(RpcReplyPort<std::result::Result<T, brains::StoreError>>) -> BrainMsg,
    {
        ask(self, fp, build).await
    }

    /// Read a store (a brain by fingerprint, or the medulla for `None`) directly, on the
    /// blocking pool, concurrently with other reads: reads never queue behind the actor.
    /// A store closed between lookup and read (unloaded) is loaded again and read once
    /// more.
    pub async fn read<T, F>(&self, fp: Option<&str>, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&Store) -> std::result::Result<T, brains::StoreError> + Clone + Send + 'static,
    {
        for _ in 0..2 {
            let store = match fp {
                None => self.registry.medulla_store(),
                Some(fp) => match self.registry.warm(fp) {
                    Some(w) => w.store,
                    None => {
                        self.brain(fp).await?;
                        match self.registry.warm(fp) {
                            Some(w) => w.store,
                            None => continue,
                        }
                    }
                },
            };
            if let Some(v) = crate::brain::read(store, f.clone()).await? {
                return Ok(v);
            }
        }
        Err(OwnerError::Unreachable {
            actor: format!("brain {}", fp.unwrap_or("medulla")),
            detail: "its store closed before it could be read".into(),
        })
    }

    pub async fn memorize(
        &self,
        fp: Option<&str>,
        input: MemorizeInput,
    ) -> Result<MemorizeOutcome> {
        self.ask(fp, |r| BrainMsg::Memorize(input.clone(), r)).await
    }

    /// Several claims in one transaction: one result per input, in order (a refused item
    /// does not stop the others).
    pub async fn memorize_many(
        &self,
        fp: Option<&str>,
        inputs: Vec<MemorizeInput>,
    ) -> Result<Vec<std::result::Result<MemorizeOutcome, brains::StoreError>>> {
        self.ask(fp, |r| BrainMsg::MemorizeMany(inputs.clone(), r))
            .await
    }

    pub async fn recall(&self, fp: Option<&str>, q: RecallQuery) -> Result<RecallResult> {
        self.read(fp, move |s| s.recall(&q)).await
    }

    pub async fn get(&self, fp: Option<&str>, slug: &str) -> Result<Option<Claim>> {
        let slug = slug.to_string();
        self.read(fp, move |s| s.get(&slug)).await
    }

    pub async fn history(&self, fp: Option<&str>, slug: &str) -> Result<Vec<Claim>> {
        let slug = slug.to_string();
        self.read(fp, move |s| s.history(&slug)).await
    }

    pub async fn live_claims(&self, fp: Option<&str>) -> Result<Vec<Claim>> {
        self.read(fp, |s| s.live_claims()).await
    }

    pub async fn recent(&self, fp: Option<&str>, n: usize) -> Result<Vec<Claim>> {
        self.read(fp, move |s| s.recent(n)).await
    }

    pub async fn stats(&self, fp: Option<&str>) -> Result<StoreStats> {
        self.read(fp, |s| s.stats()).await
    }

    pub async fn acts_newest(&self, fp: Option<&str>, n: usize) -> Result<Vec<Act>> {
        self.read(fp, move |s| s.acts_newest(n)).await
    }

    pub async fn acts_before(
        &self,
        fp: Option<&str>,
        before: u64,
        limit: usize,
    ) -> Result<Vec<Act>> {
        self.read(fp, move |s| s.acts_before(before, limit)).await
    }

    pub async fn check_index(&self, fp: &str) -> Result<Option<String>> {
        self.read(Some(fp), |s| s.check_index()).await
    }

    pub async fn learn(
        &self,
        fp: &str,
        slug: &str,
        verdict: Verdict,
        actor: &str,
        note: Option<String>,
    ) -> Result<Claim> {
        self.ask(Some(fp), |r| BrainMsg::Learn {
            slug: slug.to_string(),
            verdict,
            actor: actor.to_string(),
            note: note.clone(),
            reply: r,
        })
        .await
    }

    pub async fn demote(&self, fp: &str, slug: &str, actor: &str, reason: &str) -> Result<Claim> {
        self.ask(Some(fp), |r| BrainMsg::Demote {
            slug: slug.to_string(),
            actor: actor.to_string(),
            reason: reason.to_string(),
            reply: r,
        })
        .await
    }

    pub async fn purge(&self, fp: &str, slug: &str, actor: &str) -> Result<PurgeReport> {
        self.ask(Some(fp), |r| BrainMsg::Purge {
            slug: slug.to_string(),
            actor: actor.to_string(),
            reply: r,
        })
        .await
    }

    pub async fn kv_get(&self, fp: Option<&str>, key: &str) -> Result<Option<String>> {
        let key = key.to_string();
        self.read(fp, move |s| s.kv_get(&key)).await
    }

    pub async fn kv_list(&self, fp: Option<&str>) -> Result<Vec<(String, String)>> {
        self.read(fp, |s| s.kv_list()).await
    }

    pub async fn kv_set(&self, fp: &str, key: &str, value: &str, actor: &str) -> Result<()> {
        self.ask(Some(fp), |r| BrainMsg::KvSet {
            key: key.to_string(),
            value: value.to_string(),
            actor: actor.to_string(),
            reply: r,
        })
        .await
    }

    pub async fn kv_delete(&self, fp: &str, key: &str, actor: &str) -> Result<()> {
        self.ask(Some(fp), |r| BrainMsg::KvDelete {
            key: key.to_string(),
            actor: actor.to_string(),
            reply: r,
        })
        .await
    }
}
