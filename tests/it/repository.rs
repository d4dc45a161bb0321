//! A brain belongs to its repository (SPEC §3, issue 63): a linked worktree, a moved
//! checkout and a second clone on the same machine reach the project's one brain, over
//! REST, MCP and the command line; an unrelated repository and a plain directory do not;
//! brains that split before the rule are joined by `brains merge`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::cli::medulla;
use crate::common::{header, labels, Owner, OwnerOptions};

/// Run git in `dir` with a fixed identity and no user or system configuration.
pub fn git(dir: &Path, args: &[&str]) {
    crate::gitcmd::git(dir, args).unwrap_or_else(|e| panic!("{e}"));
}

/// A repository at `dir` with one commit holding `files`.
pub fn repository(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    for (f, text) in files {
        let p = dir.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "first"]);
    std::fs::canonicalize(dir).unwrap()
}

/// Call `tool` as an agent in `root`.
pub(crate) fn from(o: &Owner, root: &Path, tool: &str, args: Value) -> (u16, Value) {
    let root = root.to_string_lossy();
    o.call(
        tool,
        args,
        &[
            (header::CALLER_ROOT, &root),
            (header::AGENT, "claude:maker"),
        ],
    )
}

fn seek_labels(o: &Owner, root: &Path, q: &str) -> Vec<String> {
    let (s, v) = from(o, root, "seek", json!({ "query": q }));
    assert_eq!(s, 200, "{v}");
    labels(&v)
}

const CLAIM: (&str, &str) = (
    "Billing amounts",
    "billing amounts are integer cents in i64; never floats",
);

/// The shop of the issue: a repository with a brain and one verified claim.
fn shop(o: &Owner) -> PathBuf {
    let shop = repository(
        &o.projects.path().join("shop"),
        &[("src/billing.rs", "// cents\n")],
    );
    o.bootstrap(&shop);
    let (s, v) = from(
        o,
        &shop,
        "memorize",
        json!({ "label": CLAIM.0, "text": CLAIM.1, "strength": "verified" }),
    );
    assert_eq!(s, 200, "{v}");
    shop
}

