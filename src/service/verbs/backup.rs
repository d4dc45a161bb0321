//! `backup`: a consistent copy of every store (each from one read transaction of its
//! own), the spool, the boxes' files, the config and each brain's manifest, with a
//! manifest of counts and sha256 hashes, written while the owner serves. The founder's
//! only: a backup holds every store's text.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::export::dir_arg;
use crate::backup::manifest::{Manifest, Trigger};
use crate::error::Result;
use crate::service::backup::{check_parent, write};
use crate::service::verb::{Answer, Cx, Effect, Verb};

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackupArgs {
    /// Absolute path of the directory to write the backup under (a new `<time>`
    /// directory is made in it). Default: `$MEDULLA_HOME/backups`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BackupAnswer {
    /// The backup's directory.
    pub dir: PathBuf,
    pub duration_ms: u64,
    /// What `manifest.json` in it says: every store with its counts, every file with
    /// its sha256, and any store that could not be copied (`failed`).
    pub manifest: Manifest,
}

impl Answer for BackupAnswer {}

pub struct Backup;

impl Verb for Backup {
    const NAME: &'static str = "backup";
    const DESCRIPTION: &'static str = "Write a consistent copy of every store (each from one read transaction), the spool, the boxes and the config, with a manifest of counts and sha256 hashes, while serving. The founder's only.";
    const EFFECT: Effect = Effect::Write;
    const ALSO: &'static [&'static str] = &["POST /api/backup"];
    const ROUTED: bool = false;
    type Args = BackupArgs;
    type Answer = BackupAnswer;

    async fn run(cx: Cx<'_>, a: BackupArgs) -> Result<BackupAnswer> {
        let svc = cx.svc;
        svc.founder_only(cx.input, "a backup")?;
        let parent = match a.dir.as_deref() {
            Some(d) => dir_arg(d)?,
            None => svc.owner.config.home.join(crate::backup::DIR),
        };
        check_parent(svc, &parent)?;
        let w = write(svc, &parent, Trigger::Manual, None, cx.progress).await?;
        Ok(BackupAnswer {
            dir: w.dir,
            duration_ms: w.duration.as_millis() as u64,
            manifest: w.manifest,
        })
    }
}
