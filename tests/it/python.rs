//! Interoperability with a client no one here wrote: the official Python MCP SDK
//! (`mcp==2.3.0`), installed into a virtualenv under `target/` on first use.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{target_dir, Owner};

const SDK: &str = "mcp==2.3.0";

/// The venv's python, creating the venv and installing the SDK once.
pub(crate) fn python() -> &'static Path {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        let venv = target_dir().join("py-mcp-2.3.0");
        let py = venv.join("bin/python");
        let marker = venv.join(".installed");
        if marker.exists() {
            return py;
        }
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .unwrap_or_else(|e| {
                panic!("python3 is needed for the MCP interoperability tests: {e}")
            });
        assert!(ok.success(), "python3 -m venv failed");
        let out = Command::new(&py)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                SDK,
            ])
            .output()
            .expect("run pip");
        assert!(
            out.status.success(),
            "pip install {SDK} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(&marker, SDK).unwrap();
        py
    })
}

#[test]
fn the_official_python_sdk_connects_lists_memorizes_and_seeks() {
    let o = Owner::start();
    let (x, y) = (o.brain("x").path(), o.brain("y").path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/mcp_client.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(format!("{}/mcp", o.url))
        .arg(&x)
        .arg(&y)
        .output()
        .expect("run the python client");
    assert!(
        out.status.success(),
        "python client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let ll = &v["low_level"];
    assert_eq!(ll["server_name"], "medulla");
    for tool in [
        "bootstrap",
        "memorize",
        "seek",
        "north",
        "promote",
        "report",
    ] {
        assert!(
            ll["tools"].as_array().unwrap().iter().any(|t| t == tool),
            "{tool} not listed: {ll}"
        );
    }
    assert_eq!(ll["memorize_is_error"], false, "{ll}");
    assert_eq!(ll["memorize"]["outcome"], "created");
    assert_eq!(
        ll["memorize"]["brain"]["root"],
        y.to_string_lossy().as_ref(),
        "the caller-root header routed it to y"
    );
    assert_eq!(ll["seek_labels"], serde_json::json!(["py low level"]));

    let auto = &v["auto"];
    assert_eq!(auto["tools"], ll["tools"]);
    assert_eq!(
        auto["memorize"]["brain"]["root"],
        x.to_string_lossy().as_ref()
    );
    // x's default seek never returns y's claim.
    assert_eq!(
        auto["seek_labels"],
        serde_json::json!(["py auto mode"]),
        "{auto}"
    );
    assert_eq!(auto["refused_is_error"], true);
    assert_eq!(auto["refused"]["error"]["code"], "empty_text");

    // Regression (issue 15, item 12): a client that sends no caller-root header but
    // declares MCP roots is routed by its first root.
    let roots = &v["roots"];
    assert_eq!(roots["memorize_is_error"], false, "{roots}");
    assert_eq!(
        roots["memorize"]["brain"]["root"],
        x.to_string_lossy().as_ref(),
        "{roots}"
    );
}

#[test]
fn the_official_python_stdio_client_drives_the_bridge() {
    let o = Owner::start();
    let p = o.brain("p").path();
    let sub = o.project("p/deep/dir");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/stdio_client.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(crate::common::BIN)
        .arg(&o.url)
        .arg(&sub)
        .output()
        .expect("run the python stdio client");
    assert!(
        out.status.success(),
        "python stdio client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["server_name"], "medulla");
    assert!(v["tools"].as_u64().unwrap() >= 10, "{v}");
    assert_eq!(
        v["memorize"]["brain"]["root"],
        p.to_string_lossy().as_ref(),
        "routed by the bridge's working directory: {v}"
    );
    assert_eq!(v["seek_labels"], serde_json::json!(["via stdio sdk"]));
    // Resources and prompts through the bridge, routed by its working directory.
    assert_eq!(
        v["resources"],
        serde_json::json!(["medulla://north", "medulla://brain/via-stdio-sdk"]),
        "{v}"
    );
    assert_eq!(v["claim_label"], "via stdio sdk");
    assert_eq!(
        v["prompt_resources"],
        serde_json::json!(["medulla://brain/via-stdio-sdk"]),
        "{v}"
    );
}

/// Issue 22, part 4: memory as MCP resources and prompts, through the official Python
/// SDK, routed like tools — a session routed to x never lists or reads y's claims, and
/// hears of changes to x and the medulla only.
#[test]
fn the_official_python_sdk_reads_resources_and_prompts() {
    let o = Owner::start();
    let (x, y) = (o.brain("x").path(), o.brain("y").path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/mcp_resources.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(format!("{}/mcp", o.url))
        .arg(&x)
        .arg(&y)
        .output()
        .expect("run the python client");
    assert!(
        out.status.success(),
        "python client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let s = &v["session"];
    assert_eq!(
        s["capabilities"]["resources"],
        serde_json::json!({"listChanged": true, "subscribe": true}),
        "{s}"
    );
    assert_eq!(s["capabilities"]["prompts"], true);

    let listed: Vec<&str> = s["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    assert_eq!(listed[0], "medulla://north", "{listed:?}");
    for want in ["medulla://brain/x-deploy", "medulla://medulla/py-doctrine"] {
        assert!(listed.contains(&want), "{want} not listed: {listed:?}");
    }
    assert!(
        !listed.iter().any(|u| u.contains("y-secret")),
        "another brain's claim is never listed: {listed:?}"
    );
    assert_eq!(s["names_described"], true);
    assert_eq!(
        s["templates"],
        serde_json::json!(["medulla://brain/{slug}", "medulla://medulla/{slug}"])
    );
    assert_eq!(s["mine"]["uri"], "medulla://brain/x-deploy");
    assert_eq!(s["mine"]["mime"], "application/json");
    assert_eq!(s["mine"]["row"]["label"], "x deploy");
    assert_eq!(s["mine"]["row"]["tier"], "project");
    assert_eq!(
        s["mine"]["row"]["origin_brain"],
        x.to_string_lossy().as_ref()
    );
    assert_eq!(s["doctrine"]["tier"], "medulla");
    assert_eq!(s["doctrine"]["label"], "py doctrine");
    assert_eq!(s["north"]["mime"], "text/markdown");
    let north = s["north"]["text"].as_str().unwrap();
    assert!(
        north.contains("medulla://brain/x-deploy") && north.contains("py doctrine"),
        "{north}"
    );
    assert!(!north.contains("y secret"), "{north}");
    assert!(
        s["other"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("y-secret")),
        "y's claim is not readable from x: {}",
        s["other"]
    );

    for (name, args) in [
        ("north", serde_json::json!([["task", true]])),
        ("recall", serde_json::json!([["topic", true]])),
        ("debrief", serde_json::json!([["task", false]])),
    ] {
        assert_eq!(s["prompts"][name]["described"], true, "{name}");
        assert_eq!(s["prompts"][name]["args"], args, "{name}");
    }
    let embedded = |p: &Value| -> Vec<String> {
        p.as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["resource"].as_str().map(str::to_string))
            .collect()
    };
    let north_p = embedded(&s["north_prompt"]);
    assert!(
        north_p.contains(&"medulla://brain/x-deploy".to_string()),
        "{}",
        s["north_prompt"]
    );
    assert!(north_p.iter().all(|u| !u.contains("y-secret")));
    assert!(
        embedded(&s["recall_prompt"]).contains(&"medulla://brain/x-deploy".to_string()),
        "{}",
        s["recall_prompt"]
    );
    assert!(
        s["debrief_prompt"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("debrief tool")),
        "{}",
        s["debrief_prompt"]
    );
    assert!(
        embedded(&s["debrief_prompt"]).contains(&"medulla://brain/x-deploy".to_string()),
        "{}",
        s["debrief_prompt"]
    );
    assert!(
        s["missing_task"]
            .as_str()
            .is_some_and(|m| m.contains("task")),
        "{}",
        s["missing_task"]
    );
    // One for the first write to x, one for the next; the write to y came between them:
    // had it been told, a third would stand before the second.
    assert_eq!(
        s["after_x"],
        serde_json::json!([
            "notifications/resources/list_changed",
            "notifications/resources/list_changed"
        ]),
        "{s}"
    );
    assert_eq!(s["updated"], "medulla://brain/x-deploy");

    let l = &v["listen"];
    assert_eq!(l["protocol"], "2026-07-28", "{l}");
    assert!(l["resources"]
        .as_array()
        .unwrap()
        .iter()
        .all(|u| !u.as_str().unwrap().contains("y-secret")));
    assert_eq!(
        l["events"],
        serde_json::json!([
            "ResourceUpdated:medulla://brain/x-deploy",
            "ResourcesListChanged"
        ]),
        "{l}"
    );
}
