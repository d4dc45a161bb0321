//! What each client command sends to the owner and which printer shows the answer.

use anyhow::Context;
use serde_json::{json, Map, Value};

use super::client::{encode, Answer, Client};
use super::print::{self, out};
use super::{name, paths, ClientOpts, Command, KvCmd, MailboxCmd, Tier, FOUNDER};

/// `Some("medulla")` for the medulla tier; the project tier is the owner's default and is
/// left out.
fn medulla_tier(t: Tier) -> Option<&'static str> {
    (t == Tier::Medulla).then_some("medulla")
}

fn opt_tier(t: Option<Tier>) -> Option<String> {
    t.map(name)
}

/// Print an answer: the JSON itself with `--json`, else the refusal or the summary. The
/// exit code: 0 when the owner did it, 1 when it refused.
fn finish(opts: &ClientOpts, a: &Answer, human: impl FnOnce(&Value)) -> anyhow::Result<i32> {
    if opts.json {
        out!("{}", serde_json::to_string_pretty(&a.body)?);
    } else if a.ok() {
        human(&a.body);
    } else {
        print::error(&a.body);
    }
    Ok(if a.ok() { 0 } else { 1 })
}

/// As [`finish`], printing the owner's reception (the request landed off the caller
/// root's brain, or nowhere) on stderr first.
fn finish_read(opts: &ClientOpts, a: &Answer, human: impl FnOnce(&Value)) -> anyhow::Result<i32> {
    if !opts.json && a.ok() {
        print::reception(&a.body);
    }
    finish(opts, a, human)
}

