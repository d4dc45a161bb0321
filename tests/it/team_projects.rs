//! A shared brain is its project's (SPEC §13, issue 72): the team names a store by the
//! project's history and its remote, so two projects started from one template never
//! converge on one shared brain, while a project the team shared before that rule keeps
//! its store and every clone shared since joins it. On a real PostgreSQL.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{header, Owner};
use crate::pg::Postgres;
use crate::team::{eventually, git, member_owner, team_database};

const DB: &str = "team";

fn repo_at(dir: &Path, origin: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("README"), "x").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "root"]);
    git(dir, &["remote", "add", "origin", origin]);
    std::fs::canonicalize(dir).unwrap()
}

fn clone_to(source: &Path, dir: &Path, origin: &str) -> PathBuf {
    let out = Command::new("git")
        .args(["clone", "-q"])
        .arg(source)
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    git(dir, &["remote", "set-url", "origin", origin]);
    std::fs::canonicalize(dir).unwrap()
}

fn root_commit(dir: &Path) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-list", "--max-parents=0", "HEAD"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn share(o: &Owner, root: &Path) -> Value {
    let r = root.to_string_lossy();
    o.bootstrap(root);
    let (s, v) = o.founder_call("team_share", json!({}), &[(header::CALLER_ROOT, &r)]);
    assert_eq!(s, 200, "{v}");
    v
}

fn write(o: &Owner, root: &Path, label: &str, text: &str) {
    let r = root.to_string_lossy();
    let (s, v) = o.call(
        "memorize",
        json!({ "label": label, "text": text }),
        &[(header::CALLER_ROOT, &r), (header::AGENT, "claude:maker")],
    );
    assert_eq!(s, 200, "{v}");
}

fn finds(o: &Owner, root: &Path, query: &str, label: &str) -> bool {
    let r = root.to_string_lossy();
    let (_, v) = o.call(
        "seek",
        json!({ "query": query, "tier": "project" }),
        &[(header::CALLER_ROOT, &r)],
    );
    v.to_string().contains(label)
}

/// Reported (issue 72, finding 5): the team named a shared brain by its root commit, so
/// two services started from one template, shared by two members, converged on one
/// store: each read the other's memory. Now each is its own store. A project the team
/// shared under the old name (announced with its remote) keeps that store: a member who
/// shares a clone of it now joins it, and the two see each other's writes.
#[test]
fn a_shared_brain_is_its_projects_and_one_shared_before_keeps_its_store() {
    let members = ["alice".to_string(), "bob".to_string()];
    let (mut pg, urls): (Postgres, Vec<String>) = team_database(&members);
    let a = member_owner(&urls[0]);
    let b = member_owner(&urls[1]);

    // Two services from one template: two stores, never one.
    let template = repo_at(
        &a.projects.path().join("template"),
        "git@git.example.com:acme/template.git",
    );
    let payments = clone_to(
        &template,
        &a.projects.path().join("payments"),
        "git@git.example.com:acme/payments.git",
    );
    let inventory = clone_to(
        &template,
        &b.projects.path().join("inventory"),
        "https://git.example.com/acme/inventory",
    );
    let pk = share(&a, &payments)["key"].as_str().unwrap().to_string();
    let ik = share(&b, &inventory)["key"].as_str().unwrap().to_string();
    assert_ne!(pk, ik, "one template, two projects");
    assert!(pk.ends_with("@git.example.com/acme/payments"), "{pk}");
    write(
        &a,
        &payments,
        "Payment retries",
        "payment retries are capped at five attempts",
    );
    write(
        &b,
        &inventory,
        "Stock counts",
        "stock counts are reconciled nightly",
    );

    // A project shared before the rule: the team holds it under its root commit alone,
    // with its remote as the label.
    let shop = repo_at(
        &a.projects.path().join("shop"),
        "https://git.example.com/acme/shop.git",
    );
    let legacy = format!("repo:{}", root_commit(&shop));
    pg.psql(
        DB,
        &format!("INSERT INTO medulla.shared_brains (repo, label) VALUES ('{legacy}', 'git.example.com/acme/shop')"),
    );
    assert_eq!(
        share(&a, &shop)["key"],
        legacy.as_str(),
        "it keeps its store"
    );
    let shop_b = clone_to(
        &shop,
        &b.projects.path().join("shop-clone"),
        "git@git.example.com:acme/shop.git",
    );
    assert_eq!(
        share(&b, &shop_b)["key"],
        legacy.as_str(),
        "a clone shared now joins it"
    );
    write(
        &a,
        &shop,
        "Shop prices",
        "shop prices are stored in integer cents",
    );
    eventually(30, "alice's shop claim on bob's clone", || {
        finds(&b, &shop_b, "shop prices integer cents", "Shop prices").then_some(())
    });

    // The services never saw each other's memory.
    eventually(10, "each service's own claim", || {
        (finds(&a, &payments, "payment retries attempts", "Payment retries")
            && finds(&b, &inventory, "stock counts reconciled", "Stock counts"))
        .then_some(())
    });
    assert!(!finds(
        &b,
        &inventory,
        "payment retries attempts",
        "Payment retries"
    ));
    assert!(!finds(
        &a,
        &payments,
        "stock counts reconciled",
        "Stock counts"
    ));
    let stores = pg.psql(DB, "SELECT DISTINCT store FROM medulla.acts ORDER BY 1");
    assert!(
        stores.contains(&pk) && stores.contains(&ik) && stores.contains(&legacy),
        "{stores}"
    );
    drop(a);
    drop(b);
    pg.stop();
}
