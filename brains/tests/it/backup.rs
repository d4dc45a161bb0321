//! Online backup of one store: the copy is the store as it was when the backup's read
//! transaction began (writes after it are absent, every write before it present), it
//! opens as a store of its own with its indexes rebuilt, and its hash is the file's.

use std::sync::Arc;

use brains::store::backup::{count_copy, hash_file, held_by_another};
use brains::{FixedClock, RecallQuery, Store, Verdict};

use crate::common::{input, open, opts, T0};

#[test]
fn a_copy_holds_exactly_what_was_committed_when_its_transaction_began() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(&tmp.path().join("store"), &clock, true);
    for i in 0..40 {
        s.memorize(input(
            &format!("before {i}"),
            &format!("fact number {i} about the cache"),
        ))
        .unwrap();
    }
    // A superseded version (history), a graded claim (an act) and a boot-memory key.
    s.memorize(input("before 0", "fact number 0, corrected"))
        .unwrap();
    s.learn("before-1", Verdict::Correct, "claude:maker", None)
        .unwrap();
    s.kv_set("build", "cargo build", "claude:maker").unwrap();
    let at_begin = s.stats().unwrap();

    let source = s.backup_source().unwrap();
    // Writes after the transaction began: in the store, never in the copy.
    for i in 0..10 {
        s.memorize(input(&format!("after {i}"), "written while the copy ran"))
            .unwrap();
    }
    s.kv_set("late", "x", "claude:maker").unwrap();
    let dest = tmp.path().join("copy");
    let copy = source.write_to(&dest).unwrap();

    assert_eq!(copy.counts.live_claims, at_begin.live_claims);
    assert_eq!(copy.counts.history_versions, at_begin.history_versions);
    assert_eq!(copy.counts.acts, at_begin.acts);
    assert_eq!(copy.counts.kv_keys, at_begin.kv_keys);
    assert_eq!(copy.counts.vectors, at_begin.vectors);
    assert_eq!(copy.counts.live_claims, 40);
    assert_eq!(copy.counts.history_versions, 1);
    assert_eq!(copy.counts.kv_keys, 1);
    assert_eq!(
        hash_file(&copy.file).unwrap(),
        (copy.bytes, copy.sha256.clone())
    );
    assert_eq!(count_copy(&copy.file).unwrap(), copy.counts);
    // Only the truth is copied; the derived files are rebuilt on open.
    let names: Vec<String> = std::fs::read_dir(&dest)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["store.redb".to_string()]);
    drop(s);

    let (restored, report) = Store::open(&dest, opts(&clock, true)).unwrap();
    assert!(report.claim_index_rebuilt && report.index_rebuilt);
    let stats = restored.stats().unwrap();
    assert_eq!(stats.live_claims, 40);
    assert_eq!(stats.acts, copy.counts.acts);
    assert!(restored.get("after-0").unwrap().is_none());
    assert_eq!(
        restored.get("before-0").unwrap().unwrap().text,
        "fact number 0, corrected"
    );
    assert_eq!(restored.history("before-0").unwrap().len(), 2);
    assert_eq!(
        restored.kv_get("build").unwrap().as_deref(),
        Some("cargo build")
    );
    assert!(restored.kv_get("late").unwrap().is_none());
    let hits = restored
        .recall(&RecallQuery {
            text: "fact number 7".into(),
            ..Default::default()
        })
        .unwrap();
    assert!(hits.hits.iter().any(|h| h.claim.slug == "before-7"));
    assert_eq!(restored.check_index().unwrap(), None);
}

#[test]
fn a_copy_is_never_written_over_another() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let s = open(&tmp.path().join("store"), &clock, false);
    let dest = tmp.path().join("copy");
    s.backup_to(&dest).unwrap();
    let err = s.backup_to(&dest).unwrap_err();
    assert_eq!(err.code(), "io", "{err}");
    assert!(err.to_string().contains("new directory"), "{err}");
}

#[test]
fn a_damaged_copy_does_not_count_as_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(&tmp.path().join("store"), &clock, false);
    s.memorize(input("one", "a fact")).unwrap();
    let copy = s.backup_to(&tmp.path().join("copy")).unwrap();
    // Cut the file short: the header says more pages than there are.
    let bytes = std::fs::read(&copy.file).unwrap();
    std::fs::write(&copy.file, &bytes[..bytes.len() / 3]).unwrap();
    assert!(count_copy(&copy.file).is_err());
}

#[test]
fn an_open_store_is_seen_as_held_and_a_closed_one_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let dir = tmp.path().join("store");
    let s = open(&dir, &clock, false);
    let file = dir.join(brains::store::DB_FILE);
    assert!(held_by_another(&file));
    s.close().unwrap();
    assert!(!held_by_another(&file));
    assert!(!held_by_another(&tmp.path().join("missing/store.redb")));
}

#[test]
fn a_copy_keeps_a_persons_review_marks() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(&tmp.path().join("store"), &clock, true);
    s.memorize(input("reviewed fact", "the cache keeps pages for a day"))
        .unwrap();
    s.memorize(input("unreviewed fact", "the queue holds jobs for an hour"))
        .unwrap();
    s.mark_reviewed("reviewed-fact", "human:founder").unwrap();
    assert_eq!(s.unreviewed_count().unwrap(), 1);

    let dest = tmp.path().join("copy");
    s.backup_source().unwrap().write_to(&dest).unwrap();
    drop(s);
    let (restored, _) = Store::open(&dest, opts(&clock, true)).unwrap();
    assert!(restored.is_reviewed("reviewed-fact").unwrap());
    assert!(!restored.is_reviewed("unreviewed-fact").unwrap());
    assert_eq!(restored.unreviewed_count().unwrap(), 1);
}
