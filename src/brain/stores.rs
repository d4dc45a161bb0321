//! Reaching stores: the narrow handle an actor that is not the owner (the audit actor)
//! uses to ask a brain or the medulla something. The owner implements it; the audit
//! actor depends on this trait, not on the owner, so the arrows stay one way.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use brains::StoreError;
use ractor::{ActorRef, RpcReplyPort};

use super::BrainMsg;
use crate::error::{OwnerError, Result};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What reaching a store takes: its actor (a dormant brain loaded on demand) and how
/// long to wait for an answer.
pub trait Stores: Send + Sync + 'static {
    /// The actor of a brain by fingerprint, or of the medulla for `None`.
    fn actor<'a>(&'a self, fp: Option<&'a str>) -> BoxFuture<'a, Result<ActorRef<BrainMsg>>>;
    fn call_timeout(&self) -> Duration;
}

/// Ask a store actor something, mapping delivery failure to `actor_unreachable` and a
/// missed deadline to `timeout`. A brain that went away between lookup and send
/// (unloaded, restarted) is loaded again and asked once more.
pub async fn ask<T, B>(stores: &dyn Stores, fp: Option<&str>, build: B) -> Result<T>
where
    T: Send + 'static,
    B: Fn(RpcReplyPort<std::result::Result<T, StoreError>>) -> BrainMsg,
{
    use ractor::rpc::CallResult;
    let name = format!("brain {}", fp.unwrap_or("medulla"));
    let timeout = stores.call_timeout();
    for attempt in 0..2 {
        let actor = stores.actor(fp).await?;
        match actor.call(&build, Some(timeout)).await {
            Ok(CallResult::Success(r)) => return r.map_err(OwnerError::from),
            Ok(CallResult::Timeout) => {
                return Err(OwnerError::Timeout {
                    actor: name,
                    ms: timeout.as_millis() as u64,
                })
            }
            Ok(CallResult::SenderError) | Err(_) if attempt == 0 => {
                tokio::task::yield_now().await;
                continue;
            }
            Ok(CallResult::SenderError) | Err(_) => break,
        }
    }
    Err(OwnerError::Unreachable {
        actor: name,
        detail: "it stopped before answering".into(),
    })
}
