//! The `medulla` command line against a running owner, and without one.

use std::process::Command;

use serde_json::Value;

use crate::common::{Owner, BIN};

fn cli(o: &Owner, cwd: &std::path::Path, args: &[&str]) -> (i32, Value) {
    let out = Command::new(BIN)
        .args(args)
        .arg("--json")
        .current_dir(cwd)
        .env("MEDULLA_URL", &o.url)
        .env_remove("MEDULLA_BRAIN")
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "not JSON: {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn the_cli_routes_by_working_directory() {
    let o = Owner::start();
    let p = o.project("proj");
    let sub = o.project("proj/src");
    let (code, v) = cli(&o, &sub, &["bootstrap", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = cli(
        &o,
        &sub,
        &[
            "memorize",
            "--label",
            "from cli",
            "--text",
            "the cli writes here",
        ],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["claim"]["source_agent"], "human:founder");
    assert_eq!(v["brain"]["root"], p.to_str().unwrap());
    let (code, v) = cli(&o, &sub, &["seek", "cli", "writes"]);
    assert_eq!(code, 0);
    assert_eq!(v["results"][0]["label"], "from cli");
    let (code, v) = cli(&o, &sub, &["history", "from-cli"]);
    assert_eq!(code, 0);
    assert_eq!(v["versions"].as_array().unwrap().len(), 1);
    let (code, v) = cli(&o, &sub, &["learn", "from-cli", "correct"]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = cli(&o, &sub, &["brains"]);
    assert_eq!(code, 0);
    assert_eq!(v["instances"].as_array().unwrap().len(), 1);
    let (code, v) = cli(&o, &sub, &["status"]);
    assert_eq!(code, 0);
    assert_eq!(v["status"], "ok");
    // A refused write exits non-zero with the typed error.
    let elsewhere = o.project("elsewhere");
    let (code, v) = cli(&o, &elsewhere, &["memorize", "--label", "x", "--text", "y"]);
    assert_eq!(code, 1);
    assert_eq!(v["error"]["code"], "unbootstrapped");
}

#[test]
fn no_owner_running_exits_2_naming_the_command_that_starts_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["status"])
        .current_dir(dir.path())
        .env("MEDULLA_URL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("medulla serve"), "{err}");
}
