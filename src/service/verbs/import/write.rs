//! An import's writing: the running tally ([`Run`]), versions batched per brain, each
//! full batch sealed so its vectors and terms are worked out while the one before is
//! written, outdated versions demoted with the next durable batch, and the report.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;

use brains::store::{Commit, Derivation};
use brains::{ClaimState, MemorizeInput, MemorizeOutcome};

use super::read::{self, Loaded, Parsed};
use super::triage;
use super::{Ambiguous, CountGate, Existing, Group, ImportReport, Plan, Refusal, Target, BATCH};
use crate::audit::AuditMsg;
use crate::error::{OwnerError, Result};
use crate::service::Service;
use crate::store_id::{Fingerprint, StoreId};

/// The running tally of one import.
pub(super) struct Run {
    dry_run: bool,
    agent: String,
    pub(super) seen: usize,
    live: usize,
    into_history: usize,
    baseline: usize,
    unknown_origin: usize,
    per_target: BTreeMap<String, usize>,
    ambiguous: Vec<Ambiguous>,
    pub(super) refused: Vec<Refusal>,
    /// Versions waiting to be written to a brain in one transaction, per brain.
    pending: BTreeMap<Fingerprint, Vec<Pending>>,
    /// Per brain, the full batch sealed last: its vectors and terms are worked out while
    /// the batch before it is written, and it is written once the next is sealed (or at
    /// the import's end).
    sealed: BTreeMap<Fingerprint, Sealed>,
    /// The owner's model, which works out a sealed batch's vectors and terms (`None`:
    /// lexical-only, nothing worked out ahead).
    embedder: Option<std::sync::Arc<dyn brains::Embedder>>,
    /// Brains whose last demotions are not yet on disk: they go with the brain's next
    /// batch, which is durable, or with the import's end ([`Run::flush`]).
    undurable: BTreeSet<Fingerprint>,
    /// Per brain, slugs found live whose every file is outdated: an import that stopped
    /// between a batch and its demotions left them so; demoted with the brain's next
    /// batch.
    stray: BTreeMap<Fingerprint, Vec<String>>,
    /// Time spent looking up duplicates, anchoring evidence, writing and demoting (the
    /// log's).
    pub(super) lookup_ms: u64,
    pub(super) anchor_ms: u64,
    pub(super) write_ms: u64,
    pub(super) demote_ms: u64,
}

/// A batch sealed for its brain: its versions (their inputs taken out), and its inputs
/// coming back from a blocking thread with their vectors and terms worked out.
struct Sealed {
    batch: Vec<Pending>,
    derived: tokio::task::JoinHandle<Vec<(MemorizeInput, Option<Derivation>)>>,
}

/// A version read, checked and waiting for its brain's next batch.
struct Pending {
    input: MemorizeInput,
    file: PathBuf,
    slug: String,
    tgt: Target,
    is_last: bool,
    /// The last version of a slug whose every file is outdated: it goes to history as
    /// soon as it is written.
    stays_outdated: bool,
}

impl Run {
    pub(super) fn new(
        _plan: &Plan,
        dry_run: bool,
        agent: String,
        embedder: Option<std::sync::Arc<dyn brains::Embedder>>,
    ) -> Run {
        Run {
            dry_run,
            agent,
            sealed: BTreeMap::new(),
            embedder,
            seen: 0,
            live: 0,
            into_history: 0,
            baseline: 0,
            unknown_origin: 0,
            per_target: BTreeMap::new(),
            ambiguous: Vec::new(),
            refused: Vec::new(),
            pending: BTreeMap::new(),
            undurable: BTreeSet::new(),
            stray: BTreeMap::new(),
            lookup_ms: 0,
            anchor_ms: 0,
            write_ms: 0,
            demote_ms: 0,
        }
    }

