//! The agent sessions the client hooks saw, kept in the home so `doctor` can say whether
//! the end-of-turn nudge pays: `sessions/<id>.json` when a session starts (`prime`, the
//! SessionStart hook) and `nudged/<id>` when `nudge` asked it for a debrief, each a small
//! JSON record of the session's directory and times. Files, not the owner: a hook must
//! never wait on more than it needs.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One session as the hooks recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSession {
    pub id: String,
    /// The directory the session works in (the hook's `cwd`).
    pub cwd: String,
    /// When the session started, ms since the epoch.
    pub started_at: i64,
    /// When `nudge` asked it for a debrief, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nudged_at: Option<i64>,
}

/// A session id fit to name a file: a plain token of at most 128 characters.
pub fn plain(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn started_file(home: &Path, id: &str) -> Option<PathBuf> {
    plain(id).then(|| home.join("sessions").join(format!("{id}.json")))
}

/// Where a nudged session is remembered; `None` for an id that is not a plain token.
pub fn nudged_file(home: &Path, id: &str) -> Option<PathBuf> {
    plain(id).then(|| home.join("nudged").join(id))
}

fn write(path: &Path, s: &HookSession) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_vec(s).expect("a session serializes"))
}

/// Record a session's start (kept as first written).
pub fn record_start(home: &Path, id: &str, cwd: &str, at_ms: i64) -> std::io::Result<()> {
    let Some(path) = started_file(home, id) else {
        return Ok(());
    };
    if path.exists() {
        return Ok(());
    }
    let s = HookSession {
        id: id.to_string(),
        cwd: cwd.to_string(),
        started_at: at_ms,
        nudged_at: None,
    };
    write(&path, &s)
}

/// Record that `nudge` asked the session for a debrief (and its start, if no start
/// hook recorded it).
pub fn record_nudge(
    home: &Path,
    id: &str,
    cwd: &str,
    started_at: i64,
    at_ms: i64,
) -> std::io::Result<()> {
    record_start(home, id, cwd, started_at)?;
    let Some(path) = nudged_file(home, id) else {
        return Ok(());
    };
    let s = HookSession {
        id: id.to_string(),
        cwd: cwd.to_string(),
        started_at,
        nudged_at: Some(at_ms),
    };
    write(&path, &s)
}

/// Every session recorded in `home`, nudged or not; unreadable records are skipped.
pub fn read_all(home: &Path) -> Vec<HookSession> {
    let read_dir = |dir: PathBuf| -> Vec<HookSession> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| std::fs::read(e.path()).ok())
            .filter_map(|b| serde_json::from_slice::<HookSession>(&b).ok())
            .collect()
    };
    let mut all = read_dir(home.join("sessions"));
    for n in read_dir(home.join("nudged")) {
        match all.iter_mut().find(|s| s.id == n.id) {
            Some(s) => s.nudged_at = n.nudged_at,
            None => all.push(n),
        }
    }
    all.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nudge_joins_its_session_and_an_unsafe_id_names_no_file() {
        let home = tempfile::tempdir().unwrap();
        record_start(home.path(), "s-1", "/p", 10).unwrap();
        record_start(home.path(), "s-1", "/elsewhere", 99).unwrap();
        record_nudge(home.path(), "s-1", "/p", 10, 50).unwrap();
        record_nudge(home.path(), "s-2", "/q", 20, 60).unwrap();
        record_start(home.path(), "../etc", "/p", 1).unwrap();
        let all = read_all(home.path());
        assert_eq!(all.len(), 2, "{all:?}");
        assert_eq!((all[0].cwd.as_str(), all[0].nudged_at), ("/p", Some(50)));
        assert_eq!((all[1].id.as_str(), all[1].nudged_at), ("s-2", Some(60)));
        assert!(nudged_file(home.path(), "a/b").is_none());
    }
}
