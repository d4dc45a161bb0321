//! Recall as an agent meets it, with the real embedding model: the relevance floor (no
//! false presence, and still no false absence), one row per promoted claim, a medulla
//! copy whose witness changed, filters, and compact rows.

use serde_json::{json, Value};

use crate::common::{labels, Brain, Owner, OwnerOptions};

fn slugs(rows: &Value) -> Vec<String> {
    rows.as_array()
        .unwrap_or(&vec![])
        .iter()
        .map(|r| r["slug"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// Three unrelated claims in one brain.
fn three_claims(o: &Owner) -> Brain<'_> {
    let x = o.brain("x");
    for (label, text) in [
        (
            "Deploys",
            "deploys go out through the release pipeline on Tuesdays after the staging soak",
        ),
        (
            "Connection pool",
            "the database connection pool holds 20 connections; raise it in config/db.toml",
        ),
        (
            "Flaky test",
            "the login integration test is flaky on CI because of a race in the session fixture",
        ),
    ] {
        x.memorize(label, text);
    }
    x
}

/// Nothing unrelated surfaces: an off-topic query returns no rows, yet the answer says
/// memory exists (and how much), so absence is never claimed either.
#[test]
fn the_floor_keeps_unrelated_claims_out_and_says_memory_exists() {
    let o = Owner::start_with(OwnerOptions::with_model());
    let x = three_claims(&o);

    let v = x.ok(
        "seek",
        json!({ "query": "kubernetes ingress", "tier": "project" }),
    );
    assert_eq!(v["retrieval"], "hybrid", "{v}");
    assert_eq!(slugs(&v["results"]), Vec::<String>::new(), "{v}");
    assert_eq!(v["memory_exists"]["project"], 3, "{v}");
    assert!(
        v["note"].as_str().unwrap().starts_with("memory exists"),
        "{v}"
    );

    // The default beat says the same for both stores.
    let v = x.ok("seek", json!({ "query": "kubernetes ingress" }));
    assert_eq!(v["results"], json!([]), "{v}");
    assert_eq!(
        v["memory_exists"],
        json!({ "project": 3, "medulla": 0 }),
        "{v}"
    );

    // A related query finds its claim and only that one, paraphrased or not.
    let v = x.ok(
        "seek",
        json!({ "query": "how many database connections", "tier": "project" }),
    );
    assert_eq!(slugs(&v["results"]), ["connection-pool"], "{v}");
    assert!(v.get("memory_exists").is_none(), "{v}");

    // north lists what matched the task, not the whole store.
    let v = x.ok("north", json!({ "task": "change the database pool" }));
    assert_eq!(slugs(&v["project"]), ["connection-pool"], "{v}");
    assert_eq!(
        v["note"], "1 project and 0 medulla claims matched the task",
        "{v}"
    );

    // An empty brain says there is no memory at all.
    let y = o.brain("y");
    let v = y.ok(
        "seek",
        json!({ "query": "kubernetes ingress", "tier": "project" }),
    );
    assert_eq!(v["memory_exists"]["project"], 0, "{v}");
    assert!(
        v["note"].as_str().unwrap().starts_with("no memory yet"),
        "{v}"
    );
}

/// A promoted claim surfaces once, as the medulla copy naming both identities; when its
/// witness changes, the copy says so everywhere, and another project never sees the
/// witness's new text.
#[test]
fn a_promoted_claim_surfaces_once_and_a_changed_witness_is_flagged() {
    let o = Owner::start_with(OwnerOptions::with_model());
    let x = three_claims(&o);
    let y = o.brain("y");
    x.as_agent("claude:orchestrator").ok(
        "promote",
        json!({ "claim": "connection-pool", "reason": "every service shares this pool rule" }),
    );

    let v = x.ok("seek", json!({ "query": "database connection pool" }));
    let rows = v["results"].as_array().unwrap();
    let pool: Vec<&Value> = rows
        .iter()
        .filter(|r| r["slug"] == "connection-pool")
        .collect();
    assert_eq!(pool.len(), 1, "one row per promoted claim: {v}");
    assert_eq!(pool[0]["tier"], "medulla");
    assert_eq!(pool[0]["identities"]["medulla"], "medulla#connection-pool");
    assert_eq!(
        pool[0]["identities"]["witness"],
        format!("{}#connection-pool", x.root)
    );
    let v = x.ok("north", json!({ "task": "database connection pool" }));
    let both = slugs(&v["project"])
        .into_iter()
        .chain(slugs(&v["medulla"]))
        .filter(|s| s == "connection-pool")
        .count();
    assert_eq!(both, 1, "north lists it once too: {v}");

    // The witness changes in its project.
    let new_text = "the database connection pool holds 40 connections since the March load test";
    x.ok(
        "memorize",
        json!({ "label": "Connection pool", "text": new_text }),
    );

    // Its own project sees the change and the new text.
    let v = x.ok(
        "seek",
        json!({ "query": "database connection pool", "tier": "medulla" }),
    );
    let copy = &v["results"][0];
    assert_eq!(copy["slug"], "connection-pool", "{v}");
    assert_eq!(
        copy["witness_superseded"]["witness"],
        format!("{}#connection-pool", x.root)
    );
    assert_eq!(copy["witness_superseded"]["by_version"], 3, "{v}");
    assert_eq!(copy["witness_superseded"]["new_text"], new_text);

    // Another project sees that the doctrine disagrees with its origin, not the text.
    let v = y.ok("seek", json!({ "query": "database connection pool" }));
    let copy = &v["results"][0];
    assert_eq!(copy["slug"], "connection-pool", "{v}");
    assert!(copy["witness_superseded"].is_object(), "{v}");
    assert!(copy["witness_superseded"].get("new_text").is_none(), "{v}");
    assert!(!v.to_string().contains("40 connections"), "{v}");
    let v = y.ok("north", json!({ "task": "database connection pool" }));
    let d = &v["disagreements"][0];
    assert_eq!(d["slug"], "connection-pool", "{v}");
    assert!(d.get("witness_text").is_none(), "{v}");
    assert!(!v.to_string().contains("40 connections"), "{v}");

    // The audit log recorded when it was noticed (not as an etiquette breach), and the
    // doctor lists it.
    let (s, audit) = o.get("/api/audit");
    assert_eq!(s, 200);
    let noticed = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "witness_superseded")
        .unwrap_or_else(|| panic!("no witness_superseded entry: {audit}"));
    assert_eq!(noticed["slug"], "connection-pool");
    assert!(noticed.get("flag").is_none(), "{noticed}");
    let (s, doctor) = o.get("/api/doctor");
    assert_eq!(s, 200);
    assert!(
        doctor["witnesses_superseded"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["slug"] == "connection-pool"),
        "{doctor}"
    );
}

/// Filters narrow the candidates by agent, strength, trust, time and evidence; bad ones
/// are typed errors that name the fix.
#[test]
fn filters_narrow_recall_and_bad_ones_are_refused() {
    let o = Owner::start_with(OwnerOptions::with_model());
    let x = o.brain("x");
    let write = |label: &str, text: &str, agent: &str, strength: &str, evidence: &[&str]| {
        let v = x.as_agent(agent).ok(
            "memorize",
            json!({ "label": label, "text": text, "strength": strength, "evidence": evidence }),
        );
        v["claim"]["created"].as_i64().unwrap()
    };
    let t1 = write(
        "Cache keys",
        "the cache keys include the tenant id",
        "claude:maker",
        "observed",
        &["src/cache/keys.rs"],
    );
    std::thread::sleep(std::time::Duration::from_millis(5));
    let t2 = write(
        "Cache eviction",
        "the cache evicts least recently used entries first",
        "codex:reviewer",
        "verified",
        &["docs/cache.md"],
    );
    x.ok(
        "learn",
        json!({ "slug": "cache-eviction", "verdict": "correct" }),
    );
    let seek = |filter: Value| {
        let v = x.ok(
            "seek",
            json!({ "query": "cache", "tier": "project", "filter": filter }),
        );
        let mut s = slugs(&v["results"]);
        s.sort();
        s
    };
    assert_eq!(seek(json!({})), ["cache-eviction", "cache-keys"]);
    assert_eq!(seek(json!({ "agent": "claude:maker" })), ["cache-keys"]);
    assert_eq!(seek(json!({ "agent": "codex" })), ["cache-eviction"]);
    assert_eq!(
        seek(json!({ "min_strength": "verified" })),
        ["cache-eviction"]
    );
    assert_eq!(seek(json!({ "min_trust": 0.6 })), ["cache-eviction"]);
    assert_eq!(seek(json!({ "since": t2 })), ["cache-eviction"]);
    assert_eq!(seek(json!({ "until": t1 })), ["cache-keys"]);
    assert_eq!(seek(json!({ "evidence": "src/" })), ["cache-keys"]);
    // Filtered out is not absent: the answer still says memory exists.
    let v = x.ok(
        "seek",
        json!({ "query": "cache", "tier": "project", "filter": { "agent": "gemini" } }),
    );
    assert_eq!(v["memory_exists"]["project"], 2, "{v}");
    // north takes the same filters.
    let v = x.ok(
        "north",
        json!({ "task": "cache", "filter": { "evidence": "docs/" } }),
    );
    assert_eq!(slugs(&v["project"]), ["cache-eviction"], "{v}");

    for (filter, needle) in [
        (json!({ "min_trust": 2.0 }), "min_trust"),
        (json!({ "since": t2, "until": t1 }), "since is after until"),
        (json!({ "min_strength": "certain" }), "bad arguments"),
        (json!({ "colour": "red" }), "bad arguments"),
    ] {
        let (s, v) = x.call("seek", json!({ "query": "cache", "filter": filter }));
        assert_eq!(s, 400, "{filter}: {v}");
        assert_eq!(v["error"]["code"], "invalid_input", "{filter}: {v}");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(needle),
            "{filter}: {v}"
        );
    }
}

