//! The clients people use, as released (SPEC §17, issue 71): pinned releases of Claude
//! Code, Codex CLI, Gemini CLI and opencode, installed from npm under `target/`, each run
//! non-interactively against the real owner with what `medulla connect CLIENT --hooks`
//! wrote, in a real repository and in a linked worktree of it. The one stand-in is the
//! model (`model.rs`, with an adapter per API), whose logged requests show what reached
//! the model: the session-start digest, the prompt hint, the file hint after the
//! client's own read tool, medulla's tools offered, `seek`'s answer, the end-of-turn ask;
//! the owner shows where each `memorize` landed.
//!
//! Each client gets the steps a person would have taken before, and no more: the
//! client's own settings of the model (a base URL and a key) and the folder trust the
//! client asks about at its first run, which `connect` names and never gives. Where npm
//! cannot install a client, its test says so and passes nothing.

mod anthropic;
mod chat;
mod claude;
mod codex;
mod gemini;
mod generate;
pub mod model;
mod opencode;
mod responses;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::Owner;
use model::Request;

/// The releases proven, one line each: a new release is a bump here and a green run.
pub const CLAUDE_CODE: &str = "@anthropic-ai/claude-code@2.1.337";
pub const CODEX: &str = "@openai/codex@0.171.0";
pub const GEMINI_CLI: &str = "@google/gemini-cli@0.61.0";
pub const OPENCODE: &str = "opencode-ai@1.18.33";

/// The four clients, installed once a run (and kept under `target/` between runs): the
/// directory whose `node_modules/.bin` holds them, or why they could not be installed.
fn installed() -> &'static Result<PathBuf, String> {
    static AT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    AT.get_or_init(|| {
        let pins = [CLAUDE_CODE, CODEX, GEMINI_CLI, OPENCODE];
        let dir = crate::common::target_dir()
            .join("agent-clients")
            .join(format!("pinned-{:08x}", fnv(&pins.join(" "))));
        let marker = dir.join(".installed");
        if marker.exists() {
            return Ok(dir);
        }
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let out = Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--no-save",
                "--prefix",
            ])
            .arg(&dir)
            .args(pins)
            .output()
            .map_err(|e| format!("npm cannot be run ({e}): install Node.js and npm"))?;
        if !out.status.success() {
            return Err(format!(
                "npm install {pins:?} failed (is the npm registry reachable?): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        std::fs::write(&marker, pins.join("\n")).map_err(|e| e.to_string())?;
        Ok(dir)
    })
}

