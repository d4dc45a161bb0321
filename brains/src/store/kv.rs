//! Boot memory: a small key-value table, every change a recorded act.

use redb::{ReadableDatabase, ReadableTable};

use super::tables::KV;
use super::{sha, Store, MAX_KV_KEY, MAX_KV_VALUE};
use crate::claim::ActKind;
use crate::error::StoreError;

impl Store {
    pub fn kv_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        let rx = self.db.begin_read()?;
        let t = rx.open_table(KV)?;
        let v = t.get(key)?.map(|v| v.value().to_string());
        Ok(v)
    }

    pub fn kv_set(&mut self, key: &str, value: &str, actor: &str) -> Result<(), StoreError> {
        crate::claim::validate_agent_id(actor)?;
        if key.is_empty() || key.len() > MAX_KV_KEY {
            return Err(StoreError::Invalid(format!(
                "boot memory keys are 1 to {MAX_KV_KEY} bytes: shorten the key"
            )));
        }
        if value.len() > MAX_KV_VALUE {
            return Err(StoreError::Invalid(format!(
                "boot memory values are at most {MAX_KV_VALUE} bytes, this one is {}: store a pointer instead",
                value.len()
            )));
        }
        let before = self.kv_get(key)?.map(|v| sha(&v));
        let act = self.new_act(ActKind::KvSet, key, actor, before, Some(sha(value)), None);
        let tx = self.db.begin_write()?;
        tx.open_table(KV)?.insert(key, value)?;
        self.act(&tx, act)?;
        tx.commit()?;
        self.note_act()?;
        Ok(())
    }

    pub fn kv_list(&self) -> Result<Vec<(String, String)>, StoreError> {
        let rx = self.db.begin_read()?;
        let mut out = Vec::new();
        for row in rx.open_table(KV)?.iter()? {
            let (k, v) = row?;
            out.push((k.value().to_string(), v.value().to_string()));
        }
        Ok(out)
    }

    pub fn kv_delete(&mut self, key: &str, actor: &str) -> Result<(), StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let before = self.kv_get(key)?.ok_or_else(|| StoreError::UnknownKey {
            key: key.to_string(),
        })?;
        let act = self.new_act(
            ActKind::KvDelete,
            key,
            actor,
            Some(sha(&before)),
            None,
            None,
        );
        let tx = self.db.begin_write()?;
        tx.open_table(KV)?.remove(key)?;
        self.act(&tx, act)?;
        tx.commit()?;
        self.note_act()?;
        Ok(())
    }
}
