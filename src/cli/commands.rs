//! What each client command sends to the owner and which printer shows the answer. A
//! verb's arguments are sent as the verb's own argument type, serialized: the command line
//! parsed into it, and only paths are made absolute here before it goes.

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use super::client::{encode, read, Answer, Client};
use super::print::{self, out};
use super::values::name;
use super::{paths, BrainsCmd, ClientOpts, Command, KvCmd, MailboxCmd, FOUNDER};
use crate::service::registry::Envelope;
use crate::service::verb::Verb;
use crate::service::verbs::boot_memory::{BootMemory, BootMemoryArgs, Op};
use crate::service::verbs::report::ReportArgs;
use crate::service::verbs::{
    acts::Acts, audit_log::Audit, beat::North, bootstrap::Bootstrap, delegate::Delegate,
    export::Export, history::History, import::Import, instances::Brains, learn::Learn,
    memorize::Memorize, merge::BrainsMerge, promote::Promote, purge::Purge, report::InboxSweep,
    report::Report, retire::Retire, review::Review, seek::Seek, split::BrainsSplit, tend::Tend,
};

/// Send a verb its own arguments: the struct the owner deserializes, serialized.
fn call<V: Verb>(c: &Client, args: &V::Args) -> anyhow::Result<Answer> {
    c.call(V::NAME, serde_json::to_value(args)?)
}

/// Print an answer: the JSON itself with `--json`, else the refusal or the summary. The
/// exit code: 0 when the owner did it, 1 when it refused.
fn finish_with(
    opts: &ClientOpts,
    a: &Answer,
    human: impl FnOnce(&Value) -> anyhow::Result<()>,
) -> anyhow::Result<i32> {
    if opts.json {
        out!("{}", serde_json::to_string_pretty(&a.body)?);
    } else if a.ok() {
        human(&a.body)?;
    } else {
        print::error(&a.body);
    }
    Ok(if a.ok() { 0 } else { 1 })
}

/// The owner's answer to `V`, read back as `V`'s own answer type (the one the owner
/// serialized), so a printer works on typed fields.
fn answer<V: Verb>(body: &Value) -> anyhow::Result<Envelope<V::Answer>> {
    read(body, V::NAME)
}

/// A `GET` read printed from its typed answer.
fn finish_as<T: DeserializeOwned>(
    opts: &ClientOpts,
    a: &Answer,
    what: &str,
    human: impl FnOnce(T),
) -> anyhow::Result<i32> {
    finish_with(opts, a, |b| {
        human(read(b, what)?);
        Ok(())
    })
}

/// Send `V` its arguments and print its answer, typed, with `human`.
fn run<V: Verb>(
    c: &Client,
    opts: &ClientOpts,
    args: &V::Args,
    human: impl FnOnce(Envelope<V::Answer>),
) -> anyhow::Result<i32> {
    finish_as(opts, &call::<V>(c, args)?, V::NAME, human)
}

/// As [`run`], printing the owner's reception on stderr first (a read that landed off
/// the caller root's brain, or nowhere, says so).
fn run_read<V: Verb>(
    c: &Client,
    opts: &ClientOpts,
    args: &V::Args,
    human: impl FnOnce(Envelope<V::Answer>),
) -> anyhow::Result<i32> {
    let a = call::<V>(c, args)?;
    finish_with(opts, &a, |b| {
        let e = answer::<V>(b)?;
        print::reception(e.reception.as_ref());
        human(e);
        Ok(())
    })
}

