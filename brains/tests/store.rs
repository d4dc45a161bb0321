//! The store engine: every memorize transition, history, acts, learn, demote, the
//! witness stamp, key-value, recall, aging, persistence and the derived vector index.

mod common;

use std::sync::Arc;

use brains::recall::RankMode;
use brains::{
    ActKind, ClaimState, FixedClock, MemorizeOutcome, RecallQuery, Retrieval, Store, Strength,
    Verdict,
};
use common::{input, open, opts, T0};

fn q(text: &str, limit: usize) -> RecallQuery {
    RecallQuery {
        text: text.into(),
        scope: None,
        limit,
        mode: RankMode::Auto,
        ..Default::default()
    }
}

#[test]
fn memorize_creates_supersedes_refuses_and_ignores_identical_writes() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, false);
    let c = s
        .memorize(input("CI flake", "the cache test flakes"))
        .unwrap();
    assert!(matches!(c, MemorizeOutcome::Created { .. }));
    let first = c.claim().clone();
    assert_eq!(
        (first.version, first.slug.as_str(), first.state),
        (1, "ci-flake", ClaimState::Authored)
    );
    assert_eq!(first.created, T0);

    // Identical content: no version, no act.
    let acts_before = s.stats().unwrap().acts;
    let u = s
        .memorize(input("CI flake", "the cache test flakes"))
        .unwrap();
    assert!(u.unchanged());
    assert_eq!(s.stats().unwrap().acts, acts_before);
    assert_eq!(s.history("ci-flake").unwrap().len(), 1);

    // Equal strength supersedes; the old version goes to history as outdated.
    clock.advance(10);
    let sup = s.memorize(input("CI flake", "a race in warmup")).unwrap();
    let MemorizeOutcome::Superseded { claim, previous } = sup else {
        panic!("expected a supersession")
    };
    assert_eq!(claim.version, 2);
    assert_eq!(
        claim.supersedes.as_deref(),
        Some(format!("ci-flake@{T0}").as_str())
    );
    assert_eq!(previous.state, ClaimState::Outdated);

    // Weaker is refused, naming both strengths, and nothing is written.
    let mut weak = input("CI flake", "maybe not");
    weak.strength = Strength::Hint;
    let err = s.memorize(weak).unwrap_err();
    assert_eq!(err.code(), "would_downgrade");
    assert!(
        err.to_string().contains("observed") && err.to_string().contains("hint"),
        "{err}"
    );
    assert_eq!(s.get("ci-flake").unwrap().unwrap().text, "a race in warmup");

    // Stronger supersedes too.
    let mut strong = input("CI flake", "verified: a race in warmup");
    strong.strength = Strength::Verified;
    s.memorize(strong).unwrap();
    let h = s.history("ci-flake").unwrap();
    assert_eq!(
        h.iter().map(|c| c.version).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert_eq!(
        h.iter().map(|c| c.state).collect::<Vec<_>>(),
        vec![
            ClaimState::Outdated,
            ClaimState::Outdated,
            ClaimState::Authored
        ]
    );
    assert_eq!(h[0].outdated_reason.as_deref(), Some("superseded"));

    // A supersession at the same instant still gets a distinct version id.
    let ids: std::collections::HashSet<String> = h.iter().map(|c| c.version_id()).collect();
    assert_eq!(ids.len(), 3);
}

#[test]
fn every_act_is_logged_with_actor_time_and_hashes() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, false);
    s.memorize(input("a", "one")).unwrap();
    s.memorize(input("a", "two")).unwrap();
    s.learn("a", Verdict::Correct, "codex:reviewer", Some("checked"))
        .unwrap();
    s.kv_set("k", "v", "claude:maker").unwrap();
    s.kv_delete("k", "claude:maker").unwrap();
    s.demote("a", "human:founder", "wrong after all").unwrap();
    let acts = s.acts(0, 100).unwrap();
    let kinds: Vec<ActKind> = acts.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        vec![
            ActKind::Memorize,
            ActKind::Supersede,
            ActKind::Learn,
            ActKind::KvSet,
            ActKind::KvDelete,
            ActKind::Demote
        ]
    );
    assert!(acts.windows(2).all(|w| w[0].seq < w[1].seq));
    assert_eq!(acts[0].before_hash, None);
    assert_eq!(
        acts[1].before_hash, acts[0].after_hash,
        "the supersede starts from what the memorize left"
    );
    assert_eq!(acts[2].actor, "codex:reviewer");
    assert_eq!(acts[2].note.as_deref(), Some("correct: checked"));
    assert_eq!(acts[5].after_hash, None);
    assert!(acts.iter().all(|a| a.at == T0));
    let newest = s.acts_newest(2).unwrap();
    assert_eq!(newest[0].kind, ActKind::Demote);
    assert_eq!(s.acts(4, 10).unwrap().len(), 2);
}