    /// Seal one brain's waiting versions as a batch, and write the batch sealed before
    /// it (one transaction) while this one's vectors and terms are worked out; at the
    /// import's `end`, write both. Each version written is accounted for; the versions
    /// that stay outdated are then demoted in one turn of the brain's actor. Those
    /// demotions wait for the brain's next batch to reach the disk with it (one sync, not
    /// two a batch), except at the `end`, when they are synced.
    async fn flush(&mut self, svc: &Service, fp: &Fingerprint, end: bool) -> Result<()> {
        let store = StoreId::brain(fp);
        let batch = self.pending.remove(fp).unwrap_or_default();
        let mut demote = self.stray.remove(fp).unwrap_or_default();
        let mut ready = Vec::with_capacity(2);
        if end {
            ready.extend(self.sealed.remove(fp));
        }
        if !batch.is_empty() {
            let sealed = self.seal(batch);
            if end {
                ready.push(sealed);
            } else {
                ready.extend(self.sealed.insert(fp.clone(), sealed));
            }
        }
        if !ready.is_empty() {
            for sealed in ready {
                self.write(svc, &store, sealed, &mut demote).await?;
            }
            // The batch's commit was durable, and so is every demotion before it.
            self.undurable.remove(fp);
        }
        // At the end, with nothing to demote, an empty durable transaction still syncs
        // the demotions before it.
        if !demote.is_empty() || (end && self.undurable.contains(fp)) {
            let commit = if end {
                Commit::Durable
            } else {
                Commit::WithNext
            };
            let t = std::time::Instant::now();
            svc.owner
                .demote_many(&store, demote, &self.agent, "imported as outdated", commit)
                .await?;
            self.demote_ms += t.elapsed().as_millis() as u64;
            match commit {
                Commit::WithNext => self.undurable.insert(fp.clone()),
                Commit::Durable => self.undurable.remove(fp),
            };
        }
        Ok(())
    }

    /// A batch sealed: its inputs' vectors and terms worked out on a blocking thread, on
    /// the cores the writes leave idle, when the owner has a model.
    fn seal(&self, mut batch: Vec<Pending>) -> Sealed {
        let inputs: Vec<MemorizeInput> = batch
            .iter_mut()
            .map(|p| std::mem::take(&mut p.input))
            .collect();
        let embedder = self.embedder.clone();
        let derived = tokio::task::spawn_blocking(move || match embedder {
            Some(e) => read::derive(e.as_ref(), inputs),
            None => inputs.into_iter().map(|i| (i, None)).collect(),
        });
        Sealed { batch, derived }
    }

    /// Write one sealed batch to `store` and account for each version; the slugs whose
    /// version stays outdated are added to `demote`.
    async fn write(
        &mut self,
        svc: &Service,
        store: &StoreId,
        sealed: Sealed,
        demote: &mut Vec<String>,
    ) -> Result<()> {
        let Sealed { batch, derived } = sealed;
        let t = std::time::Instant::now();
        let (mut inputs, ahead): (Vec<MemorizeInput>, Vec<Option<Derivation>>) = derived
            .await
            .map_err(|e| OwnerError::Internal(format!("working out a batch panicked: {e}")))?
            .into_iter()
            .unzip();
        self.write_ms += t.elapsed().as_millis() as u64;
        // Evidence files inside the brain's root are anchored, the whole batch in one
        // blocking call.
        if let Some(Target::Brain(_, root)) = batch.first().map(|p| &p.tgt) {
            let (root, now) = (std::path::PathBuf::from(root), svc.now().ms);
            let evidence: Vec<Vec<String>> = inputs.iter().map(|i| i.evidence.clone()).collect();
            if evidence.iter().any(|e| !e.is_empty()) {
                let t = std::time::Instant::now();
                let anchored = tokio::task::spawn_blocking(move || {
                    crate::service::anchors::take_many(&root, &evidence, now)
                })
                .await
                .unwrap_or_default();
                for (i, a) in inputs.iter_mut().zip(anchored) {
                    i.anchors = a;
                }
                self.anchor_ms += t.elapsed().as_millis() as u64;
            }
        }
        let t = std::time::Instant::now();
        let outcomes = svc.owner.memorize_many(store, inputs, ahead).await?;
        for (p, outcome) in batch.into_iter().zip(outcomes) {
            let written = self.settle(
                p.file,
                p.is_last,
                &p.tgt,
                outcome.map_err(|e| e.to_string()),
            );
            if written && p.stays_outdated {
                demote.push(p.slug);
            }
        }
        self.write_ms += t.elapsed().as_millis() as u64;
        Ok(())
    }

