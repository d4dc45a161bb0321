//! The act log per brain (`acts`), the Hall's founder handshake (ticket → session), and
//! the live event stream (`/api/events`).

use std::io::{BufRead, BufReader, Write};
use std::time::Duration;

use serde_json::json;

use crate::common::{header, Owner};

/// A project brain's act log was readable from no surface: `acts` pages it, newest
/// first, for its own caller or the founder.
#[test]
fn a_brains_act_log_is_paged_newest_first() {
    let o = Owner::start();
    let (x, y) = (o.brain("x"), o.brain("y"));
    let xr = x.root.clone();
    for i in 0..3 {
        x.memorize(&format!("c{i}"), "t");
    }
    let (s, p1) = x.call("acts", json!({ "limit": 2 }));
    assert_eq!(s, 200, "{p1}");
    assert_eq!(p1["store"], xr.as_str());
    let seqs: Vec<u64> = p1["acts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, vec![3, 2], "newest first: {p1}");
    assert_eq!(p1["acts"][0]["subject"], "c2");
    assert_eq!(p1["acts"][0]["actor"], "claude:maker");
    assert!(p1["acts"][0]["after_hash"].is_string());
    let (_, p2) = x.call("acts", json!({ "limit": 2, "before": p1["next_before"] }));
    assert_eq!(p2["acts"][0]["seq"], 1);
    assert!(
        p2.get("next_before").is_none(),
        "the last page says so: {p2}"
    );
    let (s, v) = y.call("acts", json!({ "brain": xr }));
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("not_your_brain")),
        "{v}"
    );
    let (s, v) = o.founder_call("acts", json!({ "brain": xr }), &[]);
    assert_eq!(s, 200, "{v}");
    let (s, v) = o.get(&format!("/api/acts?brain={xr}&limit=1"));
    assert_eq!(s, 403, "the GET route checks the same: {v}");
}

/// Only the founder gets a Hall ticket; a ticket trades once for a session; the session
/// is the founder's surface for the page's calls.
#[test]
fn the_hall_handshake_needs_the_founder_and_works_once() {
    let o = Owner::start();
    let x = o.brain("x").path();
    let post = |path: &str, body: serde_json::Value, token: Option<&str>| {
        let mut r = o.http.post(format!("{}{path}", o.url)).json(&body);
        if let Some(t) = token {
            r = r.header(header::FOUNDER, t);
        }
        let r = r.send().unwrap();
        (r.status().as_u16(), r.json::<serde_json::Value>().unwrap())
    };
    let (s, v) = post("/api/hall/ticket", json!({}), None);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("founder_only")),
        "{v}"
    );
    let token = o.founder_token();
    let (s, v) = post("/api/hall/ticket", json!({}), Some(&token));
    assert_eq!(s, 200, "{v}");
    let ticket = v["ticket"].as_str().unwrap().to_string();
    assert!(v["url"]
        .as_str()
        .unwrap()
        .ends_with(&format!("/#ticket={ticket}")));
    let (s, v) = post("/api/hall/session", json!({ "ticket": ticket }), None);
    assert_eq!(s, 200, "{v}");
    let session = v["session"].as_str().unwrap().to_string();
    let (s, _) = post("/api/hall/session", json!({ "ticket": ticket }), None);
    assert_eq!(s, 403, "a ticket works once");
    let claims = |session: &str| {
        o.http
            .get(format!("{}/api/claims", o.url))
            .query(&[("brain", x.to_string_lossy().as_ref())])
            .header("Medulla-Hall-Session", session)
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(claims(&session), 200);
    assert_eq!(claims("forged-session"), 403);
}

