//! The team bench's propagation phase: one writer, every other owner polling `seek
//! --tier team`; the time from the write's answer to each reader's first sight of it,
//! and the slow samples taken apart.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::bench::runner::{header, pct};
use crate::pg::Postgres;

use super::cluster::{Running, Team, GIVE_UP};
use super::Opts;

/// One propagation run's figures.
pub(super) struct Propagation {
    pub(super) owners: usize,
    /// `None`: tight loop; else the readers' pause between seeks.
    pub(super) pause: Option<Duration>,
    pub(super) p50: f64,
    pub(super) p99: f64,
    pub(super) max: f64,
}

/// What one series of samples measured.
struct Series {
    /// Every reader's latency of every sample.
    lat: Vec<Duration>,
    /// Seeks the readers made in all.
    polls: usize,
    /// The writer's team memorize round trips.
    writes: Vec<Duration>,
    /// Per sample: its label, the writer's answer on the wall clock (µs), each reader's
    /// latency.
    per_sample: Vec<(String, u128, Vec<Duration>)>,
}

/// `samples` team writes on `writer`; after each answer, every reader polls its owner's
/// `seek --tier team` (each on its own thread and kept-alive connection, pausing
/// `pause` between seeks) until the row comes back.
fn series(
    writer: &Running,
    readers: &[Running],
    tag: &str,
    samples: usize,
    pause: Option<Duration>,
) -> Result<Series> {
    let mut out = Series {
        lat: Vec::with_capacity(samples * readers.len()),
        polls: 0,
        writes: Vec::with_capacity(samples),
        per_sample: Vec::with_capacity(samples),
    };
    std::thread::scope(|s| -> Result<()> {
        let mut go = Vec::new();
        let (back_tx, back_rx) = mpsc::channel::<Result<(Duration, usize)>>();
        for r in readers {
            let (tx, rx) = mpsc::channel::<(String, Instant)>();
            go.push(tx);
            let back = back_tx.clone();
            s.spawn(move || {
                for (label, t0) in rx {
                    let mut n = 0;
                    let r = loop {
                        n += 1;
                        match r.sees(&label) {
                            Ok(true) => break Ok((t0.elapsed(), n)),
                            Ok(false) if t0.elapsed() > GIVE_UP => {
                                break Err(anyhow::anyhow!("{label} never reached a reader"))
                            }
                            Ok(false) => {
                                if let Some(p) = pause {
                                    std::thread::sleep(p);
                                }
                            }
                            Err(e) => break Err(e),
                        }
                    };
                    if back.send(r).is_err() {
                        return;
                    }
                }
            });
        }
        drop(back_tx);
        for i in 0..samples {
            let label = format!("{tag}-{i:05}");
            let s0 = Instant::now();
            writer.memorize(
                &label,
                &format!("propagation probe {i}: the deploy key rotates every monday"),
                "team",
            )?;
            let t0 = Instant::now();
            let wall = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)?
                .as_micros();
            out.writes.push(t0 - s0);
            for tx in &go {
                tx.send((label.clone(), t0))?;
            }
            let mut mine = Vec::with_capacity(readers.len());
            for _ in readers {
                let (d, n) = back_rx.recv()??;
                out.lat.push(d);
                mine.push(d);
                out.polls += n;
            }
            out.per_sample.push((label, wall, mine));
        }
        Ok(())
    })?;
    Ok(out)
}

/// One writer, `owners - 1` readers: a series with the readers in a tight loop, then
/// one with them pausing 5 ms between seeks (less CPU taken from the owners on a small
/// machine); with `horizon`, also writes while another database's transaction holds a
/// transaction id.
pub(super) fn propagation(
    pg: &Postgres,
    opts: &Opts,
    owners: usize,
    horizon: bool,
) -> Result<Vec<Propagation>> {
    let team = Team::new(pg, &format!("prop{owners}"), opts.poll_ms)?;
    let mut all = Vec::with_capacity(owners);
    for k in 0..owners {
        all.push(team.member(&format!("p{owners}_m{k}"))?.start()?);
    }
    for o in &all {
        o.connected()?;
    }
    let (writer, readers) = all.split_first().context("owners")?;
    eprintln!("propagation: {owners} owners, {} samples…", opts.samples);
    // Warm every path once (the first team seek, the first act applied).
    series(writer, readers, &format!("p{owners}w"), 3, None)?;
    println!(
        "\n## propagation, {owners} owners (1 writer, {} readers polling seek --tier team)\n",
        owners - 1
    );
    header("| owners | readers poll | samples | p50 (ms) | p90 (ms) | p99 (ms) | max (ms) | seeks per sample per reader | writer's team memorize p50 (ms) |");
    let mut rows = Vec::new();
    let mut slow = Vec::new();
    for (tag, pause) in [
        (format!("p{owners}t"), None),
        (format!("p{owners}p"), Some(Duration::from_millis(5))),
    ] {
        let mut s = series(writer, readers, &tag, opts.samples, pause)?;
        let row = Propagation {
            owners,
            pause,
            p50: pct(&mut s.lat, 0.5),
            p99: pct(&mut s.lat, 0.99),
            max: pct(&mut s.lat, 1.0),
        };
        println!(
            "| {owners} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} |",
            pause.map_or("tight loop".to_string(), |p| format!(
                "every {} ms",
                p.as_millis()
            )),
            s.lat.len(),
            row.p50,
            pct(&mut s.lat, 0.9),
            row.p99,
            row.max,
            s.polls as f64 / s.lat.len() as f64,
            pct(&mut s.writes, 0.5)
        );
        rows.push(row);
        slow.extend(s.per_sample);
    }
    slow_samples(&team, &slow, &all)?;
    if horizon {
        held_horizon(&team, writer, readers)?;
    }
    Ok(rows)
}