pub fn execute(opts: &ClientOpts, command: Command) -> anyhow::Result<i32> {
    // Asking whether an owner runs, or telling it to stop, never starts one.
    let client = match command {
        Command::Status { .. } | Command::Stop { .. } | Command::Restart { .. } => {
            Client::without_autostart(opts.url.as_deref())?
        }
        _ => Client::new(opts.url.as_deref())?,
    };
    let c = &client;
    match command {
        Command::Serve(_)
        | Command::Bridge { .. }
        | Command::Completions { .. }
        | Command::Model(_)
        | Command::Prime(_)
        | Command::Nudge(_)
        | Command::Hint(_)
        | Command::Connect(_)
        | Command::Disconnect(_)
        | Command::Sync(_)
        | Command::Restore(_)
        | Command::Logs(_)
        | Command::Service(_)
        | Command::Team(_) => {
            unreachable!("not a client command")
        }
        Command::Stop { .. } => super::owner::stop(c, opts),
        Command::Restart { .. } => super::owner::restart(c, opts),
        Command::Hall { no_open, .. } => super::owner::hall(c, opts, no_open),
        Command::Status { .. } => {
            let code = finish_as(opts, &c.get("/api/health")?, "health", print::admin::status)?;
            // Which brain serves this directory, and its checkouts (`--json` prints the
            // owner's health alone, as before).
            if code == 0 && !opts.json {
                if let Ok(a) = c.get("/api/route") {
                    if let Ok(v) = serde_json::from_value(a.body.clone()) {
                        print::admin::served_here(v);
                    }
                }
            }
            Ok(code)
        }
        Command::Brains {
            cmd: Some(BrainsCmd::Merge { mut args }),
            ..
        } => {
            args.from = paths::brain(&args.from)?;
            args.into = paths::brain(&args.into)?;
            run::<BrainsMerge>(c, opts, &args, print::writes::merge)
        }
        Command::Brains {
            cmd: Some(BrainsCmd::Split { mut args }),
            ..
        } => {
            args.brain = paths::brain(&args.brain)?;
            run::<BrainsSplit>(c, opts, &args, print::writes::split)
        }
        Command::Brains { cmd: None, .. } => finish_as(
            opts,
            &c.get("/api/instances")?,
            Brains::NAME,
            print::admin::brains,
        ),
        Command::Bootstrap { mut args, .. } => {
            // Without PATH the owner uses the caller root (the working directory).
            args.root = args
                .root
                .map(|p| paths::existing(p.as_ref(), "the project root"))
                .transpose()?
                .map(|p| p.to_string_lossy().into_owned());
            run::<Bootstrap>(c, opts, &args, print::writes::bootstrap)
        }
        Command::Memorize { args, .. } => run::<Memorize>(c, opts, &args, print::writes::memorize),
        Command::Seek {
            query, mut args, ..
        } => {
            args.query = query.join(" ");
            run_read::<Seek>(c, opts, &args, print::rows::seek)
        }
        Command::History { args, .. } => run_read::<History>(c, opts, &args, print::rows::history),
        Command::Learn { args, .. } => run::<Learn>(c, opts, &args, print::writes::learn),
        Command::North { task, mut args, .. } => {
            args.task = task.join(" ");
            run_read::<North>(c, opts, &args, print::rows::north)
        }
        Command::Delegate { task, mut args, .. } => {
            args.task = task.join(" ");
            run_read::<Delegate>(c, opts, &args, print::rows::delegate)
        }
        Command::Promote { mut args, .. } => {
            // No --brain: send none, and the owner promotes from the routed brain.
            args.brain = args.brain.as_deref().map(paths::brain).transpose()?;
            run::<Promote>(c, opts, &args, print::writes::promote)
        }
        Command::Purge { args, .. } => run::<Purge>(c, opts, &args, print::writes::purge),
        Command::Retire { args, .. } => run::<Retire>(c, opts, &args, print::writes::retire),
        Command::Review { mut args, .. } => {
            args.brain = args.brain.as_deref().map(paths::store).transpose()?;
            run::<Review>(c, opts, &args, print::tending::review)
        }
        Command::Tend { mut args, .. } => {
            args.brain = args.brain.as_deref().map(paths::store).transpose()?;
            run::<Tend>(c, opts, &args, print::tending::tend)
        }
        Command::Kv(kv) => {
            let args = match kv {
                KvCmd::Get { key, tier, .. } => BootMemoryArgs {
                    op: Op::Get,
                    key: Some(key),
                    value: None,
                    tier,
                    agent_id: None,
                },
                KvCmd::Set {
                    key,
                    value,
                    tier,
                    agent,
                    ..
                } => BootMemoryArgs {
                    op: Op::Set,
                    key: Some(key),
                    value: Some(value),
                    tier,
                    agent_id: Some(agent),
                },
                KvCmd::List { tier, .. } => BootMemoryArgs {
                    op: Op::List,
                    key: None,
                    value: None,
                    tier,
                    agent_id: None,
                },
                KvCmd::Delete {
                    key, tier, agent, ..
                } => BootMemoryArgs {
                    op: Op::Delete,
                    key: Some(key),
                    value: None,
                    tier,
                    agent_id: Some(agent),
                },
            };
            run::<BootMemory>(c, opts, &args, print::writes::kv)
        }
        Command::Audit { mut args, .. } => {
            args.brain = args.brain.as_deref().map(paths::brain).transpose()?;
            run::<Audit>(c, opts, &args, print::admin::audit)
        }
        Command::Acts { mut args, .. } => {
            args.brain = args.brain.as_deref().map(paths::brain).transpose()?;
            let (brain, limit) = (args.brain.clone(), args.limit);
            let human = |e| print::admin::acts(e, brain.as_deref(), limit);
            // A store named outright needs no word on where the caller stands.
            if args.brain.is_some() {
                run::<Acts>(c, opts, &args, human)
            } else {
                run_read::<Acts>(c, opts, &args, human)
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
            run::<Report>(c, opts, &ReportArgs { letter }, print::mailbox::report)
        }
        Command::Mailbox(MailboxCmd::Sweep { .. }) => {
            let a = c.get("/api/mailbox/sweep")?;
            finish_as(opts, &a, InboxSweep::NAME, print::mailbox::sweep)
        }
        Command::Mailbox(MailboxCmd::Distribute { .. }) => {
            let a = c.post("/api/mailbox/distribute", Value::Null)?;
            finish_as(opts, &a, "a distribution pass", print::mailbox::distribute)
        }
        Command::Mailbox(MailboxCmd::Show { brain, .. }) => {
            let brain = match brain {
                Some(b) => paths::brain(&b)?,
                None => paths::absolute(std::path::Path::new("."))?
                    .to_string_lossy()
                    .into_owned(),
            };
            let a = c.get(&format!("/api/mailbox?brain={}", encode(&brain)))?;
            finish_as(opts, &a, "the box", print::mailbox::show)
        }
        Command::Doctor { deep, .. } => {
            let path = if deep {
                "/api/doctor?deep=true"
            } else {
                "/api/doctor"
            };
            finish_as(opts, &c.get(path)?, "doctor", print::doctor::doctor)
        }
        Command::Import { mut args, .. } => {
            if let Some(source) = args.from {
                return import_from(c, opts, args, source);
            }
            let dir = args.dir.clone().unwrap_or_default();
            let dir = paths::existing(dir.as_ref(), "the directory")?;
            let dir = dir.to_string_lossy().into_owned();
            args.dir = Some(dir.clone());
            args.triage = args
                .triage
                .map(|t| paths::existing(t.as_ref(), "the rules file"))
                .transpose()?
                .map(|t| t.to_string_lossy().into_owned());
            args.brain = args.brain.as_deref().map(paths::brain).transpose()?;
            args.agent_id = Some(FOUNDER.into());
            let a = streamed::<Import>(c, opts, &args)?;
            let mut failed = false;
            let code = finish_with(opts, &a, |b| {
                let r = answer::<Import>(b)?.body;
                failed = print::transfer::import_failed(&r);
                print::transfer::import(&r, &dir);
                Ok(())
            })?;
            // With --json nothing is printed from the report, but the exit code still says.
            if opts.json && a.ok() {
                failed = print::transfer::import_failed(&answer::<Import>(&a.body)?.body);
            }
            Ok(if code == 0 && failed { 1 } else { code })
        }
        Command::Export { mut args, .. } => {
            args.dir = paths::absolute(args.dir.as_ref())?
                .to_string_lossy()
                .into_owned();
            args.brain = args.brain.as_deref().map(paths::brain).transpose()?;
            let a = streamed::<Export>(c, opts, &args)?;
            finish_with(opts, &a, |b| {
                print::transfer::export(answer::<Export>(b)?);
                Ok(())
            })
        }
        Command::Backup { dir, .. } => {
            let dir = dir.map(|d| paths::absolute(&d)).transpose()?;
            let args = crate::service::verbs::backup::BackupArgs {
                dir: dir.map(|d| d.to_string_lossy().into_owned()),
            };
            let a = streamed::<crate::service::verbs::backup::Backup>(c, opts, &args)?;
            let code = finish_as(opts, &a, "backup", print::transfer::backup)?;
            // A backup that could not copy every store is not a clean one.
            let failed = a.body["manifest"]["failed"]
                .as_array()
                .is_some_and(|f| !f.is_empty());
            Ok(if code == 0 && failed { 1 } else { code })
        }
    }
}

/// A long verb, with a progress bar on a terminal (never with `--json`).
fn streamed<V: Verb>(c: &Client, opts: &ClientOpts, args: &V::Args) -> anyhow::Result<Answer> {
    let bar = print::transfer::Bar::new(!opts.json);
    let a = c.call_streaming(V::NAME, serde_json::to_value(args)?, |p| bar.update(p));
    bar.finish();
    a
}

/// `medulla import --from SOURCE [PATH]`: the path made absolute, or the source's own
/// place found from this shell's environment (`HOME`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME`,
/// …), so the owner reads what this user means whatever environment it was started in.
fn import_from(
    c: &Client,
    opts: &ClientOpts,
    mut args: crate::service::verbs::import::ImportArgs,
    source: crate::service::verbs::import::sources::Source,
) -> anyhow::Result<i32> {
    use crate::service::verbs::import::sources::default_place;
    let place = match args.dir.as_deref() {
        Some(p) => paths::existing(p.as_ref(), "the path")?,
        None => default_place(source, &|k| std::env::var(k).ok()).with_context(|| {
            format!(
                "nothing says where {} is kept here: give its path",
                source.title()
            )
        })?,
    };
    // With no Serena home, the brains' own `.serena/memories/` are still read (the
    // owner's default, which a missing home leaves to them).
    let serena_without_home = args.dir.is_none()
        && source == crate::service::verbs::import::sources::Source::Serena
        && !place.exists();
    args.dir = (!serena_without_home).then(|| place.to_string_lossy().into_owned());
    args.brain = args.brain.as_deref().map(paths::brain).transpose()?;
    args.agent_id = Some(FOUNDER.into());
    let a = streamed::<Import>(c, opts, &args)?;
    let mut failed = false;
    let code = finish_with(opts, &a, |b| {
        let r = answer::<Import>(b)?.body;
        if let Some(f) = &r.from {
            failed = print::import_from::failed(f);
            print::import_from::report(f, r.dry_run);
        }
        Ok(())
    })?;
    if opts.json && a.ok() {
        let r = answer::<Import>(&a.body)?.body;
        failed = r.from.as_deref().is_some_and(print::import_from::failed);
    }
    Ok(if code == 0 && failed { 1 } else { code })
}
