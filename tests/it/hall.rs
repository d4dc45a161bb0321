//! The Hall: served by the owner with a strict policy, and used in a real headless
//! Chromium (driven over the DevTools protocol by `headless_chrome`) the way a person
//! would: opened with a ticket, read (roster, a claim's history, the medulla's chains, the
//! mailbox's fates, the doctor's chart), and tended (a promotion through the confirmation
//! dialog), with the result checked through the REST API.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use headless_chrome::protocol::cdp::Emulation;
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::{json, Value};

use crate::common::{header, Owner};

/// Debian's Chromium, installed here when missing and possible (as root, with apt);
/// otherwise the test fails naming the one command that installs it.
fn chromium() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _one_at_a_time = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = std::env::var_os("MEDULLA_CHROMIUM") {
        return PathBuf::from(p);
    }
    let bin = PathBuf::from("/usr/bin/chromium");
    if bin.exists() {
        return bin;
    }
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let has_apt = Path::new("/usr/bin/apt-get").exists();
    if root && has_apt {
        let apt = |args: &[&str]| {
            std::process::Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .is_ok_and(|s| s.success())
        };
        if !apt(&["install", "-y", "chromium"]) {
            apt(&["update"]);
            apt(&["install", "-y", "chromium"]);
        }
    }
    assert!(
        bin.exists(),
        "the Hall's browser test needs Chromium at /usr/bin/chromium: install it with \
         `sudo apt-get install -y chromium` (or point MEDULLA_CHROMIUM at a Chromium binary)"
    );
    bin
}

/// Headless Chromium with a fresh profile, none of its background connections (this
/// machine's network is closed), and a laptop-sized window.
pub fn browser(profile: &Path) -> Browser {
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
        path: Some(chromium()),
        headless: true,
        sandbox: false,
        enable_gpu: false,
        window_size: Some((1280, 900)),
        user_data_dir: Some(profile.to_path_buf()),
        args,
        idle_browser_timeout: Duration::from_secs(300),
        ..LaunchOptions::default()
    })
    .expect("launch headless Chromium")
}

/// Evaluate an expression in the page.
pub fn js(tab: &Tab, expr: &str) -> Value {
    tab.evaluate(expr, true)
        .unwrap_or_else(|e| panic!("evaluate {expr}: {e}"))
        .value
        .unwrap_or(Value::Null)
}

