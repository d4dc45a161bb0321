//! opencode as released, headless (`opencode run`), as `connect opencode --hooks` leaves it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use super::model::Model;
use super::{assert_sessions, chat, run_with, Shop, Told};
use super::{MAIN_PROMPT, NUDGE_PROMPT, WORKTREE_PROMPT};

/// A configuration directory as opencode leaves it after its first run there, when it
/// has installed its plugin library (`@opencode-ai/plugin`) beside a plugin: with a plugin
/// present, opencode waits for that install before the first request (some ten seconds
/// online, over a minute offline), which a person pays once and a test would pay every run.
fn as_after_first_run(dir: &Path) {
    std::fs::create_dir_all(dir.join("node_modules")).unwrap();
    let deps = json!({ "dependencies": { "@opencode-ai/plugin": "*" } });
    std::fs::write(dir.join("package.json"), deps.to_string()).unwrap();
    let lock = json!({ "lockfileVersion": 3, "packages": { "": deps } });
    std::fs::write(dir.join("package-lock.json"), lock.to_string()).unwrap();
}

/// Issue 71, finding 4: `medulla connect opencode` was refused. It now writes opencode's
/// MCP entry and, with `--hooks`, medulla's plugin; a headless session (`opencode run`)
/// gets the digest, the prompt and file hints, calls medulla's tools, recalls and writes
/// memory from the checkout and a linked worktree, and is asked once, after real work,
/// to record what it learned.
#[test]
fn opencode_recalls_and_writes_memory_headless_as_connect_leaves_it() {
    let Some(opencode) = super::client("opencode") else {
        return;
    };
    let cwd: Arc<Mutex<PathBuf>> = Arc::default();
    let at = cwd.clone();
    let model = Model::start(move |r| chat::script(r, &at.lock().unwrap()));
    let shop = Shop::new("opencode", &[]);
    let home = shop.home.path();
    let xdg = |d: &str| home.join(d).to_string_lossy().into_owned();
    // The person's own model, in their user configuration.
    let config = home.join(".config/opencode");
    std::fs::create_dir_all(&config).unwrap();
    let own = json!({
        "model": "scripted/scripted-model", "small_model": "scripted/scripted-model",
        "autoupdate": false, "share": "disabled",
        "provider": { "scripted": { "npm": "@ai-sdk/openai-compatible", "name": "scripted",
            "options": { "baseURL": format!("{}/v1", model.url), "apiKey": "sk-test" },
            "models": { "scripted-model": { "name": "scripted", "tool_call": true,
                "limit": { "context": 128000, "output": 4096 } } } } },
    });
    std::fs::write(config.join("opencode.json"), own.to_string()).unwrap();
    for dir in [
        config.clone(),
        shop.root.join(".opencode"),
        shop.wt.join(".opencode"),
    ] {
        as_after_first_run(&dir);
    }
    let env = [
        ("XDG_CONFIG_HOME", xdg(".config")),
        ("XDG_DATA_HOME", xdg(".local/share")),
        ("XDG_STATE_HOME", xdg(".local/state")),
        ("XDG_CACHE_HOME", xdg(".cache")),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1".to_string()),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1".to_string()),
    ];
    let mut outputs = String::new();
    let mut session = |dir: &PathBuf, prompt: &str| -> Told {
        *cwd.lock().unwrap() = dir.clone();
        let from = model.requests().len();
        let mut c = shop.command(&opencode, dir, &env);
        c.args(["run", "--format", "json"]);
        let (out, took) = run_with(c, Some(prompt), Duration::from_secs(180));
        outputs.push_str(&format!(
            "--- opencode run in {} ({took:?}, {}):\n{}\n{}\n",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
        Told::of(&model.requests()[from..], chat::results)
    };
    let main = session(&shop.root.clone(), MAIN_PROMPT);
    let wt = session(&shop.wt.clone(), WORKTREE_PROMPT);
    let nudge = session(&shop.root.clone(), NUDGE_PROMPT);
    assert!(
        main.has("\"name\":\"medulla_seek\""),
        "medulla's tools are offered:\n{outputs}"
    );
    assert_sessions("opencode", &shop, &main, &wt, &nudge, &outputs);
}
