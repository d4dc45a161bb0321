//! The one map from an error to its HTTP status: only the HTTP layer knows statuses.
//! Bad input is 400, a missing thing 404, a conflict with what is stored 409, a refusal by
//! policy 403 or 422, a message that never reached its actor 503, a timeout 504.

use brains::StoreError;

use crate::backup::BackupError;
use crate::error::OwnerError;
use crate::model::ModelError;

pub fn of(e: &OwnerError) -> u16 {
    match e {
        OwnerError::Store(e) if e.is_bad_input() => 400,
        OwnerError::Store(StoreError::UnknownClaim { .. } | StoreError::UnknownKey { .. }) => 404,
        OwnerError::Store(
            StoreError::WouldDowngrade { .. } | StoreError::LabelCollision { .. },
        ) => 409,
        OwnerError::Store(StoreError::NothingToPurge { .. }) => 404,
        OwnerError::Store(StoreError::SharedPurge { .. }) => 409,
        OwnerError::Store(StoreError::StoreLocked { .. } | StoreError::Closed) => 503,
        // The disk holding the store is full: 507 Insufficient Storage; the store recovers
        // by itself once there is room.
        OwnerError::Store(StoreError::DiskFull { .. }) => 507,
        // Quarantined, busy, or a file fault the owner recovers from: unavailable now.
        OwnerError::Store(
            StoreError::Damaged { .. } | StoreError::Busy { .. } | StoreError::Io { .. },
        ) => 503,
        OwnerError::Store(_) => 500,
        OwnerError::Unbootstrapped { .. } => 409,
        OwnerError::UnknownBrain { .. } => 404,
        OwnerError::BadInput(_)
        | OwnerError::UnknownTool(_)
        | OwnerError::Path(_)
        | OwnerError::TooLong { .. }
        | OwnerError::LimitOutOfRange { .. }
        | OwnerError::InsideMedullaHome { .. }
        | OwnerError::DirNotWritable { .. } => 400,
        OwnerError::NotYourBrain { .. } | OwnerError::FounderOnly { .. } => 403,
        OwnerError::NoTeam => 409,
        OwnerError::Team(_) => 503,
        OwnerError::HygieneRefused { .. } => 422,
        OwnerError::PromotionConflict { .. } | OwnerError::MergeRefused { .. } => 409,
        OwnerError::Unreachable { .. } | OwnerError::Mailbox(_) => 503,
        // A brain still opening, or one whose store cannot be opened, is unavailable,
        // not broken at the caller's end: retry later.
        OwnerError::BrainOpening { .. } | OwnerError::OpenFailed { .. } => 503,
        OwnerError::Timeout { .. } | OwnerError::MedullaTimeout { .. } => 504,
        OwnerError::DiskFull { .. } => 507,
        OwnerError::Io { .. } => 503,
        OwnerError::Backup(e) => match e {
            BackupError::Running(_) | BackupError::OwnerRunning { .. } => 409,
            BackupError::DirRefused { .. } => 400,
            BackupError::ManifestMissing { .. }
            | BackupError::Incomplete { .. }
            | BackupError::ManifestInvalid { .. }
            | BackupError::Damaged { .. }
            | BackupError::UnknownStore { .. } => 422,
            BackupError::Io { .. } => 500,
        },
        // A model that is not there or not a model is the caller's to fix; one that
        // cannot run here (no ONNX Runtime, no network for a named model) is unavailable.
        OwnerError::Model(
            ModelError::UnknownModel { .. } | ModelError::Embed(_) | ModelError::Choice { .. },
        ) => 400,
        OwnerError::Model(_) => 503,
        OwnerError::ModelSwitching { .. } => 409,
        OwnerError::Internal(_) => 500,
    }
}

/// Errors that only the HTTP layer can meet: the request never became a call.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("request body refused ({detail}): the limit is {max} bytes")]
    BodyTooLarge { detail: String, max: usize },
    #[error("the request body did not arrive within {ms} ms: send it whole, promptly")]
    BodyTimeout { ms: u128 },
    #[error("body is not valid JSON: {0}")]
    Parse(String),
    #[error("{0}")]
    ForbiddenOrigin(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    MissingParam(String),
    #[error("bad query string: {0}")]
    BadQuery(String),
    #[error("this medulla owner serves only the OS user {user}, and this connection comes from another user (uid {uid}): run your own owner (`medulla serve --listen 127.0.0.1:<port>` with your own MEDULLA_HOME)")]
    ForeignUser { user: String, uid: u32 },
    #[error("this medulla owner serves only the OS user {user}, and the kernel did not say who is calling ({why}): connect again")]
    PeerUnknown { user: String, why: String },
    #[error("this medulla owner asks every caller for its client token: send `Authorization: Bearer <token>` with the token kept in {file} (readable by {user} only)")]
    TokenRequired { user: String, file: String },
}

impl HttpError {
    pub fn code(&self) -> &'static str {
        match self {
            HttpError::BodyTooLarge { .. } => "body_too_large",
            HttpError::BodyTimeout { .. } => "body_timeout",
            HttpError::Parse(_) => "parse_error",
            HttpError::ForbiddenOrigin(_) => "forbidden_origin",
            HttpError::NotFound(_) => "not_found",
            HttpError::MissingParam(_) | HttpError::BadQuery(_) => "invalid_input",
            HttpError::ForeignUser { .. } => "foreign_user",
            HttpError::PeerUnknown { .. } => "peer_unknown",
            HttpError::TokenRequired { .. } => "token_required",
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            HttpError::BodyTooLarge { .. } => 413,
            HttpError::BodyTimeout { .. } => 408,
            HttpError::Parse(_) | HttpError::MissingParam(_) | HttpError::BadQuery(_) => 400,
            HttpError::ForbiddenOrigin(_)
            | HttpError::ForeignUser { .. }
            | HttpError::PeerUnknown { .. } => 403,
            HttpError::TokenRequired { .. } => 401,
            HttpError::NotFound(_) => 404,
        }
    }
}