/// Wait (at most 20 s) until an expression is truthy in the page; its value.
pub fn until(tab: &Tab, expr: &str, what: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    // An element comes back as a remote object without a value: make it `true`.
    let wrapped =
        format!("(() => {{ const v = ({expr}); return v instanceof Node ? true : v; }})()");
    loop {
        let v = tab
            .evaluate(&wrapped, true)
            .ok()
            .and_then(|r| r.value)
            .unwrap_or(Value::Null);
        let truthy = match &v {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => n.as_f64() != Some(0.0),
            Value::String(s) => !s.is_empty(),
            _ => true,
        };
        if truthy {
            return v;
        }
        if Instant::now() > deadline {
            let body = js(tab, "document.body.innerText.slice(0, 3000)");
            panic!("waited 20 s for {what} ({expr}); the page says:\n{body}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn click(tab: &Tab, selector: &str) {
    tab.wait_for_element(selector)
        .unwrap_or_else(|e| panic!("no {selector}: {e}"))
        .click()
        .unwrap_or_else(|e| panic!("click {selector}: {e}"));
}

pub fn text_of(tab: &Tab, selector: &str) -> String {
    let sel = serde_json::to_string(selector).unwrap();
    js(
        tab,
        &format!("document.querySelector({sel})?.innerText ?? ''"),
    )
    .as_str()
    .unwrap_or_default()
    .to_string()
}

pub fn screenshot(tab: &Tab, name: &str) -> PathBuf {
    let png = tab
        .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
        .expect("screenshot");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .to_path_buf();
    let path = target.join(name);
    std::fs::write(&path, png).expect("write the screenshot");
    path
}

fn founder_get(o: &Owner, path: &str) -> Value {
    o.http
        .get(format!("{}{path}", o.url))
        .header(header::FOUNDER, o.founder_token())
        .send()
        .expect("GET")
        .json()
        .expect("JSON")
}

/// A project directory that is a git repository (boxes live only in repositories).
fn repo(o: &Owner, name: &str) -> String {
    let p = o.project(name);
    std::fs::create_dir_all(p.join(".git")).unwrap();
    o.bootstrap(&p);
    p.to_string_lossy().into_owned()
}

fn memorize(o: &Owner, brain: &str, label: &str, text: &str, agent: &str) {
    let (s, v) = o.call(
        "memorize",
        json!({ "label": label, "text": text, "agent_id": agent }),
        &[(header::BRAIN, brain)],
    );
    assert_eq!(s, 200, "memorize {label}: {v}");
}

fn report(o: &Owner, letter: Value) -> String {
    let (s, v) = o.call("report", json!({ "letter": letter }), &[]);
    assert_eq!(s, 200, "report: {v}");
    v["id"].as_str().expect("a letter id").to_string()
}

#[test]
fn the_hall_is_served_from_the_binary_with_a_strict_policy() {
    let o = Owner::start();
    let r = o.http.get(format!("{}/", o.url)).send().unwrap();
    assert_eq!(r.status(), 200);
    let header = |r: &reqwest::blocking::Response, k: &str| {
        r.headers()
            .get(k)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert!(header(&r, "content-type").starts_with("text/html"));
    let csp = header(&r, "content-security-policy");
    for part in [
        "default-src 'self'",
        "script-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(part), "{part} in {csp}");
    }
    assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"));
    assert_eq!(header(&r, "x-content-type-options"), "nosniff");
    assert_eq!(header(&r, "referrer-policy"), "no-referrer");
    assert_eq!(header(&r, "cache-control"), "no-cache");
    let etag = header(&r, "etag");
    let page = r.text().unwrap();
    assert!(
        page.contains("medulla hall"),
        "the closed page names the command"
    );

    // The page is revalidated; its files are linked by version and then cached for good.
    let again = o
        .http
        .get(format!("{}/", o.url))
        .header("If-None-Match", &etag)
        .send()
        .unwrap();
    assert_eq!(again.status(), 304);
    let js_link = page
        .split('"')
        .find(|s| s.starts_with("/hall/hall.js?v="))
        .expect("the script is linked by version");
    let js = o.http.get(format!("{}{js_link}", o.url)).send().unwrap();
    assert_eq!(js.status(), 200);
    assert!(header(&js, "content-type").starts_with("text/javascript"));
    assert!(header(&js, "cache-control").contains("immutable"));
    let unversioned = o
        .http
        .get(format!("{}/hall/hall.css", o.url))
        .send()
        .unwrap();
    assert_eq!(unversioned.status(), 200);
    assert_eq!(header(&unversioned, "cache-control"), "no-cache");
    assert_eq!(
        o.http
            .get(format!("{}/hall/nothing.js", o.url))
            .send()
            .unwrap()
            .status(),
        404
    );
    // The loopback guard runs before the Hall, as before every route.
    let foreign = o
        .http
        .get(format!("{}/", o.url))
        .header("Origin", "http://evil.example")
        .send()
        .unwrap();
    assert_eq!(foreign.status(), 403);
    // A ticket is the founder's only, and works once.
    let no_ticket = o
        .http
        .post(format!("{}/api/hall/ticket", o.url))
        .send()
        .unwrap();
    assert_eq!(no_ticket.status(), 403);
}

#[test]
fn the_hall_shows_and_tends_every_brain_in_a_real_browser() {
    let o = Owner::start();
    // Three brains, each a git repository.
    let alpha = repo(&o, "alpha");
    let beta = repo(&o, "beta");
    let gamma = repo(&o, "gamma");
    memorize(
        &o,
        &alpha,
        "Build command",
        "cargo build --release builds the owner",
        "claude:maker",
    );
    memorize(
        &o,
        &alpha,
        "Deploy window",
        "deploys go out on Tuesdays after the standup",
        "claude:maker",
    );
    memorize(
        &o,
        &alpha,
        "Flaky test",
        "the sigkill test needs a warm cache",
        "codex:maker",
    );
    memorize(
        &o,
        &beta,
        "Style",
        "errors are lowercase and name the fix",
        "claude:maker",
    );
    memorize(
        &o,
        &gamma,
        "Entry point",
        "main.rs only parses and prints the chain",
        "claude:maker",
    );
    // The same fact under a second label: the doctor shows the pair.
    memorize(
        &o,
        &gamma,
        "Main binary",
        "main.rs only parses the command line and prints the error chain",
        "codex:maker",
    );
    // A claim an import from Claude Code wrote (issue 66): the doctor counts it by source.
    memorize(
        &o,
        &gamma,
        "Commit style",
        "conventional commits in the imperative mood, no emoji",
        "import:claude",
    );
    // A maker promotes (lands, flagged), then the witness is superseded at equal strength.
    let (s, v) = o.call(
        "promote",
        json!({ "claim": "build-command", "reason": "every repo builds this way", "agent_id": "claude:maker" }),
        &[(header::BRAIN, alpha.as_str())],
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["etiquette"]["flag"], "etiquette_breach", "{v}");
    memorize(
        &o,
        &alpha,
        "Build command",
        "cargo build --release --locked builds the owner",
        "claude:maker",
    );
    // A claim anchored to a file that changed since: the row says verify first.
    std::fs::create_dir_all(Path::new(&alpha).join("src")).unwrap();
    std::fs::write(
        Path::new(&alpha).join("src/pool.rs"),
        "pub const POOL: usize = 20;\n",
    )
    .unwrap();
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "Pool size", "text": "the pool is capped at 20 in src/pool.rs", "evidence": ["src/pool.rs"], "agent_id": "claude:maker" }),
        &[("Medulla-Brain", alpha.as_str())],
    );
    assert_eq!(s, 200, "{v}");
    std::fs::write(
        Path::new(&alpha).join("src/pool.rs"),
        "pub const POOL: usize = 64;\n",
    )
    .unwrap();
    // Letters in every fate.
    let wet = report(
        &o,
        json!({ "class": "bug", "repo": alpha, "what": "recall missed the build note", "tool": "medulla" }),
    );
    let fired = report(
        &o,
        json!({ "class": "bug", "repo": alpha, "what": "history showed two live versions" }),
    );
    report(
        &o,
        json!({ "class": "receipt", "repo": alpha, "answers": [fired], "what": "fixed in the store" }),
    );
    let flight = report(
        &o,
        json!({ "class": "bug", "repo": beta, "what": "north was slow on a cold brain" }),
    );
    report(
        &o,
        json!({ "class": "note", "repo": beta, "answers": [flight], "what": "looking into it" }),
    );
    let external = report(
        &o,
        json!({ "class": "bug", "repo": beta, "tool": "ripgrep", "what": "rg skipped a hidden dir" }),
    );
    report(
        &o,
        json!({ "class": "memory_misdelivery", "kind": "leak", "repo": gamma, "what": "a beta claim surfaced in gamma" }),
    );
    report(
        &o,
        json!({ "class": "memory_misdelivery", "kind": "false_absence", "repo": gamma, "what": "north said no memory" }),
    );
    report(
        &o,
        json!({ "class": "bug", "repo": "/nowhere/not-on-this-machine", "what": "waits for its repository" }),
    );

    // A brain directory whose manifest cannot be read: listed with its problem, never hidden.
    let broken = o.home.path().join("brains").join("00000000deadbeef");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("brain.json"), "{ not a manifest").unwrap();

    // A quarantined brain, as a restart over a damaged store finds it: dormant, its
    // marker beside the store.
    let damaged_root = o.project("damaged");
    let damaged_dir = o.home.path().join("brains").join("00000000feedface");
    std::fs::create_dir_all(&damaged_dir).unwrap();
    std::fs::write(
        damaged_dir.join("brain.json"),
        json!({ "root": damaged_root, "fingerprint": "00000000feedface", "created": 1 })
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        damaged_dir.join("QUARANTINE.json"),
        json!({ "kind": "damaged", "path": damaged_dir.join("store.redb"), "detail": "page 12 fails its checksum", "since": 1 }).to_string(),
    )
    .unwrap();

    let profile = tempfile::tempdir().unwrap();
    let browser = browser(profile.path());
    let tab = browser.new_tab().expect("a tab");
    tab.set_default_timeout(Duration::from_secs(20));

    // Without a ticket: how to open it, and nothing else.
    tab.navigate_to(&format!("{}/", o.url)).unwrap();
    until(
        &tab,
        "document.documentElement.dataset.hall === 'locked'",
        "the closed page",
    );
    assert!(text_of(&tab, "#locked").contains("medulla hall"));
    assert_eq!(
        js(&tab, "document.querySelector('#nav').hidden"),
        json!(true)
    );
    assert_eq!(
        js(&tab, "document.querySelectorAll('.card, .claim').length"),
        json!(0)
    );

    // With a ticket: the session is traded, kept in the tab, and the fragment is gone.
    let ticket: Value = o
        .http
        .post(format!("{}/api/hall/ticket", o.url))
        .header(header::FOUNDER, o.founder_token())
        .send()
        .unwrap()
        .json()
        .unwrap();
    let url = ticket["url"].as_str().expect("a ticket url").to_string();
    assert!(url.contains("#ticket="), "{url}");
    tab.navigate_to(&url).unwrap();
    until(
        &tab,
        "document.documentElement.dataset.drawn === 'roster'",
        "the roster",
    );
    assert_eq!(
        js(&tab, "location.hash"),
        json!("#/"),
        "the ticket left the address bar"
    );
    assert!(js(&tab, "sessionStorage.getItem('medulla.hall.session')").is_string());
    // A ticket works once: the same URL in a fresh tab stays closed.
    let tab2 = browser.new_tab().unwrap();
    tab2.navigate_to(&url).unwrap();
    until(
        &tab2,
        "document.documentElement.dataset.hall === 'locked'",
        "a used ticket refused",
    );
    tab2.close(false).ok();

    // The roster: a card per brain with its own numbers, and the medulla's.
    for root in [&alpha, &beta, &gamma] {
        let sel = serde_json::to_string(&format!("li.card[data-root=\"{root}\"]")).unwrap();
        until(
            &tab,
            &format!("!!document.querySelector({sel})"),
            "a brain's card",
        );
    }
    let instances = founder_get(&o, "/api/instances");
    let alpha_row = instances["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["root"] == alpha.as_str())
        .unwrap()
        .clone();
    let alpha_claims = text_of(
        &tab,
        &format!("li.card[data-root=\"{alpha}\"] dd[data-stat=claims]"),
    );
    assert_eq!(
        alpha_claims,
        alpha_row["claims"].to_string(),
        "the card shows the brain's count"
    );
    let open = text_of(
        &tab,
        &format!("li.card[data-root=\"{alpha}\"] dd[data-stat=\"open mail\"]"),
    );
    assert_eq!(open, alpha_row["mailbox_open_count"].to_string());
    assert!(text_of(&tab, "li.card[data-brain=medulla]").contains("soft cap 200"));
    let unreadable = text_of(&tab, "li.card.unreadable[data-fp=\"00000000deadbeef\"]");
    assert!(unreadable.contains("unreadable"), "{unreadable}");
    assert!(
        unreadable.contains("brain.json"),
        "the card names the problem: {unreadable}"
    );
    let quarantined = text_of(&tab, "li.card[data-fp=\"00000000feedface\"]");
    assert!(
        quarantined.contains("quarantined") && quarantined.contains("page 12 fails its checksum"),
        "the card says the store is quarantined, and why: {quarantined}"
    );

    // Live: a write elsewhere updates the card without a reload.
    memorize(
        &o,
        &beta,
        "Release notes",
        "every release names its migrations",
        "claude:maker",
    );
    until(
        &tab,
        &format!("document.querySelector('li.card[data-root=\"{beta}\"] dd[data-stat=claims]').textContent === '2'"),
        "the beta card to update from the event stream",
    );
    // A brain's checkouts (issue 63): a worktree's first write shows on the card, beside
    // the checkout the brain was bootstrapped in.
    let delta = crate::repository::repository(&o.projects.path().join("delta"), &[("f", "x\n")]);
    o.bootstrap(&delta);
    crate::repository::git(&delta, &["worktree", "add", "-q", "../delta-wt"]);
    let wt = std::fs::canonicalize(o.projects.path().join("delta-wt")).unwrap();
    let wt_s = wt.to_string_lossy().to_string();
    let (st, v) = o.call(
        "memorize",
        serde_json::json!({ "label": "From the worktree", "text": "written in delta-wt" }),
        &[
            ("Medulla-Caller-Root", wt_s.as_str()),
            ("Medulla-Agent", "claude:maker"),
        ],
    );
    assert_eq!(st, 200, "{v}");
    until(
        &tab,
        &format!(
            "!!document.querySelector('li.card[data-root=\"{}\"] li[data-checkout=\"{wt_s}\"]')",
            delta.display()
        ),
        "the worktree listed on its brain's card",
    );
    assert!(text_of(
        &tab,
        &format!("li.card[data-root=\"{}\"] .checkouts", delta.display())
    )
    .contains("bootstrapped here"));
    let roster_png = screenshot(&tab, "hall-screenshot.png");

    // A brain: its claims, and a claim's history as a timeline.
    click(&tab, &format!("li.card[data-root=\"{alpha}\"] h3 a"));
    until(
        &tab,
        "document.querySelector('li.claim[data-slug=\"build-command\"]')",
        "alpha's claims",
    );
    click(
        &tab,
        "li.claim[data-slug=\"build-command\"] .actions button[aria-expanded]",
    );
    until(
        &tab,
        "document.querySelectorAll('li.claim[data-slug=\"build-command\"] .timeline li').length >= 3",
        "the history timeline",
    );
    let timeline = text_of(&tab, "li.claim[data-slug=\"build-command\"] .timeline");
    assert!(
        timeline.contains("cargo build --release builds the owner"),
        "{timeline}"
    );
    assert!(timeline.contains("--locked"), "{timeline}");
    assert!(
        timeline.contains("promoted to medulla@build-command"),
        "{timeline}"
    );
    let anchored = text_of(&tab, "li.claim[data-slug=\"pool-size\"] .evidence-changed");
    assert!(
        anchored.contains("src/pool.rs") && anchored.contains("changed"),
        "the row says its evidence changed: {anchored}"
    );
    let brain_png = screenshot(&tab, "hall-brain.png");

    // The act log, paged.
    click(&tab, "nav.tabs a[href$=\"/acts\"]");
    until(
        &tab,
        "document.querySelectorAll('table.acts tbody tr').length >= 5",
        "alpha's act log",
    );
    assert!(text_of(&tab, "table.acts").contains("promoted_stamp"));
    tab.evaluate("history.back()", false).unwrap();
    until(
        &tab,
        "document.querySelector('li.claim[data-slug=\"deploy-window\"]')",
        "back to the claims",
    );

    // Search: seek inside this brain from the search box.
    tab.find_element("#seek-query")
        .unwrap()
        .type_into("Tuesdays")
        .unwrap();
    click(&tab, "form[role=search] button[type=submit]");
    until(
        &tab,
        "location.hash.includes('q=Tuesdays') && [...document.querySelectorAll('li.claim')].map(li => li.dataset.slug).join() === 'deploy-window'",
        "the search to find only the deploy window",
    );
    assert!(text_of(&tab, "li.claim[data-slug=\"deploy-window\"]").contains("score"));
    click(&tab, "#seek-clear");
    until(
        &tab,
        "document.querySelectorAll('li.claim').length === 4",
        "every claim again",
    );

    // Promote through the page: the confirmation step first (cancel sends nothing) ...
    click(
        &tab,
        "li.claim[data-slug=\"deploy-window\"] button.act-promote",
    );
    until(
        &tab,
        "document.querySelector('#confirm').open",
        "the confirmation dialog",
    );
    assert!(text_of(&tab, "#confirm").contains("human:founder"));
    click(&tab, "#confirm-cancel");
    until(
        &tab,
        "!document.querySelector('#confirm').open",
        "the dialog to close",
    );
    assert!(
        !o.claims("medulla")
            .iter()
            .any(|c| c["slug"] == "deploy-window"),
        "cancel promotes nothing"
    );
    // ... then confirmed, with a reason.
    click(
        &tab,
        "li.claim[data-slug=\"deploy-window\"] button.act-promote",
    );
    until(
        &tab,
        "document.querySelector('#confirm').open",
        "the confirmation dialog",
    );
    tab.find_element("#promote-reason")
        .unwrap()
        .type_into("every team deploys on Tuesdays")
        .unwrap();
    click(&tab, "#confirm-ok");
    until(
        &tab,
        "[...document.querySelectorAll('#toast p')].some(p => p.textContent.includes('Promoted'))",
        "the promotion to land",
    );
    let copy = o
        .claims("medulla")
        .into_iter()
        .find(|c| c["slug"] == "deploy-window")
        .expect("the promotion landed in the medulla");
    assert_eq!(copy["promotion"]["promoted_by"], "human:founder", "{copy}");
    assert_eq!(
        copy["promotion"]["promotion_reason"],
        "every team deploys on Tuesdays"
    );
    let audit = founder_get(&o, "/api/audit?agent=human:founder");
    let entry = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["slug"] == "deploy-window")
        .unwrap_or_else(|| panic!("the promotion is in the audit log: {audit}"))
        .clone();
    assert_eq!(entry["kind"], "promote");
    assert_eq!(entry["etiquette_expected"], true);
    assert_eq!(entry["origin_brain"], alpha.as_str());
    // The witness is stamped, and the page shows it without a reload.
    until(
        &tab,
        "document.querySelector('li.claim[data-slug=\"deploy-window\"] .badge.promoted')",
        "the stamped witness",
    );

    // Grade a project claim through the page.
    click(&tab, "li.claim[data-slug=\"flaky-test\"] button.act-grade");
    until(
        &tab,
        "document.querySelector('#confirm').open",
        "the grading dialog",
    );
    click(&tab, "#confirm-body input[name=verdict][value=partial]");
    click(&tab, "#confirm-ok");
    until(
        &tab,
        "[...document.querySelectorAll('#toast p')].some(p => p.textContent.includes('Graded'))",
        "the grade to land",
    );
    let graded = o
        .claims(&alpha)
        .into_iter()
        .find(|c| c["slug"] == "flaky-test")
        .unwrap();
    assert_eq!(graded["trust_counts"]["partial"], 1, "{graded}");

    // Retire it through the page: out of recall with its reason, kept in history.
    click(&tab, "li.claim[data-slug=\"flaky-test\"] button.act-retire");
    until(
        &tab,
        "document.querySelector('#confirm').open",
        "the retirement dialog",
    );
    tab.find_element("#retire-reason")
        .unwrap()
        .type_into("the timezone bug was fixed")
        .unwrap();
    click(&tab, "#confirm-ok");
    until(
        &tab,
        "[...document.querySelectorAll('#toast p')].some(p => p.textContent.includes('Retired'))",
        "the retirement to land",
    );
    assert!(
        !o.claims(&alpha).iter().any(|c| c["slug"] == "flaky-test"),
        "retired out of the brain's live claims"
    );
    until(
        &tab,
        "!document.querySelector('li.claim[data-slug=\"flaky-test\"]')",
        "the retired claim to leave the list",
    );

    // The medulla: chains, the etiquette flag, and the changed witness when the owner says so.
    tab.evaluate("location.hash = '#/medulla'", false).unwrap();
    until(
        &tab,
        "document.querySelector('li.claim[data-slug=\"build-command\"] .chain')",
        "the doctrine",
    );
    let chain = text_of(&tab, "li.claim[data-slug=\"build-command\"] .chain");
    assert!(chain.contains(&format!("learned in {alpha}")), "{chain}");
    assert!(chain.contains("promoted by claude:maker"), "{chain}");
    assert!(chain.contains("every repo builds this way"), "{chain}");
    assert!(
        text_of(&tab, "li.claim[data-slug=\"build-command\"] .line1").contains("etiquette breach"),
        "the maker's promotion is flagged"
    );
    assert!(
        text_of(&tab, "li.claim[data-slug=\"deploy-window\"] .chain")
            .contains("promoted by human:founder")
    );
    let served_copy = o
        .claims("medulla")
        .into_iter()
        .find(|c| c["slug"] == "build-command")
        .unwrap();
    assert!(
        served_copy.get("witness_superseded").is_some(),
        "the listing marks a copy whose witness changed: {served_copy}"
    );
    assert!(
        js(
            &tab,
            "!!document.querySelector('li.claim[data-slug=\"build-command\"] .witness')"
        ) == json!(true),
        "a changed witness is shown"
    );
    let medulla_png = screenshot(&tab, "hall-medulla.png");

    // Demote through the page: the medulla copy goes to history, the witness stays.
    click(
        &tab,
        "li.claim[data-slug=\"build-command\"] button.act-demote",
    );
    until(
        &tab,
        "document.querySelector('#confirm').open",
        "the demotion dialog",
    );
    click(&tab, "#confirm-ok");
    assert_eq!(
        js(&tab, "document.querySelector('#confirm').open"),
        json!(true),
        "a demotion needs its reason before it is sent"
    );
    tab.find_element("#grade-note")
        .unwrap()
        .type_into("the build needs --locked now")
        .unwrap();
    click(&tab, "#confirm-ok");
    until(
        &tab,
        "[...document.querySelectorAll('#toast p')].some(p => p.textContent.includes('Demoted'))",
        "the demotion to land",
    );
    assert!(
        !o.claims("medulla")
            .iter()
            .any(|c| c["slug"] == "build-command"),
        "demoted out of the medulla"
    );
    assert!(
        o.claims(&alpha)
            .iter()
            .any(|c| c["slug"] == "build-command"),
        "the project witness is untouched"
    );
    let demotions = founder_get(&o, "/api/audit?agent=human:founder");
    assert!(
        demotions["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "demote" && e["slug"] == "build-command"),
        "the demotion is in the audit log: {demotions}"
    );
    until(
        &tab,
        "!document.querySelector('li.claim[data-slug=\"build-command\"]')",
        "the demoted claim to leave the doctrine list",
    );

    // The mailbox: every fate marked.
    tab.evaluate("location.hash = '#/mailbox'", false).unwrap();
    for (id, fate) in [
        (&wet, "wet_ink"),
        (&fired, "fired_clay"),
        (&flight, "in_flight"),
        (&external, "external"),
    ] {
        let got = until(
            &tab,
            &format!("document.querySelector('li.letter[data-letter=\"{id}\"]')?.dataset.fate"),
            "a letter",
        );
        assert_eq!(got, json!(fate), "letter {id}");
        let mark = text_of(&tab, &format!("li.letter[data-letter=\"{id}\"] .fate"));
        assert!(mark.contains(&fate.replace('_', " ")), "{mark}");
    }
    assert_eq!(text_of(&tab, "dd[data-stat=pending]"), "1");
    let mailbox_png = screenshot(&tab, "hall-mailbox.png");

    // The doctor: misdelivery per week as a chart.
    tab.evaluate("location.hash = '#/doctor'", false).unwrap();
    until(
        &tab,
        "document.querySelectorAll('figure.chart svg rect').length >= 2",
        "the chart",
    );
    assert!(text_of(&tab, "figure.chart").contains("leak"));
    let doctor_png = screenshot(&tab, "hall-doctor.png");
    assert!(
        text_of(&tab, "ul.broken").contains("00000000deadbeef"),
        "the doctor lists the broken brain"
    );
    assert!(
        text_of(&tab, "ul.broken").contains("quarantined (store_damaged)"),
        "the doctor lists the quarantined brain"
    );
    let imported = text_of(&tab, "#imported");
    assert!(
        imported.contains("1 claim from claude") && imported.contains(gamma.as_str()),
        "the doctor counts what came from which tool: {imported}"
    );
    // Near-duplicates, with a one-click retire.
    until(
        &tab,
        "!!document.querySelector('#near-duplicates li[data-slug=\"main-binary\"]')",
        "the near-duplicate cluster",
    );
    click(
        &tab,
        "#near-duplicates li[data-slug=\"main-binary\"] button.act-retire",
    );
    until(
        &tab,
        "document.querySelector('#confirm').open",
        "the retirement dialog",
    );
    tab.find_element("#retire-reason")
        .unwrap()
        .type_into("says what entry-point says")
        .unwrap();
    click(&tab, "#confirm-ok");
    until(
        &tab,
        "[...document.querySelectorAll('#toast p')].some(p => p.textContent.includes('Retired'))",
        "the retirement to land",
    );
    assert!(
        !o.claims(&gamma).iter().any(|c| c["slug"] == "main-binary"),
        "retired from the doctor's cluster"
    );
    // A backup from the doctor, with a click and a confirmation.
    click(&tab, "#backup button.act-backup");
    until(
        &tab,
        "document.querySelector('#confirm').open",
        "the backup dialog",
    );
    click(&tab, "#confirm-ok");
    until(
        &tab,
        "[...document.querySelectorAll('#toast p')].some(p => p.textContent.includes('Backed up'))",
        "the backup to be written",
    );
    let toast = text_of(&tab, "#toast");
    assert!(
        toast.contains("not copied") && toast.contains("damaged"),
        "the quarantined brain is named as not copied: {toast}"
    );
    let written: Vec<_> = std::fs::read_dir(o.home.path().join("backups"))
        .expect("the backups directory")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("manifest.json").exists())
        .collect();
    assert_eq!(written.len(), 1, "one backup, with its manifest");

    // The audit log, filtered by agent.
    tab.evaluate("location.hash = '#/audit?agent=claude%3Amaker'", false)
        .unwrap();
    until(
        &tab,
        "document.querySelector('table.audit tbody tr')",
        "the audit table",
    );
    let rows = js(
        &tab,
        "document.querySelectorAll('table.audit tbody tr').length",
    );
    assert_eq!(rows, json!(1), "only the maker's promotion");
    assert!(text_of(&tab, "table.audit").contains("etiquette breach"));
    let audit_png = screenshot(&tab, "hall-audit.png");

    // Dark, when the system asks for it.
    tab.call_method(Emulation::SetEmulatedMedia {
        media: None,
        features: Some(vec![Emulation::MediaFeature {
            name: "prefers-color-scheme".into(),
            value: "dark".into(),
        }]),
    })
    .expect("emulate a dark system theme");
    tab.evaluate("location.hash = '#/medulla'", false).unwrap();
    until(
        &tab,
        "document.documentElement.dataset.view === 'medulla' && getComputedStyle(document.documentElement).backgroundColor === 'rgb(20, 23, 29)'",
        "the dark theme",
    );
    let dark_png = screenshot(&tab, "hall-dark.png");

    // Nothing the page did tripped its content security policy.
    assert_eq!(
        js(
            &tab,
            "document.documentElement.dataset.cspViolations ?? '0'"
        ),
        json!("0"),
        "the page keeps to its policy"
    );
    for p in [
        roster_png,
        brain_png,
        medulla_png,
        mailbox_png,
        doctor_png,
        audit_png,
        dark_png,
    ] {
        assert!(
            std::fs::metadata(&p).unwrap().len() > 10_000,
            "{} holds a picture",
            p.display()
        );
    }
}
