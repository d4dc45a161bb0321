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

/// Append one letter to the spool with O_APPEND, as one line. Returns its raw line. A
/// write the disk cannot take whole (a full disk) is taken back: the spool never keeps
/// half a line, and the error says what failed.
pub fn append_to_spool(home: &Path, body: &Value) -> std::io::Result<String> {
    let line = serde_json::to_string(body).expect("a JSON value serializes");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(home.join(SPOOL))?;
    append_whole(&mut f, format!("{line}\n").as_bytes())?;
    Ok(line)
}

/// Append `bytes` whole and durably, or not at all. One write call in the normal case,
/// so appends from several writers never interleave; after a short write (the disk
/// filled mid-line) the bytes written are removed again, when they are still the
/// file's tail.
pub(crate) fn append_whole(f: &mut std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
    let mut written = 0;
    let done = loop {
        match f.write(&bytes[written..]) {
            Ok(0) => break Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                written += n;
                if written == bytes.len() {
                    break f.sync_data();
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    if let Err(e) = done {
        if written > 0 {
            take_back_tail(f, &bytes[..written]);
        }
        return Err(e);
    }
    Ok(())
}

/// Remove `tail` from the end of the file if the file still ends with it.
fn take_back_tail(f: &mut std::fs::File, tail: &[u8]) {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(len) = f.metadata().map(|m| m.len()) else {
        return;
    };
    let n = tail.len() as u64;
    if len < n {
        return;
    }
    let mut found = vec![0; tail.len()];
    let ends_with_ours = f.seek(SeekFrom::Start(len - n)).is_ok()
        && f.read_exact(&mut found).is_ok()
        && found == tail;
    if ends_with_ours {
        if let Err(e) = f.set_len(len - n).and_then(|_| f.sync_data()) {
            tracing::error!(error = %e, "could not take back a half-written spool line");
        }
    }
}
