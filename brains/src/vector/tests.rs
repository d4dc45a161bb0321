//! The vector index's own tests: the writer settling past the fresh bound, lean rows, holds.

use super::*;

/// A pseudo-random vector a key always gets.
fn vector(k: u64, dims: usize) -> Vec<f32> {
    let mut x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..dims)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        })
        .collect()
}

/// An index of `precision` keeping 64 fresh rows in full, its settler held, and 300
/// vectors for it.
fn held(precision: Precision) -> (tempfile::TempDir, VectorIndex, Vec<(u64, Vec<f32>)>) {
    let dims = 16;
    let d = tempfile::tempdir().unwrap();
    let graph = Graph::empty(d.path(), dims, precision).unwrap();
    let ix = VectorIndex::bounded(graph, dims, precision, 64);
    ix.hold_settling(std::time::Duration::from_secs(600));
    let items = (1..=300).map(|k| (k, vector(k, dims))).collect();
    (d, ix, items)
}

/// Issue 24: past the fresh bound the writer inserted the excess into the graph
/// itself, so a million-claim import ran at the graph's pace (~8 000 claims/s). An
/// eight-bit index now keeps the excess lean and the writer returns at once; every
/// vector is found meanwhile, and the graph takes them all once it settles.
#[test]
fn past_the_fresh_bound_an_eight_bit_index_keeps_the_writer_off_the_graph() {
    let (_d, mut ix, items) = held(Precision::I8);
    for chunk in items.chunks(100) {
        ix.add_many(chunk).unwrap();
    }
    assert_eq!(read(&ix.shared.graph).size(), 0, "the writer settled");
    assert_eq!(ix.fresh(), 300);
    assert_eq!(read(&ix.shared.fresh).full(), 64);
    for (k, v) in &items {
        assert!(ix.contains(*k));
        let best = ix.search_all(v, 1).unwrap();
        assert_eq!(best[0].0, *k, "vector {k} is found while it waits");
        assert!((ix.similarity(*k, v).unwrap() - 1.0).abs() < 1e-3);
    }
    ix.settle_all().unwrap();
    assert_eq!(
        (read(&ix.shared.graph).size(), ix.fresh(), ix.size()),
        (300, 0, 300)
    );
    for (k, v) in &items {
        assert_eq!(ix.search_all(v, 1).unwrap()[0].0, *k, "vector {k} settled");
    }
}

/// usearch's inserts on several threads strand a few vectors no search reaches,
/// though it holds them (its issue 735); a rebuild on every core links them again,
/// so each vector is found by itself. Without the relinking this test failed in
/// most runs on two cores.
#[test]
fn a_rebuild_on_every_core_leaves_no_vector_out_of_reach() {
    const ROUNDS: u64 = 10;
    const N: u64 = 1000;
    let dims = 16;
    for round in 0..ROUNDS {
        let d = tempfile::tempdir().unwrap();
        let graph = Graph::empty(d.path(), dims, Precision::I8).unwrap();
        let mut ix = VectorIndex::bounded(graph, dims, Precision::I8, 64);
        let keys = round * N + 1..=round * N + N;
        let items: Vec<(u64, Vec<f32>)> = keys.map(|k| (k, vector(k, dims))).collect();
        ix.build_from(items.len(), items.chunks(64).map(|c| Ok(c.to_vec())))
            .unwrap();
        for (k, v) in &items {
            assert_eq!(
                ix.search_all(v, 1).unwrap()[0].0,
                *k,
                "vector {k} is reached"
            );
        }
    }
}

/// A finer-precision index ranks by the cosines it holds: its fresh set stays in full
/// precision, and the writer settles what passes the bound.
#[test]
fn past_the_fresh_bound_a_full_precision_index_settles_the_excess() {
    let (_d, mut ix, items) = held(Precision::F32);
    ix.add_many(&items).unwrap();
    let f = read(&ix.shared.fresh);
    assert!(f.len() <= 64 && f.full() == f.len(), "{} fresh", f.len());
    drop(f);
    assert_eq!(ix.size(), 300);
    for (k, v) in &items {
        let best = ix.search_all(v, 1).unwrap();
        assert_eq!(best[0].0, *k);
        assert!((best[0].1 - 1.0).abs() < 1e-5);
    }
}

