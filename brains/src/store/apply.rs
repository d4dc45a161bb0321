//! Applying the team's log to a shared store's mirror (SPEC §13): entries in log order,
//! each run of acts in one transaction with the cursor it reaches; versions (with
//! concurrent supersessions kept as conflicts), verdicts and leaves (racing ones kept as
//! races, `race.rs`), race announcements, and tombstones that purge what erased acts wrote.

use std::collections::HashMap;

use redb::{ReadableDatabase, ReadableTable};

use super::race;
use super::share::{Applied, Cursor, Entry, Incoming, SharedAct, SharedOp};
use super::tables::{
    CLAIMS, HISTORY, META, TEAM_PENDING, TEAM_REQUESTS, TEAM_SEEN, TEAM_SLUGS, VECTORS, VEC_KEYS,
};
use super::{embed_text, encode, to_bytes, Store};
use crate::claim::{ActKind, Claim, ClaimState, Conflict, Race};
use crate::error::StoreError;

/// A change to the in-memory indexes, made after the commit.
enum IndexChange {
    Upsert {
        claim: Box<Claim>,
        key: Option<(u64, Option<u64>)>,
        vector: Option<Vec<f32>>,
    },
    Remove {
        slug: String,
        key: Option<u64>,
    },
}

impl Store {
    /// Apply entries of the team's log, in log order; each run of acts in one
    /// transaction with the cursor it reaches, so an entry is applied exactly once
    /// whatever stops the owner. A tombstone purges what its acts wrote.
    pub fn apply_team(&mut self, batch: Vec<Incoming>) -> Result<Applied, StoreError> {
        let mut done = Applied::default();
        let mut run: Vec<Incoming> = Vec::new();
        for inc in batch {
            if let Entry::Tombstone { targets, slugs } = &inc.entry {
                let (targets, slugs) = (targets.clone(), slugs.clone());
                let at = inc.cursor;
                self.apply_run(std::mem::take(&mut run), &mut done)?;
                done.purged += self.apply_tombstone(&targets, slugs, at)?;
                continue;
            }
            run.push(inc);
        }
        self.apply_run(run, &mut done)?;
        Ok(done)
    }

