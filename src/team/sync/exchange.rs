//! A sync pass's exchange with the team's log, per shared store: push what its outbox
//! holds (idempotent by hash), pull what the log holds past the mirror's cursor.

use super::super::db;
use super::{SyncState, BATCH};
use crate::brain::stores::ask;
use crate::brain::BrainMsg;
use crate::store_id::StoreId;

impl SyncState {
    /// Push then pull every shared store; the total lag left.
    pub(super) async fn sync_all(&mut self) -> Result<u64, String> {
        let mut lag = 0;
        for (key, id) in self.stores() {
            self.push(&key, &id).await?;
            lag += self.pull(&key, &id).await?;
        }
        Ok(lag)
    }

    /// Whether a store can be touched without loading a dormant brain for nothing.
    fn warm_or_dirty(&self, key: &str, id: &StoreId) -> bool {
        match id {
            StoreId::Brain(fp) => {
                (self.owner.is_warm)(fp) || self.dirty.get(key).copied().unwrap_or(true)
            }
            _ => true,
        }
    }

    async fn push(&mut self, key: &str, id: &StoreId) -> Result<(), String> {
        if !self.warm_or_dirty(key, id) {
            return Ok(());
        }
        loop {
            let out = match self.owner.read_quietly(id, true, |s| s.outbox(BATCH)).await {
                Some(o) => o,
                None => {
                    tracing::warn!(store = key, "cannot read the outbox");
                    return Ok(());
                }
            };
            if out.is_empty() {
                self.dirty.insert(key.to_string(), false);
                return Ok(());
            }
            let (Some(client), Some(sts)) = (self.client.as_mut(), self.statements.as_ref()) else {
                return Err("not connected".into());
            };
            db::push(client, sts, key, &out).await?;
            let ids: Vec<u64> = out.iter().map(|o| o.id).collect();
            let n = ids.len();
            if let Err(e) = ask(self.owner.stores.as_ref(), id, |r| {
                BrainMsg::Delivered(ids, r)
            })
            .await
            {
                // Sent but not marked: the next pass sends it again and the log skips it.
                tracing::warn!(store = key, error = %e, "sent acts not yet marked delivered");
                return Ok(());
            }
            if n < BATCH {
                self.dirty.insert(key.to_string(), false);
                return Ok(());
            }
        }
    }

    /// Apply the log past the mirror's cursor; how many entries remain past it.
    async fn pull(&mut self, key: &str, id: &StoreId) -> Result<u64, String> {
        let cursor = match self.cursors.get(key) {
            Some(c) => *c,
            None => match self.owner.read(id, |s| s.team_cursor()).await {
                Ok(c) => {
                    self.cursors.insert(key.to_string(), c);
                    c
                }
                Err(e) => {
                    tracing::warn!(store = key, error = %e, "cannot read the mirror's cursor");
                    return Ok(0);
                }
            },
        };
        let mut cursor = cursor;
        loop {
            let (Some(client), Some(sts)) = (self.client.as_ref(), self.statements.as_ref()) else {
                return Err("not connected".into());
            };
            let batch = db::pull(client, sts, key, cursor, BATCH as i64).await?;
            if batch.is_empty() {
                return Ok(db::lag(client, sts, key, cursor).await?.max(0) as u64);
            }
            let last = batch.last().map(|i| i.cursor).unwrap_or(cursor);
            let n = batch.len();
            match ask(self.owner.stores.as_ref(), id, |r| {
                BrainMsg::ApplyTeam(batch, r)
            })
            .await
            {
                Ok(done) => {
                    // Conflicts are counted now, while the store is warm, so status
                    // and doctor never load a dormant brain for them.
                    if done.conflicts > 0 || (done.applied > 0 && self.status.conflicts.any(key)) {
                        if let Some(live) = self
                            .owner
                            .read_quietly(id, false, |s| s.live_claims())
                            .await
                        {
                            self.status.conflicts.set(key, live);
                        }
                    }
                    if done.applied > 0 || done.purged > 0 {
                        if let Some(r) = self
                            .owner
                            .read_quietly(id, false, |s| s.purge_requests())
                            .await
                        {
                            self.status.conflicts.set_requests(key, r);
                        }
                        tracing::debug!(
                            store = key,
                            applied = done.applied,
                            conflicts = done.conflicts,
                            purged = done.purged,
                            "applied the team's log"
                        );
                    }
                }
                Err(e) => {
                    tracing::warn!(store = key, error = %e, "cannot apply the team's log yet; retried on the next pass");
                    self.cursors.remove(key);
                    return Ok(0);
                }
            }
            cursor = last;
            self.cursors.insert(key.to_string(), cursor);
            if n < BATCH {
                return Ok(0);
            }
        }
    }
}
