//! The shared brains of this owner (`$MEDULLA_HOME/team/shares.json`): which local
//! brain mirrors which team store.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::store_id::Fingerprint;

/// One shared brain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Share {
    pub fingerprint: Fingerprint,
    pub root: String,
    /// The team's name for the store: `repo:<root commit>@<remote>`, or
    /// `repo:<root commit>` for a project the team shared before a project was its
    /// remote too.
    pub key: String,
    /// The normalized remote URL.
    pub label: String,
}

fn file(team_dir: &Path) -> PathBuf {
    team_dir.join("shares.json")
}

/// The shares on disk (none when the file is absent).
pub fn load(team_dir: &Path) -> Vec<Share> {
    std::fs::read(file(team_dir))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Write the shares: a temp file renamed over the old one.
pub fn save(team_dir: &Path, shares: &[Share]) -> std::io::Result<()> {
    std::fs::create_dir_all(team_dir)?;
    let tmp = team_dir.join("shares.json.tmp");
    std::fs::write(
        &tmp,
        serde_json::to_vec_pretty(shares).expect("shares serialize"),
    )?;
    std::fs::rename(tmp, file(team_dir))
}