    /// Account for one version's write: counted when written, refused as a duplicate
    /// when the store already held it, refused with the reason otherwise. Whether it was
    /// written.
    fn settle(
        &mut self,
        file: PathBuf,
        is_last: bool,
        tgt: &Target,
        outcome: std::result::Result<MemorizeOutcome, String>,
    ) -> bool {
        match outcome {
            Ok(MemorizeOutcome::Unchanged { .. }) => {
                self.refuse(file, "duplicate", "identical to the live version");
                false
            }
            Ok(_) => {
                self.count(is_last, tgt);
                true
            }
            Err(e) => {
                self.refuse(file, "refused", e);
                false
            }
        }
    }

    /// Write every brain's waiting versions.
    pub(super) async fn flush_all(&mut self, svc: &Service) -> Result<()> {
        let fps: BTreeSet<Fingerprint> = self
            .pending
            .keys()
            .chain(self.sealed.keys())
            .chain(self.stray.keys())
            .chain(&self.undurable)
            .cloned()
            .collect();
        for fp in fps {
            self.flush(svc, &fp, true).await?;
            // The brain's fresh vectors are parted into cells before the import
            // returns, not once its settler's hold ends (a failure loses nothing).
            if let Err(e) = svc.owner.bulk_written(&StoreId::brain(&fp)).await {
                tracing::debug!(error = %e, "could not part an imported brain's fresh vectors");
            }
        }
        Ok(())
    }

    fn refuse(&mut self, file: PathBuf, reason: &'static str, detail: impl Into<String>) {
        self.refused.push(Refusal {
            file,
            reason: reason.into(),
            detail: detail.into(),
        });
    }

    /// Count every file read, refuse the unreadable and the unparseable (in file order);
    /// group the rest by slug.
    pub(super) fn group(
        &mut self,
        blocks: Vec<Vec<Result<Loaded, Refusal>>>,
    ) -> BTreeMap<String, Vec<Loaded>> {
        let mut groups: BTreeMap<String, Vec<Loaded>> = BTreeMap::new();
        for r in blocks.into_iter().flatten() {
            self.seen += 1;
            match r {
                Ok(l) => match groups.get_mut(&l.slug) {
                    Some(versions) => versions.push(l),
                    None => {
                        groups.insert(l.slug.clone(), vec![l]);
                    }
                },
                Err(refusal) => self.refused.push(refusal),
            }
        }
        groups
    }

    /// The store a slug goes to: the fixed target, or the one brain triage names.
    fn choose(&mut self, plan: &Plan, slug: &str, versions: &[Parsed]) -> Target {
        let rules = match plan {
            Plan::Fixed(t) => return t.clone(),
            Plan::Triage(rules) => rules,
        };
        let probe = versions
            .iter()
            .rev()
            .find(|p| p.state == ClaimState::Authored)
            .or(versions.last())
            .expect("a group is never empty");
        let hits = triage::matches(rules, &probe.file, &probe.input.label, &probe.input.text);
        match hits.len() {
            1 => {
                let (fp, root) = hits.into_iter().next().expect("one hit");
                Target::Brain(fp, root)
            }
            0 => Target::Medulla,
            _ => {
                self.ambiguous.push(Ambiguous {
                    slug: slug.to_string(),
                    file: probe.file.clone(),
                    candidates: hits.into_iter().map(|h| h.1).collect(),
                });
                Target::Medulla
            }
        }
    }

    /// A slug's store, and its versions oldest first with their original times, so older
    /// ones land in history. A version whose content the next one repeats (a witness
    /// re-stamped when it was promoted) adds no version of its own: the later one stands
    /// for both, and the earlier file is refused as a duplicate.
    pub(super) fn prepare(
        &mut self,
        plan: &Plan,
        slug: String,
        mut versions: Vec<Parsed>,
        files: usize,
    ) -> Group {
        let tgt = self.choose(plan, &slug, &versions);
        // Oldest first; the authored version last among equals, so it ends live.
        versions.sort_by_key(|p| {
            (
                p.input.created.unwrap_or(0),
                p.state == ClaimState::Authored,
            )
        });
        let mut kept: Vec<Parsed> = Vec::with_capacity(versions.len());
        for p in versions {
            match kept.last() {
                Some(prev) if prev.hash == p.hash => {
                    let prev = kept.pop().expect("a last one");
                    self.refuse(
                        prev.file,
                        "duplicate",
                        "the next version repeats its content",
                    );
                    kept.push(p);
                }
                _ => kept.push(p),
            }
        }
        Group {
            slug,
            tgt,
            versions: kept,
            files,
        }
    }

