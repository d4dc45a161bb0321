//! `medulla connect <client>` and `medulla disconnect <client>`: write (or take out)
//! medulla's entry in an agent client's own configuration file, in that client's shape,
//! merging with what the file holds; then check that the very transport it configured
//! reaches the owner (`initialize` and `tools/list`).
//!
//! - `clients`: each client's file and entry, by scope;
//! - `files`: merging into JSON and TOML without dropping anything else, diffs, writes;
//! - `hooks`: the client hooks `--hooks` installs (`prime`, `hint`, `nudge`);
//! - `permissions`: the rule that lets a client call medulla's tools without asking;
//! - `trust`: the step a client still asks of the person before it reads a project's files;
//! - `check`: the connection check over HTTP or through the stdio bridge.

mod check;
mod clients;
mod codex;
mod files;
mod hooks;
mod opencode;
mod permissions;
mod trust;

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use serde_json::json;

pub use clients::{AgentClient, Scope};

use super::print::{note, out};
use super::ClientOpts;

/// Which client's file, and where: what `connect` and `disconnect` both name.
#[derive(Debug, Args)]
pub struct Target {
    /// The agent client whose configuration is changed
    #[arg(value_enum)]
    pub client: AgentClient,
    /// This project's file, or the user's (shared by every project: the stdio bridge is
    /// registered there, never one project's root) [default: project where the client
    /// has one]
    #[arg(long, value_enum)]
    pub scope: Option<Scope>,
    /// The project [default: the working directory]
    #[arg(long, value_name = "PATH")]
    pub project: Option<PathBuf>,
    /// Print the change as a diff and write nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct ConnectArgs {
    #[command(flatten)]
    pub t: Target,
    /// Create this project's brain first (`medulla bootstrap`)
    #[arg(long)]
    pub bootstrap: bool,
    /// Also install the client's hooks (Claude Code, Codex, Gemini CLI): `medulla prime`
    /// at session start, `medulla hint` at each prompt and each file read or edited,
    /// `medulla nudge` at the end of a turn
    #[arg(long)]
    pub hooks: bool,
    /// Write the file without checking the connection afterwards
    #[arg(long)]
    pub no_check: bool,
    #[command(flatten)]
    pub c: ClientOpts,
}

#[derive(Debug, Args)]
pub struct DisconnectArgs {
    #[command(flatten)]
    pub t: Target,
    #[command(flatten)]
    pub c: ClientOpts,
}

/// How the stdio bridge entries and the hooks run medulla: this binary by its absolute
/// path (a client started from a desktop may not have `~/.cargo/bin` on its PATH), or,
/// for a binary in a package cache, the launcher that fetches this version again.
fn launcher() -> anyhow::Result<super::launcher::Launcher> {
    super::launcher::Launcher::this()
}

fn project_root(p: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let p = match p {
        Some(p) => p,
        None => std::env::current_dir().context("the working directory is gone")?,
    };
    std::fs::canonicalize(&p)
        .with_context(|| format!("{} is not a directory on this machine", p.display()))
}

fn entry_for(t: &Target, url: &str) -> anyhow::Result<(clients::Entry, PathBuf)> {
    let root = project_root(t.project.clone())?;
    let places = clients::Places::from_env()?;
    let scope = t.scope.unwrap_or(t.client.default_scope());
    let e = t.client.entry(scope, &places, &root, url, &launcher()?)?;
    Ok((e, root))
}

/// The files `--hooks` changes for `client`: its hook entries, where each client keeps
/// them (Codex's in the user's hooks file, with their trust; opencode's as a plugin).
fn hook_edits(
    client: AgentClient,
    scope: Option<Scope>,
    root: &std::path::Path,
) -> anyhow::Result<Vec<files::Edit>> {
    match client {
        AgentClient::Codex => codex::hook_edits(root),
        AgentClient::Opencode => opencode::hook_edits(scope.unwrap_or(Scope::Project), root),
        _ => hooks::edits(client, scope, root),
    }
}

