//! What the hints showed each client session (SPEC §5): a claim is added at most once a
//! session. Bounded: at most [`MAX_SESSIONS`] sessions (the least recently used go
//! first) and [`MAX_SHOWN`] claims a session; a session idle past its time is forgotten.
//! The prompt's text is never kept, only which claim versions were shown.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::store_id::Fingerprint;

pub const MAX_SESSIONS: usize = 1024;
pub const MAX_SHOWN: usize = 4096;

/// What the agent did with a claim a hint added.
#[derive(Debug, Default, Clone, Copy)]
struct Use {
    /// Graded, superseded or retired it.
    acted: bool,
    /// Named it in its own words (its slug in the transcript).
    cited: bool,
}

/// One client session's record.
#[derive(Debug)]
struct Session {
    /// Versions shown (`<store>:<slug>@<created>`).
    shown: HashSet<String>,
    /// Claims a hint added, by brain and slug, and what the agent did with each since.
    added: HashMap<(Option<Fingerprint>, String), Use>,
    /// Tokens (estimated) medulla added to the session: its digest and its hints.
    tokens: u64,
    last: Instant,
}

/// Every session's record.
#[derive(Debug)]
pub struct Ledger {
    idle: Duration,
    sessions: Mutex<HashMap<String, Session>>,
}

impl Ledger {
    pub fn new(idle: Duration) -> Ledger {
        Ledger {
            idle,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// Run `f` on a session's record, made now if new; forgets idle ones first.
    fn with<T>(&self, session: &str, f: impl FnOnce(&mut Session) -> T) -> T {
        let mut all = self.sessions.lock().expect("ledger lock");
        let now = Instant::now();
        all.retain(|_, s| now.duration_since(s.last) < self.idle);
        if !all.contains_key(session) && all.len() >= MAX_SESSIONS {
            if let Some(oldest) = all
                .iter()
                .min_by_key(|(_, s)| s.last)
                .map(|(k, _)| k.clone())
            {
                all.remove(&oldest);
            }
        }
        let s = all.entry(session.to_string()).or_insert_with(|| Session {
            shown: HashSet::new(),
            added: HashMap::new(),
            tokens: 0,
            last: now,
        });
        s.last = now;
        f(s)
    }

    /// Which of `versions` this session was not shown yet, in order.
    pub fn unseen(&self, session: &str, versions: &[String]) -> Vec<bool> {
        self.with(session, |s| {
            versions.iter().map(|v| !s.shown.contains(v)).collect()
        })
    }

    /// Mark versions shown (by a hint, or by the session-start digest); `added` names the
    /// claims a hint added, for the counts of how hints are used.
    pub fn shown(
        &self,
        session: &str,
        versions: impl IntoIterator<Item = String>,
        added: impl IntoIterator<Item = (Option<Fingerprint>, String)>,
    ) {
        self.with(session, |s| {
            for v in versions {
                if s.shown.len() >= MAX_SHOWN {
                    break;
                }
                s.shown.insert(v);
            }
            for a in added {
                if s.added.len() < MAX_SHOWN {
                    s.added.entry(a).or_default();
                }
            }
        })
    }

    /// The agent acted on a claim of `brain` (graded, superseded, retired it): the number
    /// of live sessions a hint had added it to that had not used it yet (each counted
    /// once).
    pub fn used(&self, brain: Option<&Fingerprint>, slug: &str) -> u64 {
        let mut all = self.sessions.lock().expect("ledger lock");
        let now = Instant::now();
        all.retain(|_, s| now.duration_since(s.last) < self.idle);
        let key = (brain.cloned(), slug.to_string());
        let mut n = 0;
        for s in all.values_mut() {
            if let Some(u) = s.added.get_mut(&key) {
                if !u.acted {
                    u.acted = true;
                    n += 1;
                }
            }
        }
        n
    }

    /// The slugs a hint added to this session that the agent has not cited yet.
    pub fn not_cited(&self, session: &str) -> Vec<String> {
        let all = self.sessions.lock().expect("ledger lock");
        let Some(s) = all.get(session) else {
            return Vec::new();
        };
        let mut v: Vec<String> = s
            .added
            .iter()
            .filter(|(_, u)| !u.cited)
            .map(|((_, slug), _)| slug.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The agent cited these slugs in this session: for each claim a hint added under one
    /// of them and not counted before, its brain (`None`: the medulla's).
    pub fn cited(&self, session: &str, slugs: &[String]) -> Vec<Option<Fingerprint>> {
        let mut all = self.sessions.lock().expect("ledger lock");
        let Some(s) = all.get_mut(session) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for ((fp, slug), u) in s.added.iter_mut() {
            if !u.cited && slugs.contains(slug) {
                u.cited = true;
                out.push(fp.clone());
            }
        }
        out
    }

    /// The tokens medulla added to this session so far.
    pub fn spent(&self, session: &str) -> u64 {
        self.with(session, |s| s.tokens)
    }

    /// medulla adds `tokens` more to the session: whether they are its first.
    pub fn spend(&self, session: &str, tokens: u64) -> bool {
        self.with(session, |s| {
            let first = s.tokens == 0;
            s.tokens += tokens;
            first && tokens > 0
        })
    }

    /// Sessions remembered now.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.sessions.lock().expect("ledger lock").len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_is_unseen_once_and_sessions_are_bounded_and_forgotten() {
        let l = Ledger::new(Duration::from_secs(3600));
        let v = vec!["p:a@1".to_string(), "p:b@2".to_string()];
        assert_eq!(l.unseen("s1", &v), [true, true]);
        l.shown("s1", [v[0].clone()], [(None, "a".to_string())]);
        assert_eq!(l.unseen("s1", &v), [false, true]);
        assert_eq!(
            l.unseen("s2", &v),
            [true, true],
            "another session sees it again"
        );
        assert_eq!(l.used(None, "a"), 1);
        assert_eq!(l.used(None, "a"), 0, "counted once a session");
        assert_eq!(l.not_cited("s1"), ["a"]);
        assert_eq!(l.cited("s1", &["a".to_string(), "b".to_string()]), [None]);
        assert!(l.not_cited("s1").is_empty());
        assert!(
            l.cited("s1", &["a".to_string()]).is_empty(),
            "cited once a session"
        );
        assert_eq!(l.spent("s1"), 0);
        assert!(l.spend("s1", 120), "the session's first context");
        assert!(!l.spend("s1", 30));
        assert_eq!(l.spent("s1"), 150);
        for i in 0..MAX_SESSIONS + 10 {
            l.unseen(&format!("x{i}"), &v);
        }
        assert!(l.len() <= MAX_SESSIONS);
        // An idle time of zero: every session is idle by the next call.
        let quick = Ledger::new(Duration::ZERO);
        quick.shown("s", [v[0].clone()], []);
        assert_eq!(
            quick.unseen("s", &v),
            [true, true],
            "idle sessions are forgotten"
        );
    }
}