#[test]
fn learn_demote_and_stamp() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, true);
    s.memorize(input("gc", "pauses spike past 8 GiB")).unwrap();
    let c = s
        .learn("gc", Verdict::Wrong, "human:founder", None)
        .unwrap();
    assert_eq!(c.trust.wrong, 1);
    assert!(c.trust.score() < 0.5);
    assert_eq!(
        s.learn("nope", Verdict::Correct, "a:b", None)
            .unwrap_err()
            .code(),
        "unknown_claim"
    );

    clock.advance(5);
    let stamped = s
        .stamp_promoted_to("gc", "medulla@gc@1", "claude:orchestrator")
        .unwrap();
    assert_eq!(stamped.promoted_to.as_deref(), Some("medulla@gc@1"));
    assert_eq!(stamped.version, 2);
    assert_eq!(
        stamped.content_hash,
        s.history("gc").unwrap()[0].content_hash,
        "the stamp changes no content"
    );
    assert_eq!(s.history("gc").unwrap()[0].promoted_to, None);
    assert_eq!(
        s.recall(&q("pauses spike", 5)).unwrap().hits[0]
            .claim
            .version,
        2,
        "the stamped version is the live one"
    );

    let out = s
        .demote("gc", "human:founder", "one service's quirk")
        .unwrap();
    assert_eq!(out.state, ClaimState::Outdated);
    assert_eq!(
        out.outdated_reason.as_deref(),
        Some("demoted: one service's quirk")
    );
    assert!(s.get("gc").unwrap().is_none());
    assert!(
        s.recall(&q("pauses spike", 5)).unwrap().hits.is_empty(),
        "a demoted claim never surfaces"
    );
    assert_eq!(
        s.history("gc").unwrap().len(),
        2,
        "history keeps every version"
    );
    assert_eq!(s.check_index().unwrap(), None);
    assert_eq!(
        s.demote("gc", "human:founder", "again").unwrap_err().code(),
        "unknown_claim"
    );
}

#[test]
fn key_value_get_set_list_delete() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, false);
    assert_eq!(s.kv_get("x").unwrap(), None);
    s.kv_set("b", "2", "a:b").unwrap();
    s.kv_set("a", "1", "a:b").unwrap();
    s.kv_set("a", "one", "a:b").unwrap();
    assert_eq!(s.kv_get("a").unwrap().as_deref(), Some("one"));
    assert_eq!(
        s.kv_list().unwrap(),
        vec![("a".into(), "one".into()), ("b".into(), "2".into())]
    );
    s.kv_delete("a", "a:b").unwrap();
    assert_eq!(s.kv_delete("a", "a:b").unwrap_err().code(), "unknown_key");
    assert_eq!(
        s.kv_set("", "v", "a:b").unwrap_err().code(),
        "invalid_input"
    );
    assert_eq!(
        s.kv_set("k", &"x".repeat(70_000), "a:b")
            .unwrap_err()
            .code(),
        "invalid_input"
    );
    assert_eq!(
        s.kv_set("k", "v", "nobody").unwrap_err().code(),
        "bad_agent_id"
    );
}

#[test]
fn recall_ranks_filters_by_scope_and_surfaces_only_live_versions() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, false);
    s.memorize(input("deploy steps", "deploy with the blue green script"))
        .unwrap();
    s.memorize(input(
        "ci cache",
        "the ci cache is warmed by the nightly job",
    ))
    .unwrap();
    s.memorize(input("ci runners", "ci runners have two cores"))
        .unwrap();
    s.memorize(input("old", "zebra stripes")).unwrap();
    s.memorize(input("old", "giraffe necks")).unwrap();
    let r = s.recall(&q("blue green deploy", 3)).unwrap();
    assert_eq!(r.retrieval, Retrieval::Lexical);
    assert_eq!(r.hits[0].claim.slug, "deploy-steps");
    assert_eq!(r.hits[0].lexical_rank, Some(1));
    let scoped = s
        .recall(&RecallQuery {
            text: "ci".into(),
            scope: Some("ci-r".into()),
            limit: 10,
            mode: RankMode::Auto,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        scoped
            .hits
            .iter()
            .map(|h| h.claim.slug.as_str())
            .collect::<Vec<_>>(),
        vec!["ci-runners"]
    );
    let by_label = s
        .recall(&RecallQuery {
            text: "ci".into(),
            scope: Some("CI C".into()),
            limit: 10,
            mode: RankMode::Auto,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(by_label.hits.len(), 1, "scope matches a label prefix too");
    assert!(
        s.recall(&q("zebra", 5)).unwrap().hits.is_empty(),
        "a superseded version never surfaces"
    );
    assert_eq!(s.recall(&q("giraffe", 5)).unwrap().hits.len(), 1);
    let recent = s.recall(&q("", 2)).unwrap();
    assert_eq!(recent.hits.len(), 2);
}

#[test]
fn hybrid_recall_fuses_and_says_so() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, true);
    s.memorize(input("alpha", "kafka consumer lag alerts"))
        .unwrap();
    s.memorize(input("beta", "postgres vacuum settings"))
        .unwrap();
    let r = s.recall(&q("kafka lag", 5)).unwrap();
    assert_eq!(r.retrieval, Retrieval::Hybrid);
    assert_eq!(r.hits[0].claim.slug, "alpha");
    assert!(r.hits[0].vector_rank.is_some() && r.hits[0].lexical_rank.is_some());
    let v = s
        .recall(&RecallQuery {
            mode: RankMode::Vector,
            ..q("kafka lag", 5)
        })
        .unwrap();
    assert_eq!(v.hits[0].claim.slug, "alpha");
    let l = s
        .recall(&RecallQuery {
            mode: RankMode::Lexical,
            ..q("kafka lag", 5)
        })
        .unwrap();
    assert_eq!(l.retrieval, Retrieval::Lexical);
}

