//! Memory that stays lean and reviewed (SPEC §14, issue 73): `tend` joins live claims
//! that say the same thing under different labels (one `consolidate` act, undone by
//! `--undo`), never joins claims that disagree (listed for review instead), leaves the
//! rest alone, writes nothing without `apply` and nothing more when run twice; the
//! medulla through its audit path; retirement proposed, never made; the schedule.
//! A person's review is `review.rs`.

use serde_json::{json, Value};

use crate::cli::medulla_cmd;
use crate::common::{header, Brain, Owner, OwnerOptions};

/// What several agents wrote over months: one fact twice under two labels, one subject
/// with two different numbers, and facts that stand alone.
fn months_of_agents(p: &Brain<'_>) {
    p.as_agent("codex:maker").memorize(
        "Billing retry state",
        "Retry state for billing lives in the ledger_retry table",
    );
    p.as_agent("claude:maker").memorize(
        "Where billing keeps retries",
        "The billing service keeps its retry state in the ledger_retry table",
    );
    p.as_agent("codex:maker").memorize(
        "Billing give-up",
        "The billing worker gives up after 5 attempts",
    );
    p.as_agent("gemini:maker").memorize(
        "Billing attempts",
        "The billing worker gives up after 11 attempts",
    );
    p.as_agent("claude:maker").memorize(
        "Release build",
        "Release builds run cargo build --release on the CI runner with 2 cores",
    );
    p.as_agent("claude:maker").memorize(
        "Frontend lint",
        "The frontend is linted by eslint with the airbnb config before each commit",
    );
}

fn tend(o: &Owner, args: Value) -> Value {
    let (s, v) = o.founder_call("tend", args, &[]);
    assert_eq!(s, 200, "{v}");
    v
}

