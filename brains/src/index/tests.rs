//! The claim index on its own: BM25 ranking, the common-term split, pruning against the
//! exhaustive search, and the two levels (base and delta) answering as one.

use super::*;
use crate::claim::Strength;

fn meta(label: &str) -> ClaimMeta {
    ClaimMeta {
        label: label.to_lowercase(),
        source_agent: "test:agent".into(),
        strength: Strength::Observed,
        trust: 0.5,
        created: 0,
        evidence: vec![],
    }
}

fn put(ix: &mut ClaimIndex, slug: &str, label: &str, text: &str) {
    ix.upsert(slug, label, text, meta(label), None);
}

fn slugs(ix: &ClaimIndex, q: &str, k: usize) -> Vec<String> {
    ix.search_text(q, k, &|_| true)
        .into_iter()
        .map(|(s, _)| s)
        .collect()
}

#[test]
fn bm25_prefers_rarer_terms_and_label_matches() {
    let mut ix = ClaimIndex::new();
    put(
        &mut ix,
        "a",
        "cache flake",
        "the cache test flakes on two cores",
    );
    put(
        &mut ix,
        "b",
        "deploy",
        "deploy with the blue green script and the cache",
    );
    put(&mut ix, "c", "ci", "ci runners are slow");
    let r = slugs(&ix, "cache flakes", 10);
    assert_eq!(r, vec!["a", "b"]);
    assert_eq!(slugs(&ix, "blue green", 10)[0], "b");
    assert!(slugs(&ix, "nothing matches", 10).is_empty());
}

#[test]
fn common_terms_add_to_candidates_but_do_not_nominate_them() {
    let mut ix = ClaimIndex::new();
    for i in 0..600 {
        put(
            &mut ix,
            &format!("d{i}"),
            "note",
            &format!("service entry {i}"),
        );
    }
    put(&mut ix, "target", "note", "service webhook retries");
    put(&mut ix, "other", "note", "webhook retries elsewhere");
    // "service" is common (601 of 602 claims): with a selective term in the query it
    // only adds to the claims the selective terms found.
    let r = ix.search_text("service webhook", 10, &|_| true);
    assert_eq!(
        r.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
        vec!["target", "other"]
    );
    assert!(r[0].1 > r[1].1, "the common term still counts");
    // Alone, a common term still finds its claims.
    assert_eq!(slugs(&ix, "service", 5).len(), 5);
}

#[test]
fn upsert_replaces_and_remove_forgets_in_both_levels() {
    for compacted in [false, true] {
        let mut ix = ClaimIndex::new();
        put(&mut ix, "a", "x", "zebra");
        if compacted {
            ix.compact();
        }
        put(&mut ix, "a", "x", "giraffe");
        assert!(slugs(&ix, "zebra", 5).is_empty());
        assert_eq!(slugs(&ix, "giraffe", 5), vec!["a"]);
        assert_eq!(ix.len(), 1);
        if compacted {
            ix.compact();
        }
        ix.remove("a");
        assert!(ix.is_empty());
        assert!(slugs(&ix, "giraffe", 5).is_empty());
        put(&mut ix, "b", "y", "giraffe");
        let b = ix.doc("b").unwrap();
        assert!(
            ix.search_text("giraffe", 5, &|d| d != b).is_empty(),
            "the filter applies"
        );
    }
}

