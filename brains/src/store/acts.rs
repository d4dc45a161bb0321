//! The act log: every change a store accepts is recorded, in sequence.

use redb::ReadableDatabase;

use super::tables::{ACTS, META};
use super::Store;
use crate::claim::{Act, ActKind};
use crate::error::StoreError;

impl Store {
    pub(super) fn act(&mut self, tx: &redb::WriteTransaction, act: Act) -> Result<(), StoreError> {
        self.record_acts(tx, std::iter::once(act))
    }

    /// Record acts in sequence in one transaction: the log's tables opened once and the
    /// next sequence number written once, after the last (a batch's acts, not one
    /// table open and one counter update each).
    pub(super) fn record_acts(
        &mut self,
        tx: &redb::WriteTransaction,
        acts: impl IntoIterator<Item = Act>,
    ) -> Result<(), StoreError> {
        let mut log = tx.open_table(ACTS)?;
        let mut next = None;
        for act in acts {
            log.insert(
                act.seq,
                serde_json::to_vec(&act)
                    .expect("an act serializes")
                    .as_slice(),
            )?;
            next = Some(act.seq + 1);
        }
        if let Some(next) = next {
            tx.open_table(META)?
                .insert("next_act", next.to_string().as_str())?;
        }
        Ok(())
    }

    pub(super) fn new_act(
        &mut self,
        kind: ActKind,
        subject: &str,
        actor: &str,
        before: Option<String>,
        after: Option<String>,
        note: Option<String>,
    ) -> Act {
        let seq = self.next_act;
        self.next_act += 1;
        Act {
            seq,
            kind,
            subject: subject.to_string(),
            actor: actor.to_string(),
            at: self.now_ms(),
            before_hash: before,
            after_hash: after,
            note,
        }
    }

    /// Record a fact about the brain's checkouts (its path the subject): a checkout of
    /// its repository asked for the first time (`Checkout`), or a checkout's project
    /// identity was recorded anew (`Identity`). An act that changes no claim and no boot
    /// memory.
    pub fn note_checkout(
        &mut self,
        kind: ActKind,
        path: &str,
        actor: &str,
        note: Option<String>,
    ) -> Result<(), StoreError> {
        crate::claim::validate_agent_id(actor)?;
        if kind.names_claim() {
            return Err(StoreError::Invalid(format!(
                "a {} act names a claim, not a checkout",
                kind.as_str()
            )));
        }
        let act = self.new_act(kind, path, actor, None, None, note);
        let tx = self.db.begin_write()?;
        self.act(&tx, act)?;
        tx.commit()?;
        self.note_act()?;
        Ok(())
    }

    /// Acts with `seq > after_seq`, oldest first.
    pub fn acts(&self, after_seq: u64, limit: usize) -> Result<Vec<Act>, StoreError> {
        let rx = self.db.begin_read()?;
        let mut out = Vec::new();
        for row in rx.open_table(ACTS)?.range(after_seq.saturating_add(1)..)? {
            let (_, v) = row?;
            out.push(serde_json::from_slice(v.value()).map_err(StoreError::corrupt("act record"))?);
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    /// The newest acts, newest first.
    pub fn acts_newest(&self, limit: usize) -> Result<Vec<Act>, StoreError> {
        self.acts_before(u64::MAX, limit)
    }

    /// Acts with `seq < before`, newest first: one page of the act log.
    pub fn acts_before(&self, before: u64, limit: usize) -> Result<Vec<Act>, StoreError> {
        let rx = self.db.begin_read()?;
        let mut out = Vec::new();
        for row in rx.open_table(ACTS)?.range(..before)?.rev() {
            let (_, v) = row?;
            out.push(serde_json::from_slice(v.value()).map_err(StoreError::corrupt("act record"))?);
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }
}
