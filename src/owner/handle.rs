//! [`OwnerHandle`]: a running owner as the service sees it — the owner actor, the
//! registry it keeps, and one typed method per thing a store can be asked.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use brains::{
    Act, Claim, MemorizeInput, MemorizeOutcome, PurgeReport, RecallQuery, RecallResult,
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

    pub async fn memorize(
        &self,
        fp: Option<&str>,
        input: MemorizeInput,
    ) -> Result<MemorizeOutcome> {
        self.ask(fp, |r| BrainMsg::Memorize(input.clone(), r)).await
    }

    pub async fn recall(&self, fp: Option<&str>, q: RecallQuery) -> Result<RecallResult> {
        self.ask(fp, |r| BrainMsg::Recall(q.clone(), r)).await
    }

    pub async fn get(&self, fp: Option<&str>, slug: &str) -> Result<Option<Claim>> {
        self.ask(fp, |r| BrainMsg::Get(slug.to_string(), r)).await
    }

    pub async fn history(&self, fp: Option<&str>, slug: &str) -> Result<Vec<Claim>> {
        self.ask(fp, |r| BrainMsg::History(slug.to_string(), r))
            .await
    }

    pub async fn live_claims(&self, fp: Option<&str>) -> Result<Vec<Claim>> {
        self.ask(fp, BrainMsg::LiveClaims).await
    }

    pub async fn recent(&self, fp: Option<&str>, n: usize) -> Result<Vec<Claim>> {
        self.ask(fp, |r| BrainMsg::Recent(n, r)).await
    }

    pub async fn stats(&self, fp: Option<&str>) -> Result<StoreStats> {
        self.ask(fp, BrainMsg::Stats).await
    }

    pub async fn acts_newest(&self, fp: Option<&str>, n: usize) -> Result<Vec<Act>> {
        self.ask(fp, |r| BrainMsg::ActsNewest(n, r)).await
    }

    pub async fn acts_before(
        &self,
        fp: Option<&str>,
        before: u64,
        limit: usize,
    ) -> Result<Vec<Act>> {
        self.ask(fp, |reply| BrainMsg::ActsBefore {
            before,
            limit,
            reply,
        })
        .await
    }

    pub async fn check_index(&self, fp: &str) -> Result<Option<String>> {
        self.ask(Some(fp), BrainMsg::CheckIndex).await
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
        self.ask(fp, |r| BrainMsg::KvGet(key.to_string(), r)).await
    }

    pub async fn kv_list(&self, fp: Option<&str>) -> Result<Vec<(String, String)>> {
        self.ask(fp, BrainMsg::KvList).await
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
