//! A store shared with a team (SPEC §13): what travels, the outbox every local write
//! queues into in its own transaction, and the acts queued here and not yet seen back
//! from the team's log (their echo is skipped). Applying the log is `apply.rs`.
//!
//! What travels is a [`SharedAct`]: a whole version (`write`), a verdict (`learn`), a
//! version leaving recall (`leave`), a racing act announced (`race`, `race.rs`). Versions are identified across owners by their
//! version id (`<slug>@<created>`); local version numbers are this mirror's own.
//!
//! Conflicts: a `write` whose base (the version its writer superseded) is not the live
//! version here, while the live version was itself written over the same history, is a
//! concurrent supersession. The later in the log is live; the other goes to history;
//! both carry `conflict: {with, member}`. A live version still waiting in this outbox is
//! later in the log than anything arriving now (it has not been sent), so an arriving
//! rival goes to history.

use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::race::{self, Pending};
use super::tables::{META, TEAM_OUTBOX, TEAM_PENDING, TEAM_REQUESTS, TEAM_SEEN, TEAM_SLUGS};
use super::{sha, Store};
use crate::claim::{Claim, Race, Verdict};
use crate::error::StoreError;

/// Which team store a local store mirrors, and as whom this owner writes to it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareState {
    /// The team store's key: `team`, or `repo:<root commit>`.
    pub key: String,
    /// This owner's member name (its PostgreSQL role).
    pub member: String,
    /// The team database (its URL without the password): a cursor into one database's
    /// log means nothing in another's.
    #[serde(default)]
    pub db: String,
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
    /// A verdict or leave that raced a supersession, announced by the owner that saw it
    /// (its own superseding version still waited to be sent, so the acting owner cannot
    /// see the race): every mirror marks it.
    Race { slug: String, race: Race },
    /// A member asked the team admin to erase a claim (a local purge of a shared claim
    /// is refused: it would erase one copy only). Every mirror lists it until a
    /// tombstone erases the claim.
    PurgeRequest { slug: String },
}

