//! medulla: a local memory owner for AI coding agents.
//!
//! # Layout
//!
//! - [`config`]: `$MEDULLA_HOME`, `config.toml`, listen address and timeouts.
//! - [`floor`]: the hygiene floor over every field of shared, committable or project text.
//! - [`founder`]: the founder token, which marks the founder surface (CLI, the Hall).
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
//! - [`serve`]: wiring it all together for `medulla serve`.
//!
//! The store engine itself lives in the `brains` crate and knows nothing of this one.

pub mod audit;
pub mod brain;
pub mod bridge;
pub mod call;
pub mod cli;
pub mod config;
pub mod error;
pub mod floor;
pub mod founder;
pub mod git;
pub mod http;
pub mod mailbox;
pub mod owner;
pub mod roster;
pub mod serve;
pub mod service;