fn slugs(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["slug"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

fn act_count(p: &Brain<'_>) -> usize {
    let (_, v) = p.call("acts", json!({ "limit": 500 }));
    v["acts"].as_array().map_or(0, Vec::len)
}

/// The acts of an `acts` answer by `actor`, as `(kind, subject)`.
pub(crate) fn acts_by(acts: &Value, actor: &str) -> Vec<(String, String)> {
    acts["acts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["actor"] == actor)
        .map(|a| {
            (
                a["kind"].as_str().unwrap_or_default().to_string(),
                a["subject"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn tending_joins_restatements_never_disagreements_and_is_undone() {
    let o = Owner::start();
    let p = o.brain("billing");
    months_of_agents(&p);
    let before = slugs(&Value::Array(p.claims()));
    let acts_before = act_count(&p);

    // An agent does not tend.
    let (s, v) = p.call("tend", json!({ "apply": true }));
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("founder_only")),
        "{v}"
    );

    // A dry run reports, and writes nothing: the same claims, the same acts.
    let dry = tend(&o, json!({ "brain": p.root }));
    assert_eq!(dry["applied"], false, "{dry}");
    assert_eq!(dry["claims"], 6, "{dry}");
    let joins = dry["joins"].as_array().unwrap();
    assert_eq!(joins.len(), 1, "one fact said twice: {dry}");
    let mut members: Vec<String> = joins[0]["joined"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["slug"].as_str().unwrap().to_string())
        .chain([joins[0]["survivor"]["slug"].as_str().unwrap().to_string()])
        .collect();
    members.sort();
    assert_eq!(
        members,
        ["billing-retry-state", "where-billing-keeps-retries"],
        "{dry}"
    );
    assert_eq!(joins[0]["done"], false);
    let disagreements = dry["disagreements"].as_array().unwrap();
    assert_eq!(disagreements.len(), 1, "{dry}");
    let pair = [
        disagreements[0]["a"]["slug"].as_str().unwrap(),
        disagreements[0]["b"]["slug"].as_str().unwrap(),
    ];
    assert_eq!(pair, ["billing-attempts", "billing-give-up"], "{dry}");
    let differs = disagreements[0]["differences"].to_string();
    assert!(
        differs.contains("5") && differs.contains("11"),
        "what differs is named: {differs}"
    );
    assert_eq!(
        slugs(&Value::Array(p.claims())),
        before,
        "a dry run joins nothing"
    );
    assert_eq!(act_count(&p), acts_before, "a dry run records no act");
    let again = tend(&o, json!({ "brain": p.root }));
    assert_eq!(again["joins"], dry["joins"], "the same report twice");

    // Applied: one consolidate act; the joined label goes to history with its reason.
    let applied = tend(&o, json!({ "brain": p.root, "apply": true }));
    let join = &applied["joins"][0];
    assert_eq!(join["done"], true, "{applied}");
    let survivor = join["survivor"]["slug"].as_str().unwrap().to_string();
    let joined = join["joined"][0]["slug"].as_str().unwrap().to_string();
    let after = slugs(&Value::Array(p.claims()));
    assert_eq!(after.len(), 5, "{after:?}");
    assert!(!after.contains(&joined) && after.contains(&survivor));
    for singleton in [
        "release-build",
        "frontend-lint",
        "billing-attempts",
        "billing-give-up",
    ] {
        assert!(
            after.contains(&singleton.to_string()),
            "{singleton} untouched"
        );
    }
    let hist = p.history(&joined);
    let last = hist["versions"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["state"], "outdated", "{hist}");
    assert_eq!(
        last["outdated_reason"],
        format!("consolidated: into {survivor}"),
        "{hist}"
    );
    assert!(last["source_agent"].as_str().is_some());
    let acts = p.acts();
    let kinds: Vec<&str> = acts["acts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["kind"].as_str())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "consolidate").count(),
        1,
        "{acts}"
    );

    // Every fact is still found.
    for (q, want) in [
        (
            "where is billing retry state kept ledger_retry",
            survivor.as_str(),
        ),
        ("billing worker gives up after attempts", "billing-give-up"),
        ("billing worker gives up after attempts", "billing-attempts"),
        ("release build cargo", "release-build"),
        ("frontend eslint", "frontend-lint"),
    ] {
        let seek = p.seek(q);
        let found: Vec<&str> = seek["results"]
            .as_array()
            .unwrap()
            .iter()
            .chain(seek["weak"].as_array().into_iter().flatten())
            .filter_map(|r| r["slug"].as_str())
            .collect();
        assert!(found.contains(&want), "{q}: {want} in {found:?}");
    }

    // Running it again changes nothing.
    let acts_now = act_count(&p);
    let twice = tend(&o, json!({ "brain": p.root, "apply": true }));
    assert_eq!(twice["joins"], json!([]), "{twice}");
    assert_eq!(act_count(&p), acts_now);

    // The review list carries the disagreement and the join with its undo.
    let (s, list) = o.founder_call("review", json!({ "brain": p.root }), &[]);
    assert_eq!(s, 200, "{list}");
    assert_eq!(list["disagreements"].as_array().unwrap().len(), 1, "{list}");
    assert!(list["tended_at"].as_i64().is_some());

    // Undone: the joined label is live again (a revive act), and the survivor stays.
    let undone = tend(&o, json!({ "brain": p.root, "undo": survivor }));
    assert_eq!(
        slugs(&undone["revived"]),
        std::slice::from_ref(&joined),
        "{undone}"
    );
    assert_eq!(slugs(&Value::Array(p.claims())), before);
    let (s, v) = o.founder_call(
        "tend",
        json!({ "brain": p.root, "undo": "release-build" }),
        &[],
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("invalid_input")),
        "{v}"
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("undo"),
        "{v}"
    );

    // The command line says the same.
    let out = medulla_cmd(o.home.path(), &p.path())
        .args(["tend", "--brain", &p.root])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("would join"), "{text}");
    assert!(text.contains("differ"), "{text}");
}

#[test]
fn a_join_keeps_what_a_person_wrote_over_what_an_agent_wrote() {
    let o = Owner::start();
    let p = o.brain("deploys");
    p.as_agent("human:founder").memorize(
        "Image push",
        "The deploy pipeline pushes images to the internal registry before rollout",
    );
    p.as_agent("codex:maker").memorize_with(json!({
        "label": "Registry before rollout",
        "text": "Before rollout the deploy pipeline pushes images to the internal registry",
        "strength": "verified",
    }));
    let applied = tend(&o, json!({ "brain": p.root, "apply": true }));
    let joins = applied["joins"].as_array().unwrap();
    assert_eq!(joins.len(), 1, "{applied}");
    assert_eq!(
        joins[0]["survivor"]["slug"], "image-push",
        "a person's claim survives a stronger agent's: {applied}"
    );
    let live = slugs(&Value::Array(p.claims()));
    assert_eq!(live, ["image-push"]);
}

/// The medulla is tended as a brain is, its joins written through the audit actor (the
/// only path that writes the medulla): one fact of doctrine said twice is joined, by
/// the person who asked, and undone.
#[test]
fn the_medulla_is_tended_through_its_audit_path() {
    let o = Owner::start();
    for (label, text, agent) in [
        (
            "Commit style",
            "Commit messages use the imperative mood and stay under 72 characters",
            "codex:orchestrator",
        ),
        (
            "How commits are written",
            "Write commit messages in the imperative mood, under 72 characters",
            "claude:orchestrator",
        ),
        (
            "Review rule",
            "Every pull request needs one approving review before it merges",
            "claude:orchestrator",
        ),
    ] {
        let (s, v) = o.founder_call(
            "memorize",
            json!({ "tier": "medulla", "label": label, "text": text, "agent_id": agent }),
            &[],
        );
        assert_eq!(s, 200, "{v}");
    }
    let live = |o: &Owner| -> Vec<String> {
        let mut v: Vec<String> = o
            .claims("medulla")
            .iter()
            .map(|c| c["slug"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    let before = live(&o);
    assert_eq!(before.len(), 3, "{before:?}");

    let applied = tend(&o, json!({ "brain": "medulla", "apply": true }));
    assert_eq!(applied["store"], "medulla", "{applied}");
    let joins = applied["joins"].as_array().unwrap();
    assert_eq!(joins.len(), 1, "{applied}");
    assert_eq!(joins[0]["done"], true, "{applied}");
    let survivor = joins[0]["survivor"]["slug"].as_str().unwrap().to_string();
    let joined = joins[0]["joined"][0]["slug"].as_str().unwrap().to_string();
    let mut pair = vec![survivor.clone(), joined.clone()];
    pair.sort();
    assert_eq!(pair, ["commit-style", "how-commits-are-written"]);
    assert_eq!(live(&o).len(), 2);
    assert!(joins[0]["undo"]
        .as_str()
        .unwrap()
        .contains("--brain medulla --undo"));

    // The act is the person's, in the medulla's log.
    let (s, acts) = o.founder_call("acts", json!({ "brain": "medulla", "limit": 50 }), &[]);
    assert_eq!(s, 200, "{acts}");
    assert!(
        acts_by(&acts, "human:founder").contains(&("consolidate".to_string(), joined.clone())),
        "{acts}"
    );
    // Twice: nothing more.
    let again = tend(&o, json!({ "brain": "medulla", "apply": true }));
    assert_eq!(again["joins"].as_array().map(Vec::len), Some(0), "{again}");

    let undone = tend(&o, json!({ "brain": "medulla", "undo": survivor }));
    assert_eq!(
        slugs(&undone["revived"]),
        std::slice::from_ref(&joined),
        "{undone}"
    );
    assert_eq!(live(&o), before);
}

/// Claims aged out that nothing used in their half-life are proposed for retirement in
/// the review list, never retired by tending; one a seek showed, or one not aged out,
/// is not; and a store whose uses were watched for less than a half-life (here: uses
/// recorded from an upgrade on) proposes nothing, since an unrecorded use cannot be
/// told from none.
#[test]
fn what_aged_out_unused_is_proposed_for_retirement_and_nothing_else() {
    let clock = tempfile::NamedTempFile::new().unwrap();
    let t0: i64 = 1_790_000_000_000;
    let hour: i64 = 3_600_000;
    let at = |h: i64| std::fs::write(clock.path(), (t0 + h * hour).to_string()).unwrap();
    let opts = || OwnerOptions {
        config_toml: Some(format!(
            "clock_file = {:?}\nhalf_life_hours = 24\ntend_every_secs = 0\n",
            clock.path()
        )),
        ..Default::default()
    };
    at(0);
    let o = Owner::start_with(opts());
    let root = {
        let p = o.brain("shop");
        p.as_agent("codex:maker").memorize(
            "Old deploy host",
            "Deploys went to the legacy host deploy-01 over rsync",
        );
        p.as_agent("claude:maker").memorize(
            "Image bucket",
            "Product images are stored in the shop-images bucket",
        );
        // A seek shows the bucket at 20 h; at 30 h a claim is written, young.
        at(20);
        let (s, v) = p.call("seek", json!({ "query": "product images bucket" }));
        assert_eq!(s, 200, "{v}");
        assert!(v.to_string().contains("image-bucket"), "{v}");
        at(30);
        p.as_agent("claude:maker").memorize(
            "Cache lifetime",
            "The page cache keeps rendered pages for ten minutes",
        );
        p.root.clone()
    };
    let proposed = |o: &Owner| -> Vec<String> {
        let pass = tend(o, json!({ "brain": root }));
        let mut v: Vec<String> = pass["retire"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["slug"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(proposed(&o), ["old-deploy-host"]);
    // Proposed, never retired: it is live, and the review list names it.
    assert!(o
        .claims(&root)
        .iter()
        .any(|c| c["slug"] == "old-deploy-host"));
    let (s, list) = o.founder_call("review", json!({ "brain": root }), &[]);
    assert_eq!(s, 200, "{list}");
    assert!(list.to_string().contains("old-deploy-host"), "{list}");
    // Past another half-life with no use: the bucket too; the young claim not yet.
    at(50);
    assert_eq!(proposed(&o), ["image-bucket", "old-deploy-host"]);

    // Uses recorded from now on only (as after an upgrade from a version that kept
    // none): nothing is proposed until they were watched for a half-life.
    let usage = o.store_file(&root).parent().unwrap().join("usage.json");
    let (o, _) = o.restart_after(opts(), || std::fs::remove_file(&usage).unwrap());
    assert_eq!(proposed(&o), Vec::<String>::new());
    at(75);
    assert_eq!(
        proposed(&o),
        ["cache-lifetime", "image-bucket", "old-deploy-host"]
    );
}

/// The schedule tends each brain once a period, and lets a dormant brain with nothing
/// written since its last pass sleep (never woken for nothing); a write wakes it, and
/// the next period tends it again.
#[test]
fn the_schedule_tends_and_lets_a_brain_with_nothing_new_sleep() {
    use crate::team::eventually;
    let o = Owner::start_with(OwnerOptions {
        // A period longer than the idle time, as by default (a day against 15 minutes):
        // the brain unloads between two passes.
        config_toml: Some("tend_every_secs = 4\nidle_unload_secs = 1\n".into()),
        ..Default::default()
    });
    let root = {
        let p = o.brain("ledger");
        months_of_agents(&p);
        p.root.clone()
    };
    let report = o.store_file(&root).parent().unwrap().join("tending.json");
    let at = || -> Option<i64> {
        let v: Value = serde_json::from_slice(&std::fs::read(&report).ok()?).ok()?;
        v["at"].as_i64()
    };
    // The first scheduled pass joins the restatement, as `medulla:tend`.
    eventually(30, "a scheduled pass that joined", || {
        let v: Value = serde_json::from_slice(&std::fs::read(&report).ok()?).ok()?;
        v["joins"]
            .as_array()?
            .iter()
            .any(|j| j["done"] == true)
            .then_some(())
    });
    let (s, acts) = o.founder_call("acts", json!({ "brain": root, "limit": 100 }), &[]);
    assert_eq!(s, 200, "{acts}");
    assert!(
        acts_by(&acts, "medulla:tend")
            .iter()
            .any(|(kind, _)| kind == "consolidate"),
        "{acts}"
    );
    // Dormant, and nothing written: several periods pass and the pass never comes back.
    eventually(30, "the brain dormant", || {
        (o.instance(&root)["warm"] == false).then_some(())
    });
    let slept = eventually(10, "the last pass before it slept", at);
    std::thread::sleep(std::time::Duration::from_secs(9));
    assert_eq!(at(), Some(slept), "no pass over a sleeping brain");
    assert_eq!(o.instance(&root)["warm"], false, "never woken for nothing");

    // A write wakes it; the next period tends it again.
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "Deploy day", "text": "Deploys happen on Tuesdays", "agent_id": "codex:maker" }),
        &[(header::CALLER_ROOT, root.as_str())],
    );
    assert_eq!(s, 200, "{v}");
    eventually(30, "a pass after the write", || {
        at().filter(|t| *t > slept).map(|_| ())
    });
}
