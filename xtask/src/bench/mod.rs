//! The benches of `cargo xtask bench --X` (and `bench-lexical`): one module a bench, over
//! a shared runner (timing, alternation, percentiles, the markdown table) and a shared
//! corpus (the deterministic claim text the store-level benches write and query).

pub(crate) mod anchors;
pub(crate) mod autostart;
pub(crate) mod backup;
pub(crate) mod connect;
pub(crate) mod corpus;
pub(crate) mod fresh;
pub(crate) mod hall;
pub(crate) mod hint_session;
pub(crate) mod hints;
pub(crate) mod hnsw;
pub(crate) mod http;
pub(crate) mod import;
pub(crate) mod import_from;
#[cfg(feature = "tantivy-compare")]
pub(crate) mod lexical;
pub(crate) mod models;
pub(crate) mod near;
pub(crate) mod reopen;
pub(crate) mod runner;
pub(crate) mod scale;
pub(crate) mod scale_store;
pub(crate) mod store;
pub(crate) mod team;
pub(crate) mod tend;
pub(crate) mod worktree;
pub(crate) mod zipf;
