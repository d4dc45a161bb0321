//! Evidence anchors: what a claim's evidence file said when the claim was written, so a
//! later reader can tell whether the code under the claim has moved. The owner computes
//! them (it knows the brain's root and reads the files); the store only keeps them with
//! the version they describe.

use serde::{Deserialize, Serialize};

/// One evidence entry that names a file inside the brain's root, as it was when the
/// claim was written (or last re-anchored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Anchor {
    /// The evidence entry it comes from, as written.
    pub evidence: String,
    /// The file, relative to the brain's root, `/`-separated.
    pub path: String,
    /// The lines it covers (1-based, inclusive), when the entry named a range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<(u32, u32)>,
    /// sha256 (hex) of the covered bytes: the whole file, or the lines of the range.
    pub sha256: String,
    /// The git blob id of the whole file (what `git hash-object` says), when the root is
    /// a git repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_blob: Option<String>,
    /// When it was taken, ms since the Unix epoch.
    pub at: i64,
}
