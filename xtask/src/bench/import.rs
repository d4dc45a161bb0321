//! `cargo xtask bench --import [--claims 100000] [--no-model] [--cold] [--bin PATH]`: bulk import
//! end to end, as a user runs it. `--claims` legacy `.light.md` files (rendered by
//! `brains::legacy::render`: a tenth of the slugs with an older version under
//! `.history/`, a hundredth outdated in every file, a fifth citing evidence files inside
//! the brain's root) go through the real `medulla import DIR --brain ROOT` command line
//! into a freshly bootstrapped brain of a release owner (the model loaded unless
//! `--no-model`). The figure is files per second over the command's wall time.
//!
//! Where the time goes, cheaply: a dry run first (reading, parsing, the hygiene floor and
//! the duplicate look-ups, nothing written), then the import, then the same import again
//! (every file a duplicate: the look-ups against a full store). Between the last two,
//! a few seeks are timed: a large import leaves the graph to catch up after it returns,
//! and what it lacks is scanned meanwhile. Each run also reports the owner's CPU time
//! (user and system, every thread; Linux): on a shared machine the wall time swings with
//! the window, and what a run costs in CPU often moves less (docs/BENCHMARKS.md).
//!
//! `--cold` drops the page cache (Linux, as root) before the dry run and before the
//! import, so both read their files from the disk, as an import of a legacy store that
//! nobody has read lately does; without it the files are mostly still cached from being
//! written.
//!
//! `--bin` runs another build of `medulla` (e.g. a copy of an older one, to compare);
//! by default the release binary under `CARGO_TARGET_DIR`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use brains::{Claim, ClaimState, Strength, Trust};
use serde_json::{json, Value};

use super::corpus::TOPICS;
use super::http::{bin_arg, start_with, Owner};
use super::runner::{header, sample};

const USAGE: &str =
    "usage: cargo xtask bench --import [--claims 100000] [--no-model] [--cold] [--bin PATH]";

/// Evidence files the claims cite, inside the brain's root.
pub(super) const EVIDENCE_FILES: usize = 50;

/// The files a benchmark imports.
pub(super) struct Legacy {
    pub(super) files: usize,
    /// Slugs that end live (the count gate's baseline).
    pub(super) live: usize,
}

pub(super) fn word(i: usize) -> &'static str {
    TOPICS[i % TOPICS.len()]
}

/// The opening of synthetic note `i`, which the benches that write another tool's memory
/// finish each in their own way.
pub(super) fn stall(i: usize) -> String {
    format!(
        "When the {} {} runs under load the {} {} stalls after {} retries; observed {} times \
         on runner {}",
        word(i),
        word(i / 7),
        word(i / 3),
        word(i / 11),
        i % 9 + 2,
        i % 31 + 1,
        i % 97,
    )
}

/// One version of claim `i`, `v` its version (0 the newest).
fn claim(i: usize, v: usize, root: &str, state: ClaimState) -> Claim {
    let created = 1_780_000_000_000i64 + (i as i64) * 1000 - (v as i64) * 86_400_000;
    let label = format!("{} {} note {i}", word(i), word(i / 24));
    let text = format!(
        "{} (version {v}). The fix is to pin the {} before the {} step and keep the {} warm; \
         see the {} notes for the {} case.",
        stall(i),
        word(i / 5),
        word(i / 13),
        word(i / 17),
        word(i / 19),
        word(i / 23),
    );
    let evidence = if i.is_multiple_of(5) {
        vec![
            format!("src/mod{}.rs:1-8", i % EVIDENCE_FILES),
            format!("commit {:07x}", i * 7919 % 0xfff_ffff),
        ]
    } else {
        Vec::new()
    };
    Claim {
        state,
        strength: if i.is_multiple_of(4) {
            Strength::Verified
        } else {
            Strength::Observed
        },
        evidence,
        ..legacy_claim(label, text, created, root)
    }
}

/// An authored, observed claim of the legacy store at `root`, with nothing else set: what
/// the benches that write legacy files start from.
pub(super) fn legacy_claim(label: String, text: String, created: i64, root: &str) -> Claim {
    Claim {
        slug: brains::slugify(&label),
        label,
        text,
        state: ClaimState::Authored,
        created,
        source_agent: "claude:maker".into(),
        origin_brain: Some(root.to_string()),
        strength: Strength::Observed,
        supersedes: None,
        trust: Trust::default(),
        evidence: Vec::new(),
        content_hash: String::new(),
        version: 1,
        promoted_to: None,
        origin_claim: None,
        promoted_by: None,
        promotion_reason: None,
        origin_created: None,
        origin_agent: None,
        outdated_reason: None,
        outdated_at: None,
        outdated_by: None,
        anchors: Vec::new(),
        member: None,
        conflict: None,
        races: Vec::new(),
        written_from: None,
        session: None,
    }
}

