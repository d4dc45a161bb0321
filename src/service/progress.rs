//! Progress of a long verb (an import, an export): the verb ticks; whoever called it
//! decides how to show it (REST streams NDJSON lines, MCP sends progress notifications,
//! the CLI draws a bar). A verb called without a listener ticks into nothing.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

/// One step of a long verb.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Tick {
    pub done: u64,
    pub total: Option<u64>,
    /// What is counted: `files`, `claims`, ...
    pub what: Cow<'static, str>,
}

/// Where a verb reports its progress.
#[derive(Debug, Clone, Default)]
pub struct Progress(Option<mpsc::UnboundedSender<Tick>>);

impl Progress {
    /// A listener: the sender for the verb, the receiver for the caller.
    pub fn channel() -> (Progress, mpsc::UnboundedReceiver<Tick>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Progress(Some(tx)), rx)
    }

    pub fn none() -> Progress {
        Progress(None)
    }

    pub fn tick(&self, done: u64, total: Option<u64>, what: &'static str) {
        if let Some(tx) = &self.0 {
            let _ = tx.send(Tick {
                done,
                total,
                what: what.into(),
            });
        }
    }
}
