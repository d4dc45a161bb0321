//! `medulla import --from SOURCE` (issue 66, "Bring the memory a person already has"):
//! Claude Code's auto memory, Codex's memories, Serena's, basic-memory's notes and the MCP
//! memory server's graph, each from the real-shaped fixtures in `tests/data/import/`,
//! through the real command line into a real owner: each entry into the brain of its
//! project (a moved or other checkout found through the brain's recorded checkouts), the
//! person's into the medulla, a secret refused and reported, a second run writing
//! nothing, a changed entry superseding its import, near-duplicates named, the dry run
//! writing nothing, and never a byte written back into the source.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::cli::{medulla_cmd, Run};
use crate::common::{header, labels, Owner, OwnerOptions};
use crate::repository::{git, repository};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/import")
}

/// Copy a tree of files.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Every file's bytes under `dir`.
fn bytes(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                out.insert(e.path(), std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

/// Replace `from` with `to` in every file under `dir`.
fn rewrite(dir: &Path, from: &str, to: &str) {
    for (p, b) in bytes(dir) {
        let t = String::from_utf8(b).unwrap();
        if t.contains(from) {
            std::fs::write(&p, t.replace(from, to)).unwrap();
        }
    }
}

/// Claude Code's name for a project directory.
fn slug(p: &Path) -> String {
    p.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// `medulla import ARGS` in `cwd` with a home of its own and these variables (every
/// variable a source reads cleared first), as a person runs it.
fn import(o: &Owner, cwd: &Path, home: &Path, env: &[(&str, &Path)], args: &[&str]) -> Run {
    let mut cmd = medulla_cmd(o.home.path(), cwd);
    cmd.env("HOME", home);
    for k in [
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "SERENA_HOME",
        "BASIC_MEMORY_CONFIG_DIR",
        "XDG_CONFIG_HOME",
        "MEMORY_FILE_PATH",
    ] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::of(cmd.arg("import").args(args).output().unwrap())
}

/// As [`import`] with `--json`: the exit code and the `from` report.
fn import_json(
    o: &Owner,
    cwd: &Path,
    home: &Path,
    env: &[(&str, &Path)],
    args: &[&str],
) -> (i32, Value) {
    let mut a = args.to_vec();
    a.push("--json");
    let r = import(o, cwd, home, env, &a);
    let v: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|_| panic!("not JSON:\n{}\n{}", r.stdout, r.stderr));
    (r.code, v["from"].clone())
}

/// The store's part of a report (`medulla` or a brain's root).
fn store<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["stores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["store"] == name)
        .unwrap_or_else(|| panic!("no store {name} in {report:#}"))
}

/// created, superseded, already, near duplicates, refused.
fn counts(s: &Value) -> [u64; 5] {
    [
        s["created"].as_u64().unwrap(),
        s["superseded"].as_u64().unwrap(),
        s["already"].as_u64().unwrap(),
        s["near_duplicates"].as_array().unwrap().len() as u64,
        s["refused"].as_array().unwrap().len() as u64,
    ]
}

fn claim<'a>(claims: &'a [Value], label: &str) -> &'a Value {
    claims
        .iter()
        .find(|c| c["label"] == label)
        .unwrap_or_else(|| panic!("no claim {label:?} in {claims:#?}"))
}

fn no_secret_stored(o: &Owner, stores: &[&str]) {
    for s in stores {
        for c in o.claims(s) {
            let text = c.to_string();
            for secret in [
                "AKIAIOSFODNN7EXAMPLE",
                "wJalrXUtnFEMI",
                "ghp_oiVg",
                "ghp_SBvr",
            ] {
                assert!(!text.contains(secret), "a secret stored in {s}: {c}");
            }
        }
    }
}

