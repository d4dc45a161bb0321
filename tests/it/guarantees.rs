//! The guarantees against careless and hostile callers (issue 10): each finding of the
//! hostile test is pinned here by a test that failed before its fix.

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{header, labels, Owner, OwnerOptions, RawHttp};

const MAKER: (&str, &str) = (header::AGENT, "claude:maker");

fn root_header(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Finding 1: a project write carrying a secret was stored silently; the promotion floor
/// read only `text`, so a token in `evidence` or in the promotion `reason` reached the
/// medulla, as did evidence on doctrine birth and on `import --medulla`.
#[test]
fn secrets_are_refused_in_every_field_and_a_project_write_too() {
    let o = Owner::start();
    let x = o.brain("x");
    let h = x.headers();
    let token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";

    let (s, v) = o.call(
        "memorize",
        json!({ "label": "ci token", "text": format!("the ci token is {token}") }),
        &h,
    );
    assert_eq!(s, 422, "{v}");
    assert_eq!(v["error"]["code"], "hygiene_refused");
    assert!(
        !v.to_string().contains(token),
        "the refusal repeats the secret: {v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("project_secrets"),
        "{v}"
    );
    assert_eq!(v["error"]["findings"][0]["field"], "text");

    let (s, v) = o.call(
        "memorize",
        json!({ "label": "release notes", "text": "see the evidence", "evidence": [format!("https://x.test/?t={token}")] }),
        &h,
    );
    assert_eq!(s, 422, "a secret in evidence is refused too: {v}");
    assert_eq!(v["error"]["findings"][0]["field"], "evidence");

    // A clean claim, then a promotion whose reason carries the secret.
    let (s, _) = o.call(
        "memorize",
        json!({ "label": "deploy rule", "text": "deploy with the blue green script" }),
        &h,
    );
    assert_eq!(s, 200);
    let (s, v) = o.founder_call(
        "promote",
        json!({ "claim": "deploy-rule", "reason": format!("held in x, token {token}") }),
        &h,
    );
    assert_eq!(s, 422, "the promotion reason is scanned: {v}");
    assert_eq!(v["error"]["findings"][0]["field"], "promotion reason");

    // Doctrine birth: evidence is scanned.
    let (s, v) = o.founder_call(
        "memorize",
        json!({ "tier": "medulla", "label": "doctrine", "text": "small commits", "evidence": [token], "agent_id": "human:founder" }),
        &h,
    );
    assert_eq!(s, 422, "{v}");

    // import --medulla: evidence is scanned.
    let legacy = o.projects.path().join("legacy");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(
        legacy.join("a.light.md"),
        format!("Node: imported rule\nCreated: 1\nEvidence: {token}\n\nclean text\n"),
    )
    .unwrap();
    let (s, v) = o.founder_call("import", json!({ "dir": legacy, "medulla": true }), &[]);
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["imported_live"], 0, "{v}");
    assert_eq!(v["refusals"][0]["reason"], "secret found");
    assert!(!v.to_string().contains(token));
    assert!(
        o.claims("medulla").is_empty(),
        "nothing secret reached the medulla"
    );
}

/// The relaxed policy: `project_secrets = "flag"` accepts a project write and says so;
/// the claim still never leaves the project (promotion and export refuse it), and
/// `purge` is the way out.
#[test]
fn flag_policy_accepts_and_flags_and_purge_erases() {
    let o = Owner::start_with(OwnerOptions {
        config_toml: Some("project_secrets = \"flag\"\n".into()),
        ..Default::default()
    });
    let x = o.brain("x");
    let xr = x.root.clone();
    let h = x.headers();
    let secret = "password=Tr0ub4dor-and-3xyz";
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "db url", "text": format!("prod db is {secret}") }),
        &h,
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["hygiene"]["flagged"], true, "{v}");
    let (s, v) = o.founder_call(
        "promote",
        json!({ "claim": "db-url", "reason": "used everywhere" }),
        &h,
    );
    assert_eq!(s, 422, "{v}");
    let out = o.projects.path().join("out");
    let (s, v) = o.founder_call("export", json!({ "dir": out, "brain": xr }), &h);
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["live_files"], 0);
    assert_eq!(v["refused"][0]["slug"], "db-url");
    assert!(!out.join("db-url.light.md").exists());

    let (s, v) = o.call("purge", json!({ "slug": "db-url" }), &h);
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["purged"]["versions_erased"], 1);
    let (s, v) = o.call(
        "history",
        json!({ "slug": "db-url", "tier": "project" }),
        &h,
    );
    assert_eq!(s, 404, "{v}");
    // The medulla is the founder's to purge.
    let (s, v) = o.call("purge", json!({ "slug": "x", "tier": "medulla" }), &h);
    assert_eq!(s, 403, "{v}");
    assert_eq!(v["error"]["code"], "founder_only");
}

