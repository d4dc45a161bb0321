//! The store engine: every memorize transition, history, acts, learn, demote, the
//! witness stamp, key-value, recall, aging, persistence and the derived vector index.

use std::sync::Arc;

use crate::common::{input, open, opts, T0};
use brains::recall::RankMode;
use brains::{
    ActKind, ClaimState, FixedClock, MemorizeOutcome, RecallQuery, Retrieval, Store, Strength,
    Verdict,
};

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

/// Regression (issue 10, finding 5): `C# build` silently superseded `C++ build` because
/// both slug to `c-build`. Labels are identities: the second is refused, naming the first.
#[test]
fn two_labels_never_share_a_slug_silently() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(dir.path(), &clock, false);
    s.memorize(input("C++ build", "cmake with ninja")).unwrap();
    let err = s.memorize(input("C# build", "dotnet build")).unwrap_err();
    assert_eq!(err.code(), "label_collision");
    assert!(err.to_string().contains("C++ build"), "{err}");
    assert_eq!(s.get("c-build").unwrap().unwrap().text, "cmake with ninja");
    // Case and spacing do not make another claim: that is a supersession.
    let o = s.memorize(input("c++  BUILD", "cmake with make")).unwrap();
    assert!(matches!(o, MemorizeOutcome::Superseded { .. }));
    // Two long labels sharing their first 80 slug characters.
    let stem = "a".repeat(80);
    s.memorize(input(&format!("{stem} one"), "first")).unwrap();
    assert_eq!(
        s.memorize(input(&format!("{stem} two"), "second"))
            .unwrap_err()
            .code(),
        "label_collision"
    );
    // A slug whose live version was demoted still belongs to its label.
    s.memorize(input("Gone rule", "x")).unwrap();
    s.demote("gone-rule", "human:founder", "wrong").unwrap();
    assert_eq!(
        s.memorize(input("Gone  rule!", "y"))
            .map(|_| ())
            .unwrap_err()
            .code(),
        "label_collision"
    );
}

