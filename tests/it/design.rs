//! Loose ends of the design (issue 15): each pinned by a test that failed before.

use serde_json::json;

use crate::common::{header, Owner};

const MAKER: (&str, &str) = (header::AGENT, "claude:maker");

/// Item 13: a legacy claim whose every version is outdated, imported into the medulla,
/// became live there (only the brain branch demoted it) and surfaced in every beat.
#[test]
fn an_all_outdated_legacy_claim_stays_in_medulla_history() {
    let o = Owner::start();
    let dir = o.projects.path().join("legacy");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("old.light.md"),
        "Node: retired rule\nState: outdated\nCreated: 1700000000000\n\nwe used to do this\n",
    )
    .unwrap();
    let (s, v) = o.founder_call("import", json!({ "dir": dir, "medulla": true }), &[]);
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (v["imported_live"].as_u64(), v["into_history"].as_u64()),
        (Some(0), Some(1)),
        "{v}"
    );
    assert!(
        o.claims("medulla").is_empty(),
        "nothing live in the medulla"
    );
    let (_, h) = o.call(
        "history",
        json!({ "slug": "retired-rule", "tier": "medulla" }),
        &[],
    );
    assert_eq!(h["versions"][0]["state"], "outdated", "{h}");
    let x = o.brain("x");
    let (_, beat) = x.call("north", json!({ "task": "retired rule" }));
    assert!(!beat.to_string().contains("we used to do this"), "{beat}");
}