/// `n` legacy files under `dir`: each tenth slug with one older version in `.history/`,
/// each hundredth outdated in its only file.
pub(super) fn write_legacy(dir: &Path, root: &str, n: usize) -> Result<Legacy> {
    let hist = dir.join(".history");
    std::fs::create_dir_all(&hist)?;
    let (mut files, mut live, mut i) = (0, 0, 0);
    while files < n {
        let c = if i % 100 == 99 {
            claim(i, 0, root, ClaimState::Outdated)
        } else {
            live += 1;
            claim(i, 0, root, ClaimState::Authored)
        };
        std::fs::write(
            dir.join(format!("{}.light.md", c.slug)),
            brains::legacy::render(&c),
        )?;
        files += 1;
        if i % 10 == 3 && files < n {
            let old = claim(i, 1, root, ClaimState::Outdated);
            std::fs::write(
                hist.join(brains::legacy::history_file_name(&old.slug, old.created)),
                brains::legacy::render(&old),
            )?;
            files += 1;
        }
        i += 1;
    }
    Ok(Legacy { files, live })
}

/// Write every dirty page out and drop the page cache, so the next run reads its files
/// from the disk, as an import of a legacy store nobody has read lately does (`--cold`).
/// Linux, as root.
fn drop_page_cache() -> Result<()> {
    let synced = Command::new("sync").status().context("cannot run sync")?;
    if !synced.success() {
        bail!("sync failed before dropping the page cache");
    }
    std::fs::write("/proc/sys/vm/drop_caches", "1").context(
        "--cold drops the page cache through /proc/sys/vm/drop_caches: run the bench as root \
         on Linux, or without --cold",
    )
}

/// Wait until the owner `pid` is idle (under 0.05 s of CPU in 2 s, checked twice in a
/// row): the background work a bulk write leaves (the graph catching up, the claim
/// index's checkpoint, the saves) is done. A backlog under the fresh bound is settled on
/// one thread and logs nothing, so the CPU is what tells.
pub(crate) fn wait_idle(pid: u32) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(3600);
    let mut quiet = 0;
    while quiet < 2 {
        let before = cpu_secs(pid).context("the owner's CPU time (Linux)")?;
        std::thread::sleep(Duration::from_secs(2));
        let spent = cpu_secs(pid).context("the owner's CPU time (Linux)")? - before;
        quiet = if spent < 0.05 { quiet + 1 } else { 0 };
        if Instant::now() > deadline {
            bail!("the owner was still busy after an hour");
        }
    }
    Ok(())
}

/// The CPU time the process `pid` has used so far, user and system, every thread's, in
/// seconds (Linux's `/proc/PID/stat`; `None` elsewhere).
#[cfg(not(target_os = "linux"))]
pub(super) fn cpu_secs(_pid: u32) -> Option<f64> {
    None
}

/// The CPU time the process `pid` has used so far, user and system, every thread's, in
/// seconds (`/proc/PID/stat`).
#[cfg(target_os = "linux")]
pub(super) fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command's closing parenthesis: state is the first, utime
    // the twelfth and stime the thirteenth.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / rustix::param::clock_ticks_per_second() as f64)
}

/// `medulla import DIR --brain ROOT [--dry-run] --json`: its answer, wall time, and the
/// CPU the owner (process `owner`) spent meanwhile (NaN where it cannot be read).
pub(super) fn import(
    bin: &Path,
    home: &Path,
    root: &str,
    dir: &Path,
    dry: bool,
    owner: u32,
) -> Result<(Value, f64, f64)> {
    let mut cmd = Command::new(bin);
    cmd.arg("import").arg(dir).args(["--brain", root]);
    let (v, secs, cpu) = timed_import(cmd, home, root, dry, owner)?;
    if v["count_conserved"] != json!(true) {
        bail!("import did not conserve counts: {v}");
    }
    Ok((v, secs, cpu))
}

/// `cmd` (a `medulla import …`) run with `--json [--dry-run]` in `root` against the owner
/// at `home`: its JSON answer, wall seconds, and the CPU the owner (process `owner`) spent
/// meanwhile (NaN where it cannot be read).
pub(super) fn timed_import(
    mut cmd: Command,
    home: &Path,
    root: &str,
    dry: bool,
    owner: u32,
) -> Result<(Value, f64, f64)> {
    cmd.arg("--json")
        .current_dir(root)
        .env("MEDULLA_HOME", home)
        .env_remove("MEDULLA_URL")
        .env_remove("MEDULLA_BRAIN")
        .env("NO_COLOR", "1");
    if dry {
        cmd.arg("--dry-run");
    }
    let cpu = || cpu_secs(owner).unwrap_or(f64::NAN);
    let (c, t) = (cpu(), Instant::now());
    let out = cmd.output().context("cannot run medulla import")?;
    let (secs, cpu) = (t.elapsed().as_secs_f64(), cpu() - c);
    let v: Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "import answered no JSON: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    Ok((v, secs, cpu))
}

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or(0)
}

