//! A team on a real PostgreSQL 15 (SPEC §13): owners joined through `medulla team join`,
//! the schema from `medulla team init`, members from `medulla team add-member`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{header, Owner, OwnerOptions};
use crate::pg::Postgres;

const DB: &str = "team";

pub(crate) fn medulla(home: &Path, args: &[&str]) -> (bool, String) {
    let out = crate::cli::medulla_cmd(home, home)
        .args(args)
        .env_remove("PGPASSWORD")
        .output()
        .expect("run medulla");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The password a `postgres://user:pw@host` URL carries.
fn password_in(url: &str) -> &str {
    let auth = url.split_once("://").unwrap().1.rsplit_once('@').unwrap().0;
    auth.split_once(':').unwrap().1
}

/// `team add-member` prints the join URL with the member's password once.
fn add_member(pg: &Postgres, scratch: &Path, name: &str) -> String {
    let (ok, out) = medulla(
        scratch,
        &["team", "add-member", name, "--url", &pg.admin_url(DB)],
    );
    assert!(ok, "{out}");
    out.split('\'')
        .find(|w| w.starts_with("postgres://"))
        .unwrap_or_else(|| panic!("no join URL in {out}"))
        .to_string()
}

/// A member's owner: joined through the command line, polling fast for the test.
pub fn member_owner(url: &str) -> Owner {
    let home = tempfile::tempdir().unwrap();
    let (ok, out) = medulla(home.path(), &["team", "join", url]);
    assert!(ok, "{out}");
    let cfg = home.path().join("config.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    assert!(
        !text.contains(password_in(url)),
        "the password never lands in config.toml"
    );
    std::fs::write(&cfg, format!("{text}poll_ms = 200\n")).unwrap();
    Owner::start_in(home, tempfile::tempdir().unwrap(), OwnerOptions::default())
}

/// The password the battery's team members get: known, so a case can act as them in SQL.
pub fn battery_password(member: &str) -> String {
    format!("pw{member}battery")
}

/// A team database for a battery case: initialized with `medulla team init`, one login
/// role per member (with [`battery_password`]); the join URL of each.
pub fn team_database(members: &[String]) -> (Postgres, Vec<String>) {
    let pg = Postgres::start();
    pg.create_db(DB);
    let scratch = tempfile::tempdir().unwrap();
    let (ok, out) = medulla(scratch.path(), &["team", "init", &pg.admin_url(DB)]);
    assert!(ok, "{out}");
    let urls = members
        .iter()
        .map(|m| {
            add_member(&pg, scratch.path(), m);
            let pw = battery_password(m);
            pg.psql(DB, &format!("ALTER ROLE \"{m}\" PASSWORD '{pw}'"));
            format!("postgres://{m}:{pw}@127.0.0.1:{}/{DB}", pg.port())
        })
        .collect();
    (pg, urls)
}

/// Poll `f` until it returns `Some`, or fail after `secs`.
pub(crate) fn eventually<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) fn team_rows(v: &Value) -> Vec<Value> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["tier"] == "team")
        .cloned()
        .collect()
}

