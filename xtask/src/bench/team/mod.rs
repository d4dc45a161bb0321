//! `cargo xtask bench --team [--owners 3] [--samples 200] [--catchup 10000] [--offline 1000]
//! [--writes 500] [--poll-ms MS]`: the team tier on a real local PostgreSQL (a throwaway
//! server, `pg.rs`), every owner a release `medulla serve --no-model` over its own home,
//! joined through `medulla team join` as the team admin's `add-member` printed it. Each
//! phase has its own database, so no phase reads another's log:
//!
//! 1. local writes: memorize p50 on an owner with a team joined against one without
//!    (project tier into a routed brain; team tier against the personal medulla's
//!    doctrine birth, the same path), interleaved;
//! 2. propagation with `--owners` owners, then with 10: one writer, every other owner
//!    polling `seek --tier team` on its own kept-alive connection, in a tight loop, then
//!    pausing 5 ms between seeks; the time from the writer's memorize answer to each
//!    reader's first seek that returns the row. The slow samples are taken apart (when
//!    the writer's push began and committed, from the log's `at` and the commit
//!    timestamp), and, with the first owner count, writes are made while another
//!    database's transaction holds a transaction id (a reader pulls only up to the
//!    server's oldest transaction in flight);
//! 3. catch-up: `--catchup` team acts written through one owner, then fresh owners join,
//!    each timed from its start until `GET /api/team` says connected with lag 0 and a
//!    seek returns the newest act;
//! 4. offline: the server stopped, `--offline` team writes queue on one owner, the
//!    server started again; the time until the log holds every one, exactly once.
//!
//! Missed targets are reported, not failed: the bench exits non-zero on errors only.

use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::bench::http::{require_binary, start_logged, Owner};
use crate::bench::runner::pct;
use crate::pg::Postgres;

const USAGE: &str = "usage: cargo xtask bench --team [--owners 3] [--samples 200] [--catchup 10000] [--offline 1000] [--writes 500] [--poll-ms MS]";

/// A reader that has not seen a row after this long fails the bench.
const GIVE_UP: Duration = Duration::from_secs(60);

/// `medulla ARGS` with `MEDULLA_HOME=home`: its stdout and stderr, or an error.
fn medulla(home: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new(require_binary()?)
        .args(args)
        .env("MEDULLA_HOME", home)
        .env_remove("MEDULLA_URL")
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .output()
        .context("run medulla")?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        bail!("medulla {}: {text}", args.first().copied().unwrap_or(""));
    }
    Ok(text)
}

/// A team database: created, its schema from `medulla team init`.
struct Team<'a> {
    pg: &'a Postgres,
    db: String,
    admin: tempfile::TempDir,
    poll_ms: Option<usize>,
}

impl<'a> Team<'a> {
    fn new(pg: &'a Postgres, db: &str, poll_ms: Option<usize>) -> Result<Team<'a>> {
        pg.create_db(db);
        let admin = tempfile::tempdir()?;
        medulla(admin.path(), &["team", "init", &pg.admin_url(db)])?;
        Ok(Team {
            pg,
            db: db.to_string(),
            admin,
            poll_ms,
        })
    }

    /// `team add-member NAME`: the join URL it prints (with the password).
    fn add_member(&self, name: &str) -> Result<String> {
        let out = medulla(
            self.admin.path(),
            &[
                "team",
                "add-member",
                name,
                "--url",
                &self.pg.admin_url(&self.db),
            ],
        )?;
        Ok(out
            .split('\'')
            .find(|w| w.starts_with("postgres://"))
            .with_context(|| format!("no join URL in {out}"))?
            .to_string())
    }

    /// A member's owner over a fresh home, joined through the command line; started
    /// by `start`.
    fn member(&self, name: &str) -> Result<Home> {
        let url = self.add_member(name)?;
        let home = Home::new()?;
        medulla(home.home.path(), &["team", "join", &url])?;
        if let Some(ms) = self.poll_ms {
            // The [team] table is the file's last.
            let cfg = home.home.path().join("config.toml");
            let text = std::fs::read_to_string(&cfg)?;
            std::fs::write(&cfg, format!("{text}poll_ms = {ms}\n"))?;
        }
        Ok(home)
    }

    fn count(&self, sql: &str) -> Result<Vec<u64>> {
        let out = self.pg.psql(&self.db, sql);
        out.trim()
            .split('|')
            .map(|f| f.parse().with_context(|| format!("a count in {out:?}")))
            .collect()
    }
}

/// An owner's home, one project directory, and where its log goes (at `warn`).
struct Home {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
    logs: tempfile::TempDir,
}

impl Home {
    fn new() -> Result<Home> {
        Ok(Home {
            home: tempfile::tempdir()?,
            project: tempfile::tempdir()?,
            logs: tempfile::tempdir()?,
        })
    }

