//! Per-brain counters (sessions, recalls, writes, beats) and their weekly series, kept on
//! disk beside the brain (`counters.json`) so a restart loses nothing but the last
//! minute. Per-brain surfaces show them per brain, never summed into an owner-wide number
//! on a brain's row (INV-7); doctor sums the weeks, captioned as owner-wide.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use brains::Clock;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const FILE: &str = "counters.json";
/// When each claim was last used, beside the counters.
pub const USAGE_FILE: &str = "usage.json";

/// Counts of one ISO week (or of all time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    #[serde(default)]
    pub sessions: u64,
    #[serde(default)]
    pub recalls: u64,
    #[serde(default)]
    pub writes: u64,
    #[serde(default)]
    pub beats: u64,
    /// Prompts the prompt hook asked about (SPEC §5).
    #[serde(default)]
    pub hint_prompts: u64,
    /// Files the file hook asked about.
    #[serde(default)]
    pub hint_files: u64,
    /// Claims the hooks added to an agent's context.
    #[serde(default)]
    pub hints_added: u64,
    /// Of those, the ones the agent then graded, superseded or retired in the session.
    #[serde(default)]
    pub hints_used: u64,
    /// Of those, the ones the agent then named in its own words (its slug in the
    /// session's transcript, as the end-of-turn hook reads it).
    #[serde(default)]
    pub hints_cited: u64,
    /// Client sessions medulla added context to (a digest or a hint).
    #[serde(default)]
    pub context_sessions: u64,
    /// Tokens (estimated) the session-start digests added.
    #[serde(default)]
    pub digest_tokens: u64,
    /// Tokens (estimated) the prompt and file hints added.
    #[serde(default)]
    pub hint_tokens: u64,
    /// Hints cut to a count by their session's budget.
    #[serde(default)]
    pub hints_capped: u64,
    /// Live claims the last time the week was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_claims: Option<u64>,
}

/// What `counters.json` holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Record {
    #[serde(default)]
    pub totals: Counts,
    /// `YYYY-Www` → that week's counts.
    #[serde(default)]
    pub weeks: BTreeMap<String, Counts>,
}

impl Record {
    /// Read a brain's record; a missing or unreadable file is an empty one.
    pub fn read(dir: &Path) -> Record {
        std::fs::read(dir.join(FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }
}

/// What `usage.json` holds: when each claim was last used, and since when uses are
/// recorded (a claim with no use recorded is known unused only for that long).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Usage {
    /// When recording began, ms since the epoch.
    since: i64,
    used: HashMap<String, i64>,
}

impl Usage {
    /// The file as written, or (absent, unreadable, or a bare map from before `since`
    /// was kept) recording from `now`: nothing is taken as unused for longer than it
    /// was watched.
    fn read(dir: &Path, now: i64) -> (Usage, bool) {
        let bytes = std::fs::read(dir.join(USAGE_FILE)).ok();
        if let Some(u) = bytes
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok())
        {
            return (u, false);
        }
        let used = bytes
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or_default();
        (Usage { since: now, used }, true)
    }
}

#[derive(Debug)]
pub struct BrainCounters {
    dir: PathBuf,
    clock: Arc<dyn Clock>,
    record: Mutex<Record>,
    dirty: AtomicBool,
    /// When each claim (by slug) was last used: shown as a `seek` row or by a hint,
    /// cited, graded. What tending reads to propose retiring a claim aged out and unused
    /// (SPEC §14). Kept in `usage.json`.
    used: Mutex<Usage>,
    used_dirty: AtomicBool,
}

impl BrainCounters {
    /// The counters of the store in `dir`, as its file last left them.
    pub fn load(dir: PathBuf, clock: Arc<dyn Clock>) -> BrainCounters {
        let (used, fresh) = Usage::read(&dir, clock.now_ms());
        BrainCounters {
            record: Mutex::new(Record::read(&dir)),
            dir,
            clock,
            dirty: AtomicBool::new(false),
            used: Mutex::new(used),
            used_dirty: AtomicBool::new(fresh),
        }
    }