pub fn run(args: &[String]) -> Result<()> {
    for (i, a) in args.iter().enumerate() {
        let value = i > 0 && ["--claims", "--bin"].contains(&args[i - 1].as_str());
        let known = ["--import", "--claims", "--no-model", "--cold", "--bin"];
        if !value && !known.contains(&a.as_str()) {
            bail!("unknown argument {a:?}: {USAGE}");
        }
    }
    let claims = crate::flag_num(args, "--claims", 100_000)?.max(1);
    let model = !args.iter().any(|a| a == "--no-model");
    let cold = args.iter().any(|a| a == "--cold");
    let bin = bin_arg(args, USAGE)?;

    let home = tempfile::tempdir()?;
    let work = tempfile::tempdir()?;
    let base = std::fs::canonicalize(work.path())?;
    let root = base.join("project");
    std::fs::create_dir_all(root.join("src"))?;
    for k in 0..EVIDENCE_FILES {
        let body: String = (0..40)
            .map(|l| format!("// line {l} of module {k}: {}\n", word(k + l)))
            .collect();
        std::fs::write(root.join(format!("src/mod{k}.rs")), body)?;
    }
    let root = root.to_string_lossy().into_owned();
    let legacy = base.join("legacy");
    let t = Instant::now();
    let made = write_legacy(&legacy, &root, claims)?;
    eprintln!(
        "wrote {} legacy files ({} slugs end live) in {:.1} s",
        made.files,
        made.live,
        t.elapsed().as_secs_f64()
    );

    let log = base.join("owner.log");
    let o = start_with(&bin, home.path(), model, Some((&log, LOG_FILTER)))?;
    o.call("bootstrap", json!({ "root": root }), &root)?;
    if cold {
        drop_page_cache()?;
    }
    let pid = o.child.id();
    let (dry, dry_s, dry_cpu) = import(&bin, home.path(), &root, &legacy, true, pid)?;
    let dry_phases = phases(&log);
    eprintln!("dry run: {dry_s:.2} s");
    if n(&dry, "imported_live") != made.live as u64 {
        bail!(
            "the dry run counts {} live, not {}",
            n(&dry, "imported_live"),
            made.live
        );
    }
    if cold {
        drop_page_cache()?;
    }
    let t_import = Instant::now();
    let (real, real_s, real_cpu) = import(&bin, home.path(), &root, &legacy, false, pid)?;
    let real_phases = phases(&log);
    eprintln!("import: {real_s:.2} s");
    let written = n(&real, "imported_live") + n(&real, "into_history");
    if n(&real, "imported_live") != made.live as u64
        || written + n(&real, "refused") != made.files as u64
        || n(&real, "refused") != 0
    {
        bail!(
            "the import placed {} live, {} in history, refused {} (expected {} live of {} files): {}",
            n(&real, "imported_live"),
            n(&real, "into_history"),
            n(&real, "refused"),
            made.live,
            made.files,
            real["refusals"].as_array().map_or(0, |r| r.len())
        );
    }
    let seeks = seek_times(&o, &root)?;
    let caught_up = catch_up(&log, t_import)?;
    let (again, again_s, again_cpu) = import(&bin, home.path(), &root, &legacy, false, pid)?;
    let again_phases = phases(&log);
    eprintln!("again: {again_s:.2} s");
    if n(&again, "refused") != made.files as u64 {
        bail!(
            "importing twice refused {} of {} files as duplicates",
            n(&again, "refused"),
            made.files
        );
    }

    let rate = |s: f64| made.files as f64 / s;
    println!(
        "\n`medulla import DIR --brain ROOT` of {} legacy files{} into a fresh brain ({}), {}:\n",
        made.files,
        if cold {
            " (the page cache dropped before the dry run and before the import)"
        } else {
            ""
        },
        if model {
            "hybrid: the model loaded"
        } else {
            "lexical-only"
        },
        bin.display()
    );
    header("| run | wall (s) | files/s | owner CPU (s) | owner: read | look-ups | anchors | writes | demotions |");
    println!(
        "| dry run (read, parse, hygiene, look-ups) | {dry_s:.2} | {:.0} | {dry_cpu:.1} | {dry_phases} |",
        rate(dry_s)
    );
    println!(
        "| **import** ({written} written: {} live, {} into history) | {real_s:.2} | **{:.0}** | {real_cpu:.1} | {real_phases} |",
        n(&real, "imported_live"),
        n(&real, "into_history"),
        rate(real_s)
    );
    println!(
        "| import again (every file a duplicate) | {again_s:.2} | {:.0} | {again_cpu:.1} | {again_phases} |",
        rate(again_s)
    );
    println!(
        "\nowner CPU: the user and system seconds of every thread of the owner over the run \
         (what the work costs, often less swayed than the wall time by a slow window; \
         the command line's own is not in it); owner: the seconds the owner's log gives each \
         phase of the verb (`import done`)."
    );
    println!(
        "\nseek over HTTP right after the import ({SEEKS} queries, one client; the vectors the \
         graph has yet to take are scanned meanwhile): p50 {:.1} ms, max {:.1} ms",
        seeks[seeks.len() / 2],
        seeks[seeks.len() - 1]
    );
    match caught_up {
        Some((vectors, secs, after)) => println!(
            "the vector graph caught up on its backlog of {vectors} vectors {after:.1} s after the \
             import began ({secs:.1} s of catching up; the import again ran after it)"
        ),
        None => println!("the import left the vector graph no backlog to catch up on"),
    }
    Ok(())
}

