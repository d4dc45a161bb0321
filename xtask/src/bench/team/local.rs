//! The team bench's first phase: memorize p50 on an owner with a team joined against
//! one without, interleaved.

use std::time::Duration;

use anyhow::{bail, Result};

use crate::bench::runner::{header, pct, sample};
use crate::pg::Postgres;

use super::cluster::{Home, Team};
use super::Opts;

/// Memorize p50 with a team joined against without: (what, without ms, with ms).
pub(super) fn local_writes(pg: &Postgres, opts: &Opts) -> Result<Vec<(String, f64, f64)>> {
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
    for i in 0..n {
        let label = format!("local-{i:05}");
        let text = format!(
            "local write {i} about build cache flakes and deploy timeouts {}",
            i % 97
        );
        sample(&mut t[0], || solo.memorize(&label, &text, "project"))?;
        let a = sample(&mut t[1], || joined.memorize(&label, &text, "project"))?;
        if a["team"]["status"] != "connected" {
            bail!("the joined owner's answer has no connected team note: {a}");
        }
        sample(&mut t[2], || solo.memorize(&label, &text, "medulla"))?;
        sample(&mut t[3], || joined.memorize(&label, &text, "team"))?;
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
    header("| memorize | without a team p50 / p95 (ms) | with a team p50 / p95 (ms) | p50 ratio |");
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
        sample(&mut ss, || solo.memorize(&label, &text, "medulla"))?;
        std::thread::sleep(Duration::from_millis(20));
        sample(&mut js, || joined.memorize(&label, &text, "team"))?;
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