/// Item 14: `boot_memory set` on the medulla answered `not_yet_available`; it now goes
/// through the audit actor, meets the shared floor, and is a recorded act.
#[test]
fn the_medullas_boot_memory_is_written_through_the_audit_actor() {
    let o = Owner::start();
    let (s, v) = o.call(
        "boot_memory",
        json!({ "op": "set", "key": "editor", "value": "helix", "tier": "medulla" }),
        &[MAKER],
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["tier"], "medulla");
    assert_eq!(
        v["etiquette"]["flag"], "etiquette_breach",
        "a maker's medulla write is flagged: {v}"
    );
    assert!(v["medulla_cap"]["live"].is_u64());
    let (_, v) = o.call("boot_memory", json!({ "op": "get", "key": "editor" }), &[]);
    assert_eq!(
        (v["value"].as_str(), v["tier"].as_str()),
        (Some("helix"), Some("medulla")),
        "{v}"
    );
    let (s, v) = o.call(
        "boot_memory",
        json!({ "op": "set", "key": "token", "value": "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "tier": "medulla" }),
        &[MAKER],
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (422, Some("hygiene_refused")),
        "{v}"
    );
    let (s, _) = o.call(
        "boot_memory",
        json!({ "op": "delete", "key": "editor", "tier": "medulla" }),
        &[(header::AGENT, "human:founder")],
    );
    assert_eq!(s, 200);
    let (_, acts) = o.call("acts", json!({ "brain": "medulla" }), &[]);
    let kinds: Vec<&str> = acts["acts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, vec!["kv_delete", "kv_set"], "{acts}");
}

/// Item 16: the packet's text omitted the task, the child, the debrief call and
/// `MEDULLA_BRAIN`, and with no match promised recent claims it did not list.
#[test]
fn the_delegation_text_is_a_whole_brief() {
    let o = Owner::start();
    let x = o.brain("x");
    let xr = &x.root;
    x.call(
        "memorize",
        json!({ "label": "cache warmup", "text": "warm the cache before load tests" }),
    );
    let (s, p) = x.call(
        "delegate",
        json!({ "task": "triage the quokka outage", "child_agent": "codex:maker" }),
    );
    assert_eq!(s, 200, "{p}");
    let text = p["text"].as_str().unwrap();
    for want in [
        "task: triage the quokka outage",
        "you are: codex:maker",
        &format!("MEDULLA_BRAIN={xr}"),
        "debrief",
        "cache warmup",
        "not matched",
    ] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
    assert_eq!(p["recent_unmatched"][0]["matched_task"], false);
}

/// Item 15: per-brain counters lived in memory and reset on restart, and doctor showed
/// current numbers instead of the weekly series the design asks for.
#[test]
fn counters_persist_per_brain_and_doctor_shows_the_weeks() {
    use crate::common::OwnerOptions;
    let clock = tempfile::NamedTempFile::new().unwrap();
    let week = 7 * 86_400_000i64;
    let t0 = 1_790_000_000_000i64;
    std::fs::write(clock.path(), t0.to_string()).unwrap();
    let opts = || OwnerOptions {
        config_toml: Some(format!("clock_file = {:?}\n", clock.path())),
        ..Default::default()
    };
    let o = Owner::start_with(opts());
    let xr = {
        let x = o.brain("x");
        x.call("memorize", json!({ "label": "a", "text": "one claim" }));
        x.call("north", json!({ "task": "claim" }));
        x.call("north", json!({ "task": "claim" }));
        x.root
    };
    let (o, _) = o.restart(opts());
    let x = o.caller_at(&xr);
    let row = |o: &Owner| {
        let (_, v) = o.get("/api/instances");
        v["instances"][0].clone()
    };
    let r = row(&o);
    assert_eq!(
        (r["memory_beats_served"].as_u64(), r["writes"].as_u64()),
        (Some(2), Some(1)),
        "counters survive a restart: {r}"
    );
    std::fs::write(clock.path(), (t0 + week).to_string()).unwrap();
    x.call("north", json!({ "task": "claim" }));
    let (s, _) = o.call(
        "report",
        json!({ "letter": { "class": "memory_misdelivery", "kind": "false_absence", "what": "said empty", "ts": t0 + week } }),
        &[MAKER],
    );
    assert_eq!(s, 200);
    let (_, d) = o.get("/api/doctor");
    let weekly = d["weekly"].as_array().expect("a weekly series");
    assert_eq!(weekly.len(), 2, "{d}");
    assert_eq!(
        (
            weekly[0]["beats_served"].as_u64(),
            weekly[1]["beats_served"].as_u64()
        ),
        (Some(2), Some(1)),
        "{d}"
    );
    assert_eq!(
        weekly[0]["live_claims"], 1,
        "recorded when the first owner stopped: {d}"
    );
    assert_eq!(weekly[1]["live_claims"], 1, "carried forward: {d}");
    assert_eq!(weekly[1]["misdeliveries"], 1, "{d}");
    assert_eq!(weekly[1]["misdelivery_rate_per_beat"], 1.0, "{d}");
    assert!(weekly[0]["week"].as_str().unwrap() < weekly[1]["week"].as_str().unwrap());
}

/// What a newcomer's day through the command line found wrong in the owner.
#[test]
fn the_owner_answers_a_newcomer_without_contradictions() {
    let o = Owner::start();
    let x = o.project("x");
    std::fs::create_dir_all(x.join(".git")).unwrap();
    let x = o.brain_at(&x);
    let sub = o.project("x/src/deep");
    let xr = x.root.clone();

    // A box is read from a project's subdirectory without naming the brain: the
    // subdirectory is the caller root by hand, since routing by it is the point.
    x.call(
        "report",
        json!({ "letter": { "class": "bug", "repo": xr, "what": "a bug" } }),
    );
    let r = o
        .http
        .get(format!("{}/api/mailbox", o.url))
        .header(header::CALLER_ROOT, sub.to_str().unwrap())
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let v: serde_json::Value = r.json().unwrap();
    assert_eq!(v["served_brain"], xr.as_str(), "{v}");
    assert_eq!(v["counts"]["open"], 1, "{v}");

    // The sweep never shows the text of a letter refused at the floor.
    let token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
    x.call(
        "report",
        json!({ "letter": { "class": "bug", "repo": xr, "what": format!("leaked {token}") } }),
    );
    let (_, sw) = o.get("/api/mailbox/sweep");
    assert!(!sw.to_string().contains(token), "{sw}");
    assert!(
        sw.to_string().contains("refused at the hygiene floor"),
        "{sw}"
    );

    // An unrouted caller is never told to bootstrap a directory bootstrap refuses.
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "l", "text": "t" }),
        &[(header::CALLER_ROOT, "/etc"), MAKER],
    );
    assert_eq!(s, 409, "{v}");
    assert!(
        v["error"]["fix"]
            .as_str()
            .unwrap()
            .contains("can never be a brain's root"),
        "{v}"
    );
    let (_, v) = o.call(
        "memorize",
        json!({ "label": "l", "text": "t" }),
        &[(header::CALLER_ROOT, sub.to_str().unwrap()), MAKER],
    );
    assert!(
        v.get("error").is_none(),
        "routed by the repository root above: {v}"
    );

    // The founder surface that names no agent acts as the founder.
    let (s, v) = o.founder_call(
        "memorize",
        json!({ "label": "founder note", "text": "no agent named" }),
        &[(header::CALLER_ROOT, xr.as_str())],
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["claim"]["source_agent"], "human:founder");

    // Export with history of a promoted claim, then import: the claim is live, and the
    // pre-promotion version (same content) is told apart as a duplicate, not lost.
    o.founder_call(
        "promote",
        json!({ "claim": "founder-note", "reason": "holds everywhere" }),
        &[(header::CALLER_ROOT, xr.as_str())],
    );
    let out = o.projects.path().join("out");
    let (s, v) = o.founder_call(
        "export",
        json!({ "dir": out, "brain": xr, "history": true }),
        &[],
    );
    assert_eq!(s, 200, "{v}");
    let y = o.brain("y");
    let (_, v) = o.founder_call("import", json!({ "dir": out, "brain": y.root }), &[]);
    assert_eq!(v["count_conserved"], true, "{v}");
    assert!(
        y.claims().iter().any(|c| c["slug"] == "founder-note"),
        "live after import"
    );
    let (_, again) = o.founder_call(
        "import",
        json!({ "dir": out, "brain": y.root, "dry_run": true }),
        &[],
    );
    assert_eq!(
        again["imported_live"], 0,
        "a dry re-run agrees with the store: {again}"
    );
}
