//! Finding the owner of a home, and starting it when none answers (SPEC §2): what the
//! command line, the stdio bridge and the session-start hook do before they give up.
//!
//! - this file: where the owner is ([`locate`]), whether it answers ([`answers`]), and
//!   [`ensure`], which starts one when none does;
//! - [`spawn`]: `medulla serve` detached (its own session, output to the home's log
//!   directory), and the wait until it answers.
//!
//! Exactly one owner per home, however many callers race: a caller takes
//! `$MEDULLA_HOME/autostart.lock` before it looks again and starts one, so the loser
//! finds the winner's owner answering and starts nothing; the owner itself holds
//! `$MEDULLA_HOME/owner.lock` for its whole life, so even a second `medulla serve` typed
//! by hand refuses to run beside it.

pub mod raw;
mod spawn;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::config::DEFAULT_LISTEN;

pub use spawn::start;

/// The version this binary was built as: the package version with its commit
/// (`0.1.0+1a2b3c4d5e6f`; build.rs), what `/api/health` and every answer's
/// `Medulla-Version` header carry.
pub const VERSION: &str = env!("MEDULLA_VERSION");

/// The file the running owner writes its address into.
pub const OWNER_FILE: &str = "owner.json";
/// The lock callers take around "look, then start one".
pub const AUTOSTART_LOCK: &str = "autostart.lock";
/// The lock the owner holds while it runs.
pub const OWNER_LOCK: &str = "owner.lock";
/// Set (to anything but `0` or nothing) to never start an owner from a client.
pub const NO_AUTOSTART_ENV: &str = "MEDULLA_NO_AUTOSTART";

/// How long a caller waits for an owner it started (or another caller started) to
/// answer: model loading and opening the medulla take well under a second; a cold disk
/// can take a few.
pub const WAIT: Duration = Duration::from_secs(10);

/// Where the owner of a home is to be reached, and where that was learned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub url: String,
    pub from: Source,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `--url` or `MEDULLA_URL`: the caller named it; nothing is started for it.
    Explicit,
    /// The running owner's `owner.json`.
    OwnerFile,
    /// `listen` in `config.toml`.
    Config,
    /// The default address.
    Default,
}

/// Why no owner answers, when a caller wanted one.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("no medulla owner is running at {url}, and autostart is off ({why}): start one with `medulla serve`, or turn autostart back on")]
    Off { url: String, why: &'static str },
    #[error("no medulla owner is running at {url} (named by --url or MEDULLA_URL, so none is started for it): start one there with `medulla serve --listen ADDR`, or drop the URL to use this home's owner")]
    Explicit { url: String },
    #[error(
        "the medulla owner started for {home} did not answer within {secs} s: see its log, {log}"
    )]
    Timeout {
        home: String,
        secs: u64,
        log: String,
    },
    #[error(
        "the medulla owner started for {home} exited at once ({status}): {tail}\nits log: {log}"
    )]
    Exited {
        home: String,
        status: String,
        tail: String,
        log: String,
    },
    #[error("cannot start a medulla owner for {home}: {detail}")]
    Spawn { home: String, detail: String },
    #[error("the medulla owner at {url} is running but did not answer in time (stalled or busy): a hook does not wait for it; `medulla status` says more, `medulla restart` starts it again")]
    NotAnswering { url: String },
}

impl LaunchError {
    /// The stable code a `--json` caller reads.
    pub fn code(&self) -> &'static str {
        match self {
            LaunchError::Off { .. } | LaunchError::Explicit { .. } => "owner_not_running",
            LaunchError::Timeout { .. }
            | LaunchError::Exited { .. }
            | LaunchError::Spawn { .. } => "owner_did_not_start",
            LaunchError::NotAnswering { .. } => "owner_not_answering",
        }
    }
}