#[test]
fn metadata_keys_and_trust_follow_their_claim_across_a_compaction() {
    let mut ix = ClaimIndex::new();
    ix.upsert("a", "Alpha", "one", meta("Alpha"), Some(7));
    ix.upsert("b", "Beta", "two", meta("Beta"), None);
    ix.compact();
    assert_eq!(ix.key_of("a"), Some(7));
    assert_eq!(
        ix.doc_of_key(7).map(|d| ix.slug(d).to_string()),
        Some("a".into())
    );
    // A key given after the base was built, and one moved to a new version.
    ix.set_key("b", Some(9));
    assert_eq!(
        ix.doc_of_key(9).map(|d| ix.slug(d).to_string()),
        Some("b".into())
    );
    ix.upsert("a", "Alpha", "one again", meta("Alpha"), Some(11));
    assert_eq!(ix.doc_of_key(7), None, "the replaced version's key is gone");
    assert_eq!(ix.key_of("a"), Some(11));
    ix.set_trust("b", 0.9);
    let d = ix.doc("b").unwrap();
    assert_eq!(ix.meta(d).unwrap().trust, 0.9);
    assert_eq!(ix.meta(d).unwrap().label, "beta");
    ix.compact();
    assert_eq!(
        ix.doc_of_key(9).map(|d| ix.slug(d).to_string()),
        Some("b".into())
    );
    assert_eq!(
        ix.doc_of_key(11).map(|d| ix.slug(d).to_string()),
        Some("a".into())
    );
    assert_eq!(ix.meta(ix.doc("b").unwrap()).unwrap().trust, 0.9);
    ix.set_key("b", None);
    assert_eq!(ix.doc_of_key(9), None);
    // Through the bytes of a snapshot.
    let mut bytes = Vec::new();
    ix.write(&mut bytes);
    let back = ClaimIndex::read(&mut Reader::new(&bytes)).unwrap();
    assert_eq!(back.key_of("a"), Some(11));
    assert_eq!(back.key_of("b"), None);
    assert_eq!(back.len(), 2);
}

#[test]
fn a_damaged_segment_does_not_read() {
    let mut ix = ClaimIndex::new();
    for i in 0..30 {
        put(
            &mut ix,
            &format!("s{i}"),
            "label words",
            &format!("text {i} more"),
        );
    }
    let mut bytes = Vec::new();
    ix.write(&mut bytes);
    assert!(ClaimIndex::read(&mut Reader::new(&bytes)).is_some());
    for cut in [0, 1, 9, bytes.len() / 3, bytes.len() - 1] {
        assert!(
            ClaimIndex::read(&mut Reader::new(&bytes[..cut])).is_none(),
            "cut at {cut}"
        );
    }
    // Lengths that claim more than the bytes hold are refused before anything is allocated.
    let mut huge = bytes.clone();
    huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(ClaimIndex::read(&mut Reader::new(&huge)).is_none());
}

mod pruning {
    use super::*;
    use proptest::prelude::*;

    const VOCAB: &[&str] = &[
        "cache", "deploy", "runner", "flake", "lamp", "queue", "token", "index", "merge", "retry",
        "socket", "shard",
    ];