/// Issue 50: the vectors an open hands to the background reader are held at once
/// (counted, contained) while it is kept waiting; a search meanwhile answers from what
/// is read, one removed before it is read never is, and once read the answers are the
/// exact scan's.
#[test]
fn vectors_read_after_open_are_held_at_once_and_searched_once_read() {
    let dims = 16;
    let d = tempfile::tempdir().unwrap();
    let graph = Graph::empty(d.path(), dims, Precision::I8).unwrap();
    let ix = VectorIndex::of(graph, dims, Precision::I8);
    ix.hold_settling(std::time::Duration::from_secs(600));
    let items: Vec<(u64, Vec<f32>)> = (1..=5000).map(|k| (k, vector(k, dims))).collect();
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let wait = Mutex::new(wait);
    let rows = items.clone();
    let mut ix = ix;
    ix.load_later(
        items.iter().map(|(k, _)| *k).collect(),
        Box::new(move |keys| {
            lock(&wait).recv().ok();
            Ok(rows
                .iter()
                .filter(|(k, _)| keys.contains(k))
                .cloned()
                .collect())
        }),
    );
    assert_eq!((ix.loading(), ix.fresh(), ix.size()), (5000, 5000, 5000));
    #[cfg(target_os = "linux")]
    below_callers("vector-load");
    assert!(ix.contains(17));
    assert!(
        ix.search_all(&items[16].1, 3).unwrap().is_empty(),
        "none read yet"
    );
    ix.remove(17).unwrap();
    assert!(!ix.contains(17));
    for _ in 0..5 {
        go.send(()).unwrap();
    }
    ix.wait_loaded();
    assert_eq!((ix.loading(), ix.size()), (0, 4999));
    assert!(!ix.contains(17), "let go before it was read: never added");
    for (k, v) in items.iter().step_by(97).filter(|(k, _)| *k != 17) {
        let best = ix.search_all(v, 1).unwrap();
        assert_eq!(best[0].0, *k, "vector {k} once read");
    }
    ix.settle_all().unwrap();
    assert_eq!((ix.fresh(), ix.size()), (0, 4999));
}

/// Issue 50: right after a bulk import the settler's inserts took half of every seek's
/// cores. The settler (and the inserts it spawns) now runs below callers' threads.
#[cfg(target_os = "linux")]
#[test]
fn the_settler_runs_below_callers() {
    let (_d, mut ix, items) = held(Precision::I8);
    ix.add_many(&items[..100]).unwrap();
    // The settler is started and waits out the hold.
    below_callers("vector-settler");
    ix.settle_all().unwrap();
}

/// Wait until this process's thread `name` runs below callers (it lowers itself first
/// thing, so a look just as it starts may still see it at 0); fail after 20 s.
#[cfg(target_os = "linux")]
fn below_callers(name: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let nice = crate::background::thread_nice(name);
        if nice.is_some_and(|n| n >= crate::background::BACKGROUND_NICE) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{name} runs at {nice:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Issue 50: right after a bulk import, seeks scanned the whole backlog until the hold
/// on the settler ended and it had made the cells (the first second or more). The end
/// of a bulk write now parts the backlog before it returns, the settler still held:
/// nothing is settled, every row is in a cell, and each is still found by its own vector.
#[test]
fn a_bulk_writes_end_parts_the_backlog_while_the_settler_is_held() {
    let dims = 16;
    let d = tempfile::tempdir().unwrap();
    let graph = Graph::empty(d.path(), dims, Precision::I8).unwrap();
    let mut ix = VectorIndex::of(graph, dims, Precision::I8);
    ix.hold_settling(std::time::Duration::from_secs(600));
    let n = cells::CELLS_MIN as u64 + 1000;
    let items: Vec<(u64, Vec<f32>)> = (1..=n).map(|k| (k, vector(k, dims))).collect();
    for chunk in items.chunks(4096) {
        ix.add_many(chunk).unwrap();
    }
    assert_eq!(
        ix.fresh_in_cells(),
        0,
        "not parted before the bulk write ends"
    );
    assert!(ix.part_fresh());
    assert_eq!(ix.fresh_in_cells(), n as usize);
    assert_eq!(
        read(&ix.shared.graph).size(),
        0,
        "the hold still keeps the settler back"
    );
    for (k, v) in items.iter().step_by(331) {
        assert_eq!(
            ix.search_all(v, 1).unwrap()[0].0,
            *k,
            "vector {k} in its cell"
        );
    }
    // A second call finds nothing due: no second making.
    assert!(!ix.part_fresh());
}

/// A search beside the very first insert into an empty graph read a null vector and
/// crashed the owner (usearch counts a first node before it stores its vector; seen
/// as a segfault under load in the owner's tests). The first vector now goes in alone.
#[test]
fn a_search_beside_the_first_insert_into_an_empty_graph_is_safe() {
    let dims = 16;
    for round in 0..200u64 {
        let d = tempfile::tempdir().unwrap();
        let graph = Graph::empty(d.path(), dims, Precision::I8).unwrap();
        let mut ix = VectorIndex::of(graph, dims, Precision::I8);
        ix.hold_settling(std::time::Duration::from_secs(600));
        let items: Vec<(u64, Vec<f32>)> = (1..=4).map(|k| (k, vector(k + round, dims))).collect();
        ix.add_many(&items).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Acquire) {
                    ix.search_all(&items[0].1, 2).unwrap();
                }
            });
            ix.settle_all().unwrap();
            stop.store(true, Ordering::Release);
        });
        assert_eq!(ix.search_all(&items[3].1, 1).unwrap()[0].0, 4);
    }
}

