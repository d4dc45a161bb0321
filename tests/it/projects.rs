//! Projects that share history keep their own memory (SPEC §3, issue 72): a project is
//! its history and where it comes from, so a template's children, a fork beside its
//! upstream, and the repositories a monorepo split into never reach each other's brain,
//! while the clones and worktrees of one project (one remote, however it is written)
//! still share one.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::cli::medulla_cmd;
use crate::common::{header, labels, Owner};
use crate::repository::{git, repository};

fn from(o: &Owner, root: &Path, tool: &str, args: Value) -> (u16, Value) {
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
    let shop = repository(&o.projects.path().join("shop"), &[("src/a.rs", "a\n")]);
    git(
        &shop,
        &[
            "remote",
            "add",
            "origin",
            "git@GitHub.example:acme/shop.git",
        ],
    );
    o.bootstrap(&shop);
    let (s, v) = from(
        &o,
        &shop,
        "memorize",
        json!({ "label": "Shop rule", "text": "shop prices are stored in integer cents" }),
    );
    assert_eq!(s, 200, "{v}");
    let found = |dir: &Path| {
        labels(&seek(&o, dir, "shop prices integer cents")).contains(&"Shop rule".to_string())
    };

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
    let shop = repository(&o.projects.path().join("shop"), &[("src/a.rs", "a\n")]);
    git(
        &shop,
        &[
            "remote",
            "add",
            "origin",
            "https://git.example.com/acme/shop",
        ],
    );
    o.bootstrap(&shop);
    let (s, v) = from(
        &o,
        &shop,
        "memorize",
        json!({ "label": "Shop rule", "text": "shop prices are stored in integer cents" }),
    );
    assert_eq!(s, 200, "{v}");
    let clone = clone_of(&o, &shop, "shop-clone");
    let found = |dir: &Path| {
        labels(&seek(&o, dir, "shop prices integer cents")).contains(&"Shop rule".to_string())
    };
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
