//! The brains integration tests, one binary of modules (as ripgrep's `tests/tests.rs`):
//! one link step, and every module shares `common`.

mod backup;
mod batch;
mod common;
mod crash;
mod deferred;
mod embed;
mod hygiene;
mod legacy;
mod merge;
mod review;
mod share;
mod snapshot;
mod store;
mod tend;
mod vector;