/// A reader pulls the log only up to the oldest transaction in flight on the whole
/// server (`pg_snapshot_xmin(pg_current_snapshot())`): writes made while another
/// database's transaction holds a transaction id for 2 s. How long after that
/// transaction committed (its commit timestamp) each reader saw the write.
fn held_horizon(team: &Team, writer: &Running, readers: &[Running]) -> Result<()> {
    let (mut after, mut lat, mut held_for) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..3 {
        let (s, out) = std::thread::scope(|sc| -> Result<(Series, String)> {
            let held = sc.spawn(|| {
                team.pg.psql(
                    "postgres",
                    "BEGIN; \
                     SELECT 'held|' || pg_current_xact_id()::text || '|' \
                       || (extract(epoch from now()) * 1000000)::bigint; \
                     SELECT pg_sleep(2); COMMIT;",
                )
            });
            // Write only once the transaction holds its id.
            let until = Instant::now() + GIVE_UP;
            while team
                .pg
                .psql(
                    "postgres",
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = 'postgres' \
                   AND backend_xid IS NOT NULL AND query LIKE '%pg_sleep%'",
                )
                .trim()
                != "1"
            {
                if Instant::now() > until {
                    bail!("the transaction that holds an id never began");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            // Readers pace their seeks: in a tight loop they take the CPU the held
            // transaction's backend needs to end on time on a small machine.
            let s = series(
                writer,
                readers,
                &format!("horizon{i}"),
                1,
                Some(Duration::from_millis(5)),
            );
            let out = held.join().expect("the held transaction's thread");
            Ok((s?, out))
        })?;
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix("held|"))
            .with_context(|| format!("no transaction id in {out:?}"))?;
        let (xid, began) = line.split_once('|').context("xid|began")?;
        let began: i128 = began.trim().parse()?;
        let committed: i128 = team
            .pg
            .psql(
                "postgres",
                &format!(
                    "SELECT (extract(epoch from pg_xact_commit_timestamp('{xid}'::xid)) * 1000000)::bigint"
                ),
            )
            .trim()
            .parse()
            .context("the held transaction's commit timestamp")?;
        held_for.push(Duration::from_micros((committed - began).max(0) as u64));
        let (_, wall, ds) = &s.per_sample[0];
        if (*wall as i128) < began || (*wall as i128) > committed {
            bail!("the write did not land inside the held transaction");
        }
        for d in ds {
            let seen = *wall as i128 + d.as_micros() as i128;
            after.push(Duration::from_micros((seen - committed).max(0) as u64));
            lat.push(*d);
        }
    }
    println!(
        "\nwhile another database's transaction on the same server holds a transaction id (`BEGIN; pg_current_xact_id(); pg_sleep(2); COMMIT`, held {:.2}–{:.2} s by its commit timestamp; each write made once it held its id; 3 writes × {} readers polling every 5 ms): readers saw the write p50 {:.0} ms / max {:.0} ms after the write's answer, p50 {:.0} ms / max {:.0} ms after that transaction committed",
        held_for.iter().min().copied().unwrap_or_default().as_secs_f64(),
        held_for.iter().max().copied().unwrap_or_default().as_secs_f64(),
        readers.len(),
        pct(&mut lat, 0.5),
        pct(&mut lat, 1.0),
        pct(&mut after, 0.5),
        pct(&mut after, 1.0)
    );
    Ok(())
}

/// Where the time of the slow samples went: when the writer's push transaction began
/// (`at`) and committed, against its memorize answer, and what the owners logged.
fn slow_samples(
    team: &Team,
    per_sample: &[(String, u128, Vec<Duration>)],
    owners: &[Running],
) -> Result<()> {
    let slow: Vec<_> = per_sample
        .iter()
        .filter(|(_, _, d)| d.iter().any(|d| *d > Duration::from_millis(250)))
        .collect();
    if slow.is_empty() {
        return Ok(());
    }
    println!(
        "\nsamples with a reader past 250 ms ({} of {}):\n",
        slow.len(),
        per_sample.len()
    );
    header("| sample | push began / committed, after the answer (ms) | readers' latencies (ms) |");
    for (label, wall, d) in slow.iter().take(20) {
        let at = team.count(&format!(
            "SELECT (extract(epoch from at) * 1000000)::bigint, \
               (extract(epoch from pg_xact_commit_timestamp(xid::text::xid)) * 1000000)::bigint \
             FROM medulla.acts WHERE body->'claim'->>'label' = '{label}'"
        ))?;
        let after = |t: u64| (t as i128 - *wall as i128) as f64 / 1000.0;
        let ms: Vec<String> = d
            .iter()
            .map(|d| format!("{:.0}", d.as_secs_f64() * 1000.0))
            .collect();
        println!(
            "| {label} | {:.1} / {:.1} | {} |",
            after(at[0]),
            after(at[1]),
            ms.join(", ")
        );
    }
    for (k, o) in owners.iter().enumerate() {
        let log = std::fs::read_to_string(o.home.logs.path().join("owner.log")).unwrap_or_default();
        let warns: Vec<&str> = log.lines().filter(|l| l.contains("WARN")).collect();
        if !warns.is_empty() {
            println!(
                "owner {k} logged {} warning(s), the first: {}",
                warns.len(),
                warns[0]
            );
        }
    }
    Ok(())
}
