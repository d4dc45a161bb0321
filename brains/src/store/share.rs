//! A store shared with a team (SPEC §13): the outbox every local write queues into in
//! its own transaction, the acts queued here and not yet seen back from the team's log
//! (their echo is skipped), and applying the team's log in order, each batch in one
//! transaction with the cursor it reaches.
//!
//! What travels is a [`SharedAct`]: a whole version (`write`), a verdict (`learn`), a
//! version leaving recall (`leave`). Versions are identified across owners by their
//! version id (`<slug>@<created>`); local version numbers are this mirror's own.
//!
//! Conflicts: a `write` whose base (the version its writer superseded) is not the live
//! version here, while the live version was itself written over the same history, is a
//! concurrent supersession. The later in the log is live; the other goes to history;
//! both carry `conflict: {with, member}`. A live version still waiting in this outbox is
//! later in the log than anything arriving now (it has not been sent), so an arriving
//! rival goes to history.

use std::collections::HashMap;

use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::tables::{
    CLAIMS, HISTORY, META, TEAM_OUTBOX, TEAM_PENDING, TEAM_SEEN, VECTORS, VEC_KEYS,
};
use super::{embed_text, encode, sha, to_bytes, Store};
use crate::claim::{ActKind, Claim, ClaimState, Conflict, Verdict};
use crate::error::StoreError;

/// Which team store a local store mirrors, and as whom this owner writes to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareState {
    /// The team store's key: `team`, or `repo:<root commit>`.
    pub key: String,
    /// This owner's member name (its PostgreSQL role).
    pub member: String,
}

/// One act of a shared store, as it travels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedAct {
    /// The writing store's creation stamp: two owners' acts never hash alike.
    pub origin: String,
    /// When it was written, ms since the epoch.
    pub at: i64,
    #[serde(flatten)]
    pub op: SharedOp,
}

/// What a shared act does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum SharedOp {
    /// A version: new, or superseding `claim.supersedes`.
    Write { claim: Box<Claim> },
    /// A verdict on a version.
    Learn {
        slug: String,
        version: String,
        verdict: Verdict,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A version leaves recall with no replacement (`demoted` or `retired`).
    Leave {
        slug: String,
        version: String,
        how: String,
        reason: String,
        by: String,
    },
}

impl SharedOp {
    pub fn slug(&self) -> &str {
        match self {
            SharedOp::Write { claim } => &claim.slug,
            SharedOp::Learn { slug, .. } | SharedOp::Leave { slug, .. } => slug,
        }
    }

    /// Every field of text that would leave the machine.
    fn fields(&self) -> Vec<&str> {
        match self {
            SharedOp::Write { claim } => {
                let mut v = vec![claim.label.as_str(), claim.text.as_str()];
                v.extend(claim.evidence.iter().map(String::as_str));
                v.extend(claim.promotion_reason.as_deref());
                v.extend(claim.origin_claim.as_deref());
                v.extend(claim.outdated_reason.as_deref());
                v
            }
            SharedOp::Learn { note, .. } => note.as_deref().into_iter().collect(),
            SharedOp::Leave { reason, .. } => vec![reason.as_str()],
        }
    }

    /// The hygiene floor over every field: what it found, redacted, or `None`.
    pub fn floor(&self) -> Option<String> {
        let findings = crate::hygiene::scan_parts(&self.fields());
        (!findings.is_empty()).then(|| {
            findings
                .iter()
                .map(|f| format!("{} {}", f.kind.as_str(), f.redacted))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }
}

/// An act waiting in the outbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outgoing {
    pub id: u64,
    /// sha256 (hex) of `body`: the act's identity in the team's log.
    pub hash: String,
    /// The act, as JSON.
    pub body: String,
}

/// An entry of the team's log, in log order.
#[derive(Debug, Clone)]
pub struct Incoming {
    /// Its place in the log (`xid`, `seq`): the cursor once applied.
    pub cursor: Cursor,
    pub hash: String,
    /// Who wrote it, as the database stamped it.
    pub member: String,
    pub entry: Entry,
}

/// What a log entry carries.
#[derive(Debug, Clone)]
pub enum Entry {
    Act(SharedAct),
    /// An admin erased these acts: purge what they wrote, everywhere.
    Tombstone(Vec<String>),
    /// An act whose content an admin erased, read before its tombstone: nothing to apply.
    Erased,
}

/// A position in the team's log: the writing transaction's id, then the row's sequence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor {
    pub xid: u64,
    pub seq: i64,
}

impl Cursor {
    fn parse(s: &str) -> Option<Cursor> {
        let (x, q) = s.split_once(':')?;
        Some(Cursor {
            xid: x.parse().ok()?,
            seq: q.parse().ok()?,
        })
    }
    fn text(&self) -> String {
        format!("{}:{}", self.xid, self.seq)
    }
}