/// `purge` erases a claim and every version of it, and the act that records it keeps no
/// content: not the text, not the label, not the slug.
#[test]
fn purge_erases_every_version_and_records_an_act_without_content() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let secret = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
    let mut s = open(dir.path(), &clock, true);
    s.memorize(input("ci token", &format!("the ci token is {secret}")))
        .unwrap();
    clock.advance(1000);
    s.memorize(input("ci token", "rotated, see the vault"))
        .unwrap();
    s.learn("ci-token", Verdict::Wrong, "human:founder", Some("leaked"))
        .unwrap();
    s.memorize(input("kept", "another claim")).unwrap();
    let before = s.stats().unwrap();
    let r = s.purge("ci-token", "human:founder").unwrap();
    assert_eq!(r.versions_erased, 2);
    assert!(s.get("ci-token").unwrap().is_none());
    assert!(s.history("ci-token").unwrap().is_empty());
    assert!(s
        .recall(&q("ci token rotated vault", 10))
        .unwrap()
        .hits
        .iter()
        .all(|h| h.claim.slug != "ci-token"));
    let after = s.stats().unwrap();
    assert_eq!(after.live_claims, before.live_claims - 1);
    assert_eq!(after.vectors, before.vectors - 1);
    let acts = s.acts(0, 1000).unwrap();
    let dump = serde_json::to_string(&acts).unwrap();
    for leaked in ["ci-token", "ci token", secret, "rotated", "leaked"] {
        assert!(
            !dump.contains(leaked),
            "{leaked:?} survives in the act log: {dump}"
        );
    }
    let last = acts.last().unwrap();
    assert_eq!(last.kind, ActKind::Purge);
    assert_eq!(last.subject, r.subject);
    assert!(last.before_hash.is_none() && last.after_hash.is_none());
    assert_eq!(s.get("kept").unwrap().unwrap().text, "another claim");
    assert_eq!(
        s.purge("ci-token", "human:founder").unwrap_err().code(),
        "nothing_to_purge"
    );
    drop(s);
    // The secret's bytes are gone from the database file too.
    let bytes = std::fs::read(dir.path().join("store.redb")).unwrap();
    let hay = String::from_utf8_lossy(&bytes);
    assert!(!hay.contains(secret), "the secret survives in store.redb");
    let s = open(dir.path(), &clock, true);
    assert!(s.history("ci-token").unwrap().is_empty());
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
fn the_vector_index_is_rebuilt_when_missing_or_corrupt_and_repaired_when_behind() {
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

    // A file saved before the last writes (a crash since its checkpoint) is repaired,
    // not rebuilt: the vector written since is added.
    std::fs::write(&idx, &stale).unwrap();
    let (s, r) = Store::open(d.path(), opts(&clock, true)).unwrap();
    assert!(!r.index_rebuilt && r.index_repaired == 1, "{r:?}");
    assert_eq!(s.check_index().unwrap(), None);
    assert_eq!(s.stats().unwrap().vectors, 2);
    // Closing checkpoints the repaired index.
    s.close().unwrap();
    let both = std::fs::read(&idx).unwrap();

    // A vector let go since the checkpoint (a supersession replaces it) is removed too.
    let mut s = open(d.path(), &clock, true);
    s.memorize(input("two", "second lamp, now a lantern"))
        .unwrap();
    s.close().unwrap();
    std::fs::write(&idx, &both).unwrap();
    let (s, r) = Store::open(d.path(), opts(&clock, true)).unwrap();
    assert!(!r.index_rebuilt && r.index_repaired == 2, "{r:?}");
    assert_eq!(s.check_index().unwrap(), None);
    let hits = s.recall(&q("lantern", 2)).unwrap().hits;
    assert_eq!(hits[0].claim.slug, "two");
    assert!(hits[0].claim.text.contains("lantern"));

    // A file that lacks most of the store (a close right after a large import leaves the
    // vectors that had not settled out of it) is repaired all the same: what it lacks is
    // read from redb into the fresh set, found at once, settled in the background.
    s.close().unwrap();
    let mut s = open(d.path(), &clock, true);
    for i in 0..6 {
        s.memorize(input(&format!("more {i}"), &format!("lamp number {i}")))
            .unwrap();
    }
    s.close().unwrap();
    std::fs::write(&idx, &stale).unwrap();
    let (s, r) = Store::open(d.path(), opts(&clock, true)).unwrap();
    assert!(!r.index_rebuilt && r.index_repaired == 7, "{r:?}");
    assert_eq!(s.check_index().unwrap(), None);
    assert_eq!(s.stats().unwrap().vectors, 8);
    let hits = s
        .recall(&RecallQuery {
            text: "more 4\nlamp number 4".into(),
            limit: 1,
            mode: RankMode::Vector,
            ..Default::default()
        })
        .unwrap()
        .hits;
    assert_eq!(hits[0].claim.slug, "more-4");
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

fn slugs(r: &brains::RecallResult) -> Vec<String> {
    let mut v: Vec<String> = r.hits.iter().map(|h| h.claim.slug.clone()).collect();
    v.sort();
    v
}

/// Regression (recall issue): on a brain of three claims, `seek "kubernetes ingress"`
/// returned all three, because the vector list always fills `limit`. A row now surfaces
/// only when its evidence passes the relevance floor.
#[test]
fn an_unrelated_query_matches_nothing_and_every_hit_carries_its_evidence() {
    for vectors in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let clock = Arc::new(FixedClock::new(T0));
        let mut s = open(d.path(), &clock, vectors);
        for (l, t) in [
            (
                "deploys",
                "deploys go out with the blue green script every friday",
            ),
            (
                "connection pool",
                "the postgres connection pool is capped at forty connections",
            ),
            (
                "flaky test",
                "the cache test flakes when two runners share a temp directory",
            ),
        ] {
            s.memorize(input(l, t)).unwrap();
        }
        // (The test embedder hashes words into 64 buckets: these words share no bucket
        // with the claims. The real model's case, "kubernetes ingress", is tested in
        // `medulla::model`.)
        let r = s.recall(&q("helm chart terraform module", 10)).unwrap();
        assert!(r.hits.is_empty(), "vectors={vectors}: {:?}", slugs(&r));
        // With the floor off every candidate comes back, each saying it did not pass.
        let all = s
            .recall(&RecallQuery {
                matched_only: false,
                ..q("helm chart deploys", 10)
            })
            .unwrap();
        assert!(all.hits.iter().any(|h| h.claim.slug == "deploys"));
        let r = s.recall(&q("connection pool capped", 10)).unwrap();
        assert_eq!(r.hits[0].claim.slug, "connection-pool", "vectors={vectors}");
        let h = &r.hits[0];
        assert!(h.matched && h.lexical > 0.5 && h.lexical <= 1.0, "{h:?}");
        assert_eq!(h.vector.is_some(), vectors);
        assert!(r.hits.iter().all(|h| h.matched));
    }
}

