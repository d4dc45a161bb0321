//! Projects that share history keep their own memory (SPEC §3, issue 72): a project is
//! its history and where it comes from, so a template's children, a fork beside its
//! upstream, and the repositories a monorepo split into never reach each other's brain,
//! while the clones and worktrees of one project (one remote, however it is written)
//! still share one.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::cli::medulla_cmd;
use crate::common::{header, labels, Owner};
use crate::repository::{from, git, repository};

fn seek(o: &Owner, root: &Path, q: &str) -> Value {
    let (s, v) = from(o, root, "seek", json!({ "query": q }));
    assert_eq!(s, 200, "{v}");
    v
}

fn route(o: &Owner, root: &Path) -> Value {
    let r = root.to_string_lossy().to_string();
    let v: Value = o
        .http
        .get(format!("{}/api/route", o.url))
        .header(header::CALLER_ROOT, r.as_str())
        .send()
        .unwrap()
        .json()
        .unwrap();
    v
}

fn clone_of(o: &Owner, source: &Path, name: &str) -> PathBuf {
    git(
        o.projects.path(),
        &["clone", "-q", &source.to_string_lossy(), name],
    );
    std::fs::canonicalize(o.projects.path().join(name)).unwrap()
}

/// A repository `shop` whose `origin` is `remote`, with a brain and one claim, the
/// "Shop rule".
fn shop(o: &Owner, remote: &str) -> PathBuf {
    let shop = repository(&o.projects.path().join("shop"), &[("src/a.rs", "a\n")]);
    git(&shop, &["remote", "add", "origin", remote]);
    o.bootstrap(&shop);
    let (s, v) = from(
        o,
        &shop,
        "memorize",
        json!({ "label": "Shop rule", "text": "shop prices are stored in integer cents" }),
    );
    assert_eq!(s, 200, "{v}");
    shop
}

/// The "Shop rule" is recalled from `dir`.
fn shop_rule_found(o: &Owner, dir: &Path) -> bool {
    labels(&seek(o, dir, "shop prices integer cents")).contains(&"Shop rule".to_string())
}

const PAYMENTS: (&str, &str) = (
    "Payment retries",
    "payment retries back off exponentially, capped at five attempts",
);

/// The company template, and two services cloned from it, each re-pointed at its own
/// remote: they share the template's root commit.
fn services(o: &Owner) -> (PathBuf, PathBuf) {
    let template = repository(
        &o.projects.path().join("service-template"),
        &[("src/main.rs", "fn main() {}\n")],
    );
    git(
        &template,
        &[
            "remote",
            "add",
            "origin",
            "git@git.example.com:acme/service-template.git",
        ],
    );
    let payments = clone_of(o, &template, "payments");
    git(
        &payments,
        &[
            "remote",
            "set-url",
            "origin",
            "git@git.example.com:acme/payments.git",
        ],
    );
    let inventory = clone_of(o, &template, "inventory");
    git(
        &inventory,
        &[
            "remote",
            "set-url",
            "origin",
            "https://git.example.com/acme/inventory",
        ],
    );
    (payments, inventory)
}

