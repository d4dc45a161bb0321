//! The field-report mailbox. Agents append letters to the spool
//! (`$MEDULLA_HOME/field-reports.jsonl`, append-only, never rewritten); the distributor
//! actor files each letter into exactly one box: `<repo>/.medulla/inbox.jsonl` for a
//! letter that names a project (a git repository or a registered root),
//! `$MEDULLA_HOME/inbox.jsonl` for a genuinely projectless one, or leaves it pending in
//! the spool. Only the distributor writes boxes.
//!
//! - [`letter`]: letters, their ids, where each belongs, and their fate.
//! - [`distribute`]: one distribution pass, the distributor's saved state.
//! - [`sweep`]: reading the spool and the boxes back, with fates.
//! - [`actor`]: the distributor actor and the view handlers read.

pub mod actor;
pub mod distribute;
pub mod letter;
pub mod sweep;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use actor::{Distributor, DistributorArgs, MailboxMsg, MailboxView};
pub use distribute::{Filed, PassReport};
pub use sweep::{LetterRow, Sweep};

pub const SPOOL: &str = "field-reports.jsonl";
pub const MEDULLA_BOX: &str = "inbox.jsonl";

/// A project's box path.
pub fn box_path(repo: &Path) -> PathBuf {
    repo.join(".medulla").join("inbox.jsonl")
}

/// Append one letter to the spool with O_APPEND, as one line. Returns its raw line.
pub fn append_to_spool(home: &Path, body: &Value) -> std::io::Result<String> {
    let line = serde_json::to_string(body).expect("a JSON value serializes");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(home.join(SPOOL))?;
    // One write call per line: appends from several writers never interleave.
    f.write_all(format!("{line}\n").as_bytes())?;
    f.sync_data()?;
    Ok(line)
}