/// Finding 2: `bootstrap {"root": "/"}` was accepted (also `/etc`, a symlink to `/etc`,
/// `$MEDULLA_HOME`), and then every write from any unregistered directory landed there.
#[test]
fn bootstrap_refuses_roots_that_are_not_projects() {
    let user_home = tempfile::tempdir().unwrap();
    let o = Owner::start_with(OwnerOptions {
        env: vec![(
            "HOME".into(),
            user_home.path().to_string_lossy().into_owned(),
        )],
        ..Default::default()
    });
    let link = o.projects.path().join("etc-link");
    std::os::unix::fs::symlink("/etc", &link).unwrap();
    let file = o.projects.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let home = std::fs::canonicalize(o.home.path()).unwrap();
    let cases: Vec<(String, &str)> = vec![
        ("/".into(), "root_is_filesystem_root"),
        ("/etc".into(), "root_is_system_directory"),
        (
            link.to_string_lossy().into_owned(),
            "root_is_system_directory",
        ),
        ("/usr".into(), "root_is_system_directory"),
        (
            home.to_string_lossy().into_owned(),
            "root_inside_medulla_home",
        ),
        (
            home.join("brains").to_string_lossy().into_owned(),
            "root_inside_medulla_home",
        ),
        (
            user_home.path().to_string_lossy().into_owned(),
            "root_is_home_directory",
        ),
        (file.to_string_lossy().into_owned(), "root_not_a_directory"),
        ("/definitely/not/here".into(), "root_not_a_directory"),
    ];
    for (root, code) in cases {
        let (s, v) = o.call("bootstrap", json!({ "root": root }), &[]);
        assert_eq!(s, 400, "{root}: {v}");
        assert_eq!(v["error"]["code"], code, "{root}: {v}");
    }
    let (_, v) = o.get("/api/instances");
    assert_eq!(
        v["instances"].as_array().unwrap().len(),
        0,
        "no brain was made: {v}"
    );
    let elsewhere = o.project("unregistered");
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "l", "text": "t" }),
        &[(header::CALLER_ROOT, &root_header(&elsewhere)), MAKER],
    );
    assert_eq!(s, 409, "{v}");
    assert_eq!(v["error"]["code"], "unbootstrapped");
}