/// Reported (issue 72, findings 1–3): two services started from one template share its
/// root commit, so `seek` from `inventory` (never bootstrapped) was served by payments'
/// brain and recalled its claims, a write from `inventory` landed there, `bootstrap` in
/// `inventory` answered payments' brain, and `import --from claude` put inventory's
/// memory into it. Now `inventory` is its own project: unrouted until bootstrapped (its
/// writes refused with the fix), its own brain when bootstrapped, and its Claude Code
/// memory waits for that brain.
#[test]
fn a_templates_children_never_read_or_write_each_others_memory() {
    let o = Owner::start();
    let (payments, inventory) = services(&o);
    o.bootstrap(&payments);
    let (s, v) = from(
        &o,
        &payments,
        "memorize",
        json!({ "label": PAYMENTS.0, "text": PAYMENTS.1 }),
    );
    assert_eq!(s, 200, "{v}");

    let r = route(&o, &inventory);
    assert_eq!(r["via"], "unrouted", "{r}");
    let v = seek(&o, &inventory, "payment retries attempts");
    assert!(!labels(&v).contains(&PAYMENTS.0.to_string()), "{v}");
    assert!(!v.to_string().contains(PAYMENTS.1), "{v}");
    let (s, v) = from(
        &o,
        &inventory,
        "memorize",
        json!({ "label": "Stock counts", "text": "stock counts are reconciled nightly" }),
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("unbootstrapped")),
        "{v}"
    );
    assert!(!o
        .claims(&payments.to_string_lossy())
        .iter()
        .any(|c| c["label"] == "Stock counts"));

    // Claude Code's memory of inventory waits for inventory's brain.
    let claude = tempfile::tempdir().unwrap();
    let slug: String = inventory
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let mem = claude.path().join("projects").join(slug).join("memory");
    std::fs::create_dir_all(&mem).unwrap();
    std::fs::write(
        mem.join("stock.md"),
        "# Stock counts\n\nstock counts are reconciled nightly by the ledger job\n",
    )
    .unwrap();
    let out = medulla_cmd(o.home.path(), &inventory)
        .env("CLAUDE_CONFIG_DIR", claude.path())
        .args(["import", "--from", "claude", "--json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("bootstrap"),
        "inventory has no brain yet, and the fix is named: {text}"
    );
    assert!(
        !o.claims(&payments.to_string_lossy())
            .iter()
            .any(|c| c["label"] == "Stock counts"),
        "{text}"
    );

    // Bootstrapped, inventory has a brain of its own.
    let (s, v) = from(&o, &inventory, "bootstrap", json!({}));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["created"], true, "{v}");
    assert!(v.get("through_repository").is_none(), "{v}");
    let (s, v) = from(
        &o,
        &inventory,
        "memorize",
        json!({ "label": "Stock counts", "text": "stock counts are reconciled nightly" }),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        v["brain"]["root"],
        inventory.to_string_lossy().as_ref(),
        "{v}"
    );
    let v = seek(&o, &payments, "stock counts reconciled nightly");
    assert!(!labels(&v).contains(&"Stock counts".to_string()), "{v}");
}

/// Reported (issue 72, finding 4): a fork (its `origin` the person's fork, `upstream` the
/// original) checked out beside its upstream recalled the upstream's claims unasked. Now
/// it reads them only when asked (`tier: all-brains`, labelled by their origin), and the
/// reception names the related project.
#[test]
fn a_fork_reads_its_upstreams_memory_only_when_asked() {
    let o = Owner::start();
    let upstream = repository(
        &o.projects.path().join("widgets"),
        &[("README.md", "# widgets\n")],
    );
    git(
        &upstream,
        &[
            "remote",
            "add",
            "origin",
            "https://git.example.com/acme/widgets.git",
        ],
    );
    o.bootstrap(&upstream);
    let (s, v) = from(
        &o,
        &upstream,
        "memorize",
        json!({ "label": "Widget sizes", "text": "widget sizes are in millimetres everywhere" }),
    );
    assert_eq!(s, 200, "{v}");
    let fork = clone_of(&o, &upstream, "widgets-fork");
    git(
        &fork,
        &[
            "remote",
            "set-url",
            "origin",
            "git@git.example.com:alice/widgets.git",
        ],
    );
    git(
        &fork,
        &[
            "remote",
            "add",
            "upstream",
            "https://git.example.com/acme/widgets.git",
        ],
    );

    let v = seek(&o, &fork, "widget sizes millimetres");
    assert!(!labels(&v).contains(&"Widget sizes".to_string()), "{v}");
    assert_eq!(v["reception"]["status"], "unrouted", "{v}");
    assert!(
        v["reception"]["related"]
            .to_string()
            .contains(upstream.to_string_lossy().as_ref()),
        "the reception names the related project: {v}"
    );
    let (s, v) = from(
        &o,
        &fork,
        "seek",
        json!({ "query": "widget sizes millimetres", "tier": "all-brains" }),
    );
    assert_eq!(s, 200, "{v}");
    let groups = v["groups"].as_array().expect("grouped by origin");
    let g = groups
        .iter()
        .find(|g| g["origin_brain"] == upstream.to_string_lossy().as_ref())
        .unwrap_or_else(|| panic!("asked, the upstream's claims come, labelled: {v}"));
    assert!(g.to_string().contains("Widget sizes"), "{v}");
}

