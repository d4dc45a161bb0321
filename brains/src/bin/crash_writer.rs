//! The writer of the crash test (`tests/it/crash.rs`), not a tool: it memorizes claims
//! into the store in `<dir>` one by one with a fixed clock starting at `<t0>`, and prints
//! `ACK <slug>` after each memorize returns, until it is killed.
//!
//! Usage: `crash_writer <dir> <t0>`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use brains::{Embedder, FixedClock, MemorizeInput, Store, StoreOptions};

#[path = "../../tests/it/common/bag_of_words.rs"]
mod bag_of_words;

fn main() {
    let mut args = std::env::args_os().skip(1);
    let (Some(dir), Some(t0)) = (args.next(), args.next()) else {
        eprintln!("usage: crash_writer <dir> <t0>");
        std::process::exit(2);
    };
    let dir = PathBuf::from(dir);
    let t0: i64 = t0
        .to_str()
        .and_then(|s| s.parse().ok())
        .expect("t0 is a number of milliseconds");
    let clock = Arc::new(FixedClock::new(t0));
    let opts = StoreOptions {
        embedder: Some(Arc::new(bag_of_words::BagOfWords) as Arc<dyn Embedder>),
        clock: clock.clone(),
        ..Default::default()
    };
    let (mut store, _) = Store::open(&dir, opts).expect("open the store");
    let mut out = std::io::stdout();
    for i in 0.. {
        clock.advance(1);
        store
            .memorize(MemorizeInput {
                label: format!("claim {i}"),
                text: format!("durable text {i} about kettles"),
                source_agent: "claude:maker".into(),
                origin_brain: Some("/p".into()),
                ..Default::default()
            })
            .expect("memorize");
        writeln!(out, "ACK claim-{i}").expect("stdout");
        out.flush().expect("stdout");
    }
}