#[test]
fn a_precomputed_query_vector_is_used_instead_of_embedding_the_text() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, true);
    s.memorize(input("pool", "the connection pool is capped at forty"))
        .unwrap();
    s.memorize(input("deploys", "deploys go out on friday"))
        .unwrap();
    let v =
        brains::embed_query(&crate::common::BagOfWords, "connection pool capped forty").unwrap();
    let r = s
        .recall(&RecallQuery {
            mode: RankMode::Vector,
            vector: Some(v),
            ..q("unrelated words entirely", 5)
        })
        .unwrap();
    assert_eq!(
        slugs(&r),
        vec!["pool"],
        "the vector, not the text, was searched"
    );
    // A vector of the wrong dimensions is ignored: the text is embedded.
    let r = s
        .recall(&RecallQuery {
            mode: RankMode::Vector,
            vector: Some(vec![1.0; 3].into()),
            ..q("deploys go out on friday", 5)
        })
        .unwrap();
    assert_eq!(r.hits[0].claim.slug, "deploys");
}

/// Four claims that differ in one field each; every filter keeps exactly its own.
fn filter_store(d: &std::path::Path, clock: &Arc<FixedClock>) -> Store {
    let mut s = open(d, clock, true);
    let mut a = input("alpha", "cache warming notes for the build");
    a.source_agent = "codex:orchestrator".into();
    s.memorize(a).unwrap();
    clock.advance(1_000);
    let mut b = input("bravo", "cache warming notes for the runners");
    b.strength = Strength::Verified;
    s.memorize(b).unwrap();
    clock.advance(1_000);
    let mut c = input("charlie", "cache warming notes for the deploy");
    c.evidence = vec!["src/cache/warm.rs".into()];
    s.memorize(c).unwrap();
    clock.advance(1_000);
    s.memorize(input("delta", "cache warming notes for the docs"))
        .unwrap();
    s.learn("delta", Verdict::Correct, "human:founder", None)
        .unwrap();
    s.learn("delta", Verdict::Correct, "human:founder", None)
        .unwrap();
    s
}

fn filtered(s: &Store, f: brains::RecallFilter) -> Vec<String> {
    let mut out = Vec::new();
    for mode in [RankMode::Auto, RankMode::Lexical, RankMode::Vector] {
        let r = s
            .recall(&RecallQuery {
                mode,
                filter: f.clone(),
                matched_only: false,
                ..q("cache warming notes", 10)
            })
            .unwrap();
        let got = slugs(&r);
        if mode == RankMode::Auto {
            out = got.clone();
        }
        assert_eq!(got, out, "every ranking applies the filter ({mode:?})");
    }
    out
}

#[test]
fn recall_filters_by_source_agent() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let s = filter_store(d.path(), &clock);
    let f = |a: &str| brains::RecallFilter {
        source_agent: Some(a.into()),
        ..Default::default()
    };
    assert_eq!(filtered(&s, f("codex:orchestrator")), vec!["alpha"]);
    assert_eq!(filtered(&s, f("codex")), vec!["alpha"], "a bare vendor");
    assert_eq!(filtered(&s, f("claude")).len(), 3);
    assert!(filtered(&s, f("claude:orchestrator")).is_empty());
}

