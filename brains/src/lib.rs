//! `brains`: the store engine of ONE medulla store, a project brain or the medulla.
//!
//! # Layout
//!
//! - [`claim`]: claims, their fields, validation, slugs and content hashes.
//! - [`error`]: the typed errors every caller sees, each with a stable `code()`.
//! - [`clock`]: injected time; the engine never reads the wall clock directly.
//! - [`store`]: [`Store`], the redb database plus the derived indexes: memorize and
//!   supersession, history, the act log, key-value, recall.
//! - [`index`]: the claim index: every live claim's terms (BM25), the metadata scope
//!   and filters read, and its vector key; a flat base segment plus a small delta,
//!   saved in a snapshot, rebuilt from redb when that is missing or stale.
//! - [`lexical`]: the tokenizer, BM25's parameters, a prepared query and its hits.
//! - [`vector`]: the usearch index, derived state reconciled against redb on open.
//! - [`recall`]: hybrid ranking (lexical + vector fused) and the read-time aging overlay.
//! - [`embed`]: the [`Embedder`] trait and the static (model2vec) model, loaded from a
//!   directory; fetching the files is the owner's business.
//! - [`hygiene`]: the secret and merge-conflict scanner used before anything is shared.
//! - [`legacy`]: the `.light.md` frontmatter grammar, parsed and rendered.
//!
//! No two files name each other round a circle (`layering`, a test: a file may use its
//! ancestors' module files; every other arrow runs one way).
//!
//! The crate is synchronous on purpose: no async runtime, no HTTP, no actors. The owner
//! process wraps a [`Store`] in an actor; tests and benchmarks drive it directly.

pub mod anchor;
pub mod background;
pub mod claim;
pub mod clock;
pub mod embed;
pub mod error;
pub mod hygiene;
pub mod index;
#[cfg(test)]
mod layering;
pub mod legacy;
pub mod lexical;
mod par;
pub mod progress;
pub mod recall;
pub mod store;
pub mod strength;
pub mod tend;
pub mod vector;

pub use anchor::Anchor;
pub use claim::{
    slugify, Act, ActKind, Claim, ClaimState, MemorizeInput, MemorizeOutcome, Race, Strength,
    Trust, Verdict,
};
pub use clock::{Clock, FixedClock, SystemClock};
pub use embed::{embed_query, EmbedError, Embedder, StaticModel};
pub use error::StoreError;
pub use progress::{OpenPhase, OpenProgress};
pub use recall::{
    Aging, ClaimMeta, Floor, Fusion, Hit, Overlay, RankMode, RecallFilter, RecallQuery,
    RecallResult, Retrieval,
};
pub use store::{PurgeReport, SimilarHit, Store, StoreCopy, StoreOptions, StoreStats, TendWork};