/// Finding 3: a session whose first call came from Y and that later sent caller root X
/// wrote into Y; a session routed to X that bootstrapped Z then wrote into Z.
#[test]
fn the_caller_root_of_a_request_beats_the_sessions_stickiness() {
    let o = Owner::start();
    let (x, y, z) = (o.brain("x"), o.brain("y"), o.project("z"));
    let (xr, yr, zr) = (x.root.clone(), y.root.clone(), root_header(&z));
    // The calls go over MCP sessions with headers by hand: routing by them is the point.
    let mut m = o.mcp();
    m.initialize(&[]);
    let v = m
        .tool(
            "memorize",
            json!({ "label": "first", "text": "from y" }),
            &[(header::CALLER_ROOT, &yr), MAKER],
        )
        .unwrap();
    assert_eq!(v["brain"]["root"], yr.as_str());
    let v = m
        .tool(
            "memorize",
            json!({ "label": "second", "text": "from x" }),
            &[(header::CALLER_ROOT, &xr), MAKER],
        )
        .unwrap();
    assert_eq!(
        v["brain"]["root"],
        xr.as_str(),
        "served by the request's caller root: {v}"
    );
    assert_eq!(
        v["reception"]["status"], "mismatch",
        "and reception says the session moved: {v}"
    );
    // A request with neither header keeps to the session's first brain.
    let v = m
        .tool("seek", json!({ "query": "", "tier": "project" }), &[])
        .unwrap();
    assert_eq!(labels(&v), vec!["first"], "{v}");

    // bootstrap never rebinds a session.
    let mut n = o.mcp();
    n.initialize(&[]);
    n.tool(
        "memorize",
        json!({ "label": "a", "text": "in x" }),
        &[(header::CALLER_ROOT, &xr), MAKER],
    )
    .unwrap();
    n.tool(
        "bootstrap",
        json!({ "root": zr }),
        &[(header::CALLER_ROOT, &xr)],
    )
    .unwrap();
    let v = n
        .tool(
            "memorize",
            json!({ "label": "b", "text": "still x" }),
            &[(header::CALLER_ROOT, &xr), MAKER],
        )
        .unwrap();
    assert_eq!(v["brain"]["root"], xr.as_str(), "{v}");
    let v = n
        .tool(
            "memorize",
            json!({ "label": "c", "text": "no headers" }),
            &[MAKER],
        )
        .unwrap();
    assert_eq!(
        v["brain"]["root"],
        xr.as_str(),
        "the sticky brain is x, not z: {v}"
    );
    assert!(o.claims(&zr).is_empty(), "nothing landed in z");
}

/// Finding 4: a `claude:maker` routed to X promoted Y's private claim into the medulla,
/// from where it showed in X's default recall.
#[test]
fn promotion_of_another_brains_claim_is_refused_unless_founder() {
    let o = Owner::start();
    let (x, y) = (o.brain("x"), o.brain("y"));
    let yr = y.root.clone();
    y.memorize("y private", "axolotl sentinel of y");
    let hx = x.headers();
    let (s, v) = x.call(
        "promote",
        json!({ "brain": yr, "claim": "y-private", "reason": "looks general" }),
    );
    assert_eq!(s, 403, "{v}");
    assert_eq!(v["error"]["code"], "not_your_brain");
    assert!(o.claims("medulla").is_empty());
    let (_, v) = x.call("seek", json!({ "query": "axolotl sentinel" }));
    assert!(labels(&v).is_empty(), "nothing of y reaches x: {v}");
    // Over MCP too, and for the other verbs that name a brain.
    let mut m = o.mcp();
    m.initialize(&hx);
    let e = m
        .tool(
            "promote",
            json!({ "brain": yr, "claim": "y-private", "reason": "r" }),
            &hx,
        )
        .unwrap_err();
    assert_eq!(e["error"]["code"], "not_your_brain");
    let out = o.projects.path().join("dump");
    let (s, v) = x.call("export", json!({ "dir": out, "brain": yr }));
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("not_your_brain")),
        "{v}"
    );
    let (s, _) = o.get(&format!("/api/claims?brain={yr}"));
    assert_eq!(s, 403);
    // The founder surface may.
    let (s, v) = o.founder_call(
        "promote",
        json!({ "brain": yr, "claim": "y-private", "reason": "confirmed by the founder" }),
        &hx,
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        v["medulla_claim"]["promotion"]["promoted_by"],
        "human:founder"
    );
}

/// Finding 5 over HTTP: `C# build` silently replaced `C++ build`.
#[test]
fn a_colliding_label_is_refused_naming_the_holder() {
    let o = Owner::start();
    let x = o.brain("x");
    x.memorize("C++ build", "cmake");
    let (s, v) = x.call("memorize", json!({ "label": "C# build", "text": "dotnet" }));
    assert_eq!(s, 409, "{v}");
    assert_eq!(v["error"]["code"], "label_collision");
    assert_eq!(v["error"]["existing_label"], "C++ build");
    let v = x.history("c-build");
    assert_eq!(v["versions"].as_array().unwrap().len(), 1);
}