#[test]
fn aging_is_computed_at_read_time_from_the_injected_clock() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, false);
    s.memorize(input("aging", "a claim that grows old"))
        .unwrap();
    let day = 24 * 3600 * 1000;
    clock.set(T0 + 29 * day);
    let h = &s.recall(&q("claim old", 1)).unwrap().hits[0];
    assert!(!h.overlay.stale && !h.overlay.aged_out);
    assert_eq!(h.overlay.age_ms, 29 * day);
    clock.set(T0 + 30 * day + 1);
    let h = &s.recall(&q("claim old", 1)).unwrap().hits[0];
    assert!(
        h.overlay.stale && h.overlay.aged_out,
        "30 days is past both 30 days and 720 h"
    );
    clock.set(T0 + 29 * day + 1);
    let h = &s.recall(&q("claim old", 1)).unwrap().hits[0];
    assert!(!h.overlay.stale && !h.overlay.aged_out);
    assert_eq!(
        s.get("aging").unwrap().unwrap().created,
        T0,
        "nothing about age was stored"
    );
}

#[test]
fn a_store_reopens_with_everything_and_refuses_a_second_holder() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    {
        let mut s = open(d.path(), &clock, true);
        for i in 0..20 {
            s.memorize(input(
                &format!("claim {i}"),
                &format!("text number {i} about lamps"),
            ))
            .unwrap();
        }
        s.kv_set("k", "v", "a:b").unwrap();
        let second = Store::open(d.path(), opts(&clock, true));
        assert_eq!(second.unwrap_err().code(), "store_locked");
        s.close().unwrap();
    }
    let (s, report) = Store::open(d.path(), opts(&clock, true)).unwrap();
    assert!(
        !report.index_rebuilt,
        "a cleanly closed index is reused: {report:?}"
    );
    let st = s.stats().unwrap();
    assert_eq!((st.live_claims, st.vectors, st.kv_keys), (20, 20, 1));
    assert_eq!(
        s.recall(&q("number 7 lamps", 1)).unwrap().hits[0]
            .claim
            .slug,
        "claim-7"
    );
}

#[test]
fn the_vector_index_is_rebuilt_when_missing_corrupt_or_stale() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let idx = d.path().join("vectors.usearch");
    let mut s = open(d.path(), &clock, true);
    s.memorize(input("one", "first lamp")).unwrap();
    s.close().unwrap();
    let stale = std::fs::read(&idx).unwrap();
    let mut s = open(d.path(), &clock, true);
    s.memorize(input("two", "second lamp")).unwrap();
    s.close().unwrap();

    std::fs::remove_file(&idx).unwrap();
    let (s, r) = Store::open(d.path(), opts(&clock, true)).unwrap();
    assert!(
        r.index_rebuilt
            && r.index_rebuild_reason
                .as_deref()
                .unwrap()
                .contains("missing"),
        "{r:?}"
    );
    assert_eq!(s.check_index().unwrap(), None);
    s.close().unwrap();

    std::fs::write(&idx, b"definitely not an index").unwrap();
    let (s, r) = Store::open(d.path(), opts(&clock, true)).unwrap();
    assert!(r.index_rebuilt, "{r:?}");
    assert_eq!(
        s.recall(&q("second lamp", 1)).unwrap().hits[0].claim.slug,
        "two"
    );
    s.close().unwrap();

    std::fs::write(&idx, stale).unwrap();
    let (s, r) = Store::open(d.path(), opts(&clock, true)).unwrap();
    assert!(
        r.index_rebuilt
            && r.index_rebuild_reason
                .as_deref()
                .unwrap()
                .contains("holds 1"),
        "{r:?}"
    );
    assert_eq!(s.check_index().unwrap(), None);
    assert_eq!(s.stats().unwrap().vectors, 2);
}

#[test]
fn claims_written_without_a_model_are_embedded_when_one_appears() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, false);
    s.memorize(input("a", "lexical only at first")).unwrap();
    s.close().unwrap();
    let (s, r) = Store::open(d.path(), opts(&clock, true)).unwrap();
    assert_eq!(r.embedded_on_open, 1);
    assert_eq!(
        s.recall(&q("lexical first", 1)).unwrap().retrieval,
        Retrieval::Hybrid
    );
}