    /// Words drawn with a skew: the first few in most documents, the rest rare.
    fn text(max: usize) -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![6 => 0usize..3, 3 => 3usize..7, 1 => 7usize..VOCAB.len()],
            0..max,
        )
        .prop_map(|ix| {
            ix.into_iter()
                .map(|i| VOCAB[i])
                .collect::<Vec<_>>()
                .join(" ")
        })
    }

    #[derive(Debug, Clone)]
    enum Op {
        Upsert(u8, String, String),
        Remove(u8),
        Compact,
        Trust(u8, u8),
        Key(u8, u16),
        /// A checkpoint's fold starts in the background ...
        FoldStart,
        /// ... and comes back (when one is out).
        FoldEnd,
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        proptest::collection::vec(
            prop_oneof![
                8 => (0u8..80, text(3), text(12)).prop_map(|(d, l, t)| Op::Upsert(d, l, t)),
                1 => (0u8..80).prop_map(Op::Remove),
                1 => Just(Op::Compact),
                1 => (0u8..80, 0u8..10).prop_map(|(d, t)| Op::Trust(d, t)),
                1 => (0u8..80, any::<u16>()).prop_map(|(d, k)| Op::Key(d, k)),
                1 => Just(Op::FoldStart),
                1 => Just(Op::FoldEnd),
            ],
            1..220,
        )
    }

    /// Every answer of `ix`, scores as bits: comparable across indexes whose ids differ.
    fn answers(
        ix: &ClaimIndex,
        text: &str,
        k: usize,
        keep: &dyn Fn(&str) -> bool,
        exhaustive: bool,
    ) -> Vec<(String, u64, u64, u32)> {
        let q = ix.prepare(text);
        let keep = |d: DocId| keep(ix.slug(d));
        let hits = if exhaustive {
            ix.search_exhaustive(&q, k, &keep)
        } else {
            ix.search(&q, k, &keep)
        };
        hits.into_iter()
            .map(|h| {
                (
                    ix.slug(h.doc).to_string(),
                    h.score.to_bits(),
                    h.norm.to_bits(),
                    h.matched,
                )
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        /// The pruned search returns exactly the unpruned top-k (the same claims, scores
        /// and order), through replacements, removals, compactions in between, folds in
        /// the background with writes, trust and key changes while they run, filters,
        /// every common-term threshold, and a snapshot round trip; and an index whose
        /// claims sit in the delta answers exactly as the same claims compacted into one
        /// base, or built at once from scratch, with the same trust and vector keys.
        #[test]
        fn pruning_returns_exactly_the_unpruned_top_k_whatever_level_holds_a_claim(
            ops in ops(),
            min_df in prop_oneof![Just(1usize), Just(4), Just(15), Just(1000)],
            queries in proptest::collection::vec((text(6), 1usize..15, 0u8..3), 1..8),
        ) {
            let mut ix = ClaimIndex::with_common_min_df(min_df);
            // slug → (label, text, trust, vector key)
            let mut truth: std::collections::BTreeMap<String, (String, String, f64, Option<u64>)> = Default::default();
            let mut fold: Option<ClaimIndex> = None;
            for op in &ops {
                match op {
                    Op::Upsert(d, l, t) => {
                        put(&mut ix, &format!("d{d}"), l, t);
                        let trust = meta(l).trust;
                        truth.insert(format!("d{d}"), (l.clone(), t.clone(), trust, None));
                    }
                    Op::Remove(d) => {
                        ix.remove(&format!("d{d}"));
                        truth.remove(&format!("d{d}"));
                    }
                    Op::Compact => ix.compact(),
                    Op::Trust(d, t) => {
                        let slug = format!("d{d}");
                        ix.set_trust(&slug, f64::from(*t) / 10.0);
                        if let Some(c) = truth.get_mut(&slug) {
                            c.2 = f64::from(*t) / 10.0;
                        }
                    }
                    Op::Key(d, k) => {
                        // Keys are unique to a claim, as the store gives them.
                        let slug = format!("d{d}");
                        let key = (*k > 0).then(|| u64::from(*d) << 16 | u64::from(*k));
                        ix.set_key(&slug, key);
                        if let Some(c) = truth.get_mut(&slug) {
                            c.3 = key;
                        }
                    }
                    Op::FoldStart => {
                        if fold.is_none() {
                            fold = ix.fold_input();
                        }
                    }
                    Op::FoldEnd => {
                        if let Some(mut f) = fold.take() {
                            f.compact();
                            ix.install_fold(f.base());
                        }
                    }
                }
            }
            prop_assert_eq!(ix.len(), truth.len());
            for (slug, (_, _, trust, key)) in &truth {
                let d = ix.doc(slug).unwrap();
                prop_assert_eq!(ix.key(d), *key, "{}", slug);
                prop_assert_eq!(ix.meta(d).unwrap().trust, *trust, "{}", slug);
                if let Some(k) = key {
                    prop_assert_eq!(ix.doc_of_key(*k).map(|d| ix.slug(d)), Some(slug.as_str()));
                }
            }
            let mut compacted = ix.clone();
            compacted.compact();
            let mut bytes = Vec::new();
            compacted.clone().write(&mut bytes);
            let mut loaded = ClaimIndex::read(&mut Reader::new(&bytes)).unwrap();
            loaded.common_min_df = min_df;
            let mut fresh = ClaimIndex::with_common_min_df(min_df);
            for (slug, (l, t, _, _)) in &truth {
                put(&mut fresh, slug, l, t);
            }
            for (text, k, filter) in &queries {
                let keep = |slug: &str| match filter {
                    0 => true,
                    1 => !slug.ends_with('3'),
                    _ => slug.len().is_multiple_of(2),
                };
                let reference = answers(&fresh, text, *k, &keep, true);
                for (name, index) in [("live", &ix), ("compacted", &compacted), ("loaded", &loaded), ("fresh", &fresh)] {
                    let pruned = answers(index, text, *k, &keep, false);
                    let exhaustive = answers(index, text, *k, &keep, true);
                    prop_assert_eq!(&pruned, &exhaustive, "{} query {:?} k {}", name, text, k);
                    prop_assert_eq!(&pruned, &reference, "{} query {:?} k {}", name, text, k);
                }
            }
        }
    }
}