/// Every write is announced on the event stream, so a live page needs no polling.
#[test]
fn acts_are_announced_on_the_event_stream() {
    let o = Owner::start();
    let x = o.brain("x");
    let addr = o.url.trim_start_matches("http://").to_string();
    let mut sock = std::net::TcpStream::connect(&addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        sock,
        "GET /api/events HTTP/1.1\r\nHost: {addr}\r\nMedulla-Founder-Token: {}\r\n\r\n",
        o.founder_token()
    )
    .unwrap();
    let mut lines = BufReader::new(sock.try_clone().unwrap()).lines();
    // The head and the stream's greeting arrive before any event.
    for l in lines.by_ref() {
        if l.unwrap().starts_with(": medulla events") {
            break;
        }
    }
    let xr = x.root.clone();
    // A read of a verb that may write is no act, and no event (issue 67: every
    // `boot_memory list` was announced, waking every session's watch).
    x.ok("boot_memory", json!({ "op": "list" }));
    let _ = x.call("boot_memory", json!({ "op": "get", "key": "nothing-here" }));
    x.memorize("live", "seen");
    let mut saw = None;
    for l in lines.by_ref() {
        let l = l.unwrap();
        if let Some(d) = l.strip_prefix("data: ") {
            saw = Some(serde_json::from_str::<serde_json::Value>(d).unwrap());
            break;
        }
    }
    let ev = saw.expect("an event arrived");
    assert_eq!(ev["kind"], "act");
    assert_eq!(ev["verb"], "memorize");
    assert_eq!(ev["store"], xr.as_str());
    assert!(
        !ev.to_string().contains("seen"),
        "events carry no content: {ev}"
    );
}

/// A long verb called with `Accept: application/x-ndjson` streams its progress, then its
/// answer, so a command line can draw a bar over one HTTP call.
#[test]
fn a_long_import_streams_its_progress_as_ndjson() {
    let o = Owner::start();
    let x = o.brain("x").path();
    let dir = o.projects.path().join("legacy");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..40 {
        std::fs::write(
            dir.join(format!("c{i}.light.md")),
            format!(
                "Node: claim {i}\nCreated: {}\n\ntext {i}\n",
                1_700_000_000_000i64 + i
            ),
        )
        .unwrap();
    }
    let r = o
        .http
        .post(format!("{}/api/call/import", o.url))
        .header("accept", "application/x-ndjson")
        .header(header::FOUNDER, o.founder_token())
        .json(&json!({ "dir": dir, "brain": x }))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let text = r.text().unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(last["result"]["imported_live"], 40, "{text}");
    let ticks: Vec<&serde_json::Value> = lines.iter().filter_map(|l| l.get("progress")).collect();
    assert!(
        !ticks.is_empty(),
        "progress lines before the answer: {text}"
    );
    assert_eq!(ticks.last().unwrap()["done"], 40);
    assert_eq!(ticks.last().unwrap()["total"], 40);
    // The read phase says how far it is before anything is written: reading a large
    // directory from a slow disk took longer than the command line's two minutes
    // between bytes, and it gave up on a silent stream.
    assert_eq!(ticks[0]["what"], "files read", "{text}");
    assert_eq!(ticks[0]["done"], 40);
    assert_eq!(ticks[0]["total"], 40);
    assert!(
        ticks.iter().any(|t| t["what"] == "files"),
        "then the files written: {text}"
    );
}

/// `POST /api/shutdown` (what `medulla stop` calls) is the founder's, and stops the
/// owner cleanly; a second `serve` on a running home says who runs it.
#[test]
fn the_founder_stops_the_owner_and_a_second_serve_names_the_first() {
    let mut o = Owner::start();
    let second = std::process::Command::new(crate::common::BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--no-model", "--home"])
        .arg(o.home.path())
        .env("MEDULLA_LOG", "error")
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(2));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("an owner already runs"), "{err}");
    assert!(err.contains("medulla stop"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let r = o
        .http
        .post(format!("{}/api/shutdown", o.url))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let r = o
        .http
        .post(format!("{}/api/shutdown", o.url))
        .header(header::FOUNDER, o.founder_token())
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 202);
    let status = o.child.wait().unwrap();
    assert!(status.success(), "a clean stop: {status:?}");
    assert!(!o.home.path().join("owner.json").exists());
}
