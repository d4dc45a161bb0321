//! The store benches' corpus: a deterministic generator of claim-like text, the claims
//! and queries made from it, and the batched fill that writes them into a store.

use anyhow::Result;
use brains::recall::RankMode;
use brains::{MemorizeInput, RecallQuery, Store};

/// Topic words for the benches that write through an owner or import files: claim text
/// made of them by index, not drawn from [`Gen`].
pub(crate) const TOPICS: [&str; 24] = [
    "cache",
    "deploy",
    "schema",
    "router",
    "timeout",
    "flake",
    "release",
    "index",
    "queue",
    "migration",
    "runner",
    "token",
    "parser",
    "lockfile",
    "fixture",
    "retry",
    "socket",
    "backoff",
    "snapshot",
    "worker",
    "bundle",
    "linker",
    "shard",
    "replica",
];

/// A deterministic generator of claim-like text.
pub(crate) struct Gen(pub(crate) u64);

const WORDS: &[&str] = &[
    "cache",
    "index",
    "build",
    "flake",
    "runner",
    "deploy",
    "schema",
    "migration",
    "token",
    "router",
    "session",
    "brain",
    "store",
    "vector",
    "lexical",
    "query",
    "latency",
    "timeout",
    "retry",
    "backoff",
    "queue",
    "worker",
    "config",
    "release",
    "branch",
    "merge",
    "commit",
    "review",
    "test",
    "fixture",
    "mock",
    "socket",
    "stream",
    "buffer",
    "parser",
    "grammar",
    "compiler",
    "linker",
    "crate",
    "module",
    "trait",
    "actor",
    "mailbox",
    "spool",
    "letter",
    "promotion",
    "doctrine",
    "witness",
    "history",
    "version",
    "supersede",
    "downgrade",
    "hygiene",
    "secret",
    "embedding",
    "model",
    "runtime",
    "thread",
    "core",
    "memory",
    "disk",
    "fsync",
    "journal",
    "snapshot",
];

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(crate) fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| WORDS[(self.next() % WORDS.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    }
    /// Words of a 20k-word vocabulary with a Zipf-like skew (rank ~ 1/u), the shape of
    /// real text: a few frequent terms, a long tail of rare ones.
    pub(crate) fn rare(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| {
                let u = (self.next() % 1_000_000) as f64 / 1_000_000.0 + 1e-6;
                let rank = ((1.0 / u) as u64).min(20_000);
                format!("t{rank}x{}", rank % 7)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

pub(crate) fn input(g: &mut Gen, i: usize) -> MemorizeInput {
    MemorizeInput {
        label: format!("claim {i} {} {}", g.words(2), g.rare(1)),
        text: format!(
            "{} {} observed while {} {}",
            g.words(6),
            g.rare(6),
            g.words(3),
            g.rare(3)
        ),
        source_agent: "bench:maker".into(),
        origin_brain: Some("/bench".into()),
        ..Default::default()
    }
}

/// A bench query: 2 frequent and 2 tail words (about 9 in 10 hold only common terms).
pub(crate) fn query(g: &mut Gen, mode: RankMode) -> RecallQuery {
    RecallQuery {
        text: format!("{} {}", g.words(2), g.rare(2)),
        limit: 10,
        mode,
        ..Default::default()
    }
}

/// Claims `0..size` of `g` memorized with `memorize_many`, 1000 a call.
pub(crate) fn fill_batched(store: &mut Store, g: &mut Gen, size: usize) -> Result<()> {
    for start in (0..size).step_by(1000) {
        let batch = (start..size.min(start + 1000))
            .map(|i| input(g, i))
            .collect();
        for r in store.memorize_many(batch)? {
            r?;
        }
    }
    Ok(())
}
