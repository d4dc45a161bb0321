//! `medulla restore DIR [--brain ROOT | --medulla]`: put a backup back, with the owner
//! stopped. It stores nothing through the owner: it checks the backup's every hash, then
//! moves what it replaces aside (`$MEDULLA_HOME/replaced/<time>/`) and the backup's
//! copies into place, and says exactly what it did. DIR is one backup, or a directory
//! `medulla backup DIR` wrote backups into (the newest complete one is taken, and named);
//! `--list` shows what DIR holds.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::print::{self, out, paint, plural, BOLD, DIM, GREEN};
use crate::backup::catalog::{self, Catalog};
use crate::backup::restore::{restore, Report, Target};
use crate::backup::BackupError;
use crate::config::default_home;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("one").args(["brain", "medulla"])))]
pub struct RestoreArgs {
    /// The backup: one directory a backup wrote (e.g. $MEDULLA_HOME/backups/<time>), or a
    /// directory holding backups (the newest complete one is restored)
    pub dir: PathBuf,
    /// List the backups DIR holds, newest first, and restore nothing
    #[arg(long, conflicts_with_all = ["brain", "medulla", "home"])]
    pub list: bool,
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
    crate::launch::running(home).map(|(_, url)| url)
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
    let (dir, from) = match catalog::choose(&dir) {
        Ok(chosen) => chosen,
        Err(e) => return Ok(Err(e)),
    };
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
    Ok(restore(&dir, &home, target, now).map(|mut r| {
        r.chosen_from = from.map(|c| c.dir);
        r
    }))
}

/// Run `medulla restore`; exit 0 when restored (or listed), 1 when refused.
pub fn run(a: RestoreArgs) -> anyhow::Result<i32> {
    let done = if a.list {
        let dir = super::paths::absolute(&a.dir)?;
        catalog::scan(&dir).map(|c| {
            if a.json {
                serde_json::to_string_pretty(&c).map(|j| out!("{j}"))
            } else {
                show_list(&c);
                Ok(())
            }
        })
    } else {
        run_restore(&a)?.map(|report| {
            if a.json {
                serde_json::to_string_pretty(&report).map(|j| out!("{j}"))
            } else {
                show(&report);
                Ok(())
            }
        })
    };
    match done {
        Ok(printed) => {
            printed?;
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

fn show_list(c: &Catalog) {
    if c.backups.is_empty() {
        out!(
            "{} holds no complete backup (`medulla backup {}` writes one)",
            c.dir.display(),
            c.dir.display()
        );
    } else {
        out!(
            "{} in {}, newest first:",
            plural(c.backups.len() as u64, "backup", "backups"),
            c.dir.display()
        );
    }
    for b in &c.backups {
        out!(
            "  {}  {}, {}, {}",
            paint(BOLD, print::datetime(b.created)),
            plural(b.stores as u64, "store", "stores"),
            size(b.bytes),
            print::spelled(&b.trigger)
        );
        out!("    {}", b.path.display());
    }
    for u in &c.unreadable {
        out!(
            "  {} {} ({})",
            paint(DIM, "not readable:"),
            u.path.display(),
            u.error
        );
    }
    for p in &c.unfinished {
        out!(
            "  {} {} (never restored)",
            paint(DIM, "unfinished:"),
            p.display()
        );
    }
}

/// `812 KiB`, `3.4 MiB`.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return plural(bytes, "byte", "bytes");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if v < 10.0 {
        format!("{v:.1} {}", UNITS[unit])
    } else {
        format!("{v:.0} {}", UNITS[unit])
    }
}

fn show(r: &Report) {
    if let Some(from) = &r.chosen_from {
        out!(
            "{} holds backups; restoring the newest complete one:",
            from.display()
        );
        out!("  {}", r.backup.display());
    }
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
