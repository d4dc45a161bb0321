//! Codex CLI as released, headless (`codex exec`), as `connect codex --hooks` leaves it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::model::Model;
use super::{assert_sessions, responses, run, Shop, Told};
use super::{MAIN_PROMPT, NUDGE_PROMPT, WORKTREE_PROMPT};

/// Issue 71, finding 5: Codex trusts hooks by the file that holds them, and skipped
/// medulla's, silently, wherever they had not been trusted. `connect codex --hooks` now
/// puts them in the user's hooks file, trusted as Codex's own review records it: the
/// checkout, a linked worktree and any clone run them with no new step. With the project
/// trusted as Codex asks at its first run (the step `connect` names), a headless session
/// gets the digest, the prompt and file hints (after the shell command that read the
/// file), finds medulla's tools through its tool search, recalls and writes memory, and
/// is asked once to record what it learned after real work.
#[test]
fn codex_recalls_and_writes_memory_headless_as_connect_leaves_it() {
    let Some(codex) = super::client("codex") else {
        return;
    };
    let cwd: Arc<Mutex<PathBuf>> = Arc::default();
    let at = cwd.clone();
    let model = Model::start(move |r| responses::script(r, &at.lock().unwrap()));
    let user = tempfile::tempdir().unwrap();
    let codex_home = user.path().join(".codex");
    let home_env = [("CODEX_HOME", codex_home.to_string_lossy().into_owned())];
    let shop = Shop::new("codex", &home_env);
    // The person's own settings of their model, and the project trusted as Codex asks at
    // its first run there.
    let config = codex_home.join("config.toml");
    let theirs = std::fs::read_to_string(&config).unwrap_or_default();
    let own = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\ncheck_for_update_on_startup = false\n\
         [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\n\
         env_key = \"SCRIPTED_API_KEY\"\nrequest_max_retries = 0\nstream_max_retries = 0\n\
         [analytics]\nenabled = false\n[features]\nplugins = false\n\
         [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        model.url,
        shop.root.display()
    );
    std::fs::write(&config, format!("{own}\n{theirs}")).unwrap();
    let mut env = home_env.to_vec();
    env.push(("SCRIPTED_API_KEY", "sk-test".to_string()));
    let mut outputs = String::new();
    let mut session = |dir: &PathBuf, prompt: &str| -> Told {
        *cwd.lock().unwrap() = dir.clone();
        let from = model.requests().len();
        let mut c = shop.command(&codex, dir, &env);
        c.args(["exec", "--json", prompt]);
        let (out, took) = run(c, Duration::from_secs(180));
        outputs.push_str(&format!(
            "--- codex exec in {} ({took:?}, {}):\n{}\n{}\n",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
        Told::of(&model.requests()[from..], responses::results)
    };
    let main = session(&shop.root.clone(), MAIN_PROMPT);
    let wt = session(&shop.wt.clone(), WORKTREE_PROMPT);
    let nudge = session(&shop.root.clone(), NUDGE_PROMPT);
    assert!(
        main.has("\"name\":\"mcp__medulla\"") && main.has("\"name\":\"seek\""),
        "medulla's tools are offered:\n{outputs}"
    );
    assert!(
        !outputs.contains("codex_hooks"),
        "no deprecated flag left for Codex to warn about:\n{outputs}"
    );
    assert_sessions("codex", &shop, &main, &wt, &nudge, &outputs);
}
