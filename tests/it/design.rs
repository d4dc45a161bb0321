//! Loose ends of the design (issue 15): each pinned by a test that failed before.

use serde_json::json;

use crate::common::Owner;

const MAKER: (&str, &str) = ("Medulla-Agent", "claude:maker");

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
    let x = o.project("x");
    o.bootstrap(&x);
    let (_, beat) = o.call(
        "north",
        json!({ "task": "retired rule" }),
        &[("Medulla-Caller-Root", x.to_str().unwrap())],
    );
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
        &[("Medulla-Agent", "human:founder")],
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
    let x = o.project("x");
    o.bootstrap(&x);
    let xr = x.to_string_lossy().into_owned();
    let h = [("Medulla-Caller-Root", xr.as_str()), MAKER];
    o.call(
        "memorize",
        json!({ "label": "cache warmup", "text": "warm the cache before load tests" }),
        &h,
    );
    let (s, p) = o.call(
        "delegate",
        json!({ "task": "triage the quokka outage", "child_agent": "codex:maker" }),
        &h,
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
