//! The owner's own life, as `/api/health` and `medulla status` tell it: which build runs,
//! since when, from which binary (and whether that file has been replaced since), and who
//! keeps it running (a client that started it, a service manager, or a person).

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::launch::VERSION;

/// Who started the owner, and so who starts it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Keeper {
    /// `medulla serve` in a terminal (or a script).
    Person,
    /// A client found no owner and started this one (`medulla serve --detached`).
    Client,
    /// The systemd user unit (`medulla service install`).
    Systemd,
    /// The launchd agent (`medulla service install`).
    Launchd,
}

impl Keeper {
    /// Read from how the process was started: the service managers set variables of
    /// their own in their children's environment.
    pub fn of_this_process(detached: bool) -> Keeper {
        if std::env::var_os("INVOCATION_ID").is_some()
            && std::env::var_os("JOURNAL_STREAM").is_some()
        {
            Keeper::Systemd
        } else if std::env::var("XPC_SERVICE_NAME").is_ok_and(|n| n.contains("medulla")) {
            Keeper::Launchd
        } else if detached {
            Keeper::Client
        } else {
            Keeper::Person
        }
    }
}

/// Facts fixed when the owner starts.
#[derive(Debug, Clone)]
pub struct Life {
    pub started_at_ms: i64,
    pub keeper: Keeper,
    pub exe: Option<PathBuf>,
    /// The binary's modification time when the owner started.
    exe_stamp: Option<SystemTime>,
}

impl Life {
    pub fn begin(keeper: Keeper) -> Life {
        let exe = std::env::current_exe().ok();
        Life {
            started_at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64),
            keeper,
            exe_stamp: exe.as_deref().and_then(stamp),
            exe,
        }
    }

    /// Has the file this owner runs from been rebuilt or replaced since it started?
    pub fn binary_changed(&self) -> bool {
        match (&self.exe, self.exe_stamp) {
            (Some(exe), Some(then)) => stamp(exe) != Some(then),
            _ => false,
        }
    }
}

impl Default for Life {
    fn default() -> Self {
        Life::begin(Keeper::Person)
    }
}

/// A path's modification time; on Linux a replaced running binary reads as
/// `… (deleted)` and has none, which counts as changed.
fn stamp(p: &std::path::Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}
