//! Typed errors of the store engine. Every variant has a stable machine-readable code
//! ([`StoreError::code`]) and a lowercase message that names the fix.

use crate::strength::{Strength, UnknownStrength};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("claim text is empty: give the claim some text")]
    EmptyText,
    #[error("claim text is {len} bytes, over the limit of {max}: split it into smaller claims")]
    TextTooLong { len: usize, max: usize },
    #[error("label is empty: every claim needs a label")]
    EmptyLabel,
    #[error("label is {len} characters, over the limit of {max}: shorten the label")]
    LabelTooLong { len: usize, max: usize },
    #[error("label {label:?} has no letters or digits, so no slug can be derived: use a label with letters or digits")]
    LabelWithoutSlug { label: String },
    #[error("agent id {agent:?} is not of the form vendor:role (e.g. claude:maker): send a vendor:role agent id")]
    BadAgentId { agent: String },
    #[error("{field} is {len} bytes, over the limit of {max}: shorten it")]
    FieldTooLong {
        field: &'static str,
        len: usize,
        max: usize,
    },
    #[error("would downgrade {slug:?}: the live version is {live} and this write is {attempted}; write at {live} or stronger, or leave the claim as it is")]
    WouldDowngrade {
        slug: String,
        live: Strength,
        attempted: Strength,
    },
    #[error("{field} carries a control character (NUL or another non-printing byte): remove it; text may use newlines and tabs, names and references may not")]
    ControlCharacters { field: &'static str },
    #[error("the label {attempted:?} derives the slug {slug:?}, which the label {existing:?} already holds in this store: two labels never share a slug; reuse {existing:?} to supersede it, or choose a label that differs in letters or digits")]
    LabelCollision {
        slug: String,
        existing: String,
        attempted: String,
    },
    #[error("no live claim {slug:?} in this store: list claims with seek or check the slug")]
    UnknownClaim { slug: String },
    #[error("no claim {slug:?} in this store, live or in history: nothing to purge")]
    NothingToPurge { slug: String },
    #[error("{slug:?} is in the team's shared store {store}: a purge here would erase only this machine's copy while the team's log and every other mirror keep it, so nothing was erased; a purge request is sent to the team (every member's `medulla team status` lists it), and the team admin erases it everywhere with `medulla team purge --url ADMIN_URL --store {store} --slug {slug}` (every mirror, this one included, follows)")]
    SharedPurge { slug: String, store: String },
    #[error("no key {key:?} in boot memory: list keys with op list")]
    UnknownKey { key: String },
    #[error("the store at {path} is held by another process: stop the other medulla owner, or point MEDULLA_HOME elsewhere")]
    StoreLocked { path: String },
    /// The store's file fails its checks (at open, on a read, or in an integrity check).
    /// The owner quarantines it: nothing reads or writes it until it is restored.
    #[error("the store at {path} is damaged ({detail}): it is quarantined, so nothing reads or writes it; restore it from a backup (`medulla restore DIR --brain ROOT`, or `--medulla`), or stop the owner and move {path} aside")]
    Damaged { path: String, detail: String },
    /// The disk holding the store is full. Nothing acknowledged is lost; the store is
    /// reopened by itself once there is room.
    #[error("no space left on the disk that holds {path}: free space there (or move MEDULLA_HOME to a larger disk); the store recovers by itself once there is room, and nothing acknowledged was lost")]
    DiskFull { path: String },
    /// redb failed: the disk, the file, a transaction. The source is kept.
    #[error("storage error: {0}")]
    Storage(#[from] redb::Error),
    /// A record redb returned does not decode: the store is damaged, not the request.
    #[error("a stored {what} does not decode ({source}): the store is damaged; restore it from a backup or move it aside")]
    CorruptRecord {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    /// The derived vector index failed; redb still holds every vector.
    #[error("vector index {what}: {detail}; delete vectors.usearch to have it rebuilt on open")]
    VectorIndex { what: String, detail: String },
    /// The store is in use in a way the call cannot share (an integrity check while a
    /// backup reads it).
    #[error("the store is busy ({what}): retry in a moment")]
    Busy { what: String },
    /// The store was closed (its brain unloaded) while a call waited for it.
    #[error("the store was closed while the call waited: retry")]
    Closed,
    /// A bug: a store call panicked.
    #[error("internal error: {0}")]
    Internal(String),
    /// A file operation failed (permission lost, a file removed under the owner, a
    /// read-only mount). The store is reopened by itself once the cause is gone.
    #[error("i/o error at {path}: {detail}; fix the cause (permissions, a read-only mount, a file removed under the owner): the store reopens by itself once it is fixed, and nothing acknowledged was lost")]
    Io { path: String, detail: String },
    #[error("embedding failed: {0}")]
    Embedding(String),
    #[error("{0}")]
    Invalid(String),
}

impl StoreError {
    /// A stable code for machines; never changes once published.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::EmptyText => "empty_text",
            StoreError::TextTooLong { .. } => "text_too_long",
            StoreError::EmptyLabel => "empty_label",
            StoreError::LabelTooLong { .. } => "label_too_long",
            StoreError::LabelWithoutSlug { .. } => "label_without_slug",
            StoreError::BadAgentId { .. } => "bad_agent_id",
            StoreError::FieldTooLong { .. } => "field_too_long",
            StoreError::WouldDowngrade { .. } => "would_downgrade",
            StoreError::ControlCharacters { .. } => "control_characters",
            StoreError::LabelCollision { .. } => "label_collision",
            StoreError::UnknownClaim { .. } => "unknown_claim",
            StoreError::NothingToPurge { .. } => "nothing_to_purge",
            StoreError::SharedPurge { .. } => "shared_purge",
            StoreError::UnknownKey { .. } => "unknown_key",
            StoreError::StoreLocked { .. } => "store_locked",
            StoreError::Damaged { .. } => "store_damaged",
            StoreError::DiskFull { .. } => "disk_full",
            StoreError::Storage(_) => "storage",
            StoreError::CorruptRecord { .. } => "record_corrupt",
            StoreError::VectorIndex { .. } => "vector_index",
            StoreError::Closed => "store_closed",
            StoreError::Busy { .. } => "store_busy",
            StoreError::Internal(_) => "internal",
            StoreError::Io { .. } => "io",
            StoreError::Embedding(_) => "embedding",
            StoreError::Invalid(_) => "invalid_input",
        }
    }

    /// True when the caller sent something wrong (maps to HTTP 400 at the edge).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            StoreError::EmptyText
                | StoreError::TextTooLong { .. }
                | StoreError::EmptyLabel
                | StoreError::LabelTooLong { .. }
                | StoreError::LabelWithoutSlug { .. }
                | StoreError::BadAgentId { .. }
                | StoreError::FieldTooLong { .. }
                | StoreError::ControlCharacters { .. }
                | StoreError::Invalid(_)
        )
    }
}

/// Every redb error keeps its source as a [`redb::Error`].
macro_rules! storage_from {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                StoreError::Storage(e.into())
            }
        }
    )*};
}
storage_from!(
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

impl StoreError {
    /// A record of `what` that does not decode.
    pub(crate) fn corrupt(what: &'static str) -> impl FnOnce(serde_json::Error) -> StoreError {
        move |source| StoreError::CorruptRecord { what, source }
    }
}

impl From<UnknownStrength> for StoreError {
    fn from(e: UnknownStrength) -> StoreError {
        StoreError::Invalid(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_errors_keep_their_source_and_their_code() {
        let e = StoreError::from(redb::StorageError::Corrupted("page 7".into()));
        assert_eq!(e.code(), "storage");
        assert!(std::error::Error::source(&e).is_some());
        assert!(!e.is_bad_input());
        let bad = serde_json::from_slice::<u32>(b"{").unwrap_err();
        let e = StoreError::corrupt("claim record")(bad);
        assert_eq!(e.code(), "record_corrupt");
        assert!(std::error::Error::source(&e).is_some());
        assert_ne!(StoreError::Invalid("x".into()).code(), e.code());
    }
}