/// Claude Code's auto memory of three project directories: the shop's (named after the
/// brain's root), the admin app's (named after a worktree the admin brain recorded as
/// a checkout), and one named after `<shop>-admin`, which could be `<shop>/admin` or a
/// sibling `shop-admin`: never guessed, listed with what would take it. The topic files
/// land in their brains and the person's (`type: user`) in the medulla; the secret is
/// refused and reported; an entry a claim already says is named, not written; a
/// paraphrase finds an imported entry; a second run writes nothing; a changed file
/// supersedes its import; the source's bytes never change; doctor counts it all.
#[test]
fn claude_memory_lands_in_each_projects_brain_and_the_persons_in_the_medulla() {
    let o = Owner::start_with(OwnerOptions::with_model());
    let shop = repository(
        &o.projects.path().join("shop"),
        &[("src/billing.rs", "// cents\n")],
    );
    o.bootstrap(&shop);
    let admin = repository(&o.projects.path().join("admin"), &[("app.ts", "//\n")]);
    o.bootstrap(&admin);
    git(&admin, &["worktree", "add", "-q", "../admin-wt"]);
    let wt = std::fs::canonicalize(o.projects.path().join("admin-wt")).unwrap();
    // A request from the worktree: the admin brain records it as a checkout.
    let (s, v) = o.call(
        "seek",
        json!({ "query": "anything" }),
        &[(header::CALLER_ROOT, wt.to_str().unwrap())],
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        o.instance(admin.to_str().unwrap())["checkouts"][1]["path"],
        wt.to_str().unwrap()
    );
    // A claim the shop's brain holds already, which the debugging notes repeat.
    let notes =
        std::fs::read_to_string(fixtures().join("claude/projects/-tmp-shop/memory/debugging.md"))
            .unwrap();
    let body = notes.split_once("\n\n").unwrap().1.trim().to_string();
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "Webhook test and local database", "text": body }),
        &[
            (header::CALLER_ROOT, shop.to_str().unwrap()),
            (header::AGENT, "claude:maker"),
        ],
    );
    assert_eq!(s, 200, "{v}");

    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".claude");
    let projects = config.join("projects");
    copy_tree(
        &fixtures().join("claude/projects/-tmp-shop"),
        &projects.join(slug(&shop)),
    );
    copy_tree(
        &fixtures().join("claude/projects/-tmp-shop-admin"),
        &projects.join(slug(&wt)),
    );
    let ambiguous = format!("{}-admin", slug(&shop));
    copy_tree(
        &fixtures().join("claude/projects/-tmp-shop-admin"),
        &projects.join(&ambiguous),
    );
    let before = bytes(&config);
    let (shop_s, admin_s) = (shop.to_str().unwrap(), admin.to_str().unwrap());

    // The dry run says what it would do and writes nothing.
    let dry = import(
        &o,
        &shop,
        home.path(),
        &[],
        &["--from", "claude", "--dry-run"],
    );
    assert_eq!(dry.code, 0, "{}\n{}", dry.stdout, dry.stderr);
    for said in [
        "dry run: nothing was written",
        "would be created",
        "Billing integer cents",
        "the medulla",
        "no brain for",
        &ambiguous,
        "secret found",
        "webhook-test-and-local-database",
    ] {
        assert!(dry.stdout.contains(said), "{said:?} in:\n{}", dry.stdout);
    }
    assert!(
        !dry.stdout.contains("AKIAIOSFODNN7EXAMPLE"),
        "{}",
        dry.stdout
    );
    assert_eq!(o.claims(shop_s).len(), 1, "a dry run writes nothing");
    assert!(o.claims(admin_s).is_empty());
    assert!(o.claims("medulla").is_empty());

    let (code, r) = import_json(&o, &shop, home.path(), &[], &["--from", "claude"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["entries"], 10, "{r:#}");
    assert_eq!(r["count_conserved"], true);
    assert_eq!(counts(store(&r, shop_s)), [3, 0, 0, 1, 1], "{r:#}");
    assert_eq!(counts(store(&r, admin_s)), [2, 0, 0, 0, 0], "{r:#}");
    assert_eq!(counts(store(&r, "medulla")), [1, 0, 0, 0, 0], "{r:#}");
    let near = &store(&r, shop_s)["near_duplicates"][0];
    assert_eq!(near["label"], "Debugging notes");
    assert_eq!(near["existing_slug"], "webhook-test-and-local-database");
    let refused = &store(&r, shop_s)["refused"][0];
    assert_eq!(refused["label"], "Staging deploy");
    assert_eq!(refused["reason"], "secret found");
    assert!(
        !refused.to_string().contains("AKIAIOSFODNN7EXAMPLE"),
        "redacted: {refused}"
    );
    let unrouted = r["unrouted"].as_array().unwrap();
    assert_eq!(unrouted.len(), 1, "{r:#}");
    assert!(unrouted[0]["project"]
        .as_str()
        .unwrap()
        .contains(&ambiguous));
    assert_eq!(unrouted[0]["entries"], 2);

    let claims = o.claims(shop_s);
    let billing = claim(&claims, "Billing integer cents");
    assert_eq!(billing["source_agent"], "import:claude");
    assert_eq!(billing["strength"], "observed");
    assert_eq!(
        billing["created"], 1_784_021_462_118i64,
        "the file's `modified`"
    );
    let evidence: Vec<&str> = billing["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(
        evidence[0].ends_with(&format!(
            "{}/memory/project_billing_cents.md:11-17",
            slug(&shop)
        )),
        "{evidence:?}"
    );
    assert_eq!(
        evidence[1],
        "claude-session:5b0f4c1e-8a2d-4c3e-9f17-2d6a0b9e4c71"
    );
    let admin_claims = o.claims(admin_s);
    assert_eq!(admin_claims.len(), 2, "{admin_claims:#?}");
    assert!(admin_claims
        .iter()
        .all(|c| c["text"].as_str().unwrap().contains("dmin")));
    let medulla = o.claims("medulla");
    assert_eq!(medulla.len(), 1);
    assert_eq!(
        claim(&medulla, "Commit message style")["source_agent"],
        "import:claude"
    );
    no_secret_stored(&o, &[shop_s, admin_s, "medulla"]);
    // An import is acts like any other.
    let (_, acts) = o.call("acts", json!({}), &[(header::CALLER_ROOT, shop_s)]);
    assert!(
        acts["acts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["kind"] == "import" && a["actor"] == "import:claude"),
        "{acts:#}"
    );
    // A paraphrase finds an imported entry.
    let (s, v) = o.call(
        "seek",
        json!({ "query": "how should prices be stored to avoid rounding mistakes", "tier": "project" }),
        &[(header::CALLER_ROOT, shop_s)],
    );
    assert_eq!(s, 200, "{v}");
    assert!(
        labels(&v)
            .iter()
            .take(3)
            .any(|l| l == "Billing integer cents"),
        "{v:#}"
    );

    // Again: nothing written.
    let (code, again) = import_json(&o, &shop, home.path(), &[], &["--from", "claude"]);
    assert_eq!(code, 0, "{again:#}");
    assert_eq!(counts(store(&again, shop_s)), [0, 0, 3, 1, 1], "{again:#}");
    assert_eq!(counts(store(&again, admin_s)), [0, 0, 2, 0, 0]);
    assert_eq!(counts(store(&again, "medulla")), [0, 0, 1, 0, 0]);
    assert_eq!(o.claims(shop_s).len(), 4);
    assert_eq!(bytes(&config), before, "the source is only read");

    // A changed entry supersedes its import.
    let file = projects
        .join(slug(&shop))
        .join("memory/project_billing_cents.md");
    let t = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, t.replace("invoice #4411", "invoice #4412")).unwrap();
    let (_, third) = import_json(&o, &shop, home.path(), &[], &["--from", "claude"]);
    assert_eq!(counts(store(&third, shop_s)), [0, 1, 2, 1, 1], "{third:#}");
    let (_, h) = o.call(
        "history",
        json!({ "slug": "billing-integer-cents" }),
        &[(header::CALLER_ROOT, shop_s)],
    );
    assert_eq!(h["versions"].as_array().unwrap().len(), 2, "{h:#}");

    // Doctor counts, per store, what came from which tool.
    let (_, d) = o.get("/api/doctor");
    let imported = d["imported"].as_array().unwrap();
    let of = |s: &str| {
        imported
            .iter()
            .find(|i| i["store"] == s)
            .unwrap_or_else(|| panic!("{s} in {imported:#?}"))["by_source"]["claude"]
            .clone()
    };
    assert_eq!(
        (of(shop_s), of(admin_s), of("medulla")),
        (json!(3), json!(2), json!(1))
    );
    let run = crate::cli::medulla(&o, &shop, &["doctor"]);
    assert!(run.stdout.contains("3 from claude"), "{}", run.stdout);
}

