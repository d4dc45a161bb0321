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