pub(crate) fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[test]
fn a_team_shares_doctrine_and_brains_through_postgres_and_keeps_what_is_private() {
    let mut pg = Postgres::start();
    pg.create_db(DB);
    let scratch = tempfile::tempdir().unwrap();
    let (ok, out) = medulla(scratch.path(), &["team", "init", &pg.admin_url(DB)]);
    assert!(ok, "{out}");
    // Idempotent.
    let (ok, out) = medulla(scratch.path(), &["team", "init", &pg.admin_url(DB)]);
    assert!(ok, "{out}");
    let alice_url = add_member(&pg, scratch.path(), "alice");
    let bob_url = add_member(&pg, scratch.path(), "bob");
    let a = member_owner(&alice_url);
    let b = member_owner(&bob_url);
    let pa = a.project("app");
    let pb = b.project("app");
    let ab = a.brain("app");
    let bb = b.brain("app");

    // 1. Doctrine born in the team medulla on A reaches B's default beat, labelled.
    let w = ab.ok(
        "memorize",
        json!({ "label": "release", "text": "we deploy with make release, never by hand", "tier": "team" }),
    );
    assert_eq!(w["team"]["status"], "connected", "{w}");
    let row = eventually(15, "the team doctrine on B", || {
        let v = bb.seek("how do we deploy release");
        team_rows(&v).into_iter().next()
    });
    assert_eq!(row["member"], "alice", "{row}");
    assert_eq!(row["text"], "we deploy with make release, never by hand");

    // 2. A promotion from a project brain to the team, attributed by the database.
    ab.memorize(
        "flaky test",
        "the flaky test is the timezone of the CI runner",
    );
    let (s, p) = a.founder_call(
        "promote",
        json!({ "claim": "flaky-test", "reason": "seen on every clone", "to": "team" }),
        &ab.headers(),
    );
    assert_eq!(s, 200, "{p}");
    assert!(
        p["identities"]["promoted_to"]
            .as_str()
            .unwrap()
            .starts_with("team@flaky-test@"),
        "{p}"
    );
    eventually(15, "the promotion on B", || {
        team_rows(&bb.seek("flaky timezone"))
            .into_iter()
            .find(|r| r["slug"] == "flaky-test" && r["member"] == "alice")
    });

    // 2b. `learn wrong` on a team claim, from another member, demotes it everywhere.
    let (s, l) = b.founder_call(
        "learn",
        json!({ "slug": "flaky-test", "verdict": "wrong", "note": "it was the cache", "tier": "team" }),
        &bb.headers(),
    );
    assert_eq!(s, 200, "{l}");
    eventually(15, "the demotion on A", || {
        let (_, v) = ab.call("seek", json!({ "query": "flaky timezone", "tier": "team" }));
        v["results"]
            .as_array()?
            .iter()
            .all(|r| r["slug"] != "flaky-test")
            .then_some(())
    });
    // The demotion is a recorded act on A's mirror, attributed to bob.
    let (s, acts) = a.founder_call("acts", json!({ "brain": "team" }), &[]);
    assert_eq!(s, 200, "{acts}");
    assert!(
        acts["acts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["kind"] == "demote" && x["actor"] == "team:bob"),
        "{acts}"
    );

    // 2c. The founder promotes a personal medulla claim to the team.
    let (s, _) = a.founder_call(
        "memorize",
        json!({ "label": "review rule", "text": "every migration gets a second reviewer", "tier": "medulla" }),
        &ab.headers(),
    );
    assert_eq!(s, 200);
    let (s, p) = a.founder_call(
        "promote",
        json!({ "claim": "review-rule", "brain": "medulla", "reason": "the team agreed", "to": "team" }),
        &[],
    );
    assert_eq!(s, 200, "{p}");
    assert_eq!(p["witness"]["tier"], "medulla", "{p}");
    eventually(15, "the medulla claim on B's team medulla", || {
        team_rows(&bb.seek("second reviewer migration"))
            .into_iter()
            .find(|r| r["slug"] == "review-rule" && r["origin_brain"] == "medulla")
    });
    let (s, refused) = ab.call(
        "promote",
        json!({ "claim": "review-rule", "brain": "medulla", "reason": "x", "to": "team" }),
    );
    assert_eq!(
        s, 403,
        "only the founder promotes the personal medulla: {refused}"
    );

    // 3. Nothing private leaves: an unshared brain's text, the personal medulla, a
    // flagged secret.
    a.project("private");
    a.brain("private")
        .memorize("private note", "zebra-quartz-unshared-7731 lives only here");
    let (s, _) = a.founder_call(
        "memorize",
        json!({ "label": "mine", "text": "okapi-personal-medulla-4410", "tier": "medulla" }),
        &ab.headers(),
    );
    assert_eq!(s, 200);
    let (s, refused) = ab.call(
        "memorize",
        json!({ "label": "token", "text": "ghp_Q7xK3m2P9lW4zB6nR8tY1uI5oA0sD3fG7hJk", "tier": "team" }),
    );
    assert_eq!(
        s, 422,
        "the floor refuses a secret bound for the team: {refused}"
    );

    // 4. A forged member is refused by the database itself.
    let forged = pg.try_psql_as(
        DB,
        "bob",
        password_in(&bob_url),
        "INSERT INTO medulla.acts (store, hash, member, body) VALUES ('team', repeat('f', 64), 'alice', '{}')",
    );
    assert!(forged.is_err(), "bob wrote as alice: {forged:?}");
    let update = pg.try_psql_as(
        DB,
        "bob",
        password_in(&bob_url),
        "UPDATE medulla.acts SET body = NULL",
    );
    assert!(
        update.is_err(),
        "members may not rewrite the log: {update:?}"
    );

    // 5. A shared brain converges across two clones at different paths.
    git(&pa, &["init", "-q"]);
    std::fs::write(pa.join("README"), "x").unwrap();
    git(&pa, &["add", "."]);
    git(&pa, &["commit", "-qm", "root"]);
    let clone = b.projects.path().join("elsewhere");
    let out = Command::new("git")
        .args(["clone", "-q"])
        .arg(&pa)
        .arg(&clone)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    std::fs::remove_dir_all(&pb).ok();
    let clone = std::fs::canonicalize(&clone).unwrap();
    ab.memorize("build cache", "the build cache lives in target-shared");
    let (s, shared) = a.founder_call("team_share", json!({}), &ab.headers());
    assert_eq!(s, 200, "{shared}");
    assert!(
        shared["key"].as_str().unwrap().starts_with("repo:"),
        "{shared}"
    );
    let bc = b.brain_at(&clone);
    let root = bb.root.clone();
    eventually(30, "the shared brain on B's clone", || {
        let (_, v) = bc.call("seek", json!({ "query": "build cache", "tier": "project" }));
        v["results"]
            .as_array()?
            .iter()
            .find(|r| r["slug"] == "build-cache" && r["member"] == "alice")
            .cloned()
    });
    // Issue 51: a member's local purge of a shared claim erased only this copy and said
    // so. Refused with the fix (the admin's purge reaches every mirror); nothing erased.
    let (s, v) = bc.call("purge", json!({ "slug": "build-cache" }));
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("shared_purge")),
        "{v}"
    );
    assert!(v.to_string().contains("medulla team purge"), "{v}");
    let (_, h) = bc.call("history", json!({ "slug": "build-cache" }));
    assert!(h.to_string().contains("target-shared"), "still here: {h}");
    // The refusal went to the team as a request: A's `team status` lists it for the admin.
    eventually(15, "bob's purge request on A", || {
        let (_, v) = a.get("/api/team");
        v["purge_requests"]
            .as_array()?
            .iter()
            .find(|r| r["slug"] == "build-cache" && r["member"] == "bob")
            .cloned()
    });

    // 6. The database stopped mid-traffic: writes queue, answers say offline, and on
    // restart every act arrives exactly once.
    pg.stop();
    let mut queued = Value::Null;
    for i in 0..5 {
        queued = ab.ok(
            "memorize",
            json!({ "label": format!("offline {i}"), "text": format!("written while the database was down {i}"), "tier": "team" }),
        );
    }
    assert!(queued["team"]["queued"].as_u64().unwrap() >= 1, "{queued}");
    assert_eq!(
        queued["team"]["shared"], false,
        "never shared while queued: {queued}"
    );
    eventually(15, "A to say offline", || {
        let v = ab.seek("anything");
        (v["team"]["status"] == "offline" && v["team"]["since"].is_i64()).then_some(())
    });
    pg.start_again();
    for i in 0..5 {
        eventually(30, "the offline writes on B", || {
            team_rows(&bb.seek(&format!("written while the database was down {i}")))
                .into_iter()
                .find(|r| r["label"] == format!("offline {i}"))
        });
    }
    eventually(15, "A to say everything is shared", || {
        let v = ab.seek("anything");
        (v["team"]["shared"] == true && v["team"]["queued"] == 0).then_some(())
    });
    let once = pg.psql(
        DB,
        "SELECT count(*) FROM medulla.acts WHERE body->'claim'->>'label' LIKE 'offline %'",
    );
    assert_eq!(once.trim(), "5", "each act once");

    // 6b. Two members supersede the same version while apart: both versions land, the
    // later in the log is live on both mirrors, and each names the other.
    ab.ok(
        "memorize",
        json!({ "label": "ci runner", "text": "the CI runner image is bookworm", "tier": "team" }),
    );
    eventually(15, "the base version on B", || {
        team_rows(&bb.seek("CI runner image"))
            .into_iter()
            .find(|r| r["slug"] == "ci-runner")
    });
    pg.stop();
    ab.ok(
        "memorize",
        json!({ "label": "ci runner", "text": "the CI runner image is trixie, says alice", "tier": "team" }),
    );
    bb.ok(
        "memorize",
        json!({ "label": "ci runner", "text": "the CI runner image is alpine, says bob", "tier": "team" }),
    );
    pg.start_again();
    let live = |o: &crate::common::Brain<'_>| -> Option<Value> {
        let (_, v) = o.call(
            "seek",
            json!({ "query": "CI runner image", "tier": "team" }),
        );
        v["results"]
            .as_array()?
            .iter()
            .find(|r| r["slug"] == "ci-runner" && r["conflict"].is_object())
            .cloned()
    };
    let (on_a, on_b) = eventually(30, "the conflict on both mirrors", || {
        let (x, y) = (live(&ab)?, live(&bb)?);
        (x["text"] == y["text"]).then_some((x, y))
    });
    let winner = on_a["member"].as_str().unwrap().to_string();
    let other = if winner == "alice" { "bob" } else { "alice" };
    assert_eq!(on_a["conflict"]["member"], other, "{on_a}");
    assert_eq!(on_b["conflict"], on_a["conflict"], "{on_b}");
    for o in [&a, &b] {
        let (s, st) = o.founder_call("team_status", json!({}), &[]);
        assert_eq!(s, 200, "{st}");
        assert!(
            st["conflicts"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["slug"] == "ci-runner"),
            "{st}"
        );
        let (s, doc) = o.get("/api/doctor");
        assert_eq!(s, 200, "{doc}");
        assert!(
            doc["team"]["conflicts"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["slug"] == "ci-runner"),
            "doctor shows the conflict: {doc}"
        );
    }

    // 7. A transaction that commits late is never skipped by a mirror that read past it.
    let bob_pw = password_in(&bob_url).to_string();
    let slow_sql = "BEGIN; \
        INSERT INTO medulla.acts (store, hash, body) \
          SELECT 'team', repeat('a', 64), jsonb_set(jsonb_set(jsonb_set(jsonb_set(body, \
            '{claim,label}', '\"late act\"'), '{claim,slug}', '\"late-act\"'), \
            '{claim,text}', '\"committed after a later act\"'), '{origin}', '\"slow\"') \
          FROM medulla.acts WHERE body->'claim'->>'label' = 'offline 0'; \
        SELECT pg_sleep(3); COMMIT;";
    std::thread::scope(|s| {
        let slow = s.spawn(|| pg.try_psql_as(DB, "bob", &bob_pw, slow_sql));
        std::thread::sleep(Duration::from_millis(500));
        ab.ok(
            "memorize",
            json!({ "label": "quick act", "text": "committed before the slow one", "tier": "team" }),
        );
        eventually(15, "the quick act on B", || {
            team_rows(&bb.seek("committed before the slow one"))
                .into_iter()
                .find(|r| r["label"] == "quick act")
        });
        slow.join()
            .unwrap()
            .expect("the slow transaction committed");
    });
    eventually(15, "the late act on B", || {
        team_rows(&bb.seek("committed after a later act"))
            .into_iter()
            .find(|r| r["label"] == "late act" && r["member"] == "bob")
    });

    // 8. Nothing private in any table: scan the whole database.
    let dump = pg.dump(DB);
    for secret in [
        "zebra-quartz-unshared-7731",
        "okapi-personal-medulla-4410",
        "ghp_Q7xK3m2P9lW4zB6nR8tY1uI5oA0sD3fG7hJk",
    ] {
        assert!(!dump.contains(secret), "{secret} reached the database");
    }
    assert!(dump.contains("make release"), "the dump is the real one");

    // 9. An admin's purge leaves a tombstone that erases every mirror's copy.
    let (ok, out) = medulla(
        scratch.path(),
        &[
            "team",
            "purge",
            "--url",
            &pg.admin_url(DB),
            "--store",
            "team",
            "--slug",
            "release",
        ],
    );
    assert!(ok, "{out}");
    for (who, o) in [("A", &ab), ("B", &bb)] {
        eventually(15, "the purge on every mirror", || {
            let (_, h) = o.call("seek", json!({ "query": "make release", "tier": "team" }));
            let gone = h["results"]
                .as_array()
                .is_some_and(|r| r.iter().all(|r| r["slug"] != "release"));
            gone.then_some(())
        });
        let _ = who;
    }
    assert!(
        !pg.dump(DB).contains("never by hand"),
        "the content left the log"
    );

    // A backup holds the team mirror (its outbox is what is queued and not yet sent).
    let (s, bk) = a.founder_call("backup", json!({}), &[]);
    assert_eq!(s, 200, "{bk}");
    assert!(
        bk["manifest"]["stores"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["store"] == "team"),
        "{bk}"
    );

    // The Hall shows the link and the conflict, in a real browser.
    let profile = tempfile::tempdir().unwrap();
    let browser = crate::hall::browser(profile.path());
    let tab = browser.new_tab().unwrap();
    let ticket: Value = a
        .http
        .post(format!("{}/api/hall/ticket", a.url))
        .header(header::FOUNDER, a.founder_token())
        .send()
        .unwrap()
        .json()
        .unwrap();
    tab.navigate_to(ticket["url"].as_str().unwrap()).unwrap();
    crate::hall::until(
        &tab,
        "document.documentElement.dataset.drawn === 'roster'",
        "the roster",
    );
    tab.evaluate("location.hash = '#/doctor'", false).unwrap();
    crate::hall::until(
        &tab,
        "document.querySelector('#team [data-stat=team-status]')?.innerText === 'connected'",
        "the team link in the doctor",
    );
    crate::hall::until(
        &tab,
        "document.querySelector('#team .claim[data-slug=ci-runner] .warnline.conflict')",
        "the conflict on the Hall",
    );
    assert!(crate::hall::text_of(&tab, "#team").contains("alice, bob"));

    // `team status` from the command line.
    let (ok, out) = medulla(
        a.home.path(),
        &["team", "status", "--json", "--url", &a.url],
    );
    assert!(ok, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "connected", "{v}");
    assert_eq!(v["members"], json!(["alice", "bob"]), "{v}");

    // Leaving while the owner runs (issue 51): shared stores stop queueing at once, and
    // a restart finds no team either.
    let (ok, out) = medulla(b.home.path(), &["team", "leave"]);
    assert!(ok, "{out}");
    let (b, _) = b.restart(OwnerOptions::default());
    let cfg = std::fs::read_to_string(b.home.path().join("config.toml")).unwrap();
    assert!(!cfg.contains("[team]"), "{cfg}");
    let bc = b.caller_at(&root);
    let v = bc.memorize("after leaving", "stays on this machine");
    assert!(v.get("team").is_none(), "no team, no team note: {v}");
    let (s, v) = bc.call("seek", json!({ "query": "x", "tier": "team" }));
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (409, Some("no_team")),
        "{v}"
    );
}

