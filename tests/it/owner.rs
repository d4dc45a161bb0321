//! The owner over REST: bootstrap, routing, the memorize transitions, recall tiers,
//! errors and their status codes, the roster after a restart, graceful shutdown.

use serde_json::json;

use crate::common::{header, labels, Owner, OwnerOptions};

const AGENT: (&str, &str) = (header::AGENT, "claude:maker");

#[test]
fn health_says_lexical_when_no_model() {
    let o = Owner::start();
    let (s, v) = o.get("/api/health");
    assert_eq!(s, 200);
    assert_eq!(v["retrieval"], "lexical");
    assert!(v["model_note"].as_str().unwrap().contains("disabled"));
    assert_eq!(v["caption"], "owner-wide numbers");
}

#[test]
fn bootstrap_is_idempotent_and_canonical() {
    let o = Owner::start();
    let root = o.project("alpha");
    let first = o.bootstrap(&root);
    assert_eq!(first["created"], true);
    let fp = first["brain"]["fingerprint"].as_str().unwrap().to_string();
    assert_eq!(fp.len(), 16);
    // The same root spelled with a `..` detour is the same brain.
    let detour = format!("{}/../alpha", root.display());
    let (s, again) = o.call("bootstrap", json!({ "root": detour }), &[]);
    assert_eq!(s, 200);
    assert_eq!(again["created"], false);
    assert_eq!(again["brain"]["fingerprint"], fp.as_str());
    let (s, v) = o.call("bootstrap", json!({ "root": "/definitely/not/a/dir" }), &[]);
    assert_eq!(s, 400, "{v}");
    assert_eq!(v["error"]["code"], "root_not_a_directory");
}

#[test]
fn memorize_transitions_over_http() {
    let o = Owner::start();
    let p = o.brain("p");
    let v = p.memorize("CI flake", "the cache test flakes on 2 cores");
    assert_eq!(v["outcome"], "created");
    assert_eq!(v["claim"]["origin_brain"], p.root.as_str());
    assert_eq!(v["claim"]["source_agent"], "claude:maker");
    assert_eq!(v["claim"]["tier"], "project");
    assert!(
        v.get("reception").is_none(),
        "reception must be silent on match: {v}"
    );

    let v = p.memorize("CI flake", "the cache test flakes on 2 cores");
    assert_eq!(v["outcome"], "unchanged");
    assert_eq!(v["unchanged"], true);

    let v = p.ok(
        "memorize",
        json!({ "label": "CI flake", "text": "the cache test flakes: a race in warmup", "strength": "verified" }),
    );
    assert_eq!(v["outcome"], "superseded");
    assert_eq!(v["previous"]["state"], "outdated");

    let (s, v) = p.call(
        "memorize",
        json!({ "label": "CI flake", "text": "maybe", "strength": "hint" }),
    );
    assert_eq!(s, 409, "{v}");
    assert_eq!(v["error"]["code"], "would_downgrade");
    assert_eq!(v["error"]["live_strength"], "verified");
    assert_eq!(v["error"]["attempted_strength"], "hint");

    let v = p.history("ci-flake");
    let versions = v["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[0]["state"], "outdated");
    assert_eq!(versions[1]["state"], "authored");

    let v = p.seek("cache warmup race");
    assert_eq!(labels(&v), vec!["CI flake"]);
    let row = &v["results"][0];
    for field in [
        "label",
        "slug",
        "text",
        "tier",
        "origin_brain",
        "source_agent",
        "created",
        "age_ms",
        "stale",
        "aged_out",
        "strength",
        "trust",
        "score",
    ] {
        assert!(row.get(field).is_some(), "row lacks {field}: {row}");
    }
    assert_eq!(v["retrieval"], "lexical");
}

#[test]
fn bad_input_gets_typed_errors_naming_the_fix() {
    let o = Owner::start();
    let cr = o.brain("p").root;
    // The caller root alone, by hand: the builder would send the agent these calls lack.
    let h = [(header::CALLER_ROOT, cr.as_str())];
    let (s, v) = o.call("memorize", json!({ "label": "x", "text": "y" }), &h);
    assert_eq!(s, 400);
    assert!(
        v["error"]["message"].as_str().unwrap().contains("agent_id"),
        "{v}"
    );
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "x", "text": "", "agent_id": "claude:maker" }),
        &h,
    );
    assert_eq!((s, v["error"]["code"].as_str()), (400, Some("empty_text")));
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "x", "text": "y", "agent_id": "nobody" }),
        &h,
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("bad_agent_id"))
    );
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "x", "text": "y", "agent_id": "a:b", "colour": 1 }),
        &h,
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("invalid_input"))
    );
    assert!(v["error"]["message"].as_str().unwrap().contains("colour"));
    let (s, v) = o.call("seek", json!({ "query": "x", "tier": "everything" }), &h);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("invalid_input"))
    );
    let (s, v) = o.call("nonesuch", json!({}), &h);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("unknown_tool"))
    );
    let (s, v) = o.call(
        "seek",
        json!({ "query": "x" }),
        &[(header::BRAIN, "/no/such/brain")],
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (404, Some("unknown_brain"))
    );
    let (s, v) = o.call(
        "learn",
        json!({ "slug": "ghost", "verdict": "correct", "agent_id": "a:b" }),
        &h,
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (404, Some("unknown_claim"))
    );
    // Malformed JSON on REST: a typed 400, not a dropped connection.
    let r = o
        .http
        .post(format!("{}/api/call/seek", o.url))
        .body("{not json")
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let v: serde_json::Value = r.json().unwrap();
    assert_eq!(v["error"]["code"], "parse_error");
}

