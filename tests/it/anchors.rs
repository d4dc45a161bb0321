//! Evidence anchored to the code: a claim whose evidence file changed, disappeared, came
//! back, or was swapped for a link out of the root says so on every surface; `learn
//! correct` re-anchors; files outside the root are never read.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{header, Brain, Owner};

fn rows<'a>(v: &'a Value, key: &str) -> Vec<&'a Value> {
    v[key]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn changed(row: &Value) -> Vec<(String, String)> {
    row["evidence_changed"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let path = match c["lines"].as_array() {
                Some(l) => format!("{}:{}-{}", c["path"].as_str().unwrap(), l[0], l[1]),
                None => c["path"].as_str().unwrap().to_string(),
            };
            (path, c["state"].as_str().unwrap().to_string())
        })
        .collect()
}

/// What the anchoring tests read off a brain: the pool claim on every surface.
trait Surfaces {
    fn surfaces(&self) -> [Value; 4];
    fn assert_marks(&self, want: &[(&str, &str)], why: &str);
}

impl Surfaces for Brain<'_> {
    /// The pool claim as seek, north, history and the listing show it.
    fn surfaces(&self) -> [Value; 4] {
        let seek = self.ok("seek", json!({ "query": "database pool connections" }));
        let seek_row = rows(&seek, "results")
            .into_iter()
            .find(|r| r["slug"] == "pool-size")
            .cloned()
            .unwrap_or_else(|| panic!("seek finds the pool claim: {seek}"));
        let north = self.ok("north", json!({ "task": "change the database pool size" }));
        let north_row = rows(&north, "project")
            .into_iter()
            .chain(rows(&north, "medulla"))
            .find(|r| r["slug"] == "pool-size")
            .cloned()
            .unwrap_or_else(|| panic!("north lists the pool claim: {north}"));
        let hist = self.ok("history", json!({ "slug": "pool-size" }));
        let live = rows(&hist, "versions")
            .into_iter()
            .find(|r| r["state"] == "authored")
            .cloned()
            .unwrap();
        [seek_row, north_row, live, north]
    }

    fn assert_marks(&self, want: &[(&str, &str)], why: &str) {
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(p, s)| (p.to_string(), s.to_string()))
            .collect();
        let [seek, north_row, live, north] = self.surfaces();
        assert_eq!(changed(&seek), want, "seek, {why}: {seek}");
        assert_eq!(changed(&north_row), want, "north, {why}: {north_row}");
        assert_eq!(changed(&live), want, "history, {why}: {live}");
        let listed = self
            .claims()
            .into_iter()
            .find(|r| r["slug"] == "pool-size")
            .unwrap();
        assert_eq!(changed(&listed), want, "the listing, {why}: {listed}");
        let verify: Vec<&Value> = rows(&north, "verify_first");
        assert_eq!(
            verify.len(),
            usize::from(!want.is_empty()),
            "north's verify-first group, {why}: {north}"
        );
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

const POOL: &str = "use deadpool;\nconst MAX: usize = 20;\nconst MIN: usize = 2;\n";

