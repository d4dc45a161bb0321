//! `cargo xtask soak`: many concurrent MCP sessions against one release owner, as agents
//! hold them: each client one Streamable HTTP session on one kept-alive connection,
//! bound to one brain by its caller root, calling tools in a loop for a fixed time.
//! Mixed traffic: 60 % seek, 30 % memorize, 10 % north. Loopback only; every loop is
//! bounded by the deadline and a request cap.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde_json::{json, Value};

use crate::bench::http::{require_binary, start_logged, Owner};
use crate::bench::runner::{header, pct};
use crate::mcp::{self, CallError, HttpSession, RawLink, Session};

/// What `cargo xtask soak` runs.
#[derive(Debug, Clone)]
pub struct SoakOpts {
    pub clients: usize,
    pub secs: u64,
    pub brains: usize,
    pub seed_claims: usize,
    pub model: bool,
    /// `tier` for the seeks (`None`: the default, the brain plus the medulla).
    pub seek_tier: Option<String>,
}

/// Refusals that are a correct answer to this workload, not a fault. The workload never
/// lowers a claim's strength, so none are expected; the list stays explicit.
const EXPECTED_REFUSALS: &[&str] = &["would_downgrade"];

/// Hard cap on requests per client, on top of the deadline.
const MAX_REQUESTS_PER_CLIENT: usize = 1_000_000;

/// A latency above this counts as a stall in the report.
const STALL: Duration = Duration::from_secs(1);

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Verb {
    Seek,
    Memorize,
    North,
}

impl Verb {
    fn name(self) -> &'static str {
        match self {
            Verb::Seek => "seek",
            Verb::Memorize => "memorize",
            Verb::North => "north",
        }
    }
}

/// What one call came to.
struct Sample {
    verb: Verb,
    latency: Duration,
    /// `None` when it succeeded, else the key it is counted under.
    error: Option<String>,
    expected_refusal: Option<String>,
    /// The code of a north answer's `medulla_error`, when its medulla part was lost.
    medulla_lost: Option<String>,
    /// Seconds since the load started, to place stalls and errors in time.
    at: f64,
}

/// A tiny deterministic generator (xorshift64*), one per client.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SERVICES: &[&str] = &[
    "billing",
    "auth",
    "search",
    "ingest",
    "gateway",
    "notifications",
    "payments",
    "scheduler",
    "inventory",
    "reports",
];
const TOPICS: &[&str] = &[
    "retries failed webhooks with exponential backoff",
    "times out upstream calls after thirty seconds",
    "caches session tokens in redis for ten minutes",
    "runs database migrations before each deploy",
    "rate limits each client to one hundred requests per second",
    "logs structured json to the central collector",
    "pages the on-call engineer when error rates pass two percent",
    "reads feature flags from the config service at startup",
];

fn claim_text(rng: &mut Rng, client: usize, n: usize) -> (String, String) {
    let s = SERVICES[rng.below(SERVICES.len())];
    let t = TOPICS[rng.below(TOPICS.len())];
    // A bounded label space per client: later writes supersede earlier ones, as agents
    // correct what they wrote.
    let label = format!("soak c{client} {s} note {}", rng.below(40));
    (label, format!("The {s} service {t} (observation {n})"))
}

fn query(rng: &mut Rng) -> String {
    let s = SERVICES[rng.below(SERVICES.len())];
    let words: Vec<&str> = TOPICS[rng.below(TOPICS.len())].split_whitespace().collect();
    let w = rng.below(words.len().saturating_sub(2).max(1));
    format!("{s} {}", words[w..(w + 2).min(words.len())].join(" "))
}

fn classify(r: Result<mcp::ToolAnswer, CallError>, verb: Verb, s: &mut Sample) {
    match r {
        Err(e) => s.error = Some(e.key()),
        Ok(a) if a.is_error => {
            let code = a.error_code().unwrap_or_else(|| "unknown".into());
            if EXPECTED_REFUSALS.contains(&code.as_str()) {
                s.expected_refusal = Some(code);
            } else {
                s.error = Some(format!("tool:{code}"));
            }
        }
        Ok(a) => {
            if verb == Verb::North {
                s.medulla_lost = a.json().and_then(|v: Value| {
                    let e = v.get("medulla_error").filter(|e| !e.is_null())?;
                    Some(e["code"].as_str().unwrap_or("unknown").to_string())
                });
            }
        }
    }
}

