//! Reaching stores: the narrow handle anything that is not the owner (the audit actor,
//! the service through the owner's handle) uses to write to or read a brain or the
//! medulla. The owner implements it; the audit actor depends on this trait, not on the
//! owner, so the arrows stay one way.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use brains::{Store, StoreError};
use ractor::{ActorRef, RpcReplyPort};

use super::{BrainMsg, Shared};
use crate::call::call;
use crate::error::{OwnerError, Result};
use crate::store_id::StoreId;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What reaching a store takes: its writer (a dormant brain loaded on demand, waited on
/// while it opens), its open store for readers, and how long to wait for an answer.
pub trait Stores: Send + Sync + 'static {
    fn actor<'a>(&'a self, id: &'a StoreId) -> BoxFuture<'a, Result<ActorRef<BrainMsg>>>;
    fn store<'a>(&'a self, id: &'a StoreId) -> BoxFuture<'a, Result<Shared>>;
    fn call_timeout(&self) -> Duration;
}

/// Ask a store's actor for a write. A brain that went away between lookup and send
/// (unloaded, restarted) is resolved again and the same message sent there.
pub async fn ask<T: Send + 'static>(
    stores: &dyn Stores,
    id: &StoreId,
    build: impl FnOnce(RpcReplyPort<std::result::Result<T, StoreError>>) -> BrainMsg,
) -> Result<T> {
    call(
        &id.actor_name(),
        stores.call_timeout(),
        || stores.actor(id),
        build,
    )
    .await?
    .map_err(OwnerError::from)
}

/// Read a store directly, on the blocking pool, concurrently with other reads: reads
/// never queue behind the actor. A store closed between lookup and read (unloaded) is
/// resolved again and read once more.
pub async fn read<T, F>(stores: &dyn Stores, id: &StoreId, f: F) -> Result<T>
where
    T: Send + 'static,
    F: Fn(&Store) -> std::result::Result<T, StoreError> + Clone + Send + 'static,
{
    read_as(stores, id, f, false).await
}

/// [`read`] of a read known to be small (microseconds): on the caller's task when the
/// store is free, saving the blocking pool's two thread hops.
pub async fn read_small<T, F>(stores: &dyn Stores, id: &StoreId, f: F) -> Result<T>
where
    T: Send + 'static,
    F: Fn(&Store) -> std::result::Result<T, StoreError> + Clone + Send + 'static,
{
    read_as(stores, id, f, true).await
}

async fn read_as<T, F>(stores: &dyn Stores, id: &StoreId, f: F, small: bool) -> Result<T>
where
    T: Send + 'static,
    F: Fn(&Store) -> std::result::Result<T, StoreError> + Clone + Send + 'static,
{
    for _ in 0..2 {
        let store = stores.store(id).await?;
        let read = if small {
            super::read_small(store, f.clone()).await?
        } else {
            super::read(store, f.clone()).await?
        };
        if let Some(v) = read {
            return Ok(v);
        }
    }
    Err(OwnerError::Unreachable {
        actor: id.actor_name(),
        detail: "its store closed before it could be read".into(),
    })
}
