//! The team bench's delivery after a gap: fresh owners catching up on join, and writes
//! queued while the server is down delivered exactly once after it is back.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::bench::runner::{header, pct};
use crate::pg::Postgres;

use super::cluster::{Running, Team, GIVE_UP};
use super::Opts;

/// `--catchup` acts written through one owner, then fresh owners joining: each one's
/// time from its start to caught up.
pub(super) fn catch_up(pg: &Postgres, opts: &Opts) -> Result<Vec<Duration>> {
    let team = Team::new(pg, "catchup", opts.poll_ms)?;
    let a = team.member("c_writer")?.start()?;
    a.connected()?;
    let n = opts.catchup;
    eprintln!("catch-up: writing {n} team acts through one owner…");
    let t = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| -> Result<()> {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            return Ok(());
                        }
                        a.memorize(
                            &format!("catchup-{i:06}"),
                            &format!(
                                "catch-up act {i} about build cache flakes and deploy timeouts {}",
                                i % 97
                            ),
                            "team",
                        )?;
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().expect("a writer thread"))
    })?;
    let wrote = t.elapsed();
    let until = Instant::now() + GIVE_UP;
    let sql = "SELECT count(*) FROM medulla.acts WHERE body->'claim'->>'label' LIKE 'catchup-%'";
    while team.count(sql)?[0] < n as u64 {
        if Instant::now() > until {
            bail!("the writer never sent all {n} acts");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let in_log = t.elapsed();
    drop(a);
    let last = format!("catchup-{:06}", n - 1);
    let mut runs = Vec::new();
    println!("\n## catch-up on join ({n} team acts in the log)\n");
    println!(
        "written through one owner by 4 concurrent clients in {:.1} s ({:.0} acts/s), all in the log after {:.1} s\n",
        wrote.as_secs_f64(),
        n as f64 / wrote.as_secs_f64(),
        in_log.as_secs_f64()
    );
    header("| joiner | owner up (s) | connected, lag 0 (s) | newest act found by seek (s) |");
    for k in 0..3 {
        let home = team.member(&format!("c_join{k}"))?;
        let t0 = Instant::now();
        let o = home.launch()?;
        let up = t0.elapsed();
        let d = Running::new(o, home)?;
        let until = t0 + GIVE_UP;
        let mut caught = None;
        let found = loop {
            if caught.is_none() {
                let v = d.team()?;
                if v["status"] == "connected" && v["lag"] == 0 {
                    caught = Some(t0.elapsed());
                }
            }
            if caught.is_some() && d.sees(&last)? {
                break t0.elapsed();
            }
            if Instant::now() > until {
                bail!("a joiner never caught up: {}", d.team()?);
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let caught = caught.unwrap_or(found);
        println!(
            "| {} | {:.2} | {:.2} | {:.2} |",
            k + 1,
            up.as_secs_f64(),
            caught.as_secs_f64(),
            found.as_secs_f64()
        );
        runs.push(found);
    }
    Ok(runs)
}

pub(super) struct Offline {
    pub(super) delivered: Duration,
    pub(super) once: bool,
}

/// The server stopped, writes queued on A, the server back: delivery, exactly once.
pub(super) fn offline(pg: &mut Postgres, opts: &Opts) -> Result<Offline> {
    let team = Team::new(pg, "offline", opts.poll_ms)?;
    let a = team.member("o_writer")?.start()?;
    let b = team.member("o_reader")?.start()?;
    a.connected()?;
    b.connected()?;
    let n = opts.offline;
    let sql = "SELECT count(*), count(DISTINCT body->'claim'->>'label') FROM medulla.acts WHERE body->'claim'->>'label' LIKE 'offline-%'";
    // The homes outlive the admin's borrow of the server: stop it.
    drop(team);
    pg.stop();
    eprintln!("offline: the server is down; {n} team writes on one owner…");
    let mut w = Vec::with_capacity(n);
    let mut queued = 0;
    for i in 0..n {
        let s = Instant::now();
        let v = a.memorize(
            &format!("offline-{i:05}"),
            &format!("written while the database was down {i}"),
            "team",
        )?;
        w.push(s.elapsed());
        queued = v["team"]["queued"].as_u64().unwrap_or(0);
    }
    let status = a.team()?;
    pg.start_again();
    let t0 = Instant::now();
    let count = |pg: &Postgres| -> Result<Vec<u64>> {
        let out = pg.psql("offline", sql);
        out.trim()
            .split('|')
            .map(|f| f.parse().with_context(|| format!("a count in {out:?}")))
            .collect()
    };
    let until = t0 + GIVE_UP;
    let mut first = None;
    let delivered = loop {
        let c = count(pg)?;
        if c[0] > 0 && first.is_none() {
            first = Some(t0.elapsed());
        }
        if c[0] >= n as u64 {
            break t0.elapsed();
        }
        if Instant::now() > until {
            bail!("only {} of {n} offline acts reached the log", c[0]);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let last = format!("offline-{:05}", n - 1);
    while !b.sees(&last)? {
        if Instant::now() > until {
            bail!("the reader never saw the last offline act");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let on_b = t0.elapsed();
    // A second look after every owner had time for more passes: nothing sent twice.
    std::thread::sleep(Duration::from_secs(3));
    let c = count(pg)?;
    let once = c[0] == n as u64 && c[1] == n as u64;
    let after = a.team()?;
    println!("\n## offline: {n} team writes while the server was down\n");
    header("| memorize p50 / p95 offline (ms) | queued, last answer | status before the restart | first in the log after the restart (s) | all in the log (s) | last one seen by the other owner (s) | rows / distinct labels 3 s later | queued after |");
    println!(
        "| {:.3} / {:.3} | {queued} | {} | {:.2} | {:.2} | {:.2} | {} / {} | {} |",
        pct(&mut w, 0.5),
        pct(&mut w, 0.95),
        status["status"].as_str().unwrap_or("?"),
        first.unwrap_or(delivered).as_secs_f64(),
        delivered.as_secs_f64(),
        on_b.as_secs_f64(),
        c[0],
        c[1],
        after["queued"]
    );
    Ok(Offline { delivered, once })
}
