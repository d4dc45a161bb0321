//! The vector index holds vectors in half precision (issue 24: half the memory of a large
//! brain). Regression guard: a half-precision index answers the nearest claims an exact
//! search over the full-precision vectors finds, as well as a full-precision index does,
//! with cosines that differ from the exact ones by less than the ranking can tell apart.

use std::sync::Arc;

use brains::recall::RankMode;
use brains::vector::Precision;
use brains::{Embedder, FixedClock, RecallQuery, Store, StoreOptions};

use crate::common::{input, BagOfWords, T0};

const WORDS: &[&str] = &[
    "cache", "deploy", "runner", "flake", "queue", "token", "index", "merge", "retry", "socket",
    "shard", "schema", "router", "session", "vector", "latency", "timeout", "backoff", "worker",
    "config", "release", "branch", "commit", "review", "fixture", "stream", "buffer", "parser",
    "grammar", "linker", "crate", "module", "trait", "actor", "mailbox", "spool", "letter",
    "journal", "snapshot", "kernel",
];

fn text(seed: &mut u64, n: usize) -> String {
    (0..n)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            WORDS[(*seed % WORDS.len() as u64) as usize]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The nearest claims to `text` by vector alone, floor off.
fn vector_hits(s: &Store, text: &str, limit: usize) -> Vec<brains::Hit> {
    s.recall(&RecallQuery {
        text: text.into(),
        limit,
        mode: RankMode::Vector,
        matched_only: false,
        ..Default::default()
    })
    .unwrap()
    .hits
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

/// Each query's answer, a row a line: the slug and every figure it shows.
fn answers(s: &Store, queries: &[RecallQuery]) -> Vec<Vec<String>> {
    queries
        .iter()
        .map(|q| {
            s.recall(q)
                .unwrap()
                .hits
                .iter()
                .map(|h| {
                    let row = (h.score, h.lexical, h.vector, h.matched);
                    format!("{} {row:?}", h.claim.slug)
                })
                .collect()
        })
        .collect()
}

/// Two runs of the same queries answered alike, row for row.
fn same_answers(a: &[Vec<String>], b: &[Vec<String>]) {
    let differ: Vec<usize> = (0..a.len()).filter(|i| a[*i] != b[*i]).collect();
    assert!(
        differ.is_empty(),
        "queries {differ:?} differ, the first: {:?} against {:?}",
        differ.first().map(|i| &a[*i]),
        differ.first().map(|i| &b[*i])
    );
}

/// Each precision's graph, settled (not the exact fresh scan), finds the exact top 10;
/// an eight-bit graph's candidates are rescored with their stored vectors, so the
/// cosines it reports are the exact ones.
#[test]
fn a_quantized_index_finds_what_an_exact_search_finds() {
    let clock = Arc::new(FixedClock::new(T0));
    let mut seed = 0x5EED_u64;
    let claims: Vec<(String, String)> = (0..1500)
        .map(|i| (format!("fact {i}"), text(&mut seed, 6)))
        .collect();
    let queries: Vec<String> = (0..40).map(|_| text(&mut seed, 3)).collect();
    let e = BagOfWords;
    let stored: Vec<Vec<f32>> = claims
        .iter()
        .map(|(l, t)| e.embed(&[format!("{l}\n{t}").as_str()]).unwrap().remove(0))
        .collect();
    let mut found = vec![];
    for precision in [Precision::I8, Precision::F16, Precision::F32] {
        let d = tempfile::tempdir().unwrap();
        let (mut s, _) = Store::open(
            d.path(),
            StoreOptions {
                embedder: Some(Arc::new(BagOfWords) as Arc<dyn Embedder>),
                clock: clock.clone(),
                precision,
                ..Default::default()
            },
        )
        .unwrap();
        for r in s
            .memorize_many(claims.iter().map(|(l, t)| input(l, t)).collect())
            .unwrap()
        {
            r.unwrap();
        }
        s.settle_vectors().unwrap();
        let mut agree = 0usize;
        let mut worst_cos = 0f64;
        for q in &queries {
            let qv = e.embed(&[q.as_str()]).unwrap().remove(0);
            let mut exact: Vec<(f64, usize)> = stored
                .iter()
                .enumerate()
                .map(|(i, v)| (cosine(v, &qv), i))
                .collect();
            exact.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            // The exact top 10, widened to every claim tied with the tenth.
            let tenth = exact[9].0;
            let truth: std::collections::HashSet<String> = exact
                .iter()
                .take_while(|(c, _)| *c >= tenth - 1e-9)
                .map(|(_, i)| brains::slugify(&claims[*i].0))
                .collect();
            let hits = s
                .recall(&RecallQuery {
                    text: q.clone(),
                    limit: 10,
                    mode: RankMode::Vector,
                    matched_only: false,
                    ..Default::default()
                })
                .unwrap()
                .hits;
            assert_eq!(hits.len(), 10);
            for h in &hits {
                let i: usize = h.claim.label["fact ".len()..].parse().unwrap();
                let exact_cos = cosine(&stored[i], &qv);
                worst_cos = worst_cos.max((h.vector.unwrap() - exact_cos).abs());
                agree += usize::from(truth.contains(&h.claim.slug));
            }
        }
        let recall = agree as f64 / (10 * queries.len()) as f64;
        let tolerance = if precision.rescores() { 1e-6 } else { 2e-3 };
        assert!(
            worst_cos < tolerance,
            "{precision:?}: a cosine is {worst_cos} off the exact one"
        );
        found.push((precision, recall));
    }
    let f32 = found[2].1;
    for (precision, recall) in &found[..2] {
        assert!(
            *recall >= 0.95,
            "{precision:?} finds {recall} of the exact top 10"
        );
        assert!(
            (recall - f32).abs() <= 0.02,
            "{precision:?} ({recall}) answers as full precision does ({f32})"
        );
    }
}

/// A write adds its vector to the fresh set, searched exactly, and a settler thread moves
/// fresh vectors into the graph in the background (issue 24: a memorize never waits for
/// a graph insert). Regression guard: a claim is found by its vector the moment its write
/// returns, a superseded version's vector is never found again, even while it moves, and
/// once settled the index is in step with redb.
#[test]
fn vectors_are_found_at_once_and_settle_in_the_background() {
    let clock = Arc::new(FixedClock::new(T0));
    let d = tempfile::tempdir().unwrap();
    let (mut s, _) = Store::open(d.path(), crate::common::opts(&clock, true)).unwrap();
    let mut seed = 0xF00D_u64;
    let texts: Vec<String> = (0..3000).map(|_| text(&mut seed, 6)).collect();
    for chunk in texts.chunks(500).enumerate() {
        let batch = chunk
            .1
            .iter()
            .enumerate()
            .map(|(i, t)| input(&format!("fact {}", chunk.0 * 500 + i), t))
            .collect();
        for r in s.memorize_many(batch).unwrap() {
            r.unwrap();
        }
    }
    let vector_query = |s: &Store, text: &str| vector_hits(s, text, 5);
    // Superseded while the settler works: the new text is found, the old one's vector
    // never answers for the claim again.
    for i in (0..3000).step_by(10) {
        let new = format!("{} kettle{i}", texts[i]);
        s.memorize(input(&format!("fact {i}"), &new)).unwrap();
        // The very text it was embedded from: a cosine of 1.
        let hits = vector_query(&s, &format!("fact {i}\n{new}"));
        assert_eq!(
            hits[0].claim.text, new,
            "found by its vector as soon as its write returned"
        );
        assert!(hits.iter().all(|h| h.claim.version <= 2));
    }
    assert!(
        s.vectors_unsettled() > 0 || s.check_index().unwrap().is_none(),
        "either still settling or settled in step"
    );
    s.settle_vectors().unwrap();
    assert_eq!(s.vectors_unsettled(), 0);
    assert_eq!(s.check_index().unwrap(), None);
    assert_eq!(s.stats().unwrap().vectors, 3000);
    drop(s);
    let (s, report) = Store::open(d.path(), crate::common::opts(&clock, true)).unwrap();
    assert!(
        !report.index_rebuilt && report.index_repaired == 0,
        "{report:?}"
    );
    let hits = vector_query(&s, &format!("fact 10\n{} kettle10", texts[10]));
    assert_eq!(hits[0].claim.slug, "fact-10");
}

/// Issue 24: a large brain's open no longer asks the index file for every live key when
/// the stamp written with the file vouches for exactly the live keys; a file the store
/// moved past (here an older file put back with its own stamp and time) is still checked
/// key by key and repaired.
#[test]
fn a_stamped_index_file_opens_unchecked_and_a_stale_one_is_still_repaired() {
    let clock = Arc::new(FixedClock::new(T0));
    let d = tempfile::tempdir().unwrap();
    let opts = || crate::common::opts(&clock, true);
    let mut seed = 0x5EED_u64;
    let (mut s, _) = Store::open(d.path(), opts()).unwrap();
    for i in 0..200 {
        s.memorize(input(&format!("fact {i}"), &text(&mut seed, 6)))
            .unwrap();
    }
    // Supersessions take the old versions' keys out of the graph.
    for i in (0..200).step_by(10) {
        s.memorize(input(&format!("fact {i}"), &text(&mut seed, 7)))
            .unwrap();
    }
    s.close().unwrap();
    let (s, report) = Store::open(d.path(), opts()).unwrap();
    assert_eq!(
        (
            report.index_keys_checked,
            report.index_repaired,
            report.index_rebuilt
        ),
        (0, 0, false),
        "the stamp vouched for the file: {report:?}"
    );
    assert_eq!(s.check_index().unwrap(), None);
    s.close().unwrap();

    let file = d.path().join("vectors.usearch");
    let stamp = d.path().join(brains::vector::STAMP_FILE);
    let old_file = std::fs::read(&file).unwrap();
    let old_stamp = std::fs::read(&stamp).unwrap();
    let old_mtime = std::fs::metadata(&file).unwrap().modified().unwrap();

    let (mut s, _) = Store::open(d.path(), opts()).unwrap();
    // Superseded: as many keys as before, thirty of them new.
    let mut added = Vec::new();
    for i in 0..30 {
        added.push(text(&mut seed, 8));
        s.memorize(input(&format!("fact {i}"), &added[i])).unwrap();
    }
    s.close().unwrap();
    // The older file back, with its own stamp and time: the stamp matches its file and
    // the count matches the store's, but not the store's live keys.
    std::fs::write(&file, &old_file).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old_mtime)
        .unwrap();
    std::fs::write(&stamp, &old_stamp).unwrap();
    let (mut s, report) = Store::open(d.path(), opts()).unwrap();
    assert!(
        !report.index_rebuilt && report.index_repaired == 60 && report.index_keys_checked == 200,
        "checked key by key and repaired: {report:?}"
    );
    s.settle_vectors().unwrap();
    assert_eq!(s.check_index().unwrap(), None);
    // The very text it was embedded from: a cosine of 1.
    let hits = vector_hits(&s, &format!("fact 17\n{}", added[17]), 3);
    assert_eq!(hits[0].claim.text, added[17]);
    s.close().unwrap();
    // Repaired and saved: stamped again, and trusted again.
    let (_, report) = Store::open(d.path(), opts()).unwrap();
    assert_eq!(report.index_keys_checked, 0, "{report:?}");
}

/// Issue 24: an import's batches no longer share the cores with the settler (6 200 →
/// 13 000 files/s). A bulk batch holds the settler back for a moment: its vectors stay
/// fresh (found at once), and the graph takes them once the batches stop, with no
/// further write to wake it.
#[test]
fn a_bulk_batch_holds_the_settler_and_the_graph_catches_up_after() {
    let clock = Arc::new(FixedClock::new(T0));
    let d = tempfile::tempdir().unwrap();
    let (mut s, _) = Store::open(d.path(), crate::common::opts(&clock, true)).unwrap();
    let mut seed = 0xB01D_u64;
    let texts: Vec<String> = (0..600).map(|_| text(&mut seed, 6)).collect();
    let batch = texts
        .iter()
        .enumerate()
        .map(|(i, t)| input(&format!("bulk {i}"), t))
        .collect();
    for r in s.memorize_many(batch).unwrap() {
        r.unwrap();
    }
    assert_eq!(
        s.vectors_unsettled(),
        600,
        "held: nothing settled while the bulk write may go on"
    );
    let hits = vector_hits(&s, &format!("bulk 599\n{}", texts[599]), 1);
    assert_eq!(hits[0].claim.slug, "bulk-599", "found at once, fresh");
    let started = std::time::Instant::now();
    while s.vectors_unsettled() > 0 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the settler never caught up: {} unsettled",
            s.vectors_unsettled()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(s.check_index().unwrap(), None);
}

/// Issue 24: in a large store a hybrid recall searches its two sides on two cores. The
/// answer is the one the sequential recall gives, hit for hit and score for score,
/// scoped and filtered queries included.
#[test]
fn a_recall_on_two_cores_answers_what_the_sequential_one_does() {
    let clock = Arc::new(FixedClock::new(T0));
    let d = tempfile::tempdir().unwrap();
    let with = |min: usize| StoreOptions {
        parallel_recall_min: min,
        ..crate::common::opts(&clock, true)
    };
    let mut seed = 0xD0_u64;
    let (mut s, _) = Store::open(d.path(), with(usize::MAX)).unwrap();
    let batch = (0..400)
        .map(|i| {
            let mut inp = input(&format!("fact {i}"), &text(&mut seed, 7));
            inp.source_agent = if i % 3 == 0 { "claude:a" } else { "codex:b" }.into();
            inp
        })
        .collect();
    for r in s.memorize_many(batch).unwrap() {
        r.unwrap();
    }
    let queries: Vec<RecallQuery> = (0..40)
        .map(|i| RecallQuery {
            text: text(&mut seed, 3),
            limit: 10,
            mode: if i % 4 == 0 {
                RankMode::Vector
            } else {
                RankMode::Auto
            },
            matched_only: i % 2 == 0,
            filter: brains::recall::RecallFilter {
                source_agent: (i % 5 == 0).then(|| "claude:a".to_string()),
                ..Default::default()
            },
            ..Default::default()
        })
        .collect();
    // Both answered from the graph (a fresh vector's cosine is exact, a settled one's
    // half precision).
    s.settle_vectors().unwrap();
    let sequential = answers(&s, &queries);
    s.close().unwrap();
    let (s, _) = Store::open(d.path(), with(0)).unwrap();
    let parallel = answers(&s, &queries);
    same_answers(&parallel, &sequential);
    assert!(sequential.iter().filter(|a| !a.is_empty()).count() > 20);
}

/// Issue 50: a settled recall read every candidate's stored vector from redb. Now what
/// the graph holds bounds each candidate's cosine, and only the candidates that can
/// reach the answer are read. The answer, score for score, is the one a recall that
/// reads them all gives: the same store opened without its bounds (`vectors.bounds`
/// removed, as a graph file written before bounds were kept opens).
#[test]
fn a_recall_that_reads_only_the_candidates_that_can_reach_the_answer_answers_as_one_that_reads_all()
{
    let clock = Arc::new(FixedClock::new(T0));
    let d = tempfile::tempdir().unwrap();
    let mut seed = 0x50_u64;
    let (mut s, _) = Store::open(d.path(), crate::common::opts(&clock, true)).unwrap();
    let batch = (0..600)
        .map(|i| input(&format!("fact {i}"), &text(&mut seed, 6)))
        .collect();
    for r in s.memorize_many(batch).unwrap() {
        r.unwrap();
    }
    let queries: Vec<RecallQuery> = (0..60)
        .map(|i| RecallQuery {
            text: text(&mut seed, 1 + i % 3),
            limit: [1, 5, 10][i % 3],
            mode: if i % 5 == 0 {
                RankMode::Vector
            } else {
                RankMode::Auto
            },
            matched_only: i % 2 == 0,
            weak: i % 4,
            ..Default::default()
        })
        .collect();
    s.settle_vectors().unwrap();
    s.close().unwrap();
    let (s, _) = Store::open(d.path(), crate::common::opts(&clock, true)).unwrap();
    let bounded = answers(&s, &queries);
    s.close().unwrap();
    let table = d.path().join(brains::vector::BOUNDS_FILE);
    assert!(table.exists(), "the graph's bounds were not kept");
    std::fs::remove_file(&table).unwrap();
    let (s, _) = Store::open(d.path(), crate::common::opts(&clock, true)).unwrap();
    let read_all = answers(&s, &queries);
    same_answers(&bounded, &read_all);
    assert!(bounded.iter().filter(|a| a.len() > 1).count() > 30);
}

/// Issue 24: a rebuild reads redb a chunk at a time while every core inserts the chunks
/// read before, through a bounded queue. Every live vector reaches the graph, each once,
/// and none waits fresh: more chunks than the queue holds, keys with gaps (superseded
/// versions let go of theirs).
#[test]
fn a_rebuilt_index_holds_exactly_the_live_vectors() {
    let clock = Arc::new(FixedClock::new(T0));
    let d = tempfile::tempdir().unwrap();
    let opts = || crate::common::opts(&clock, true);
    let (mut s, _) = Store::open(d.path(), opts()).unwrap();
    let mut seed = 0x0B11_u64;
    let batch = (0..6000)
        .map(|i| input(&format!("rebuilt {i}"), &text(&mut seed, 6)))
        .collect();
    for r in s.memorize_many(batch).unwrap() {
        r.unwrap();
    }
    let again = (0..6000)
        .step_by(7)
        .map(|i| input(&format!("rebuilt {i}"), &text(&mut seed, 7)))
        .collect();
    for r in s.memorize_many(again).unwrap() {
        r.unwrap();
    }
    s.close().unwrap();
    std::fs::remove_file(d.path().join("vectors.usearch")).unwrap();
    let (s, report) = Store::open(d.path(), opts()).unwrap();
    assert!(report.index_rebuilt, "{report:?}");
    assert_eq!(s.vectors_unsettled(), 0, "built straight into the graph");
    assert_eq!(s.check_index().unwrap(), None);
    let hits = vector_hits(&s, "rebuilt 5999", 5);
    assert_eq!(hits.len(), 5, "the rebuilt graph answers");
}

/// Issue 50: a restart right after a bulk import answered its first seek after 0.6–1.1 s,
/// because open read every vector the graph's file lacked from redb (and scanned them into
/// the fresh set) before it returned. Open now hands them to a background reader and
/// returns: none is read on the open's path, every claim is found by its words meanwhile,
/// and once they are read each is found by its vector again.
#[test]
fn a_store_reopened_mid_catch_up_reads_its_backlog_after_it_opens() {
    let clock = Arc::new(FixedClock::new(T0));
    let d = tempfile::tempdir().unwrap();
    let opts = || crate::common::opts(&clock, true);
    let (mut s, _) = Store::open(d.path(), opts()).unwrap();
    let mut seed = 0x0050_u64;
    let texts: Vec<String> = (0..6000).map(|_| text(&mut seed, 6)).collect();
    // One bulk write: its batches commit back to back, each holding the settler off.
    let batch = texts
        .iter()
        .enumerate()
        .map(|(i, t)| input(&format!("backlog {i}"), t))
        .collect();
    for r in s.memorize_many(batch).unwrap() {
        r.unwrap();
    }
    // A bulk write holds the settler: closed now, most vectors are not in the file.
    let backlog = s.vectors_unsettled();
    assert!(backlog > 4096, "{backlog} unsettled");
    s.close().unwrap();

    let (mut s, report) = Store::open(d.path(), opts()).unwrap();
    assert_eq!(
        report.vectors_deferred as usize, backlog,
        "the vectors the file lacks are read after open returns: {report:?}"
    );
    // Found by its words whether its vector is read yet or not; an answer says how
    // many vectors were still unread (law 4: a claim matched by its words only is told).
    for i in (0..6000).step_by(600) {
        let before = s.vectors_loading();
        let r = s
            .recall(&RecallQuery {
                text: format!("backlog {i}"),
                limit: 3,
                ..Default::default()
            })
            .unwrap();
        let after = s.vectors_loading();
        assert!(
            before >= r.vectors_loading && r.vectors_loading >= after,
            "{before} ≥ {} ≥ {after}",
            r.vectors_loading
        );
        assert_eq!(r.hits[0].claim.slug, format!("backlog-{i}"), "by its words");
    }
    s.settle_vectors().unwrap();
    assert_eq!((s.vectors_loading(), s.vectors_unsettled()), (0, 0));
    assert_eq!(
        s.check_index().unwrap(),
        None,
        "in step once read and settled"
    );
    for i in (0..6000).step_by(250) {
        let hits = vector_hits(&s, &format!("backlog {i}\n{}", texts[i]), 1);
        assert_eq!(hits[0].claim.slug, format!("backlog-{i}"), "by its vector");
    }
}
