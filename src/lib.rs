//! medulla: a local memory owner for AI coding agents.
//!
//! # Layout
//!
//! - [`config`]: `$MEDULLA_HOME`, `config.toml`, listen address and timeouts.
//! - [`roster`]: which brains exist; disk is the truth; fingerprints and root matching.
//! - [`brain`]: the brain actor, one per warm brain plus the medulla's, each owning one
//!   [`brains::Store`].
//! - [`owner`]: the supervisor actor: loads, restarts and unloads brain actors; the
//!   shared registry request handlers read.
//! - [`audit`]: the audit actor, the only writer of the medulla: promotion, doctrine
//!   birth, demotion.
//! - [`mailbox`]: the field-report spool, the distributor actor, boxes, fate, sweep.
//! - [`service`]: every tool and REST read, with routing by caller root and rendering of
//!   rows; shared by MCP, REST and the CLI.
//! - [`http`]: hyper server, MCP Streamable HTTP via `rmcp`, the REST routes, the
//!   loopback guard.
//! - [`bridge`]: `medulla bridge`, stdio MCP forwarded to the owner over HTTP.
//! - [`cli`]: the `medulla` command line, a client of the running owner.
//! - [`model`]: the embedding model's files: locating, fetching (pip), loading.
//! - [`serve`]: wiring it all together for `medulla serve`.
//!
//! The store engine itself lives in the `brains` crate and knows nothing of this one.

pub mod audit;
pub mod brain;
pub mod bridge;
pub mod cli;
pub mod config;
pub mod error;
pub mod http;
pub mod mailbox;
pub mod model;
pub mod owner;
pub mod roster;
pub mod serve;
pub mod service;
