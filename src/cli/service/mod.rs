//! `medulla service install | uninstall | status`: keep the owner running as a user
//! service (a systemd user unit on Linux, a launchd agent on macOS) that runs this very
//! binary's `serve` on the home the user's shell points at.
//!
//! - `unit`: the file's text, rendered for either manager and read back;
//! - `manager`: systemctl and launchctl: whether they run, and what is run through them.
//!
//! An owner already running outside the service is never stopped for the user: stopping
//! the memory agents are using is not what "install" asks for. The service is enabled
//! for the next login and the user is told to `medulla stop` (the hand-over).

mod manager;
mod unit;

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::json;

use super::print::{note, out, paint, BOLD, DIM, GREEN, YELLOW};
use crate::config::default_home;
use manager::{Reach, Step};
use unit::{Manager, Spec};

#[derive(Debug, Subcommand)]
pub enum ServiceCmd {
    /// Write the user service and start it (systemd user unit, or launchd agent)
    Install(DryRun),
    /// Stop the user service and remove its file (nothing installed: nothing to do)
    Uninstall(DryRun),
    /// Whether the service is installed, runs this binary, and what its manager says
    Status {
        /// Print the status as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct DryRun {
    /// Print the file and the commands, and change nothing
    #[arg(long)]
    dry_run: bool,
}

/// Why `medulla service` could not do what it was asked, with the fix.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("medulla service knows systemd (Linux) and launchd (macOS) only: on this system, run `medulla serve` under a supervisor of your own")]
    Unsupported,
    #[error("HOME is not set: set it to your home directory (the service file goes under it)")]
    NoHome,
    #[error("cannot tell where this binary is ({0}): run medulla by its installed path, then `medulla service install` again")]
    NoExe(String),
    #[error("{0} is not valid UTF-8, which a service file cannot name: move it (or the binary) to a plainer path")]
    NotUtf8(String),
    #[error("this medulla runs from a package cache that is cleaned, and its launcher `{program}` is not on the PATH: install medulla (`uv tool install medulla-memory`, `pipx install medulla-memory` or `npm install -g medulla`), then `medulla service install` again")]
    NoLauncher { program: String },
    #[error("cannot write {path} ({detail}): make its directory writable (or point XDG_CONFIG_HOME elsewhere), then run this again")]
    Write { path: String, detail: String },
    #[error("cannot remove {path} ({detail}): remove it by hand")]
    Remove { path: String, detail: String },
    #[error("`{command}` failed: {detail}; run it yourself to see why, then `medulla service install` again")]
    Command { command: String, detail: String },
}

fn this_manager() -> Result<Manager, ServiceError> {
    if cfg!(target_os = "macos") {
        Ok(Manager::Launchd)
    } else if cfg!(target_os = "linux") {
        Ok(Manager::Systemd)
    } else {
        Err(ServiceError::Unsupported)
    }
}

fn utf8(p: &Path) -> Result<String, ServiceError> {
    p.to_str()
        .map(str::to_string)
        .ok_or_else(|| ServiceError::NotUtf8(p.display().to_string()))
}

/// `program`'s absolute path, found on the PATH.
fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Everything `service` works from: which manager, where its file goes, and the spec.
struct Plan {
    manager: Manager,
    file: PathBuf,
    spec: Spec,
    home: PathBuf,
    exe: PathBuf,
}

fn plan() -> anyhow::Result<Plan> {
    let manager = this_manager()?;
    let user_home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or(ServiceError::NoHome)?;
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|x| !x.is_empty())
        .map(PathBuf::from);
    let file = unit::path(manager, &user_home, xdg.as_deref());
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| ServiceError::NoExe(e.to_string()))?;
    // A binary in a package cache is named by its launcher, never by its path there.
    let launcher = crate::cli::launcher::Launcher::of(&exe);
    let (exe, prefix) = match &launcher {
        crate::cli::launcher::Launcher::Installed(_) => (exe, Vec::new()),
        other => {
            let (program, prefix) = other.program();
            let found = on_path(&program).ok_or(ServiceError::NoLauncher { program })?;
            (found, prefix)
        }
    };
    if let Some(n) = launcher.note() {
        note!("{n}");
    }
    let home = super::paths::absolute(&default_home())?;
    let standard = super::paths::absolute(&user_home.join(".medulla"))?;
    let mut env = Vec::new();
    let home_arg = if home != standard {
        env.push(("MEDULLA_HOME".to_string(), utf8(&home)?));
        Some(utf8(&home)?)
    } else {
        None
    };
    if let Some(m) = std::env::var_os("MEDULLA_MODEL_DIR").filter(|m| !m.is_empty()) {
        let m = super::paths::absolute(Path::new(&m))?;
        env.push(("MEDULLA_MODEL_DIR".to_string(), utf8(&m)?));
    }
    let spec = Spec {
        exe: utf8(&exe)?,
        prefix,
        home: home_arg,
        env,
        log: utf8(&home.join("logs").join("launchd.out.log"))?,
    };
    Ok(Plan {
        manager,
        file,
        spec,
        home,
        exe,
    })
}

