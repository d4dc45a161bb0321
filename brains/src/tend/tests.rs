//! The judgement's cases, one by one: restatements joined, disagreements named with
//! both values, different facts left alone, and the grouping's guarantees.

use std::collections::BTreeMap;

use super::*;
use crate::strength::Strength;

fn side<'a>(label: &'a str, text: &'a str) -> Side<'a> {
    Side { label, text }
}

fn words(a: (&str, &str), b: (&str, &str)) -> Judgement {
    judge(side(a.0, a.1), side(b.0, b.1), None)
}

/// The differences of a pair judged by words alone, as `(kind, a, b)`.
fn differences(a: (&str, &str), b: (&str, &str)) -> Vec<(Kind, String, String)> {
    match words(a, b) {
        Judgement::Disagree { differences, .. } => differences
            .into_iter()
            .map(|d| (d.kind, d.a, d.b))
            .collect(),
        other => panic!("expected a disagreement, got {other:?}"),
    }
}

fn d(kind: Kind, a: &str, b: &str) -> (Kind, String, String) {
    (kind, a.to_string(), b.to_string())
}

#[test]
fn a_restatement_in_other_words_is_the_same_thing() {
    let j = words(
        (
            "billing retry state",
            "Retry state for billing lives in the ledger_retry table",
        ),
        (
            "billing retries table",
            "The billing service keeps its retry state in the ledger_retry table",
        ),
    );
    assert!(j.is_same(), "{j:?}");
}

#[test]
fn a_number_that_differs_is_a_disagreement_naming_both_values() {
    let a = (
        "payment worker retries",
        "The payment worker gives up after 5 attempts and moves the job to the dead-letter queue",
    );
    let b = (
        "payment retry limit",
        "The payment worker gives up after 11 attempts and moves the job to the dead-letter queue",
    );
    assert_eq!(differences(a, b), [d(Kind::Number, "5", "11")]);
    // Named from either side, each value on its own side.
    assert_eq!(differences(b, a), [d(Kind::Number, "11", "5")]);
}

#[test]
fn a_measure_keeps_its_unit_in_the_difference() {
    assert_eq!(
        differences(
            (
                "access token lifetime",
                "Access tokens expire after 15 minutes"
            ),
            ("access token ttl", "Access tokens expire after 30 minutes"),
        ),
        [d(Kind::Number, "15 minutes", "30 minutes")]
    );
}

#[test]
fn identifiers_paths_versions_and_names_that_differ_are_named() {
    assert_eq!(
        differences(
            (
                "retry table",
                "Retry state for billing lives in the ledger_retry table"
            ),
            (
                "retry storage",
                "Retry state for billing lives in the retry_queue table"
            ),
        ),
        [d(Kind::Identifier, "ledger_retry", "retry_queue")]
    );
    assert_eq!(
        differences(
            (
                "pool cap",
                "The connection pool is capped at 20 in src/db/pool.rs"
            ),
            (
                "pool limit",
                "The connection pool is capped at 20 in src/db/conn.rs"
            ),
        ),
        [d(Kind::Path, "src/db/pool.rs", "src/db/conn.rs")]
    );
    assert_eq!(
        differences(
            ("node version", "The frontend builds with Node 20"),
            ("node pin", "The frontend builds with Node 22"),
        ),
        [d(Kind::Version, "20", "22")]
    );
    assert_eq!(
        differences(
            (
                "session store",
                "Sessions are stored in Redis with a 24 hour TTL"
            ),
            (
                "session backend",
                "Sessions are stored in Memcached with a 24 hour TTL"
            ),
        ),
        [d(Kind::Name, "Redis", "Memcached")]
    );
}

#[test]
fn an_opposite_a_negation_and_a_swapped_word_are_differences() {
    assert_eq!(
        differences(
            (
                "go indentation",
                "Indent Go files with tabs; gofmt enforces it in CI"
            ),
            (
                "go indent style",
                "Indent Go files with spaces; gofmt enforces it in CI"
            ),
        ),
        [d(Kind::Word, "tabs", "spaces")]
    );
    assert_eq!(
        differences(
            (
                "force push",
                "Force-pushing to main is blocked by branch protection"
            ),
            (
                "force push rule",
                "Force-pushing to main is not blocked by branch protection"
            ),
        ),
        [d(Kind::Negation, "blocked", "not blocked")]
    );
    assert_eq!(
        differences(
            (
                "deploy command",
                "Deploy with make release; never deploy by hand"
            ),
            (
                "deploy target",
                "Deploy with make ship; never deploy by hand"
            ),
        ),
        [d(Kind::Word, "release", "ship")]
    );
}