#[test]
fn recall_filters_by_minimum_strength() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let s = filter_store(d.path(), &clock);
    let f = |st| brains::RecallFilter {
        min_strength: Some(st),
        ..Default::default()
    };
    assert_eq!(filtered(&s, f(Strength::Verified)), vec!["bravo"]);
    assert_eq!(filtered(&s, f(Strength::Hint)).len(), 4);
}

#[test]
fn recall_filters_by_minimum_trust() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let s = filter_store(d.path(), &clock);
    let f = |t| brains::RecallFilter {
        min_trust: Some(t),
        ..Default::default()
    };
    // Two correct verdicts: (2 + 1) / (2 + 2) = 0.75; ungraded claims score 0.5.
    assert_eq!(filtered(&s, f(0.7)), vec!["delta"]);
    assert_eq!(filtered(&s, f(0.5)).len(), 4);
}

#[test]
fn recall_filters_by_creation_time() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let s = filter_store(d.path(), &clock);
    let since = brains::RecallFilter {
        created_since: Some(T0 + 2_000),
        ..Default::default()
    };
    assert_eq!(filtered(&s, since), vec!["charlie", "delta"]);
    let until = brains::RecallFilter {
        created_until: Some(T0 + 1_000),
        ..Default::default()
    };
    assert_eq!(filtered(&s, until), vec!["alpha", "bravo"]);
    let window = brains::RecallFilter {
        created_since: Some(T0 + 1_000),
        created_until: Some(T0 + 1_000),
        ..Default::default()
    };
    assert_eq!(filtered(&s, window), vec!["bravo"], "both bounds inclusive");
}

#[test]
fn recall_filters_by_evidence_prefix() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let s = filter_store(d.path(), &clock);
    let f = |p: &str| brains::RecallFilter {
        evidence_prefix: Some(p.into()),
        ..Default::default()
    };
    assert_eq!(filtered(&s, f("src/cache/")), vec!["charlie"]);
    assert!(filtered(&s, f("docs/")).is_empty());
    // The empty query lists recent claims under the same filters.
    let r = s
        .recall(&RecallQuery {
            filter: brains::RecallFilter {
                evidence_prefix: Some("src/".into()),
                ..Default::default()
            },
            ..q("", 10)
        })
        .unwrap();
    assert_eq!(slugs(&r), vec!["charlie"]);
}

#[test]
fn filters_survive_a_reopen_and_follow_learn() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let s = filter_store(d.path(), &clock);
    s.close().unwrap();
    let mut s = open(d.path(), &clock, true);
    let trusted = brains::RecallFilter {
        min_trust: Some(0.7),
        ..Default::default()
    };
    assert_eq!(filtered(&s, trusted.clone()), vec!["delta"]);
    s.learn("alpha", Verdict::Correct, "human:founder", None)
        .unwrap();
    s.learn("alpha", Verdict::Correct, "human:founder", None)
        .unwrap();
    assert_eq!(filtered(&s, trusted), vec!["alpha", "delta"]);
}

/// `recent` names the newest live claims, newest first, as a full scan of redb would,
/// through supersession, demotion, purge and a reopen (from the snapshot).
#[test]
fn recent_is_the_newest_live_claims_through_every_change() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, false);
    for i in 0..20 {
        clock.advance(10);
        s.memorize(input(&format!("claim {i}"), &format!("text {i}")))
            .unwrap();
    }
    let slugs = |s: &Store, n: usize| -> Vec<String> {
        s.recent(n).unwrap().into_iter().map(|c| c.slug).collect()
    };
    assert_eq!(slugs(&s, 3), ["claim-19", "claim-18", "claim-17"]);
    // A superseded claim is new again; a demoted and a purged one are gone.
    clock.advance(10);
    s.memorize(input("claim 3", "text 3, revised")).unwrap();
    s.demote("claim-19", "human:founder", "wrong").unwrap();
    s.purge("claim-18", "human:founder").unwrap();
    assert_eq!(slugs(&s, 3), ["claim-3", "claim-17", "claim-16"]);
    assert_eq!(slugs(&s, 0), Vec::<String>::new());
    assert_eq!(slugs(&s, 100).len(), 18);
    // Equal times break ties by slug.
    clock.advance(10);
    s.memorize(input("claim b", "same instant")).unwrap();
    s.memorize(input("claim a", "same instant")).unwrap();
    assert_eq!(slugs(&s, 2), ["claim-a", "claim-b"]);
    drop(s);
    let s = open(d.path(), &clock, false);
    assert_eq!(slugs(&s, 4), ["claim-a", "claim-b", "claim-3", "claim-17"]);
}

