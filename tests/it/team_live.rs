//! Issue 51, a team's second step on a real PostgreSQL 15: a running owner joins and
//! leaves without a restart, and a verdict racing a supersession on a shared brain is
//! kept on both mirrors and shown without loading the brain.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Owner, OwnerOptions};
use crate::team::{eventually, git, medulla, member_owner, team_database, team_rows};

/// A member's owner with top-level settings of its own in config.toml.
fn member_owner_with(url: &str, top: &str) -> Owner {
    let home = tempfile::tempdir().unwrap();
    let (ok, out) = medulla(home.path(), &["team", "join", url]);
    assert!(ok, "{out}");
    let cfg = home.path().join("config.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, format!("{top}{text}poll_ms = 200\n")).unwrap();
    Owner::start_in(home, tempfile::tempdir().unwrap(), OwnerOptions::default())
}

/// Issue 51: a verdict racing a supersession of the same claim on another owner was
/// silently skipped there, and `team status` and `doctor` loaded every dormant shared
/// brain to find conflicts. The race is kept on both mirrors, naming bob and the version
/// he graded; status and doctor show it with the brain left dormant.
#[test]
fn a_racing_verdict_on_a_shared_brain_is_kept_and_shown_without_loading_it() {
    let (mut pg, urls) = team_database(&["alice".to_string(), "bob".to_string()]);
    let a = member_owner(&urls[0]);
    let b = member_owner_with(&urls[1], "idle_unload_secs = 2\n");
    let ab = a.brain("repo");
    let repo = a.project("repo");
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("README"), "r\n").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    ab.memorize("build cache", "the build cache lives in target-shared");
    let (s, v) = a.founder_call("team_share", json!({}), &ab.headers());
    assert_eq!(s, 200, "{v}");
    let clone = b.projects.path().join("elsewhere");
    let out = Command::new("git")
        .args(["clone", "-q"])
        .arg(&repo)
        .arg(&clone)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let bb = b.brain_at(&clone);
    let root = bb.root.clone();
    let bc = bb.headers();
    let row = eventually(30, "the shared brain on B's clone", || {
        let (_, v) = bb.call("seek", json!({ "query": "build cache", "tier": "project" }));
        v["results"]
            .as_array()?
            .iter()
            .find(|r| r["slug"] == "build-cache" && r["member"] == "alice")
            .cloned()
    });
    let graded = format!("build-cache@{}", row["created"]);

    // Apart: A supersedes, B grades the version it has wrong.
    pg.stop();
    ab.memorize("build cache", "the build cache lives in target-new");
    let (s, v) = bb.call(
        "learn",
        json!({ "slug": "build-cache", "verdict": "wrong" }),
    );
    assert_eq!(s, 200, "{v}");
    pg.start_again();
    let want = json!([{ "member": "bob", "act": "learn wrong", "version": graded }]);
    for (who, o, h) in [("A", &a, ab.headers()), ("B", &b, bc)] {
        eventually(30, "the race on both mirrors", || {
            let (_, v) = o.call(
                "seek",
                json!({ "query": "build cache", "tier": "project" }),
                &h,
            );
            v["results"]
                .as_array()?
                .iter()
                .find(|r| {
                    r["slug"] == "build-cache"
                        && r["text"] == "the build cache lives in target-new"
                        && r["races"] == want
                })
                .cloned()
        });
        let (_, hist) = o.call("history", json!({ "slug": "build-cache" }), &h);
        assert!(
            hist.to_string().contains(&format!("\"races\":{want}")),
            "{who}: the version graded carries it: {hist}"
        );
    }

    // Dormant, the brain's race is still shown, and nothing loads it.
    eventually(20, "B's clone unloaded", || {
        (b.instance(&root)["warm"] == false).then_some(())
    });
    let (_, st) = b.get("/api/team");
    assert!(
        st["conflicts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["slug"] == "build-cache" && r["races"] == want),
        "{st}"
    );
    assert_eq!(
        b.instance(&root)["warm"],
        false,
        "team status left the brain dormant"
    );
    // Doctor's team part is the same report (doctor itself still reads every brain for
    // evidence drift and near-duplicates).
    let (_, doc) = b.get("/api/doctor");
    assert!(doc["team"].to_string().contains("learn wrong"), "{doc}");
}

/// Issue 51: `medulla team join URL` took effect only after an owner restart, and `team
/// leave` needed the owner stopped. A running owner joins and sees the team's doctrine
/// within a second, every answer carrying `team` at once; it leaves while running and
/// stops queueing.
#[test]
fn a_running_owner_joins_and_leaves_the_team_without_a_restart() {
    let (_pg, urls) = team_database(&["alice".to_string(), "bob".to_string()]);
    let a = member_owner(&urls[0]);
    let b = Owner::start();
    let ab = a.brain("app");
    let bb = b.brain("app");
    let w = ab.ok(
        "memorize",
        json!({ "label": "release", "text": "we deploy with make release, never by hand", "tier": "team" }),
    );
    assert_eq!(w["team"]["status"], "connected", "{w}");
    eventually(15, "alice's doctrine in the team's log", || {
        let (_, v) = a.get("/api/team");
        (v["queued"] == 0).then_some(())
    });
    let before = bb.seek("how do we deploy release");
    assert!(before.get("team").is_none(), "no team yet: {before}");

    let (ok, out) = medulla(b.home.path(), &["team", "join", &urls[1]]);
    assert!(ok, "{out}");
    assert!(out.contains("syncs now"), "{out}");
    let joined = Instant::now();
    let row = eventually(10, "the team's doctrine on B, no restart", || {
        team_rows(&bb.seek("how do we deploy release"))
            .into_iter()
            .next()
    });
    let took = joined.elapsed();
    assert_eq!(row["member"], "alice", "{row}");
    eprintln!("the team's doctrine on a running owner {took:?} after its join");
    assert!(took < Duration::from_secs(1), "within a second: {took:?}");
    let w = bb.memorize("lint", "we lint with make lint");
    assert_eq!(
        w["team"]["status"], "connected",
        "every answer says it: {w}"
    );
    // B writes to the team and A reads it: the link runs both ways. The answer reports
    // the team medulla's own soft cap, not the personal medulla's (issue 51).
    let w = bb.ok(
        "memorize",
        json!({ "label": "review", "text": "two approvals before merging", "tier": "team" }),
    );
    assert_eq!(w["medulla_cap"]["tier"], "team", "{w}");
    assert_eq!(w["medulla_cap"]["soft_cap"], 400, "{w}");
    assert_eq!(w["medulla_cap"]["live"], 2, "the team medulla's count: {w}");
    let (_, st) = b.get("/api/team");
    assert_eq!(
        (st["cap"]["tier"].as_str(), st["cap"]["live"].as_u64()),
        (Some("team"), Some(2)),
        "{st}"
    );
    eventually(15, "B's doctrine on A", || {
        team_rows(&ab.seek("approvals before merging"))
            .into_iter()
            .find(|r| r["member"] == "bob")
    });

    // Leaving while running: no team note, no team tier, nothing more queued.
    let (ok, out) = medulla(b.home.path(), &["team", "leave"]);
    assert!(ok, "{out}");
    let cfg = std::fs::read_to_string(b.home.path().join("config.toml")).unwrap();
    assert!(!cfg.contains("[team]"), "{cfg}");
    let w = bb.memorize("after leaving", "stays on this machine");
    assert!(w.get("team").is_none(), "no team, no team note: {w}");
    let (s, v) = bb.call(
        "memorize",
        json!({ "label": "late", "text": "never queued", "tier": "team" }),
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("no_team")),
        "{v}"
    );
    let (s, v) = b.get("/api/team");
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("no_team")),
        "{v}"
    );
    // And it joins again, resuming where its mirror stopped.
    let (ok, out) = medulla(b.home.path(), &["team", "join", &urls[1]]);
    assert!(ok, "{out}");
    eventually(10, "the team again", || {
        let v = bb.seek("approvals before merging");
        (v["team"]["status"] == "connected" && !team_rows(&v).is_empty()).then_some(())
    });
}