/// Rows are compact by default (what an agent needs to use and cite a claim) and carry
/// the full provenance with `detail: true`.
#[test]
fn rows_are_compact_unless_detail_is_asked() {
    let o = Owner::start_with(OwnerOptions::with_model());
    let x = three_claims(&o);
    let ask = |detail: bool| {
        let v = x.ok(
            "seek",
            json!({ "query": "database connection pool", "detail": detail }),
        );
        v["results"][0].clone()
    };
    let compact = ask(false);
    let full = ask(true);
    for k in [
        "slug",
        "label",
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
        assert!(
            compact.get(k).is_some(),
            "compact rows carry {k}: {compact}"
        );
        assert_eq!(compact[k] == Value::Null, full[k] == Value::Null, "{k}");
    }
    for k in ["content_hash", "version", "trust_counts", "state"] {
        assert!(
            compact.get(k).is_none(),
            "compact rows leave out {k}: {compact}"
        );
        assert!(full.get(k).is_some(), "detail rows carry {k}: {full}");
    }
    assert!(compact.to_string().len() < full.to_string().len());
}

/// Issue 49 (law 4): a brain held `release process: We release with make release; never
/// tag by hand.`, and `seek "how do we ship a version"` said memory exists but none
/// cleared the floor: the claim that answers the question was hidden. It comes back as
/// a weak row, labelled, under a heading; the confident rows stay confident, and a beat
/// (`north`) never carries weak rows.
#[test]
fn a_paraphrase_the_floor_half_recognises_comes_back_as_a_labelled_weak_row() {
    let o = Owner::start_with(OwnerOptions::with_model());
    let x = three_claims(&o);
    x.memorize(
        "release process",
        "We release with make release; never tag by hand.",
    );
    let v = x.ok("seek", json!({ "query": "how do we ship a version" }));
    assert_eq!(v["retrieval"], "hybrid", "{v}");
    let found: Vec<String> = slugs(&v["results"])
        .into_iter()
        .chain(slugs(&v["weak"]))
        .collect();
    assert!(found.contains(&"release-process".to_string()), "{v}");
    let weak = v["weak"].as_array().cloned().unwrap_or_default();
    assert!(weak.len() <= 3, "{v}");
    for r in &weak {
        assert_eq!(r["weak"], true, "{r}");
        assert!(r["score"].is_number() && r["lexical"].is_number(), "{r}");
        assert!(r["cosine"].is_number(), "{r}");
    }
    for r in v["results"].as_array().unwrap() {
        assert!(r.get("weak").is_none(), "a confident row is not weak: {r}");
    }
    if !weak.is_empty() {
        assert!(
            v["below_floor"]
                .as_str()
                .is_some_and(|n| n.contains("did not clear the relevance floor")),
            "{v}"
        );
    }
    // The MCP text shows the heading before the weak rows.
    let mut m = o.mcp();
    let root = x.root.clone();
    m.initialize(&[("Medulla-Caller-Root", root.as_str())]);
    let r = m.request(
        "tools/call",
        json!({ "name": "seek", "arguments": { "query": "how do we ship a version" } }),
        &[("Medulla-Caller-Root", root.as_str())],
    );
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    if !weak.is_empty() {
        let note = text
            .find("did not clear the relevance floor")
            .expect("the heading");
        let row = text.find("\"weak\":[").expect("the weak list");
        assert!(note < row, "the heading comes first: {text}");
    }
    // A beat stays confident.
    let n = x.ok("north", json!({ "task": "how do we ship a version" }));
    assert!(!n.to_string().contains("\"weak\":true"), "{n}");
    assert!(
        labels(&json!({"results": n["project"]})).is_empty(),
        "no weak row among the beat's rows: {n}"
    );
    // ... and says that seek would show what fell short of the floor.
    let note = n["note"].as_str().unwrap_or_default();
    assert!(note.contains("weak match") && note.contains("seek"), "{n}");
}