/// Many readers at once (the owner reads a store from its blocking pool, so as many
/// threads as there are concurrent requests) all get answers: the vector index never
/// runs out of search contexts.
#[test]
fn many_concurrent_readers_all_get_answers() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, true);
    for i in 0..300 {
        s.memorize(input(
            &format!("deploy note {i}"),
            &format!("deploys of service {i} wait for the cache warmup"),
        ))
        .unwrap();
    }
    assert_eq!(s.retrieval(), Retrieval::Hybrid);
    let s = &s;
    let failures: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..32)
            .map(|t| {
                scope.spawn(move || {
                    let mut failed = 0;
                    for i in 0..40 {
                        let r = s.recall(&q(
                            &format!("cache warmup deploys {}", (t * 40 + i) % 300),
                            10,
                        ));
                        match r {
                            Ok(r) if !r.hits.is_empty() => {}
                            Ok(_) => failed += 1,
                            Err(e) => {
                                eprintln!("{e}");
                                failed += 1
                            }
                        }
                    }
                    failed
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(failures, 0, "recalls failed under 32 concurrent readers");
}

/// Retirement takes a claim out of recall with a reason and who did it, one act; the
/// label can be memorized again later, continuing the chain. Before, a label written
/// again after it left recall restarted at version 1, and its next supersession wrote
/// over the old version 1 in history: history lost a version.
#[test]
fn retire_keeps_history_and_a_label_written_again_continues_its_chain() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, true);
    s.memorize(input("pool size", "the pool is capped at 20"))
        .unwrap();
    clock.advance(5);
    assert_eq!(
        s.retire("pool-size", "human:founder", "  ")
            .unwrap_err()
            .code(),
        "invalid_input",
        "a retirement needs a reason"
    );
    let out = s
        .retire("pool-size", "human:founder", "the pool was rewritten")
        .unwrap();
    assert_eq!(out.state, ClaimState::Outdated);
    assert_eq!(
        out.outdated_reason.as_deref(),
        Some("retired: the pool was rewritten")
    );
    assert_eq!(out.outdated_by.as_deref(), Some("human:founder"));
    assert!(s.get("pool-size").unwrap().is_none());
    assert!(s.recall(&q("pool capped", 5)).unwrap().hits.is_empty());
    let acts = s.acts_newest(1).unwrap();
    assert_eq!(acts[0].kind, brains::ActKind::Retire);
    assert_eq!(acts[0].actor, "human:founder");

    clock.advance(5);
    let again = s
        .memorize(input("pool size", "the pool is capped at 50"))
        .unwrap()
        .claim()
        .clone();
    assert_eq!(again.version, 2, "the chain goes on");
    assert_eq!(again.supersedes, Some(out.version_id()));
    clock.advance(5);
    s.memorize(input("pool size", "the pool is capped at 64"))
        .unwrap();
    let versions: Vec<(u64, String)> = s
        .history("pool-size")
        .unwrap()
        .into_iter()
        .map(|c| (c.version, c.text))
        .collect();
    assert_eq!(
        versions,
        vec![
            (1, "the pool is capped at 20".to_string()),
            (2, "the pool is capped at 50".to_string()),
            (3, "the pool is capped at 64".to_string()),
        ],
        "every version kept, none written over"
    );
    assert_eq!(s.check_index().unwrap(), None);
}

/// A bulk import looks up thousands of slugs' versions from one read transaction
/// (`histories`): for each slug it must answer exactly what `history` answers, whether
/// the slug is live, superseded, demoted, unknown, a prefix of another, or asked twice.
#[test]
fn histories_answers_what_history_answers_slug_by_slug() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, false);
    s.memorize(input("a", "one")).unwrap();
    s.memorize(input("a", "two")).unwrap();
    s.memorize(input("a", "three")).unwrap();
    s.memorize(input("a b", "a slug that extends another"))
        .unwrap();
    s.memorize(input("gone", "demoted")).unwrap();
    s.demote("gone", "human:founder", "wrong").unwrap();
    s.memorize(input("back", "first")).unwrap();
    s.demote("back", "human:founder", "wrong").unwrap();
    s.memorize(input("back", "second")).unwrap();
    let slugs: Vec<String> = ["a-b", "nobody", "a", "gone", "back", "a", ""]
        .map(String::from)
        .into();
    let one_by_one: Vec<Vec<brains::Claim>> = slugs.iter().map(|x| s.history(x).unwrap()).collect();
    assert_eq!(one_by_one[2].len(), 3, "three versions of a");
    assert_eq!(one_by_one[4].len(), 2, "back: one demoted, one live");
    assert_eq!(s.histories(&slugs).unwrap(), one_by_one);
    assert!(s.histories(&[]).unwrap().is_empty());
}