    fn launch(&self) -> Result<Owner> {
        start_logged(
            self.home.path(),
            false,
            Some(&self.logs.path().join("owner.log")),
        )
    }

    fn start(self) -> Result<Running> {
        let o = self.launch()?;
        Running::new(o, self)
    }
}

/// A started owner (dropped first: the process stops before its home goes).
struct Running {
    o: Owner,
    root: String,
    home: Home,
}

impl Running {
    fn new(o: Owner, home: Home) -> Result<Running> {
        let root = std::fs::canonicalize(home.project.path())?
            .to_string_lossy()
            .into_owned();
        o.call("bootstrap", json!({ "root": root }), &root)?;
        Ok(Running { o, root, home })
    }

    fn call(&self, tool: &str, args: Value) -> Result<Value> {
        self.o.call(tool, args, &self.root)
    }

    fn memorize(&self, label: &str, text: &str, tier: &str) -> Result<Value> {
        self.call(
            "memorize",
            json!({ "label": label, "text": text, "tier": tier }),
        )
    }

    /// Whether a team-tier seek scoped to `label` returns it.
    fn sees(&self, label: &str) -> Result<bool> {
        let v = self.call(
            "seek",
            json!({ "query": "", "tier": "team", "scope": label, "limit": 5 }),
        )?;
        Ok(v["results"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["tier"] == "team" && r["label"] == label)))
    }

    fn team(&self) -> Result<Value> {
        let r = self.o.http.get(format!("{}/api/team", self.o.url)).send()?;
        let ok = r.status().is_success();
        let v: Value = r.json()?;
        if !ok {
            bail!("GET /api/team: {v}");
        }
        Ok(v)
    }