/// Whether every key's bounds hold the exact cosine of its vector with `q`; the widest
/// bound seen.
fn bounds_hold(ix: &VectorIndex, items: &[(u64, Vec<f32>)], q: &[f32]) -> f32 {
    let keys: Vec<u64> = items.iter().map(|(k, _)| *k).collect();
    let mut widest = 0f32;
    for ((k, v), b) in items.iter().zip(ix.cosine_bounds(&keys, q)) {
        let (lo, hi) = b.unwrap_or_else(|| panic!("no bound for key {k}"));
        let exact = arith::cosine(v, q);
        assert!(
            lo <= exact && exact <= hi,
            "key {k}: the exact cosine {exact} is outside [{lo}, {hi}]"
        );
        widest = widest.max(hi - lo);
    }
    widest
}

/// Issue 50: a settled recall at 100 000 claims read every candidate's stored vector
/// from redb (a page each, about a third of its time), though the graph holds each in
/// eight bits. The graph now makes its own codes (scaled by the largest component and
/// rounded; usearch's cast truncates a unit vector's components to a few codes) and
/// keeps each row's rounding, so a cosine is known from memory within a bound that
/// holds: for full fresh rows, lean ones, and both once settled, including a lean row
/// settled from its eight bits (its bound still speaks of the vector itself).
#[test]
fn the_index_bounds_every_cosine_from_memory_and_the_bounds_hold() {
    let dims = 64;
    let d = tempfile::tempdir().unwrap();
    let graph = Graph::empty(d.path(), dims, Precision::I8).unwrap();
    let mut ix = VectorIndex::bounded(graph, dims, Precision::I8, 100);
    ix.hold_settling(std::time::Duration::from_secs(600));
    let items: Vec<(u64, Vec<f32>)> = (1..=400).map(|k| (k, vector(k, dims))).collect();
    ix.add_many(&items).unwrap();
    assert_eq!(read(&ix.shared.fresh).full(), 100, "300 rows are lean");
    let queries: Vec<Vec<f32>> = (1000..1020).map(|k| vector(k, dims)).collect();
    for q in &queries {
        bounds_hold(&ix, &items, q);
    }
    ix.settle_all().unwrap();
    assert_eq!((read(&ix.shared.graph).size(), ix.fresh()), (400, 0));
    let mut widest = 0f32;
    for q in &queries {
        widest = widest.max(bounds_hold(&ix, &items, q));
    }
    // Narrow enough to let most candidates go: a lean row settled carries two roundings.
    assert!(widest < 0.08, "bounds as wide as {widest}");
    // The graph's own cosines come from its codes: close to the exact ones.
    for (k, v) in items.iter().take(50) {
        let q = &queries[0];
        let (graph, exact) = (ix.similarity(*k, q).unwrap(), arith::cosine(v, q));
        assert!(
            (graph - exact).abs() < 0.02,
            "key {k}: {graph} against {exact}"
        );
    }
}

