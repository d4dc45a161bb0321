//! `medulla hint`: the prompt and file hooks (SPEC §5). Run by the client as each prompt
//! is submitted and after each file the agent reads or edits, it adds what the served
//! brain and the medulla know about that prompt or file to the agent's context, in the
//! client's own hook shape. It never starts an owner and never blocks the client: with no
//! owner, no brain, hints off (`hints = false` in `config.toml`) or an input it cannot
//! read it prints nothing and exits 0, within the hooks' [`hook::BUDGET`]; one plain
//! request on a socket of its own, no runtime.

mod input;

use std::io::Read as _;

use clap::Args;
use serde_json::{json, Value};

use super::hook::{self, HookClient};
use super::print::out;
use input::Ask;

/// The most of stdin read: a prompt is bounded by the owner anyway.
const MAX_INPUT: u64 = 1 << 20;

#[derive(Debug, Args)]
pub struct HintArgs {
    /// The client whose prompt or tool hook runs this (its input and output shape)
    #[arg(long, value_enum)]
    pub client: HookClient,
    /// The owner's URL [default: from $MEDULLA_HOME/owner.json]
    #[arg(long, env = "MEDULLA_URL", value_name = "URL")]
    pub url: Option<String>,
}

/// `medulla hint`: always exit 0.
pub fn hint(a: HintArgs) -> i32 {
    let until = hook::deadline();
    let mut raw = String::new();
    if std::io::stdin()
        .take(MAX_INPUT)
        .read_to_string(&mut raw)
        .is_err()
    {
        return 0;
    }
    if let Some(answer) = ask(&a, &raw, until) {
        out!("{answer}");
    }
    0
}

/// The hook's answer, or `None` to add nothing.
fn ask(a: &HintArgs, raw: &str, until: std::time::Instant) -> Option<Value> {
    let home = crate::config::default_home();
    if crate::launch::hints_off(&home) {
        return None;
    }
    let call = input::read(a.client, raw)?;
    let name = a.client.name();
    let body = match &call.ask {
        Ask::Prompt(p) => json!({
            "session": format!("{name}:{}", call.session),
            "event": "prompt",
            "prompt": p,
        }),
        Ask::Files(f) => json!({
            "session": format!("{name}:{}", call.session),
            "event": "file",
            "paths": f,
        }),
    };
    let url = super::client::owner_url(a.url.as_deref());
    let cwd = call.cwd.to_string_lossy().into_owned();
    let agent = format!("{name}:hint");
    let (status, v) = crate::launch::raw::request(
        &home,
        &url,
        "POST",
        "/api/hint",
        &[("Medulla-Caller-Root", &cwd), ("Medulla-Agent", &agent)],
        Some(body.to_string().as_bytes()),
        until,
    )?;
    let context = v["context"].as_str().filter(|_| status == 200)?;
    Some(json!({
        "hookSpecificOutput": { "hookEventName": call.event, "additionalContext": context }
    }))
}
