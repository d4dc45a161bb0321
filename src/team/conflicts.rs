//! What `team_status` and `doctor` show of each shared store without loading it (issue
//! 51): its conflicted versions (a `conflict` or `races` on a live version) and the
//! purges members asked the admin for, as of the last time the store was applied to or
//! read warm, kept on disk in `$MEDULLA_HOME/team/conflicts.json`. Written by the sync
//! actor when it applies the team's log (the store is warm then) and by a status read of
//! a warm store.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use brains::Claim;

/// Per store key (`team`, `repo:<root commit>`): its live versions carrying a conflict,
/// and its purge requests (slug, member).
#[derive(Debug)]
pub struct Conflicts {
    file: PathBuf,
    by_store: Mutex<HashMap<String, Vec<Claim>>>,
    requests: Mutex<HashMap<String, Vec<(String, String)>>>,
}

#[derive(serde::Serialize, serde::Deserialize, Default)]
struct OnDisk {
    #[serde(default)]
    conflicts: HashMap<String, Vec<Claim>>,
    #[serde(default)]
    requests: HashMap<String, Vec<(String, String)>>,
}

impl Conflicts {
    /// What the file holds (nothing when it is absent or unreadable: the next apply or
    /// warm read writes it again).
    pub fn load(team_dir: &Path) -> Conflicts {
        let file = team_dir.join("conflicts.json");
        let disk: OnDisk = std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Conflicts {
            file,
            by_store: Mutex::new(disk.conflicts),
            requests: Mutex::new(disk.requests),
        }
    }

    /// A store's conflicted versions as last known.
    pub fn get(&self, key: &str) -> Vec<Claim> {
        self.by_store
            .lock()
            .expect("conflicts lock")
            .get(key)
            .cloned()
            .unwrap_or_default()
    }

    /// Record a store's conflicted versions (from its live claims); the file is written
    /// only when they changed.
    pub fn set(&self, key: &str, live: impl IntoIterator<Item = Claim>) {
        let now: Vec<Claim> = live
            .into_iter()
            .filter(|c| c.conflict.is_some() || !c.races.is_empty())
            .collect();
        let mut m = self.by_store.lock().expect("conflicts lock");
        if m.get(key).map_or(now.is_empty(), |old| *old == now) {
            return;
        }
        if now.is_empty() {
            m.remove(key);
        } else {
            m.insert(key.to_string(), now);
        }
        drop(m);
        self.save();
    }

    /// A store's purge requests as last known.
    pub fn requests(&self, key: &str) -> Vec<(String, String)> {
        self.requests
            .lock()
            .expect("conflicts lock")
            .get(key)
            .cloned()
            .unwrap_or_default()
    }

    /// Record a store's purge requests; the file is written only when they changed.
    pub fn set_requests(&self, key: &str, now: Vec<(String, String)>) {
        let mut m = self.requests.lock().expect("conflicts lock");
        if m.get(key).map_or(now.is_empty(), |old| *old == now) {
            return;
        }
        if now.is_empty() {
            m.remove(key);
        } else {
            m.insert(key.to_string(), now);
        }
        drop(m);
        self.save();
    }

    fn save(&self) {
        let disk = OnDisk {
            conflicts: self.by_store.lock().expect("conflicts lock").clone(),
            requests: self.requests.lock().expect("conflicts lock").clone(),
        };
        let text = serde_json::to_vec(&disk).expect("claims serialize");
        if let Some(dir) = self.file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = self.file.with_extension("json.tmp");
        if let Err(e) = std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, &self.file)) {
            tracing::warn!(file = %self.file.display(), error = %e, "cannot record the team's conflicts; they are shown from the stores while warm");
        }
    }

    /// Whether a store has conflicted versions as last known.
    pub fn any(&self, key: &str) -> bool {
        self.by_store
            .lock()
            .expect("conflicts lock")
            .contains_key(key)
    }
}
