//! What every bench repeats: timing a call into a sample set, alternating two cases
//! round by round, the percentiles and medians of the samples, the disk's fsync floor,
//! a `--sizes` list, and the header of a markdown table.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// The `p`-th quantile of `samples` in milliseconds (nearest rank); NaN when empty.
pub(crate) fn pct(samples: &mut [Duration], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i].as_secs_f64() * 1000.0
}

/// The upper median of `v` (the element at `len / 2` once sorted); `None` when empty.
pub(crate) fn median<T: Copy + PartialOrd>(v: &mut [T]) -> Option<T> {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied()
}

/// Run `f` once, timed: its duration is pushed onto `samples`, its answer returned.
pub(crate) fn sample<T>(samples: &mut Vec<Duration>, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let t = Instant::now();
    let r = f()?;
    samples.push(t.elapsed());
    Ok(r)
}

/// `f(i)` for `i` in `0..n`, each call timed.
pub(crate) fn timed(n: usize, mut f: impl FnMut(usize) -> Result<()>) -> Result<Vec<Duration>> {
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        sample(&mut v, || f(i))?;
    }
    Ok(v)
}

/// Two cases alternated for `rounds` rounds, A then B each round, each call timed: the
/// samples of A and of B. Alternating spreads the machine's drift over both.
pub(crate) fn alternate(
    rounds: usize,
    mut a: impl FnMut(usize) -> Result<()>,
    mut b: impl FnMut(usize) -> Result<()>,
) -> Result<(Vec<Duration>, Vec<Duration>)> {
    let (mut sa, mut sb) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for i in 0..rounds {
        sample(&mut sa, || a(i))?;
        sample(&mut sb, || b(i))?;
    }
    Ok((sa, sb))
}

/// The durable commit's floor on this disk: `n` times write 4 KiB and fsync (as redb's
/// commit does at least once for every memorize), each timed.
pub(crate) fn fsync_probe(n: usize) -> Result<Vec<Duration>> {
    use std::io::Write;
    let dir = tempfile::tempdir()?;
    let mut f = std::fs::File::create(dir.path().join("fsync-probe"))?;
    timed(n, |_| {
        f.write_all(&[7u8; 4096])?;
        f.sync_data()?;
        Ok(())
    })
}

/// A comma-separated list of numbers (`--sizes 1000,10000`); `what` says the form when it
/// is missing.
pub(crate) fn list(arg: Option<&String>, what: &str) -> Result<Vec<usize>> {
    Ok(arg
        .context(what.to_string())?
        .split(',')
        .map(|s| s.trim().parse())
        .collect::<Result<_, _>>()?)
}

/// Print a markdown table's header row and its `|---|` separator, one cell a column.
pub(crate) fn header(row: &str) {
    let columns = row.matches('|').count().saturating_sub(1);
    println!("{row}");
    println!("{}|", "|---".repeat(columns));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pct_is_nearest_rank_in_ms() {
        let mut v: Vec<Duration> = (1..=100).rev().map(Duration::from_millis).collect();
        assert_eq!(pct(&mut v, 0.5), 51.0);
        assert_eq!(pct(&mut v, 0.99), 99.0);
        assert!(pct(&mut [], 0.5).is_nan());
    }

    #[test]
    fn median_is_the_upper_middle() {
        assert_eq!(median(&mut [3, 1, 2, 4]), Some(3));
        assert_eq!(median(&mut [2.0, 1.0, 3.0]), Some(2.0));
        assert_eq!(median::<usize>(&mut []), None);
    }

    #[test]
    fn alternate_runs_a_before_b_each_round() {
        let order = std::cell::RefCell::new(vec![]);
        let (a, b) = alternate(
            2,
            |i| {
                order.borrow_mut().push(('a', i));
                Ok(())
            },
            |i| {
                order.borrow_mut().push(('b', i));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!((a.len(), b.len()), (2, 2));
        assert_eq!(
            order.into_inner(),
            vec![('a', 0), ('b', 0), ('a', 1), ('b', 1)]
        );
    }
}
