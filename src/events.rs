//! The owner's event bus: every change of state (a write verb that succeeded, a letter
//! filed) is announced, so a live view — the Hall — updates without polling. Events say
//! what happened where, never the content.

use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::Serialize;
use tokio::sync::broadcast;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A write verb succeeded: an act in a store.
    Act,
    /// A distribution pass filed letters.
    Mail,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Event {
    pub seq: u64,
    pub at: i64,
    pub kind: EventKind,
    /// The verb, for acts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verb: Option<String>,
    /// The store it touched: a brain's root, or `medulla`; absent when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
}

#[derive(Debug)]
pub struct Events {
    tx: broadcast::Sender<Event>,
    seq: AtomicU64,
}

impl Default for Events {
    fn default() -> Self {
        // A slow listener that falls this far behind is told it lagged and resyncs.
        Events {
            tx: broadcast::channel(256).0,
            seq: AtomicU64::new(1),
        }
    }
}

impl Events {
    pub fn publish(&self, at: i64, kind: EventKind, verb: Option<&str>, store: Option<String>) {
        let ev = Event {
            seq: self.seq.fetch_add(1, Ordering::Relaxed),
            at,
            kind,
            verb: verb.map(str::to_string),
            store,
        };
        // No listener is fine: nobody is watching.
        let _ = self.tx.send(ev);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }
}