/// Codex's memories: the handbook's task groups go to the brain of their
/// `applies_to: cwd=` (listed with its bootstrap while it has none), the summary's
/// profile, preferences and tips to the medulla, the token on line 47 refused; a second
/// run writes nothing. Without a handbook, phase one's notes are read, and their
/// `[REDACTED_SECRET]` is no secret.
#[test]
fn codex_memories_follow_applies_to_and_the_summary_is_the_persons() {
    let o = Owner::start();
    let shop = o.project("shop");
    let shop_s = shop.to_str().unwrap();
    let home = tempfile::tempdir().unwrap();
    let codex = home.path().join("codex-home");
    copy_tree(&fixtures().join("codex"), &codex);
    rewrite(&codex, "/tmp/shop", shop_s);
    let env = [("CODEX_HOME", codex.as_path())];

    let (code, dry) = import_json(
        &o,
        &shop,
        home.path(),
        &env,
        &["--from", "codex", "--dry-run"],
    );
    assert_eq!(code, 0, "{dry:#}");
    let unrouted = &dry["unrouted"][0];
    assert_eq!(unrouted["project"], shop_s, "{dry:#}");
    assert_eq!(unrouted["entries"], 6);
    assert_eq!(unrouted["fix"], format!("medulla bootstrap {shop_s}"));
    assert_eq!(counts(store(&dry, "medulla")), [6, 0, 0, 0, 0]);
    assert!(o.claims("medulla").is_empty());

    o.bootstrap(&shop);
    let before = bytes(&codex);
    let (code, r) = import_json(&o, &shop, home.path(), &env, &["--from", "codex"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["entries"], 12);
    assert_eq!(counts(store(&r, shop_s)), [5, 0, 0, 0, 1], "{r:#}");
    assert_eq!(counts(store(&r, "medulla")), [6, 0, 0, 0, 0], "{r:#}");
    let refused = &store(&r, shop_s)["refused"][0];
    assert!(refused["evidence"]
        .as_str()
        .unwrap()
        .ends_with("memories/MEMORY.md:47"));
    let claims = o.claims(shop_s);
    let c = claims
        .iter()
        .find(|c| {
            c["label"]
                .as_str()
                .unwrap()
                .starts_with("Applied migrations are never edited")
        })
        .unwrap_or_else(|| panic!("{claims:#?}"));
    assert!(!c["text"].as_str().unwrap().contains("[Task"));
    assert!(c["evidence"]
        .as_array()
        .unwrap()
        .contains(&json!("codex-thread:019f5fe6-5b40-7064-9c80-317fa3b1799d")));
    let medulla = o.claims("medulla");
    assert!(medulla.iter().all(|c| c["source_agent"] == "import:codex"));
    claim(&medulla, "User profile");
    no_secret_stored(&o, &[shop_s, "medulla"]);

    let (_, again) = import_json(&o, &shop, home.path(), &env, &["--from", "codex"]);
    assert_eq!(counts(store(&again, shop_s)), [0, 0, 5, 0, 1], "{again:#}");
    assert_eq!(counts(store(&again, "medulla")), [0, 0, 6, 0, 0]);
    assert_eq!(bytes(&codex), before, "the source is only read");

    // No handbook yet: the raw notes, the redacted URL no secret.
    let raw = home.path().join("raw-only");
    std::fs::create_dir_all(raw.join("memories")).unwrap();
    std::fs::copy(
        codex.join("memories/raw_memories.md"),
        raw.join("memories/raw_memories.md"),
    )
    .unwrap();
    let (_, r) = import_json(
        &o,
        &shop,
        home.path(),
        &[],
        &["--from", "codex", raw.to_str().unwrap(), "--dry-run"],
    );
    assert_eq!(r["entries"], 5, "{r:#}");
    assert!(
        store(&r, shop_s)["refused"].as_array().unwrap().is_empty(),
        "{r:#}"
    );
}

/// Serena: a project's memories (its brain found from Serena's home through the brains
/// the owner knows) into its brain, anchored inside it, the ignored one skipped and
/// said, the token refused; the global memory into the medulla; a second run writes
/// nothing.
#[test]
fn serena_memories_go_to_their_project_and_global_ones_to_the_medulla() {
    let o = Owner::start();
    let shop = o.project("shop");
    copy_tree(&fixtures().join("serena/project"), &shop);
    o.bootstrap(&shop);
    let shop_s = shop.to_str().unwrap();
    let home = tempfile::tempdir().unwrap();
    let serena = home.path().join("serena-home");
    copy_tree(&fixtures().join("serena/home/.serena"), &serena);
    let env = [("SERENA_HOME", serena.as_path())];
    let before = (bytes(&serena), bytes(&shop.join(".serena")));

    let (code, r) = import_json(&o, &shop, home.path(), &env, &["--from", "serena"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["entries"], 6, "{r:#}");
    assert_eq!(counts(store(&r, shop_s)), [4, 0, 0, 0, 1], "{r:#}");
    assert_eq!(counts(store(&r, "medulla")), [1, 0, 0, 0, 0], "{r:#}");
    assert_eq!(store(&r, shop_s)["refused"][0]["label"], "Staging deploy");
    let skipped = r["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0]["why"]
        .as_str()
        .unwrap()
        .contains("ignored_memory_patterns"));
    let claims = o.claims(shop_s);
    let money = claim(&claims, "Money representation");
    assert_eq!(
        money["evidence"][0],
        ".serena/memories/billing/money.md:3-6"
    );
    assert_eq!(money["source_agent"], "import:serena");
    claim(&o.claims("medulla"), "Commit style (all projects)");
    no_secret_stored(&o, &[shop_s, "medulla"]);

    let (_, again) = import_json(&o, &shop, home.path(), &env, &["--from", "serena"]);
    assert_eq!(counts(store(&again, shop_s)), [0, 0, 4, 0, 1], "{again:#}");
    assert_eq!(counts(store(&again, "medulla")), [0, 0, 1, 0, 0]);
    // The project alone, named by its path.
    let (_, one) = import_json(&o, &shop, home.path(), &[], &["--from", "serena", shop_s]);
    assert_eq!(one["entries"], 5, "{one:#}");
    assert_eq!((bytes(&serena), bytes(&shop.join(".serena"))), before);
}

/// basic-memory: its projects are knowledge bases, not repositories. A project's notes
/// named with `--brain` go to that brain; without one, to the medulla; the AWS key
/// refused; both shapes of its config read; a second run writes nothing.
#[test]
fn basic_memory_notes_go_to_the_named_brain_else_the_medulla() {
    let o = Owner::start();
    let shop = o.project("shop");
    o.bootstrap(&shop);
    let shop_s = shop.to_str().unwrap();
    let home = tempfile::tempdir().unwrap();
    let base = home.path().join("bm");
    copy_tree(&fixtures().join("basic-memory"), &base.join("basic-memory"));
    rewrite(&base, "__FIXTURE__", base.to_str().unwrap());
    let config = base.join("basic-memory/config");
    let notes = base.join("basic-memory/shop-notes");
    let before = bytes(&base);

    let (code, r) = import_json(
        &o,
        &shop,
        home.path(),
        &[],
        &[
            "--from",
            "basic-memory",
            notes.to_str().unwrap(),
            "--brain",
            shop_s,
        ],
    );
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(counts(store(&r, shop_s)), [3, 0, 0, 0, 1], "{r:#}");
    assert_eq!(store(&r, shop_s)["refused"][0]["label"], "Staging Deploy");
    let c = claim(&o.claims(shop_s), "Billing Integer Cents").clone();
    assert_eq!(c["source_agent"], "import:basic-memory");
    assert!(c["text"]
        .as_str()
        .unwrap()
        .contains("[decision] All amounts"));

    // Without a brain, the config's every project to the medulla (a dry run), then one.
    let env = [("BASIC_MEMORY_CONFIG_DIR", config.as_path())];
    let (_, dry) = import_json(
        &o,
        &shop,
        home.path(),
        &env,
        &["--from", "basic-memory", "--dry-run"],
    );
    assert_eq!(dry["entries"], 5, "{dry:#}");
    assert_eq!(counts(store(&dry, "medulla")), [4, 0, 0, 0, 1], "{dry:#}");
    let legacy = home.path().join("legacy-config");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::copy(
        config.join("config.legacy.json"),
        legacy.join("config.json"),
    )
    .unwrap();
    let (_, dry) = import_json(
        &o,
        &shop,
        home.path(),
        &[("BASIC_MEMORY_CONFIG_DIR", legacy.as_path())],
        &["--from", "basic-memory", "--dry-run"],
    );
    assert_eq!(dry["entries"], 5, "the legacy config shape: {dry:#}");
    let main = base.join("basic-memory/main");
    let (_, r) = import_json(
        &o,
        &shop,
        home.path(),
        &[],
        &["--from", "basic-memory", main.to_str().unwrap()],
    );
    assert_eq!(counts(store(&r, "medulla")), [1, 0, 0, 0, 0], "{r:#}");
    claim(&o.claims("medulla"), "Commit Style");

    let (_, again) = import_json(
        &o,
        &shop,
        home.path(),
        &[],
        &[
            "--from",
            "basic-memory",
            notes.to_str().unwrap(),
            "--brain",
            shop_s,
        ],
    );
    assert_eq!(counts(store(&again, shop_s)), [0, 0, 3, 0, 1], "{again:#}");
    no_secret_stored(&o, &[shop_s, "medulla"]);
    assert_eq!(bytes(&base), before, "the source is only read");
}

/// The MCP memory server's graph: user-wide, into the medulla, one claim an entity with
/// its relations; with `--brain` the project's entities go to that brain and the
/// person's still to the medulla; the AWS key refused. Over REST the verb takes `from`
/// too, a dry run for anyone, the medulla's write only for the founder.
#[test]
fn the_mcp_memory_graph_is_user_wide_unless_a_brain_is_named() {
    let o = Owner::start();
    let shop = o.project("shop");
    o.bootstrap(&shop);
    let shop_s = shop.to_str().unwrap();
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("memory.jsonl");
    std::fs::copy(fixtures().join("mcp-memory/memory.jsonl"), &file).unwrap();
    let before = std::fs::read(&file).unwrap();

    let (s, v) = o.call(
        "import",
        json!({ "from": "mcp-memory", "dir": file, "dry_run": true }),
        &[(header::CALLER_ROOT, shop_s)],
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        counts(store(&v["from"], "medulla")),
        [4, 0, 0, 0, 1],
        "{v:#}"
    );
    let (s, v) = o.call(
        "import",
        json!({ "from": "mcp-memory", "dir": file }),
        &[(header::CALLER_ROOT, shop_s)],
    );
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("founder_only")),
        "{v}"
    );
    assert!(o.claims("medulla").is_empty());

    let env = [("MEMORY_FILE_PATH", file.as_path())];
    let (code, r) = import_json(&o, &shop, home.path(), &env, &["--from", "mcp-memory"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(counts(store(&r, "medulla")), [4, 0, 0, 0, 1], "{r:#}");
    let medulla = o.claims("medulla");
    let shop_entity = claim(&medulla, "shop (project)");
    assert!(shop_entity["text"]
        .as_str()
        .unwrap()
        .contains("contains → shop_billing"));
    assert_eq!(shop_entity["evidence"][0], format!("{}:2", file.display()));
    let (_, again) = import_json(&o, &shop, home.path(), &env, &["--from", "mcp-memory"]);
    assert_eq!(
        counts(store(&again, "medulla")),
        [0, 0, 4, 0, 1],
        "{again:#}"
    );

    let (_, r) = import_json(
        &o,
        &shop,
        home.path(),
        &env,
        &["--from", "mcp-memory", "--brain", shop_s],
    );
    assert_eq!(counts(store(&r, shop_s)), [3, 0, 0, 0, 1], "{r:#}");
    assert_eq!(
        counts(store(&r, "medulla")),
        [0, 0, 1, 0, 0],
        "the person's: {r:#}"
    );
    no_secret_stored(&o, &[shop_s, "medulla"]);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the source is only read"
    );
}

/// Reported (issue 66): `export` into a directory that cannot be written (under
/// `/proc`) answered `500 internal`; it is a typed error naming the path and the fix.
#[test]
fn export_into_a_directory_that_cannot_be_written_is_a_typed_error() {
    let o = Owner::start();
    let dir = "/proc/medulla-export-test/out";
    let (s, v) = o.founder_call("export", json!({ "dir": dir, "medulla": true }), &[]);
    assert_eq!(s, 400, "{v}");
    assert_eq!(v["error"]["code"], "dir_not_writable", "{v}");
    assert_eq!(v["error"]["dir"], dir);
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(dir) && message.contains("give a directory"),
        "{message}"
    );
}
