//! `medulla nudge`, driven the way Claude Code's `Stop` hook drives it: the hook's JSON on
//! stdin, a transcript JSONL written here, the real owner. It asks once per session, after
//! real work that wrote nothing, and otherwise says nothing and exits 0.

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use serde_json::{json, Value};

use crate::cli::medulla_cmd;
use crate::common::Owner;

/// A Claude Code transcript: a user turn stamped `start`, then `tools` tool calls.
fn transcript(dir: &Path, name: &str, start: &str, tools: usize) -> std::path::PathBuf {
    let mut lines = vec![
        json!({ "type": "user", "timestamp": start, "sessionId": name,
        "message": { "role": "user", "content": "fix the build" } }),
    ];
    for i in 0..tools {
        lines.push(json!({ "type": "assistant", "timestamp": start, "message": { "role": "assistant",
            "content": [{ "type": "text", "text": "running" },
                        { "type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": { "command": "ls" } }] } }));
        lines.push(json!({ "type": "user", "timestamp": start, "message": { "role": "user",
            "content": [{ "type": "tool_result", "tool_use_id": format!("t{i}"), "content": "ok" }] } }));
    }
    let path = dir.join(format!("{name}.jsonl"));
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

/// Run `medulla nudge --client claude` in `cwd` with `stdin`: (exit code, stdout).
fn nudge(home: &Path, cwd: &Path, stdin: &str) -> (i32, String) {
    nudge_as("claude", home, cwd, stdin)
}

/// Run `medulla nudge --client CLIENT` in `cwd` with `stdin`: (exit code, stdout).
fn nudge_as(client: &str, home: &Path, cwd: &Path, stdin: &str) -> (i32, String) {
    let mut child = medulla_cmd(home, cwd)
        .args(["nudge", "--client", client])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn stop(session: &str, cwd: &Path, path: &Path, active: bool) -> String {
    json!({ "session_id": session, "transcript_path": path, "cwd": cwd,
            "hook_event_name": "Stop", "stop_hook_active": active })
    .to_string()
}

#[test]
fn a_long_session_that_wrote_nothing_is_asked_once_and_nothing_else_is() {
    let o = Owner::start();
    let home = o.home.path();
    let root = o.project("app");
    o.bootstrap(&root);
    let t = tempfile::tempdir().unwrap();
    // A session stamped far ahead: no claim in the brain was written after its start.
    let later = "2100-01-01T00:00:00.000Z";

    // Long, nothing written: asked once, in Claude Code's shape.
    let long = transcript(t.path(), "s-long", later, 12);
    let (code, out) = nudge(home, &root, &stop("s-long", &root, &long, false));
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    assert_eq!(v["decision"], "block");
    assert!(v["reason"].as_str().unwrap().contains("debrief"), "{v}");
    // A second Stop in the same session: nothing.
    let (code, out) = nudge(home, &root, &stop("s-long", &root, &long, false));
    assert_eq!((code, out.as_str()), (0, ""));

    // A stop hook already continued this turn: nothing (never a loop).
    let active = transcript(t.path(), "s-active", later, 12);
    let (code, out) = nudge(home, &root, &stop("s-active", &root, &active, true));
    assert_eq!((code, out.as_str()), (0, ""));

    // A short session: nothing.
    let short = transcript(t.path(), "s-short", later, 9);
    let (code, out) = nudge(home, &root, &stop("s-short", &root, &short, false));
    assert_eq!((code, out.as_str()), (0, ""));

    // Malformed or missing stdin: nothing, exit 0.
    for bad in ["", "{not json", r#"{"session_id": 3}"#] {
        let (code, out) = nudge(home, &root, bad);
        assert_eq!((code, out.as_str()), (0, ""), "{bad:?}");
    }

    // No brain covers the directory: nothing.
    let nowhere = o.project("nowhere");
    let (code, out) = nudge(home, &nowhere, &stop("s-nowhere", &nowhere, &long, false));
    assert_eq!((code, out.as_str()), (0, ""));

    // A session that memorized anything: nothing.
    let early = "2000-01-01T00:00:00.000Z";
    let wrote = transcript(t.path(), "s-wrote", early, 12);
    let cr = root.to_string_lossy().to_string();
    let (s, v) = o.call(
        "memorize",
        json!({ "label": "Release steps", "text": "release with make release" }),
        &[
            ("Medulla-Caller-Root", cr.as_str()),
            ("Medulla-Agent", "claude:maker"),
        ],
    );
    assert_eq!(s, 200, "{v}");
    let (code, out) = nudge(home, &root, &stop("s-wrote", &root, &wrote, false));
    assert_eq!((code, out.as_str()), (0, ""));

    // `nudge = false` in config.toml: nothing.
    std::fs::write(home.join("config.toml"), "nudge = false\n").unwrap();
    let off = transcript(t.path(), "s-off", later, 12);
    let (code, out) = nudge(home, &root, &stop("s-off", &root, &off, false));
    assert_eq!((code, out.as_str()), (0, ""));
    std::fs::remove_file(home.join("config.toml")).unwrap();

    // No owner at all: nothing, exit 0, and none started.
    let mut o = o;
    o.terminate();
    let gone = transcript(t.path(), "s-gone", later, 12);
    let (code, out) = nudge(o.home.path(), &root, &stop("s-gone", &root, &gone, false));
    assert_eq!((code, out.as_str()), (0, ""));
}

/// `doctor` says whether the nudge pays, per brain: the sessions the hooks saw (the
/// SessionStart hook's `prime`, and `nudge`), those asked for a debrief, and the claims
/// written after an ask.
#[test]
fn doctor_counts_the_sessions_the_hooks_saw_and_what_a_nudge_brought() {
    let o = Owner::start();
    let home = o.home.path();
    let b = o.brain("app");
    let root = Path::new(&b.root).to_path_buf();
    let t = tempfile::tempdir().unwrap();
    // A quiet session: its start recorded by the SessionStart hook's prime, never nudged.
    let mut child = medulla_cmd(home, &root)
        .args(["prime", "--client", "claude", "--url", &o.url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = json!({ "session_id": "s-quiet", "cwd": root, "hook_event_name": "SessionStart", "source": "startup" });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(start.to_string().as_bytes())
        .unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    // A long session that wrote nothing: nudged; then the agent debriefs.
    let long = transcript(t.path(), "s-long", "2100-01-01T00:00:00.000Z", 12);
    let (_, out) = nudge(home, &root, &stop("s-long", &root, &long, false));
    assert!(out.contains("\"block\""), "{out:?}");
    b.memorize(
        "Release steps",
        "release with make release; never tag by hand",
    );
    let (s, d) = o.get("/api/doctor");
    assert_eq!(s, 200, "{d}");
    assert_eq!(
        d["nudges"],
        json!([{ "brain": b.root, "sessions_seen": 2, "sessions_nudged": 1, "claims_after_nudge": 1 }]),
        "{d}"
    );
    // The person reads the same in `medulla doctor`.
    let out = medulla_cmd(home, &root)
        .args(["doctor", "--url", &o.url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 asked for a debrief"), "{text}");
}

/// A Codex rollout: its session line stamped `start`, then `tools` shell calls, each with
/// its output and the event Codex logs beside it.
fn codex_rollout(dir: &Path, name: &str, start: &str, tools: usize) -> std::path::PathBuf {
    let mut lines = vec![
        json!({ "timestamp": start, "type": "session_meta", "payload": { "id": name, "cwd": "/p", "cli_version": "0.120.0" } }),
        json!({ "timestamp": start, "type": "response_item", "payload": { "type": "message", "role": "user",
            "content": [{ "type": "input_text", "text": "fix the build" }] } }),
    ];
    for i in 0..tools {
        let call = format!("call_{i}");
        lines.push(json!({ "timestamp": start, "type": "response_item", "payload": { "type": "function_call",
            "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": call } }));
        lines.push(json!({ "timestamp": start, "type": "event_msg", "payload": { "type": "exec_command_end", "call_id": call } }));
        lines.push(json!({ "timestamp": start, "type": "response_item", "payload": { "type": "function_call_output",
            "call_id": call, "output": "ok" } }));
    }
    let path = dir.join(format!("rollout-{name}.jsonl"));
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

/// A Gemini CLI conversation record (JSONL): its metadata line stamped `start`, then one
/// model message whose `tools` calls are recorded as they progress (the message appended
/// again with each new call, as the CLI does).
fn gemini_record(dir: &Path, name: &str, start: &str, tools: usize) -> std::path::PathBuf {
    let mut lines = vec![
        json!({ "sessionId": name, "projectHash": "h", "startTime": start, "lastUpdated": start }),
        json!({ "id": "u1", "timestamp": start, "type": "user", "content": "fix the build" }),
    ];
    let mut calls = vec![];
    for i in 0..tools {
        calls.push(json!({ "id": format!("run_shell_command-{i}"), "name": "run_shell_command", "status": "success" }));
        lines.push(json!({ "id": "m1", "timestamp": start, "type": "gemini", "content": "", "toolCalls": calls }));
    }
    let path = dir.join(format!("session-{name}.jsonl"));
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

/// Writes a transcript: (dir, session, start, tool calls) → its path.
type Writer = fn(&Path, &str, &str, usize) -> std::path::PathBuf;

/// Codex's `Stop` and Gemini CLI's `AfterAgent` drive the same nudge: a long session that
/// wrote nothing is asked once, in the client's own shape (`block` for Codex, `deny` for
/// Gemini, `reason` the ask); a second end of turn, a short session, a turn a hook already
/// continued, and a Codex stop with no transcript are not.
#[test]
fn codex_and_gemini_sessions_are_asked_once_in_their_own_shapes() {
    let o = Owner::start();
    let home = o.home.path();
    let root = o.project("app");
    o.bootstrap(&root);
    let t = tempfile::tempdir().unwrap();
    let later = "2100-01-01T00:00:00.000Z";
    let cases: [(&str, &str, Writer); 2] = [
        ("codex", "block", codex_rollout),
        ("gemini", "deny", gemini_record),
    ];
    for (client, decision, write) in cases {
        let hook = |id: &str, path: Value, active: bool| {
            json!({ "session_id": id, "transcript_path": path, "cwd": root,
                    "hook_event_name": if client == "codex" { "Stop" } else { "AfterAgent" },
                    "stop_hook_active": active, "last_assistant_message": "done" })
            .to_string()
        };
        let long_id = format!("{client}-long");
        let long = write(t.path(), &long_id, later, 12);
        let (code, out) = nudge_as(client, home, &root, &hook(&long_id, json!(long), false));
        assert_eq!(code, 0);
        let v: Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{client}: {e}: {out:?}"));
        assert_eq!(v["decision"], decision, "{client}: {v}");
        assert!(v["reason"].as_str().unwrap().contains("debrief"), "{v}");
        // The same session's next end of turn: nothing.
        let (code, out) = nudge_as(client, home, &root, &hook(&long_id, json!(long), false));
        assert_eq!((code, out.as_str()), (0, ""), "{client}");
        // Nine tool calls are not real work yet (a call recorded again counts once).
        let short_id = format!("{client}-short");
        let short = write(t.path(), &short_id, later, 9);
        let (code, out) = nudge_as(client, home, &root, &hook(&short_id, json!(short), false));
        assert_eq!((code, out.as_str()), (0, ""), "{client}");
        // A hook already continued this turn: nothing.
        let active_id = format!("{client}-active");
        let active = write(t.path(), &active_id, later, 12);
        let (code, out) = nudge_as(client, home, &root, &hook(&active_id, json!(active), true));
        assert_eq!((code, out.as_str()), (0, ""), "{client}");
        // No transcript (Codex may send `null`): nothing.
        let (code, out) = nudge_as(
            client,
            home,
            &root,
            &hook(&format!("{client}-none"), Value::Null, false),
        );
        assert_eq!((code, out.as_str()), (0, ""), "{client}");
    }
}