/// Finding 6: `import {triage: "/etc/passwd"}` answered 400 quoting the file.
#[test]
fn errors_name_the_path_never_its_bytes() {
    let o = Owner::start();
    let secret_line = "root:x:0:0:top-secret-marker";
    let f = o.projects.path().join("passwd");
    std::fs::write(&f, format!("{secret_line}\nmore:lines\n")).unwrap();
    let dir = o.projects.path().join("d");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("x.light.md"),
        format!("Node: x\nCreated: {secret_line}\n\nbody\n"),
    )
    .unwrap();
    let (s, v) = o.founder_call(
        "import",
        json!({ "dir": dir, "triage": f, "dry_run": true }),
        &[],
    );
    assert_eq!(s, 400, "{v}");
    assert!(!v.to_string().contains("top-secret-marker"), "{v}");
    assert!(v.to_string().contains("passwd"), "the path is named: {v}");
    let x = o.brain("x");
    let (_, v) = o.founder_call(
        "import",
        json!({ "dir": dir, "brain": x.root, "dry_run": true }),
        &[],
    );
    assert!(!v.to_string().contains("top-secret-marker"), "{v}");
    assert!(
        v["refusals"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("line 2"),
        "{v}"
    );
}

/// Finding 7: no bound on query length, limits, NUL bytes, slow bodies.
#[test]
fn every_input_is_bounded_with_a_typed_error() {
    let o = Owner::start();
    let x = o.brain("x");
    let h = x.headers();
    let (s, v) = o.call("seek", json!({ "query": "q ".repeat(3000) }), &h);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("too_long")),
        "{v}"
    );
    let (s, v) = o.call("north", json!({ "task": "t".repeat(5000) }), &h);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("too_long")),
        "{v}"
    );
    let (s, v) = o.call("seek", json!({ "query": "x", "limit": 0 }), &h);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("limit_out_of_range")),
        "{v}"
    );
    let (s, v) = o.call("seek", json!({ "query": "x", "limit": 100000 }), &h);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("limit_out_of_range")),
        "{v}"
    );
    let (s, v) = o.call("memorize", json!({ "label": "a\u{0}b", "text": "t" }), &h);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (400, Some("control_characters")),
        "{v}"
    );
    let big = "x".repeat(2 * 1024 * 1024);
    let (s, v) = o.call("seek", json!({ "query": big }), &h);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (413, Some("body_too_large")),
        "{v}"
    );

    // A body that never finishes arriving is cut off with 408, and the owner stays up.
    let addr = o.url.trim_start_matches("http://").to_string();
    let mut sock = std::net::TcpStream::connect(&addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        sock,
        "POST /api/call/seek HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"query\""
    )
    .unwrap();
    let mut answer = String::new();
    let _ = sock.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("body_timeout"), "{answer}");
    assert_eq!(o.get("/api/health").0, 200);
}

/// Finding 7: MCP sessions were unbounded. Past the cap, the least recently used closes.
#[test]
fn mcp_sessions_are_capped_least_recently_used_first() {
    let o = Owner::start_with(OwnerOptions {
        config_toml: Some("max_sessions = 3\n".into()),
        ..Default::default()
    });
    let mut sessions: Vec<_> = (0..3)
        .map(|_| {
            let mut m = o.mcp();
            m.initialize(&[]);
            m
        })
        .collect();
    // Touch the first so the second is the least recently used.
    let first = sessions[0].request("ping", json!({}), &[]);
    assert!(first.get("result").is_some());
    let mut newer = o.mcp();
    newer.initialize(&[]);
    let (s, v) = sessions[1].raw(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}).to_string(),
        &[],
    );
    assert_eq!(s, 404, "the least recently used session was closed: {v}");
    assert_eq!(v["error"]["code"], -32600, "and answered in JSON-RPC: {v}");
    assert!(sessions[0]
        .request("ping", json!({}), &[])
        .get("result")
        .is_some());
    assert!(newer
        .request("ping", json!({}), &[])
        .get("result")
        .is_some());
}

