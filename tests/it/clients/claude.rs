//! Claude Code as released, headless (`claude -p`), as `connect claude-code --hooks`
//! leaves it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use super::model::Model;
use super::{anthropic, assert_sessions, run, Shop, Told};
use super::{MAIN_PROMPT, NUDGE_PROMPT, WORKTREE_PROMPT};

/// Issue 71, finding 3: Claude Code 2.1, as `connect claude-code --hooks` left it, denied
/// every medulla tool headless ("Claude requested permissions to use
/// mcp__medulla__seek, but you haven't granted it yet"). Now, with the folder trusted as
/// Claude Code asks at its first run (the step `connect` names), a headless session
/// opens with the digest, gets the prompt and file hints, finds medulla's tools through
/// its tool search, recalls and writes memory from the checkout and from a linked
/// worktree, and is asked once to record what it learned after real work.
#[test]
fn claude_code_recalls_and_writes_memory_headless_as_connect_leaves_it() {
    let Some(claude) = super::client("claude") else {
        return;
    };
    let cwd: Arc<Mutex<PathBuf>> = Arc::default();
    let at = cwd.clone();
    let model = Model::start(move |r| anthropic::script(r, &at.lock().unwrap()));
    let shop = Shop::new("claude-code", &[]);
    // The trust the person gives the folder at Claude Code's first interactive run.
    let mut state = json!({ "projects": {} });
    state["projects"][shop.root.to_string_lossy().as_ref()] =
        json!({ "hasTrustDialogAccepted": true });
    std::fs::write(shop.home.path().join(".claude.json"), state.to_string()).unwrap();
    let env = [
        ("ANTHROPIC_BASE_URL", model.url.clone()),
        ("ANTHROPIC_API_KEY", "sk-ant-test".to_string()),
        // No traffic but the model's: no telemetry, no update check.
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
        ("DISABLE_AUTOUPDATER", "1".to_string()),
    ];
    let mut outputs = String::new();
    let mut session = |dir: &PathBuf, prompt: &str| -> Told {
        *cwd.lock().unwrap() = dir.clone();
        let from = model.requests().len();
        let mut c = shop.command(&claude, dir, &env);
        c.args(["-p", prompt, "--output-format", "stream-json", "--verbose"]);
        let (out, took) = run(c, Duration::from_secs(180));
        let stdout = String::from_utf8_lossy(&out.stdout);
        outputs.push_str(&format!(
            "--- claude -p in {} ({took:?}, {}):\n{stdout}\n{}\n",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
        assert!(
            !stdout.contains("haven't granted"),
            "a medulla tool was denied:\n{outputs}"
        );
        Told::of(&model.requests()[from..], anthropic::results)
    };
    let main = session(&shop.root.clone(), MAIN_PROMPT);
    let wt = session(&shop.wt.clone(), WORKTREE_PROMPT);
    let nudge = session(&shop.root.clone(), NUDGE_PROMPT);
    assert!(
        main.has("mcp__medulla__seek") && main.has("mcp__medulla__memorize"),
        "medulla's tools are offered:\n{outputs}"
    );
    assert_sessions("claude-code", &shop, &main, &wt, &nudge, &outputs);
}
