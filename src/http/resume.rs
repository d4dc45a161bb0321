//! MCP sessions that outlive the owner: each session's `initialize` parameters are kept in
//! `$MEDULLA_HOME/sessions.json` (0600), so after a restart a client's next request with
//! its old `Mcp-Session-Id` is served as if nothing happened — the MCP SDK replays the
//! handshake from the stored parameters (its `SessionStore`) instead of answering `404`.
//! Clients that do not re-initialize on a `404` by themselves (the official Python SDK
//! does not) never notice a `medulla restart`.
//!
//! The file holds at most the session cap's entries (the oldest dropped first); a session
//! a client ends (`DELETE`) or the cap closes is forgotten.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};
use serde::{Deserialize, Serialize};

pub const FILE: &str = "sessions.json";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Kept {
    /// Order of arrival: the oldest goes first past the cap.
    seq: u64,
    state: SessionState,
}

pub struct FileSessions {
    path: PathBuf,
    cap: usize,
    kept: Mutex<HashMap<String, Kept>>,
}

impl FileSessions {
    /// The sessions kept in `home` (none when the file is missing or unreadable: a
    /// session that cannot be resumed is answered `404`, as before).
    pub fn open(home: &Path, cap: usize) -> FileSessions {
        let path = home.join(FILE);
        let kept = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        FileSessions {
            path,
            cap: cap.max(1),
            kept: Mutex::new(kept),
        }
    }

    /// Forget a session (its client ended it, or the cap closed it).
    pub fn forget(&self, id: &str) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.remove(id).is_some() {
            self.save(&kept);
        }
    }

    /// Write the whole file (a few hundred entries at most), atomically, private.
    fn save(&self, kept: &HashMap<String, Kept>) {
        let write = || -> std::io::Result<()> {
            let tmp = self
                .path
                .with_extension(format!("json.{}", std::process::id()));
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create(true).truncate(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            let mut f = opts.open(&tmp)?;
            std::io::Write::write_all(&mut f, &serde_json::to_vec(kept)?)?;
            std::fs::rename(&tmp, &self.path)
        };
        if let Err(e) = write() {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot keep the MCP sessions for a restart");
        }
    }
}

#[async_trait::async_trait]
impl SessionStore for FileSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        Ok(kept.get(session_id).map(|k| k.state.clone()))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let seq = kept.values().map(|k| k.seq).max().map_or(0, |s| s + 1);
        kept.insert(
            session_id.to_string(),
            Kept {
                seq,
                state: state.clone(),
            },
        );
        while kept.len() > self.cap {
            let Some(oldest) = kept
                .iter()
                .min_by_key(|(_, k)| k.seq)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            kept.remove(&oldest);
        }
        self.save(&kept);
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        self.forget(session_id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(name: &str) -> SessionState {
        serde_json::from_value(serde_json::json!({ "initialize_params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": name, "version": "1" } } }))
        .unwrap()
    }

    #[tokio::test]
    async fn sessions_survive_a_reopen_within_the_cap() {
        let home = tempfile::tempdir().unwrap();
        let s = FileSessions::open(home.path(), 2);
        for id in ["a", "b", "c"] {
            s.store(id, &state(id)).await.unwrap();
        }
        s.delete("b").await.unwrap();
        let again = FileSessions::open(home.path(), 2);
        assert!(
            again.load("a").await.unwrap().is_none(),
            "the oldest went past the cap"
        );
        assert!(again.load("b").await.unwrap().is_none(), "deleted");
        let c = again
            .load("c")
            .await
            .unwrap()
            .expect("kept across the reopen");
        assert_eq!(c.initialize_params.client_info.name, "c");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(home.path().join(FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "private");
        }
    }
}
