//! Writes to claims other than memorize (`memorize.rs`): purge, learn, demote, the
//! promotion stamp. Each is one redb transaction with its act; in-memory indexes follow the commit.

use redb::ReadableTable;

use super::share::SharedOp;
use super::tables::{ACTS, CLAIMS, HISTORY, META, VECTORS, VEC_KEYS};
use super::{encode, sha, to_bytes, PurgeReport, Store};
use crate::claim::Claim;
use crate::claim::{Act, ActKind, ClaimState, Verdict};
use crate::error::StoreError;

/// How a transaction is committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// On disk (synced) when the call returns.
    Durable,
    /// Seen at once, and on disk with the store's next durable commit (or its close):
    /// a crash before then loses the whole transaction, never a part of it. For writes
    /// that a durable one is about to follow (an import's demotions between its
    /// batches), so they do not each wait on the disk.
    WithNext,
}

impl Store {
    /// Write a new live version (with its vector) and, when there was one, move the old
    /// version to history; one transaction. Updates the in-memory indexes after commit.
    fn write_version(
        &mut self,
        new: &Claim,
        old: Option<(&Claim, &str)>,
        vector: Option<Vec<f32>>,
        act: Act,
    ) -> Result<(), StoreError> {
        let new_key = vector.as_ref().map(|_| self.next_key);
        if new_key.is_some() {
            self.next_key += 1;
        }
        let old_key = old.and_then(|_| self.index.key_of(&new.slug));
        let tx = self.db.begin_write()?;
        {
            let mut claims = tx.open_table(CLAIMS)?;
            claims.insert(new.slug.as_str(), encode(new).as_slice())?;
            if let Some((prev, reason)) = old {
                let mut hist = tx.open_table(HISTORY)?;
                let mut out = prev.clone();
                out.state = ClaimState::Outdated;
                out.outdated_reason = Some(reason.to_string());
                out.outdated_at = Some(act.at);
                hist.insert((prev.slug.as_str(), prev.version), encode(&out).as_slice())?;
            }
            if let (Some(key), Some(v)) = (new_key, &vector) {
                let mut vt = tx.open_table(VECTORS)?;
                if let Some(ok) = old_key {
                    vt.remove(ok)?;
                }
                vt.insert(key, to_bytes(v).as_slice())?;
                tx.open_table(VEC_KEYS)?.insert(new.slug.as_str(), key)?;
                tx.open_table(META)?
                    .insert("next_key", self.next_key.to_string().as_str())?;
            }
        }
        self.act(&tx, act)?;
        self.queue_shared(
            &tx,
            SharedOp::Write {
                claim: Box::new(new.clone()),
            },
        )?;
        tx.commit()?;
        self.index_live(new, new_key.map(|k| (k, old_key)), vector.as_deref())
    }

    /// After a commit: a live version in the in-memory indexes (the claim index and,
    /// with a vector, the vector index under its new key, the key it replaced let go),
    /// counted as an act. Without a new key the version keeps the vector its slug had
    /// (same content, same vector).
    pub(super) fn index_live(
        &mut self,
        c: &Claim,
        key: Option<(u64, Option<u64>)>,
        vector: Option<&[f32]>,
    ) -> Result<(), StoreError> {
        match (key, vector) {
            (Some((key, old)), Some(v)) => {
                if let Some(ok) = old {
                    if let Some(ix) = self.vindex.as_mut() {
                        ix.remove(ok)?;
                    }
                }
                self.index.upsert_claim(c, Some(key));
                if let Some(ix) = self.vindex.as_mut() {
                    ix.add(key, v)?;
                }
            }
            _ => {
                let kept = self.index.key_of(&c.slug);
                self.index.upsert_claim(c, kept);
            }
        }
        self.note_act()
    }

    /// After a commit: a slug that left recall, out of the in-memory indexes (its vector
    /// under `key` too), counted as an act.
    pub(super) fn index_gone(&mut self, slug: &str, key: Option<u64>) -> Result<(), StoreError> {
        self.index.remove(slug);
        if let Some(k) = key {
            if let Some(ix) = self.vindex.as_mut() {
                ix.remove(k)?;
            }
        }
        self.note_act()
    }