/// How long the owner's log says the graph took to catch up on an import's backlog
/// (vectors, seconds catching up, seconds since `began`), waiting for it; `None` when
/// the import left no backlog (a lexical-only owner, or a build that settles as it
/// writes).
fn catch_up(log: &Path, began: Instant) -> Result<Option<(u64, f64, f64)>> {
    // The settler starts a second after the import's last batch.
    std::thread::sleep(std::time::Duration::from_secs(3));
    if !std::fs::read_to_string(log)?.contains("catching up on a backlog") {
        return Ok(None);
    }
    let deadline = Instant::now() + std::time::Duration::from_secs(3600);
    loop {
        let text = std::fs::read_to_string(log)?;
        if let Some(l) = text
            .lines()
            .find(|l| l.contains("caught up on its backlog"))
        {
            return Ok(Some((
                log_field(l, "vectors").unwrap_or(0.0) as u64,
                log_field(l, "secs").unwrap_or(0.0),
                began.elapsed().as_secs_f64(),
            )));
        }
        if Instant::now() > deadline {
            bail!("the vector graph had not caught up on the import's backlog within an hour");
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// Seeks timed right after an import.
const SEEKS: usize = 30;

/// [`SEEKS`] hybrid seeks of the imported brain, one after another, in milliseconds,
/// sorted.
fn seek_times(o: &Owner, root: &str) -> Result<Vec<f64>> {
    let mut took = Vec::with_capacity(SEEKS);
    for i in 0..SEEKS {
        let query = format!("{} {} stalls under load", word(i * 5), word(i / 3 + 7));
        sample(&mut took, || {
            o.call("seek", json!({ "query": query, "tier": "project" }), root)
        })?;
    }
    took.sort();
    Ok(took.iter().map(|d| d.as_secs_f64() * 1000.0).collect())
}

/// The owner logs each import's phases at `info`, and when the vector graph has caught
/// up on a backlog; nothing else.
const LOG_FILTER: &str = "warn,medulla::service::verbs::import=info,brains::vector=info";

/// The phases of the newest `import done` line of the owner's log, in seconds, as table
/// cells (dashes when the build logs none).
fn phases(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let Some(line) = text.lines().rev().find(|l| l.contains("import done")) else {
        return "– | – | – | – | –".into();
    };
    let field = |key: &str| {
        log_field(line, key).map_or("–".to_string(), |ms| format!("{:.2}", ms / 1000.0))
    };
    ["read_ms", "lookup_ms", "anchor_ms", "write_ms", "demote_ms"]
        .map(field)
        .join(" | ")
}

/// The number a log line gives `key` (`key=1234`), if it gives one.
fn log_field(line: &str, key: &str) -> Option<f64> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse::<f64>().ok())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::cpu_secs;

    /// The CPU the bench reports is the process's own, every thread's: a thread that
    /// spins shows up in it. The thread spins until the reading has grown by 0.2 s (a
    /// reader of the wrong fields never sees it grow, and fails at the deadline); on a
    /// loaded machine that takes longer than 0.2 s of wall time, never less CPU. (The
    /// harness runs other tests in this process too, so the growth is a lower bound.)
    #[test]
    fn cpu_secs_counts_a_spinning_thread() {
        let me = std::process::id();
        let before = cpu_secs(me).expect("this process's CPU time");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let spinner = std::thread::spawn(move || {
            let mut x = 0u64;
            loop {
                for _ in 0..1_000_000 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
                let spun = cpu_secs(me).expect("this process's CPU time") - before;
                if spun >= 0.2 || std::time::Instant::now() > deadline {
                    return spun;
                }
            }
        });
        let spun = spinner.join().expect("the spinning thread");
        assert!(
            spun >= 0.2,
            "20 s of spinning counted as {spun:.2} s of CPU"
        );
        assert_eq!(cpu_secs(u32::MAX), None, "no such process");
    }
}