#[test]
fn one_value_written_two_ways_is_no_difference() {
    // "5" and "five", "15 minutes" and "900 seconds", "24 hours" and "a day".
    for (a, b) in [
        (
            "Failed webhooks are retried 5 times with exponential backoff",
            "Failed webhooks are retried five times with exponential backoff",
        ),
        (
            "Product pages are cached in the CDN for 15 minutes",
            "Product pages are cached in the CDN for 900 seconds",
        ),
        (
            "Idempotency keys are remembered for 24 hours",
            "Idempotency keys are remembered for a day",
        ),
    ] {
        let j = words(("retention", a), ("lifetime", b));
        assert!(!j.is_disagree(), "{a:?} / {b:?}: {j:?}");
        let with_model = judge(side("retention", a), side("lifetime", b), Some(0.9));
        assert!(with_model.is_same(), "{a:?} / {b:?}: {with_model:?}");
    }
}

#[test]
fn a_detail_one_side_adds_is_no_disagreement() {
    let j = words(
        (
            "api gateway",
            "All public traffic enters through the Kong gateway",
        ),
        (
            "gateway setup",
            "All public traffic enters through the Kong gateway, which runs 2 replicas",
        ),
    );
    assert!(!j.is_disagree(), "{j:?}");
}

#[test]
fn another_fact_of_the_same_area_is_different() {
    let j = words(
        (
            "log retention",
            "Application logs are kept in Loki for 30 days",
        ),
        (
            "log format",
            "Logs are JSON lines with trace_id and span_id fields for correlation",
        ),
    );
    assert!(matches!(j, Judgement::Different { .. }), "{j:?}");
}

#[test]
fn the_cosine_counts_only_for_a_model_the_thresholds_were_calibrated_for() {
    let (a, b) = (
        side("tokens", "Access tokens expire after 15 minutes"),
        side(
            "token life",
            "The auth service's access tokens are valid for 15 min",
        ),
    );
    let with = judge_with(a, b, Some(0.9), &Calibration::POTION);
    assert_eq!(with.evidence().cosine, Some(0.9));
    // No cosine (a claim not embedded yet): words alone, with their thresholds.
    let without = judge_with(a, b, None, &Calibration::POTION);
    assert_eq!(without, judge_with(a, b, None, &Calibration::LEXICAL));
    assert_eq!(Calibration::for_model(None), Calibration::LEXICAL);
    assert_eq!(Calibration::for_model(Some(POTION_ID)), Calibration::POTION);
    assert_eq!(
        Calibration::for_model(Some(&format!(
            "onnx:all-MiniLM-L6-v2-int8:{MINILM_DIGEST}:mean"
        ))),
        Calibration::MINILM
    );
    assert_eq!(
        Calibration::for_model(Some("onnx:my-model:0123456789ab:mean")),
        Calibration::LEXICAL
    );
}

#[test]
fn the_judgement_is_the_same_from_either_side() {
    let pairs = [
        (
            (
                "pool",
                "The Postgres pool is capped at 20 connections in src/db/pool.rs",
            ),
            (
                "pool limit",
                "src/db/pool.rs limits the Postgres pool to 50 connections",
            ),
        ),
        (
            (
                "flags",
                "Feature flags default to off when LaunchDarkly is unreachable",
            ),
            (
                "flag default",
                "Feature flags default to on when LaunchDarkly is unreachable",
            ),
        ),
    ];
    for (a, b) in pairs {
        let (ab, ba) = (words(a, b), words(b, a));
        assert_eq!(ab.as_str(), ba.as_str());
        assert_eq!(ab.evidence(), ba.evidence());
    }
}

fn member(slug: &str, strength: Strength, created: i64, text: &str) -> Member {
    Member {
        slug: slug.into(),
        label: slug.into(),
        text: text.into(),
        strength,
        created,
    }
}

