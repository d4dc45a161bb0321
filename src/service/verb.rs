//! The contract of one verb: what it declares (name, description, effect, argument and
//! answer types) and what it may look at when it runs. The registry lists verbs; each
//! verb file implements this; neither names the other's internals.

use std::future::Future;

use brains::Retrieval;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::progress::Progress;
use super::route::Routed;
use super::{RouteInput, Service};
use crate::error::Result;

/// What a verb does to the world; becomes the MCP annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only (`readOnlyHint`): a client may run it without asking.
    Read,
    /// Adds or supersedes; history keeps what was there (`destructiveHint: false`).
    Write,
    /// May erase or demote (`destructiveHint: true`).
    Destructive,
}

impl Effect {
    #[cfg(test)]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Destructive => "destructive",
        }
    }
}

/// Everything a verb may look at besides its arguments.
#[derive(Clone, Copy)]
pub struct Cx<'a> {
    pub svc: &'a Service,
    pub routed: &'a Routed,
    pub input: &'a RouteInput,
    /// Where a long verb reports how far it got.
    pub progress: &'a Progress,
}

/// An answer of a verb: serialized by the owner, read back by the command line's printers
/// (so a field renamed here fails to compile there), published as the output schema.
pub trait Answer: Serialize + DeserializeOwned + JsonSchema + Send {
    /// How this answer was ranked, when it says so itself (a seek over stores that
    /// differ); else the owner's mode.
    fn retrieval(&self) -> Option<Retrieval> {
        None
    }

    /// Whether the call changed state, for a verb that may write: a read of such a verb
    /// (`boot_memory` `get` or `list`) is no act and is not announced as one.
    fn wrote(&self) -> bool {
        true
    }
}

/// One verb.
pub trait Verb {
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    const EFFECT: Effect;
    /// Calling it twice with the same arguments changes nothing more.
    const IDEMPOTENT: bool = false;
    /// REST routes besides `POST /api/call/<name>`.
    const ALSO: &'static [&'static str] = &[];
    /// A `POST` route in [`Verb::ALSO`] takes this one argument as its whole body (the
    /// letter of `POST /api/reports`) instead of the arguments object.
    const BODY_IS: Option<&'static str> = None;
    /// It acts on the routed brain, so its answer says how the request was routed
    /// (`reception`, `served_brain`). Listings of the whole owner do not.
    const ROUTED: bool = true;
    /// Deserialized from MCP and REST (bodies and queries), serialized by the command
    /// line, published as the input schema. A verb the command line takes also derives
    /// `clap::Args` on it.
    type Args: DeserializeOwned + Serialize + JsonSchema + Send;
    type Answer: Answer;
    fn run(cx: Cx<'_>, args: Self::Args) -> impl Future<Output = Result<Self::Answer>> + Send;
}