/// Finding 8: `report {"repo": <any dir>}` created `<dir>/.medulla/inbox.jsonl`;
/// `proj3/../victim/../x` filed into proj3's box; export into `$MEDULLA_HOME/brains/x`
/// made a phantom brain.
#[test]
fn nothing_is_written_where_the_spec_puts_nothing() {
    let o = Owner::start();
    let plain = o.project("plain");
    let proj3 = o.brain("proj3").path();
    let (s, v) = o.call(
        "report",
        json!({ "letter": { "class": "bug", "repo": plain, "what": "x" } }),
        &[MAKER],
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["filed"]["to"], "pending_distribution", "{v}");
    assert!(
        !plain.join(".medulla").exists(),
        "no box in a directory that is no repository"
    );
    let sneaky = format!("{}/../victim/../x", proj3.display());
    let (_, v) = o.call(
        "report",
        json!({ "letter": { "class": "bug", "repo": sneaky, "what": "y" } }),
        &[MAKER],
    );
    assert_eq!(v["filed"]["to"], "pending_distribution", "{v}");
    assert!(!proj3.join(".medulla").exists(), "not proj3's box");

    let phantom = o.home.path().join("brains").join("x");
    let (s, v) = o.founder_call("export", json!({ "dir": phantom, "medulla": true }), &[]);
    assert_eq!(s, 400, "{v}");
    assert_eq!(v["error"]["code"], "inside_medulla_home");
    assert!(!phantom.exists());
    let (_, v) = o.get("/api/instances");
    assert_eq!(
        v["instances"].as_array().unwrap().len(),
        1,
        "no phantom brain: {v}"
    );
}

/// Finding 9: malformed JSON-RPC was answered outside JSON-RPC; DELETE of an unknown
/// session answered 202.
#[test]
fn every_malformed_mcp_message_gets_a_json_rpc_error() {
    let o = Owner::start();
    let mut m = o.mcp();
    let cases = [
        (json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]).to_string(), -32600),
        (json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}).to_string(), -32600),
        (json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]}).to_string(), -32602),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x"}}}).to_string(),
            -32602,
        ),
        ("{not json".to_string(), -32700),
    ];
    for (body, code) in &cases {
        let (s, v) = m.raw(body, &[]);
        assert_eq!(s, 400, "{body}: {v}");
        assert_eq!(v["jsonrpc"], "2.0", "{body}: {v}");
        assert_eq!(v["error"]["code"], *code, "{body}: {v}");
    }
    m.initialize(&[]);
    let (s, v) = m.raw(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "seek", "arguments": "{\"query\": \"x\"}"}}).to_string(),
        &[],
    );
    assert_eq!((s, v["error"]["code"].as_i64()), (400, Some(-32602)), "{v}");
    assert_eq!(v["id"], 5);

    let del = |id: &str| {
        o.http
            .delete(format!("{}/mcp", o.url))
            .header(header::SESSION, id)
            .send()
            .unwrap()
    };
    let r = del("no-such-session");
    assert_eq!(r.status().as_u16(), 404);
    let v: Value = r.json().unwrap();
    assert_eq!(v["jsonrpc"], "2.0");
    let id = m.session.clone().unwrap();
    assert!(matches!(del(&id).status().as_u16(), 200 | 204));
    assert_eq!(
        del(&id).status().as_u16(),
        404,
        "a second DELETE finds nothing"
    );
}