fn same(score: f64) -> Judgement {
    Judgement::Same {
        evidence: Evidence {
            score,
            overlap: score,
            cosine: None,
            rest: score,
        },
    }
}

fn disagree() -> Judgement {
    Judgement::Disagree {
        evidence: Evidence {
            score: 0.8,
            overlap: 0.8,
            cosine: None,
            rest: 0.9,
        },
        differences: vec![Difference {
            kind: Kind::Number,
            a: "5".into(),
            b: "11".into(),
        }],
    }
}

#[test]
fn a_chain_of_restatements_never_carries_a_disagreement_into_one_cluster() {
    // b restates a and c; a and c disagree, and were never each other's candidates.
    let members = vec![
        member("a", Strength::Observed, 1, "gives up after 5 attempts"),
        member("b", Strength::Observed, 2, "gives up after a few attempts"),
        member("c", Strength::Observed, 3, "gives up after 11 attempts"),
        member("d", Strength::Observed, 4, "a fact of its own"),
    ];
    let judged = BTreeMap::from([((0, 1), same(0.9)), ((1, 2), same(0.8))]);
    let mut asked = Vec::new();
    let t = group("lexical", &members, judged, |i, j| {
        asked.push((i, j));
        Ok::<_, ()>(disagree())
    })
    .unwrap();
    assert_eq!(asked, [(0, 2)], "the pair the join would make is judged");
    assert_eq!(t.clusters.len(), 1);
    let slugs: Vec<&str> = t.clusters[0]
        .members
        .iter()
        .map(|m| m.slug.as_str())
        .collect();
    assert_eq!(slugs, ["a", "b"], "the surest restatement joins first");
    assert_eq!(t.disagreements.len(), 1);
    assert_eq!((&*t.disagreements[0].a, &*t.disagreements[0].b), ("a", "c"));
    assert_eq!(t.pairs_judged, 3);
}

#[test]
fn a_claim_in_no_cluster_is_left_alone_and_the_survivor_is_the_strongest_then_newest() {
    let members = vec![
        member("a", Strength::Verified, 1, "Sessions live in Redis"),
        member(
            "b",
            Strength::Observed,
            9,
            "Sessions live in Redis for 24 hours",
        ),
        member("c", Strength::Verified, 5, "Sessions are kept in Redis"),
        member("d", Strength::Hint, 3, "Logs go to Loki"),
    ];
    let judged = BTreeMap::from([
        ((0, 1), same(0.9)),
        ((0, 2), same(0.9)),
        ((1, 2), same(0.9)),
    ]);
    let t = group("lexical", &members, judged, |_, _| Ok::<_, ()>(same(0.0))).unwrap();
    assert_eq!(t.clusters.len(), 1, "d is in no cluster");
    let c = &t.clusters[0];
    assert_eq!(c.members.len(), 3);
    assert_eq!(
        c.survivor, "c",
        "verified beats observed, newer beats older"
    );
    assert_eq!(c.pairs.len(), 3);
    // What b adds, the survivor's text does not say: a join leaves it to history.
    assert_eq!(
        c.dropped,
        [Dropped {
            slug: "b".into(),
            values: vec!["24 hours".into()]
        }]
    );
}

#[test]
fn grouping_is_deterministic_and_sorted() {
    let members: Vec<Member> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|s| member(s, Strength::Observed, 1, "x"))
        .collect();
    let judged = BTreeMap::from([
        ((4, 5), same(0.7)),
        ((0, 3), same(0.7)),
        ((1, 2), disagree()),
        ((0, 4), disagree()),
    ]);
    let run = || {
        group("lexical", &members, judged.clone(), |_, _| {
            Ok::<_, ()>(disagree())
        })
        .unwrap()
    };
    let t = run();
    assert_eq!(t, run());
    let firsts: Vec<&str> = t
        .clusters
        .iter()
        .map(|c| c.members[0].slug.as_str())
        .collect();
    assert_eq!(firsts, ["a", "e"]);
    let pairs: Vec<(&str, &str)> = t
        .disagreements
        .iter()
        .map(|d| (d.a.as_str(), d.b.as_str()))
        .collect();
    assert_eq!(pairs, [("a", "e"), ("b", "c")]);
}
