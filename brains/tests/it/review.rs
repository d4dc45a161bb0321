//! A person's review and tending's joins, at the store (SPEC §14): a join takes the
//! joined labels out of recall into history (one `consolidate` act each) and is undone
//! by bringing them back; a claim an agent wrote is unreviewed until a person keeps it,
//! and again when an agent writes a new version.

use std::sync::Arc;

use brains::{ActKind, ClaimState, FixedClock, MemorizeInput, RecallQuery};

use crate::common::{input, open, T0};

fn by(label: &str, text: &str, agent: &str) -> MemorizeInput {
    MemorizeInput {
        source_agent: agent.to_string(),
        ..input(label, text)
    }
}

#[test]
fn a_join_keeps_every_version_and_is_undone() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, true);
    s.memorize(input(
        "billing retry table",
        "billing retries live in the ledger_retry table",
    ))
    .unwrap();
    clock.advance(10);
    s.memorize(input(
        "retry state",
        "the billing service keeps its retry state in ledger_retry",
    ))
    .unwrap();
    s.memorize(input(
        "ledger retries",
        "ledger_retry holds the billing retries",
    ))
    .unwrap();
    let joined = s
        .consolidate(
            "billing-retry-table",
            &[
                "retry-state".into(),
                "ledger-retries".into(),
                "retry-state".into(),
            ],
            "human:founder",
        )
        .unwrap();
    assert_eq!(joined.len(), 2, "each label once");
    assert!(s.get("retry-state").unwrap().is_none());
    let h = s.history("retry-state").unwrap();
    let last = h.last().unwrap();
    assert_eq!(last.state, ClaimState::Outdated);
    assert_eq!(
        last.outdated_reason.as_deref(),
        Some("consolidated: into billing-retry-table")
    );
    let acts = s.acts_newest(10).unwrap();
    assert_eq!(
        acts.iter()
            .filter(|a| a.kind == ActKind::Consolidate)
            .count(),
        2
    );
    // The fact is still found, under the label that survived.
    let found = s
        .recall(&RecallQuery {
            text: "billing retry state ledger_retry".into(),
            limit: 5,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(found.hits[0].claim.slug, "billing-retry-table");
    // An unknown label refuses the whole join; nothing changes.
    assert!(s
        .consolidate("billing-retry-table", &["nonesuch".into()], "human:founder")
        .is_err());
    // Undone: each joined label back live with its text, a `revive` act by who undid it.
    let back = s.consolidated_into("billing-retry-table").unwrap();
    assert_eq!(back, ["ledger-retries", "retry-state"]);
    let revived = s.revive("retry-state", "human:founder").unwrap();
    assert_eq!(
        revived.text,
        "the billing service keeps its retry state in ledger_retry"
    );
    assert_eq!(
        revived.source_agent, "claude:maker",
        "the author stays the author"
    );
    assert_eq!(s.acts_newest(1).unwrap()[0].kind, ActKind::Revive);
    assert_eq!(s.acts_newest(1).unwrap()[0].actor, "human:founder");
    assert_eq!(
        s.consolidated_into("billing-retry-table").unwrap(),
        ["ledger-retries"]
    );
    assert!(
        s.revive("retry-state", "human:founder").is_err(),
        "live: nothing to bring back"
    );
}

#[test]
fn an_agents_claim_is_unreviewed_until_a_person_keeps_it() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut s = open(d.path(), &clock, false);
    s.memorize(by(
        "pool size",
        "the pool holds 20 connections",
        "codex:maker",
    ))
    .unwrap();
    clock.advance(10);
    s.memorize(by(
        "deploy",
        "deploys go through the blue slot",
        "claude:maker",
    ))
    .unwrap();
    s.memorize(by("owner note", "the person wrote this", "human:founder"))
        .unwrap();
    assert_eq!(
        s.unreviewed_count().unwrap(),
        2,
        "a person's claim needs no review"
    );
    let (n, page) = s.unreviewed(0, 10).unwrap();
    assert_eq!(n, 2);
    assert_eq!(page[0].slug, "deploy", "newest first");
    assert!(
        s.mark_reviewed("deploy", "claude:maker").is_err(),
        "an agent cannot review"
    );
    s.mark_reviewed("deploy", "human:founder").unwrap();
    assert!(s.is_reviewed("deploy").unwrap());
    assert_eq!(s.unreviewed_count().unwrap(), 1);
    assert_eq!(s.acts_newest(1).unwrap()[0].kind, ActKind::Review);
    // A new version by an agent is unreviewed again.
    clock.advance(10);
    s.memorize(by(
        "deploy",
        "deploys go through the green slot",
        "claude:maker",
    ))
    .unwrap();
    assert!(!s.is_reviewed("deploy").unwrap());
    assert_eq!(s.unreviewed_count().unwrap(), 2);
    assert!(s.mark_reviewed("nonesuch", "human:founder").is_err());
}