/// `medulla connect`.
pub fn connect(a: ConnectArgs) -> anyhow::Result<i32> {
    let url = super::client::owner_url(a.c.url.as_deref());
    let (entry, root) = entry_for(&a.t, &url)?;
    // Run from a package cache: the files name the launcher, and say so.
    if let Some(n) = launcher()?.note() {
        out!("{n}");
    }
    let before = files::read(&entry.file)?;
    let after = files::with_entry(before.as_deref(), &entry)?;
    // Every file this connect changes, in order; a file changed twice (Gemini's settings
    // hold both its servers and its hooks) is chained, not read twice.
    let mut plans: Vec<(PathBuf, Option<String>, String)> =
        vec![(entry.file.clone(), before.clone(), after.clone())];
    let mut edits = permissions::edits(a.t.client, a.t.scope, &root)?;
    if a.hooks {
        edits.extend(hook_edits(a.t.client, a.t.scope, &root)?);
    }
    for h in edits {
        let now = match plans.iter().find(|p| p.0 == h.path) {
            Some(p) => Some(p.2.clone()),
            None => files::read(&h.path)?,
        };
        let next = (h.apply)(now.as_deref(), &h.path)?;
        match plans.iter_mut().find(|p| p.0 == h.path) {
            Some(p) => p.2 = next,
            None => plans.push((h.path, now, next)),
        }
    }
    if a.t.dry_run {
        let mut any = false;
        for (path, before, after) in &plans {
            if before.as_deref() != Some(after.as_str()) {
                any = true;
                out!("{}", files::diff(path, before.as_deref(), after));
            }
        }
        if !any {
            out!(
                "{}: already connected, nothing to change",
                entry.file.display()
            );
        }
        return Ok(0);
    }
    if a.bootstrap {
        let client = super::client::Client::new(a.c.url.as_deref())?;
        let ans = client.call("bootstrap", json!({ "root": root }))?;
        if !ans.ok() {
            super::print::error(&ans.body);
            return Ok(1);
        }
        note!("brain ready for {}", root.display());
    }
    for (i, (path, before, after)) in plans.iter().enumerate() {
        let changed = before.as_deref() != Some(after.as_str());
        if changed {
            files::write(path, after)?;
        }
        match (i, changed) {
            (0, true) => out!("{} connected: wrote {}", a.t.client.name(), path.display()),
            (0, false) => out!(
                "{} already connected: {} unchanged",
                a.t.client.name(),
                path.display()
            ),
            (_, true) => out!("wrote {}", path.display()),
            (_, false) => out!("{} unchanged", path.display()),
        }
    }
    // What the person must still do for the client to use what was written.
    if a.t.scope.unwrap_or(a.t.client.default_scope()) == Scope::Project {
        if let Some(n) = trust::note(a.t.client, &root) {
            note!("medulla: {n}");
        }
    }
    if a.no_check {
        return Ok(0);
    }
    match check::reaches(&entry.transport, &root, a.t.client.protocol()) {
        Ok(tools) => {
            out!("checked: the owner answered initialize and listed {tools} tools through this entry");
            Ok(0)
        }
        Err(e) => {
            note!("medulla: the entry is written, but the check failed: {e:#}");
            Ok(1)
        }
    }
}

/// `medulla disconnect`.
pub fn disconnect(a: DisconnectArgs) -> anyhow::Result<i32> {
    let url = super::client::owner_url(a.c.url.as_deref());
    let (entry, root) = entry_for(&a.t, &url)?;
    // medulla's hooks (`prime`, `nudge`, `hint`) and permission rules come out of the
    // client's files too; a file edited twice is undone in turn.
    let mut edits = permissions::edits(a.t.client, a.t.scope, &root)?;
    edits.extend(hook_edits(a.t.client, a.t.scope, &root).unwrap_or_default());
    let mut undone: Vec<(PathBuf, String, String)> = Vec::new();
    for h in edits {
        let now = match undone.iter().find(|u| u.0 == h.path) {
            Some(u) => Some(u.2.clone()),
            None => files::read(&h.path)?,
        };
        let Some(now) = now else { continue };
        let Some(after) = (h.undo)(&now, &h.path)? else {
            continue;
        };
        match undone.iter_mut().find(|u| u.0 == h.path) {
            Some(u) => u.2 = after,
            None => undone.push((h.path, now, after)),
        }
    }
    for (path, before, after) in undone {
        if a.t.dry_run {
            out!("{}", files::diff(&path, Some(&before), &after));
        } else if after.is_empty() {
            // A file medulla owns whole (opencode's plugin).
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
            out!("removed {}", path.display());
        } else {
            files::write(&path, &after)?;
            out!("took medulla's hooks and rules out of {}", path.display());
        }
    }
    let Some(before) = files::read(&entry.file)? else {
        out!(
            "{}: no such file, nothing to take out",
            entry.file.display()
        );
        return Ok(0);
    };
    match files::without_entry(&before, &entry)? {
        None => {
            out!(
                "{}: holds no medulla entry, nothing to take out",
                entry.file.display()
            );
        }
        Some(after) if a.t.dry_run => out!("{}", files::diff(&entry.file, Some(&before), &after)),
        Some(after) => {
            files::write(&entry.file, &after)?;
            out!(
                "{} disconnected: took medulla out of {}",
                a.t.client.name(),
                entry.file.display()
            );
        }
    }
    Ok(0)
}
