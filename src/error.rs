//! The owner's typed errors. Each has a stable `code`, an HTTP status, and a message
//! that names the fix.

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
    #[error("refused by the hygiene floor: {found}; remove the secret or conflict marker from the claim (supersede it) and try again")]
    HygieneRefused {
        found: String,
        findings: serde_json::Value,
    },
    #[error("the medulla already holds {slug:?} promoted from {holder} at the same strength: promote a stronger claim, or demote the holder first")]
    PromotionConflict { slug: String, holder: String },
    #[error("unknown tool {0:?}: list the tools with tools/list")]
    UnknownTool(String),
    #[error("{what} is not available yet: {detail}")]
    NotYet { what: String, detail: String },
    #[error("the {actor} actor is unreachable: {detail}; retry, and check `medulla doctor` if it persists")]
    Unreachable { actor: String, detail: String },
    #[error("the {actor} actor did not answer within {ms} ms: retry, or raise call_timeout_ms in config.toml")]
    Timeout { actor: String, ms: u64 },
    #[error("internal error: {0}")]
    Internal(String),
}

impl OwnerError {
    pub fn code(&self) -> &'static str {
        match self {
            OwnerError::Store(e) => e.code(),
            OwnerError::Unbootstrapped { .. } => "unbootstrapped",
            OwnerError::UnknownBrain { .. } => "unknown_brain",
            OwnerError::BadInput(_) => "invalid_input",
            OwnerError::HygieneRefused { .. } => "hygiene_refused",
            OwnerError::PromotionConflict { .. } => "promotion_conflict",
            OwnerError::UnknownTool(_) => "unknown_tool",
            OwnerError::NotYet { .. } => "not_yet_available",
            OwnerError::Unreachable { .. } => "actor_unreachable",
            OwnerError::Timeout { .. } => "timeout",
            OwnerError::Internal(_) => "internal",
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            OwnerError::Store(e) if e.is_bad_input() => 400,
            OwnerError::Store(StoreError::UnknownClaim { .. } | StoreError::UnknownKey { .. }) => {
                404
            }
            OwnerError::Store(StoreError::WouldDowngrade { .. }) => 409,
            OwnerError::Store(StoreError::StoreLocked { .. }) => 503,
            OwnerError::Store(_) => 500,
            OwnerError::Unbootstrapped { .. } => 409,
            OwnerError::UnknownBrain { .. } => 404,
            OwnerError::BadInput(_) | OwnerError::UnknownTool(_) => 400,
            OwnerError::HygieneRefused { .. } => 422,
            OwnerError::PromotionConflict { .. } => 409,
            OwnerError::NotYet { .. } => 501,
            OwnerError::Unreachable { .. } => 503,
            OwnerError::Timeout { .. } => 504,
            OwnerError::Internal(_) => 500,
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
            _ => {}
        }
        v
    }
}

pub type Result<T, E = OwnerError> = std::result::Result<T, E>;
