//! The claim-index snapshot (`claims.snapshot`): the lexical index and claim metadata a
//! dormant store opens from instead of re-reading every claim. Derived state, like the
//! vector index: missing, corrupt, foreign or stale snapshots are rebuilt or caught up,
//! and recall answers exactly as it does over an index rebuilt from redb.

use std::path::Path;
use std::sync::Arc;

use brains::recall::RankMode;
use brains::{FixedClock, RecallFilter, RecallQuery, Store, Strength, Verdict};

use crate::common::{input, opts, T0};

const SNAPSHOT: &str = "claims.snapshot";

fn fill(dir: &Path, clock: &Arc<FixedClock>, from: usize, to: usize) {
    let (mut s, _) = Store::open(dir, opts(clock, false)).unwrap();
    for i in from..to {
        clock.advance(1);
        let mut inp = input(
            &format!("note {i} {}", ["cache", "deploy", "schema"][i % 3]),
            &format!(
                "the {} {} broke on runner {} after the {} change",
                ["cache", "index", "router"][i % 3],
                ["flake", "timeout", "retry", "queue"][i % 4],
                i % 7,
                ["merge", "release"][i % 2]
            ),
        );
        if i % 5 == 0 {
            inp.strength = Strength::Verified;
        }
        s.memorize(inp).unwrap();
    }
    s.close().unwrap();
}

/// Every answer a set of queries gets, scores included, as comparable text.
fn answers(s: &Store) -> Vec<String> {
    let mut out = vec![];
    let filters = [
        RecallFilter::default(),
        RecallFilter {
            min_strength: Some(Strength::Verified),
            ..Default::default()
        },
        RecallFilter {
            min_trust: Some(0.6),
            ..Default::default()
        },
    ];
    for text in [
        "cache flake",
        "router timeout release",
        "runner 3",
        "queue",
        "",
    ] {
        for scope in [None, Some("note 1".to_string())] {
            for filter in &filters {
                let r = s
                    .recall(&RecallQuery {
                        text: text.into(),
                        scope: scope.clone(),
                        limit: 8,
                        mode: RankMode::Lexical,
                        filter: filter.clone(),
                        ..Default::default()
                    })
                    .unwrap();
                for h in r.hits {
                    out.push(format!(
                        "{text}|{scope:?}|{}|{}|{}",
                        h.claim.slug, h.score, h.matched
                    ));
                }
            }
        }
    }
    assert!(out.len() > 20, "the queries find something");
    out
}

/// What a store answers over an index rebuilt from redb.
fn rebuilt_answers(dir: &Path, clock: &Arc<FixedClock>) -> Vec<String> {
    let _ = std::fs::remove_file(dir.join(SNAPSHOT));
    let (s, report) = Store::open(dir, opts(clock, false)).unwrap();
    assert!(report.claim_index_rebuilt, "{report:?}");
    answers(&s)
}

#[test]
fn a_closed_store_opens_from_its_snapshot_and_answers_as_a_rebuild_does() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    fill(d.path(), &clock, 0, 60);
    assert!(
        d.path().join(SNAPSHOT).is_file(),
        "close saves the snapshot"
    );
    let (s, report) = Store::open(d.path(), opts(&clock, false)).unwrap();
    assert!(!report.claim_index_rebuilt, "{report:?}");
    assert_eq!(report.claim_index_caught_up, 0);
    let from_snapshot = answers(&s);
    drop(s);
    assert_eq!(from_snapshot, rebuilt_answers(d.path(), &clock));
}

#[test]
fn a_missing_snapshot_is_rebuilt_and_saved() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    fill(d.path(), &clock, 0, 20);
    std::fs::remove_file(d.path().join(SNAPSHOT)).unwrap();
    let (s, report) = Store::open(d.path(), opts(&clock, false)).unwrap();
    assert!(report.claim_index_rebuilt);
    assert_eq!(
        report.claim_index_rebuild_reason.as_deref(),
        Some("there is no claim-index snapshot")
    );
    let first = answers(&s);
    drop(s);
    let (s, report) = Store::open(d.path(), opts(&clock, false)).unwrap();
    assert!(
        !report.claim_index_rebuilt,
        "the rebuild was saved: {report:?}"
    );
    assert_eq!(answers(&s), first);
}

#[test]
fn a_corrupt_or_truncated_snapshot_is_rebuilt() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    fill(d.path(), &clock, 0, 30);
    let good = std::fs::read(d.path().join(SNAPSHOT)).unwrap();
    let expected = rebuilt_answers(d.path(), &clock);
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x5a;
    let cases: [(&str, Vec<u8>); 4] = [
        ("a flipped byte", flipped),
        ("a torn write", good[..good.len() / 3].to_vec()),
        ("an empty file", vec![]),
        ("another format", b"not a snapshot at all".to_vec()),
    ];
    for (what, bytes) in cases {
        std::fs::write(d.path().join(SNAPSHOT), bytes).unwrap();
        let (s, report) = Store::open(d.path(), opts(&clock, false)).unwrap();
        assert!(report.claim_index_rebuilt, "{what}: {report:?}");
        if what == "a flipped byte" {
            // Summed while parsing: a flip is told as a checksum failure, never trusted.
            let why = report
                .claim_index_rebuild_reason
                .clone()
                .unwrap_or_default();
            assert!(why.contains("checksum"), "{what}: {why}");
        }
        assert_eq!(answers(&s), expected, "{what}");
    }
}

