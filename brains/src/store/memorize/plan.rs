//! Planning one memorize before anything is written: validation, the live version (or
//! the newest in history) it continues, and the refusals (label collision,
//! would-downgrade) or the `unchanged` no-op; the new version built; its outcome.

use std::collections::HashMap;

use crate::claim::{content_hash, ActKind, Claim, ClaimState, MemorizeInput, MemorizeOutcome};
use crate::error::StoreError;
use crate::store::ahead::Derivation;
use crate::store::Store;

/// The tables a batch's plan reads, from one read transaction.
pub(super) struct Seen {
    pub(super) claims: redb::ReadOnlyTable<&'static str, &'static [u8]>,
    pub(super) history: redb::ReadOnlyTable<(&'static str, u64), &'static [u8]>,
}

impl Seen {
    fn live(&self, slug: &str) -> Result<Option<Claim>, StoreError> {
        crate::store::read::live_in(&self.claims, slug)
    }

    /// The newest version of `slug` in history (demoted or retired), if any.
    fn newest_outdated(&self, slug: &str) -> Result<Option<Claim>, StoreError> {
        match self
            .history
            .range((slug, 0u64)..=(slug, u64::MAX))?
            .next_back()
        {
            Some(row) => Ok(Some(crate::store::decode(row?.1.value())?)),
            None => Ok(None),
        }
    }
}

/// What memorizing one input would do.
pub(super) enum Plan {
    Write(Box<Planned>),
    Unchanged(Box<Claim>),
    Refused(StoreError),
}

/// A planned write: the new version and the live version it replaces, and its vector
/// and terms when they came worked out ahead and fit it.
pub(super) struct Planned {
    pub(super) claim: Claim,
    pub(super) live: Option<Claim>,
    pub(super) kind: ActKind,
    pub(super) actor: String,
    pub(super) ahead: Option<Derivation>,
}

impl Store {
    /// What memorizing `input` would do, given the versions `written` earlier in the
    /// batch (each slug's last, by its place in `plans`); `Err` only when redb fails. A
    /// write keeps `ahead` when it fits the claim written.
    pub(super) fn plan(
        &self,
        mut input: MemorizeInput,
        ahead: Option<Derivation>,
        written: &HashMap<String, usize>,
        plans: &[Planned],
        seen: &Seen,
    ) -> Result<Plan, StoreError> {
        let slug = match input.validate() {
            Ok(slug) => slug,
            Err(e) => return Ok(Plan::Refused(e)),
        };
        let hash = content_hash(&input.label, &input.text, input.strength, &input.evidence);
        let live = match written.get(&slug) {
            Some(&i) => Some(plans[i].claim.clone()),
            None => seen.live(&slug)?,
        };
        // Labels are identities: a different label that happens to derive the same slug
        // is another claim, never a supersession of this one.
        // With no live version, the newest in history (demoted or retired) is the one
        // a new version continues: its label holds the slug, its number and id carry the
        // chain on, so history never reuses a version number.
        let previous = match &live {
            Some(l) => Some(l.clone()),
            None => seen.newest_outdated(&slug)?,
        };
        let holder = previous.as_ref().map(|c| c.label.clone());
        if let Some(existing) = holder.filter(|h| !crate::claim::same_label(h, &input.label)) {
            return Ok(Plan::Refused(StoreError::LabelCollision {
                slug,
                existing,
                attempted: input.label,
            }));
        }
        if let Some(l) = &live {
            if l.content_hash == hash {
                return Ok(Plan::Unchanged(Box::new(l.clone())));
            }
            // An import replays versions a legacy store already accepted, oldest first;
            // its own gate ran when they were written.
            if input.strength < l.strength && input.act != Some(ActKind::Import) {
                return Ok(Plan::Refused(StoreError::WouldDowngrade {
                    slug,
                    live: l.strength,
                    attempted: input.strength,
                }));
            }
        }
        let mut created = input.created.unwrap_or_else(|| self.now_ms());
        if let Some(p) = &previous {
            if created <= p.created && input.created.is_none() {
                created = p.created + 1;
            }
        }
        let kind = input.act.unwrap_or(if live.is_some() {
            ActKind::Supersede
        } else {
            ActKind::Memorize
        });
        let actor = input
            .acted_by
            .clone()
            .or_else(|| input.promoted_by.clone())
            .unwrap_or_else(|| input.source_agent.clone());
        let claim = Claim {
            slug,
            state: ClaimState::Authored,
            created,
            supersedes: previous.as_ref().map(Claim::version_id),
            trust: Default::default(),
            content_hash: hash,
            version: previous.as_ref().map(|p| p.version + 1).unwrap_or(1),
            promoted_to: None,
            outdated_reason: None,
            outdated_at: None,
            outdated_by: None,
            anchors: input.anchors,
            member: self.share.as_ref().map(|s| s.member.clone()),
            conflict: None,
            races: Vec::new(),
            label: input.label,
            text: input.text,
            source_agent: input.source_agent,
            origin_brain: input.origin_brain,
            strength: input.strength,
            evidence: input.evidence,
            origin_claim: input.origin_claim,
            promoted_by: input.promoted_by,
            promotion_reason: input.promotion_reason,
            origin_created: input.origin_created,
            origin_agent: input.origin_agent,
            written_from: input.written_from,
            session: input.session,
        };
        let writer = self.write_embedder();
        let model = writer.as_deref().map(|e| (e.id(), e.dims()));
        let ahead = ahead.filter(|d| d.fits(model, &claim.label, &claim.text));
        Ok(Plan::Write(Box::new(Planned {
            claim,
            live,
            kind,
            actor,
            ahead,
        })))
    }
}

/// What memorize reports for a planned write once committed.
pub(super) fn outcome(p: Planned) -> MemorizeOutcome {
    match p.live {
        Some(mut previous) => {
            previous.state = ClaimState::Outdated;
            previous.outdated_reason = Some("superseded".into());
            MemorizeOutcome::Superseded {
                claim: p.claim,
                previous: Box::new(previous),
            }
        }
        None => MemorizeOutcome::Created { claim: p.claim },
    }
}