pub fn execute(opts: &ClientOpts, command: Command) -> anyhow::Result<i32> {
    let client = Client::new(opts.url.as_deref())?;
    let c = &client;
    match command {
        Command::Serve(_)
        | Command::Bridge { .. }
        | Command::Completions { .. }
        | Command::Model(_)
        | Command::Prime(_)
        | Command::Connect(_)
        | Command::Disconnect(_)
        | Command::Sync(_)
        | Command::Restore(_) => {
            unreachable!("not a client command")
        }
        Command::Stop { .. } => super::owner::stop(c, opts),
        Command::Hall { no_open, .. } => super::owner::hall(c, opts, no_open),
        Command::Status { .. } => finish(opts, &c.get("/api/health")?, print::admin::status),
        Command::Brains { .. } => finish(opts, &c.get("/api/instances")?, print::admin::brains),
        Command::Bootstrap { path, .. } => {
            // Without PATH the owner uses the caller root (the working directory).
            let root = path
                .map(|p| paths::existing(&p, "the project root"))
                .transpose()?;
            let a = c.call("bootstrap", json!({ "root": root }))?;
            finish(opts, &a, print::writes::bootstrap)
        }
        Command::Memorize {
            label,
            text,
            strength,
            evidence,
            tier,
            agent,
            ..
        } => {
            let args = json!({
                "label": label, "text": text, "strength": strength.map(name),
                "evidence": evidence, "tier": medulla_tier(tier), "agent_id": agent,
            });
            finish(opts, &c.call("memorize", args)?, print::writes::memorize)
        }
        Command::Seek {
            query,
            tier,
            scope,
            limit,
            filter,
            ..
        } => {
            let mut args = json!({
                "query": query.join(" "), "tier": tier.map(name), "scope": scope, "limit": limit,
            });
            filter.apply(&mut args)?;
            finish_read(opts, &c.call("seek", args)?, print::rows::seek)
        }
        Command::History { slug, tier, .. } => {
            let a = c.call("history", json!({ "slug": slug, "tier": opt_tier(tier) }))?;
            finish_read(opts, &a, print::rows::history)
        }
        Command::Learn {
            slug,
            verdict,
            tier,
            note,
            agent,
            ..
        } => {
            let args = json!({
                "slug": slug, "verdict": name(verdict), "tier": medulla_tier(tier),
                "note": note, "agent_id": agent,
            });
            let a = c.call("learn", args)?;
            finish(opts, &a, |b| print::writes::learn(b, &name(tier)))
        }
        Command::North {
            task,
            limit,
            filter,
            ..
        } => {
            let mut args = json!({ "task": task.join(" "), "limit": limit });
            filter.apply(&mut args)?;
            let a = c.call("north", args)?;
            finish_read(opts, &a, print::rows::north)
        }
        Command::Delegate {
            task,
            child_agent,
            limit,
            ..
        } => {
            let args =
                json!({ "task": task.join(" "), "child_agent": child_agent, "limit": limit });
            finish_read(opts, &c.call("delegate", args)?, print::rows::delegate)
        }
        Command::Promote {
            claim,
            reason,
            brain,
            agent,
            ..
        } => {
            // No --brain: send none, and the owner promotes from the routed brain.
            let brain = brain.as_deref().map(paths::brain).transpose()?;
            let args =
                json!({ "claim": claim, "reason": reason, "brain": brain, "agent_id": agent });
            finish(opts, &c.call("promote", args)?, print::writes::promote)
        }
        Command::Purge {
            slug, tier, agent, ..
        } => {
            let args = json!({ "slug": slug, "tier": medulla_tier(tier), "agent_id": agent });
            finish(opts, &c.call("purge", args)?, print::writes::purge)
        }
        Command::Retire {
            slug,
            reason,
            tier,
            agent,
            ..
        } => {
            let args = json!({
                "slug": slug, "reason": reason, "tier": medulla_tier(tier), "agent_id": agent,
            });
            finish(opts, &c.call("retire", args)?, print::writes::retire)
        }
        Command::Kv(kv) => {
            let args = match kv {
                KvCmd::Get { key, tier, .. } => {
                    json!({ "op": "get", "key": key, "tier": opt_tier(tier) })
                }
                KvCmd::Set {
                    key,
                    value,
                    tier,
                    agent,
                    ..
                } => json!({
                    "op": "set", "key": key, "value": value, "tier": opt_tier(tier), "agent_id": agent,
                }),
                KvCmd::List { tier, .. } => json!({ "op": "list", "tier": opt_tier(tier) }),
                KvCmd::Delete {
                    key, tier, agent, ..
                } => json!({
                    "op": "delete", "key": key, "tier": opt_tier(tier), "agent_id": agent,
                }),
            };
            finish(opts, &c.call("boot_memory", args)?, print::writes::kv)
        }
        Command::Audit {
            brain,
            agent,
            limit,
            ..
        } => {
            let brain = brain.as_deref().map(paths::brain).transpose()?;
            let a = c.call(
                "audit",
                json!({ "brain": brain, "agent": agent, "limit": limit }),
            )?;
            finish(opts, &a, print::admin::audit)
        }
        Command::Acts {
            brain,
            limit,
            before,
            ..
        } => {
            let brain = brain.as_deref().map(paths::brain).transpose()?;
            let a = c.call(
                "acts",
                json!({ "brain": brain, "limit": limit, "before": before }),
            )?;
            let human = |b: &Value| print::admin::acts(b, brain.as_deref(), limit);
            // A store named outright needs no word on where the caller stands.
            if brain.is_some() {
                finish(opts, &a, human)
            } else {
                finish_read(opts, &a, human)
            }
        }
        Command::Report(r) => {
            let mut letter: Map<String, Value> = match &r.letter {
                Some(t) => serde_json::from_str(t).context("--letter is not a JSON object")?,
                None => Map::new(),
            };
            let repo = r.repo.as_deref().map(paths::repo).transpose()?;
            let fields = [
                ("class", r.class.map(name)),
                ("kind", r.kind.map(name)),
                ("repo", repo),
                ("what", r.what),
                ("expected", r.expected),
            ];
            for (k, v) in fields {
                if let Some(v) = v {
                    letter.insert(k.into(), json!(v));
                }
            }
            if !r.answers.is_empty() {
                letter.insert("answers".into(), json!(r.answers));
            }
            if !letter.contains_key("agent") {
                letter.insert("agent".into(), json!(r.agent));
            }
            let a = c.call("report", json!({ "letter": letter }))?;
            finish(opts, &a, print::mailbox::report)
        }
        Command::Mailbox(MailboxCmd::Sweep { .. }) => {
            finish(opts, &c.get("/api/mailbox/sweep")?, print::mailbox::sweep)
        }
        Command::Mailbox(MailboxCmd::Distribute { .. }) => finish(
            opts,
            &c.post("/api/mailbox/distribute", Value::Null)?,
            print::mailbox::distribute,
        ),
        Command::Mailbox(MailboxCmd::Show { brain, .. }) => {
            let brain = match brain {
                Some(b) => paths::brain(&b)?,
                None => paths::absolute(std::path::Path::new("."))?
                    .to_string_lossy()
                    .into_owned(),
            };
            let a = c.get(&format!("/api/mailbox?brain={}", encode(&brain)))?;
            finish(opts, &a, print::mailbox::show)
        }
        Command::Doctor { deep, .. } => {
            let path = if deep {
                "/api/doctor?deep=true"
            } else {
                "/api/doctor"
            };
            finish(opts, &c.get(path)?, print::admin::doctor)
        }
        Command::Import(i) => {
            let dir = paths::existing(&i.dir, "the directory")?;
            let triage = i
                .triage
                .as_deref()
                .map(|t| paths::existing(t, "the rules file"))
                .transpose()?;
            let brain = i.brain.as_deref().map(paths::brain).transpose()?;
            let args = json!({
                "dir": dir, "brain": brain, "medulla": i.medulla, "dry_run": i.dry_run,
                "triage": triage, "agent_id": FOUNDER,
            });
            let a = streamed(c, opts, "import", args)?;
            let shown = dir.to_string_lossy().into_owned();
            let code = finish(opts, &a, |b| print::transfer::import(b, &shown))?;
            Ok(if code == 0 && print::transfer::import_failed(&a.body) {
                1
            } else {
                code
            })
        }
        Command::Export(e) => {
            let dir = paths::absolute(&e.dir)?;
            let brain = e.brain.as_deref().map(paths::brain).transpose()?;
            let args =
                json!({ "dir": dir, "brain": brain, "medulla": e.medulla, "history": e.history });
            let a = streamed(c, opts, "export", args)?;
            finish(opts, &a, print::transfer::export)
        }
        Command::Backup { dir, .. } => {
            let dir = dir.map(|d| paths::absolute(&d)).transpose()?;
            let a = streamed(c, opts, "backup", json!({ "dir": dir }))?;
            let code = finish(opts, &a, print::transfer::backup)?;
            // A backup that could not copy every store is not a clean one.
            let failed = a.body["manifest"]["failed"]
                .as_array()
                .is_some_and(|f| !f.is_empty());
            Ok(if code == 0 && failed { 1 } else { code })
        }
    }
}

/// A long verb, with a progress bar on a terminal (never with `--json`).
fn streamed(c: &Client, opts: &ClientOpts, verb: &str, args: Value) -> anyhow::Result<Answer> {
    let bar = print::transfer::Bar::new(!opts.json);
    let a = c.call_streaming(verb, args, |p| bar.update(p));
    bar.finish();
    a
}
