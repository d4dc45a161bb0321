//! The parts of `cargo xtask bench --hints` that look at a session rather than a call
//! (issue 71): each hook's wall time against a stalled owner (SIGSTOP: it holds its home
//! and its port and answers nothing), and what a scripted 20-prompt session received
//! from memory, in tokens, under the default per-session budget.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::http::Owner;
use super::runner::{header, pct};

/// `medulla ARGS` run as a client runs a hook (a new process, the hook's JSON on stdin):
/// its wall time and what it printed.
pub(super) fn hook(
    bin: &Path,
    home: &Path,
    cwd: &Path,
    args: &[&str],
    input: &Value,
) -> Result<(Duration, String)> {
    let t = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .env("MEDULLA_HOME", home)
        .env_remove("MEDULLA_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("run medulla {args:?}"))?;
    child
        .stdin
        .take()
        .context("stdin")?
        .write_all(input.to_string().as_bytes())?;
    let out = child.wait_with_output()?;
    Ok((
        t.elapsed(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

fn signal(pid: u32, sig: &str) -> Result<()> {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()?
        .success();
    anyhow::ensure!(ok, "kill {sig} {pid} failed");
    Ok(())
}

/// Each hook, `calls` times, against `o` stopped: p50 and max wall time, and whether it
/// ever printed anything (it must not).
pub(super) fn stalled(bin: &Path, home: &Path, root: &Path, o: &Owner, calls: usize) -> Result<()> {
    let r = root.to_string_lossy();
    let inputs = [
        (
            "prime",
            json!({ "session_id": "st", "cwd": r, "hook_event_name": "SessionStart", "source": "startup" }),
        ),
        (
            "hint",
            json!({ "session_id": "st", "cwd": r, "hook_event_name": "UserPromptSubmit", "prompt": "how are billing amounts kept?" }),
        ),
        (
            "nudge",
            json!({ "session_id": "st", "cwd": r, "hook_event_name": "Stop", "stop_hook_active": false, "transcript_path": "/dev/null" }),
        ),
    ];
    signal(o.child.id(), "-STOP")?;
    let mut rows = Vec::new();
    let measured = (|| -> Result<()> {
        for (name, input) in &inputs {
            let mut times = Vec::new();
            let mut printed = 0;
            for _ in 0..calls {
                let (t, out) = hook(bin, home, root, &[name, "--client", "claude"], input)?;
                times.push(t);
                printed += usize::from(!out.trim().is_empty());
            }
            let max = times.iter().max().copied().unwrap_or_default();
            rows.push(format!(
                "| {name} | {calls} | {:.0} | {:.0} | {printed} |",
                pct(&mut times, 0.5),
                max.as_secs_f64() * 1000.0
            ));
        }
        Ok(())
    })();
    signal(o.child.id(), "-CONT")?;
    measured?;
    header("| hook, owner stalled | calls | p50 wall (ms) | max (ms) | printed |");
    for r in rows {
        println!("{r}");
    }
    Ok(())
}

/// The brain's hint numbers in `doctor` (digest tokens, hint tokens, capped hints).
fn numbers(o: &Owner, root: &str) -> Result<(u64, u64, u64)> {
    let v: Value = o.http.get(format!("{}/api/doctor", o.url)).send()?.json()?;
    let row = v["hints"]
        .as_array()
        .and_then(|rows| rows.iter().find(|h| h["brain"] == root))
        .cloned()
        .unwrap_or_default();
    let n = |k: &str| row[k].as_u64().unwrap_or(0);
    Ok((n("digest_tokens"), n("hint_tokens"), n("capped")))
}

/// One client session as a person's day has them: the session-start digest, then 20
/// prompts (`prompts`, cycled), each through the prompt hook. What it received in tokens
/// (doctor's numbers before and after), how many prompts got claims, how many were cut to
/// a count by the budget.
pub(super) fn session(
    bin: &Path,
    home: &Path,
    root: &Path,
    o: &Owner,
    prompts: &[String],
) -> Result<()> {
    let r = root.to_string_lossy().into_owned();
    let (d0, h0, c0) = numbers(o, &r)?;
    let start = json!({ "session_id": "day", "cwd": r, "hook_event_name": "SessionStart", "source": "startup" });
    let (_, digest) = hook(bin, home, root, &["prime", "--client", "claude"], &start)?;
    let mut with_claims = 0;
    for i in 0..20 {
        let input = json!({ "session_id": "day", "cwd": r, "hook_event_name": "UserPromptSubmit",
            "prompt": prompts[i % prompts.len()] });
        let (_, out) = hook(bin, home, root, &["hint", "--client", "claude"], &input)?;
        with_claims += usize::from(out.contains("- ["));
    }
    let (d1, h1, c1) = numbers(o, &r)?;
    header("| scripted session | digest (tokens) | hints (tokens) | total | prompts with claims | capped |");
    println!(
        "| prime + 20 prompts, default budget | {} | {} | {} | {with_claims} | {} |",
        d1 - d0,
        h1 - h0,
        (d1 - d0) + (h1 - h0),
        c1 - c0
    );
    eprintln!("digest printed: {} bytes", digest.len());
    Ok(())
}