/// Where the owner of `home` listens: `explicit`, else its `owner.json`, else
/// `config.toml`'s `listen` (unless it asks for any free port), else the default.
pub fn locate(home: &Path, explicit: Option<&str>) -> Located {
    if let Some(u) = explicit.filter(|u| !u.is_empty()) {
        return Located {
            url: u.trim_end_matches('/').to_string(),
            from: Source::Explicit,
        };
    }
    if let Some(url) = owner_file_url(home) {
        return Located {
            url,
            from: Source::OwnerFile,
        };
    }
    if let Some(addr) = configured_listen(home).filter(|a| a.port() != 0) {
        return Located {
            url: format!("http://{addr}"),
            from: Source::Config,
        };
    }
    Located {
        url: format!("http://{DEFAULT_LISTEN}"),
        from: Source::Default,
    }
}

/// The URL in the home's `owner.json`, when it holds one.
pub fn owner_file_url(home: &Path) -> Option<String> {
    let text = std::fs::read_to_string(home.join(OWNER_FILE)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["url"].as_str().map(str::to_string)
}

/// The home's `config.toml`, read leniently: a client only needs a key or two from it
/// (a broken file is the owner's to report, when it starts).
fn client_config(home: &Path) -> Option<toml::Table> {
    let text = std::fs::read_to_string(home.join("config.toml")).ok()?;
    toml::from_str(&text).ok()
}

/// `listen` from the home's `config.toml`.
fn configured_listen(home: &Path) -> Option<SocketAddr> {
    client_config(home)?.get("listen")?.as_str()?.parse().ok()
}

/// Why autostart is off for `home`, or `None` when it is on.
pub fn autostart_off(home: &Path) -> Option<&'static str> {
    if std::env::var(NO_AUTOSTART_ENV).is_ok_and(|v| !v.is_empty() && v != "0") {
        return Some("MEDULLA_NO_AUTOSTART is set");
    }
    (client_config(home)?.get("autostart")?.as_bool() == Some(false))
        .then_some("autostart = false in config.toml")
}

/// Are the prompt and file hooks turned off (`hints = false` in `config.toml`)?
pub fn hints_off(home: &Path) -> bool {
    client_config(home).and_then(|c| c.get("hints")?.as_bool()) == Some(false)
}

/// Is the end-of-turn nudge turned off (`nudge = false` in `config.toml`)?
pub fn nudge_off(home: &Path) -> bool {
    client_config(home).and_then(|c| c.get("nudge")?.as_bool()) == Some(false)
}

/// Does the owner of `home` answer `GET /api/health` at `url` within `wait`? Blocking;
/// a plain HTTP/1.1 request on a socket of its own, so it needs no runtime.
pub fn answers(home: &Path, url: &str, wait: Duration) -> bool {
    health(home, url, wait).is_some()
}

/// The owner's health answer at `url`, when it gives one within `wait` (presenting the
/// home's client token, for an owner that asks for it: SPEC §15).
pub fn health(home: &Path, url: &str, wait: Duration) -> Option<serde_json::Value> {
    let until = Instant::now() + wait;
    let (status, v) = raw::request(home, url, "GET", "/api/health", &[], None, until)?;
    (status == 200 && v["status"] == "ok").then_some(v)
}

