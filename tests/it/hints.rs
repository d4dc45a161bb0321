//! Hints at the point of use (SPEC §5, issue 64): the prompt and file hooks `connect
//! CLIENT --hooks` installs, run as each client runs them (the command from the file
//! `connect` wrote, the client's JSON on stdin, its environment), against the real owner.
//! Reported: a brain held "run sqlx migrate run … before the integration tests" and
//! "billing amounts are integer cents" (evidence `src/billing.rs`); the migrations prompt
//! and opening `src/billing.rs` added nothing, and `--hooks` installed no such hook.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::cli::medulla_cmd;
use crate::common::{header, Owner};

const MIGRATIONS: (&str, &str) = (
    "Integration test migrations",
    "run sqlx migrate run against the test database before the integration tests",
);
const CENTS: (&str, &str) = (
    "Billing amounts",
    "billing amounts are integer cents in i64; never floats",
);
const PROMPT: &str = "how do I run the database migrations before the integration tests?";

/// The shop: a brain with the two claims of the report, its files, and a fake user home
/// for `connect`.
struct Shop {
    o: Owner,
    root: PathBuf,
    user: tempfile::TempDir,
}

fn shop() -> Shop {
    let o = Owner::start();
    let root = o.project("shop");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/billing.rs"), "pub struct Cents(i64);\n").unwrap();
    std::fs::write(root.join("src/other.rs"), "// nothing remembered\n").unwrap();
    o.bootstrap(&root);
    let r = root.to_string_lossy().to_string();
    let h = [
        (header::CALLER_ROOT, r.as_str()),
        (header::AGENT, "claude:maker"),
    ];
    for (label, text, evidence) in [
        (MIGRATIONS.0, MIGRATIONS.1, json!([])),
        (CENTS.0, CENTS.1, json!(["src/billing.rs"])),
    ] {
        let (s, v) = o.call(
            "memorize",
            json!({ "label": label, "text": text, "evidence": evidence, "strength": "verified" }),
            &h,
        );
        assert_eq!(s, 200, "{v}");
    }
    Shop {
        o,
        root,
        user: tempfile::tempdir().unwrap(),
    }
}

impl Shop {
    /// `medulla connect CLIENT --hooks --no-check` in the shop; the file it wrote.
    fn connect(&self, client: &str, file: &str) -> Value {
        self.connect_at(client, &self.root.join(file))
    }

