//! Starting an owner for a home: `medulla serve --detached` in a session of its own, its
//! raw output in `$MEDULLA_HOME/logs/serve.out`, and the wait until it answers — one
//! caller at a time, under the home's autostart lock.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{answers, locate, try_lock, LaunchError, AUTOSTART_LOCK, OWNER_LOCK, WAIT};
use crate::logfile;

/// How often a waiting caller looks again.
const POLL: Duration = Duration::from_millis(20);
/// One look: the owner is local, so an answer takes a millisecond when it comes.
const LOOK: Duration = Duration::from_millis(500);

/// Start an owner for `home` (or wait for the one another caller is starting) and
/// return its URL once it answers.
pub fn start(home: &Path) -> Result<String, LaunchError> {
    let shown = home.display().to_string();
    let spawn_err = |detail: String| LaunchError::Spawn {
        home: shown.clone(),
        detail,
    };
    std::fs::create_dir_all(home)
        .map_err(|e| spawn_err(format!("cannot create the home ({e})")))?;
    let deadline = Instant::now() + WAIT;
    // One caller looks and starts at a time; the others wait here, then find it running.
    let _turn = loop {
        match try_lock(&home.join(AUTOSTART_LOCK)) {
            Ok(Some(f)) => break f,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
            Ok(None) => return Err(timeout(home)),
            Err(e) => return Err(spawn_err(format!("cannot take {AUTOSTART_LOCK} ({e})"))),
        }
    };
    wait_until_it_answers(home, deadline)
}

/// Look until an owner of `home` answers. While another process holds the home's owner
/// lock, it is an owner starting (or one still closing its stores after a stop): wait
/// for it rather than start a second. Once the lock is free and nothing answers, start
/// one, once.
fn wait_until_it_answers(home: &Path, deadline: Instant) -> Result<String, LaunchError> {
    let mut child: Option<Child> = None;
    loop {
        let found = locate(home, None);
        if answers(home, &found.url, LOOK) {
            if let Some(mut c) = child {
                // Reaped when it ends, so a long-lived caller (the bridge) leaves no zombie.
                std::thread::spawn(move || c.wait());
            }
            return Ok(found.url);
        }
        match child.as_mut() {
            Some(c) => {
                if let Ok(Some(status)) = c.try_wait() {
                    return Err(LaunchError::Exited {
                        home: home.display().to_string(),
                        status: status.to_string(),
                        tail: logfile::raw_output_tail(home, 6),
                        log: logfile::raw_output_path(home).display().to_string(),
                    });
                }
            }
            None => {
                let free = super::hold_owner_lock(home).map_err(|e| LaunchError::Spawn {
                    home: home.display().to_string(),
                    detail: format!("cannot read {OWNER_LOCK} ({e})"),
                })?;
                if let Some(lock) = free {
                    drop(lock);
                    child = Some(spawn(home).map_err(|e| LaunchError::Spawn {
                        home: home.display().to_string(),
                        detail: e.to_string(),
                    })?);
                }
            }
        }
        if Instant::now() >= deadline {
            return Err(timeout(home));
        }
        std::thread::sleep(POLL);
    }
}

/// `medulla serve --detached` for `home`: no terminal, no pipes of the caller's (a caller
/// reading our output to its end must not wait for the owner's), its own session.
fn spawn(home: &Path) -> std::io::Result<Child> {
    let exe = std::env::current_exe()?;
    let out = logfile::fresh_raw_output(home)?;
    let err = out.try_clone()?;
    tracing::info!(home = %home.display(), exe = %exe.display(), "starting an owner");
    Command::new(exe)
        .arg("serve")
        .arg("--home")
        .arg(home)
        .arg("--detached")
        // Never keep the caller's directory busy (an unmount, a deleted checkout).
        .current_dir(home)
        .env_remove("MEDULLA_URL")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
}

fn timeout(home: &Path) -> LaunchError {
    LaunchError::Timeout {
        home: home.display().to_string(),
        secs: WAIT.as_secs(),
        log: logfile::path(home).display().to_string(),
    }
}