/// Run `medulla service`; 0 done, 1 refused or failed.
pub fn run(cmd: ServiceCmd) -> anyhow::Result<i32> {
    let p = plan()?;
    match cmd {
        ServiceCmd::Install(d) => install(&p, d.dry_run),
        ServiceCmd::Uninstall(d) => uninstall(&p, d.dry_run),
        ServiceCmd::Status { json } => status(&p, json),
    }
}

/// An owner serving the home outside the service: its URL, when one runs and the manager
/// does not report it as its own.
fn unsupervised_owner(p: &Plan, reach: &Reach) -> Option<String> {
    let (pid, url) = crate::launch::running(&p.home)?;
    if matches!(reach, Reach::Running) && manager::view(p.manager).pid.map(u64::from) == Some(pid) {
        return None;
    }
    Some(url)
}

fn write_file(path: &Path, text: &str) -> Result<(), ServiceError> {
    let fail = |e: std::io::Error| ServiceError::Write {
        path: path.display().to_string(),
        detail: e.to_string(),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

/// Have the service manager that keeps the owner restart it (`medulla restart`).
pub fn restart_supervised(keeper: crate::service::life::Keeper) -> anyhow::Result<()> {
    use crate::service::life::Keeper;
    let manager = match keeper {
        Keeper::Systemd => Manager::Systemd,
        Keeper::Launchd => Manager::Launchd,
        Keeper::Person | Keeper::Client => {
            anyhow::bail!("the owner is not kept by a service manager")
        }
    };
    let step = manager::restart_owner_step(manager);
    step.run().map(|_| ()).map_err(|detail| {
        anyhow::anyhow!(
            "`{}` failed: {detail}; see `medulla service status`",
            step.shown()
        )
    })
}

fn run_steps(steps: &[Step]) -> Result<(), ServiceError> {
    for s in steps {
        match s.run() {
            Ok(_) => out!("  {} {}", paint(GREEN, "ran"), s.shown()),
            Err(why) if s.may_fail => {
                out!("  {} {} ({why})", paint(DIM, "ran"), s.shown())
            }
            Err(detail) => {
                return Err(ServiceError::Command {
                    command: s.shown(),
                    detail,
                })
            }
        }
    }
    Ok(())
}

fn not_running_advice(p: &Plan, why: &str) {
    let file = p.file.display().to_string();
    match p.manager {
        Manager::Systemd => {
            out!("systemd's user manager is not running for you ({why}), so nothing was enabled.");
            out!("When it runs (a desktop or ssh login, or with lingering), enable the service:");
        }
        Manager::Launchd => {
            out!("launchd has no GUI session for you ({why}), so nothing was loaded.");
            out!("From a logged-in session, load it:");
        }
    }
    for c in manager::by_hand(p.manager, &file) {
        out!("  {}", paint(BOLD, c));
    }
    if p.manager == Manager::Systemd {
        out!("To start it at boot, without a login: `loginctl enable-linger $USER`.");
    }
}

fn install(p: &Plan, dry_run: bool) -> anyhow::Result<i32> {
    let text = unit::render(p.manager, &p.spec);
    let file = utf8(&p.file)?;
    if dry_run {
        note!("would write {file} ({}):", p.manager.file_kind());
        out!("{}", text.trim_end());
        note!("would run:");
        for s in manager::install_steps(p.manager, &file, true) {
            note!("  {}", s.shown());
        }
        note!("(nothing was written or run: --dry-run)");
        return Ok(0);
    }
    let before = std::fs::read_to_string(&p.file).ok();
    write_file(&p.file, &text)?;
    if p.manager == Manager::Launchd {
        // launchd does not create the directory of its log file.
        let logs = p.home.join("logs");
        std::fs::create_dir_all(&logs).map_err(|e| ServiceError::Write {
            path: logs.display().to_string(),
            detail: e.to_string(),
        })?;
    }
    let changed = before.as_deref() != Some(text.as_str());
    out!(
        "{} {} {file}",
        paint(GREEN, if changed { "wrote" } else { "kept" }),
        p.manager.file_kind()
    );
    out!("  it runs {}", paint(BOLD, p.spec.args().join(" ")));
    let reach = manager::reach(p.manager);
    let other = unsupervised_owner(p, &reach);
    match &reach {
        Reach::Skipped => {
            out!(
                "the service manager was not called ({}=none, for tests); to load it:",
                manager::ENV
            );
            for c in manager::by_hand(p.manager, &file) {
                out!("  {}", paint(BOLD, c));
            }
        }
        Reach::NotRunning(why) => not_running_advice(p, why),
        Reach::Running => {
            let was_active = manager::view(p.manager).active.as_deref() == Some("active");
            let steps = manager::install_steps(p.manager, &file, other.is_none());
            if let Err(e) = run_steps(&steps) {
                note!("medulla: {e}");
                return Ok(1);
            }
            if changed && was_active && before.is_some() {
                if let Some(s) = manager::restart_step(p.manager) {
                    if let Err(e) = run_steps(&[s]) {
                        note!("medulla: {e}");
                        return Ok(1);
                    }
                }
            }
            let v = manager::view(p.manager);
            out!(
                "the service is {}{}",
                v.active.as_deref().unwrap_or("unknown"),
                v.pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
            );
        }
    }
    if let Some(url) = other {
        out!(
            "{} an owner already runs on {} ({url}), outside the service: the service's owner \
             cannot start beside it. It was left running; hand over with `medulla stop`, then {}.",
            paint(YELLOW, "note:"),
            p.home.display(),
            match p.manager {
                Manager::Systemd => "`systemctl --user start medulla`",
                Manager::Launchd => "launchd starts the agent's owner by itself",
            }
        );
    }
    Ok(0)
}

fn uninstall(p: &Plan, dry_run: bool) -> anyhow::Result<i32> {
    let file = utf8(&p.file)?;
    if !p.file.exists() {
        out!("nothing is installed (no {file})");
        return Ok(0);
    }
    let before = manager::uninstall_steps(p.manager);
    let after = manager::after_uninstall_steps(p.manager);
    if dry_run {
        note!("would run:");
        for s in &before {
            note!("  {}", s.shown());
        }
        note!("would remove {file}");
        for s in &after {
            note!("  then {}", s.shown());
        }
        note!("(nothing was removed or run: --dry-run)");
        return Ok(0);
    }
    let reach = manager::reach(p.manager);
    let running = matches!(reach, Reach::Running);
    if running {
        if let Err(e) = run_steps(&before) {
            note!("medulla: {e}");
            return Ok(1);
        }
    }
    std::fs::remove_file(&p.file).map_err(|e| ServiceError::Remove {
        path: file.clone(),
        detail: e.to_string(),
    })?;
    out!("{} {file}", paint(GREEN, "removed"));
    if running {
        if let Err(e) = run_steps(&after) {
            note!("medulla: {e}");
            return Ok(1);
        }
        out!("the service's owner was stopped; `medulla serve` runs one by hand");
    } else if let Reach::NotRunning(why) = reach {
        out!("the service manager is not running ({why}): there was nothing to stop");
    }
    Ok(0)
}

fn status(p: &Plan, json: bool) -> anyhow::Result<i32> {
    let text = std::fs::read_to_string(&p.file).ok();
    let named = text
        .as_deref()
        .and_then(|t| unit::named_binary(p.manager, t));
    let this = p.exe.display().to_string();
    let names_this = named.as_deref() == Some(this.as_str());
    let up_to_date = text.as_deref() == Some(unit::render(p.manager, &p.spec).as_str());
    let reach = manager::reach(p.manager);
    let view = matches!(reach, Reach::Running).then(|| manager::view(p.manager));
    if json {
        let body = json!({
            "manager": p.manager,
            "file": p.file,
            "installed": text.is_some(),
            "binary": named,
            "binary_exists": named.as_deref().map(|b| Path::new(b).is_file()),
            "this_binary": this,
            "names_this_binary": names_this,
            "up_to_date": up_to_date,
            "manager_running": matches!(reach, Reach::Running),
            "service": view,
        });
        out!("{}", serde_json::to_string_pretty(&body)?);
        return Ok(0);
    }
    if text.is_none() {
        out!(
            "not installed (no {}); `medulla service install` writes it",
            p.file.display()
        );
    } else {
        out!(
            "{} installed at {}",
            p.manager.file_kind(),
            paint(BOLD, p.file.display())
        );
        match &named {
            Some(b) if names_this => out!("  runs this binary, {b}"),
            Some(b) => out!(
                "  {} it runs {b}{}, not this binary ({this}): run `medulla service install` again to point it here",
                paint(YELLOW, "note:"),
                if Path::new(b).is_file() { "" } else { " (which is gone)" }
            ),
            None => out!(
                "  {} it names no binary: run `medulla service install` again",
                paint(YELLOW, "note:")
            ),
        }
        if names_this && !up_to_date {
            out!(
                "  {} it differs from what `medulla service install` would write now (another home or model directory?): run it again",
                paint(YELLOW, "note:")
            );
        }
    }
    match (&reach, &view) {
        (Reach::Running, Some(v)) => out!(
            "{}: {}, {}{}",
            match p.manager {
                Manager::Systemd => "systemd",
                Manager::Launchd => "launchd",
            },
            v.active.as_deref().unwrap_or("unknown"),
            v.enabled.as_deref().unwrap_or("unknown"),
            v.pid.map(|p| format!(", pid {p}")).unwrap_or_default()
        ),
        (Reach::NotRunning(why), _) => out!("the service manager is not running for you ({why})"),
        _ => out!("the service manager was not asked ({}=none)", manager::ENV),
    }
    Ok(0)
}