#[test]
fn unrouted_write_is_refused_with_the_fix_and_reads_fall_to_the_medulla() {
    let o = Owner::start();
    let stray = o.project("stray");
    let cr = stray.to_string_lossy().to_string();
    let h = [(header::CALLER_ROOT, cr.as_str()), AGENT];
    let (s, v) = o.call("memorize", json!({ "label": "l", "text": "t" }), &h);
    assert_eq!(s, 409, "{v}");
    assert_eq!(v["error"]["code"], "unbootstrapped");
    assert!(v["error"]["fix"].as_str().unwrap().contains(&cr));
    let (s, v) = o.call("seek", json!({ "query": "anything" }), &h);
    assert_eq!(s, 200);
    assert_eq!(v["tier"], "medulla");
    assert_eq!(v["reception"]["status"], "unrouted");
    assert!(v["reception"]["options"][0]
        .as_str()
        .unwrap()
        .contains("bootstrap"));
    let (_, inst) = o.get("/api/instances");
    assert_eq!(inst["instances"].as_array().unwrap().len(), 0);
    assert_eq!(inst["medulla"]["claims"], 0);
}

#[test]
fn nested_roots_resolve_to_the_innermost_brain() {
    let o = Owner::start();
    let outer = o.brain("outer").path();
    let inner = o.brain("outer/inner").path();
    // Caller roots by hand below the brains: routing from them is the point.
    let deep = o.project("outer/inner/src/deep");
    let cr = deep.to_string_lossy().to_string();
    let (_, v) = o.call(
        "memorize",
        json!({ "label": "n", "text": "nested" }),
        &[(header::CALLER_ROOT, &cr), AGENT],
    );
    assert_eq!(v["brain"]["root"], inner.to_string_lossy().as_ref());
    let side = o.project("outer/src");
    let cr = side.to_string_lossy().to_string();
    let (_, v) = o.call(
        "memorize",
        json!({ "label": "o", "text": "outer" }),
        &[(header::CALLER_ROOT, &cr), AGENT],
    );
    assert_eq!(v["brain"]["root"], outer.to_string_lossy().as_ref());
}

#[test]
fn all_brains_is_explicit_and_grouped_by_origin() {
    let o = Owner::start();
    let (x, y) = (o.brain("x"), o.brain("y"));
    let (xs, ys) = (x.root.clone(), y.root.clone());
    y.call(
        "memorize",
        json!({ "label": "ylabel", "text": "zebra migration route" }),
    );
    x.call(
        "memorize",
        json!({ "label": "xlabel", "text": "zebra stripes" }),
    );
    let (_, v) = x.call("seek", json!({ "query": "zebra" }));
    assert_eq!(
        labels(&v),
        vec!["xlabel"],
        "default seek must not leak: {v}"
    );
    let (_, v) = x.call("seek", json!({ "query": "zebra", "tier": "all-brains" }));
    let groups = v["groups"].as_array().unwrap();
    let origins: Vec<&str> = groups
        .iter()
        .map(|g| g["origin_brain"].as_str().unwrap())
        .collect();
    assert!(
        origins.contains(&xs.as_str()) && origins.contains(&ys.as_str()),
        "{v}"
    );
    for g in groups {
        for r in g["results"].as_array().unwrap() {
            assert_eq!(r["origin_brain"], g["origin_brain"]);
        }
    }
}

