//! Teams (SPEC §13): one PostgreSQL database several owners join. It holds each shared
//! store as an append-only log of acts; every owner keeps a local redb mirror of each
//! (the team medulla, the shared brains) and reads only the mirror.
//!
//! - [`db`]: the database (URL, password, TLS, schema, queries).
//! - [`tls`]: rustls for `sslmode`.
//! - [`shares`]: which local brains are shared, on disk.
//! - [`sync`]: the sync actor, the only holder of the database connections.
//! - [`status`]: what every answer and `team status` say about the team.
//! - [`conflicts`]: each shared store's conflicted versions, kept at apply time.

pub mod conflicts;
pub mod db;
pub mod shares;
pub mod status;
pub mod sync;
mod target;
pub mod tls;

/// The team medulla's key in the log.
pub const TEAM_KEY: &str = "team";