fn open_session(url: &str, root: &str, client: usize) -> Result<HttpSession<RawLink>, CallError> {
    let agent = format!("soak:client{client}");
    HttpSession::open(
        RawLink::new(url).map_err(CallError::Transport)?,
        &[("Medulla-Caller-Root", root), ("Medulla-Agent", &agent)],
        "soak",
    )
}

struct ClientOut {
    samples: Vec<Sample>,
    /// Sessions opened (1 when the first held for the whole run).
    sessions: usize,
    open_errors: BTreeMap<String, usize>,
}

/// What one client thread needs.
struct Plan {
    url: String,
    root: String,
    client: usize,
    start: Instant,
    deadline: Instant,
    stop: Arc<AtomicBool>,
    done: Arc<AtomicU64>,
    seek_tier: Option<String>,
}

fn client_loop(plan: Plan) -> ClientOut {
    let Plan {
        url,
        root,
        client,
        start,
        deadline,
        stop,
        done,
        seek_tier,
    } = plan;
    let mut rng = Rng::new(client as u64 + 1);
    let mut out = ClientOut {
        samples: Vec::new(),
        sessions: 0,
        open_errors: BTreeMap::new(),
    };
    let mut session: Option<HttpSession<RawLink>> = None;
    let mut n = 0;
    while Instant::now() < deadline
        && !stop.load(Ordering::Relaxed)
        && out.samples.len() < MAX_REQUESTS_PER_CLIENT
    {
        if session.is_none() {
            match open_session(&url, &root, client) {
                Ok(s) => {
                    out.sessions += 1;
                    session = Some(s);
                }
                Err(e) => {
                    *out.open_errors.entry(e.key()).or_default() += 1;
                    // Bounded by the deadline; a short pause keeps a dead owner from
                    // turning this into a busy loop.
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            }
        }
        let s = session.as_mut().expect("open");
        let roll = rng.below(100);
        let (verb, name, args) = if roll < 60 {
            let mut args = json!({ "query": query(&mut rng) });
            if let Some(t) = &seek_tier {
                args["tier"] = json!(t);
            }
            (Verb::Seek, "seek", args)
        } else if roll < 90 {
            n += 1;
            let (label, text) = claim_text(&mut rng, client, n);
            (
                Verb::Memorize,
                "memorize",
                json!({ "label": label, "text": text }),
            )
        } else {
            (
                Verb::North,
                "north",
                json!({ "task": format!("change how {}", query(&mut rng)) }),
            )
        };
        let t = Instant::now();
        let r = s.call_tool(name, args);
        let mut sample = Sample {
            verb,
            latency: t.elapsed(),
            error: None,
            expected_refusal: None,
            medulla_lost: None,
            at: t.duration_since(start).as_secs_f64(),
        };
        let transport_failed = matches!(r, Err(CallError::Transport(_)));
        classify(r, verb, &mut sample);
        if transport_failed {
            // A client that lost its connection starts a new session, as SDKs reconnect.
            session = None;
        }
        out.samples.push(sample);
        done.fetch_add(1, Ordering::Relaxed);
    }
    out
}

fn seed(o: &Owner, root: &str, brain: usize, n: usize) -> Result<()> {
    let mut rng = Rng::new(1000 + brain as u64);
    for i in 0..n {
        let s = SERVICES[rng.below(SERVICES.len())];
        let t = TOPICS[rng.below(TOPICS.len())];
        o.call(
            "memorize",
            json!({ "label": format!("seed {s} fact {i}"), "text": format!("The {s} service {t} (seeded {i})") }),
            root,
        )?;
    }
    Ok(())
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

pub fn run(opts: SoakOpts) -> Result<()> {
    require_binary()?;
    if opts.clients == 0 || opts.brains == 0 || opts.secs == 0 {
        bail!("--clients, --brains and --secs must be at least 1");
    }
    let home = tempfile::tempdir()?;
    let projects = tempfile::tempdir()?;
    let proot = std::fs::canonicalize(projects.path())?;
    let log = home.path().join("owner-stderr.log");
    let o = start_logged(home.path(), opts.model, Some(&log))?;
    let health: Value = o.http.get(format!("{}/api/health", o.url)).send()?.json()?;
    println!(
        "owner {} pid {}, retrieval {}; {} clients × {} s over {} brains; seeks with tier {}",
        o.url,
        o.child.id(),
        health["retrieval"].as_str().unwrap_or("?"),
        opts.clients,
        opts.secs,
        opts.brains,
        opts.seek_tier
            .as_deref()
            .unwrap_or("default (brain + medulla)")
    );
    let mut roots = Vec::new();
    let t = Instant::now();
    for b in 0..opts.brains {
        let r = proot.join(format!("project{b}"));
        std::fs::create_dir_all(&r)?;
        let rs = r.to_string_lossy().to_string();
        o.call("bootstrap", json!({ "root": rs }), &rs)?;
        seed(&o, &rs, b, opts.seed_claims)?;
        roots.push(rs);
    }
    println!(
        "seeded {} brains × {} claims over REST in {:.1} s",
        opts.brains,
        opts.seed_claims,
        t.elapsed().as_secs_f64()
    );
    let pid = o.child.id();
    let rss_before = o.rss_kib();

    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let deadline = start + Duration::from_secs(opts.secs);
    let handles: Vec<_> = (0..opts.clients)
        .map(|c| {
            let plan = Plan {
                url: o.url.clone(),
                root: roots[c % roots.len()].clone(),
                client: c,
                start,
                deadline,
                stop: stop.clone(),
                done: done.clone(),
                seek_tier: opts.seek_tier.clone(),
            };
            std::thread::spawn(move || client_loop(plan))
        })
        .collect();
    // Watch the owner while the clients run: peak RSS, and stop early if it died.
    let mut peak = rss_before;
    let mut owner_died = false;
    let mut last_print = Instant::now();
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
        match mcp::proc_status_kib(pid, "VmRSS:") {
            Some(r) => peak = peak.max(r),
            None => {
                owner_died = true;
                stop.store(true, Ordering::Relaxed);
                break;
            }
        }
        if last_print.elapsed() >= Duration::from_secs(10) {
            eprintln!(
                "  {:>4.0} s: {} requests",
                start.elapsed().as_secs_f64(),
                done.load(Ordering::Relaxed)
            );
            last_print = Instant::now();
        }
    }
    let outs: Vec<ClientOut> = handles
        .into_iter()
        .map(|h| h.join().expect("client thread"))
        .collect();
    let wall = start.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(500));
    let rss_after = o.rss_kib();
    let hwm = mcp::proc_status_kib(pid, "VmHWM:").unwrap_or(0);

    report(&opts, &outs, wall, owner_died)?;
    println!(
        "\nowner RSS: before the load {:.1} MiB, after {:.1} MiB (peak sampled {:.1} MiB, VmHWM {:.1} MiB)",
        mib(rss_before),
        mib(rss_after),
        mib(peak),
        mib(hwm)
    );
    drop(o);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let lines: Vec<&str> = logged.lines().filter(|l| !l.trim().is_empty()).collect();
    println!(
        "owner stderr at warn and above: {} lines{}",
        lines.len(),
        if lines.is_empty() { "" } else { ", the first:" }
    );
    for l in lines.iter().take(10) {
        println!("  {l}");
    }
    let errors: usize = outs
        .iter()
        .map(|o| {
            o.samples.iter().filter(|s| s.error.is_some()).count()
                + o.open_errors.values().sum::<usize>()
        })
        .sum();
    if owner_died {
        bail!("the owner died during the soak");
    }
    if errors > 0 {
        bail!("soak: {errors} errors");
    }
    Ok(())
}