/// Reported (issue 63): in `git worktree add ../shop-feature`, `seek` answered "no brain
/// covers …/shop-feature" and `memorize` was refused. Now REST, MCP and the command line
/// find the main checkout's claim there, a write there is accepted and found from the
/// main checkout, and `brains` lists one brain with both checkouts.
#[test]
fn a_linked_worktree_reaches_its_repositorys_brain() {
    let o = Owner::start();
    let shop = shop(&o);
    git(&shop, &["worktree", "add", "-q", "../shop-feature"]);
    let wt = std::fs::canonicalize(o.projects.path().join("shop-feature")).unwrap();

    // REST
    let (s, v) = from(&o, &wt, "seek", json!({ "query": "billing cents" }));
    assert_eq!(s, 200, "{v}");
    assert!(labels(&v).contains(&CLAIM.0.to_string()), "{v}");
    assert!(v.get("reception").is_none(), "served silently: {v}");
    assert_eq!(v["served_brain"], shop.to_string_lossy().as_ref(), "{v}");

    // MCP, from a subdirectory of the worktree
    let mut mcp = o.mcp();
    let sub = wt.join("src");
    let sub_s = sub.to_string_lossy();
    mcp.initialize(&[(header::CALLER_ROOT, &sub_s)]);
    let r = mcp
        .tool(
            "seek",
            json!({ "query": "billing cents" }),
            &[(header::CALLER_ROOT, &sub_s)],
        )
        .expect("seek over MCP");
    assert!(r.to_string().contains(CLAIM.1), "{r}");

    // The command line, run in the worktree
    let run = medulla(&o, &wt, &["seek", "billing", "cents"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("billing-amounts"), "{}", run.stdout);

    // A write in the worktree is accepted, and found from the main checkout.
    let (s, v) = from(
        &o,
        &wt,
        "memorize",
        json!({ "label": "Feature flag", "text": "the checkout flow sits behind the new-cart flag" }),
    );
    assert_eq!(s, 200, "{v}");
    assert!(seek_labels(&o, &shop, "checkout flow flag").contains(&"Feature flag".to_string()));

    // One brain for the repository, naming both checkouts; the worktree's first request
    // was recorded as an act.
    let (_, list) = o.get("/api/instances");
    let rows = list["instances"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{list}");
    let paths: Vec<&str> = rows[0]["checkouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [shop.to_str().unwrap(), wt.to_str().unwrap()],
        "{list}"
    );
    assert_eq!(rows[0]["checkouts"][0]["bootstrapped"], true);
    assert!(rows[0]["repository"]["key"]
        .as_str()
        .unwrap()
        .starts_with("repo:"));
    let acts = from(&o, &shop, "acts", json!({})).1;
    let checkout_acts: Vec<&Value> = acts["acts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "checkout")
        .collect();
    assert_eq!(
        checkout_acts.len(),
        1,
        "one act for the new checkout: {acts}"
    );
    assert_eq!(checkout_acts[0]["subject"], wt.to_string_lossy().as_ref());
    let run = medulla(&o, &shop, &["brains"]);
    assert!(run.stdout.contains(wt.to_str().unwrap()), "{}", run.stdout);
}

/// Reported (issue 63): after `mv shop shop-renamed`, the brain stayed on disk under the
/// old path, invisible. After the move and an owner restart, `seek` finds the claim, a
/// write is accepted, and `medulla brains` names the new path (the old one marked gone).
#[test]
fn a_moved_checkout_keeps_its_brain_across_a_restart() {
    let o = Owner::start();
    let shop = shop(&o);
    let moved = o.projects.path().join("shop-renamed");
    let (o, _) = o.restart_after(OwnerOptions::default(), || {
        std::fs::rename(&shop, &moved).unwrap();
    });
    let moved = std::fs::canonicalize(&moved).unwrap();
    assert!(seek_labels(&o, &moved, "billing cents").contains(&CLAIM.0.to_string()));
    let (s, v) = from(
        &o,
        &moved,
        "memorize",
        json!({ "label": "After the move", "text": "the shop was renamed" }),
    );
    assert_eq!(s, 200, "{v}");
    let run = medulla(&o, &moved, &["brains"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(moved.to_str().unwrap()),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("no longer exists"), "{}", run.stdout);
    let row = o.instance(shop.to_str().unwrap());
    assert_eq!(row["checkouts"][0]["exists"], false, "{row}");
    assert_eq!(
        row["checkouts"][1]["path"],
        moved.to_string_lossy().as_ref(),
        "{row}"
    );
}

/// Reported (issue 63): `git clone shop shop-clone` on the same machine had no brain. A
/// second clone reaches the same brain; an unrelated repository and a plain directory
/// beside them do not (reads from the medulla alone, writes refused).
#[test]
fn a_second_clone_reaches_the_brain_and_nothing_unrelated_does() {
    let o = Owner::start();
    let shop = shop(&o);
    let projects = o.projects.path().to_path_buf();
    git(
        &projects,
        &["clone", "-q", shop.to_str().unwrap(), "shop-clone"],
    );
    let clone = std::fs::canonicalize(projects.join("shop-clone")).unwrap();
    assert!(seek_labels(&o, &clone, "billing cents").contains(&CLAIM.0.to_string()));

    let other = repository(&projects.join("other"), &[("README", "another project\n")]);
    let plain = o.project("plain");
    for stranger in [&other, &plain] {
        let (s, v) = from(&o, stranger, "seek", json!({ "query": "billing cents" }));
        assert_eq!(s, 200, "{v}");
        assert!(labels(&v).is_empty(), "{}: {v}", stranger.display());
        assert_eq!(v["reception"]["status"], "unrouted", "{v}");
        let (s, v) = from(
            &o,
            stranger,
            "memorize",
            json!({ "label": "x", "text": "y" }),
        );
        assert_eq!(
            (s, v["error"]["code"].as_str()),
            (409, Some("unbootstrapped")),
            "{v}"
        );
    }
    // One brain, two checkouts.
    let (_, list) = o.get("/api/instances");
    assert_eq!(list["instances"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(
        list["instances"][0]["checkouts"].as_array().unwrap().len(),
        2
    );
}

/// `bootstrap` in a clone answers the repository's brain; `bootstrap --own` makes the
/// clone a brain of its own, which then wins for its path alone. Two brains of one
/// repository are listed by doctor and joined by `brains merge` (founder only): every
/// version kept, the history of a label both held shows both sides.
#[test]
fn own_brains_and_brains_merge_keep_every_version() {
    let o = Owner::start();
    let shop = shop(&o);
    let projects = o.projects.path().to_path_buf();
    git(
        &projects,
        &["clone", "-q", shop.to_str().unwrap(), "shop-clone"],
    );
    let clone = std::fs::canonicalize(projects.join("shop-clone")).unwrap();
    let (s, v) = from(&o, &clone, "bootstrap", json!({}));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["created"], false, "{v}");
    assert_eq!(v["brain"]["root"], shop.to_string_lossy().as_ref(), "{v}");
    assert!(
        v["through_repository"].as_str().unwrap().contains("own"),
        "{v}"
    );

    let run = medulla(&o, &clone, &["bootstrap", "--own", "--json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let own: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(own["created"], true, "{own}");
    assert_eq!(own["own"], true, "{own}");
    // The own brain serves the clone, with the same label at the same strength and a
    // claim of its own; the main checkout still reaches the first brain.
    from(
        &o,
        &clone,
        "memorize",
        json!({ "label": CLAIM.0, "text": "billing amounts are integer cents in i128 now", "strength": "verified" }),
    );
    from(
        &o,
        &clone,
        "memorize",
        json!({ "label": "Clone only", "text": "the clone tried a new cache" }),
    );
    assert!(seek_labels(&o, &clone, "new cache").contains(&"Clone only".to_string()));
    assert!(!seek_labels(&o, &shop, "new cache").contains(&"Clone only".to_string()));

    let d = o.get("/api/doctor").1;
    let same = d["same_repository"].as_array().unwrap();
    assert_eq!(same.len(), 1, "{d}");
    assert_eq!(same[0]["brains"][0], shop.to_string_lossy().as_ref());

    // An agent may not merge.
    let args = json!({ "from": clone, "into": shop });
    let (s, v) = from(&o, &shop, "brains_merge", args.clone());
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("founder_only")),
        "{v}"
    );
    // The founder may.
    let run = medulla(
        &o,
        &shop,
        &[
            "brains",
            "merge",
            clone.to_str().unwrap(),
            shop.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let m: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(m["met"], json!(["billing-amounts"]), "{m}");
    // Both sides in history; the later, as strong, is live.
    let h = from(&o, &shop, "history", json!({ "slug": "billing-amounts" })).1;
    let texts = h.to_string();
    assert!(texts.contains("in i64") && texts.contains("in i128"), "{h}");
    let live = o.claims(shop.to_str().unwrap());
    let billing = live
        .iter()
        .find(|c| c["slug"] == "billing-amounts")
        .unwrap();
    assert!(
        billing["text"].as_str().unwrap().contains("i128"),
        "{billing}"
    );
    assert!(live.iter().any(|c| c["label"] == "Clone only"));
    // The clone now reaches the merged brain; a second merge writes nothing.
    assert!(seek_labels(&o, &clone, "new cache").contains(&"Clone only".to_string()));
    let (s, v) = o.founder_call("brains_merge", args, &[]);
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (v["versions"].as_u64(), v["labels"].as_u64()),
        (Some(0), Some(0)),
        "{v}"
    );
    // Nothing merges into the brain merged away.
    let back = json!({ "from": shop, "into": clone });
    let (s, v) = o.founder_call("brains_merge", back, &[]);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("merge_refused")),
        "{v}"
    );
    assert!(o.get("/api/doctor").1["same_repository"]
        .as_array()
        .unwrap()
        .is_empty());
}

/// Evidence anchored in the main checkout is judged in the caller's own checkout when the
/// file exists there: a file changed in the worktree marks the row there (and says
/// nothing of another checkout), not in the main checkout.
#[test]
fn evidence_is_judged_in_the_callers_own_checkout() {
    let o = Owner::start();
    let shop = shop(&o);
    from(
        &o,
        &shop,
        "memorize",
        json!({ "label": "Cents type", "text": "money uses the Cents newtype", "evidence": ["src/billing.rs"] }),
    );
    git(&shop, &["worktree", "add", "-q", "../shop-feature"]);
    let wt = std::fs::canonicalize(o.projects.path().join("shop-feature")).unwrap();
    std::fs::write(wt.join("src/billing.rs"), "// floats now\n").unwrap();
    let row = |root: &Path| {
        let v = from(&o, root, "seek", json!({ "query": "Cents newtype" })).1;
        v["results"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["label"] == "Cents type").cloned())
            .unwrap_or_else(|| panic!("{v}"))
    };
    let in_wt = row(&wt);
    assert_eq!(
        in_wt["evidence_changed"][0]["path"], "src/billing.rs",
        "{in_wt}"
    );
    assert!(in_wt.get("judged_in").is_none(), "{in_wt}");
    let in_main = row(&shop);
    assert!(in_main.get("evidence_changed").is_none(), "{in_main}");
}
