//! `cargo xtask bench --hall`: the Hall in headless Chromium over a realistic owner. A
//! release `medulla serve` (lexical: the page does not depend on the model) holding
//! `--brains` brains of `--per-brain` claims each, one brain of `--claims` claims, and a
//! medulla of 200 doctrine claims. The page is opened `--loads` times with a fresh ticket
//! and the browser cache disabled (every load a first load), and the figures are the
//! medians: first contentful paint and the time until the roster is drawn (the page's
//! `hall:roster` performance mark), both from navigation start; then the big brain's first
//! page of claims; and the page weight (the bytes of every file the page loads).

use std::path::{Path, PathBuf};

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use headless_chrome::protocol::cdp::Network;
use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::{json, Value};

use super::http;
use super::runner::{header, median, pct, timed};

/// First render of the roster, in milliseconds from navigation start.
const FIRST_RENDER_TARGET_MS: f64 = 300.0;
/// The page and every file it loads.
const WEIGHT_TARGET_BYTES: usize = 250 * 1024;

/// A release owner (lexical) and the home its founder token is read from.
struct Owner {
    owner: http::Owner,
    home: PathBuf,
}

impl Owner {
    fn start(home: &Path) -> Result<Owner> {
        Ok(Owner {
            owner: http::start_with(&http::binary(), home, false, None)?,
            home: home.to_path_buf(),
        })
    }

    fn token(&self) -> Result<String> {
        Ok(std::fs::read_to_string(self.home.join("founder.token"))?
            .trim()
            .to_string())
    }

    fn call(&self, tool: &str, args: Value, brain: Option<&str>) -> Result<Value> {
        self.owner.call_as_founder(&self.home, tool, args, brain)
    }

    /// A fresh one-time ticket URL, as `medulla hall` asks for one.
    fn ticket_url(&self) -> Result<String> {
        let v: Value = self
            .owner
            .http
            .post(format!("{}/api/hall/ticket", self.owner.url))
            .header("Medulla-Founder-Token", self.token()?)
            .send()?
            .json()?;
        Ok(v["url"].as_str().context("no ticket url")?.to_string())
    }
}

fn fill(o: &Owner, root: &str, n: usize, tag: &str) -> Result<()> {
    for i in 0..n {
        o.call(
            "memorize",
            json!({ "label": format!("{tag} claim {i}"), "text": format!("{tag} observation {i} about build cache flakes and deploy timeouts {}", i % 97), "agent_id": "bench:maker" }),
            Some(root),
        )?;
    }
    Ok(())
}

