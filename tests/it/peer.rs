//! Who may call (SPEC §15, issue 48): the owner serves only its own OS user. Another
//! account on the machine that sends a victim's project root was served before (REST
//! seek read the claims, memorize wrote, MCP answered); now the kernel's peer uid refuses
//! it before a byte is read, and where the kernel is not asked (`peer_check = false`)
//! every caller presents the client token.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::cli::medulla_cmd;
use crate::common::{header, Owner, OwnerOptions};

/// Why the foreign-user test cannot run here, if it cannot.
fn cannot_switch_user() -> Option<&'static str> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .is_some_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root {
        return Some("not running as root: cannot run a client as another user");
    }
    for tool in ["runuser", "curl"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Some(if tool == "runuser" {
                "runuser is missing"
            } else {
                "curl is missing"
            });
        }
    }
    None
}

/// `POST url` as the OS user `nobody` (curl under runuser): the status and the JSON body.
fn post_as_nobody(url: &str, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let mut cmd = Command::new("runuser");
    cmd.args(["-u", "nobody", "--", "curl", "-s", "-X", "POST"])
        .args(["-w", "\n%{http_code}"])
        .args(["-H", "content-type: application/json"])
        .args(["-H", "accept: application/json, text/event-stream"]);
    for (k, v) in headers {
        cmd.args(["-H", &format!("{k}: {v}")]);
    }
    let out = cmd
        .args(["--data-binary", &body.to_string(), url])
        .current_dir("/")
        .output()
        .expect("run curl as nobody");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').unwrap_or(("", &text));
    let status: u16 = status.trim().parse().unwrap_or(0);
    assert!(
        status != 0,
        "curl as nobody got no answer (exit {:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

fn assert_foreign(what: &str, (status, v): (u16, Value)) {
    assert_eq!(status, 403, "{what} from another user: {v}");
    assert_eq!(v["error"]["code"], "foreign_user", "{what}: {v}");
    let msg = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("root"),
        "the refusal names the owner's user: {msg}"
    );
    assert!(
        !msg.contains("connections"),
        "the refusal tells nothing of memory: {msg}"
    );
}

#[test]
fn another_os_user_is_refused_on_rest_and_mcp_and_writes_nothing() {
    if let Some(why) = cannot_switch_user() {
        eprintln!("skipped: {why}");
        return;
    }
    let o = Owner::start();
    let b = o.brain("victim");
    b.memorize("pool size", "the pool holds 20 connections");
    let seek = json!({ "query": "pool size" });
    let as_caller = [
        (header::CALLER_ROOT, b.root.as_str()),
        (header::AGENT, "claude:maker"),
    ];
    // Read here, never by the other user (it cannot read the home); absent before the fix.
    let token = std::fs::read_to_string(o.home.path().join("client.token")).unwrap_or_default();
    let bearer = format!("Bearer {}", token.trim());
    let with_token = [
        as_caller[0],
        as_caller[1],
        ("Authorization", bearer.as_str()),
    ];

    let rest = |verb: &str| format!("{}/api/call/{verb}", o.url);
    assert_foreign(
        "REST seek",
        post_as_nobody(&rest("seek"), &as_caller, &seek),
    );
    assert_foreign(
        "REST memorize",
        post_as_nobody(
            &rest("memorize"),
            &as_caller,
            &json!({ "label": "intruder", "text": "written by another account" }),
        ),
    );
    // The client token is not enough for another uid where the kernel names it.
    assert_foreign(
        "REST memorize with the token",
        post_as_nobody(
            &rest("memorize"),
            &with_token,
            &json!({ "label": "intruder", "text": "written by another account" }),
        ),
    );
    let mcp = format!("{}/mcp", o.url);
    assert_foreign(
        "MCP initialize",
        post_as_nobody(
            &mcp,
            &as_caller,
            &json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "intruder", "version": "0" } } }),
        ),
    );
    assert_foreign(
        "MCP notifications/initialized",
        post_as_nobody(
            &mcp,
            &as_caller,
            &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        ),
    );
    assert_foreign(
        "MCP tools/call seek",
        post_as_nobody(
            &mcp,
            &as_caller,
            &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": { "name": "seek", "arguments": seek } }),
        ),
    );

    // Nothing was written; the owner's own user is served as before.
    let labels: Vec<String> = o
        .claims(&b.root)
        .iter()
        .filter_map(|c| c["label"].as_str().map(str::to_string))
        .collect();
    assert_eq!(labels, ["pool size"], "only the owner's claim");
    assert!(b.seek("pool size").to_string().contains("20 connections"));
    let mut m = o.mcp();
    m.initialize(&as_caller);
    let found = m.tool("seek", seek, &as_caller).expect("seek over MCP");
    assert!(found.to_string().contains("20 connections"), "{found}");

    let (s, d) = o.get("/api/doctor");
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["refused_callers"]["foreign_user"], 6, "{d}");
    assert_eq!(d["refused_callers"]["peer_unknown"], 0, "{d}");
}

