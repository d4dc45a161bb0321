//! Joining claims that say the same thing (SPEC §14, tending), and undoing a join. A
//! join is one transaction: each joined label's live version goes to history,
//! `consolidated: into <slug>`, by who joined it, its evidence and provenance kept there,
//! one `consolidate` act per label; the surviving label is untouched. Nothing is erased.
//! Undoing brings a joined label back live: a new version on its chain with the content
//! of its last one, one `revive` act.

use super::tables::CLAIMS;
use super::Store;
use crate::claim::{ActKind, Claim, ClaimState, MemorizeInput, MemorizeOutcome};
use crate::error::StoreError;

impl Store {
    /// Join every label of `joined` into `survivor` (both live); one transaction, so a
    /// join is whole or not at all. The joined labels' outdated versions, in order.
    pub fn consolidate(
        &mut self,
        survivor: &str,
        joined: &[String],
        actor: &str,
    ) -> Result<Vec<Claim>, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        self.require_live(survivor)?;
        let mut slugs: Vec<&String> = joined.iter().filter(|s| s.as_str() != survivor).collect();
        slugs.sort();
        slugs.dedup();
        // Every one live before anything is written.
        for s in &slugs {
            self.require_live(s)?;
        }
        self.write_joins(vec![(survivor, slugs)], actor)
    }

    /// Several joins in one transaction (a tending pass's, a batch at a time): each
    /// `(survivor, joined)` as [`Store::consolidate`]. A join whose labels are not all
    /// live (changed since the pass read them) is left out, whole; the others are
    /// written. The joined labels' outdated versions, in order.
    pub fn consolidate_many(
        &mut self,
        joins: &[(String, Vec<String>)],
        actor: &str,
    ) -> Result<Vec<Claim>, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let mut taken: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let mut plan: Vec<(&str, Vec<&String>)> = Vec::new();
        for (survivor, joined) in joins {
            let mut slugs: Vec<&String> = joined.iter().filter(|s| *s != survivor).collect();
            slugs.sort();
            slugs.dedup();
            let all_live = std::iter::once(survivor)
                .chain(slugs.iter().copied())
                .all(|s| self.index.doc(s).is_some() && !taken.contains(s.as_str()));
            if !all_live || slugs.is_empty() {
                continue;
            }
            taken.insert(survivor);
            taken.extend(slugs.iter().map(|s| s.as_str()));
            plan.push((survivor, slugs));
        }
        if plan.is_empty() {
            return Ok(Vec::new());
        }
        self.write_joins(plan, actor)
    }

    /// Write `plan` (each survivor with the labels joined into it, all checked live) in
    /// one transaction: each joined label's live version to history, `consolidated: into
    /// <survivor>`, one act each. The outdated versions, in order.
    fn write_joins(
        &mut self,
        plan: Vec<(&str, Vec<&String>)>,
        actor: &str,
    ) -> Result<Vec<Claim>, StoreError> {
        let tx = self.db.begin_write()?;
        let mut out = Vec::new();
        let mut gone = Vec::new();
        for (survivor, slugs) in plan {
            let reason = format!("into {survivor}");
            for slug in slugs {
                let live = super::read::live_in(&tx.open_table(CLAIMS)?, slug)?
                    .ok_or_else(|| StoreError::UnknownClaim { slug: slug.clone() })?;
                let (c, key) = self.leave_in(
                    &tx,
                    live,
                    actor,
                    &reason,
                    ActKind::Consolidate,
                    "consolidated",
                )?;
                gone.push((c.slug.clone(), key));
                out.push(c);
            }
        }
        tx.commit()?;
        for (slug, key) in gone {
            self.index_gone(&slug, key)?;
        }
        Ok(out)
    }

    /// The labels joined into `survivor` and not live since: what undoing that join
    /// brings back. Read from the act log (each join is an act naming its survivor).
    pub fn consolidated_into(&self, survivor: &str) -> Result<Vec<String>, StoreError> {
        let note = format!("into {survivor}");
        let mut out: Vec<String> = Vec::new();
        let mut before = u64::MAX;
        loop {
            let page = self.acts_before(before, 4096)?;
            let Some(last) = page.last() else { break };
            before = last.seq;
            for a in &page {
                if a.kind == ActKind::Consolidate
                    && a.note.as_deref() == Some(note.as_str())
                    && !out.contains(&a.subject)
                    && self.get(&a.subject)?.is_none()
                {
                    out.push(a.subject.clone());
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Bring `slug` back live: a new version on its chain with the content of its last
    /// outdated one, written by `actor` (a `revive` act). Refused when it is live.
    pub fn revive(&mut self, slug: &str, actor: &str) -> Result<Claim, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let versions = self.history(slug)?;
        let Some(last) = versions.last() else {
            return Err(StoreError::UnknownClaim {
                slug: slug.to_string(),
            });
        };
        if last.state == ClaimState::Authored {
            return Err(StoreError::Invalid(format!(
                "{slug} is live: nothing to bring back"
            )));
        }
        let input = MemorizeInput {
            label: last.label.clone(),
            text: last.text.clone(),
            source_agent: last.source_agent.clone(),
            strength: last.strength,
            evidence: last.evidence.clone(),
            origin_brain: last.origin_brain.clone(),
            anchors: last.anchors.clone(),
            written_from: last.written_from.clone(),
            session: last.session.clone(),
            act: Some(ActKind::Revive),
            acted_by: Some(actor.to_string()),
            ..MemorizeInput::default()
        };
        match self.memorize(input)? {
            MemorizeOutcome::Created { claim } | MemorizeOutcome::Superseded { claim, .. } => {
                Ok(claim)
            }
            other => Err(StoreError::Invalid(format!(
                "{slug} could not be brought back: {other:?}"
            ))),
        }
    }
}
