//! `medulla model use` and `medulla model status`: the embedding model as the user's
//! choice, changed on the running owner when one runs (in the background, recall never
//! interrupted), else kept in the home for the next owner.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use super::client::{Client, OwnerNotRunning};
use super::print;
use crate::config::default_home;
use crate::model::{Choice, Pooling};

/// How often a waiting `model use` asks how the change goes.
const POLL: Duration = Duration::from_millis(200);

/// The running owner's answer to `GET /api/model`, `None` when no owner runs.
fn owner_view(client: &Client) -> anyhow::Result<Option<Value>> {
    match client.get("/api/model") {
        Ok(a) if a.ok() => Ok(Some(a.body)),
        Ok(a) => anyhow::bail!("the owner refused: {}", a.body["error"]["message"]),
        Err(e) if e.downcast_ref::<OwnerNotRunning>().is_some() => Ok(None),
        Err(e) => Err(e),
    }
}

fn fail(json: bool, code: &str, message: &str) -> anyhow::Result<i32> {
    if json {
        print::out!(
            "{}",
            serde_json::to_string_pretty(&json!({"error": {"code": code, "message": message}}))?
        );
    } else {
        print::note!("medulla: {message}");
    }
    Ok(1)
}

/// `medulla model use MODEL`: the exit code (0 done, 1 refused or failed).
pub fn run(
    model: &str,
    pooling: Option<Pooling>,
    no_wait: bool,
    json: bool,
    url: Option<&str>,
) -> anyhow::Result<i32> {
    let choice = Choice::parse(model, pooling);
    // A transformer runs on ONNX Runtime: fetched here, into the cache the owner (the
    // same user) reads.
    if choice != Choice::Static {
        if let Err(e) = crate::model::fetch_runtime(&mut |step| print::note!("medulla: {step}")) {
            return fail(json, e.code(), &e.to_string());
        }
    }
    // A directory goes to the owner as an absolute path: the owner's working
    // directory is not this shell's.
    let arg = match &choice {
        Choice::Dir { dir, .. } => dir.display().to_string(),
        _ => model.to_string(),
    };
    let client = Client::without_autostart(url)?;
    if owner_view(&client)?.is_none() {
        // No owner: check the model loads, then keep the choice for the next one.
        if let Err(e) = choice.load(None) {
            return fail(json, e.code(), &e.to_string());
        }
        let home = default_home();
        if let Err(e) = choice.write(&home) {
            return fail(json, e.code(), &e.to_string());
        }
        if json {
            print::out!(
                "{}",
                serde_json::to_string_pretty(&json!({"choice": choice, "owner": null}))?
            );
        } else {
            print::out!(
                "chose {}; no owner runs now: the next one starts with it",
                choice.describe()
            );
        }
        return Ok(0);
    }
    let started = client.post(
        "/api/model",
        json!({"model": arg, "pooling": pooling.map(|p| p.as_str())}),
    )?;
    if !started.ok() {
        let e = &started.body["error"];
        return fail(
            json,
            e["code"].as_str().unwrap_or("refused"),
            e["message"].as_str().unwrap_or("the owner refused"),
        );
    }
    let mut view = started.body;
    if !no_wait {
        let mut last = String::new();
        while view["switch"]["phase"] == "switching" {
            let s = &view["switch"];
            let line = format!(
                "changing model: {}/{} stores, {} claims embedded",
                s["stores_done"], s["stores_total"], s["claims_embedded"]
            );
            if line != last && !json {
                print::note!("medulla: {line}");
                last = line;
            }
            std::thread::sleep(POLL);
            match owner_view(&client)? {
                Some(v) => view = v,
                None => anyhow::bail!(
                    "the owner stopped during the change; the next one starts with {}",
                    choice.describe()
                ),
            }
        }
    }
    if json {
        print::out!("{}", serde_json::to_string_pretty(&view)?);
    } else {
        print_view(&view);
    }
    Ok(if view["switch"]["phase"] == "failed" {
        1
    } else {
        0
    })
}

/// `medulla model status`: the exit code (0 told; without an owner, 1 when no model is
/// on this machine).
pub fn status(json: bool, url: Option<&str>) -> anyhow::Result<i32> {
    let client = Client::without_autostart(url)?;
    if let Some(view) = owner_view(&client)? {
        if json {
            print::out!("{}", serde_json::to_string_pretty(&view)?);
        } else {
            print_view(&view);
            if view["active"].is_null() {
                // Lexical-only: where the next owner would find the static model.
                static_status(false)?;
            }
        }
        return Ok(0);
    }
    let choice = Choice::read(&default_home());
    match choice {
        Ok(Some(c)) if c != Choice::Static => {
            if json {
                print::out!(
                    "{}",
                    serde_json::to_string_pretty(&json!({"choice": c, "owner": null}))?
                );
            } else {
                print::out!(
                    "chosen: {}; no owner runs now: the next one starts with it",
                    c.describe()
                );
            }
            Ok(0)
        }
        Ok(_) => static_status(json),
        Err(e) => fail(json, e.code(), &e.to_string()),
    }
}

fn print_view(v: &Value) {
    match v["active"].as_str() {
        Some(id) => print::out!(
            "model: {id} ({} dimensions{})",
            v["dims"],
            if v["deferred"] == true {
                "; writes are embedded in the background"
            } else {
                ""
            }
        ),
        None => print::out!("model: none; recall is lexical-only"),
    }
    let s = &v["switch"];
    match s["phase"].as_str() {
        Some("switching") => print::out!(
            "changing to {}: {}/{} stores, {} claims embedded so far; recall serves from the old vectors meanwhile",
            s["to"].as_str().unwrap_or("?"),
            s["stores_done"],
            s["stores_total"],
            s["claims_embedded"]
        ),
        Some("done") => print::out!(
            "change of model done: {} stores, {} claims embedded{}",
            s["stores_done"],
            s["claims_embedded"],
            match s["claims_left_behind"].as_u64() {
                Some(n) if n > 0 => format!(", {n} written meanwhile embedded in the background"),
                _ => String::new(),
            }
        ),
        Some("failed") => print::out!(
            "the change of model stopped: {}",
            s["error"].as_str().unwrap_or("?")
        ),
        _ => {}
    }
    if let Some(stores) = v["stores"].as_array() {
        for st in stores {
            let pending = st["unembedded"].as_u64().unwrap_or(0);
            print::out!(
                "  {}: {}{}",
                st["store"].as_str().unwrap_or("?"),
                st["model"].as_str().unwrap_or("lexical-only"),
                if pending > 0 {
                    format!(" ({pending} claims not yet embedded; found by their words)")
                } else {
                    String::new()
                }
            );
        }
    }
}

/// Where the static model's files are, without an owner: the exit code (0 found).
pub fn static_status(json: bool) -> anyhow::Result<i32> {
    let found = crate::model::locate();
    let default = crate::model::default_dir();
    if json {
        print::out!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "found": found,
                "default_dir": default,
                "env": std::env::var_os("MEDULLA_MODEL_DIR").map(PathBuf::from),
            }))?
        );
    } else {
        match &found {
            Some(d) => print::out!("model: {} (complete)", d.display()),
            None => print::out!(
                "model: none found (looked in {}); the owner runs lexical-only. \
                 Fetch it with `medulla model fetch`",
                std::env::var_os("MEDULLA_MODEL_DIR")
                    .map(PathBuf::from)
                    .unwrap_or(default)
                    .display()
            ),
        }
    }
    Ok(if found.is_some() { 0 } else { 1 })
}
