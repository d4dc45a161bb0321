//! Cells' own tests: a row found by its own vector, what a seek reads, rows written
//! meanwhile or later, rows leaving, and the top k found on clustered data.

use std::sync::Arc;

use super::super::fresh::Fresh;
use super::{split_runs, Cells, Centroids, CELLS_MIN, PROBE_MIN};

/// SplitMix64, uniform in [-1, 1).
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    fn vector(&mut self, dims: usize) -> Vec<f32> {
        (0..dims).map(|_| self.unit()).collect()
    }
}

const DIMS: usize = 32;

/// `n` rows around `centers` random centres (noise `spread`), keys `1..=n`, every third
/// lean; and the rows.
fn clustered(n: usize, centers: usize, spread: f32, seed: u64) -> (Fresh, Vec<Vec<f32>>) {
    let mut rng = Rng(seed);
    let centre: Vec<Vec<f32>> = (0..centers).map(|_| rng.vector(DIMS)).collect();
    let mut f = Fresh::new(DIMS);
    let rows: Vec<Vec<f32>> = (0..n)
        .map(|i| {
            let c = &centre[i % centers];
            c.iter().map(|x| x + spread * rng.unit()).collect()
        })
        .collect();
    for (i, v) in rows.iter().enumerate() {
        f.push(i as u64 + 1, v, i % 3 == 0);
    }
    (f, rows)
}

/// Every row's cell, step by step, as the settler assigns them.
fn assign_all(f: &Fresh, centroids: &Centroids) -> Vec<(u64, u16)> {
    let mut assigned = vec![];
    let mut start = 0;
    while let Some(step) = f.assign_cells(centroids, start) {
        start += super::ASSIGN_STEP;
        assigned.extend(step);
    }
    assigned
}

/// What the settler does, at once: see `Shared::make_cells`.
fn part(f: &mut Fresh) {
    let (sample, cells) = f.begin_cells();
    let centroids = Arc::new(Centroids::of(&sample, cells).expect("centroids"));
    let assigned = assign_all(f, &centroids);
    f.install_cells(centroids, &assigned);
}

fn read_by(cells: &Cells, q: &[f32], len: usize) -> usize {
    cells
        .probe(q)
        .map_or(len, |runs| runs.iter().map(ExactSizeIterator::len).sum())
}

fn sizes_add_up(f: &Fresh) {
    let c = f.cells();
    assert_eq!(
        c.sizes.iter().map(|s| *s as usize).sum::<usize>(),
        c.assigned
    );
    assert_eq!(c.of_row.len(), f.len());
    assert_eq!(
        c.of_row.iter().filter(|x| **x != super::NONE).count(),
        c.assigned
    );
}

#[test]
fn a_large_set_mostly_in_no_cell_is_due_and_not_after() {
    let (mut f, _) = clustered(CELLS_MIN - 1, 50, 0.3, 1);
    assert!(!f.cells_due(), "below the size");
    f.push(u64::MAX, &[1.0; DIMS], false);
    assert!(f.cells_due());
    part(&mut f);
    assert!(!f.cells_due());
    assert_eq!(f.in_cells(), f.len());
    sizes_add_up(&f);
}

/// While cells are being made no second making begins (the settler and the end of a
/// bulk write may both ask); one given up leaves the set due again.
#[test]
fn one_making_at_a_time_and_one_given_up_may_begin_again() {
    let (mut f, _) = clustered(CELLS_MIN + 10, 50, 0.3, 8);
    assert!(f.cells_due());
    let _ = f.begin_cells();
    assert!(!f.cells_due(), "a making is under way");
    f.abandon_cells();
    assert!(f.cells_due(), "given up: due again");
    part(&mut f);
    assert!(!f.cells_due());
    assert_eq!(f.in_cells(), f.len());
}

/// A query equal to a row's vector has the row's eight bits, so its first cell is the
/// row's: the row is found, with its exact score, whatever the cells leave unread.
#[test]
fn a_row_is_found_by_its_own_vector_in_cells() {
    let (mut f, rows) = clustered(12_000, 40, 0.6, 2);
    part(&mut f);
    let len = f.len();
    for i in (0..rows.len()).step_by(97) {
        let q = &rows[i];
        assert!(read_by(f.cells(), q, len) < len, "the probe reads a part");
        let best = f.scan(q, 1, &|_| true);
        assert_eq!(best[0].0, i as u64 + 1, "row {i}");
    }
}

/// A seek reads about a tenth of the rows in cells (at least PROBE_MIN), no fewer.
#[test]
fn a_seek_reads_its_share_and_little_more() {
    let (mut f, _) = clustered(60_000, 300, 0.4, 3);
    part(&mut f);
    let largest = *f.cells().sizes.iter().max().unwrap() as usize;
    let budget = (60_000 / super::PROBE_SHARE).max(PROBE_MIN);
    let mut rng = Rng(33);
    for _ in 0..20 {
        let q = rng.vector(DIMS);
        let read = read_by(f.cells(), &q, f.len());
        assert!(
            read >= budget && read < budget + largest,
            "{read} rows read, budget {budget}"
        );
    }
}

