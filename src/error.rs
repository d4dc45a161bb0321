//! The owner's typed errors. Each has a stable machine-readable `code` and a lowercase
//! message that names the fix. Which HTTP status each gets is the HTTP layer's business
//! (`src/http/status.rs`).

use brains::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum OwnerError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no brain covers {caller_root}: writes need a brain; create one with {fix}")]
    Unbootstrapped { caller_root: String, fix: String },
    #[error("no registered brain is named {name:?}: list brains with `medulla brains`, or create it with bootstrap")]
    UnknownBrain { name: String },
    #[error("{0}")]
    BadInput(String),
    #[error(transparent)]
    Path(#[from] crate::roster::PathError),
    #[error("this request is routed to {routed}, not to {brain}: only a caller routed to {brain}, or the founder (the medulla command line, or REST with the founder token), may {verb} it")]
    NotYourBrain {
        brain: String,
        routed: String,
        verb: &'static str,
    },
    #[error("{what} is for the founder only: run it from the medulla command line, which presents the owner's founder token")]
    FounderOnly { what: String },
    #[error("this owner has joined no team: run `medulla team join URL` (the URL a team admin gave you); a running owner joins at once")]
    NoTeam,
    #[error("the team: {0}")]
    Team(String),
    #[error("{what} is {len} bytes, over the limit of {max}: shorten it")]
    TooLong {
        what: &'static str,
        len: usize,
        max: usize,
    },
    #[error("limit {limit} is out of range: give a limit from 1 to {max}")]
    LimitOutOfRange { limit: usize, max: usize },
    #[error("refusing to write into {dir}: it is inside the medulla home ({home}), which only the owner writes; export somewhere else")]
    InsideMedullaHome { dir: String, home: String },
    #[error("cannot write into {dir}: {detail}; give a directory this user can create or write to (it is created when missing)")]
    DirNotWritable { dir: String, detail: String },
    #[error("refused by the hygiene floor: {found}; {fix}")]
    HygieneRefused {
        found: String,
        findings: serde_json::Value,
        fix: String,
    },
    #[error("the medulla already holds {slug:?} promoted from {holder} at the same strength: promote a stronger claim, or demote the holder first")]
    PromotionConflict { slug: String, holder: String },
    #[error("unknown tool {0:?}: list the tools with tools/list")]
    UnknownTool(String),
    #[error("the {actor} actor is unreachable: {detail}; retry, and check `medulla doctor` if it persists")]
    Unreachable { actor: String, detail: String },
    #[error("the {actor} actor did not answer within {ms} ms: retry, or raise call_timeout_ms in config.toml")]
    Timeout { actor: String, ms: u64 },
    #[error("brain {brain} is still opening ({phase}, {done} of {total}, {elapsed_ms} ms so far): retry shortly; no other brain waits on it")]
    BrainOpening {
        brain: String,
        elapsed_ms: u64,
        phase: &'static str,
        done: u64,
        total: u64,
    },
    #[error("brain {brain} could not be opened: {detail}")]
    OpenFailed {
        brain: String,
        code: &'static str,
        detail: String,
    },
    #[error("the medulla did not answer within {ms} ms; the project part is complete")]
    MedullaTimeout { ms: u64 },
    #[error("the mailbox distributor failed: {0}; the letters are safe in the spool")]
    Mailbox(String),
    #[error("no space left on the disk that holds {path}: free space there (or move MEDULLA_HOME to a larger disk), then send it again; nothing was half-written")]
    DiskFull { path: String },
    #[error("cannot write {path}: {detail}; fix the cause (permissions, a read-only mount), then send it again; nothing was half-written")]
    Io { path: String, detail: String },
    #[error(transparent)]
    Backup(#[from] crate::backup::BackupError),
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    #[error("a change of model to {to} is under way: wait for it (`medulla model status`), then ask again")]
    ModelSwitching { to: String },
    #[error("refusing to merge {from} into {into}: {why}")]
    MergeRefused {
        from: String,
        into: String,
        why: String,
    },
    #[error("internal error: {0}")]
    Internal(String),
}

impl OwnerError {
    /// A spool append that failed: a full disk, or another file fault.
    pub fn spool(path: &std::path::Path, e: std::io::Error) -> OwnerError {
        let path = path.display().to_string();
        if matches!(
            e.kind(),
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
        ) {
            OwnerError::DiskFull { path }
        } else {
            OwnerError::Io {
                path,
                detail: e.to_string(),
            }
        }
    }
}

impl OwnerError {
    pub fn code(&self) -> &'static str {
        match self {
            OwnerError::Store(e) => e.code(),
            OwnerError::Unbootstrapped { .. } => "unbootstrapped",
            OwnerError::UnknownBrain { .. } => "unknown_brain",
            OwnerError::MergeRefused { .. } => "merge_refused",
            OwnerError::BadInput(_) => "invalid_input",
            OwnerError::Path(e) => e.code(),
            OwnerError::NotYourBrain { .. } => "not_your_brain",
            OwnerError::FounderOnly { .. } => "founder_only",
            OwnerError::NoTeam => "no_team",
            OwnerError::Team(_) => "team",
            OwnerError::TooLong { .. } => "too_long",
            OwnerError::LimitOutOfRange { .. } => "limit_out_of_range",
            OwnerError::InsideMedullaHome { .. } => "inside_medulla_home",
            OwnerError::DirNotWritable { .. } => "dir_not_writable",
            OwnerError::HygieneRefused { .. } => "hygiene_refused",
            OwnerError::PromotionConflict { .. } => "promotion_conflict",
            OwnerError::UnknownTool(_) => "unknown_tool",
            OwnerError::Unreachable { .. } => "actor_unreachable",
            OwnerError::Timeout { .. } => "timeout",
            OwnerError::BrainOpening { .. } => "brain_opening",
            OwnerError::OpenFailed { code, .. } => code,
            OwnerError::MedullaTimeout { .. } => "medulla_timeout",
            OwnerError::Mailbox(_) => "mailbox",
            OwnerError::DiskFull { .. } => "disk_full",
            OwnerError::Io { .. } => "io",
            OwnerError::Backup(e) => e.code(),
            OwnerError::Model(e) => e.code(),
            OwnerError::ModelSwitching { .. } => "model_switching",
            OwnerError::Internal(_) => "internal",
        }
    }

    /// The error as the JSON object every surface returns.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({ "code": self.code(), "message": self.to_string() });
        match self {
            OwnerError::Unbootstrapped { caller_root, fix } => {
                v["caller_root"] = caller_root.clone().into();
                v["fix"] = fix.clone().into();
            }
            OwnerError::HygieneRefused { findings, .. } => {
                v["findings"] = findings.clone();
            }
            OwnerError::Store(StoreError::WouldDowngrade {
                slug,
                live,
                attempted,
            }) => {
                v["slug"] = slug.clone().into();
                v["live_strength"] = live.as_str().into();
                v["attempted_strength"] = attempted.as_str().into();
            }
            OwnerError::Store(StoreError::LabelCollision {
                slug,
                existing,
                attempted,
            }) => {
                v["slug"] = slug.clone().into();
                v["existing_label"] = existing.clone().into();
                v["attempted_label"] = attempted.clone().into();
            }
            OwnerError::Path(crate::roster::PathError::Refused { root, .. }) => {
                v["root"] = root.clone().into();
            }
            OwnerError::BrainOpening {
                brain,
                elapsed_ms,
                phase,
                done,
                total,
            } => {
                v["brain"] = brain.clone().into();
                v["elapsed_ms"] = (*elapsed_ms).into();
                v["progress"] = serde_json::json!({ "phase": phase, "done": done, "total": total });
            }
            OwnerError::OpenFailed { brain, .. } => {
                v["brain"] = brain.clone().into();
            }
            OwnerError::DirNotWritable { dir, .. } => {
                v["dir"] = dir.clone().into();
            }
            OwnerError::NotYourBrain { brain, routed, .. } => {
                v["brain"] = brain.clone().into();
                v["routed"] = routed.clone().into();
            }
            _ => {}
        }
        v
    }
}

pub type Result<T, E = OwnerError> = std::result::Result<T, E>;