/// The `openssl` command, installed with apt-get when missing and running as root;
/// otherwise the test fails naming the command that installs it.
fn ensure_openssl() {
    if Command::new("openssl").arg("version").output().is_ok() {
        return;
    }
    assert!(
        crate::pg::is_root(),
        "the TLS test needs the openssl command: apt-get install -y openssl"
    );
    let out = Command::new("apt-get")
        .args(["install", "-y", "openssl"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .expect("apt-get");
    assert!(out.status.success(), "apt-get install -y openssl: {out:?}");
}

/// A test CA and a server certificate for `localhost` it signed, readable by the
/// server: (CA certificate, server certificate, server key).
fn certificates(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    ensure_openssl();
    let p = |n: &str| dir.join(n);
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .current_dir(dir)
            .args(args)
            .output()
            .expect("openssl (the tests need it to make a server certificate)");
        assert!(out.status.success(), "openssl {args:?}: {out:?}");
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=medulla-test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    std::fs::write(p("san.ext"), "subjectAltName=DNS:localhost\n").unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        "san.ext",
        "-out",
        "server.crt",
    ]);
    let (ca, crt, key) = (p("ca.crt"), p("server.crt"), p("server.key"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&crt, std::fs::Permissions::from_mode(0o644)).unwrap();
        // As root the server runs as `postgres`, which must own its key.
        if crate::pg::is_root() {
            let out = Command::new("chown")
                .arg("postgres:")
                .arg(&key)
                .arg(&crt)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
        }
    }
    (ca, crt, key)
}