/// The owner serving `home`, as its `owner.json` says and its health confirms (the pid
/// it answers with is the one the file names): its pid and URL.
pub fn running(home: &Path) -> Option<(u64, String)> {
    let text = std::fs::read_to_string(home.join(OWNER_FILE)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let (pid, url) = (v["pid"].as_u64()?, v["url"].as_str()?.to_string());
    let h = health(home, &url, Duration::from_secs(2))?;
    (h["pid"].as_u64() == Some(pid)).then_some((pid, url))
}

/// The URL of an owner for `home` that answers: the one running, else one started now
/// (unless autostart is off, or the caller named a URL of its own).
pub fn ensure(home: &Path, explicit: Option<&str>) -> Result<String, LaunchError> {
    let found = locate(home, explicit);
    if answers(home, &found.url, Duration::from_secs(2)) {
        return Ok(found.url);
    }
    if found.from == Source::Explicit {
        return Err(LaunchError::Explicit { url: found.url });
    }
    if let Some(why) = autostart_off(home) {
        return Err(LaunchError::Off {
            url: found.url,
            why,
        });
    }
    start(home)
}

/// [`ensure`] for a hook, which must be done by `until`: the owner running is asked
/// until then and no longer; one that holds the home but does not answer (stopped,
/// stalled) is given up on, never waited for nor replaced. Only when no owner runs at
/// all is one started (a session should open with its memory), which takes what a start
/// takes.
pub fn ensure_by(
    home: &Path,
    explicit: Option<&str>,
    until: Instant,
) -> Result<String, LaunchError> {
    let found = locate(home, explicit);
    let wait = until.saturating_duration_since(Instant::now());
    if answers(home, &found.url, wait) {
        return Ok(found.url);
    }
    if found.from == Source::Explicit {
        return Err(LaunchError::Explicit { url: found.url });
    }
    if let Some(why) = autostart_off(home) {
        return Err(LaunchError::Off {
            url: found.url,
            why,
        });
    }
    match hold_owner_lock(home) {
        Ok(Some(lock)) => drop(lock),
        _ => return Err(LaunchError::NotAnswering { url: found.url }),
    }
    start(home)
}

/// Said once per process: the owner answering is another build than this one.
static VERSION_NOTED: AtomicBool = AtomicBool::new(false);

/// Note on stderr (once) an owner of another build than this binary, from the version
/// header of its answer.
pub fn note_version(owner: Option<&str>) {
    let Some(owner) = owner.filter(|v| *v != VERSION) else {
        return;
    };
    if !VERSION_NOTED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "medulla: the running owner is {owner}, this binary is {VERSION}: `medulla restart` restarts the owner from this binary"
        );
    }
}

/// The home's owner lock, held by a running owner for its whole life; `None` when
/// another process holds it (an owner already runs, or is starting, on this home).
pub fn hold_owner_lock(home: &Path) -> std::io::Result<Option<std::fs::File>> {
    try_lock(&home.join(OWNER_LOCK))
}

/// An exclusive lock on `path` (created when missing), or `None` when another holds it.
fn try_lock(path: &Path) -> std::io::Result<Option<std::fs::File>> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_found_where_it_said_then_where_config_says_then_by_default() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        assert_eq!(locate(h, None).from, Source::Default);
        assert_eq!(
            locate(h, None).url,
            format!("http://{DEFAULT_LISTEN}"),
            "nothing on disk: the default"
        );
        std::fs::write(h.join("config.toml"), "listen = \"127.0.0.1:0\"\n").unwrap();
        assert_eq!(
            locate(h, None).from,
            Source::Default,
            "any free port cannot be dialled"
        );
        std::fs::write(h.join("config.toml"), "listen = \"127.0.0.1:4444\"\n").unwrap();
        assert_eq!(locate(h, None).url, "http://127.0.0.1:4444");
        std::fs::write(
            h.join(OWNER_FILE),
            r#"{"url": "http://127.0.0.1:5555", "pid": 1}"#,
        )
        .unwrap();
        assert_eq!(
            locate(h, None),
            Located {
                url: "http://127.0.0.1:5555".into(),
                from: Source::OwnerFile
            }
        );
        assert_eq!(
            locate(h, Some("http://127.0.0.1:6666/")).url,
            "http://127.0.0.1:6666"
        );
    }

    #[test]
    fn autostart_is_turned_off_by_config() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        if std::env::var_os(NO_AUTOSTART_ENV).is_some() {
            return; // the environment decides first; nothing to learn from the file here
        }
        assert_eq!(autostart_off(h), None);
        std::fs::write(h.join("config.toml"), "autostart = false\n").unwrap();
        assert_eq!(autostart_off(h), Some("autostart = false in config.toml"));
    }

    #[test]
    fn a_second_holder_of_the_owner_lock_is_refused_until_the_first_lets_go() {
        let home = tempfile::tempdir().unwrap();
        let first = hold_owner_lock(home.path()).unwrap();
        assert!(first.is_some());
        assert!(hold_owner_lock(home.path()).unwrap().is_none());
        drop(first);
        assert!(hold_owner_lock(home.path()).unwrap().is_some());
    }

    #[test]
    fn nothing_listening_does_not_answer() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        assert!(!answers(
            h,
            "http://127.0.0.1:9",
            Duration::from_millis(200)
        ));
        assert!(!answers(h, "not a url", Duration::from_millis(200)));
    }
}