fn browser(profile: &Path) -> Result<Browser> {
    let chromium = std::env::var_os("MEDULLA_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if !chromium.exists() {
        bail!(
            "no Chromium at {}: install it with `sudo apt-get install -y chromium`",
            chromium.display()
        );
    }
    let args: Vec<&std::ffi::OsStr> = [
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    .iter()
    .map(std::ffi::OsStr::new)
    .collect();
    Browser::new(LaunchOptions {
        path: Some(chromium),
        headless: true,
        sandbox: false,
        enable_gpu: false,
        window_size: Some((1280, 900)),
        user_data_dir: Some(profile.to_path_buf()),
        args,
        idle_browser_timeout: Duration::from_secs(600),
        ..LaunchOptions::default()
    })
    .map_err(|e| anyhow::anyhow!("launch Chromium: {e}"))
}

fn eval(tab: &Tab, expr: &str) -> Result<Value> {
    Ok(tab
        .evaluate(expr, true)
        .map_err(|e| anyhow::anyhow!("{expr}: {e}"))?
        .value
        .unwrap_or(Value::Null))
}

fn until(tab: &Tab, expr: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while eval(tab, expr)? != Value::Bool(true) {
        if Instant::now() > deadline {
            bail!("waited 60 s for {expr}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

pub fn run(brains: usize, per_brain: usize, big: usize, loads: usize) -> Result<()> {
    let home = tempfile::tempdir()?;
    let projects = tempfile::tempdir()?;
    let proot = std::fs::canonicalize(projects.path())?;
    let o = Owner::start(home.path())?;

    eprintln!("filling {brains} brains × {per_brain} claims, one of {big}, a medulla of 200…");
    let t = Instant::now();
    let mut roots = Vec::new();
    for b in 0..=brains {
        let dir = proot.join(if b == 0 {
            "big".to_string()
        } else {
            format!("p{b:03}")
        });
        std::fs::create_dir_all(dir.join(".git"))?;
        let root = dir.to_string_lossy().into_owned();
        o.call("bootstrap", json!({ "root": root }), None)?;
        roots.push(root);
    }
    fill(&o, &roots[0], big, "big")?;
    for (b, root) in roots.iter().enumerate().skip(1) {
        fill(&o, root, per_brain, &format!("b{b}"))?;
    }
    for i in 0..200 {
        o.call(
            "memorize",
            json!({ "label": format!("doctrine {i}"), "text": format!("doctrine {i}: deploy timeouts are raised, never retried blindly"), "tier": "medulla", "agent_id": "human:founder" }),
            None,
        )?;
    }
    for i in 0..20 {
        o.call(
            "report",
            json!({ "letter": { "class": "bug", "repo": roots[1 + i % brains.max(1)], "what": format!("letter {i}") } }),
            None,
        )?;
    }
    eprintln!("filled in {:.1} s", t.elapsed().as_secs_f64());

    // Page weight: the page and every file it links.
    let page = o
        .owner
        .http
        .get(format!("{}/", o.owner.url))
        .send()?
        .text()?;
    let mut weight = page.len();
    let mut files = vec![("/".to_string(), page.len())];
    for link in page.split('"').filter(|s| s.starts_with("/hall/")) {
        if files.iter().any(|(f, _)| f == link) {
            continue;
        }
        let n = o
            .owner
            .http
            .get(format!("{}{link}", o.owner.url))
            .send()?
            .bytes()?
            .len();
        weight += n;
        files.push((link.to_string(), n));
    }

    // What the roster waits on, seen from outside the browser.
    let mut inst = timed(20, |_| {
        o.owner
            .http
            .get(format!("{}/api/instances", o.owner.url))
            .send()?
            .bytes()?;
        Ok(())
    })?;
    let instances_ms = pct(&mut inst, 0.5);

    let profile = tempfile::tempdir()?;
    let browser = browser(profile.path())?;
    let tab = browser.new_tab().map_err(|e| anyhow::anyhow!("{e}"))?;
    tab.call_method(Network::Enable {
        max_total_buffer_size: None,
        max_resource_buffer_size: None,
        max_post_data_size: None,
        report_direct_socket_traffic: None,
        enable_durable_messages: None,
    })
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    tab.call_method(Network::SetCacheDisabled {
        cache_disabled: true,
    })
    .map_err(|e| anyhow::anyhow!("{e}"))?;

    let big_fp = eval_fp(&o, &roots[0])?;
    let (mut fcp, mut roster, mut brain_ms) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..loads {
        tab.navigate_to("about:blank")
            .and_then(|t| t.wait_until_navigated())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        tab.navigate_to(&o.ticket_url()?)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        until(&tab, "document.documentElement.dataset.drawn === 'roster'")?;
        let cards = eval(&tab, "document.querySelectorAll('li.card').length")?;
        let r = eval(
            &tab,
            "performance.getEntriesByName('hall:roster')[0].startTime",
        )?
        .as_f64()
        .context("no hall:roster mark")?;
        // Where the time goes: the script runs, the ticket is traded, the roster's data is in.
        let steps = eval(
            &tab,
            "['hall:script', 'hall:session', 'hall:data'].map((m) => Math.round(performance.getEntriesByName(m)[0]?.startTime ?? -1)).join(' / ')",
        )?;
        let p = eval(
            &tab,
            "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null",
        )?
        .as_f64()
        .unwrap_or(f64::NAN);
        // The big brain's first page of claims, from the click to the drawn list.
        let b = eval(
            &tab,
            &format!(
                "new Promise((done) => {{
                   const t0 = performance.now();
                   location.hash = '#/brain/{big_fp}';
                   const check = () => document.querySelector('li.claim') ? done(performance.now() - t0) : requestAnimationFrame(check);
                   check();
                 }})"
            ),
        )?
        .as_f64()
        .context("no brain timing")?;
        eprintln!(
            "load {}: roster {r:.0} ms ({cards} cards), first paint {p:.0} ms, script / session / data at {} ms, 10k-claim brain {b:.0} ms",
            i + 1,
            steps.as_str().unwrap_or_default()
        );
        roster.push(r);
        fcp.push(p);
        brain_ms.push(b);
    }
    let (roster, fcp, brain_ms) = (
        median(&mut roster).unwrap_or(f64::NAN),
        median(&mut fcp).unwrap_or(f64::NAN),
        median(&mut brain_ms).unwrap_or(f64::NAN),
    );

    println!("\nthe Hall: {brains} brains × {per_brain} claims + one of {big} claims + 200 medulla claims; {loads} loads, browser cache disabled, medians");
    header("| figure | value | target |");
    println!(
        "| first contentful paint | {fcp:.0} ms | |\n| roster drawn (first render) | {roster:.0} ms | ≤ {FIRST_RENDER_TARGET_MS:.0} ms: {} |",
        if roster <= FIRST_RENDER_TARGET_MS { "met" } else { "NOT met" }
    );
    println!("| 10k-claim brain, first page of claims | {brain_ms:.0} ms | |");
    println!(
        "| GET /api/instances ({} brains, outside the browser) | {instances_ms:.1} ms | |",
        brains + 1
    );
    println!(
        "| page weight | {weight} bytes ({:.1} KiB) | ≤ 250 KiB: {} |",
        weight as f64 / 1024.0,
        if weight <= WEIGHT_TARGET_BYTES {
            "met"
        } else {
            "NOT met"
        }
    );
    for (f, n) in files {
        println!("|   {f} | {n} bytes | |");
    }
    Ok(())
}

fn eval_fp(o: &Owner, root: &str) -> Result<String> {
    let v: Value = o
        .owner
        .http
        .get(format!("{}/api/instances", o.owner.url))
        .send()?
        .json()?;
    v["instances"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["root"] == root))
        .and_then(|r| r["fingerprint"].as_str())
        .map(str::to_string)
        .context("the big brain's fingerprint")
}