fn report(opts: &SoakOpts, outs: &[ClientOut], wall: f64, owner_died: bool) -> Result<()> {
    let samples: Vec<&Sample> = outs.iter().flat_map(|o| o.samples.iter()).collect();
    let total = samples.len();
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    let mut refusals: BTreeMap<String, usize> = BTreeMap::new();
    for s in &samples {
        if let Some(e) = &s.error {
            *errors.entry(e.clone()).or_default() += 1;
        }
        if let Some(r) = &s.expected_refusal {
            *refusals.entry(r.clone()).or_default() += 1;
        }
    }
    for o in outs {
        for (k, n) in &o.open_errors {
            *errors.entry(format!("session-open:{k}")).or_default() += n;
        }
    }
    let n_errors: usize = errors.values().sum();
    let sessions: usize = outs.iter().map(|o| o.sessions).sum();
    println!(
        "\n{total} requests in {wall:.1} s ({:.0} req/s), {sessions} sessions for {} clients{}",
        total as f64 / wall,
        opts.clients,
        if owner_died { "; THE OWNER DIED" } else { "" }
    );
    if errors.is_empty() {
        println!("errors: 0");
    } else {
        println!("errors: {n_errors}");
        for (k, n) in &errors {
            println!("  {k}: {n}");
        }
        let first = samples
            .iter()
            .filter(|s| s.error.is_some())
            .map(|s| s.at)
            .fold(f64::INFINITY, f64::min);
        println!("  first error at {first:.1} s into the load");
    }
    if !refusals.is_empty() {
        println!("expected refusals (not errors): {refusals:?}");
    }

    println!();
    header("| verb | calls | share | p50 (ms) | p95 (ms) | p99 (ms) | max (ms) | p99/p50 | calls/s | > 1 s |");
    let mut overall_ratio = f64::NAN;
    for verb in [
        Some(Verb::Seek),
        Some(Verb::Memorize),
        Some(Verb::North),
        None,
    ] {
        let mine = |s: &&&Sample| verb.is_none_or(|v| s.verb == v);
        let calls = samples.iter().filter(mine).count();
        // Latencies of the calls that succeeded; errors are counted above.
        let mut lat: Vec<Duration> = samples
            .iter()
            .filter(mine)
            .filter(|s| s.error.is_none())
            .map(|s| s.latency)
            .collect();
        let name = verb.map_or("all", Verb::name);
        let ratio = print_row(name, calls, total, &mut lat, wall);
        if verb.is_none() {
            overall_ratio = ratio;
        }
    }
    let mut lost: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &samples {
        if let Some(code) = &s.medulla_lost {
            *lost.entry(code.as_str()).or_default() += 1;
        }
    }
    let norths = samples.iter().filter(|s| s.verb == Verb::North).count();
    println!(
        "\nnorth answers that lost their medulla part (medulla_error present): {} of {norths}{}",
        lost.values().sum::<usize>(),
        if lost.is_empty() {
            String::new()
        } else {
            format!(", by code: {lost:?}")
        }
    );
    println!(
        "target: 0 errors → {} ({n_errors}); p99 ≤ 10 × p50 overall → {} ({overall_ratio:.1}×)",
        if n_errors == 0 { "met" } else { "MISSED" },
        if overall_ratio <= 10.0 {
            "met"
        } else {
            "MISSED"
        }
    );
    let mut stalls: Vec<(f64, f64, &str)> = samples
        .iter()
        .filter(|s| s.latency >= STALL)
        .map(|s| (s.at, s.latency.as_secs_f64() * 1000.0, s.verb.name()))
        .collect();
    if !stalls.is_empty() {
        stalls.sort_by(|a, b| a.0.total_cmp(&b.0));
        println!(
            "calls slower than 1 s: {} (first ten by start time):",
            stalls.len()
        );
        for (at, ms, v) in stalls.iter().take(10) {
            println!("  {v} started at {at:.1} s took {ms:.0} ms");
        }
    }
    Ok(())
}

/// One table row; returns p99/p50.
fn print_row(name: &str, calls: usize, total: usize, lat: &mut [Duration], wall: f64) -> f64 {
    let (p50, p95, p99) = (pct(lat, 0.5), pct(lat, 0.95), pct(lat, 0.99));
    let max = lat
        .last()
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(f64::NAN);
    let slow = lat.iter().filter(|d| **d >= STALL).count();
    println!(
        "| {name} | {calls} | {:.0} % | {p50:.2} | {p95:.2} | {p99:.2} | {max:.1} | {:.1}× | {:.1} | {slow} |",
        100.0 * calls as f64 / total.max(1) as f64,
        p99 / p50,
        calls as f64 / wall
    );
    p99 / p50
}
