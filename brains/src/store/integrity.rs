//! The deep check of one store: redb's own integrity check (every page's checksum), every
//! record decoded, and each derived index (the claim index in memory and the vector index)
//! compared with what redb holds. A store that fails the first two is damaged.

use redb::{ReadableDatabase, ReadableTable};
use serde::Serialize;

use super::tables::{ACTS, CLAIMS, HISTORY};
use super::{decode, Store, DB_FILE};
use crate::claim::Act;
use crate::error::StoreError;

/// What [`Store::check_integrity`] found in a store that is not damaged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Integrity {
    /// redb found an allocator state out of step with the file and rebuilt it (a crash
    /// leaves this behind; nothing stored was lost).
    pub repaired: bool,
    /// Records decoded: live claims, history versions and acts.
    pub records: u64,
    /// Why the claim index (terms, metadata and vector keys) differs from redb's live
    /// claims; `None` when in step.
    pub claim_index: Option<String>,
    /// Why the vector index differs from redb's vectors; `None` when in step or when
    /// there is no model.
    pub vector_index: Option<String>,
}

impl Store {
    /// Check the whole store. Damage (a page that fails its checksum, a record that does
    /// not decode) is an `Err` of code `store_damaged`; a derived index out of step is
    /// reported, not an error (it is rebuilt from redb). Needs the store to itself: no
    /// read transaction may be alive (`store_busy` otherwise). Reads every page.
    pub fn check_integrity(&mut self) -> Result<Integrity, StoreError> {
        let path = self.dir.join(DB_FILE);
        let clean = match self.db.check_integrity() {
            Ok(clean) => clean,
            Err(redb::DatabaseError::TransactionInProgress) => {
                return Err(StoreError::Busy {
                    what: "a read or a backup is using the store".into(),
                })
            }
            Err(e) => return Err(StoreError::Storage(e.into()).at_store(&path)),
        };
        let mut report = Integrity {
            repaired: !clean,
            ..Integrity::default()
        };
        let checked = (|| -> Result<(u64, Vec<String>), StoreError> {
            let rx = self.db.begin_read()?;
            let mut records = 0;
            let mut live = Vec::new();
            for row in rx.open_table(CLAIMS)?.iter()? {
                let (k, v) = row?;
                decode(v.value())?;
                live.push(k.value().to_string());
                records += 1;
            }
            for row in rx.open_table(HISTORY)?.iter()? {
                decode(row?.1.value())?;
                records += 1;
            }
            for row in rx.open_table(ACTS)?.iter()? {
                serde_json::from_slice::<Act>(row?.1.value())
                    .map_err(StoreError::corrupt("act"))?;
                records += 1;
            }
            Ok((records, live))
        })()
        .map_err(|e| e.at_store(&path))?;
        report.records = checked.0;
        let live = checked.1;
        report.claim_index = if live.len() != self.index.len() {
            Some(format!(
                "redb holds {} live claims, the claim index {}",
                live.len(),
                self.index.len()
            ))
        } else {
            live.iter()
                .find(|s| !self.index.contains(s.as_str()))
                .map(|s| format!("live claim {s:?} is missing from the claim index"))
        };
        report.vector_index = self.check_index().map_err(|e| e.at_store(&path))?;
        Ok(report)
    }
}