/// On clustered rows, the exact top 10 is (nearly all) found from the cells read.
#[test]
fn the_cells_read_hold_the_exact_top_k_on_clustered_rows() {
    let (mut f, rows) = clustered(40_000, 200, 0.5, 4);
    part(&mut f);
    let mut rng = Rng(44);
    let (mut found, mut all) = (0, 0);
    for i in 0..40 {
        let q: Vec<f32> = rows[i * 997 % rows.len()]
            .iter()
            .map(|x| x + 0.3 * rng.unit())
            .collect();
        let mut exact: Vec<(u64, f32)> = rows
            .iter()
            .enumerate()
            .map(|(j, v)| (j as u64 + 1, super::super::arith::cosine(v, &q)))
            .collect();
        exact.sort_by(|a, b| b.1.total_cmp(&a.1));
        let got: Vec<u64> = f.scan(&q, 10, &|_| true).iter().map(|p| p.0).collect();
        found += exact[..10].iter().filter(|e| got.contains(&e.0)).count();
        all += 10;
    }
    let recall = found as f64 / all as f64;
    assert!(recall >= 0.9, "recall@10 {recall}");
}

/// Rows written after the cells were made, or written again while they were being
/// made, are in no cell and always read; rows that leave leave their cell.
#[test]
fn rows_in_no_cell_are_always_read_and_rows_leave_their_cells() {
    let (mut f, rows) = clustered(12_000, 40, 0.6, 5);
    let (sample, cells) = f.begin_cells();
    let centroids = Arc::new(Centroids::of(&sample, cells).unwrap());
    let assigned = assign_all(&f, &centroids);
    // Written again while the cells were being made: a different vector now.
    let odd: Vec<f32> = (0..DIMS).map(|d| if d == 5 { -9.0 } else { 0.1 }).collect();
    f.push(7, &odd, false);
    f.install_cells(centroids, &assigned);
    assert_eq!(f.in_cells(), f.len() - 1);
    // Written after.
    let late: Vec<f32> = (0..DIMS).map(|d| if d == 9 { 9.0 } else { -0.1 }).collect();
    f.push(50_000, &late, true);
    assert_eq!(f.in_cells(), f.len() - 2);
    for (q, key) in [(&odd, 7), (&late, 50_000)] {
        let best = f.scan(q, 1, &|_| true);
        assert_eq!(best[0].0, key);
    }
    // Rows leave as the settler moves them.
    let batch: Vec<u64> = f.take_batch(5_000).iter().map(|(k, _, _)| *k).collect();
    f.settled(&batch);
    for k in (2_000..3_000).step_by(3) {
        f.remove(k);
    }
    sizes_add_up(&f);
    let gone: std::collections::HashSet<u64> = batch.into_iter().collect();
    for i in (0..rows.len()).step_by(89) {
        let key = i as u64 + 1;
        if gone.contains(&key) || (2_000..3_000).step_by(3).any(|k| k == key) || key == 7 {
            continue;
        }
        assert_eq!(f.scan(&rows[i], 1, &|_| true)[0].0, key, "row {i}");
    }
}

/// A row that is not finite is in no cell: read by every seek, as the whole scan reads it.
#[test]
fn a_row_that_is_not_finite_is_in_no_cell() {
    let (mut f, _) = clustered(9_000, 30, 0.5, 6);
    let mut nan = vec![0.5; DIMS];
    nan[3] = f32::NAN;
    f.push(99_999, &nan, false);
    part(&mut f);
    assert_eq!(f.in_cells(), f.len() - 1);
    sizes_add_up(&f);
}

/// Once in cells the rows lie in order of their cells (a seek's cells are runs of
/// memory), each still its own vector under its own key, and the settler's batches
/// leave from the end, keeping that order.
#[test]
fn rows_lie_in_order_of_their_cells_and_keep_their_vectors() {
    let (mut f, rows) = clustered(10_000, 40, 0.5, 7);
    part(&mut f);
    let in_order = |f: &Fresh| f.cells().of_row.windows(2).all(|w| w[0] <= w[1]);
    assert!(in_order(&f));
    for (i, v) in rows.iter().enumerate() {
        let key = i as u64 + 1;
        let got = f.get(key).unwrap();
        if i % 3 == 0 {
            let step = v.iter().fold(0f32, |m, x| m.max(x.abs())) / 127.0;
            assert!(
                got.iter().zip(v).all(|(a, b)| (a - b).abs() <= step),
                "lean {key}"
            );
        } else {
            assert_eq!(got.as_ref(), v.as_slice(), "{key}");
        }
    }
    let batch: Vec<u64> = f.take_batch(3_000).iter().map(|(k, _, _)| *k).collect();
    f.settled(&batch);
    assert!(in_order(&f));
    sizes_add_up(&f);
}

/// The two parts of a seek's runs hold every row once, about half each, in the order
/// given; a long run is cut to be dealt.
#[test]
fn runs_are_dealt_into_two_parts_of_about_half_the_rows() {
    let rows = |r: &[std::ops::Range<usize>]| r.iter().map(ExactSizeIterator::len).sum::<usize>();
    let [a, b] = split_runs(std::slice::from_ref(&(0..100_000)));
    assert_eq!(rows(&a) + rows(&b), 100_000);
    assert!(rows(&a).abs_diff(rows(&b)) <= 1024);
    let runs = vec![40..45, 10..12, 20..30, 0..3, 50..51];
    let [a, b] = split_runs(&runs);
    assert_eq!(rows(&a) + rows(&b), 21);
    assert!(rows(&a).abs_diff(rows(&b)) <= 10, "{a:?} {b:?}");
    let mut both: Vec<_> = a.iter().chain(&b).cloned().collect();
    both.sort_by_key(|r| r.start);
    let mut want = runs.clone();
    want.sort_by_key(|r| r.start);
    assert_eq!(both, want);
    let position = |r: &std::ops::Range<usize>| runs.iter().position(|x| x == r).unwrap();
    for part in [&a, &b] {
        assert!(part.windows(2).all(|w| position(&w[0]) < position(&w[1])));
    }
}
