//! What an import from another tool did, or with `dry_run` would do, per store: entries
//! created, superseded (an entry changed since its last import), already there, near a
//! claim already there (not written; the claim's slug named), refused (a secret, an
//! invalid entry, a label another writer holds); the projects with no brain, with the
//! bootstrap that would take them; what the source holds that is not memory. Every entry
//! read is counted in exactly one of those.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::sources::{Skipped, Source};
use super::{CountGate, ImportReport};

/// Labels listed per kind and store, at most (the counts are whole).
pub(super) const LISTED: usize = 100;

/// One entry not written, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EntryRefusal {
    pub label: String,
    /// Where the entry was read (`file:lines`).
    pub evidence: String,
    /// `secret found` (redacted), `invalid`, `label held` (another writer's live claim
    /// has the label), or `refused` (the store's reason).
    pub reason: String,
    pub detail: String,
}

/// An entry not written because a live claim of the store already says nearly the same.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NearEntry {
    pub label: String,
    pub evidence: String,
    /// The claim already there.
    pub existing_slug: String,
    pub existing_label: String,
    pub score: f64,
}

/// One store's part of the import.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct StoreTally {
    /// The brain's root, or `medulla`.
    pub store: String,
    pub created: usize,
    /// Entries that changed since they were imported: their claim's new version.
    pub superseded: usize,
    /// Entries whose claim already holds what they say (imported before, unchanged).
    pub already: usize,
    /// The labels created (or, in a dry run, that would be), the first [`LISTED`].
    pub created_labels: Vec<String>,
    pub superseded_labels: Vec<String>,
    pub near_duplicates: Vec<NearEntry>,
    pub refused: Vec<EntryRefusal>,
}

impl StoreTally {
    pub(super) fn new(store: String) -> StoreTally {
        StoreTally {
            store,
            ..Default::default()
        }
    }

    pub(super) fn created(&mut self, label: &str) {
        self.created += 1;
        if self.created_labels.len() < LISTED {
            self.created_labels.push(label.to_string());
        }
    }

    pub(super) fn superseded(&mut self, label: &str) {
        self.superseded += 1;
        if self.superseded_labels.len() < LISTED {
            self.superseded_labels.push(label.to_string());
        }
    }

    pub(super) fn refuse(&mut self, label: &str, evidence: &str, reason: &str, detail: String) {
        self.refused.push(EntryRefusal {
            label: label.to_string(),
            evidence: evidence.to_string(),
            reason: reason.to_string(),
            detail,
        });
    }

    /// Entries this store accounted for.
    fn total(&self) -> usize {
        self.created
            + self.superseded
            + self.already
            + self.near_duplicates.len()
            + self.refused.len()
    }
}

/// A project the source has memory of and no brain covers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct UnroutedProject {
    pub project: String,
    pub entries: usize,
    /// Their labels, the first [`LISTED`].
    pub labels: Vec<String>,
    /// The exact bootstrap that would take them (then import again), or what else to do.
    pub fix: String,
}

/// An import from another tool (`from`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FromReport {
    pub source: Source,
    /// Where it was read: the path given, or the source's own place.
    pub place: String,
    /// Files read.
    pub files_read: usize,
    /// Entries read: each is counted once below.
    pub entries: usize,
    pub stores: Vec<StoreTally>,
    pub unrouted: Vec<UnroutedProject>,
    /// What the source holds that is not imported, and why (an index, hidden memories,
    /// notes already consolidated, a line that is no entry).
    pub skipped: Vec<Skipped>,
    /// `entries` = every store's created + superseded + already + near duplicates +
    /// refused, + the unrouted entries.
    pub count_conserved: bool,
}

impl FromReport {
    pub(super) fn new(source: Source, place: String, files_read: usize) -> FromReport {
        FromReport {
            source,
            place,
            files_read,
            entries: 0,
            stores: Vec::new(),
            unrouted: Vec::new(),
            skipped: Vec::new(),
            count_conserved: false,
        }
    }

    pub(super) fn unrouted(&mut self, project: String, fix: String, label: &str) {
        match self.unrouted.iter_mut().find(|u| u.project == project) {
            Some(u) => {
                u.entries += 1;
                if u.labels.len() < LISTED {
                    u.labels.push(label.to_string());
                }
            }
            None => self.unrouted.push(UnroutedProject {
                project,
                entries: 1,
                labels: vec![label.to_string()],
                fix,
            }),
        }
    }

    /// Entries written (or that would be).
    pub fn written(&self) -> usize {
        self.stores.iter().map(|s| s.created + s.superseded).sum()
    }

    /// The answer: this report, with the legacy counts every import answers
    /// (`files_seen` = entries, `imported_live` = created + superseded, `refused` = the
    /// rest).
    pub(super) fn into_answer(mut self, dry_run: bool) -> ImportReport {
        let accounted: usize = self.stores.iter().map(StoreTally::total).sum::<usize>()
            + self.unrouted.iter().map(|u| u.entries).sum::<usize>();
        self.count_conserved = accounted == self.entries;
        let written = self.written();
        let live_by_store: BTreeMap<String, usize> = self
            .stores
            .iter()
            .map(|s| (s.store.clone(), s.created + s.superseded))
            .collect();
        ImportReport {
            dry_run,
            target: format!("from {}", self.source.name()),
            live_by_store,
            ambiguous_kept_in_medulla: Vec::new(),
            count_gate: CountGate {
                baseline: written,
                placed: written,
                holds: true,
            },
            files_seen: self.entries,
            imported_live: written,
            into_history: 0,
            refused: self.entries - written.min(self.entries),
            refusals: Vec::new(),
            origin_unknown: 0,
            count_conserved: self.count_conserved,
            from: Some(Box::new(self)),
        }
    }
}