/// Finding 10 over HTTP: export then import was not lossless for evidence holding ", ",
/// CRLF text and unicode.
#[test]
fn export_then_import_keeps_tricky_content_exactly() {
    let o = Owner::start();
    let (a, b) = (o.brain("a"), o.brain("b"));
    let ar = a.root.clone();
    let tricky = [
        (
            "Windows notes",
            "line one\r\nline two, with comma\r\n\ttabbed",
            vec!["a, b", "\"q\""],
        ),
        (
            "Unicode 漢字 ✓",
            "ünïcödé — em dash · 🙂\n\nblank line above",
            vec!["[x]"],
        ),
    ];
    for (label, text, ev) in &tricky {
        a.memorize_with(json!({ "label": label, "text": text, "evidence": ev }));
    }
    let out = o.projects.path().join("out");
    let (s, v) = o.founder_call("export", json!({ "dir": out, "brain": ar }), &[]);
    assert_eq!(s, 200, "{v}");
    let (s, v) = o.founder_call("import", json!({ "dir": out, "brain": b.root }), &[]);
    assert_eq!(s, 200, "{v}");
    let before = o.claims(&ar);
    let after = b.claims();
    assert_eq!(before.len(), after.len());
    for c in &before {
        let twin = after
            .iter()
            .find(|d| d["slug"] == c["slug"])
            .expect("imported");
        for k in [
            "label",
            "text",
            "evidence",
            "content_hash",
            "strength",
            "created",
        ] {
            assert_eq!(c[k], twin[k], "{k} of {}", c["slug"]);
        }
    }
}

/// Nothing acknowledged is lost: eight writers over HTTP, the owner SIGKILLed mid-stream,
/// restarted over the same home; every claim whose write was answered 200 is back, in
/// the brain it was written to, and the stores open clean.
#[test]
fn a_sigkill_under_concurrent_writers_loses_nothing_acknowledged() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let o = Owner::start();
    let roots: Vec<String> = ["a", "b"].iter().map(|p| o.brain(p).root).collect();
    let acked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let url = o.url.clone();
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (acked, stop, url) = (acked.clone(), stop.clone(), url.clone());
            let root = roots[w % 2].clone();
            std::thread::spawn(move || {
                let http = reqwest::blocking::Client::builder()
                    .timeout(Duration::from_secs(10))
                    .build()
                    .unwrap();
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) || i >= 400 {
                        break;
                    }
                    let label = format!("writer {w} claim {i}");
                    let r = http
                        .post(format!("{url}/api/call/memorize"))
                        .header(header::CALLER_ROOT, &root)
                        .header(header::AGENT, "claude:maker")
                        .json(&json!({ "label": label, "text": format!("written by {w} as number {i}") }))
                        .send();
                    match r {
                        Ok(r) if r.status().as_u16() == 200 => {
                            acked.lock().unwrap().push((root.clone(), label))
                        }
                        _ => {}
                    }
                }
            })
        })
        .collect();
    // Let the writers get going, then pull the plug without warning.
    while acked.lock().unwrap().len() < 150 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let o = o.kill_and_restart(OwnerOptions::default());
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 150);
    for root in &roots {
        let have: std::collections::HashSet<String> = o
            .claims(root)
            .iter()
            .map(|c| c["label"].as_str().unwrap().to_string())
            .collect();
        for (r, label) in acked.iter().filter(|(r, _)| r == root) {
            assert!(
                have.contains(label),
                "{label} was acknowledged in {r} and is gone"
            );
        }
    }
    let (_, doctor) = o.get("/api/doctor");
    assert!(
        doctor["broken"].as_array().unwrap().is_empty(),
        "the stores open clean: {doctor}"
    );
}

/// Found in CI: the owner closed a kept-alive connection after 10 s without a request
/// (hyper times the wait for the next request head with the head's own clock), while
/// clients keep idle connections for longer (90 s in reqwest and Go's default), so a
/// request sent as the owner closed the connection failed (`IncompleteMessage`). A
/// connection idle for longer than the head timeout must still answer.
#[test]
fn a_kept_alive_connection_idle_past_the_head_timeout_still_answers() {
    let o = Owner::start();
    let mut conn = RawHttp::open(&o);
    let mut health = || {
        conn.round("GET", "/api/health", &[], "")
            .map(|a| a.status())
    };
    assert_eq!(health().unwrap(), Some(200));
    std::thread::sleep(Duration::from_secs(12));
    let second = health();
    assert!(
        matches!(second, Ok(Some(200))),
        "the same connection answers after 12 s idle: {second:?}"
    );
}
