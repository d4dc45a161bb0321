//! `medulla restore DIR [--brain ROOT | --medulla]`: put a backup back, with the owner
//! stopped. It stores nothing through the owner: it checks the backup's every hash, then
//! moves what it replaces aside (`$MEDULLA_HOME/replaced/<time>/`) and the backup's
//! copies into place, and says exactly what it did.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::client::Client;
use super::print::{self, out, paint, plural, BOLD, DIM, GREEN};
use crate::backup::restore::{restore, Report, Target};
use crate::backup::BackupError;
use crate::config::default_home;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("one").args(["brain", "medulla"])))]
pub struct RestoreArgs {
    /// The backup: one directory a backup wrote (e.g. $MEDULLA_HOME/backups/<time>)
    pub dir: PathBuf,
    /// Restore only this brain (its root or fingerprint) [default: the whole home]
    #[arg(long, value_name = "ROOT")]
    pub brain: Option<String>,
    /// Restore only the medulla [default: the whole home]
    #[arg(long)]
    pub medulla: bool,
    /// The home to restore into [default: $MEDULLA_HOME, else ~/.medulla]
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Print the report (or the refusal) as JSON
    #[arg(long)]
    pub json: bool,
}

/// An owner serving `home`, as its `owner.json` says and its health confirms.
pub(super) fn running_owner(home: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(home.join("owner.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let url = v["url"].as_str()?.to_string();
    let health = Client::new(Some(&url)).ok()?.get("/api/health").ok()?;
    (health.ok() && health.body["pid"] == v["pid"]).then_some(url)
}

fn run_restore(a: &RestoreArgs) -> anyhow::Result<Result<Report, BackupError>> {
    let home = match &a.home {
        Some(h) => super::paths::absolute(h)?,
        None => default_home(),
    };
    let dir = super::paths::absolute(&a.dir)?;
    if let Some(url) = running_owner(&home) {
        return Ok(Err(BackupError::OwnerRunning {
            home: home.display().to_string(),
            url,
        }));
    }
    let brain = a.brain.as_deref().map(super::paths::brain).transpose()?;
    let target = match (&brain, a.medulla) {
        (Some(b), _) => Target::Store(b),
        (None, true) => Target::Store("medulla"),
        (None, false) => Target::Home,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    Ok(restore(&dir, &home, target, now))
}

/// Run `medulla restore`; exit 0 when restored, 1 when refused.
pub fn run(a: RestoreArgs) -> anyhow::Result<i32> {
    match run_restore(&a)? {
        Ok(report) => {
            if a.json {
                out!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                show(&report);
            }
            Ok(0)
        }
        Err(e) => {
            if a.json {
                let body = json!({ "error": { "code": e.code(), "message": e.to_string() } });
                out!("{}", serde_json::to_string_pretty(&body)?);
            } else {
                print::note!("medulla: {e} [{}]", e.code());
            }
            Ok(1)
        }
    }
}

fn show(r: &Report) {
    out!(
        "restored {} from {} into {}",
        plural(r.restored.len() as u64, "item", "items"),
        r.backup.display(),
        r.home.display()
    );
    for x in &r.restored {
        let counts = x
            .counts
            .as_ref()
            .map(|c| {
                format!(
                    " ({}, {}, {})",
                    plural(c.live_claims, "live claim", "live claims"),
                    plural(c.history_versions, "history version", "history versions"),
                    plural(c.acts, "act", "acts")
                )
            })
            .unwrap_or_default();
        out!(
            "  {} {}{counts}",
            paint(GREEN, "restored"),
            paint(BOLD, &x.what)
        );
        match &x.replaced_to {
            Some(to) => {
                out!("    replaced what was there; it was moved to");
                out!("    {}", to.display());
            }
            None => out!("    {}", paint(DIM, format!("new at {}", x.path.display()))),
        }
    }
    for u in &r.untouched {
        out!(
            "  {} {u} (not in the backup)",
            paint(DIM, "left as it was:")
        );
    }
    out!("start the owner (`medulla serve`): indexes are rebuilt as each store opens");
}
