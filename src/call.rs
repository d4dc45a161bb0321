//! Calling an actor: the one way every request reaches one. A missed deadline is
//! `timeout` (504 at the edge); an actor that is gone or stopped before answering is
//! `actor_unreachable` (503).
//!
//! The reply channel is made here, so a message that finds its actor stopped comes back
//! whole from the send and goes once to a freshly resolved actor (a brain unloaded or
//! restarted between lookup and send): nothing is cloned to retry, an import batch
//! included. A message that reached an actor is never sent twice: if the actor dies
//! while handling it, the caller is told, because the write may or may not have landed.

use std::future::Future;
use std::time::Duration;

use ractor::{ActorRef, MessagingErr, RpcReplyPort};

use crate::error::{OwnerError, Result};

/// Ask the actor `resolve` gives for `build`'s message and wait up to `timeout`.
pub async fn call<M, T, R, F>(
    name: &str,
    timeout: Duration,
    mut resolve: R,
    build: impl FnOnce(RpcReplyPort<T>) -> M,
) -> Result<T>
where
    M: ractor::Message,
    T: Send + 'static,
    R: FnMut() -> F,
    F: Future<Output = Result<ActorRef<M>>>,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut msg = build(RpcReplyPort::from(tx));
    for attempt in 0..2 {
        let actor = resolve().await?;
        match actor.send_message(msg) {
            Ok(()) => {
                return match tokio::time::timeout(timeout, rx).await {
                    Ok(Ok(v)) => Ok(v),
                    Ok(Err(_)) => Err(unreachable(name)),
                    Err(_) => Err(OwnerError::Timeout {
                        actor: name.to_string(),
                        ms: timeout.as_millis() as u64,
                    }),
                };
            }
            Err(MessagingErr::SendErr(back)) if attempt == 0 => {
                msg = back;
                tokio::task::yield_now().await;
            }
            Err(_) => break,
        }
    }
    Err(unreachable(name))
}

/// Ask one known actor.
pub async fn call_actor<M: ractor::Message, T: Send + 'static>(
    actor: &ActorRef<M>,
    name: &str,
    timeout: Duration,
    build: impl FnOnce(RpcReplyPort<T>) -> M,
) -> Result<T> {
    let mut once = Some(actor.clone());
    call(
        name,
        timeout,
        move || {
            let next = once.take().ok_or_else(|| unreachable(name));
            std::future::ready(next)
        },
        build,
    )
    .await
}

fn unreachable(name: &str) -> OwnerError {
    OwnerError::Unreachable {
        actor: name.to_string(),
        detail: "it stopped before answering".into(),
    }
}
