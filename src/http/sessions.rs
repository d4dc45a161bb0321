//! MCP session bookkeeping around the SDK's session manager: a cap on how many sessions
//! are held at once (the least recently used is closed to make room) and their last use.
//! Sessions also expire after `session_idle` without a request (the SDK's keep-alive).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;

pub struct Sessions {
    pub manager: Arc<LocalSessionManager>,
    /// What a restart resumes: a session closed here is forgotten there too.
    kept: Arc<super::resume::FileSessions>,
    /// The sessions the direct path answers: a session closed here is forgotten there.
    pub live: Arc<super::direct::Live>,
    last_used: Mutex<HashMap<String, Instant>>,
    max: usize,
}

impl Sessions {
    pub fn new(
        manager: Arc<LocalSessionManager>,
        kept: Arc<super::resume::FileSessions>,
        live: Arc<super::direct::Live>,
        max: usize,
    ) -> Self {
        Self {
            manager,
            kept,
            live,
            last_used: Mutex::new(HashMap::new()),
            max,
        }
    }

    pub async fn exists(&self, id: &str) -> bool {
        self.manager.sessions.read().await.contains_key(id)
    }

    pub fn touch(&self, id: &str) {
        self.last_used
            .lock()
            .expect("sessions lock")
            .insert(id.to_string(), Instant::now());
    }

    /// Before a new session is created: close the least recently used ones until there
    /// is room for it. Returns how many were closed.
    pub async fn make_room(&self) -> usize {
        let live: Vec<String> = self
            .manager
            .sessions
            .read()
            .await
            .keys()
            .map(|k| k.to_string())
            .collect();
        if live.len() < self.max {
            return 0;
        }
        let victims: Vec<String> = {
            let mut last = self.last_used.lock().expect("sessions lock");
            last.retain(|k, _| live.contains(k));
            let mut by_age: Vec<(Option<Instant>, &String)> =
                live.iter().map(|k| (last.get(k).copied(), k)).collect();
            // Never used since creation sorts first (None < Some).
            by_age.sort();
            by_age
                .into_iter()
                .take(live.len() + 1 - self.max)
                .map(|(_, k)| k.clone())
                .collect()
        };
        for v in &victims {
            self.close(v).await;
        }
        victims.len()
    }

    pub async fn close(&self, id: &str) {
        let sid = id.to_string().into();
        if let Err(e) = self.manager.close_session(&sid).await {
            tracing::debug!(session = id, error = %e, "closing a session failed");
        }
        self.last_used.lock().expect("sessions lock").remove(id);
        self.kept.forget(id);
        self.live.forget(id);
    }
}