/// What applying a batch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Applied {
    pub applied: u64,
    /// This owner's own acts seen back from the log (already applied here).
    pub echoes: u64,
    pub conflicts: u64,
    pub purged: u64,
}

/// How a share began: live claims queued, and those the floor kept back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Shared {
    pub queued: u64,
    pub refused: u64,
}

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
    /// The team store this one mirrors, when it is shared.
    pub fn share(&self) -> Option<&ShareState> {
        self.share.as_ref()
    }

    /// Share this store: from now on every write is queued for the team, and every
    /// live claim is queued now (the floor over every field; what fails it stays here).
    pub fn start_sharing(&mut self, state: ShareState) -> Result<Shared, StoreError> {
        if self.share.as_ref() == Some(&state) {
            return Ok(Shared::default());
        }
        self.share = Some(state.clone());
        let live = self.live_claims()?;
        let tx = self.db.begin_write()?;
        tx.open_table(META)?.insert(
            "team_share",
            serde_json::to_string(&state)
                .expect("a share state serializes")
                .as_str(),
        )?;
        let mut out = Shared::default();
        for mut c in live {
            c.member = Some(state.member.clone());
            if self.queue_shared(&tx, SharedOp::Write { claim: Box::new(c) })? {
                out.queued += 1;
            } else {
                out.refused += 1;
            }
        }
        tx.commit()?;
        Ok(out)
    }

    /// Stop sharing: nothing more is queued, and what was queued is dropped.
    pub fn stop_sharing(&mut self) -> Result<u64, StoreError> {
        let tx = self.db.begin_write()?;
        let dropped = {
            let mut outbox = tx.open_table(TEAM_OUTBOX)?;
            let n = outbox.len()?;
            outbox.retain(|_, _| false)?;
            tx.open_table(TEAM_PENDING)?.retain(|_, _| false)?;
            let mut meta = tx.open_table(META)?;
            meta.remove("team_share")?;
            meta.remove("team_cursor")?;
            n
        };
        tx.commit()?;
        self.share = None;
        Ok(dropped)
    }

    pub(super) fn load_share(&mut self) -> Result<(), StoreError> {
        let rx = self.db.begin_read()?;
        let meta = rx.open_table(META)?;
        self.share = match meta.get("team_share")? {
            Some(v) => serde_json::from_str(v.value()).ok(),
            None => None,
        };
        self.next_outbox = match rx.open_table(TEAM_OUTBOX) {
            Ok(t) => t.last()?.map(|(k, _)| k.value() + 1).unwrap_or(1),
            Err(redb::TableError::TableDoesNotExist(_)) => 1,
            Err(e) => return Err(e.into()),
        };
        Ok(())
    }

    /// Queue an act for the team in the write's own transaction, when this store is
    /// shared and every field passes the floor. `Ok(false)`: not queued (not shared, or
    /// refused by the floor: it stays local, and the count of refusals says so).
    pub(super) fn queue_shared(
        &mut self,
        tx: &WriteTransaction,
        op: SharedOp,
    ) -> Result<bool, StoreError> {
        if self.share.is_none() {
            return Ok(false);
        }
        let slug = op.slug().to_string();
        if let Some(why) = op.floor() {
            tracing::warn!(dir = %self.dir.display(), slug = %slug, found = %why, "not shared with the team: it fails the hygiene floor and stays on this machine");
            let mut meta = tx.open_table(META)?;
            let n = meta
                .get("team_refused")?
                .and_then(|v| v.value().parse::<u64>().ok())
                .unwrap_or(0);
            meta.insert("team_refused", (n + 1).to_string().as_str())?;
            return Ok(false);
        }
        let version = match &op {
            SharedOp::Write { claim } => claim.version_id(),
            _ => String::new(),
        };
        let act = SharedAct {
            origin: self.created.clone(),
            at: self.now_ms(),
            op,
        };
        let body = serde_json::to_string(&act).expect("an act serializes");
        let hash = sha(&body);
        let id = self.next_outbox;
        self.next_outbox += 1;
        let out = Outgoing {
            id,
            hash: hash.clone(),
            body,
        };
        tx.open_table(TEAM_OUTBOX)?.insert(
            id,
            serde_json::to_vec(&out)
                .expect("an outgoing act serializes")
                .as_slice(),
        )?;
        tx.open_table(TEAM_PENDING)?
            .insert(hash.as_str(), version.as_str())?;
        tx.open_table(TEAM_SEEN)?
            .insert(hash.as_str(), slug.as_str())?;
        Ok(true)
    }

    /// The oldest acts waiting to be sent, in the order they were written.
    pub fn outbox(&self, limit: usize) -> Result<Vec<Outgoing>, StoreError> {
        let rx = self.db.begin_read()?;
        let t = match rx.open_table(TEAM_OUTBOX) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(vec![]),
            Err(e) => return Err(e.into()),
        };
        let mut out = Vec::new();
        for row in t.iter()? {
            let (_, v) = row?;
            out.push(
                serde_json::from_slice(v.value()).map_err(StoreError::corrupt("outbox entry"))?,
            );
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    /// How many acts wait to be sent, and how many the floor kept here.
    pub fn outbox_len(&self) -> Result<(u64, u64), StoreError> {
        let rx = self.db.begin_read()?;
        let queued = match rx.open_table(TEAM_OUTBOX) {
            Ok(t) => t.len()?,
            Err(redb::TableError::TableDoesNotExist(_)) => 0,
            Err(e) => return Err(e.into()),
        };
        let refused = rx
            .open_table(META)?
            .get("team_refused")?
            .and_then(|v| v.value().parse().ok())
            .unwrap_or(0);
        Ok((queued, refused))
    }

    /// The team's log holds these outbox entries now: drop them from the outbox (their
    /// echo is still awaited, and skipped when it comes).
    pub fn delivered(&mut self, ids: &[u64]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let tx = self.db.begin_write()?;
        {
            let mut t = tx.open_table(TEAM_OUTBOX)?;
            for id in ids {
                t.remove(*id)?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// How far into the team's log this mirror has applied.
    pub fn team_cursor(&self) -> Result<Cursor, StoreError> {
        let rx = self.db.begin_read()?;
        Ok(rx
            .open_table(META)?
            .get("team_cursor")?
            .and_then(|v| Cursor::parse(v.value()))
            .unwrap_or_default())
    }

    /// Apply entries of the team's log, in log order; each run of acts in one
    /// transaction with the cursor it reaches, so an entry is applied exactly once
    /// whatever stops the owner. A tombstone purges what its acts wrote.
    pub fn apply_team(&mut self, batch: Vec<Incoming>) -> Result<Applied, StoreError> {
        let mut done = Applied::default();
        let mut run: Vec<Incoming> = Vec::new();
        for inc in batch {
            if let Entry::Tombstone(targets) = &inc.entry {
                let targets = targets.clone();
                let at = inc.cursor;
                self.apply_run(std::mem::take(&mut run), &mut done)?;
                done.purged += self.apply_tombstone(&targets, at)?;
                continue;
            }
            run.push(inc);
        }
        self.apply_run(run, &mut done)?;
        Ok(done)
    }

    fn apply_tombstone(&mut self, targets: &[String], at: Cursor) -> Result<u64, StoreError> {
        let mut slugs = Vec::new();
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
        for slug in slugs {
            match self.purge(&slug, "team:admin") {
                Ok(_) => n += 1,
                Err(StoreError::NothingToPurge { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        let tx = self.db.begin_write()?;
        {
            let mut seen = tx.open_table(TEAM_SEEN)?;
            let mut pending = tx.open_table(TEAM_PENDING)?;
            for h in targets {
                seen.remove(h.as_str())?;
                pending.remove(h.as_str())?;
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
        let tx = self.db.begin_write()?;
        {
            let mut claims = tx.open_table(CLAIMS)?;
            let mut hist = tx.open_table(HISTORY)?;
            let mut vt = tx.open_table(VECTORS)?;
            let mut vk = tx.open_table(VEC_KEYS)?;
            let mut pending = tx.open_table(TEAM_PENDING)?;
            let mut seen = tx.open_table(TEAM_SEEN)?;
            // Versions still waiting to be sent from here: later in the log than anything
            // arriving now.
            let mut waiting: std::collections::HashSet<String> = std::collections::HashSet::new();
            for row in pending.iter()? {
                let (_, v) = row?;
                if !v.value().is_empty() {
                    waiting.insert(v.value().to_string());
                }
            }
            for inc in run {
                if let Some(version) = pending.remove(inc.hash.as_str())? {
                    // Our own act, seen back: applied here when it was written, and from
                    // now on earlier in the log than anything still to come.
                    waiting.remove(version.value());
                    done.echoes += 1;
                    continue;
                }
                let act = match inc.entry {
                    Entry::Act(a) => a,
                    Entry::Erased | Entry::Tombstone(_) => continue,
                };
                if seen.get(inc.hash.as_str())?.is_some() {
                    continue;
                }
                seen.insert(inc.hash.as_str(), act.op.slug())?;
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
                        let Some(mut c) = super::read::live_in(&claims, &slug)? else {
                            continue;
                        };
                        if c.version_id() != version {
                            continue;
                        }
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
                    SharedOp::Leave {
                        slug,
                        version,
                        how,
                        reason,
                        by,
                    } => {
                        let Some(live) = super::read::live_in(&claims, &slug)? else {
                            continue;
                        };
                        if live.version_id() != version {
                            continue;
                        }
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
                        let kind = if how == "demoted" {
                            ActKind::Demote
                        } else {
                            ActKind::Retire
                        };
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
