//! Talking to the service manager: whether it runs for this user, the commands that load,
//! start, stop and unload the service, and its view of the service. `systemctl --user`
//! on Linux, `launchctl` in the `gui/<uid>` domain on macOS. With
//! `MEDULLA_SERVICE_MANAGER=none` (for tests) no manager is ever called.

use std::process::Command;

use super::unit::{Manager, LABEL, UNIT};

/// Set to `none` to never call systemctl or launchctl (tests use it, so that a machine
/// whose user manager runs never gets a real service enabled).
pub const ENV: &str = "MEDULLA_SERVICE_MANAGER";

/// Whether the manager can be asked.
#[derive(Debug, Clone)]
pub enum Reach {
    Running,
    /// It does not run for this user; why, in words.
    NotRunning(String),
    /// `MEDULLA_SERVICE_MANAGER=none`.
    Skipped,
}

/// One command, and whether its failure is expected (e.g. stopping what is not loaded).
#[derive(Debug, Clone)]
pub struct Step {
    pub argv: Vec<String>,
    pub may_fail: bool,
}

impl Step {
    fn new(argv: &[&str], may_fail: bool) -> Step {
        Step {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            may_fail,
        }
    }

    /// The command as a user would type it.
    pub fn shown(&self) -> String {
        self.argv
            .iter()
            .map(|a| {
                if a.chars()
                    .any(|c| c.is_whitespace() || "'\"$&;<>|".contains(c))
                {
                    format!("'{}'", a.replace('\'', r"'\''"))
                } else {
                    a.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Run it: `Err(what it said)` when it failed.
    pub fn run(&self) -> Result<String, String> {
        let out = Command::new(&self.argv[0])
            .args(&self.argv[1..])
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.argv[0]))?;
        let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
        if out.status.success() {
            Ok(text(&out.stdout))
        } else {
            let err = text(&out.stderr);
            Err(if err.is_empty() {
                format!("{} ({})", text(&out.stdout), out.status)
            } else {
                err
            })
        }
    }
}

/// The user's id, for launchd's `gui/<uid>` domain.
fn uid() -> String {
    Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "$(id -u)".into())
}

fn domain() -> String {
    format!("gui/{}", uid())
}

/// Whether `manager` runs for this user.
pub fn reach(manager: Manager) -> Reach {
    if std::env::var(ENV).is_ok_and(|v| v == "none") {
        return Reach::Skipped;
    }
    let probe = match manager {
        Manager::Systemd => Step::new(&["systemctl", "--user", "show-environment"], false),
        Manager::Launchd => Step::new(&["launchctl", "print", &domain()], false),
    };
    match probe.run() {
        Ok(_) => Reach::Running,
        Err(why) => Reach::NotRunning(why),
    }
}

/// The commands that (re)load the service from its file and start it. `start` false:
/// enable it for the next login without starting it now.
pub fn install_steps(manager: Manager, file: &str, start: bool) -> Vec<Step> {
    match manager {
        Manager::Systemd => {
            let mut enable = vec!["systemctl", "--user", "enable"];
            if start {
                enable.push("--now");
            }
            enable.push(UNIT);
            vec![
                Step::new(&["systemctl", "--user", "daemon-reload"], false),
                Step::new(&enable, false),
            ]
        }
        Manager::Launchd => {
            let d = domain();
            vec![
                // A loaded agent keeps its old definition until it is booted out.
                Step::new(&["launchctl", "bootout", &format!("{d}/{LABEL}")], true),
                Step::new(&["launchctl", "bootstrap", &d, file], false),
            ]
        }
    }
}

/// After the file changed under a running service: restart it on the new definition
/// (launchd's bootout and bootstrap already did).
pub fn restart_step(manager: Manager) -> Option<Step> {
    match manager {
        Manager::Systemd => Some(Step::new(
            &["systemctl", "--user", "try-restart", UNIT],
            false,
        )),
        Manager::Launchd => None,
    }
}

/// Restart the service's owner (`medulla restart` of an owner the manager keeps), so it
/// stays supervised.
pub fn restart_owner_step(manager: Manager) -> Step {
    match manager {
        Manager::Systemd => Step::new(&["systemctl", "--user", "restart", UNIT], false),
        Manager::Launchd => Step::new(
            &[
                "launchctl",
                "kickstart",
                "-k",
                &format!("{}/{LABEL}", domain()),
            ],
            false,
        ),
    }
}

/// The commands that stop and unload the service, before its file is removed.
pub fn uninstall_steps(manager: Manager) -> Vec<Step> {
    match manager {
        Manager::Systemd => vec![Step::new(
            &["systemctl", "--user", "disable", "--now", UNIT],
            true,
        )],
        Manager::Launchd => vec![Step::new(
            &["launchctl", "bootout", &format!("{}/{LABEL}", domain())],
            true,
        )],
    }
}

/// The commands after the file is gone.
pub fn after_uninstall_steps(manager: Manager) -> Vec<Step> {
    match manager {
        Manager::Systemd => vec![Step::new(&["systemctl", "--user", "daemon-reload"], false)],
        Manager::Launchd => Vec::new(),
    }
}

/// The manager's view of the service.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct View {
    /// systemd's `is-active` (`active`, `inactive`, `failed`), launchd's `state`.
    pub active: Option<String>,
    /// systemd's `is-enabled`; launchd: `loaded` or `not loaded`.
    pub enabled: Option<String>,
    /// The owner's process id under the manager, when it runs.
    pub pid: Option<u32>,
}

fn answer(argv: &[&str]) -> Option<String> {
    let out = Command::new(argv[0]).args(&argv[1..]).output().ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// Ask the (running) manager about the service.
pub fn view(manager: Manager) -> View {
    match manager {
        Manager::Systemd => View {
            active: answer(&["systemctl", "--user", "is-active", UNIT]),
            enabled: answer(&["systemctl", "--user", "is-enabled", UNIT]),
            pid: answer(&[
                "systemctl",
                "--user",
                "show",
                "-p",
                "MainPID",
                "--value",
                UNIT,
            ])
            .and_then(|p| p.parse().ok())
            .filter(|&p| p != 0),
        },
        Manager::Launchd => {
            let printed = Step::new(
                &["launchctl", "print", &format!("{}/{LABEL}", domain())],
                true,
            )
            .run();
            let field = |text: &str, key: &str| {
                text.lines()
                    .find_map(|l| l.trim().strip_prefix(&format!("{key} = ")))
                    .map(str::to_string)
            };
            match printed {
                Ok(text) => View {
                    active: field(&text, "state"),
                    enabled: Some("loaded".into()),
                    pid: field(&text, "pid").and_then(|p| p.parse().ok()),
                },
                Err(_) => View {
                    active: None,
                    enabled: Some("not loaded".into()),
                    pid: None,
                },
            }
        }
    }
}

/// What to run by hand to load and start the service once the manager runs.
pub fn by_hand(manager: Manager, file: &str) -> Vec<String> {
    match manager {
        Manager::Systemd => vec![
            "systemctl --user daemon-reload".into(),
            "systemctl --user enable --now medulla".into(),
        ],
        Manager::Launchd => vec![format!("launchctl bootstrap gui/$(id -u) {file}")],
    }
}
