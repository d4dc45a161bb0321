//! `cargo xtask bench --hints [--claims 100000] [--calls 30] [--no-model]`: what a prompt
//! or file hook costs (issue 64): `medulla hint --client claude` run as Claude Code runs
//! it (a new process, the hook's JSON on stdin), wall time including the process start,
//! against a release owner holding a brain of `--claims` claims (the Zipf corpus, every
//! query word common, imported) beside a 1 000-claim one. Targets: p50 ≤ 50 ms, max ≤
//! 300 ms on two cores. Then (issue 71, `hint_session.rs`) the tokens a scripted
//! 20-prompt session received in the 1 000-claim brain, and each hook's wall time with
//! the owner stalled (target: under a second).

use anyhow::{bail, Result};
use serde_json::json;

use super::http::{require_binary, start_logged};
use super::import::wait_idle;
use super::runner::{header, pct};

const USAGE: &str = "usage: cargo xtask bench --hints [--claims 100000] [--calls 30] [--no-model]";

pub fn run(args: &[String]) -> Result<()> {
    for (i, a) in args.iter().enumerate() {
        let value = i > 0 && ["--claims", "--calls"].contains(&args[i - 1].as_str());
        if !value && !["--claims", "--calls", "--no-model"].contains(&a.as_str()) {
            bail!("unknown argument {a:?}: {USAGE}");
        }
    }
    let large_n = crate::flag_num(args, "--claims", 100_000)?.max(1);
    let calls = crate::flag_num(args, "--calls", 30)?.max(3);
    let model = !args.iter().any(|a| a == "--no-model");
    let bin = require_binary()?;
    let home = tempfile::tempdir()?;
    let work = tempfile::tempdir()?;
    let base = std::fs::canonicalize(work.path())?;
    let o = start_logged(home.path(), model, None)?;
    let mut rows = Vec::new();
    let mut small = None;
    for (name, n, seed) in [("small", 1000, 11), ("large", large_n, 29)] {
        let root = base.join(name);
        std::fs::create_dir_all(root.join("src"))?;
        std::fs::write(root.join("src/billing.rs"), "pub struct Cents(i64);\n")?;
        let r = root.to_string_lossy().into_owned();
        o.call("bootstrap", json!({ "root": r }), &r)?;
        let legacy = base.join(format!("legacy-{name}"));
        super::scale::write_legacy(&legacy, &r, n, seed)?;
        let (v, secs, _) =
            super::import::import(&bin, home.path(), &r, &legacy, false, o.child.id())?;
        eprintln!("{name}: imported {} in {secs:.1} s", v["imported_live"]);
        o.call("memorize", json!({ "label": "Integration test migrations",
            "text": "run sqlx migrate run against the test database before the integration tests" }), &r)?;
        o.call("memorize", json!({ "label": "Billing amounts",
            "text": "billing amounts are integer cents in i64; never floats", "evidence": ["src/billing.rs"] }), &r)?;
        wait_idle(o.child.id())?;
        if small.is_none() {
            small = Some(root.clone());
        }
        let prompts = [
            "how do I run the database migrations before the integration tests?",
            &super::zipf::query(7),
            "write a haiku about autumn leaves",
        ];
        for (kind, make) in [
            ("prompt", None),
            ("file", Some(root.join("src/billing.rs"))),
        ] {
            let mut times = Vec::new();
            let mut added = 0;
            for i in 0..calls {
                // A new session each call: every call does the whole work.
                let input = match &make {
                    None => json!({ "session_id": format!("{name}-{kind}-{i}"), "cwd": root,
                        "transcript_path": "/dev/null", "hook_event_name": "UserPromptSubmit",
                        "prompt": prompts[i % prompts.len()] }),
                    Some(f) => json!({ "session_id": format!("{name}-{kind}-{i}"), "cwd": root,
                        "transcript_path": "/dev/null", "hook_event_name": "PostToolUse",
                        "tool_name": "Read", "tool_input": { "file_path": f }, "tool_response": {} }),
                };
                let (t, out) = super::hint_session::hook(
                    &bin,
                    home.path(),
                    &root,
                    &["hint", "--client", "claude"],
                    &input,
                )?;
                times.push(t);
                added += usize::from(!out.is_empty());
            }
            let max = times.iter().max().copied().unwrap_or_default();
            rows.push(format!(
                "| {n} claims | {kind} | {calls} | {added} | {:.1} | {:.1} |",
                pct(&mut times, 0.5),
                max.as_secs_f64() * 1000.0
            ));
        }
    }
    header("| brain | hook | calls | added context | p50 wall (ms) | max (ms) |");
    for r in rows {
        println!("{r}");
    }
    let small = small.expect("the small brain");
    let mut prompts: Vec<String> = vec![
        "how do I run the database migrations before the integration tests?".into(),
        "write a haiku about autumn leaves".into(),
    ];
    prompts.extend((0..18).map(super::zipf::query));
    super::hint_session::session(&bin, home.path(), &small, &o, &prompts)?;
    super::hint_session::stalled(&bin, home.path(), &small, &o, 5)?;
    Ok(())
}
