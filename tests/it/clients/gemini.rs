//! Gemini CLI as released, headless (`gemini -p`), as `connect gemini --hooks` leaves it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use super::model::Model;
use super::{assert_sessions, generate, run, Shop, Told};
use super::{MAIN_PROMPT, NUDGE_PROMPT, WORKTREE_PROMPT};

/// Issue 71, findings 1 and 2: Gemini CLI 0.61 was offered none of medulla's tools (its
/// MCP client failed on the priming event and dropped the connection), and its prompt
/// hint never fired (the hook gets the prompt wrapped in the session-start digest). With
/// each checkout trusted as Gemini asks (the step `connect` names: Gemini trusts folders
/// by path, a linked worktree being one of its own), a headless session now gets the
/// digest, the prompt and file hints, calls medulla's tools, recalls and writes memory
/// from the checkout and the worktree, and is asked once to record what it learned.
#[test]
fn gemini_cli_recalls_and_writes_memory_headless_as_connect_leaves_it() {
    let Some(gemini) = super::client("gemini") else {
        return;
    };
    let cwd: Arc<Mutex<PathBuf>> = Arc::default();
    let at = cwd.clone();
    let model = Model::start(move |r| generate::script(r, &at.lock().unwrap()));
    let shop = Shop::new("gemini", &[]);
    // The person's own settings (an API key's auth, no usage statistics), and each
    // checkout trusted as Gemini CLI asks at its first run in it.
    let dir = shop.home.path().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        "security": { "auth": { "selectedType": "gemini-api-key" } },
        "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false },
        "privacy": { "usageStatisticsEnabled": false },
        "telemetry": { "enabled": false },
        "ide": { "enabled": false },
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    let mut trusted = json!({});
    for d in [&shop.root, &shop.wt] {
        trusted[d.to_string_lossy().as_ref()] = json!("TRUST_FOLDER");
    }
    std::fs::write(dir.join("trustedFolders.json"), trusted.to_string()).unwrap();
    let env = [
        ("GEMINI_API_KEY", "scripted".to_string()),
        ("GOOGLE_GEMINI_BASE_URL", model.url.clone()),
        ("GEMINI_CLI_NO_RELAUNCH", "true".to_string()),
    ];
    let mut outputs = String::new();
    let mut session = |dir: &PathBuf, prompt: &str| -> Told {
        *cwd.lock().unwrap() = dir.clone();
        let from = model.requests().len();
        let mut c = shop.command(&gemini, dir, &env);
        c.args(["-p", prompt, "-o", "json", "-m", "gemini-2.5-flash"]);
        let (out, took) = run(c, Duration::from_secs(180));
        outputs.push_str(&format!(
            "--- gemini -p in {} ({took:?}, {}):\n{}\n{}\n",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
        Told::of(&model.requests()[from..], generate::results)
    };
    let main = session(&shop.root.clone(), MAIN_PROMPT);
    let wt = session(&shop.wt.clone(), WORKTREE_PROMPT);
    let nudge = session(&shop.root.clone(), NUDGE_PROMPT);
    assert!(
        main.has("\"name\":\"mcp_medulla_seek\"") && !main.has("mcp_medulla_purge"),
        "medulla's tools are offered, purge left out:\n{outputs}"
    );
    assert_sessions("gemini", &shop, &main, &wt, &nudge, &outputs);
}
