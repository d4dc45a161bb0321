//! Review (SPEC §14): a claim an agent wrote is unreviewed until a person has looked at
//! it. A person's mark is kept per slug with the version it was given to (a later
//! version, by an agent, is unreviewed again), in its own table; a claim a person wrote
//! (`human:…`) needs none. Which claims are unreviewed is read from the claim index's
//! metadata (author and birth of every live claim, in memory) and the marks, so counting
//! them reads no claim record.

use std::collections::HashMap;

use redb::{ReadableDatabase, ReadableTable};
use serde::{Deserialize, Serialize};

use super::tables::{CLAIMS, REVIEWED};
use super::{decode, Store};
use crate::claim::{ActKind, Claim};
use crate::error::StoreError;

/// A person's look at a claim's version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewMark {
    /// The version looked at (its birth time).
    pub created: i64,
    pub by: String,
    pub at: i64,
}

/// Is this author a person?
pub fn by_person(agent: &str) -> bool {
    agent.starts_with("human:")
}

impl Store {
    /// Every mark, by slug; none for a store that was never reviewed.
    fn marks(&self) -> Result<HashMap<String, ReviewMark>, StoreError> {
        let rx = self.db.begin_read()?;
        let table = match rx.open_table(REVIEWED) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(HashMap::new()),
            Err(e) => return Err(e.into()),
        };
        let mut out = HashMap::new();
        for row in table.iter()? {
            let (k, v) = row?;
            let mark: ReviewMark =
                serde_json::from_slice(v.value()).map_err(StoreError::corrupt("review mark"))?;
            out.insert(k.value().to_string(), mark);
        }
        Ok(out)
    }

    /// The live claims an agent wrote that no person has looked at (the live version),
    /// newest first: `(slug, created)`.
    fn unreviewed_order(&self) -> Result<Vec<(i64, String)>, StoreError> {
        let marks = self.marks()?;
        let ix = &self.index;
        let mut v: Vec<(i64, String)> = ix
            .docs()
            .filter_map(|d| {
                let m = ix.meta(d)?;
                let slug = ix.slug(d);
                let seen = marks.get(slug).is_some_and(|r| r.created == m.created);
                (!by_person(m.source_agent) && !seen).then(|| (m.created, slug.to_string()))
            })
            .collect();
        v.sort_by(|a, b| b.cmp(a));
        Ok(v)
    }

    /// Every live claim's slug and birth (of its live version), from the index's
    /// metadata (no claim record read): what tending goes over for claims aged out.
    pub fn live_births(&self) -> Vec<(String, i64)> {
        let ix = &self.index;
        ix.docs()
            .filter_map(|d| Some((ix.slug(d).to_string(), ix.meta(d)?.created)))
            .collect()
    }

    /// How many live claims an agent wrote that no person has looked at.
    pub fn unreviewed_count(&self) -> Result<usize, StoreError> {
        Ok(self.unreviewed_order()?.len())
    }

    /// One page of the claims no person has looked at, newest first, and how many there
    /// are in all.
    pub fn unreviewed(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<(usize, Vec<Claim>), StoreError> {
        let order = self.unreviewed_order()?;
        let rx = self.db.begin_read()?;
        let claims = rx.open_table(CLAIMS)?;
        let mut page = Vec::new();
        for (_, slug) in order.iter().skip(offset).take(limit) {
            if let Some(v) = claims.get(slug.as_str())? {
                page.push(decode(v.value())?);
            }
        }
        Ok((order.len(), page))
    }

    /// Of `slugs`, those whose live version a person wrote or has looked at.
    pub fn by_person_or_reviewed(
        &self,
        slugs: &[String],
    ) -> Result<std::collections::HashSet<String>, StoreError> {
        let marks = self.marks()?;
        let mut out = std::collections::HashSet::new();
        for slug in slugs {
            let Some(live) = self.get(slug)? else {
                continue;
            };
            if by_person(&live.source_agent)
                || marks.get(slug).is_some_and(|m| m.created == live.created)
            {
                out.insert(live.slug);
            }
        }
        Ok(out)
    }

    /// Has a person looked at the live version of `slug`?
    pub fn is_reviewed(&self, slug: &str) -> Result<bool, StoreError> {
        let Some(live) = self.get(slug)? else {
            return Ok(false);
        };
        Ok(by_person(&live.source_agent)
            || self
                .marks()?
                .get(slug)
                .is_some_and(|m| m.created == live.created))
    }

    /// A person keeps the live version of `slug` as it is: marked reviewed, one `review`
    /// act by `actor` (a `human:` identity).
    pub fn mark_reviewed(&mut self, slug: &str, actor: &str) -> Result<Claim, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        if !by_person(actor) {
            return Err(StoreError::Invalid(format!(
                "a review is a person's: {actor} is not a `human:` identity"
            )));
        }
        let live = self.require_live(slug)?;
        let mark = ReviewMark {
            created: live.created,
            by: actor.to_string(),
            at: self.now_ms(),
        };
        let act = self.new_act(
            ActKind::Review,
            slug,
            actor,
            Some(live.content_hash.clone()),
            Some(live.content_hash.clone()),
            Some("kept as it is".into()),
        );
        let tx = self.db.begin_write()?;
        tx.open_table(REVIEWED)?.insert(
            slug,
            serde_json::to_vec(&mark)
                .expect("a review mark serializes")
                .as_slice(),
        )?;
        self.act(&tx, act)?;
        tx.commit()?;
        self.note_act()?;
        Ok(live)
    }

    /// Forget the marks of `slug` (its claim erased).
    pub(super) fn forget_review(tx: &redb::WriteTransaction, slug: &str) -> Result<(), StoreError> {
        match tx.open_table(REVIEWED) {
            Ok(mut t) => {
                t.remove(slug)?;
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }
}
