//! Calling an actor with a deadline: a missed deadline is `timeout` (504 at the edge),
//! an actor that is gone or stopped before answering is `actor_unreachable` (503).

use std::time::Duration;

use ractor::{ActorRef, RpcReplyPort};

use crate::error::{OwnerError, Result};

pub async fn call_actor<M: ractor::Message, T: Send + 'static>(
    actor: &ActorRef<M>,
    name: &str,
    timeout: Duration,
    build: impl FnOnce(RpcReplyPort<T>) -> M,
) -> Result<T> {
    use ractor::rpc::CallResult;
    match actor.call(build, Some(timeout)).await {
        Ok(CallResult::Success(v)) => Ok(v),
        Ok(CallResult::Timeout) => Err(OwnerError::Timeout {
            actor: name.to_string(),
            ms: timeout.as_millis() as u64,
        }),
        Ok(CallResult::SenderError) | Err(_) => Err(OwnerError::Unreachable {
            actor: name.to_string(),
            detail: "it stopped before answering".into(),
        }),
    }
}