    /// Replay one slug's versions into its store, refusing those the store already holds
    /// (`existing`); a slug whose every file is outdated stays in history.
    pub(super) async fn replay(
        &mut self,
        svc: &Service,
        g: Group,
        existing: Existing,
    ) -> Result<()> {
        let Group {
            slug,
            tgt,
            versions,
            ..
        } = g;
        let n = versions.len();
        let all_outdated = versions.iter().all(|p| p.state == ClaimState::Outdated);
        let mut seen_here: HashSet<(String, i64)> = HashSet::new();
        for (i, p) in versions.into_iter().enumerate() {
            let Parsed {
                file,
                input,
                hash,
                invalid,
                ..
            } = p;
            if input.origin_brain.is_none() {
                self.unknown_origin += 1;
            }
            if let Some(e) = invalid {
                self.refuse(file, "invalid", e);
                continue;
            }
            let key = (hash, input.created.unwrap_or(0));
            let stays_outdated = i + 1 == n && all_outdated;
            if stays_outdated && !self.dry_run && existing.live.as_ref() == Some(&key) {
                if let Target::Brain(fp, _) = &tgt {
                    self.stray.entry(fp.clone()).or_default().push(slug.clone());
                }
            }
            if existing.versions.contains(&key) || !seen_here.insert(key) {
                self.refuse(file, "duplicate", "this version is already in the store");
                continue;
            }
            let is_last = i + 1 == n && !all_outdated;
            if is_last {
                self.baseline += 1;
            }
            if self.dry_run {
                self.count(is_last, &tgt);
                continue;
            }
            // The last version of a slug whose every file is outdated goes to history as
            // soon as it is written: it never lands live, in a brain or in the medulla.
            if let Target::Brain(fp, _) = &tgt {
                // Written with the brain's next batch: one transaction for many.
                let queue = self
                    .pending
                    .entry(fp.clone())
                    .or_insert_with(|| Vec::with_capacity(BATCH));
                queue.push(Pending {
                    input,
                    file,
                    slug: slug.clone(),
                    tgt: tgt.clone(),
                    is_last,
                    stays_outdated,
                });
                if queue.len() >= BATCH {
                    let fp = fp.clone();
                    self.flush(svc, &fp, false).await?;
                }
                continue;
            }
            let outdated_by = stays_outdated.then(|| self.agent.clone());
            let outcome = svc
                .owner
                .audit(|reply| AuditMsg::Import {
                    input,
                    outdated_by,
                    reply,
                })
                .await;
            self.settle(file, is_last, &tgt, outcome.map_err(|e| e.to_string()));
        }
        Ok(())
    }

    fn count(&mut self, is_last: bool, tgt: &Target) {
        if is_last {
            self.live += 1;
            *self.per_target.entry(tgt.name()).or_default() += 1;
        } else {
            self.into_history += 1;
        }
    }

    pub(super) fn report(self, plan: &Plan) -> ImportReport {
        ImportReport {
            dry_run: self.dry_run,
            target: match plan {
                Plan::Fixed(t) => t.name(),
                Plan::Triage(_) => "triage".into(),
            },
            live_by_store: self.per_target,
            ambiguous_kept_in_medulla: self.ambiguous,
            count_gate: CountGate {
                baseline: self.baseline,
                placed: self.live,
                holds: self.baseline == self.live,
            },
            files_seen: self.seen,
            imported_live: self.live,
            into_history: self.into_history,
            refused: self.refused.len(),
            count_conserved: self.seen == self.live + self.into_history + self.refused.len(),
            refusals: self.refused,
            origin_unknown: self.unknown_origin,
            from: None,
        }
    }
}