    /// Erase a claim and every version of it: the live record, its history, its vector,
    /// and the slug and notes of the acts about it (the slug derives from the label, which
    /// may be what carried the secret). One act records the purge and keeps no content:
    /// its subject is a hash of the slug. Then the file is compacted, so the freed pages
    /// are released rather than kept.
    pub fn purge(&mut self, slug: &str, actor: &str) -> Result<PurgeReport, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        // A claim in the team's log: erasing this copy alone would leave the team's and
        // every other mirror's, and say it was erased. The team admin's purge reaches all.
        if let Some(key) = self.shared_slug(slug)? {
            // Refused, and turned into a request every member's `team status` lists.
            self.request_purge(slug)?;
            return Err(StoreError::SharedPurge {
                slug: slug.to_string(),
                store: key,
            });
        }
        self.erase(slug, actor)
    }

    /// Erase a slug's every version here, whatever the team holds (a tombstone's work).
    pub(super) fn erase(&mut self, slug: &str, actor: &str) -> Result<PurgeReport, StoreError> {
        let versions = self.history(slug)?;
        if versions.is_empty() {
            return Err(StoreError::NothingToPurge {
                slug: slug.to_string(),
            });
        }
        let subject = format!("purged:{}", &sha(slug)[..12]);
        let key = self.index.key_of(slug);
        let act = self.new_act(
            ActKind::Purge,
            &subject,
            actor,
            None,
            None,
            Some(format!("{} versions erased", versions.len())),
        );
        let mut acts_scrubbed = 0u64;
        let tx = self.db.begin_write()?;
        {
            tx.open_table(CLAIMS)?.remove(slug)?;
            tx.open_table(HISTORY)?
                .retain_in((slug, 0u64)..=(slug, u64::MAX), |_, _| false)?;
            if let Some(k) = key {
                tx.open_table(VECTORS)?.remove(k)?;
                tx.open_table(VEC_KEYS)?.remove(slug)?;
            }
            Store::forget_review(&tx, slug)?;
            let mut acts = tx.open_table(ACTS)?;
            let mut rewrite: Vec<Act> = Vec::new();
            for row in acts.iter()? {
                let (_, v) = row?;
                let a: Act =
                    serde_json::from_slice(v.value()).map_err(StoreError::corrupt("act record"))?;
                if a.subject == slug {
                    rewrite.push(a);
                }
            }
            for mut a in rewrite {
                a.subject = subject.clone();
                a.note = None;
                acts.insert(
                    a.seq,
                    serde_json::to_vec(&a)
                        .expect("an act serializes")
                        .as_slice(),
                )?;
                acts_scrubbed += 1;
            }
        }
        self.act(&tx, act)?;
        tx.commit()?;
        self.index.remove(slug);
        // A purge is never caught up (its act names no slug): snapshot it now. Should
        // that fail (a full disk), the next open rebuilds the index from redb.
        self.save_derived("claim-index snapshot", |s| s.save_claim_index());
        if let Some(k) = key {
            if let Some(ix) = self.vindex.as_mut() {
                ix.remove(k)?;
            }
            self.flush_index()?;
        }
        let compacted = match self.db.compact() {
            Ok(done) => done,
            Err(e) => {
                tracing::warn!(dir = %self.dir.display(), error = %e, "could not compact after a purge; freed pages are reused by later writes");
                false
            }
        };
        Ok(PurgeReport {
            subject,
            versions_erased: versions.len() as u64,
            acts_scrubbed,
            compacted,
        })
    }

    pub(super) fn require_live(&self, slug: &str) -> Result<Claim, StoreError> {
        self.get(slug)?.ok_or_else(|| StoreError::UnknownClaim {
            slug: slug.to_string(),
        })
    }

    /// Grade the live version; a recorded act.
    pub fn learn(
        &mut self,
        slug: &str,
        verdict: Verdict,
        actor: &str,
        note: Option<&str>,
    ) -> Result<Claim, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let mut c = self.require_live(slug)?;
        c.trust.record(verdict);
        let shared = SharedOp::Learn {
            slug: slug.to_string(),
            version: c.version_id(),
            verdict,
            note: note.map(str::to_string),
        };
        let note = Some(verdict.act_note(note));
        let act = self.new_act(
            ActKind::Learn,
            slug,
            actor,
            Some(c.content_hash.clone()),
            Some(c.content_hash.clone()),
            note,
        );
        let tx = self.db.begin_write()?;
        tx.open_table(CLAIMS)?.insert(slug, encode(&c).as_slice())?;
        self.act(&tx, act)?;
        self.queue_shared(&tx, shared)?;
        tx.commit()?;
        self.index.set_trust(&c.slug, c.trust.score());
        self.note_act()?;
        Ok(c)
    }

    /// Replace the live version's evidence anchors with fresh ones (the files as they
    /// are now), in place: the content is unchanged, so it is the same version; one
    /// `reanchor` act records it.
    pub fn reanchor(
        &mut self,
        slug: &str,
        anchors: Vec<crate::anchor::Anchor>,
        actor: &str,
    ) -> Result<Claim, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let mut c = self.require_live(slug)?;
        let note = Some(format!(
            "{} evidence file{} anchored",
            anchors.len(),
            if anchors.len() == 1 { "" } else { "s" }
        ));
        c.anchors = anchors;
        let act = self.new_act(
            ActKind::Reanchor,
            slug,
            actor,
            Some(c.content_hash.clone()),
            Some(c.content_hash.clone()),
            note,
        );
        let tx = self.db.begin_write()?;
        tx.open_table(CLAIMS)?.insert(slug, encode(&c).as_slice())?;
        self.act(&tx, act)?;
        tx.commit()?;
        self.note_act()?;
        Ok(c)
    }

    /// Move the live version to history (`demoted: <reason>`); no live version remains.
    pub fn demote(&mut self, slug: &str, actor: &str, reason: &str) -> Result<Claim, StoreError> {
        self.leave_recall(slug, actor, reason, ActKind::Demote, "demoted")
    }

    /// Retire the live version of `slug`: it leaves recall without a replacement and
    /// goes to history as `outdated` with the reason and who retired it, one recorded
    /// act. Nothing is erased (that is `purge`); the label may be memorized again, as a
    /// new version on the same chain.
    pub fn retire(&mut self, slug: &str, actor: &str, reason: &str) -> Result<Claim, StoreError> {
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(StoreError::Invalid(
                "a retirement needs a reason: say in one line why the claim no longer holds".into(),
            ));
        }
        if reason.contains('\n') {
            return Err(StoreError::Invalid(
                "the retirement reason must be one line".into(),
            ));
        }
        crate::claim::check_line("reason", reason)?;
        if reason.len() > crate::claim::MAX_SHORT_FIELD_BYTES {
            return Err(StoreError::Invalid(format!(
                "the retirement reason is {} bytes, over the limit of {}: shorten it",
                reason.len(),
                crate::claim::MAX_SHORT_FIELD_BYTES
            )));
        }
        self.leave_recall(slug, actor, reason, ActKind::Retire, "retired")
    }

    /// Demote the live version of each of `slugs`, every demotion its own recorded act,
    /// all in one transaction (an import's outdated versions: one commit, not one per
    /// slug), committed as `commit` says. Per slug: the demoted version, or why it could
    /// not be (not live, or already demoted earlier in the list). `Err` only when the
    /// transaction failed, and then nothing changed.
    pub fn demote_many(
        &mut self,
        slugs: &[String],
        actor: &str,
        reason: &str,
        commit: Commit,
    ) -> Result<Vec<Result<Claim, StoreError>>, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let mut tx = self.db.begin_write()?;
        if commit == Commit::WithNext {
            tx.set_durability(redb::Durability::None)
                .map_err(|e| StoreError::Storage(e.into()))?;
        }
        let mut results = Vec::with_capacity(slugs.len());
        let mut gone = Vec::new();
        for slug in slugs {
            // Read inside the transaction: a slug listed twice is no longer live.
            let live = super::read::live_in(&tx.open_table(CLAIMS)?, slug)?;
            let Some(live) = live else {
                results.push(Err(StoreError::UnknownClaim { slug: slug.clone() }));
                continue;
            };
            let (out, key) = self.leave_in(&tx, live, actor, reason, ActKind::Demote, "demoted")?;
            gone.push((out.slug.clone(), key));
            results.push(Ok(out));
        }
        tx.commit()?;
        for (slug, key) in gone {
            self.index_gone(&slug, key)?;
        }
        Ok(results)
    }

    /// Take the live version of `slug` out of recall with no replacement (a demotion or
    /// a retirement): history keeps it as `outdated`, `<how>: <reason>`, by `actor`.
    fn leave_recall(
        &mut self,
        slug: &str,
        actor: &str,
        reason: &str,
        kind: ActKind,
        how: &str,
    ) -> Result<Claim, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let live = self.require_live(slug)?;
        let tx = self.db.begin_write()?;
        let (out, key) = self.leave_in(&tx, live, actor, reason, kind, how)?;
        tx.commit()?;
        self.index_gone(slug, key)?;
        Ok(out)
    }

    /// Within `tx`: move `live` to history as outdated, drop its vector, record the act
    /// and queue the change for the team. Returns the outdated version and its vector key
    /// (for the derived indexes, once `tx` commits).
    pub(super) fn leave_in(
        &mut self,
        tx: &redb::WriteTransaction,
        live: Claim,
        actor: &str,
        reason: &str,
        kind: ActKind,
        how: &str,
    ) -> Result<(Claim, Option<u64>), StoreError> {
        let slug = live.slug.as_str();
        let now = self.now_ms();
        let mut out = live.clone();
        out.state = ClaimState::Outdated;
        out.outdated_reason = Some(format!("{how}: {}", reason.trim()));
        out.outdated_at = Some(now);
        out.outdated_by = Some(actor.to_string());
        let key = self.index.key_of(slug);
        let act = self.new_act(
            kind,
            slug,
            actor,
            Some(live.content_hash.clone()),
            None,
            Some(reason.trim().to_string()),
        );
        {
            tx.open_table(CLAIMS)?.remove(slug)?;
            tx.open_table(HISTORY)?
                .insert((slug, live.version), encode(&out).as_slice())?;
            if let Some(k) = key {
                tx.open_table(VECTORS)?.remove(k)?;
                tx.open_table(VEC_KEYS)?.remove(slug)?;
            }
        }
        self.act(tx, act)?;
        self.queue_shared(
            tx,
            SharedOp::Leave {
                slug: slug.to_string(),
                version: live.version_id(),
                how: how.to_string(),
                reason: reason.trim().to_string(),
                by: actor.to_string(),
            },
        )?;
        Ok((out, key))
    }

    /// Stamp the witness of a promotion: a new live version carrying `promoted_to`, the
    /// pre-promotion version kept in history.
    pub fn stamp_promoted_to(
        &mut self,
        slug: &str,
        stamp: &str,
        actor: &str,
    ) -> Result<Claim, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let live = self.require_live(slug)?;
        let mut now = self.now_ms();
        if now <= live.created {
            now = live.created + 1;
        }
        let mut new = live.clone();
        new.promoted_to = Some(stamp.to_string());
        new.created = now;
        new.supersedes = Some(live.version_id());
        new.version = live.version + 1;
        let act = self.new_act(
            ActKind::PromotedStamp,
            slug,
            actor,
            Some(live.content_hash.clone()),
            Some(live.content_hash.clone()),
            Some(stamp.to_string()),
        );
        // Same content, same vector: only the record and history change.
        self.write_version(&new, Some((&live, "promoted")), None, act)?;
        Ok(new)
    }
}
