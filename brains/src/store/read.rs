//! Reads of claims: the live version, history, listings.

use redb::{ReadableDatabase, ReadableTable};

use super::tables::{CLAIMS, HISTORY};
use super::{decode, Store};
use crate::claim::Claim;
use crate::error::StoreError;

impl Store {
    /// The live version of a slug.
    pub fn get(&self, slug: &str) -> Result<Option<Claim>, StoreError> {
        let rx = self.db.begin_read()?;
        let t = rx.open_table(CLAIMS)?;
        let v = t.get(slug)?;
        v.map(|v| decode(v.value())).transpose()
    }

    /// Every version of a slug, oldest first; the live one last.
    pub fn history(&self, slug: &str) -> Result<Vec<Claim>, StoreError> {
        let rx = self.db.begin_read()?;
        let hist = rx.open_table(HISTORY)?;
        let mut out = Vec::new();
        for row in hist.range((slug, 0u64)..=(slug, u64::MAX))? {
            let (_, v) = row?;
            out.push(decode(v.value())?);
        }
        if let Some(v) = rx.open_table(CLAIMS)?.get(slug)? {
            out.push(decode(v.value())?);
        }
        Ok(out)
    }

    /// The newest version of a slug in history, if any.
    pub(super) fn newest_outdated(&self, slug: &str) -> Result<Option<Claim>, StoreError> {
        let rx = self.db.begin_read()?;
        let hist = rx.open_table(HISTORY)?;
        let last = hist.range((slug, 0u64)..=(slug, u64::MAX))?.next_back();
        match last {
            Some(row) => Ok(Some(decode(row?.1.value())?)),
            None => Ok(None),
        }
    }

    pub fn live_claims(&self) -> Result<Vec<Claim>, StoreError> {
        let rx = self.db.begin_read()?;
        let mut out = Vec::new();
        for row in rx.open_table(CLAIMS)?.iter()? {
            let (_, v) = row?;
            out.push(decode(v.value())?);
        }
        Ok(out)
    }

    /// The `n` most recent live claims, newest first.
    pub fn recent(&self, n: usize) -> Result<Vec<Claim>, StoreError> {
        let mut all = self.live_claims()?;
        all.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.slug.cmp(&b.slug)));
        all.truncate(n);
        Ok(all)
    }
}
