//! The team as answers show it: connected or offline since when, what waits to be sent,
//! who the members are, which brains are shared. Kept by the sync actor; read by
//! request handlers without a message.

use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shares::Share;

/// What every answer carries when a team is joined.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TeamNote {
    /// `connected`, or `offline` (reads serve the mirror, writes queue).
    pub status: String,
    /// Offline since, ms since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<i64>,
    /// Acts written here and not yet in the team's log.
    pub queued: u64,
    /// True only when every act written here is in the team's log (nothing queued, and
    /// the database reached): never said of what is only queued.
    pub shared: bool,
}

/// `team status`: everything about the team this owner knows.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Default)]
pub struct TeamView {
    /// The database, without its password.
    pub url: String,
    /// This owner's member role.
    pub member: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<i64>,
    /// Why it is offline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Acts written here and not yet in the team's log.
    pub queued: u64,
    /// Acts the hygiene floor kept on this machine.
    pub refused: u64,
    /// Entries of the team's log not yet applied here (as of the last pass).
    pub lag: u64,
    /// The last pass that reached the database, ms since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_sync: Option<i64>,
    pub members: Vec<String>,
    /// This owner's shared brains.
    pub shared: Vec<Share>,
    /// Brains the team shares, this owner's or not: (key, label).
    pub team_brains: Vec<(String, String)>,
}

/// The live status, behind a lock held for microseconds.
#[derive(Debug)]
pub struct TeamStatus {
    view: Mutex<TeamView>,
    /// Each shared store's conflicted versions, kept when the log is applied.
    pub conflicts: super::conflicts::Conflicts,
}

impl TeamStatus {
    pub fn new(url: String, member: String, team_dir: &std::path::Path) -> TeamStatus {
        TeamStatus {
            view: Mutex::new(TeamView {
                url,
                member,
                status: "connecting".into(),
                ..Default::default()
            }),
            conflicts: super::conflicts::Conflicts::load(team_dir),
        }
    }

    pub fn view(&self) -> TeamView {
        self.view.lock().expect("team status lock").clone()
    }

    pub fn note(&self) -> TeamNote {
        let v = self.view.lock().expect("team status lock");
        TeamNote {
            status: if v.status == "connected" {
                "connected".into()
            } else {
                "offline".into()
            },
            since: v.since,
            queued: v.queued,
            shared: v.status == "connected" && v.queued == 0,
        }
    }

    pub fn update(&self, f: impl FnOnce(&mut TeamView)) {
        f(&mut self.view.lock().expect("team status lock"));
    }

    pub fn connected(&self, now: i64) {
        self.update(|v| {
            v.status = "connected".into();
            v.since = None;
            v.error = None;
            v.last_sync = Some(now);
        });
    }

    pub fn offline(&self, now: i64, error: String) {
        self.update(|v| {
            if v.status != "offline" {
                v.since = Some(now);
            }
            v.status = "offline".into();
            v.error = Some(error);
        });
    }
}