/// The clones and worktrees of one project still share one brain (issue 72's "still"):
/// a remote written another way (scp-like, credentials, another case of the host, a
/// trailing slash), a clone of a local clone (its `origin` a path), and a repository with
/// no remote at all (its root commit alone).
#[test]
fn one_project_is_one_brain_however_its_remote_is_written() {
    let o = Owner::start();
    let shop = shop(&o, "git@GitHub.example:acme/shop.git");
    let found = |dir: &Path| shop_rule_found(&o, dir);

    let https = clone_of(&o, &shop, "shop-https");
    git(
        &https,
        &[
            "remote",
            "set-url",
            "origin",
            "https://alice:secret@github.example/acme/shop/",
        ],
    );
    assert!(found(&https), "one remote written two ways is one project");
    assert_eq!(route(&o, &https)["via"], "repository");

    let local = clone_of(&o, &https, "shop-local");
    assert!(
        found(&local),
        "a clone of a local clone is the project its origin is"
    );

    let bare = repository(&o.projects.path().join("notes"), &[("n.md", "n\n")]);
    o.bootstrap(&bare);
    let (s, v) = from(
        &o,
        &bare,
        "memorize",
        json!({ "label": "Notes rule", "text": "notes are plain markdown files" }),
    );
    assert_eq!(s, 200, "{v}");
    let copy = o.projects.path().join("notes-copy");
    let status = std::process::Command::new("cp")
        .args(["-r", &bare.to_string_lossy(), &copy.to_string_lossy()])
        .status()
        .unwrap();
    assert!(status.success());
    let copy = std::fs::canonicalize(copy).unwrap();
    assert!(
        labels(&seek(&o, &copy, "notes plain markdown")).contains(&"Notes rule".to_string()),
        "a repository with no remote is its root commit alone"
    );
}

