//! Shared helpers of the brains tests: a deterministic embedder and store openers.

mod bag_of_words;

pub use bag_of_words::BagOfWords;

use std::path::Path;
use std::sync::Arc;

use brains::{Embedder, FixedClock, MemorizeInput, Store, StoreOptions};

pub const T0: i64 = 1_780_000_000_000;

pub fn opts(clock: &Arc<FixedClock>, vectors: bool) -> StoreOptions {
    StoreOptions {
        embedder: vectors.then(|| Arc::new(BagOfWords) as Arc<dyn Embedder>),
        clock: clock.clone(),
        ..Default::default()
    }
}

pub fn open(dir: &Path, clock: &Arc<FixedClock>, vectors: bool) -> Store {
    Store::open(dir, opts(clock, vectors))
        .expect("open store")
        .0
}

pub fn input(label: &str, text: &str) -> MemorizeInput {
    MemorizeInput {
        label: label.into(),
        text: text.into(),
        source_agent: "claude:maker".into(),
        origin_brain: Some("/p".into()),
        ..Default::default()
    }
}
