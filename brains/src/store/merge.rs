//! Merging in the versions of another store of the same project (`brains merge`, two
//! brains of one repository that split before brains belonged to repositories): every
//! version kept, and a label both hold resolved as the usual supersession rules resolve
//! two writes in time order — the later is live when it is at least as strong, else the
//! stronger stays live; the other goes to history, never dropped.

use std::collections::HashSet;

use redb::ReadableTable;
use serde::Serialize;

use super::tables::{CLAIMS, HISTORY, META, VECTORS, VEC_KEYS};
use super::{embed_text, encode, to_bytes, Store};
use crate::claim::{ActKind, Claim, ClaimState};
use crate::error::StoreError;

/// A live version changed by a merge, for the in-memory indexes after the commit: the
/// claim, its new vector key (and the one it replaced) and vector, when it has a new one.
type LiveChange = (Claim, Option<(u64, Option<u64>)>, Option<Vec<f32>>);

/// What a merge did to the store merged into.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Merged {
    /// Labels merged in (each one act).
    pub labels: usize,
    /// Versions written, live or into history.
    pub versions: usize,
    /// Labels whose live version is now the other store's.
    pub live_from_other: usize,
    /// Versions this store already held (the same content born at the same time): not
    /// written again, so a second merge writes nothing.
    pub already_held: usize,
    /// Labels both stores held live: one stays live, the other is in history now.
    pub met: Vec<String>,
}

impl Store {
    /// Merge in `incoming`: for each label, every version the other store holds, oldest
    /// first (its live one last). One transaction; one `merge` act per label, by
    /// `actor`, naming `from`.
    pub fn merge_in(
        &mut self,
        incoming: Vec<Vec<Claim>>,
        actor: &str,
        from: &str,
    ) -> Result<Merged, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let now = self.now_ms();
        let mut done = Merged::default();
        // The live versions that change, for the in-memory indexes after the commit.
        let mut changes: Vec<LiveChange> = Vec::new();
        let mut acts = Vec::new();
        let tx = self.db.begin_write()?;
        {
            let mut claims = tx.open_table(CLAIMS)?;
            let mut hist = tx.open_table(HISTORY)?;
            let mut vt = tx.open_table(VECTORS)?;
            let mut vk = tx.open_table(VEC_KEYS)?;
            for versions in incoming {
                let Some(slug) = versions.first().map(|c| c.slug.clone()) else {
                    continue;
                };
                let mut here = Vec::new();
                for row in hist.range((slug.as_str(), 0u64)..=(slug.as_str(), u64::MAX))? {
                    here.push(super::decode(row?.1.value())?);
                }
                let live_here = super::read::live_in(&claims, &slug)?;
                here.extend(live_here.clone());
                let held: HashSet<(String, i64)> = here
                    .iter()
                    .map(|c| (c.content_hash.clone(), c.created))
                    .collect();
                let (new, old): (Vec<Claim>, Vec<Claim>) = versions
                    .into_iter()
                    .partition(|c| !held.contains(&(c.content_hash.clone(), c.created)));
                done.already_held += old.len();
                if new.is_empty() {
                    continue;
                }
                let incoming_live = new
                    .iter()
                    .find(|c| c.state == ClaimState::Authored)
                    .cloned();
                // The usual rules, in time order: the later write is live when it is at
                // least as strong; a weaker later write is kept in history.
                let wins = match (&live_here, &incoming_live) {
                    (_, None) => false,
                    (None, Some(_)) => true,
                    (Some(h), Some(l)) => {
                        done.met.push(slug.clone());
                        if l.created > h.created {
                            l.strength >= h.strength
                        } else {
                            h.strength < l.strength
                        }
                    }
                };
                let mut top = here.iter().map(|c| c.version).max().unwrap_or(0);
                let mut put = |c: Claim, reason: Option<String>, top: &mut u64| {
                    to_history(&mut hist, c, reason, top, now, actor)
                };
                let mut written = 0;
                for c in new.iter().filter(|c| c.state != ClaimState::Authored) {
                    put(c.clone(), None, &mut top)?;
                    written += 1;
                }
                let before = live_here.as_ref().map(|h| h.content_hash.clone());
                let mut after = before.clone();
                match (wins, incoming_live, live_here) {
                    (true, Some(mut l), h) => {
                        if let Some(h) = h {
                            let why =
                                format!("merged: {} from {from} is live instead", l.version_id());
                            put(h, Some(why), &mut top)?;
                        }
                        top += 1;
                        l.version = top;
                        after = Some(l.content_hash.clone());
                        let vector = match &self.opts.embedder {
                            Some(e) => e
                                .embed(&[embed_text(&l.label, &l.text).as_str()])
                                .map_err(|e| StoreError::Embedding(e.to_string()))?
                                .pop(),
                            None => None,
                        };
                        let old_key = vk.remove(slug.as_str())?.map(|k| k.value());
                        if let Some(k) = old_key {
                            vt.remove(k)?;
                        }
                        let key = match &vector {
                            Some(v) => {
                                let k = self.next_key;
                                self.next_key += 1;
                                vt.insert(k, to_bytes(v).as_slice())?;
                                vk.insert(slug.as_str(), k)?;
                                Some((k, old_key))
                            }
                            None => None,
                        };
                        claims.insert(slug.as_str(), encode(&l).as_slice())?;
                        changes.push((l, key, vector));
                        done.live_from_other += 1;
                        written += 1;
                    }
                    (false, Some(l), h) => {
                        let why = match &h {
                            Some(h) => format!(
                                "merged: live in {from}, and {} here stays live",
                                h.version_id()
                            ),
                            None => format!("merged: live in {from}"),
                        };
                        put(l, Some(why), &mut top)?;
                        written += 1;
                        stays_newest(&mut claims, h, &mut top, &mut changes)?;
                    }
                    (_, None, h) => stays_newest(&mut claims, h, &mut top, &mut changes)?,
                }
                done.versions += written;
                done.labels += 1;
                acts.push((slug, before, after, written));
            }
            tx.open_table(META)?
                .insert("next_key", self.next_key.to_string().as_str())?;
        }
        let acts: Vec<_> = acts
            .into_iter()
            .map(|(slug, before, after, n)| {
                let note = format!("{n} version(s) merged in from {from}");
                self.new_act(ActKind::Merge, &slug, actor, before, after, Some(note))
            })
            .collect();
        // Acts that changed no live version count towards the next checkpoint here; the
        // others as their live version is indexed.
        let quiet = acts.len().saturating_sub(changes.len());
        self.record_acts(&tx, acts)?;
        tx.commit()?;
        for (c, key, vector) in changes {
            self.index_live(&c, key, vector.as_deref())?;
        }
        self.note_acts(quiet, super::SAVE_SHARE)?;
        Ok(done)
    }
}

