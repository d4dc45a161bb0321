//! Per-brain counters, since the owner started. Per-brain surfaces show them per brain,
//! never summed into an owner-wide number on a brain's row (INV-7).

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct BrainCounters {
    sessions: AtomicU64,
    recalls: AtomicU64,
    writes: AtomicU64,
    beats: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl BrainCounters {
    /// An MCP session's first routed call landed here.
    pub fn session(&self) {
        bump(&self.sessions)
    }
    pub fn recalled(&self) {
        bump(&self.recalls)
    }
    pub fn wrote(&self) {
        bump(&self.writes)
    }
    /// A `north` beat was served.
    pub fn beat(&self) {
        bump(&self.beats)
    }
    pub fn sessions(&self) -> u64 {
        self.sessions.load(Ordering::Relaxed)
    }
    pub fn recalls(&self) -> u64 {
        self.recalls.load(Ordering::Relaxed)
    }
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }
    pub fn beats(&self) -> u64 {
        self.beats.load(Ordering::Relaxed)
    }
}