    fn apply_tombstone(
        &mut self,
        targets: &[String],
        mut slugs: Vec<String>,
        at: Cursor,
    ) -> Result<u64, StoreError> {
        // An older tombstone names hashes alone: the legacy per-act table says their slugs.
        {
            let rx = self.db.begin_read()?;
            match rx.open_table(TEAM_SEEN) {
                Ok(seen) => {
                    for h in targets {
                        if let Some(s) = seen.get(h.as_str())? {
                            slugs.push(s.value().to_string());
                        }
                    }
                }
                Err(redb::TableError::TableDoesNotExist(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        slugs.sort();
        slugs.dedup();
        let mut n = 0;
        for slug in &slugs {
            match self.erase(slug, "team:admin") {
                Ok(_) => n += 1,
                Err(StoreError::NothingToPurge { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        let tx = self.db.begin_write()?;
        {
            let mut seen = tx.open_table(TEAM_SEEN)?;
            let mut pending = tx.open_table(TEAM_PENDING)?;
            let mut shared = tx.open_table(TEAM_SLUGS)?;
            let mut requests = tx.open_table(TEAM_REQUESTS)?;
            for h in targets {
                seen.remove(h.as_str())?;
                pending.remove(h.as_str())?;
            }
            for s in &slugs {
                shared.remove(s.as_str())?;
                requests.remove(s.as_str())?;
            }
            tx.open_table(META)?
                .insert("team_cursor", at.text().as_str())?;
        }
        tx.commit()?;
        Ok(n)
    }

    /// Apply a run of log entries (no tombstone among them) in one transaction.
    fn apply_run(&mut self, run: Vec<Incoming>, done: &mut Applied) -> Result<(), StoreError> {
        let Some(last) = run.last().map(|i| i.cursor) else {
            return Ok(());
        };
        // The vectors of every version that arrives, in one embedder call.
        let writes: Vec<&Claim> = run
            .iter()
            .filter_map(|i| match &i.entry {
                Entry::Act(SharedAct {
                    op: SharedOp::Write { claim },
                    ..
                }) => Some(claim.as_ref()),
                _ => None,
            })
            .collect();
        let mut vectors: HashMap<String, Vec<f32>> = HashMap::new();
        if let Some(e) = &self.opts.embedder {
            if !writes.is_empty() {
                let texts: Vec<String> = writes
                    .iter()
                    .map(|c| embed_text(&c.label, &c.text))
                    .collect();
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                let vs = e
                    .embed(&refs)
                    .map_err(|e| StoreError::Embedding(e.to_string()))?;
                for (c, v) in writes.iter().zip(vs) {
                    vectors.insert(c.version_id(), v);
                }
            }
        }
        let mut changes: Vec<IndexChange> = Vec::new();
        let mut acts = Vec::new();
        let me = self
            .share
            .as_ref()
            .map(|s| s.member.clone())
            .unwrap_or_default();
        let mut announce: Vec<SharedOp> = Vec::new();
        let tx = self.db.begin_write()?;
        {
            let mut claims = tx.open_table(CLAIMS)?;
            let mut hist = tx.open_table(HISTORY)?;
            let mut vt = tx.open_table(VECTORS)?;
            let mut vk = tx.open_table(VEC_KEYS)?;
            let mut pending = tx.open_table(TEAM_PENDING)?;
            let mut shared = tx.open_table(TEAM_SLUGS)?;
            let mut requests = tx.open_table(TEAM_REQUESTS)?;
            // Versions still waiting to be sent from here: later in the log than anything
            // arriving now; and verdicts and leaves made here, as racing as they.
            let (mut waiting, own_acts) = race::waiting(&pending)?;
            for inc in run {
                if let Some(version) = pending.remove(inc.hash.as_str())? {
                    // Our own act, seen back: applied here when it was written, and from
                    // now on earlier in the log than anything still to come.
                    waiting.remove(version.value());
                    done.echoes += 1;
                    continue;
                }
                // No per-act record: the cursor, committed with this run, is what says
                // an entry was applied (the log holds each hash once).
                let act = match inc.entry {
                    Entry::Act(a) => a,
                    Entry::Erased | Entry::Tombstone { .. } => continue,
                };
                shared.insert(act.op.slug(), ())?;
                let actor = format!("team:{}", inc.member);
                match act.op {
                    SharedOp::Write { claim } => {
                        let mut new = *claim;
                        new.member = Some(inc.member.clone());
                        new.conflict = None;
                        new.state = ClaimState::Authored;
                        let slug = new.slug.clone();
                        let live = match claims.get(slug.as_str())? {
                            Some(v) => Some(super::decode(v.value())?),
                            None => None,
                        };
                        let newest = hist
                            .range((slug.as_str(), 0u64)..=(slug.as_str(), u64::MAX))?
                            .next_back()
                            .transpose()?
                            .map(|(k, _)| k.value().1)
                            .unwrap_or(0);
                        let top = newest.max(live.as_ref().map_or(0, |l| l.version));
                        if live.as_ref().map(Claim::version_id) == Some(new.version_id()) {
                            continue;
                        }
                        new.version = top + 1;
                        let (kind, before) = match live {
                            None => (ActKind::Memorize, None),
                            Some(l) if new.supersedes.as_deref() == Some(&l.version_id()) => {
                                let mut out = l.clone();
                                out.state = ClaimState::Outdated;
                                out.outdated_reason = Some("superseded".into());
                                out.outdated_at = Some(act.at);
                                hist.insert((slug.as_str(), l.version), encode(&out).as_slice())?;
                                (ActKind::Supersede, Some(l.content_hash))
                            }
                            Some(mut l) => {
                                done.conflicts += 1;
                                let mine_waits = waiting.contains(&l.version_id());
                                let l_member = l.member.clone().unwrap_or_else(|| "unknown".into());
                                if mine_waits {
                                    // Ours is later in the log: the arrival goes to history.
                                    new.state = ClaimState::Outdated;
                                    new.outdated_reason = Some(format!(
                                        "conflict: {l_member} superseded the same version"
                                    ));
                                    new.outdated_at = Some(act.at);
                                    new.conflict = Some(Conflict {
                                        with: l.version_id(),
                                        member: l_member,
                                    });
                                    l.conflict = Some(Conflict {
                                        with: new.version_id(),
                                        member: inc.member.clone(),
                                    });
                                    claims.insert(slug.as_str(), encode(&l).as_slice())?;
                                    hist.insert(
                                        (slug.as_str(), new.version),
                                        encode(&new).as_slice(),
                                    )?;
                                    changes.push(IndexChange::Upsert {
                                        claim: Box::new(l),
                                        key: None,
                                        vector: None,
                                    });
                                    acts.push((
                                        ActKind::Supersede,
                                        slug,
                                        actor,
                                        None,
                                        Some(new.content_hash.clone()),
                                        Some(format!(
                                            "conflict: kept {} live",
                                            new.conflict
                                                .as_ref()
                                                .map(|c| c.with.as_str())
                                                .unwrap_or_default()
                                        )),
                                    ));
                                    done.applied += 1;
                                    continue;
                                }
                                let mut out = l.clone();
                                out.state = ClaimState::Outdated;
                                out.outdated_reason = Some(format!(
                                    "conflict: {} superseded the same version later",
                                    inc.member
                                ));
                                out.outdated_at = Some(act.at);
                                out.conflict = Some(Conflict {
                                    with: new.version_id(),
                                    member: inc.member.clone(),
                                });
                                new.conflict = Some(Conflict {
                                    with: l.version_id(),
                                    member: l_member,
                                });
                                hist.insert((slug.as_str(), l.version), encode(&out).as_slice())?;
                                (ActKind::Supersede, Some(l.content_hash))
                            }
                        };
                        // Verdicts and leaves made here on the version this one supersedes
                        // wait for their echo: later in the log, they raced it.
                        if let Some(meant) = new.supersedes.clone() {
                            for act in own_acts.get(&meant).into_iter().flatten() {
                                let r = Race {
                                    member: me.clone(),
                                    act: act.clone(),
                                    version: meant.clone(),
                                };
                                race::mark_meant(&mut hist, &slug, &r, None)?;
                                race::mark_on(&mut new, &r);
                                done.conflicts += 1;
                            }
                        }
                        claims.insert(slug.as_str(), encode(&new).as_slice())?;
                        let old_key = vk.get(slug.as_str())?.map(|k| k.value());
                        let vector = vectors.remove(&new.version_id());
                        let key = if let Some(v) = &vector {
                            let k = self.next_key;
                            self.next_key += 1;
                            if let Some(ok) = old_key {
                                vt.remove(ok)?;
                            }
                            vt.insert(k, to_bytes(v).as_slice())?;
                            vk.insert(slug.as_str(), k)?;
                            Some((k, old_key))
                        } else {
                            None
                        };
                        acts.push((
                            kind,
                            slug,
                            actor,
                            before,
                            Some(new.content_hash.clone()),
                            None,
                        ));
                        changes.push(IndexChange::Upsert {
                            claim: Box::new(new),
                            key,
                            vector,
                        });
                        done.applied += 1;
                    }
                    SharedOp::Learn {
                        slug,
                        version,
                        verdict,
                        note,
                    } => {
                        let live = super::read::live_in(&claims, &slug)?;
                        if live.as_ref().map(Claim::version_id) != Some(version.clone()) {
                            // The version graded is no longer live: the verdict raced a
                            // supersession (or a retirement) made elsewhere.
                            let r = Race {
                                member: inc.member.clone(),
                                act: race::learn_act(verdict),
                                version,
                            };
                            race::mark_meant(&mut hist, &slug, &r, Some(verdict))?;
                            announce_if_unseen(&mut announce, &waiting, live.as_ref(), &r);
                            let note = race_note(&r, live.as_ref());
                            if let Some(mut l) = live {
                                if race::mark_on(&mut l, &r) {
                                    claims.insert(slug.as_str(), encode(&l).as_slice())?;
                                    changes.push(IndexChange::Upsert {
                                        claim: Box::new(l),
                                        key: None,
                                        vector: None,
                                    });
                                }
                            }
                            acts.push((ActKind::Learn, slug, actor, None, None, Some(note)));
                            done.conflicts += 1;
                            done.applied += 1;
                            continue;
                        }
                        let Some(mut c) = live else { continue };
                        c.trust.record(verdict);
                        claims.insert(slug.as_str(), encode(&c).as_slice())?;
                        let h = c.content_hash.clone();
                        let note = Some(verdict.act_note(note.as_deref()));
                        acts.push((ActKind::Learn, slug, actor, Some(h.clone()), Some(h), note));
                        changes.push(IndexChange::Upsert {
                            claim: Box::new(c),
                            key: None,
                            vector: None,
                        });
                        done.applied += 1;
                    }
                    SharedOp::PurgeRequest { slug } => {
                        requests.insert(slug.as_str(), inc.member.as_str())?;
                        done.applied += 1;
                    }
                    SharedOp::Race { slug, race: r } => {
                        race::mark_meant(&mut hist, &slug, &r, None)?;
                        if let Some(mut l) = super::read::live_in(&claims, &slug)? {
                            if race::mark_on(&mut l, &r) {
                                claims.insert(slug.as_str(), encode(&l).as_slice())?;
                                changes.push(IndexChange::Upsert {
                                    claim: Box::new(l),
                                    key: None,
                                    vector: None,
                                });
                            }
                        }
                        done.conflicts += 1;
                        done.applied += 1;
                    }
                    SharedOp::Leave {
                        slug,
                        version,
                        how,
                        reason,
                        by,
                    } => {
                        let kind = if how == "demoted" {
                            ActKind::Demote
                        } else {
                            ActKind::Retire
                        };
                        let live = super::read::live_in(&claims, &slug)?;
                        if live.as_ref().map(Claim::version_id) != Some(version.clone()) {
                            // The version retired is no longer live: the leave raced a
                            // supersession made elsewhere; the live version stays live.
                            let r = Race {
                                member: inc.member.clone(),
                                act: how,
                                version,
                            };
                            race::mark_meant(&mut hist, &slug, &r, None)?;
                            announce_if_unseen(&mut announce, &waiting, live.as_ref(), &r);
                            let note = format!("{}; {reason}", race_note(&r, live.as_ref()));
                            if let Some(mut l) = live {
                                if race::mark_on(&mut l, &r) {
                                    claims.insert(slug.as_str(), encode(&l).as_slice())?;
                                    changes.push(IndexChange::Upsert {
                                        claim: Box::new(l),
                                        key: None,
                                        vector: None,
                                    });
                                }
                            }
                            acts.push((kind, slug, actor, None, None, Some(note)));
                            done.conflicts += 1;
                            done.applied += 1;
                            continue;
                        }
                        let Some(live) = live else { continue };
                        let mut out = live.clone();
                        out.state = ClaimState::Outdated;
                        out.outdated_reason = Some(format!("{how}: {reason}"));
                        out.outdated_at = Some(act.at);
                        out.outdated_by = Some(format!("{by} ({})", inc.member));
                        claims.remove(slug.as_str())?;
                        hist.insert((slug.as_str(), live.version), encode(&out).as_slice())?;
                        let key = vk.remove(slug.as_str())?.map(|k| k.value());
                        if let Some(k) = key {
                            vt.remove(k)?;
                        }
                        acts.push((
                            kind,
                            slug.clone(),
                            actor,
                            Some(live.content_hash),
                            None,
                            Some(reason),
                        ));
                        changes.push(IndexChange::Remove { slug, key });
                        done.applied += 1;
                    }
                }
            }
            let mut meta = tx.open_table(META)?;
            meta.insert("team_cursor", last.text().as_str())?;
            meta.insert("next_key", self.next_key.to_string().as_str())?;
        }
        for op in announce {
            self.queue_shared(&tx, op)?;
        }
        let acts: Vec<_> = acts
            .into_iter()
            .map(|(kind, subject, actor, before, after, note)| {
                self.new_act(kind, &subject, &actor, before, after, note)
            })
            .collect();
        self.record_acts(&tx, acts)?;
        tx.commit()?;
        for ch in changes {
            match ch {
                IndexChange::Upsert { claim, key, vector } => {
                    self.index_live(&claim, key, vector.as_deref())?
                }
                IndexChange::Remove { slug, key } => self.index_gone(&slug, key)?,
            }
        }
        Ok(())
    }
}

/// The act note of a racing act: who meant which version, and what is live instead.
fn race_note(r: &Race, live: Option<&Claim>) -> String {
    match live {
        Some(l) => format!(
            "conflict: {} ({}) meant {}, no longer live: {} is",
            r.member,
            r.act,
            r.version,
            l.version_id()
        ),
        None => format!(
            "conflict: {} ({}) meant {}, no longer live",
            r.member, r.act, r.version
        ),
    }
}

/// A racing act whose version was superseded by a version of ours still waiting for its
/// echo: in log order the act came first, so its own owner will apply our version as a
/// plain supersession and never see the race; we announce it.
fn announce_if_unseen(
    announce: &mut Vec<SharedOp>,
    waiting: &std::collections::HashSet<String>,
    live: Option<&Claim>,
    r: &Race,
) {
    if let Some(l) = live.filter(|l| waiting.contains(&l.version_id())) {
        announce.push(SharedOp::Race {
            slug: l.slug.clone(),
            race: r.clone(),
        });
    }
}