/// The live version that stays live keeps the highest version number of its label, as
/// after any write: renumbered past the versions just put into history.
fn stays_newest(
    claims: &mut redb::Table<&'static str, &'static [u8]>,
    live: Option<Claim>,
    top: &mut u64,
    changes: &mut Vec<LiveChange>,
) -> Result<(), StoreError> {
    let Some(mut h) = live else {
        return Ok(());
    };
    if h.version > *top {
        return Ok(());
    }
    *top += 1;
    h.version = *top;
    let slug = h.slug.clone();
    claims.insert(slug.as_str(), encode(&h).as_slice())?;
    // Same content, same vector: the claim index keeps its key.
    changes.push((h, None, None));
    Ok(())
}

/// Put a version into history under the next version number, outdated now by `actor` if
/// it was live, with `reason` when one is given.
fn to_history(
    hist: &mut redb::Table<(&'static str, u64), &'static [u8]>,
    mut c: Claim,
    reason: Option<String>,
    top: &mut u64,
    now: i64,
    actor: &str,
) -> Result<(), StoreError> {
    *top += 1;
    c.version = *top;
    if c.state == ClaimState::Authored {
        c.state = ClaimState::Outdated;
        c.outdated_at = Some(now);
        c.outdated_by = Some(actor.to_string());
    }
    if let Some(r) = reason {
        c.outdated_reason = Some(r);
    }
    let slug = c.slug.clone();
    hist.insert((slug.as_str(), c.version), encode(&c).as_slice())?;
    Ok(())
}