/// Issue 49 (SPEC §5, law 4): what the floor only half-recognises is returned as weak
/// rows, labelled `matched: false`, on request and only while the matched rows are fewer
/// than asked; the matched rows are the same with or without them.
#[test]
fn weak_rows_fill_in_below_the_floor_labelled_and_bounded() {
    for vectors in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let clock = Arc::new(FixedClock::new(T0));
        let mut s = open(d.path(), &clock, vectors);
        for i in 0..40 {
            s.memorize(input(
                &format!("note {i}"),
                &format!("note {i} about the release train and the deploy window {i}"),
            ))
            .unwrap();
        }
        s.memorize(input(
            "release process",
            "we ship a version with make release; never tag by hand",
        ))
        .unwrap();
        // Two of eight words found: short of the gate, so nothing matches; but the claim
        // is half-recognised, and shown as a weak row when asked.
        let query = "ship version kubernetes helm terraform ansible puppet nomad";
        let plain = s.recall(&q(query, 10)).unwrap();
        let asked = RecallQuery {
            weak: 3,
            ..q(query, 10)
        };
        let with_weak = s.recall(&asked).unwrap();
        let matched = |r: &brains::RecallResult| -> Vec<String> {
            r.hits
                .iter()
                .filter(|h| h.matched)
                .map(|h| h.claim.slug.clone())
                .collect()
        };
        assert_eq!(matched(&plain), matched(&with_weak), "vectors={vectors}");
        let weak: Vec<&brains::Hit> = with_weak.hits.iter().filter(|h| !h.matched).collect();
        assert!(weak.len() <= 3, "vectors={vectors}: {}", weak.len());
        assert!(
            plain.hits.iter().all(|h| h.matched),
            "no weak row unless asked"
        );
        if plain.hits.len() < 10 {
            assert!(
                weak.iter().any(|h| h.claim.slug == "release-process"),
                "vectors={vectors}: the half-recognised claim is shown, not hidden: {:?}",
                slugs(&with_weak)
            );
            let f = brains::recall::Fusion::DEFAULT;
            assert!(weak
                .iter()
                .all(|h| h.score >= f.lexical.weak.min(f.fused.weak)));
        }
        // Enough matched rows: no weak row.
        let full = s
            .recall(&RecallQuery {
                weak: 3,
                ..q("release train deploy window", 5)
            })
            .unwrap();
        assert_eq!(full.hits.len(), 5, "vectors={vectors}");
        assert!(full.hits.iter().all(|h| h.matched), "vectors={vectors}");
    }
}