/// A checkout whose remote moves keeps its brain (its registered root, or a checkout the
/// brain recorded), and the new identity is recorded as an act in the brain's log.
#[test]
fn a_checkout_whose_remote_moves_keeps_its_brain() {
    let o = Owner::start();
    let shop = shop(&o, "https://git.example.com/acme/shop");
    let clone = clone_of(&o, &shop, "shop-clone");
    let found = |dir: &Path| shop_rule_found(&o, dir);
    assert!(found(&clone), "the clone is recorded as a checkout");

    // The project moves to another host: the root keeps its brain.
    git(
        &shop,
        &[
            "remote",
            "set-url",
            "origin",
            "git@code.example.org:acme/shop.git",
        ],
    );
    assert!(found(&shop));
    // A recorded checkout whose remote moves elsewhere keeps it too.
    git(
        &clone,
        &[
            "remote",
            "set-url",
            "origin",
            "https://mirror.example.net/acme/shop",
        ],
    );
    assert!(found(&clone));
    assert_eq!(
        route(&o, &clone)["served_brain"],
        shop.to_string_lossy().as_ref()
    );

    let acts = o.brain_at(&shop).acts();
    let identity: Vec<&Value> = acts["acts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "identity")
        .collect();
    assert_eq!(identity.len(), 2, "each move recorded once: {acts}");
    assert!(
        identity.iter().any(|a| a["note"]
            .as_str()
            .unwrap_or("")
            .contains("code.example.org/acme/shop")),
        "{acts}"
    );
    assert!(
        identity
            .iter()
            .any(|a| a["subject"] == clone.to_string_lossy().as_ref()),
        "{acts}"
    );
    let (_, list) = o.get("/api/instances");
    assert!(
        list.to_string().contains("code.example.org/acme/shop"),
        "{list}"
    );
}

/// A brain's manifest file, found by its root.
fn manifest_file(o: &Owner, root: &Path) -> PathBuf {
    let r = root.to_string_lossy();
    std::fs::read_dir(o.home.path().join("brains"))
        .unwrap()
        .map(|e| e.unwrap().path().join("brain.json"))
        .find(|f| {
            std::fs::read_to_string(f)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .is_some_and(|m| m["root"] == r.as_ref())
        })
        .expect("the brain's manifest")
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Issue 72: a brain that already served checkouts of different projects (before
/// projects sharing history were told apart) is listed by doctor with the command that
/// separates them; the separation sends every claim with the project of the checkout it
/// was written from, lists what cannot be told apart, guesses nothing, keeps every
/// version, and a second run changes nothing.
#[test]
fn a_brain_that_served_two_projects_is_separated_claim_by_claim() {
    let o = Owner::start();
    let (payments, inventory) = services(&o);
    o.bootstrap(&payments);
    let (s, v) = from(
        &o,
        &payments,
        "memorize",
        json!({ "label": PAYMENTS.0, "text": PAYMENTS.1 }),
    );
    assert_eq!(s, 200, "{v}");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let asked = now_ms();
    std::thread::sleep(std::time::Duration::from_millis(5));
    // What the old rule let inventory write into payments' brain: a write whose caller
    // says where it came from, and one that does not.
    let p = payments.to_string_lossy().to_string();
    let i = inventory.to_string_lossy().to_string();
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "Stock counts", "text": "stock counts are reconciled nightly" }),
        &[
            (header::BRAIN, &p),
            (header::CALLER_ROOT, &i),
            (header::AGENT, "codex:maker"),
        ],
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "Queue names", "text": "queues are named after their consumer" }),
        &[(header::BRAIN, &p), (header::AGENT, "codex:maker")],
    );
    assert_eq!(s, 200, "{v}");
    // The brain as the old rule left it: identified by its history alone, inventory's
    // checkout recorded as its own.
    let file = manifest_file(&o, &payments);
    let (o, _) = o.restart_after(Default::default(), || {
        let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let key = m["repo"]["key"].as_str().unwrap().to_string();
        m["repo"]["key"] = json!(key.split('@').next().unwrap());
        m["checkouts"] = json!([{ "path": i, "first_seen": asked }]);
        std::fs::write(&file, m.to_string()).unwrap();
    });

    // Identified at start: doctor lists the brain with the fix.
    let mut mixed = Value::Null;
    for _ in 0..100 {
        let (_, d) = o.get("/api/doctor");
        mixed = d["mixed_projects"].clone();
        if mixed.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(mixed[0]["brain"], p.as_str(), "{mixed}");
    assert!(
        mixed[0]["others"][0]["checkouts"].to_string().contains(&i),
        "{mixed}"
    );
    assert_eq!(
        mixed[0]["fix"],
        format!("medulla brains split {p}"),
        "{mixed}"
    );
    assert!(
        !labels(&seek(&o, &inventory, "stock counts reconciled"))
            .contains(&"Stock counts".to_string()),
        "a foreign checkout is never routed by its path"
    );

    // Only the founder separates; a dry run writes nothing.
    let (s, v) = from(&o, &payments, "brains_split", json!({ "brain": p }));
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("founder_only")),
        "{v}"
    );
    let (s, dry) = o.founder_call("brains_split", json!({ "brain": p, "dry_run": true }), &[]);
    assert_eq!(s, 200, "{dry}");
    assert_eq!(
        dry["projects"][0]["moved"],
        json!(["Stock counts"]),
        "{dry}"
    );
    assert_eq!(dry["undecided"][0]["slug"], "queue-names", "{dry}");
    assert_eq!(dry["kept"], 1, "{dry}");
    assert!(
        o.claims(&p).iter().any(|c| c["label"] == "Stock counts"),
        "the dry run wrote nothing"
    );

    let run = crate::cli::medulla(&o, &payments, &["brains", "split", &p, "--json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let done: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(done["projects"][0]["brain"], i.as_str(), "{done}");
    assert_eq!(done["projects"][0]["created"], true, "{done}");
    // Inventory's claim is in inventory's brain now, every version; payments keeps it in
    // history, retired with the reason; what cannot be told apart stays.
    assert!(o.claims(&i).iter().any(|c| c["label"] == "Stock counts"));
    let left: Vec<Value> = o.claims(&p);
    assert!(!left.iter().any(|c| c["label"] == "Stock counts"));
    assert!(left.iter().any(|c| c["label"] == "Queue names"));
    assert!(left.iter().any(|c| c["label"] == PAYMENTS.0));
    let h = o.brain_at(&payments).history("stock-counts");
    assert!(h.to_string().contains("separated into"), "{h}");
    assert!(labels(&seek(&o, &inventory, "stock counts reconciled"))
        .contains(&"Stock counts".to_string()));
    let (_, d) = o.get("/api/doctor");
    assert_eq!(d["mixed_projects"], json!([]), "{d}");
    let (s, again) = o.founder_call("brains_split", json!({ "brain": p }), &[]);
    assert_eq!(s, 200, "{again}");
    assert_eq!(
        again["projects"],
        json!([]),
        "a second run changes nothing: {again}"
    );
}