#[test]
fn a_stale_snapshot_is_caught_up_from_the_act_log() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    fill(d.path(), &clock, 0, 30);
    // The snapshot as a crash would leave it: saved before the writes that follow.
    let stale = std::fs::read(d.path().join(SNAPSHOT)).unwrap();
    fill(d.path(), &clock, 30, 40);
    {
        let (mut s, _) = Store::open(d.path(), opts(&clock, false)).unwrap();
        clock.advance(1);
        let mut again = input("note 3 cache", "the cache now never flakes on runner 3");
        again.strength = Strength::Verified;
        s.memorize(again).unwrap();
        s.demote("note-4-deploy", "claude:maker", "wrong").unwrap();
        s.learn("note-6-cache", Verdict::Correct, "claude:maker", None)
            .unwrap();
        s.learn("note-6-cache", Verdict::Correct, "claude:maker", None)
            .unwrap();
        s.kv_set("boot", "value", "claude:maker").unwrap();
        s.close().unwrap();
    }
    let expected = rebuilt_answers(d.path(), &clock);
    std::fs::write(d.path().join(SNAPSHOT), &stale).unwrap();
    let (s, report) = Store::open(d.path(), opts(&clock, false)).unwrap();
    assert!(!report.claim_index_rebuilt, "{report:?}");
    assert_eq!(report.claim_index_caught_up, 10 + 5, "{report:?}");
    assert_eq!(answers(&s), expected);
    assert!(s
        .recall(&RecallQuery {
            text: "deploy".into(),
            limit: 50,
            ..Default::default()
        })
        .unwrap()
        .hits
        .iter()
        .all(|h| h.claim.slug != "note-4-deploy"));
}

/// A checkpoint after a write folds the index on the writer's thread and writes the file
/// on a thread of its own while writes go on: the file it leaves is the index at that
/// act, caught up from the act log like any other.
#[test]
fn a_snapshot_written_in_the_background_is_the_index_at_its_checkpoint() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let path = d.path().join(SNAPSHOT);
    let (mut s, _) = Store::open(d.path(), opts(&clock, false)).unwrap();
    let opened = std::fs::read(&path).ok();
    let note = |i: usize| {
        input(
            &format!("note {i} {}", ["cache", "deploy", "schema"][i % 3]),
            &format!(
                "the {} broke on runner {}",
                ["cache", "index"][i % 2],
                i % 7
            ),
        )
    };
    // The 256th act is due a checkpoint; the file is written while these go on.
    for i in 0..256 {
        clock.advance(1);
        s.memorize(note(i)).unwrap();
    }
    s.learn("note-3-cache", Verdict::Correct, "claude:maker", None)
        .unwrap();
    for i in 256..262 {
        clock.advance(1);
        s.memorize(note(i)).unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let background = loop {
        match std::fs::read(&path) {
            Ok(b) if Some(&b) != opened.as_ref() => break b,
            _ if std::time::Instant::now() > deadline => {
                panic!("no snapshot was written after 256 acts")
            }
            _ => std::thread::sleep(std::time::Duration::from_millis(5)),
        }
    };
    s.close().unwrap();
    let expected = rebuilt_answers(d.path(), &clock);
    std::fs::write(&path, &background).unwrap();
    let (s, report) = Store::open(d.path(), opts(&clock, false)).unwrap();
    assert!(!report.claim_index_rebuilt, "{report:?}");
    // The learn and the six memorizes after the checkpoint's act.
    assert_eq!(report.claim_index_caught_up, 7, "{report:?}");
    assert_eq!(answers(&s), expected);
}

#[test]
fn a_purge_after_the_snapshot_or_a_foreign_snapshot_forces_a_rebuild() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    fill(d.path(), &clock, 0, 20);
    let stale = std::fs::read(d.path().join(SNAPSHOT)).unwrap();
    {
        let (mut s, _) = Store::open(d.path(), opts(&clock, false)).unwrap();
        s.purge("note-2-schema", "claude:maker").unwrap();
        s.close().unwrap();
    }
    std::fs::write(d.path().join(SNAPSHOT), &stale).unwrap();
    let (s, report) = Store::open(d.path(), opts(&clock, false)).unwrap();
    assert!(report.claim_index_rebuilt, "{report:?}");
    assert!(s.get("note-2-schema").unwrap().is_none());
    assert!(answers(&s).iter().all(|a| !a.contains("note-2-schema")));
    drop(s);

    // Another store's snapshot, even one at the same act sequence, is never used.
    let other = tempfile::tempdir().unwrap();
    let clock2 = Arc::new(FixedClock::new(T0 + 5));
    fill(other.path(), &clock2, 0, 20);
    std::fs::copy(other.path().join(SNAPSHOT), d.path().join(SNAPSHOT)).unwrap();
    let (_, report) = Store::open(d.path(), opts(&clock, false)).unwrap();
    assert!(report.claim_index_rebuilt, "{report:?}");
    assert_eq!(
        report.claim_index_rebuild_reason.as_deref(),
        Some("the claim-index snapshot belongs to another store")
    );
}
