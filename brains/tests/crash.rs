//! Regression guard for the durability promise: a process killed mid-write (SIGKILL)
//! loses nothing it acknowledged, and the vector index comes back in step.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use brains::recall::RankMode;
use brains::{FixedClock, RecallQuery, Store};
use common::{input, opts, T0};

const DIR_ENV: &str = "BRAINS_CRASH_WRITER_DIR";

/// Not a test on its own: the child process of the crash test. Without the env var it
/// returns at once.
#[test]
fn crash_writer_child() {
    let Some(dir) = std::env::var_os(DIR_ENV) else {
        return;
    };
    let clock = Arc::new(FixedClock::new(T0));
    let (mut s, _) = Store::open(std::path::Path::new(&dir), opts(&clock, true)).unwrap();
    let mut out = std::io::stdout();
    for i in 0.. {
        clock.advance(1);
        s.memorize(input(
            &format!("claim {i}"),
            &format!("durable text {i} about kettles"),
        ))
        .unwrap();
        writeln!(out, "ACK claim-{i}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn every_acknowledged_claim_survives_sigkill_and_the_index_is_rebuilt() {
    let d = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_writer_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(DIR_ENV, d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut acked = Vec::new();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines {
        let line = line.unwrap();
        if let Some(slug) = line.strip_prefix("ACK ") {
            acked.push(slug.to_string());
            // Well past the index's periodic save (every 256 writes), so the file on
            // disk is stale as well as cut off mid-write.
            if acked.len() == 300 {
                break;
            }
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(acked.len(), 300, "the writer stopped early");

    let clock = Arc::new(FixedClock::new(T0 + 1_000_000));
    let (s, report) = Store::open(d.path(), opts(&clock, true)).unwrap();
    for slug in &acked {
        assert!(
            s.get(slug).unwrap().is_some(),
            "acknowledged {slug} was lost"
        );
    }
    assert!(
        report.index_rebuilt,
        "the unsaved index must have been found out of step: {report:?}"
    );
    assert_eq!(s.check_index().unwrap(), None);
    let st = s.stats().unwrap();
    assert!(
        st.live_claims >= 300 && st.vectors == st.live_claims,
        "{st:?}"
    );
    let last = acked.last().unwrap();
    let n = last.trim_start_matches("claim-");
    let hits = s
        .recall(&RecallQuery {
            text: format!("durable text {n} kettles"),
            scope: None,
            limit: 5,
            mode: RankMode::Vector,
            ..Default::default()
        })
        .unwrap();
    assert!(
        hits.hits.iter().any(|h| &h.claim.slug == last),
        "the last acknowledged claim is found by vector recall"
    );
}