impl SharedOp {
    pub fn slug(&self) -> &str {
        match self {
            SharedOp::Write { claim } => &claim.slug,
            SharedOp::Learn { slug, .. }
            | SharedOp::Leave { slug, .. }
            | SharedOp::Race { slug, .. }
            | SharedOp::PurgeRequest { slug } => slug,
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
            SharedOp::Race { race, .. } => vec![race.act.as_str()],
            SharedOp::PurgeRequest { .. } => vec![],
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
    /// An admin erased these acts (`targets`, their hashes) of these claims (`slugs`):
    /// purge what they wrote, everywhere. An older tombstone names hashes alone.
    Tombstone {
        targets: Vec<String>,
        slugs: Vec<String>,
    },
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
    pub(super) fn text(&self) -> String {
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

impl Store {
    /// The team store `slug` is in, when this store is shared and the slug is in the
    /// team's log (queued from here or arrived): a local purge would not reach the team.
    pub fn shared_slug(&self, slug: &str) -> Result<Option<String>, StoreError> {
        let Some(share) = &self.share else {
            return Ok(None);
        };
        let rx = self.db.begin_read()?;
        let there = match rx.open_table(TEAM_SLUGS) {
            Ok(t) => t.get(slug)?.is_some(),
            Err(redb::TableError::TableDoesNotExist(_)) => false,
            Err(e) => return Err(e.into()),
        };
        Ok(there.then(|| share.key.clone()))
    }

    /// Ask the team admin to erase `slug` everywhere (queued for the team, listed here at
    /// once); `false` when it is already asked for.
    pub fn request_purge(&mut self, slug: &str) -> Result<bool, StoreError> {
        let Some(member) = self.share.as_ref().map(|s| s.member.clone()) else {
            return Ok(false);
        };
        if self.purge_requests()?.iter().any(|(s, _)| s == slug) {
            return Ok(false);
        }
        let tx = self.db.begin_write()?;
        tx.open_table(TEAM_REQUESTS)?
            .insert(slug, member.as_str())?;
        self.queue_shared(
            &tx,
            SharedOp::PurgeRequest {
                slug: slug.to_string(),
            },
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// The purges members asked the team admin for: (slug, member).
    pub fn purge_requests(&self) -> Result<Vec<(String, String)>, StoreError> {
        let rx = self.db.begin_read()?;
        let t = match rx.open_table(TEAM_REQUESTS) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(vec![]),
            Err(e) => return Err(e.into()),
        };
        let mut out = Vec::new();
        for row in t.iter()? {
            let (k, v) = row?;
            out.push((k.value().to_string(), v.value().to_string()));
        }
        Ok(out)
    }

    /// What a shared store keeps to follow the team's log, in bytes as redb stores them:
    /// the pending echoes, the slugs in the log, the purge requests, and the legacy
    /// per-act table.
    pub fn team_state_bytes(&self) -> Result<u64, StoreError> {
        let rx = self.db.begin_read()?;
        let mut n = 0;
        macro_rules! add {
            ($t:expr) => {
                match rx.open_table($t) {
                    Ok(t) => {
                        let s = t.stats()?;
                        n += s.stored_bytes() + s.metadata_bytes() + s.fragmented_bytes();
                    }
                    Err(redb::TableError::TableDoesNotExist(_)) => {}
                    Err(e) => return Err(e.into()),
                }
            };
        }
        add!(TEAM_PENDING);
        add!(TEAM_SEEN);
        add!(TEAM_SLUGS);
        add!(TEAM_REQUESTS);
        Ok(n)
    }

    /// The team store this one mirrors, when it is shared.
    pub fn share(&self) -> Option<&ShareState> {
        self.share.as_ref()
    }

    /// Share this store: from now on every write is queued for the team, and every
    /// live claim is queued now (the floor over every field; what fails it stays here).
    pub fn start_sharing(&mut self, state: ShareState) -> Result<Shared, StoreError> {
        let same = self.share.as_ref().is_some_and(|s| {
            s.key == state.key && s.member == state.member && (s.db == state.db || s.db.is_empty())
        });
        let tx = self.db.begin_write()?;
        {
            let mut meta = tx.open_table(META)?;
            meta.insert(
                "team_share",
                serde_json::to_string(&state)
                    .expect("a share state serializes")
                    .as_str(),
            )?;
            // The cursor is this database's log position for this store: kept across a
            // leave and a join of the same one (nothing applied twice: the cursor is the
            // only record of what was applied), dropped for another.
            let of = format!("{} {}", state.key, state.db);
            let before = meta.get("team_cursor_of")?.map(|v| v.value().to_string());
            if before.is_some_and(|b| b != of) {
                meta.remove("team_cursor")?;
            }
            meta.insert("team_cursor_of", of.as_str())?;
        }
        self.share = Some(state.clone());
        if same {
            tx.commit()?;
            return Ok(Shared::default());
        }
        let live = self.live_claims()?;
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
            // What was never sent never echoes: its pending mark goes with it. What was
            // sent keeps its mark, so its echo is still skipped after a join.
            let mut unsent = Vec::new();
            for row in outbox.iter()? {
                let (_, v) = row?;
                if let Ok(o) = serde_json::from_slice::<Outgoing>(v.value()) {
                    unsent.push(o.hash);
                }
            }
            outbox.retain(|_, _| false)?;
            let mut pending = tx.open_table(TEAM_PENDING)?;
            for h in &unsent {
                pending.remove(h.as_str())?;
            }
            let mut meta = tx.open_table(META)?;
            // The cursor stays (with the database it belongs to): a join of the same
            // database resumes where this mirror stopped.
            meta.remove("team_share")?;
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
        let mark = match &op {
            SharedOp::Write { claim } => Pending::Write(claim.version_id()),
            SharedOp::Learn {
                version, verdict, ..
            } => Pending::Act {
                act: race::learn_act(*verdict),
                version: version.clone(),
            },
            SharedOp::Leave { version, how, .. } => Pending::Act {
                act: how.clone(),
                version: version.clone(),
            },
            SharedOp::Race { .. } | SharedOp::PurgeRequest { .. } => Pending::Other,
        }
        .mark();
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
            .insert(hash.as_str(), mark.as_str())?;
        tx.open_table(TEAM_SLUGS)?.insert(slug.as_str(), ())?;
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
}
