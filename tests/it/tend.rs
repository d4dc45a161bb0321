//! Memory that stays lean and reviewed (SPEC §14, issue 73): `tend` joins live claims
//! that say the same thing under different labels (one `consolidate` act, undone by
//! `--undo`), never joins claims that disagree (listed for review instead), leaves the
//! rest alone, writes nothing without `apply` and nothing more when run twice; `review`
//! is a person's look at what agents wrote, each act recorded, an agent refused.

use serde_json::{json, Value};

use crate::cli::medulla_cmd;
use crate::common::{header, labels, Brain, Owner, OwnerOptions};

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
fn a_person_reviews_what_agents_wrote_and_an_agent_cannot() {
    let o = Owner::start();
    let p = o.brain("shop");
    let agent = p.as_agent("codex:maker");
    agent.memorize(
        "Cache TTL",
        "product pages are cached for 10 minutes in Redis",
    );
    agent.memorize(
        "Checkout flag",
        "the new checkout is behind the CHECKOUT_V2 flag",
    );
    agent.memorize("Old search", "search runs on the legacy Solr cluster");
    p.as_agent("human:founder")
        .memorize("Code owners", "the payments team owns src/payments");

    // The list: the three agents wrote, newest first, with their provenance.
    let (s, v) = o.founder_call("review", json!({ "brain": p.root }), &[]);
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        v["unreviewed"], 3,
        "a person's own claim needs no review: {v}"
    );
    let order: Vec<&str> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["claim"]["slug"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["old-search", "checkout-flag", "cache-ttl"]);
    assert_eq!(v["claims"][0]["claim"]["source_agent"], "codex:maker");
    assert_eq!(v["claims"][0]["written_from"], p.root.as_str(), "{v}");

    // An agent cannot review, whichever op it asks.
    for op in ["list", "keep"] {
        let (s, r) = agent.call("review", json!({ "op": op, "slug": "cache-ttl" }));
        assert_eq!(
            (s, r["error"]["code"].as_str()),
            (403, Some("founder_only")),
            "{r}"
        );
    }

    // keep, keep --verify, retire, edit, merge: each an act by a person.
    let review = |args: Value| {
        let mut a = args;
        a["brain"] = json!(p.root);
        let (s, v) = o.founder_call("review", a, &[]);
        assert_eq!(s, 200, "{v}");
        v
    };
    let kept = review(json!({ "op": "keep", "slug": "cache-ttl" }));
    assert_eq!(kept["done"]["act"], "review", "{kept}");
    assert_eq!(kept["unreviewed"], 2);
    let verified = review(json!({ "op": "keep", "slug": "checkout-flag", "verify": true }));
    assert_eq!(
        verified["done"]["claim"]["strength"], "verified",
        "{verified}"
    );
    assert_eq!(verified["unreviewed"], 1);
    let retired = review(
        json!({ "op": "retire", "slug": "old-search", "reason": "search moved to Postgres full text" }),
    );
    assert_eq!(retired["done"]["claim"]["state"], "outdated", "{retired}");
    assert_eq!(retired["unreviewed"], 0);

    agent.memorize("Deploy window", "deploys happen on Tuesdays after 14:00");
    let edited = review(
        json!({ "op": "edit", "slug": "deploy-window", "text": "deploys happen on Tuesdays and Thursdays after 14:00" }),
    );
    assert_eq!(
        edited["done"]["claim"]["source_agent"], "human:founder",
        "{edited}"
    );
    assert!(edited["done"]["claim"]["text"]
        .as_str()
        .unwrap()
        .contains("Thursdays"));

    // An edit carrying a secret is refused by the floor, and the claim is as it was.
    let (s, v) = o.founder_call(
        "review",
        json!({ "brain": p.root, "op": "edit", "slug": "deploy-window", "text": "deploy with the token ghp_16C7e42F292c6912E7710c838347Ae178B4a" }),
        &[],
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (422, Some("hygiene_refused")),
        "{v}"
    );
    assert!(!p
        .claims()
        .iter()
        .any(|c| c["text"].to_string().contains("ghp_")));

    agent.memorize(
        "Image store",
        "product images are stored in the S3 bucket shop-images",
    );
    p.as_agent("claude:maker").memorize(
        "Where images live",
        "the shop keeps product images in the shop-images S3 bucket",
    );
    let listed = review(json!({}));
    let near = listed["claims"][0]["near"].to_string();
    assert!(
        near.contains("image-store"),
        "near-duplicates shown: {listed}"
    );
    let merged =
        review(json!({ "op": "merge", "slug": "image-store", "with": ["where-images-live"] }));
    assert_eq!(
        merged["done"]["joined"],
        json!(["where-images-live"]),
        "{merged}"
    );
    assert_eq!(merged["unreviewed"], 0, "{merged}");

    let acts = p.acts();
    let by_person: Vec<(String, String)> = acts["acts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["actor"] == "human:founder")
        .map(|a| {
            (
                a["kind"].as_str().unwrap().to_string(),
                a["subject"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    for want in [
        ("review", "cache-ttl"),
        ("retire", "old-search"),
        ("consolidate", "where-images-live"),
        ("review", "image-store"),
    ] {
        assert!(
            by_person.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} in {by_person:?}"
        );
    }
    assert!(
        by_person
            .iter()
            .filter(|(k, s)| k == "memorize" || s == "deploy-window")
            .count()
            >= 1,
        "{by_person:?}"
    );

    // Typed errors that name the fix.
    let (s, v) = o.founder_call("review", json!({ "brain": "/no/such/project" }), &[]);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (404, Some("unknown_brain")),
        "{v}"
    );
    let (s, v) = o.founder_call(
        "review",
        json!({ "brain": p.root, "op": "keep", "slug": "no-such-claim" }),
        &[],
    );
    assert_eq!(v["error"]["code"], "unknown_claim", "{s} {v}");
    let (s, v) = o.founder_call(
        "review",
        json!({ "brain": p.root, "op": "approve", "slug": "cache-ttl" }),
        &[],
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("invalid_input")),
        "{v}"
    );
    let m = v["error"]["message"].as_str().unwrap();
    assert!(m.contains("keep") && m.contains("merge"), "{m}");
    let (s, v) = o.founder_call(
        "review",
        json!({ "brain": p.root, "op": "retire", "slug": "cache-ttl" }),
        &[],
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("invalid_input")),
        "{v}"
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("--reason"),
        "{v}"
    );

    // The count shows where a person looks: status, doctor, the Hall's roster.
    agent.memorize(
        "Queue",
        "background jobs run on the Sidekiq-compatible faktory queue",
    );
    let route: Value = o
        .http
        .get(format!("{}/api/route", o.url))
        .header(header::CALLER_ROOT, p.root.as_str())
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(route["unreviewed"], 1, "{route}");
    assert_eq!(o.instance(&p.root)["unreviewed"], 1);
    let (_, doctor) = o.get("/api/doctor");
    assert_eq!(doctor["unreviewed"][0]["count"], 1, "{doctor}");
    let out = medulla_cmd(o.home.path(), &p.path())
        .args(["review", "--brain", &p.root])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("queue") && text.contains("codex:maker"),
        "{text}"
    );
    assert!(labels(&p.seek("background jobs queue")).contains(&"Queue".to_string()));
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
        acts["acts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["kind"] == "consolidate"
                && a["subject"] == joined.as_str()
                && a["actor"] == "human:founder"),
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
        acts["acts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["kind"] == "consolidate" && a["actor"] == "medulla:tend"),
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