    /// Wait until the team link says connected.
    fn connected(&self) -> Result<()> {
        let until = Instant::now() + GIVE_UP;
        loop {
            if self.team()?["status"] == "connected" {
                return Ok(());
            }
            if Instant::now() > until {
                bail!(
                    "the owner never reached the team database: {}",
                    self.team()?
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "missed"
    }
}

struct Opts {
    owners: usize,
    samples: usize,
    catchup: usize,
    offline: usize,
    writes: usize,
    poll_ms: Option<usize>,
}

pub fn run(args: &[String]) -> Result<()> {
    let known = [
        "--owners",
        "--samples",
        "--catchup",
        "--offline",
        "--writes",
        "--poll-ms",
    ];
    for a in args.iter().filter(|a| a.starts_with("--")) {
        if !known.contains(&a.as_str()) {
            bail!("unknown argument {a:?}: {USAGE}");
        }
    }
    let opts = Opts {
        owners: crate::flag_num(args, "--owners", 3)?.max(2),
        samples: crate::flag_num(args, "--samples", 200)?.max(1),
        catchup: crate::flag_num(args, "--catchup", 10_000)?.max(1),
        offline: crate::flag_num(args, "--offline", 1000)?.max(1),
        writes: crate::flag_num(args, "--writes", 500)?.max(1),
        poll_ms: match args.iter().any(|a| a == "--poll-ms") {
            true => Some(crate::flag_num(args, "--poll-ms", 1000)?),
            false => None,
        },
    };
    require_binary()?;
    let mut pg = Postgres::start();
    // Commit times, for the slow samples' profile (a restart applies it).
    pg.psql("postgres", "ALTER SYSTEM SET track_commit_timestamp = on");
    pg.stop();
    pg.start_again();
    println!(
        "team bench: PostgreSQL on 127.0.0.1:{}, owners `serve --no-model`, poll {}",
        pg.port(),
        opts.poll_ms
            .map_or("the default (1000 ms)".to_string(), |ms| format!("{ms} ms"))
    );
    let local = local_writes(&pg, &opts)?;
    let mut props = Vec::new();
    let mut sizes = vec![opts.owners];
    if opts.owners != 10 {
        sizes.push(10);
    }
    for (k, n) in sizes.into_iter().enumerate() {
        props.extend(propagation(&pg, &opts, n, k == 0)?);
    }
    let catchup = catch_up(&pg, &opts)?;
    let offline = offline(&mut pg, &opts)?;

    println!("\n## summary\n");
    println!("| figure | measured | target | |");
    println!("|---|---|---|---|");
    for p in &props {
        println!(
            "| propagation, {} owners (1 writer, {} readers polling {}, {} samples): p50 / p99 / max | {:.1} / {:.1} / {:.1} ms | p50 ≤ 100 ms, p99 ≤ 1000 ms | {} |",
            p.owners,
            p.owners - 1,
            p.pause.map_or("in a tight loop".to_string(), |d| format!("every {} ms", d.as_millis())),
            opts.samples,
            p.p50,
            p.p99,
            p.max,
            verdict(p.p50 <= 100.0 && p.p99 <= 1000.0)
        );
    }
    println!(
        "| catch-up of {} acts on join, from the owner's start (median of {} / max) | {:.2} / {:.2} s | ≤ 3 s | {} |",
        opts.catchup,
        catchup.len(),
        median_secs(&catchup),
        max_secs(&catchup),
        verdict(max_secs(&catchup) <= 3.0)
    );
    for (what, without, with) in &local {
        let r = with / without;
        println!(
            "| memorize p50, {what}: with a team / without | {with:.3} / {without:.3} ms = {r:.2}× | ≤ 1.2× | {} |",
            verdict(r <= 1.2)
        );
    }
    println!(
        "| {} writes queued offline: in the log after the restart / exactly once | {:.2} s / {} | ≤ 5 s, once | {} |",
        opts.offline,
        offline.delivered.as_secs_f64(),
        if offline.once { "yes" } else { "NO" },
        verdict(offline.delivered <= Duration::from_secs(5) && offline.once)
    );
    Ok(())
}

fn median_secs(v: &[Duration]) -> f64 {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2].as_secs_f64()
}

fn max_secs(v: &[Duration]) -> f64 {
    v.iter().max().copied().unwrap_or_default().as_secs_f64()
}

/// Memorize p50 with a team joined against without: (what, without ms, with ms).
fn local_writes(pg: &Postgres, opts: &Opts) -> Result<Vec<(String, f64, f64)>> {
    let team = Team::new(pg, "local", opts.poll_ms)?;
    let solo = Home::new()?.start()?;
    let joined = team.member("local_a")?.start()?;
    joined.connected()?;
    let n = opts.writes;
    eprintln!("local writes: {n} of each kind on each owner, interleaved…");
    for i in 0..20 {
        solo.memorize(&format!("warm {i}"), "warming up the owner", "project")?;
        joined.memorize(&format!("warm {i}"), "warming up the owner", "project")?;
    }
    let mut t = [(); 4].map(|_| Vec::with_capacity(n));
    let timed = |v: &mut Vec<Duration>, f: &dyn Fn() -> Result<Value>| -> Result<Value> {
        let s = Instant::now();
        let a = f()?;
        v.push(s.elapsed());
        Ok(a)
    };
    for i in 0..n {
        let label = format!("local-{i:05}");
        let text = format!(
            "local write {i} about build cache flakes and deploy timeouts {}",
            i % 97
        );
        timed(&mut t[0], &|| solo.memorize(&label, &text, "project"))?;
        let a = timed(&mut t[1], &|| joined.memorize(&label, &text, "project"))?;
        if a["team"]["status"] != "connected" {
            bail!("the joined owner's answer has no connected team note: {a}");
        }
        timed(&mut t[2], &|| solo.memorize(&label, &text, "medulla"))?;
        timed(&mut t[3], &|| joined.memorize(&label, &text, "team"))?;
    }
    let [mut sp, mut jp, mut sm, mut jt] = t;
    let rows = vec![
        (
            "project tier into a routed brain".to_string(),
            pct(&mut sp, 0.5),
            pct(&mut jp, 0.5),
        ),
        (
            "doctrine birth, team tier with a team / medulla tier without".to_string(),
            pct(&mut sm, 0.5),
            pct(&mut jt, 0.5),
        ),
    ];
    println!("\n## local writes ({n} each, interleaved, one kept-alive client per owner)\n");
    println!(
        "| memorize | without a team p50 / p95 (ms) | with a team p50 / p95 (ms) | p50 ratio |"
    );
    println!("|---|---|---|---|");
    println!(
        "| project tier | {:.3} / {:.3} | {:.3} / {:.3} | {:.2}× |",
        pct(&mut sp, 0.5),
        pct(&mut sp, 0.95),
        pct(&mut jp, 0.5),
        pct(&mut jp, 0.95),
        pct(&mut jp, 0.5) / pct(&mut sp, 0.5)
    );
    println!(
        "| doctrine birth: medulla tier without, team tier with | {:.3} / {:.3} | {:.3} / {:.3} | {:.2}× |",
        pct(&mut sm, 0.5),
        pct(&mut sm, 0.95),
        pct(&mut jt, 0.5),
        pct(&mut jt, 0.95),
        pct(&mut jt, 0.5) / pct(&mut sm, 0.5)
    );
    // The same doctrine births spaced out: the sync pass a team write asks for is over
    // before the next write, so what is left is the write's own extra work.
    let m = n.min(200);
    let (mut ss, mut js) = (Vec::with_capacity(m), Vec::with_capacity(m));
    for i in 0..m {
        let label = format!("spaced-{i:05}");
        let text = format!("spaced write {i} about build cache flakes {}", i % 97);
        let t = Instant::now();
        solo.memorize(&label, &text, "medulla")?;
        ss.push(t.elapsed());
        std::thread::sleep(Duration::from_millis(20));
        let t = Instant::now();
        joined.memorize(&label, &text, "team")?;
        js.push(t.elapsed());
        std::thread::sleep(Duration::from_millis(20));
    }
    println!(
        "| doctrine birth, each write 20 ms after the last answer ({m} each) | {:.3} / {:.3} | {:.3} / {:.3} | {:.2}× |",
        pct(&mut ss, 0.5),
        pct(&mut ss, 0.95),
        pct(&mut js, 0.5),
        pct(&mut js, 0.95),
        pct(&mut js, 0.5) / pct(&mut ss, 0.5)
    );
    Ok(rows)
}

/// One propagation run's figures.
struct Propagation {
    owners: usize,
    /// `None`: tight loop; else the readers' pause between seeks.
    pause: Option<Duration>,
    p50: f64,
    p99: f64,
    max: f64,
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
fn propagation(
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
    println!("| owners | readers poll | samples | p50 (ms) | p90 (ms) | p99 (ms) | max (ms) | seeks per sample per reader | writer's team memorize p50 (ms) |");
    println!("|---|---|---|---|---|---|---|---|---|");
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
    println!(
        "| sample | push began / committed, after the answer (ms) | readers' latencies (ms) |"
    );
    println!("|---|---|---|");
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

/// `--catchup` acts written through one owner, then fresh owners joining: each one's
/// time from its start to caught up.
fn catch_up(pg: &Postgres, opts: &Opts) -> Result<Vec<Duration>> {
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
    println!("| joiner | owner up (s) | connected, lag 0 (s) | newest act found by seek (s) |");
    println!("|---|---|---|---|");
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

struct Offline {
    delivered: Duration,
    once: bool,
}

/// The server stopped, writes queued on A, the server back: delivery, exactly once.
fn offline(pg: &mut Postgres, opts: &Opts) -> Result<Offline> {
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
    println!("| memorize p50 / p95 offline (ms) | queued, last answer | status before the restart | first in the log after the restart (s) | all in the log (s) | last one seen by the other owner (s) | rows / distinct labels 3 s later | queued after |");
    println!("|---|---|---|---|---|---|---|---|");
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