#[test]
fn a_claim_says_when_the_code_under_it_changed_moved_or_came_back() {
    let o = Owner::start();
    let root = o.project("p");
    std::fs::create_dir_all(root.join("src")).unwrap();
    write(&root.join("src/pool.rs"), POOL);
    let outside = o.project("elsewhere");
    write(&outside.join("secret.txt"), "not yours");
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("link-out")).unwrap();
    let b = o.brain_at(&root);
    let v = b.memorize_with(json!({
        "label": "pool size",
        "text": "the database pool is capped at 20 connections",
        "evidence": [
            "src/pool.rs",
            "src/pool.rs:2-3",
            "../elsewhere/secret.txt",
            outside.join("secret.txt").to_string_lossy(),
            "link-out",
            "src/gone.rs",
            "commit 1a2b3c",
        ],
    }));
    let unanchored: Vec<&str> = rows(&v, "unanchored")
        .iter()
        .map(|u| u["evidence"].as_str().unwrap())
        .collect();
    assert_eq!(
        unanchored,
        vec![
            "../elsewhere/secret.txt",
            outside.join("secret.txt").to_str().unwrap(),
            "link-out",
            "src/gone.rs",
        ],
        "files outside the root, a link out of it and a missing file are said unanchored: {v}"
    );
    assert!(v["unanchored"][0]["why"]
        .as_str()
        .unwrap()
        .contains("outside the brain's root"));
    b.assert_marks(&[], "as written");

    // Line 1 changes: the whole file's anchor moves, the anchored lines 2-3 do not.
    write(&root.join("src/pool.rs"), &POOL.replace("deadpool", "bb8"));
    b.assert_marks(
        &[("src/pool.rs", "changed")],
        "after an edit outside the range",
    );
    let (_, doctor) = o.get("/api/doctor");
    let drift = &doctor["evidence_drift"][0];
    assert_eq!(drift["drifted"], 1, "{doctor}");
    assert_eq!(drift["anchored"], 1);

    write(&root.join("src/pool.rs"), &POOL.replace("20", "64"));
    b.assert_marks(
        &[("src/pool.rs", "changed"), ("src/pool.rs:2-3", "changed")],
        "after an edit inside the range",
    );

    std::fs::remove_file(root.join("src/pool.rs")).unwrap();
    b.assert_marks(
        &[("src/pool.rs", "missing"), ("src/pool.rs:2-3", "missing")],
        "after the file was deleted",
    );

    write(&root.join("src/pool.rs"), POOL);
    b.assert_marks(&[], "after the file came back as it was");

    // The file is swapped for a link that leads out of the root: never followed.
    std::fs::remove_file(root.join("src/pool.rs")).unwrap();
    write(&outside.join("pool.rs"), POOL);
    std::os::unix::fs::symlink(outside.join("pool.rs"), root.join("src/pool.rs")).unwrap();
    b.assert_marks(
        &[("src/pool.rs", "missing"), ("src/pool.rs:2-3", "missing")],
        "after the file became a link out of the root",
    );
    std::fs::remove_file(root.join("src/pool.rs")).unwrap();

    // Judged correct as the code is now: re-anchored, a recorded act, no mark.
    write(&root.join("src/pool.rs"), &POOL.replace("20", "64"));
    b.ok(
        "learn",
        json!({ "slug": "pool-size", "verdict": "correct" }),
    );
    b.assert_marks(&[], "after learn correct re-anchored it");
    let acts = b.ok("acts", json!({ "limit": 2 }));
    assert_eq!(acts["acts"][0]["kind"], "reanchor", "{acts}");
    assert_eq!(acts["acts"][1]["kind"], "learn");
}

#[test]
fn a_medulla_copy_shows_its_witness_drift_only_to_the_witness_brain() {
    let o = Owner::start();
    let root = o.project("p");
    let other = o.project("q");
    std::fs::create_dir_all(root.join("src")).unwrap();
    write(&root.join("src/pool.rs"), POOL);
    let p = o.brain_at(&root);
    let q = o.brain_at(&other);
    p.memorize_with(
        json!({ "label": "pool size", "text": "the database pool is capped at 20 connections", "evidence": ["src/pool.rs"] }),
    );
    let (s, v) = o.founder_call(
        "promote",
        json!({ "claim": "pool-size", "reason": "every service uses this pool" }),
        &[(header::CALLER_ROOT, root.to_str().unwrap())],
    );
    assert_eq!(s, 200, "{v}");
    write(&root.join("src/pool.rs"), &POOL.replace("20", "64"));
    let seek = |b: &Brain| {
        let v = b.seek("database pool connections");
        rows(&v, "results")
            .into_iter()
            .find(|r| r["slug"] == "pool-size")
            .cloned()
            .unwrap_or_else(|| panic!("{v}"))
    };
    let mine = seek(&p);
    assert_eq!(
        mine["tier"], "medulla",
        "one row per promoted claim: {mine}"
    );
    assert_eq!(
        changed(&mine),
        vec![("src/pool.rs".to_string(), "changed".to_string())],
        "the witness's own brain sees the drift: {mine}"
    );
    let theirs = seek(&q);
    assert!(
        changed(&theirs).is_empty(),
        "another brain's caller never has the witness's files read for it: {theirs}"
    );
}
