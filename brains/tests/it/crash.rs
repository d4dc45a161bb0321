//! Regression guard for the durability promise: a process killed mid-write (SIGKILL)
//! loses nothing it acknowledged, the vector index comes back in step and the claim-index
//! snapshot is caught up.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;

use crate::common::{opts, T0};
use brains::recall::RankMode;
use brains::{FixedClock, RecallQuery, Store};

#[test]
fn every_acknowledged_claim_survives_sigkill_and_the_index_is_caught_up() {
    let d = tempfile::tempdir().unwrap();
    // The writer is a binary of this crate (`src/bin/crash_writer.rs`).
    let mut child = Command::new(env!("CARGO_BIN_EXE_crash_writer"))
        .arg(d.path())
        .arg(T0.to_string())
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
        !report.index_rebuilt,
        "the index file (checkpointed every 256 vector writes at this size, and by the \
         settler whenever it has settled everything) is caught up by adding the vectors \
         written since, not rebuilt: {report:?}"
    );
    assert!(
        !report.claim_index_rebuilt && report.claim_index_caught_up >= 300 - 256,
        "the claim-index snapshot (saved every 256 acts) is caught up from the act log: {report:?}"
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
            limit: 50,
            mode: RankMode::Vector,
            ..Default::default()
        })
        .unwrap();
    // The test embedder hashes words into 64 buckets, so several claims tie with the
    // last one at the best similarity (ties rank by slug): it must be among the best.
    let best = hits.hits.first().map(|h| h.score);
    assert!(
        hits.hits
            .iter()
            .any(|h| &h.claim.slug == last && Some(h.score) == best),
        "the last acknowledged claim {last} is found by vector recall at the best score: {:?}",
        hits.hits
            .iter()
            .map(|h| (&h.claim.slug, h.score))
            .take(12)
            .collect::<Vec<_>>()
    );
}

/// A checkpoint cut off mid-write (a crash while the derived files were being written)
/// leaves a torn temporary file and, were the rename not atomic, a torn file: the store
/// opens consistent either way, answering from what redb holds.
#[test]
fn a_checkpoint_torn_mid_write_recovers_to_a_consistent_index() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    {
        let (mut s, _) = Store::open(d.path(), opts(&clock, true)).unwrap();
        for i in 0..40 {
            s.memorize(brains::MemorizeInput {
                label: format!("claim {i}"),
                text: format!("durable text {i} about kettles"),
                source_agent: "claude:maker".into(),
                origin_brain: Some("/p".into()),
                ..Default::default()
            })
            .unwrap();
        }
        s.close().unwrap();
    }
    for (name, tmp) in [
        ("vectors.usearch", "vectors.usearch.tmp"),
        ("claims.snapshot", ".claims.snapshot.tmp"),
    ] {
        let whole = std::fs::read(d.path().join(name)).unwrap();
        // The temporary file of a checkpoint cut off halfway, beside the last whole one.
        std::fs::write(d.path().join(tmp), &whole[..whole.len() / 2]).unwrap();
        // And the file itself torn, as a non-atomic rename would leave it.
        std::fs::write(d.path().join(name), &whole[..whole.len() / 2]).unwrap();
    }
    let (s, report) = Store::open(d.path(), opts(&clock, true)).unwrap();
    assert!(
        report.index_rebuilt && report.claim_index_rebuilt,
        "torn derived files are rebuilt from redb: {report:?}"
    );
    assert_eq!(s.check_index().unwrap(), None);
    assert_eq!(s.stats().unwrap().vectors, 40);
    let hits = s
        .recall(&RecallQuery {
            text: "durable text 17 kettles".into(),
            limit: 5,
            mode: RankMode::Lexical,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits.hits[0].claim.slug, "claim-17");
}
