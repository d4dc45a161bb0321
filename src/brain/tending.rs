//! A write of tending or of a person's review (SPEC §14): what a brain actor (or the
//! audit actor, for the medulla and team tiers) is asked to do to its store.

use brains::{Claim, Store, StoreError};

/// A write of tending or of a person's review (SPEC §14), to one store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tending {
    /// Join `joined` into `survivor` (they say the same thing).
    Consolidate {
        survivor: String,
        joined: Vec<String>,
    },
    /// Several joins in one transaction (`(survivor, joined)` each); a join whose labels
    /// are not all live is left out whole.
    ConsolidateMany { joins: Vec<(String, Vec<String>)> },
    /// Bring a joined (or retired) label back live.
    Revive { slug: String },
    /// A person keeps the live version as it is.
    Review { slug: String },
}

impl Tending {
    /// Do it to `s`, by `actor`: the claims it wrote (joined labels' outdated versions,
    /// a revived or reviewed claim).
    pub fn apply(self, s: &mut Store, actor: &str) -> Result<Vec<Claim>, StoreError> {
        match self {
            Tending::Consolidate { survivor, joined } => s.consolidate(&survivor, &joined, actor),
            Tending::ConsolidateMany { joins } => s.consolidate_many(&joins, actor),
            Tending::Revive { slug } => s.revive(&slug, actor).map(|c| vec![c]),
            Tending::Review { slug } => s.mark_reviewed(&slug, actor).map(|c| vec![c]),
        }
    }
}
