//! Reads of claims: the live version, history, listings.

use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata};

use super::tables::{CLAIMS, HISTORY};
use super::{decode, Store};
use crate::claim::Claim;
use crate::error::StoreError;
use crate::index::DocId;

impl Store {
    /// The live version of a slug.
    pub fn get(&self, slug: &str) -> Result<Option<Claim>, StoreError> {
        let rx = self.db.begin_read()?;
        live_in(&rx.open_table(CLAIMS)?, slug)
    }

    /// Every version of a slug, oldest first; the live one last.
    pub fn history(&self, slug: &str) -> Result<Vec<Claim>, StoreError> {
        let rx = self.db.begin_read()?;
        versions(&rx.open_table(HISTORY)?, &rx.open_table(CLAIMS)?, slug)
    }

    /// [`Store::history`] of each of `slugs`, in order, all from one read transaction (a
    /// bulk import asks for thousands at once).
    pub fn histories(&self, slugs: &[String]) -> Result<Vec<Vec<Claim>>, StoreError> {
        let rx = self.db.begin_read()?;
        let (hist, live) = (rx.open_table(HISTORY)?, rx.open_table(CLAIMS)?);
        slugs.iter().map(|s| versions(&hist, &live, s)).collect()
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

    /// The `n` most recent live claims, newest first. Chosen from the in-memory claim
    /// index (no claim is decoded but the `n`); a slug the index names that redb no
    /// longer holds live falls back to a full scan, so the answer is always redb's.
    pub fn recent(&self, n: usize) -> Result<Vec<Claim>, StoreError> {
        self.recent_where(n, &|_| true, &|_| true)
    }

    /// [`Store::recent`] among the claims `admit` lets through (`admit_claim` says the
    /// same of a claim read whole, for the full scan).
    pub(super) fn recent_where(
        &self,
        n: usize,
        admit: &dyn Fn(DocId) -> bool,
        admit_claim: &dyn Fn(&Claim) -> bool,
    ) -> Result<Vec<Claim>, StoreError> {
        let ix = &self.index;
        let mut order: Vec<(i64, &str)> = ix
            .docs()
            .filter(|d| admit(*d))
            .filter_map(|d| Some((ix.meta(d)?.created, ix.slug(d))))
            .collect();
        let newest_first =
            |a: &(i64, &str), b: &(i64, &str)| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1));
        if order.len() > n && n > 0 {
            order.select_nth_unstable_by(n - 1, newest_first);
            order.truncate(n);
        }
        order.sort_by(newest_first);
        order.truncate(n);
        let rx = self.db.begin_read()?;
        let t = rx.open_table(CLAIMS)?;
        let mut out = Vec::with_capacity(order.len());
        for (_, slug) in order {
            match t.get(slug)? {
                Some(v) => out.push(decode(v.value())?),
                None => return self.recent_by_scan(n, admit_claim),
            }
        }
        let all_admitted = ix.docs().all(admit);
        if out.len() < n && all_admitted && (t.len()? as usize) > out.len() {
            return self.recent_by_scan(n, admit_claim);
        }
        Ok(out)
    }

    fn recent_by_scan(
        &self,
        n: usize,
        admit: &dyn Fn(&Claim) -> bool,
    ) -> Result<Vec<Claim>, StoreError> {
        let mut all = self.live_claims()?;
        all.retain(|c| admit(c));
        all.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.slug.cmp(&b.slug)));
        all.truncate(n);
        Ok(all)
    }
}

impl Store {
    /// Every version the store holds, grouped by slug (history oldest first, then the
    /// live one): what `brains merge` carries into another store.
    pub fn every_version(&self) -> Result<Vec<Vec<Claim>>, StoreError> {
        let rx = self.db.begin_read()?;
        let (hist, live) = (rx.open_table(HISTORY)?, rx.open_table(CLAIMS)?);
        let mut slugs: Vec<String> = Vec::new();
        for row in hist.iter()? {
            let (k, _) = row?;
            let slug = k.value().0;
            if slugs.last().map(String::as_str) != Some(slug) {
                slugs.push(slug.to_string());
            }
        }
        for row in live.iter()? {
            slugs.push(row?.0.value().to_string());
        }
        slugs.sort();
        slugs.dedup();
        slugs.iter().map(|s| versions(&hist, &live, s)).collect()
    }
}

/// A slug's versions in history, oldest first, then its live one.
fn versions(
    hist: &impl ReadableTable<(&'static str, u64), &'static [u8]>,
    live: &impl ReadableTable<&'static str, &'static [u8]>,
    slug: &str,
) -> Result<Vec<Claim>, StoreError> {
    let mut out = Vec::new();
    for row in hist.range((slug, 0u64)..=(slug, u64::MAX))? {
        let (_, v) = row?;
        out.push(decode(v.value())?);
    }
    out.extend(live_in(live, slug)?);
    Ok(out)
}

/// The live version of `slug` in a claims table of any transaction.
pub(super) fn live_in(
    claims: &impl ReadableTable<&'static str, &'static [u8]>,
    slug: &str,
) -> Result<Option<Claim>, StoreError> {
    claims.get(slug)?.map(|v| decode(v.value())).transpose()
}
