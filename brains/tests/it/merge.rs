//! `Store::merge_in`: the versions of another store of the same project merged in (two
//! brains of one repository that split), every version kept, labels both hold resolved
//! as two writes in time order are, a second merge writing nothing.

use std::sync::Arc;

use brains::{ClaimState, FixedClock, RecallQuery, Strength};

use crate::common::{input, open, T0};

#[test]
fn merging_keeps_every_version_and_resolves_met_labels_by_the_supersession_rules() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let clock = Arc::new(FixedClock::new(T0));
    let mut into = open(a.path(), &clock, true);
    let mut from = open(b.path(), &clock, true);
    // Both hold "pool size": `into` first, `from` later at the same strength: the later
    // is live after the merge, the earlier in history.
    into.memorize(input("pool size", "the pool holds 20 connections"))
        .unwrap();
    clock.advance(10);
    from.memorize(input("pool size", "the pool holds 64 connections"))
        .unwrap();
    // Both hold "deploy": `from` later but weaker: the stronger stays live.
    let mut strong = input("deploy", "deploys go through the blue slot");
    strong.strength = Strength::Verified;
    into.memorize(strong).unwrap();
    clock.advance(10);
    from.memorize(input("deploy", "deploys go straight to green"))
        .unwrap();
    // Only `from` holds "cache", with a version in history, and "gone", retired.
    from.memorize(input("cache", "the cache lives 5 minutes"))
        .unwrap();
    clock.advance(10);
    from.memorize(input("cache", "the cache lives 10 minutes"))
        .unwrap();
    from.memorize(input("gone", "an old note")).unwrap();
    from.retire("gone", "claude:maker", "no longer true")
        .unwrap();

    let every = from.every_version().unwrap();
    assert_eq!(every.len(), 4, "four labels, histories included");
    let done = into
        .merge_in(every.clone(), "human:founder", "/p/clone")
        .unwrap();
    assert_eq!(done.labels, 4, "{done:?}");
    assert_eq!(
        done.met,
        vec!["deploy".to_string(), "pool-size".to_string()]
    );
    assert_eq!(done.live_from_other, 2, "pool size and cache: {done:?}");
    // 1 + 1 + 2 + 1 versions from `from` (`into`'s pool size moved to history is no new
    // version).
    assert_eq!(done.versions, 5, "{done:?}");

    let live = |slug: &str| into.get(slug).unwrap().map(|c| c.text);
    assert_eq!(
        live("pool-size").as_deref(),
        Some("the pool holds 64 connections")
    );
    assert_eq!(
        live("deploy").as_deref(),
        Some("deploys go through the blue slot")
    );
    assert_eq!(live("cache").as_deref(), Some("the cache lives 10 minutes"));
    assert_eq!(live("gone"), None, "a retired label stays retired");
    let texts = |slug: &str| -> Vec<String> {
        into.history(slug)
            .unwrap()
            .into_iter()
            .map(|c| c.text)
            .collect()
    };
    assert_eq!(
        texts("pool-size"),
        [
            "the pool holds 20 connections",
            "the pool holds 64 connections"
        ]
    );
    assert_eq!(
        texts("deploy").len(),
        2,
        "the weaker later write is kept in history"
    );
    assert_eq!(texts("cache").len(), 2);
    let gone = into.history("gone").unwrap();
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].state, ClaimState::Outdated);
    // Versions are numbered in order within each label, no two alike.
    for slug in ["pool-size", "deploy", "cache"] {
        let v: Vec<u64> = into
            .history(slug)
            .unwrap()
            .iter()
            .map(|c| c.version)
            .collect();
        assert!(v.windows(2).all(|w| w[0] < w[1]), "{slug}: {v:?}");
    }
    // The merged live versions are found by their words and by their vectors.
    let hits = into
        .recall(&RecallQuery {
            text: "cache minutes".into(),
            limit: 5,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits.hits[0].claim.slug, "cache");
    // One merge act per label; a second merge writes nothing.
    let merges = into
        .acts(0, 1000)
        .unwrap()
        .into_iter()
        .filter(|a| a.kind == brains::ActKind::Merge)
        .count();
    assert_eq!(merges, 4);
    let again = into.merge_in(every, "human:founder", "/p/clone").unwrap();
    assert_eq!((again.labels, again.versions), (0, 0), "{again:?}");
    // It survives a reopen (the claim index caught up or rebuilt from redb).
    into.close().unwrap();
    let into = open(a.path(), &clock, true);
    assert_eq!(
        into.get("pool-size").unwrap().unwrap().text,
        "the pool holds 64 connections"
    );
}
