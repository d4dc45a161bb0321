//! A person's review of what agents wrote (SPEC §14, issue 73): the unreviewed listed
//! newest first with their provenance and near-duplicates; keep, verify, retire, edit
//! and merge each a recorded act by a `human:` identity; a secret refused by the floor;
//! an agent refused; unknown brain, slug or op typed errors that name the fix.

use serde_json::{json, Value};

use crate::cli::medulla_cmd;
use crate::common::{header, labels, Owner};
use crate::tend::acts_by;

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
    let by_person = acts_by(&acts, "human:founder");
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
