//! Retirement: a claim taken out of recall with a reason, history kept, a recorded act;
//! on the medulla through the audit actor; the label written again later.

use serde_json::json;

use crate::cli::medulla;
use crate::common::{labels, Owner};

#[test]
fn a_retired_project_claim_leaves_recall_keeps_its_history_and_can_be_written_again() {
    let o = Owner::start();
    let p = o.brain("p");
    p.memorize("pool size", "the database pool is capped at 20 connections");

    let (s, v) = p.call("retire", json!({ "slug": "pool-size" }));
    assert_eq!(s, 400, "a reason is required: {v}");
    assert_eq!(v["error"]["code"], "invalid_input");

    let v = p.ok(
        "retire",
        json!({ "slug": "pool-size", "reason": "the pool module was rewritten" }),
    );
    assert_eq!(v["retired"]["state"], "outdated");
    assert_eq!(
        v["retired"]["outdated_reason"],
        "retired: the pool module was rewritten"
    );
    assert_eq!(v["retired"]["outdated_by"], "claude:maker");

    let seek = p.seek("database pool connections");
    assert!(
        !labels(&seek).contains(&"pool size".to_string()),
        "a retired claim never surfaces: {seek}"
    );
    let hist = p.history("pool-size");
    assert_eq!(hist["versions"][0]["outdated_by"], "claude:maker");
    let acts = p.acts();
    assert_eq!(acts["acts"][0]["kind"], "retire", "{acts}");
    assert_eq!(acts["acts"][0]["actor"], "claude:maker");

    let again = p.memorize("pool size", "the database pool is capped at 64 connections");
    assert_eq!(again["claim"]["version"], 2, "the chain goes on: {again}");
    assert_eq!(
        labels(&p.seek("database pool connections")),
        vec!["pool size"]
    );
}

#[test]
fn retiring_a_medulla_claim_goes_through_the_audit_and_leaves_the_witness() {
    let o = Owner::start();
    let p = o.project("proj");
    assert_eq!(medulla(&o, &p, &["bootstrap"]).code, 0);
    assert_eq!(
        medulla(
            &o,
            &p,
            &["memorize", "--label", "tabs", "--text", "indent with tabs"]
        )
        .code,
        0
    );
    assert_eq!(
        medulla(
            &o,
            &p,
            &["promote", "--claim", "tabs", "--reason", "holds everywhere"]
        )
        .code,
        0
    );
    let r = medulla(
        &o,
        &p,
        &[
            "retire",
            "tabs",
            "--tier",
            "medulla",
            "--reason",
            "the team moved to spaces",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("retired from the medulla"),
        "{}",
        r.stdout
    );
    assert!(
        o.claims("medulla").is_empty(),
        "out of the medulla's recall"
    );
    assert_eq!(o.claims(&p.to_string_lossy()).len(), 1, "witness untouched");
    let (s, audit) = o.founder_call("audit", json!({}), &[]);
    assert_eq!(s, 200, "{audit}");
    let entry = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "retire")
        .unwrap_or_else(|| panic!("a retire entry in the audit log: {audit}"));
    assert_eq!(entry["reason"], "retired: the team moved to spaces");
    assert_eq!(entry["agent"], "human:founder");
}
