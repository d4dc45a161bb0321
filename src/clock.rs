//! The owner's clock: the system's, or — a test-only setting (`clock_file` in
//! config.toml) — the number of milliseconds written in a file, so a black-box test can
//! move time and watch claims age end to end.

use std::path::PathBuf;

use brains::{Clock, SystemClock};

/// Reads the time from a file on every call; an unreadable file reads as the system time.
#[derive(Debug)]
pub struct FileClock(pub PathBuf);

impl Clock for FileClock {
    fn now_ms(&self) -> i64 {
        std::fs::read_to_string(&self.0)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or_else(|| SystemClock.now_ms())
    }
}
