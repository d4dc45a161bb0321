//! `export`: a brain's (or the medulla's) live claims, and optionally their history, as
//! `.light.md` files with every provenance field. Exported files are committable text:
//! the hygiene floor keeps secrets out of them, and nothing is written into the medulla
//! home.

use std::path::{Path, PathBuf};

use brains::{Claim, ClaimState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{OwnerError, Result};
use crate::service::route::find_brain;
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["brain", "medulla"])))]
pub struct ExportArgs {
    /// Absolute path of the directory to write into (created if missing).
    #[arg(
        value_name = "DIR",
        help = "The directory to write into (created when missing)"
    )]
    pub dir: String,
    #[arg(
        long,
        value_name = "ROOT",
        help = "This brain's claims (its root or fingerprint)"
    )]
    pub brain: Option<String>,
    #[serde(default)]
    #[arg(long, help = "The medulla's claims")]
    pub medulla: bool,
    /// Also write every outdated version under `.history/`.
    #[serde(default)]
    #[arg(long, help = "Also write outdated versions under DIR/.history/")]
    pub history: bool,
}

/// A claim the floor kept out of the export.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NotExported {
    pub slug: String,
    pub version: u64,
    pub found: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ExportReport {
    pub dir: PathBuf,
    pub live_files: usize,
    pub history_files: usize,
    pub refused: Vec<NotExported>,
}

impl Answer for ExportReport {}

pub struct Export;

impl Verb for Export {
    const NAME: &'static str = "export";
    const DESCRIPTION: &'static str = "Render a brain's (or the medulla's) live claims, and optionally their history, as .light.md files with every provenance field.";
    const EFFECT: Effect = Effect::Write;
    const IDEMPOTENT: bool = true;
    type Args = ExportArgs;
    type Answer = ExportReport;

    async fn run(cx: Cx<'_>, a: ExportArgs) -> Result<ExportReport> {
        let svc = cx.svc;
        let dir = dir_arg(&a.dir)?;
        let home = &svc.owner.config.canonical_home;
        if dir.starts_with(home) {
            return Err(OwnerError::InsideMedullaHome {
                dir: dir.display().to_string(),
                home: home.display().to_string(),
            });
        }
        let fp = match (a.brain.as_deref(), a.medulla) {
            (Some(_), true) | (None, false) => {
                return Err(OwnerError::BadInput(
                    "name exactly one target: brain, or medulla: true".into(),
                ))
            }
            (None, true) => StoreId::Medulla,
            (Some(b), false) => {
                let m =
                    find_brain(&svc.owner.registry, b).ok_or_else(|| OwnerError::UnknownBrain {
                        name: b.to_string(),
                    })?;
                svc.authorize_brain(cx.routed, cx.input, &m, "export")?;
                StoreId::Brain(m.fingerprint)
            }
        };
        let live = svc.owner.live_claims(&fp).await?;
        cx.progress.tick(0, Some(live.len() as u64), "claims");
        let mut outdated: Vec<Claim> = Vec::new();
        if a.history {
            let slugs: std::collections::BTreeSet<String> = svc
                .owner
                .acts_newest(&fp, usize::MAX)
                .await?
                .into_iter()
                .map(|a| a.subject)
                .collect();
            for s in slugs {
                outdated.extend(
                    svc.owner
                        .history(&fp, &s)
                        .await?
                        .into_iter()
                        .filter(|c| c.state == ClaimState::Outdated),
                );
            }
        }
        let mut refused = Vec::new();
        let (live, outdated) = (clean(live, &mut refused), clean(outdated, &mut refused));
        let out = dir.clone();
        let n = live.len() as u64;
        let (live_files, history_files) =
            tokio::task::spawn_blocking(move || write(&out, &live, &outdated))
                .await
                .map_err(|e| OwnerError::Internal(e.to_string()))?
                .map_err(|e| not_written(&dir, e))?;
        cx.progress.tick(n, Some(n), "claims");
        Ok(ExportReport {
            dir,
            live_files,
            history_files,
            refused,
        })
    }
}

/// Why the files could not be written, typed: a full disk, or a directory this user
/// cannot create or write (`/proc/...`, a read-only mount, no permission), named with its
/// path. Issue 66: it was answered `500 internal`.
fn not_written(dir: &Path, e: std::io::Error) -> OwnerError {
    if matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    ) {
        return OwnerError::DiskFull {
            path: dir.display().to_string(),
        };
    }
    OwnerError::DirNotWritable {
        dir: dir.display().to_string(),
        detail: e.kind().to_string(),
    }
}

/// The claims that pass the floor; the others are listed as refused.
fn clean(cs: Vec<Claim>, refused: &mut Vec<NotExported>) -> Vec<Claim> {
    cs.into_iter()
        .filter(|c| {
            let findings =
                crate::floor::scan(crate::floor::claim_fields(&c.label, &c.text, &c.evidence));
            if findings.is_empty() {
                return true;
            }
            refused.push(NotExported {
                slug: c.slug.clone(),
                version: c.version,
                found: crate::floor::summary(&findings),
            });
            false
        })
        .collect()
}

fn write(dir: &Path, live: &[Claim], outdated: &[Claim]) -> std::io::Result<(usize, usize)> {
    std::fs::create_dir_all(dir)?;
    for c in live {
        std::fs::write(
            dir.join(format!("{}.light.md", c.slug)),
            brains::legacy::render(c),
        )?;
    }
    if !outdated.is_empty() {
        std::fs::create_dir_all(dir.join(".history"))?;
    }
    for c in outdated {
        std::fs::write(
            dir.join(".history")
                .join(brains::legacy::history_file_name(&c.slug, c.created)),
            brains::legacy::render(c),
        )?;
    }
    Ok((live.len(), outdated.len()))
}

/// An absolute directory argument, `..` folded and symlinks resolved.
pub fn dir_arg(raw: &str) -> Result<PathBuf> {
    if raw.len() > crate::roster::MAX_PATH_BYTES {
        return Err(OwnerError::TooLong {
            what: "dir",
            len: raw.len(),
            max: crate::roster::MAX_PATH_BYTES,
        });
    }
    brains::claim::check_line("dir", raw)?;
    let p = Path::new(raw);
    if !p.is_absolute() {
        return Err(OwnerError::BadInput(format!(
            "{raw} is not an absolute path: give the directory's absolute path"
        )));
    }
    Ok(crate::roster::resolve_path(p))
}