#[test]
fn the_team_link_is_encrypted_when_the_url_asks_and_a_certificate_is_checked_for_verify_full() {
    let pg = Postgres::start();
    pg.create_db(DB);
    let certs = tempfile::tempdir().unwrap();
    let (ca, crt, key) = certificates(certs.path());
    pg.psql(
        "postgres",
        &format!(
            "ALTER SYSTEM SET ssl_cert_file = '{}'; ALTER SYSTEM SET ssl_key_file = '{}'; \
             ALTER SYSTEM SET ssl = on; SELECT pg_reload_conf();",
            crt.display(),
            key.display()
        ),
    );
    std::thread::sleep(Duration::from_millis(500));
    let scratch = tempfile::tempdir().unwrap();
    let admin = pg.admin_url(DB).replace("127.0.0.1", "localhost");
    // verify-full against the web's roots: a self-signed server is refused.
    let (ok, out) = medulla(
        scratch.path(),
        &["team", "init", &format!("{admin}?sslmode=verify-full")],
    );
    assert!(!ok, "a self-signed certificate passed verify-full: {out}");
    assert!(out.to_lowercase().contains("certificate"), "{out}");
    // verify-full against its own root: accepted.
    let (ok, out) = medulla(
        scratch.path(),
        &[
            "team",
            "init",
            &format!("{admin}?sslmode=verify-full&sslrootcert={}", ca.display()),
        ],
    );
    assert!(ok, "{out}");
    // A member on `sslmode=require`: the owner's connections are encrypted.
    let carol = add_member(&pg, scratch.path(), "carol");
    let c = member_owner(&format!("{carol}?sslmode=require"));
    let w = c.brain("x");
    c.project("x");
    let v = w.ok(
        "memorize",
        json!({ "label": "tls", "text": "over tls", "tier": "team" }),
    );
    assert!(v["team"].is_object(), "{v}");
    let encrypted = eventually(15, "carol's encrypted connections", || {
        let n = pg.psql(
            DB,
            "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.usename = 'carol' AND s.ssl",
        );
        let n: u32 = n.trim().parse().unwrap();
        (n >= 2).then_some(n)
    });
    assert!(encrypted >= 2, "the client and the LISTEN connection");
    let plain = pg.psql(
        DB,
        "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
         WHERE a.usename = 'carol' AND NOT s.ssl",
    );
    assert_eq!(plain.trim(), "0");
}