fn token_owner() -> Owner {
    Owner::start_with(OwnerOptions {
        config_toml: Some("peer_check = false\n".into()),
        ..Default::default()
    })
}

fn bearer(home: &Path) -> String {
    let t = std::fs::read_to_string(home.join("client.token")).expect("client.token");
    format!("Bearer {}", t.trim())
}

#[test]
fn with_the_peer_check_off_every_caller_presents_the_client_token() {
    let o = token_owner();
    let auth = bearer(o.home.path());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(o.home.path().join("client.token"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the client token is private");
    }
    let root = o.project("p");
    let root_s = root.to_string_lossy().into_owned();
    let caller = [
        (header::CALLER_ROOT, root_s.as_str()),
        (header::AGENT, "claude:maker"),
    ];
    let (s, v) = o.call("bootstrap", json!({ "root": root }), &[]);
    assert_eq!(s, 401, "no token: {v}");
    assert_eq!(v["error"]["code"], "token_required", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("client.token"),
        "the refusal names the file: {v}"
    );
    let (s, v) = o.call(
        "bootstrap",
        json!({ "root": root }),
        &[("Authorization", "Bearer not-the-token")],
    );
    assert_eq!(
        (s, v["error"]["code"].clone()),
        (401, json!("token_required"))
    );
    let (s, v) = o.call(
        "bootstrap",
        json!({ "root": root }),
        &[("Authorization", auth.as_str())],
    );
    assert_eq!(s, 200, "{v}");
    let with = [caller[0], caller[1], ("Authorization", auth.as_str())];
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "pool size", "text": "the pool holds 20 connections" }),
        &caller,
    );
    assert_eq!(s, 401, "memorize without the token: {v}");
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "pool size", "text": "the pool holds 20 connections" }),
        &with,
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = o.call("seek", json!({ "query": "pool size" }), &with);
    assert_eq!(s, 200, "{v}");
    assert!(v.to_string().contains("20 connections"), "{v}");
    let mut m = o.mcp();
    let (s, v) = m.raw(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "t", "version": "0" } } })
        .to_string(),
        &caller,
    );
    assert_eq!(
        (s, v["error"]["code"].clone()),
        (401, json!("token_required"))
    );
    m.initialize(&with);
    let found = m
        .tool("seek", json!({ "query": "pool size" }), &with)
        .expect("seek over MCP with the token");
    assert!(found.to_string().contains("20 connections"), "{found}");

    // The command line reads the token itself.
    let out = medulla_cmd(o.home.path(), &root)
        .args(["seek", "pool size"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("20 connections"),
        "medulla seek: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The Hall: its page needs no token, a ticket from the command line trades for a
    // session without one, and the session then counts as authenticated.
    let page = o.http.get(format!("{}/", o.url)).send().unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let r = o
        .http
        .post(format!("{}/api/hall/ticket", o.url))
        .header(header::FOUNDER, o.founder_token())
        .send()
        .unwrap();
    assert_eq!(
        r.status().as_u16(),
        401,
        "a ticket without the client token"
    );
    let ticket: Value = o
        .http
        .post(format!("{}/api/hall/ticket", o.url))
        .header(header::FOUNDER, o.founder_token())
        .header("Authorization", auth.as_str())
        .send()
        .unwrap()
        .json()
        .unwrap();
    let ticket = ticket["ticket"].as_str().expect("a ticket").to_string();
    let session: Value = o
        .http
        .post(format!("{}/api/hall/session", o.url))
        .json(&json!({ "ticket": ticket }))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let session = session["session"].as_str().expect("a session").to_string();
    let r = o
        .http
        .get(format!("{}/api/doctor", o.url))
        .header("Medulla-Hall-Session", &session)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let d: Value = r.json().unwrap();
    assert!(
        d["refused_callers"]["token_required"].as_u64().unwrap() >= 5,
        "{d}"
    );
}
