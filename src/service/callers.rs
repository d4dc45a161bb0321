//! The callers the owner refused since it started (SPEC §15), counted where the HTTP
//! layer refuses them and shown by `doctor`: another OS user, a connection whose user
//! the kernel did not name, a request without the client token.

use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The running counts.
#[derive(Debug, Default)]
pub struct Refusals {
    foreign_user: AtomicU64,
    peer_unknown: AtomicU64,
    token_required: AtomicU64,
}

/// Why a caller was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The connection's other end belongs to another OS user.
    ForeignUser,
    /// The kernel did not say who owns the other end (refused: fail closed).
    PeerUnknown,
    /// No valid client token where one is asked for.
    TokenRequired,
}

impl Refusals {
    pub fn count(&self, why: Refused) {
        let n = match why {
            Refused::ForeignUser => &self.foreign_user,
            Refused::PeerUnknown => &self.peer_unknown,
            Refused::TokenRequired => &self.token_required,
        };
        n.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> RefusedCallers {
        RefusedCallers {
            foreign_user: self.foreign_user.load(Ordering::Relaxed),
            peer_unknown: self.peer_unknown.load(Ordering::Relaxed),
            token_required: self.token_required.load(Ordering::Relaxed),
        }
    }
}

/// Callers refused since the owner started, as `doctor` reports them.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
pub struct RefusedCallers {
    /// Connections from another OS user (`403 foreign_user`).
    pub foreign_user: u64,
    /// Connections whose user the kernel did not name (`403 peer_unknown`).
    pub peer_unknown: u64,
    /// Requests without the client token where it is asked for (`401 token_required`).
    pub token_required: u64,
}