#[test]
fn roster_is_disk_truth_across_restarts_and_counts_are_per_brain() {
    let o = Owner::start();
    let (a, b) = (o.brain("a"), o.brain("b"));
    let as_ = a.root.clone();
    for i in 0..3 {
        a.call("memorize", json!({ "label": format!("c{i}"), "text": "t" }));
    }
    a.call("seek", json!({ "query": "t" }));
    let (_, inst) = o.get("/api/instances");
    let row = |inst: &serde_json::Value, root: &str| {
        inst["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["root"] == root)
            .cloned()
            .unwrap()
    };
    let ra = row(&inst, &as_);
    assert_eq!(ra["claims"], 3);
    assert_eq!(ra["writes"], 3);
    assert_eq!(ra["recalls"], 1);
    let rb = row(&inst, &b.root);
    assert_eq!(rb["claims"], 0);
    assert_eq!(rb["writes"], 0);
    assert_eq!(rb["recalls"], 0);

    // Restart over the same home: both brains are listed (dormant), data intact.
    let (o, status) = o.restart(OwnerOptions::default());
    assert!(
        status.success(),
        "owner exits cleanly on SIGTERM: {status:?}"
    );
    let (_, inst) = o.get("/api/instances");
    let rows = inst["instances"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{inst}");
    assert!(
        rows.iter().all(|r| r["warm"] == false),
        "brains start dormant: {inst}"
    );
    let ra = rows.iter().find(|r| r["root"] == as_.as_str()).unwrap();
    assert_eq!(
        ra["claims"], 3,
        "dormant rows carry the manifest's counts: {ra}"
    );
    let (_, v) = o
        .caller_at(&as_)
        .call("seek", json!({ "query": "t", "tier": "project" }));
    assert_eq!(labels(&v).len(), 3);
}

/// The distributor resumes from its saved position after a restart: nothing is filed
/// twice, and letters appended while the owner was down are filed once it is back.
#[test]
fn the_distributor_resumes_without_refiling_or_skipping() {
    let o = Owner::start();
    let p = o.brain("p").path();
    let box_file = p.join(".medulla/inbox.jsonl");
    let letter = |what: &str| json!({ "class": "bug", "repo": p, "what": what });
    let r = o
        .http
        .post(format!("{}/api/reports", o.url))
        .json(&letter("before"))
        .send()
        .unwrap();
    assert!(r.status().is_success());
    let lines = |f: &std::path::Path| {
        std::fs::read_to_string(f)
            .unwrap_or_default()
            .lines()
            .count()
    };
    assert_eq!(lines(&box_file), 1);
    let spool = o.home.path().join("field-reports.jsonl");
    let (mut o, status) = {
        let mut o = o;
        let status = o.terminate();
        // Written straight to the spool while no owner runs, as an agent may.
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&spool)
            .unwrap();
        writeln!(f, "{}", letter("while down")).unwrap();
        (o, status)
    };
    assert!(status.success());
    let home = std::mem::replace(&mut o.home, tempfile::tempdir().unwrap());
    let projects = std::mem::replace(&mut o.projects, tempfile::tempdir().unwrap());
    drop(o);
    let o = Owner::start_in(home, projects, OwnerOptions::default());
    let r: serde_json::Value = o
        .http
        .post(format!("{}/api/mailbox/distribute", o.url))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert!(r["errors"].as_array().unwrap().is_empty(), "{r}");
    let text = std::fs::read_to_string(&box_file).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("while down") && text.matches("before").count() == 1);
}

/// Aging end to end: the owner reads "now" from a file (a test-only setting), so a
/// claim's `stale` and `aged_out` are watched turning true at their thresholds over
/// HTTP, computed at read time and never stored.
#[test]
fn claims_age_at_read_time_by_the_owners_clock() {
    let clock = tempfile::NamedTempFile::new().unwrap();
    let t0: i64 = 1_790_000_000_000;
    let day: i64 = 86_400_000;
    std::fs::write(clock.path(), t0.to_string()).unwrap();
    let o = Owner::start_with(OwnerOptions {
        config_toml: Some(format!(
            "clock_file = {:?}\nstale_after_days = 30\nhalf_life_hours = 1000\n",
            clock.path()
        )),
        ..Default::default()
    });
    let b = o.brain("p");
    let v = b.memorize("aging", "watched over weeks");
    assert_eq!(v["claim"]["created"], t0);
    let row_at = |days: i64| {
        std::fs::write(clock.path(), (t0 + days * day).to_string()).unwrap();
        let (_, v) = b.call("seek", json!({ "query": "aging", "tier": "project" }));
        v["results"][0].clone()
    };
    let r = row_at(10);
    assert_eq!(
        (r["age_ms"].as_i64(), &r["stale"], &r["aged_out"]),
        (Some(10 * day), &json!(false), &json!(false)),
        "{r}"
    );
    let r = row_at(31);
    assert_eq!(
        (&r["stale"], &r["aged_out"]),
        (&json!(true), &json!(false)),
        "past 30 days: {r}"
    );
    let r = row_at(42);
    assert_eq!(
        (&r["stale"], &r["aged_out"]),
        (&json!(true), &json!(true)),
        "past the 1000 h half-life: {r}"
    );
    let r = row_at(1);
    assert_eq!(
        r["stale"], false,
        "never stored: the clock going back un-ages it: {r}"
    );
}

/// Bounded memory: past `max_warm_brains` the least recently used brain is unloaded,
/// and an all-brains read over many brains never leaves more loaded than the budget.
#[test]
fn warm_brains_stay_within_their_budget() {
    let o = Owner::start_with(OwnerOptions {
        config_toml: Some("max_warm_brains = 2\n".into()),
        ..Default::default()
    });
    let roots: Vec<String> = (0..4).map(|i| o.brain(&format!("p{i}")).root).collect();
    for r in &roots {
        o.caller_at(r).memorize("kiwi", &format!("kiwi of {r}"));
        let (_, h) = o.get("/api/health");
        assert!(h["brains_warm"].as_u64().unwrap() <= 2, "{h}");
    }
    let (s, v) = o.call(
        "seek",
        json!({ "query": "kiwi", "tier": "all-brains" }),
        &[],
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        v["groups"].as_array().unwrap().len(),
        4,
        "every brain answered: {v}"
    );
    let (_, h) = o.get("/api/health");
    assert!(h["brains_warm"].as_u64().unwrap() <= 2, "{h}");
}