    /// The same, reading the hooks file at `file` (Codex's are the user's).
    fn connect_at(&self, client: &str, file: &Path) -> Value {
        let out = medulla_cmd(self.o.home.path(), &self.root)
            .env("HOME", self.user.path())
            .args(["connect", client, "--hooks", "--no-check"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(file).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// Run a hook command the way a client does (a shell, the JSON on stdin, its
    /// environment): exit code and stdout.
    fn run(&self, command: &str, input: &Value, env: &[(&str, &str)]) -> (i32, String) {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(command)
            .current_dir(&self.root)
            .env("MEDULLA_HOME", self.o.home.path())
            .env_remove("MEDULLA_URL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }
}

/// The context a hook's answer adds, after checking its shape: `None` for an empty
/// answer.
fn context(out: &str, event: &str) -> Option<String> {
    if out.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], event, "{v}");
    assert!(
        v.get("decision").is_none() && v.get("continue").is_none(),
        "{v}"
    );
    Some(
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

/// The command of medulla's hook group in `event` of a client's settings.
fn command(settings: &Value, event: &str) -> String {
    settings["hooks"][event]
        .as_array()
        .and_then(|gs| {
            gs.iter().find_map(|g| {
                g["hooks"][0]["command"]
                    .as_str()
                    .filter(|c| c.contains(" hint --client "))
            })
        })
        .unwrap_or_else(|| panic!("no medulla hint hook in {event}: {settings}"))
        .to_string()
}

fn claude_prompt(s: &Shop, session: &str, prompt: &str) -> Value {
    json!({ "session_id": session, "transcript_path": "/dev/null", "cwd": s.root,
            "hook_event_name": "UserPromptSubmit", "prompt": prompt })
}

fn claude_read(s: &Shop, session: &str, path: &Path) -> Value {
    json!({ "session_id": session, "transcript_path": "/dev/null", "cwd": s.root,
            "hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_input": { "file_path": path }, "tool_response": {} })
}

#[test]
fn claude_codes_prompt_hook_adds_what_the_prompt_is_about_once_a_session() {
    let s = shop();
    let settings = s.connect("claude-code", ".claude/settings.json");
    let prompt_cmd = command(&settings, "UserPromptSubmit");
    let file_group = settings["hooks"]["PostToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| {
            g["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .contains(" hint --client ")
        })
        .unwrap()
        .clone();
    assert_eq!(
        file_group["matcher"],
        "Read|Edit|Write|MultiEdit|NotebookEdit"
    );
    let root = s.root.to_string_lossy().to_string();
    let env = [("CLAUDE_PROJECT_DIR", root.as_str())];

    // The migrations prompt adds the migrations claim, and not the cents one.
    let (code, out) = s.run(&prompt_cmd, &claude_prompt(&s, "s1", PROMPT), &env);
    assert_eq!(code, 0);
    let ctx = context(&out, "UserPromptSubmit").expect("the migrations prompt adds context");
    assert!(ctx.contains("integration-test-migrations"), "{ctx}");
    assert!(
        ctx.contains(MIGRATIONS.1) && ctx.contains("(project)"),
        "{ctx}"
    );
    assert!(!ctx.contains("billing-amounts"), "{ctx}");
    // Off-topic prompts add nothing at all.
    for p in [
        "what is the weather like in Lisbon this weekend?",
        "write a haiku about autumn leaves",
        "explain quantum entanglement to a child",
    ] {
        let (code, out) = s.run(&prompt_cmd, &claude_prompt(&s, "s1", p), &env);
        assert_eq!((code, out.as_str()), (0, ""), "{p}");
    }
    // The same prompt again in the session: nothing; a new session: added again.
    let (code, out) = s.run(&prompt_cmd, &claude_prompt(&s, "s1", PROMPT), &env);
    assert_eq!((code, out.as_str()), (0, ""));
    let (_, out) = s.run(&prompt_cmd, &claude_prompt(&s, "s2", PROMPT), &env);
    assert!(context(&out, "UserPromptSubmit")
        .unwrap()
        .contains("integration-test-migrations"));

    // Reading src/billing.rs adds the cents claim; again in the session, nothing; a file
    // no claim is anchored to, or one outside the project, nothing.
    let file_cmd = file_group["hooks"][0]["command"].as_str().unwrap();
    let billing = s.root.join("src/billing.rs");
    let (code, out) = s.run(file_cmd, &claude_read(&s, "s1", &billing), &env);
    assert_eq!(code, 0);
    let ctx = context(&out, "PostToolUse").expect("reading billing.rs adds context");
    assert!(
        ctx.contains("billing-amounts") && ctx.contains(CENTS.1),
        "{ctx}"
    );
    for (p, why) in [
        (billing.clone(), "again in the session"),
        (s.root.join("src/other.rs"), "no claim is anchored to it"),
        (PathBuf::from("/etc/hostname"), "outside the project"),
    ] {
        let (code, out) = s.run(file_cmd, &claude_read(&s, "s1", &p), &env);
        assert_eq!((code, out.as_str()), (0, ""), "{why}");
    }
    // A file changed since its claim was written: the claim says so.
    std::fs::write(&billing, "pub struct Cents(f64);\n").unwrap();
    let (_, out) = s.run(file_cmd, &claude_read(&s, "s3", &billing), &env);
    let ctx = context(&out, "PostToolUse").unwrap();
    assert!(
        ctx.contains("changed since") && ctx.contains("src/billing.rs"),
        "{ctx}"
    );

    // The end-of-turn hook reads the session's transcript: a claim a hint added that the
    // agent named in its own words counts as cited.
    let stop_cmd = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let transcript = s.root.join("s1.jsonl");
    std::fs::write(
        &transcript,
        [
            json!({ "type": "user", "timestamp": "2100-01-01T00:00:00Z", "message": { "content": PROMPT } }),
            json!({ "type": "assistant", "timestamp": "2100-01-01T00:00:01Z", "message": { "content": [
                { "type": "text", "text": "As integration-test-migrations says, run sqlx migrate run first." }] } }),
        ]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n"),
    )
    .unwrap();
    let stop = json!({ "session_id": "s1", "transcript_path": transcript, "cwd": s.root,
                       "hook_event_name": "Stop", "stop_hook_active": false });
    let (code, _) = s.run(&stop_cmd, &stop, &env);
    assert_eq!(code, 0);
    let (code, _) = s.run(&stop_cmd, &stop, &env);
    assert_eq!(code, 0, "a second stop counts nothing again");

    // Doctor says whether hints pay: prompts and files seen, claims added, the one the
    // agent cited, and a claim the agent then graded counts as used.
    let (st, v) = s.o.call(
        "learn",
        json!({ "slug": "integration-test-migrations", "verdict": "correct" }),
        &[
            (header::CALLER_ROOT, root.as_str()),
            (header::AGENT, "claude:maker"),
        ],
    );
    assert_eq!(st, 200, "{v}");
    let d = s.o.get("/api/doctor").1;
    let h = d["hints"].as_array().unwrap();
    assert_eq!(h.len(), 1, "{d}");
    assert_eq!(h[0]["prompts"], 6, "{d}");
    assert_eq!(h[0]["files"], 5, "{d}");
    assert_eq!(h[0]["claims_added"], 4, "{d}");
    assert_eq!(
        h[0]["claims_used"], 2,
        "graded once, in each of the two sessions: {d}"
    );
}

/// A prompt that matches 60 claims adds at most the count within the budget, and says
/// how many more matched and the seek that shows them.
#[test]
fn a_prompt_matching_many_claims_adds_a_few_and_says_how_many_more() {
    let s = shop();
    let root = s.root.to_string_lossy().to_string();
    let h = [
        (header::CALLER_ROOT, root.as_str()),
        (header::AGENT, "claude:maker"),
    ];
    for i in 0..60 {
        let (st, v) = s.o.call(
            "memorize",
            json!({ "label": format!("deploy stage {i}"), "text": format!("the deploy pipeline runs stage {i} after the canary {}", "and waits for the health checks ".repeat(4)) }),
            &h,
        );
        assert_eq!(st, 200, "{v}");
    }
    let settings = s.connect("claude-code", ".claude/settings.json");
    let cmd = command(&settings, "UserPromptSubmit");
    let (_, out) = s.run(
        &cmd,
        &claude_prompt(
            &s,
            "many",
            "how does the deploy pipeline run its stages after the canary?",
        ),
        &[],
    );
    let ctx = context(&out, "UserPromptSubmit").unwrap();
    let claims = ctx.lines().filter(|l| l.starts_with("- [")).count();
    assert_eq!(claims, 3, "{ctx}");
    let listed: usize = ctx
        .lines()
        .filter(|l| l.starts_with("- ["))
        .map(|l| l.chars().count() + 1)
        .sum();
    assert!(listed <= 1500, "within the budget: {listed}");
    let more = ctx.lines().last().unwrap();
    let n: usize = more
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{ctx}"));
    assert!(
        n >= 57 && more.contains("more matched") && more.contains("medulla seek"),
        "{ctx}"
    );
}

/// Codex and Gemini CLI, each from the file `connect --hooks` writes and in its own
/// shape: Codex's `UserPromptSubmit` and an `apply_patch` edit (`PostToolUse`), Gemini
/// CLI's `BeforeAgent` and `read_file` (`AfterTool`).
#[test]
fn codex_and_gemini_get_the_same_hints_in_their_own_shapes() {
    let s = shop();
    let codex = s.connect_at("codex", &s.user.path().join(".codex/hooks.json"));
    let (_, out) = s.run(
        &command(&codex, "UserPromptSubmit"),
        &json!({
        "session_id": "c1", "turn_id": "t1", "transcript_path": null, "cwd": s.root, "model": "gpt",
        "hook_event_name": "UserPromptSubmit", "prompt": PROMPT }),
        &[],
    );
    assert!(context(&out, "UserPromptSubmit")
        .unwrap()
        .contains("integration-test-migrations"));
    let patch = "*** Begin Patch\n*** Update File: src/billing.rs\n@@\n-pub struct Cents(i64);\n+pub struct Cents(pub i64);\n*** End Patch\n";
    let post = json!({ "session_id": "c1", "turn_id": "t2", "transcript_path": null, "cwd": s.root, "model": "gpt",
        "hook_event_name": "PostToolUse", "tool_name": "apply_patch", "tool_use_id": "u1",
        "tool_input": { "command": patch }, "tool_response": "ok" });
    let group = codex["hooks"]["PostToolUse"][0].clone();
    assert_eq!(group["matcher"], "^(apply_patch|Bash)$");
    let (_, out) = s.run(group["hooks"][0]["command"].as_str().unwrap(), &post, &[]);
    assert!(context(&out, "PostToolUse")
        .unwrap()
        .contains("billing-amounts"));

    let gemini = s.connect("gemini", ".gemini/settings.json");
    let root = s.root.to_string_lossy().to_string();
    let env = [("GEMINI_PROJECT_DIR", root.as_str())];
    let (_, out) = s.run(&command(&gemini, "BeforeAgent"), &json!({
        "session_id": "g1", "transcript_path": "/dev/null", "cwd": s.root, "timestamp": "2026-12-02T10:00:00Z",
        "hook_event_name": "BeforeAgent", "prompt": PROMPT }), &env);
    assert!(context(&out, "BeforeAgent")
        .unwrap()
        .contains("integration-test-migrations"));
    let group = gemini["hooks"]["AfterTool"][0].clone();
    assert_eq!(
        group["matcher"],
        "^(read_file|read_many_files|write_file|replace)$"
    );
    assert_eq!(group["hooks"][0]["timeout"], 5000);
    let (_, out) = s.run(group["hooks"][0]["command"].as_str().unwrap(), &json!({
        "session_id": "g1", "transcript_path": "/dev/null", "cwd": s.root, "timestamp": "2026-12-02T10:00:01Z",
        "hook_event_name": "AfterTool", "tool_name": "read_file", "tool_input": { "file_path": "src/billing.rs" },
        "tool_response": { "llmContent": "pub struct Cents(i64);" } }), &env);
    assert!(context(&out, "AfterTool")
        .unwrap()
        .contains("billing-amounts"));

    // `disconnect` takes the hint hooks out with the others.
    let out = medulla_cmd(s.o.home.path(), &s.root)
        .env("HOME", s.user.path())
        .args(["disconnect", "gemini"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let after = std::fs::read_to_string(s.root.join(".gemini/settings.json")).unwrap_or_default();
    assert!(!after.contains(" hint --client "), "{after}");
}

/// Issue 71, finding 2: Gemini CLI hands its `BeforeAgent` hook the prompt wrapped:
/// `<hook_context>` blocks of what hooks added earlier (medulla's own session-start
/// digest among them), then the person's words. Recalled whole, the digest drowned the
/// words, and past 4 KB of digest they were cut off: the prompt hint never fired. The
/// hint now recalls on the words alone, however long the wrapping.
#[test]
fn geminis_prompt_hint_recalls_the_persons_words_inside_its_hook_context() {
    let s = shop();
    let gemini = s.connect("gemini", ".gemini/settings.json");
    let root = s.root.to_string_lossy().to_string();
    let env = [("GEMINI_PROJECT_DIR", root.as_str())];
    let digest = "medulla: memory for this project: 2 live claims in its brain.\n- [billing-amounts] billing amounts are integer cents in i64; never floats (verified)\n".repeat(60);
    assert!(digest.len() > 6 * 1024);
    let wrapped = format!("<hook_context>{digest}</hook_context>\n\n{PROMPT}");
    let (code, out) = s.run(&command(&gemini, "BeforeAgent"), &json!({
        "session_id": "g2", "transcript_path": "/dev/null", "cwd": s.root, "timestamp": "2026-12-02T10:00:00Z",
        "hook_event_name": "BeforeAgent", "prompt": wrapped }), &env);
    assert_eq!(code, 0);
    let ctx = context(&out, "BeforeAgent").expect("the prompt hint fires");
    assert!(ctx.contains("integration-test-migrations"), "{ctx}");
    assert!(
        !ctx.contains("[billing-amounts]"),
        "the digest's words are not the person's: {ctx}"
    );
}

/// Never in the way: with no owner, autostart off, hints turned off, or an input it
/// cannot read, the hook prints nothing and exits 0 (and never starts an owner).
#[test]
fn a_hint_with_nothing_to_say_prints_nothing_and_exits_zero() {
    let s = shop();
    let settings = s.connect("claude-code", ".claude/settings.json");
    let cmd = command(&settings, "UserPromptSubmit");
    for bad in [
        json!("not an object"),
        json!({ "hook_event_name": "UserPromptSubmit" }),
        json!({}),
    ] {
        let (code, out) = s.run(&cmd, &bad, &[]);
        assert_eq!((code, out.as_str()), (0, ""), "{bad}");
    }
    // `hints = false`: nothing.
    std::fs::write(s.o.home.path().join("config.toml"), "hints = false\n").unwrap();
    let (code, out) = s.run(&cmd, &claude_prompt(&s, "off", PROMPT), &[]);
    assert_eq!((code, out.as_str()), (0, ""));
    std::fs::remove_file(s.o.home.path().join("config.toml")).unwrap();
    // No owner in this home, autostart on or off: nothing, and no owner started.
    let empty = tempfile::tempdir().unwrap();
    for autostart in ["0", "1"] {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(&cmd)
            .current_dir(&s.root)
            .env("MEDULLA_HOME", empty.path())
            .env("MEDULLA_NO_AUTOSTART", autostart)
            .env_remove("MEDULLA_URL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(claude_prompt(&s, "none", PROMPT).to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            (out.status.code(), out.stdout.as_slice()),
            (Some(0), &b""[..])
        );
        assert!(
            !empty.path().join("owner.json").exists(),
            "a hint never starts an owner"
        );
    }
}

/// The session-start digest counts as shown: a claim `prime` listed is not added again
/// by the same session's hints.
#[test]
fn what_the_session_start_digest_showed_is_not_added_again() {
    let s = shop();
    let settings = s.connect("claude-code", ".claude/settings.json");
    let prime = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let start = json!({ "session_id": "p1", "transcript_path": "/dev/null", "cwd": s.root,
                        "hook_event_name": "SessionStart", "source": "startup" });
    let (code, out) = s.run(&prime, &start, &[("MEDULLA_NO_AUTOSTART", "1")]);
    assert_eq!(code, 0);
    let digest = context(&out, "SessionStart").unwrap();
    assert!(
        digest.contains("integration-test-migrations") && digest.contains("billing-amounts"),
        "{digest}"
    );
    let (_, out) = s.run(
        &command(&settings, "UserPromptSubmit"),
        &claude_prompt(&s, "p1", PROMPT),
        &[],
    );
    assert_eq!(out, "", "shown at session start");
    let (_, out) = s.run(
        &command(&settings, "UserPromptSubmit"),
        &claude_prompt(&s, "p2", PROMPT),
        &[],
    );
    assert!(
        context(&out, "UserPromptSubmit").is_some(),
        "another session"
    );
}