/// The bounds are kept beside the graph's file: a reopened graph knows them; a file
/// they were not written for (replaced, or written before bounds were kept) leaves them
/// unknown, and nothing is bounded wrongly.
#[test]
fn the_bounds_are_kept_with_the_graphs_file_and_only_with_it() {
    let dims = 32;
    let d = tempfile::tempdir().unwrap();
    let items: Vec<(u64, Vec<f32>)> = (1..=200).map(|k| (k, vector(k, dims))).collect();
    let keys: Vec<u64> = items.iter().map(|(k, _)| *k).collect();
    let q = vector(5000, dims);
    {
        let mut ix = VectorIndex::empty(d.path(), dims, Precision::I8).unwrap();
        ix.add_many(&items).unwrap();
        ix.settle_all().unwrap();
        ix.remove(7).unwrap();
        ix.save().unwrap();
    }
    let ix = VectorIndex::load(d.path(), dims, Precision::I8).unwrap();
    let live: Vec<(u64, Vec<f32>)> = items.iter().filter(|(k, _)| *k != 7).cloned().collect();
    bounds_hold(&ix, &live, &q);
    assert_eq!(ix.cosine_bounds(&[7], &q), vec![None], "a removed key");
    drop(ix);
    // A bit flipped in a record: the table is not used.
    let table = d.path().join(BOUNDS_FILE);
    let good = std::fs::read(&table).unwrap();
    let mut bad = good.clone();
    let last = bad.len() - 6;
    bad[last] ^= 0x40;
    std::fs::write(&table, &bad).unwrap();
    let ix = VectorIndex::load(d.path(), dims, Precision::I8).unwrap();
    assert!(
        ix.cosine_bounds(&keys, &q).iter().all(Option::is_none),
        "a damaged table was used"
    );
    drop(ix);
    std::fs::write(&table, &good).unwrap();
    let ix = VectorIndex::load(d.path(), dims, Precision::I8).unwrap();
    bounds_hold(&ix, &live, &q);
    drop(ix);
    // The same table beside a graph file it was not written for.
    let file = d.path().join(INDEX_FILE);
    let bytes = std::fs::read(&file).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&file, &bytes).unwrap();
    let ix = VectorIndex::load(d.path(), dims, Precision::I8).unwrap();
    assert!(
        ix.cosine_bounds(&keys, &q).iter().all(Option::is_none),
        "bounds read beside another file"
    );
}

/// Issue 67: a graph written before its rows carried bounds (usearch's own codes, no
/// `vectors.bounds`) gets them in the background, without a rebuild: each bound holds
/// the exact cosine, the searches answer the same rows before and after, and the table
/// is kept beside the file for the next open.
#[test]
fn an_upgraded_graph_gets_its_bounds_in_the_background_and_answers_the_same() {
    use super::arith::{dot, norm};
    let dims = 16;
    let d = tempfile::tempdir().unwrap();
    let items: Vec<(u64, Vec<f32>)> = (1..=500).map(|k| (k, vector(k, dims))).collect();
    {
        let mut ix = VectorIndex::empty(d.path(), dims, Precision::I8).unwrap();
        ix.add_many(&items).unwrap();
        ix.settle_all().unwrap();
        ix.save().unwrap();
    }
    std::fs::remove_file(d.path().join(BOUNDS_FILE)).unwrap();
    let keys: Vec<u64> = items.iter().map(|i| i.0).collect();
    let q = vector(9_999, dims);
    let ix = VectorIndex::load(d.path(), dims, Precision::I8).unwrap();
    assert!(
        ix.cosine_bounds(&keys, &q).iter().all(Option::is_none),
        "no bounds before"
    );
    let before = ix.search_all(&q, 20).unwrap();
    let stored: std::collections::HashMap<u64, Vec<f32>> = items.iter().cloned().collect();
    ix.backfill_bounds(
        keys.clone(),
        Box::new(move |ks| {
            Ok(ks
                .iter()
                .filter_map(|k| stored.get(k).map(|v| (*k, v.clone())))
                .collect())
        }),
    );
    ix.wait_backfilled();
    let check = |ix: &VectorIndex| {
        for ((k, v), b) in items.iter().zip(ix.cosine_bounds(&keys, &q)) {
            let (lo, hi) = b.unwrap_or_else(|| panic!("no bound for {k}"));
            let exact = dot(v, &q) / (norm(v) * norm(&q));
            assert!(lo <= exact && exact <= hi, "{k}: {lo} ≤ {exact} ≤ {hi}");
        }
    };
    check(&ix);
    assert_eq!(ix.search_all(&q, 20).unwrap(), before, "the same rows");
    drop(ix);
    check(&VectorIndex::load(d.path(), dims, Precision::I8).unwrap());
}