    /// These claims were used now.
    pub fn used<'a>(&self, slugs: impl IntoIterator<Item = &'a str>) {
        let now = self.clock.now_ms();
        let mut u = self.used.lock().expect("usage lock");
        for s in slugs {
            u.used.insert(s.to_string(), now);
        }
        self.used_dirty.store(true, Ordering::Relaxed);
    }

    /// When each claim was last used, by slug.
    pub fn last_used(&self) -> HashMap<String, i64> {
        self.used.lock().expect("usage lock").used.clone()
    }

    /// Since when uses are recorded for this store.
    pub fn used_since(&self) -> i64 {
        self.used.lock().expect("usage lock").since
    }

    fn bump(&self, f: impl Fn(&mut Counts)) {
        let week = crate::clock::iso_week(self.clock.now_ms());
        let mut r = self.record.lock().expect("counters lock");
        f(&mut r.totals);
        f(r.weeks.entry(week).or_default());
        self.dirty.store(true, Ordering::Relaxed);
    }

    /// An MCP session's first routed call landed here.
    pub fn session(&self) {
        self.bump(|c| c.sessions += 1)
    }
    pub fn recalled(&self) {
        self.bump(|c| c.recalls += 1)
    }
    pub fn wrote(&self) {
        self.bump(|c| c.writes += 1)
    }
    /// A `north` beat was served.
    pub fn beat(&self) {
        self.bump(|c| c.beats += 1)
    }

    /// The prompt hook asked.
    pub fn hint_prompt(&self) {
        self.bump(|c| c.hint_prompts += 1)
    }
    /// The file hook asked.
    pub fn hint_file(&self) {
        self.bump(|c| c.hint_files += 1)
    }
    /// A hint added `n` claims.
    pub fn hints_added(&self, n: u64) {
        self.bump(|c| c.hints_added += n)
    }
    /// The agent used `n` claims hints had added.
    pub fn hints_used(&self, n: u64) {
        self.bump(|c| c.hints_used += n)
    }
    /// The agent cited a claim a hint added.
    pub fn hint_cited(&self) {
        self.bump(|c| c.hints_cited += 1)
    }
    /// medulla added context to a client session: `first` its first, `digest` and
    /// `hint` the tokens, `capped` whether a hint was cut to a count by the budget.
    pub fn context_added(&self, first: bool, digest: u64, hint: u64, capped: bool) {
        self.bump(|c| {
            c.context_sessions += u64::from(first);
            c.digest_tokens += digest;
            c.hint_tokens += hint;
            c.hints_capped += u64::from(capped);
        })
    }

    /// Record how many live claims the store holds this week.
    pub fn note_live(&self, n: u64) {
        let week = crate::clock::iso_week(self.clock.now_ms());
        let mut r = self.record.lock().expect("counters lock");
        let w = r.weeks.entry(week).or_default();
        if w.live_claims != Some(n) {
            w.live_claims = Some(n);
            self.dirty.store(true, Ordering::Relaxed);
        }
    }

    pub fn totals(&self) -> Counts {
        self.record.lock().expect("counters lock").totals
    }

    pub fn sessions(&self) -> u64 {
        self.totals().sessions
    }
    pub fn recalls(&self) -> u64 {
        self.totals().recalls
    }
    pub fn writes(&self) -> u64 {
        self.totals().writes
    }
    pub fn beats(&self) -> u64 {
        self.totals().beats
    }

    /// Write the files when something changed since the last write (atomically).
    pub fn flush(&self) -> std::io::Result<()> {
        if self.used_dirty.swap(false, Ordering::Relaxed) && self.dir.is_dir() {
            let bytes = serde_json::to_vec(&*self.used.lock().expect("usage lock"))
                .expect("usage serializes");
            let tmp = self.dir.join(format!("{USAGE_FILE}.tmp"));
            let done = std::fs::write(&tmp, bytes)
                .and_then(|_| std::fs::rename(&tmp, self.dir.join(USAGE_FILE)));
            if let Err(e) = done {
                self.used_dirty.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        if !self.dirty.swap(false, Ordering::Relaxed) {
            return Ok(());
        }
        let bytes = {
            let r = self.record.lock().expect("counters lock");
            serde_json::to_vec_pretty(&*r).expect("counters serialize")
        };
        if !self.dir.is_dir() {
            return Ok(());
        }
        let tmp = self.dir.join(format!("{FILE}.tmp"));
        let done =
            std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, self.dir.join(FILE)));
        if done.is_err() {
            self.dirty.store(true, Ordering::Relaxed);
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brains::FixedClock;

    #[test]
    fn counts_persist_per_week_and_survive_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FixedClock::new(1_790_000_000_000));
        let c = BrainCounters::load(dir.path().to_path_buf(), clock.clone());
        c.beat();
        c.wrote();
        clock.advance(7 * 86_400_000);
        c.beat();
        c.note_live(12);
        c.flush().unwrap();
        let again = BrainCounters::load(dir.path().to_path_buf(), clock);
        assert_eq!(again.beats(), 2);
        assert_eq!(again.writes(), 1);
        let r = Record::read(dir.path());
        assert_eq!(r.weeks.len(), 2, "{r:?}");
        again.used(["billing-rule", "deploy"]);
        again.flush().unwrap();
        let third = BrainCounters::load(dir.path().to_path_buf(), Arc::new(FixedClock::new(0)));
        assert_eq!(third.last_used().len(), 2, "usage survives a reload");
        assert_eq!(
            third.used_since(),
            1_790_000_000_000,
            "recorded since the first load, not the last"
        );
        // A bare map (before `since` was kept): recorded from now, the uses kept.
        std::fs::write(dir.path().join(USAGE_FILE), r#"{"deploy": 5}"#).unwrap();
        let fourth = BrainCounters::load(dir.path().to_path_buf(), Arc::new(FixedClock::new(9)));
        assert_eq!((fourth.used_since(), fourth.last_used()["deploy"]), (9, 5));
        assert_eq!(r.weeks.values().last().unwrap().live_claims, Some(12));
    }
}