fn fnv(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// A client's command, or `None` (said on stderr) when the clients could not be installed.
pub fn client(bin: &str) -> Option<PathBuf> {
    match installed() {
        Ok(dir) => Some(dir.join("node_modules").join(".bin").join(bin)),
        Err(why) => {
            eprintln!("skipped: the real {bin} could not be installed: {why}");
            None
        }
    }
}

/// The pinned Codex CLI (other tests read its configuration with it).
pub fn codex_cli() -> Option<PathBuf> {
    client("codex")
}

// --- the scenario every client plays ---------------------------------------------------

/// The person's prompt in the main checkout: about what the brain remembers.
pub const MAIN_PROMPT: &str =
    "Where do billing retries live? Check project memory first, then the code, and save what you learn.";
/// In the linked worktree: nothing the brain remembers.
pub const WORKTREE_PROMPT: &str =
    "Rename the greeting in the README to Hello, and note the wording.";
/// Real work that writes nothing: ten files read.
pub const NUDGE_PROMPT: &str = "Skim the ten modules under src/ one by one.";
/// The model's last words of a turn.
pub const DONE: &str = "Done: the work is finished.";

/// What the memory holds before the sessions: two claims the prompts and files bring up,
/// and twelve stronger ones the session-start digest shows (a hint never repeats what
/// the digest showed).
pub const RETRY_CLAIM: &str = "billing retries live in the ledger_retry table";
pub const CHARGE_CLAIM: &str = "each charge carries an idempotency key named charge_id";
/// The label each client's main session memorizes, the worktree's, with its client.
pub fn main_label(client: &str) -> String {
    format!("Billing retry home ({client})")
}
pub fn worktree_label(client: &str) -> String {
    format!("Greeting wording ({client})")
}

/// One step of the scripted model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// medulla's `seek` with this query.
    Seek(&'static str),
    /// The client's own tool that reads a file, at this path under the checkout.
    Read(String),
    /// medulla's `memorize` of this label and text.
    Memorize(String, &'static str),
    /// medulla's `memorize` of a claim already held stronger: refused (`would_downgrade`).
    Downgrade(&'static str),
}

impl Step {
    /// medulla's tool and its arguments, for a step that calls one.
    pub fn medulla(&self) -> Option<(&'static str, Value)> {
        Some(match self {
            Step::Read(_) => return None,
            Step::Seek(q) => ("seek", json!({ "query": q })),
            Step::Memorize(label, text) => (
                "memorize",
                json!({ "label": label, "text": text, "evidence": ["src/billing.rs"] }),
            ),
            Step::Downgrade(label) => (
                "memorize",
                json!({ "label": label, "text": "a guess about billing retries", "strength": "hint" }),
            ),
        })
    }
}

/// The steps of the session a prompt starts, for `client`.
pub fn steps(prompt: &str, client: &str) -> Vec<Step> {
    if prompt.contains("billing retries live") {
        vec![
            Step::Seek("billing retries"),
            Step::Read("src/billing.rs".into()),
            Step::Memorize(
                main_label(client),
                "billing retry logic is in src/billing.rs and persists to the ledger_retry table",
            ),
        ]
    } else if prompt.contains("greeting in the README") {
        vec![
            Step::Downgrade("Billing retry"),
            Step::Memorize(
                worktree_label(client),
                "the README greets readers with Hello",
            ),
        ]
    } else if prompt.contains("ten modules") {
        (0..10)
            .map(|i| Step::Read(format!("src/m{i}.rs")))
            .collect()
    } else {
        Vec::new()
    }
}

/// Which of the three prompts a conversation's text holds.
pub fn prompt_in(text: &str) -> &'static str {
    [MAIN_PROMPT, WORKTREE_PROMPT, NUDGE_PROMPT]
        .into_iter()
        .find(|p| text.contains(&p[..30]))
        .unwrap_or("")
}

// --- the project ------------------------------------------------------------------------

/// A git repository with a brain and what `connect` wrote, committed, and a linked
/// worktree of it; the client's own home beside it.
pub struct Shop {
    pub o: Owner,
    pub root: PathBuf,
    pub wt: PathBuf,
    /// The client's `HOME` (its user settings, its sessions).
    pub home: tempfile::TempDir,
}

fn git(dir: &Path, args: &[&str]) {
    crate::gitcmd::git(dir, args).unwrap_or_else(|e| panic!("{e}"));
}

impl Shop {
    /// The repository, `medulla connect CONNECT --hooks --bootstrap` run in it as the
    /// person runs it (`env` beside the client's `HOME`), the memory, and the worktree.
    pub fn new(connect: &str, env: &[(&str, String)]) -> Shop {
        let o = Owner::start();
        let root = o.project("shop");
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(
            root.join("src/billing.rs"),
            "pub const MAX_RETRIES: u32 = 5;\npub fn retry_charge(charge_id: &str) {}\n",
        )
        .unwrap();
        for i in 0..10 {
            std::fs::write(
                root.join(format!("src/m{i}.rs")),
                format!("pub fn m{i}() {{}}\n"),
            )
            .unwrap();
        }
        std::fs::write(root.join("README.md"), "# Shop\n\nWelcome.\n").unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-qm", "shop"]);
        let out = crate::cli::medulla_cmd(o.home.path(), &root)
            .env("HOME", home.path())
            .env("PWD", &root)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .args(["connect", connect, "--hooks", "--bootstrap"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "connect {connect}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let s = Shop {
            o,
            root,
            wt: PathBuf::new(),
            home,
        };
        let brain = s.o.brain_at(&s.root);
        brain.memorize_with(
            json!({ "label": "Billing retry", "text": RETRY_CLAIM, "strength": "observed" }),
        );
        brain.memorize_with(json!({ "label": "Charge idempotency", "text": CHARGE_CLAIM,
            "evidence": ["src/billing.rs"], "strength": "observed" }));
        for i in 0..12 {
            brain.memorize_with(json!({ "label": format!("Release step {i}"),
                "text": format!("release step {i} runs make stage-{i} before tagging"), "strength": "verified" }));
        }
        // What connect wrote travels with the repository, as a person commits it.
        git(&s.root, &["add", "-A"]);
        git(&s.root, &["commit", "-qm", "medulla connected"]);
        let wt = s.root.with_file_name("shop-wt");
        git(
            &s.root,
            &["worktree", "add", "-q", &wt.to_string_lossy(), "-b", "wt"],
        );
        Shop {
            wt: std::fs::canonicalize(wt).unwrap(),
            ..s
        }
    }

    /// A client command run in `dir` with only the environment a shell there gives it
    /// (`PATH`, `HOME`, `PWD`, the language, medulla's home), then `env`.
    pub fn command(&self, program: &Path, dir: &Path, env: &[(&str, String)]) -> Command {
        let mut c = Command::new(program);
        c.current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("PWD", dir)
            .env("LANG", "C.UTF-8")
            .env("TERM", "dumb")
            .env("MEDULLA_HOME", self.o.home.path())
            .env("MEDULLA_NO_AUTOSTART", "1")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null());
        c
    }

    /// The live claims' labels of the repository's brain.
    pub fn labels(&self) -> Vec<String> {
        self.o
            .claims(&self.root.to_string_lossy())
            .iter()
            .filter_map(|c| c["label"].as_str().map(str::to_string))
            .collect()
    }

    /// Where a claim of `label` was written from (its agent) and which brain holds it.
    pub fn written(&self, label: &str) -> Option<Value> {
        self.o
            .claims(&self.root.to_string_lossy())
            .into_iter()
            .find(|c| c["label"] == label)
    }
}

/// Run a client to its end, within `limit`: its output (stdout, stderr).
pub fn run(c: Command, limit: Duration) -> (Output, Duration) {
    run_with(c, None, limit)
}

/// [`run`], `input` written to its stdin (then closed).
pub fn run_with(mut c: Command, input: Option<&str>, limit: Duration) -> (Output, Duration) {
    let t = Instant::now();
    if input.is_some() {
        c.stdin(Stdio::piped());
    }
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", c.get_program()));
    if let Some(text) = input {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(text.as_bytes());
    }
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d = done.clone();
    std::thread::spawn(move || {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if d.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    });
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    (out, t.elapsed())
}

/// What a run's requests told the model, and the checks every client's sessions pass.
pub struct Told {
    /// Every request's body, as text.
    pub text: String,
    /// The text of every tool result the model was sent (the API's own reader).
    pub results: Vec<String>,
}

impl Told {
    pub fn of(requests: &[Request], results: fn(&Value) -> Vec<String>) -> Told {
        let text = requests
            .iter()
            .map(|r| r.body.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let mut all: Vec<String> = requests.iter().flat_map(|r| results(&r.body)).collect();
        all.dedup();
        Told { text, results: all }
    }

    pub fn has(&self, s: &str) -> bool {
        self.text.contains(s)
    }

    /// Did a tool result hold all of `parts`?
    pub fn result_has(&self, parts: &[&str]) -> bool {
        self.results
            .iter()
            .any(|r| parts.iter().all(|p| r.contains(p)))
    }
}

/// The marks of medulla's three kinds of context, as `prime` and `hint` word them.
pub const DIGEST: &str = "medulla: memory for this project";
pub const PROMPT_HINT: &str = "what this project's memory holds about this prompt";
pub const FILE_HINT: &str = "claims whose evidence is this file";
pub const ASK: &str = "Before you stop";

/// What a client's run in the main checkout, the worktree and the long session showed,
/// checked the same way for every client. `out` are the runs' outputs, for the message.
pub fn assert_sessions(client: &str, shop: &Shop, main: &Told, wt: &Told, nudge: &Told, out: &str) {
    let ctx = |what: &str| format!("{client}: {what}\n{out}");
    assert!(
        main.has(DIGEST),
        "{}",
        ctx("the session-start digest reaches the model")
    );
    assert!(
        main.has(PROMPT_HINT) && main.has("[billing-retry]"),
        "{}",
        ctx("the prompt hint reaches the model")
    );
    assert!(
        main.has(FILE_HINT) && main.has("[charge-idempotency]"),
        "{}",
        ctx("the file hint reaches the model after the client's read tool")
    );
    assert!(
        main.result_has(&["\"results\"", RETRY_CLAIM]),
        "{}",
        ctx("seek's answer comes back to the model")
    );
    let written = shop.written(&main_label(client)).unwrap_or_else(|| {
        panic!(
            "{}",
            ctx(&format!("memorize lands in the brain: {:?}", shop.labels()))
        )
    });
    assert_eq!(
        written["origin_brain"],
        shop.root.to_string_lossy().as_ref()
    );
    assert!(
        wt.has(DIGEST),
        "{}",
        ctx("the worktree's session gets the digest")
    );
    assert!(
        !wt.has(PROMPT_HINT),
        "{}",
        ctx("an off-topic prompt adds nothing")
    );
    assert!(
        shop.written(&worktree_label(client)).is_some(),
        "{}",
        ctx("a memorize from the linked worktree lands in the project's brain")
    );
    assert!(
        wt.result_has(&["would_downgrade:", "observed"]),
        "{}",
        ctx("a refusal reaches the model as medulla's typed error, naming the fix")
    );
    assert!(
        nudge.has(ASK),
        "{}",
        ctx("the end-of-turn ask after real work")
    );
    assert!(
        !main.has(ASK),
        "{}",
        ctx("no ask after a session that wrote")
    );
}
