//! `medulla team …` (SPEC §13): set up a team database (admin), join one, share a
//! brain, see the link, leave. The admin commands talk to PostgreSQL directly; `status`
//! and `share` ask the running owner.

use std::path::Path;

use anyhow::{bail, Context};
use clap::Subcommand;
use serde_json::{json, Value};

use super::client::Client;
use super::ClientOpts;
use crate::team::db;

#[derive(Debug, Subcommand)]
pub enum TeamCmd {
    /// Create the team's schema, member role group and policies (admin; idempotent)
    Init {
        /// The database as its admin: postgres://ADMIN@HOST:PORT/DATABASE
        url: String,
    },
    /// Create a member role and print what the member runs (admin)
    AddMember {
        /// The member's name: lowercase letters, digits and _
        name: String,
        /// The database as its admin
        #[arg(long)]
        url: String,
    },
    /// Join a team: write its URL into config.toml (the password into a 0600 pgpass
    /// file); a running owner joins at once
    Join {
        /// postgres://MEMBER[:PASSWORD]@HOST:PORT/DATABASE[?sslmode=require|verify-full]
        url: String,
    },
    /// The team link: connected or offline, queued, lag, members, shared brains, conflicts
    Status {
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Share this project's brain with the team (run in the repository)
    Share {
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Stop syncing with the team (a running owner stops at once): shared stores stop
    /// queueing, config.toml's [team] goes; the mirrors stay on disk
    Leave,
    /// Erase a claim from a shared store everywhere (admin): a content-free tombstone
    Purge {
        /// The database as its admin
        #[arg(long)]
        url: String,
        /// The shared store: `team`, or a shared brain's `repo:<root commit>`
        #[arg(long, default_value = "team")]
        store: String,
        /// The claim's slug
        #[arg(long)]
        slug: String,
    },
}

fn home() -> std::path::PathBuf {
    crate::config::default_home()
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a runtime")
}

async fn admin(url: &str) -> anyhow::Result<tokio_postgres::Client> {
    let t = db::Target::parse(url).map_err(anyhow::Error::msg)?;
    db::connect_client(&t, &home())
        .await
        .map_err(anyhow::Error::msg)
}

pub fn run(cmd: TeamCmd) -> anyhow::Result<i32> {
    match cmd {
        TeamCmd::Init { url } => runtime()?.block_on(async {
            let c = admin(&url).await?;
            c.batch_execute(db::SCHEMA)
                .await
                .map_err(|e| anyhow::anyhow!("{}", db::describe(&e)))?;
            println!(
                "team database ready at {}: add members with `medulla team add-member NAME --url ADMIN_URL`",
                db::without_password(&url)
            );
            Ok(0)
        }),
        TeamCmd::AddMember { name, url } => runtime()?.block_on(async {
            db::check_member_name(&name).map_err(anyhow::Error::msg)?;
            let c = admin(&url).await?;
            let pw = crate::founder::random_secret();
            db::add_member(&c, &name, &pw)
                .await
                .map_err(anyhow::Error::msg)?;
            let t = db::Target::parse(&url).map_err(anyhow::Error::msg)?;
            let member_url = member_url(&t.shown, &name);
            println!("member {name} added. Give them this once (it holds their password), to run:");
            println!(
                "  medulla team join '{}'",
                member_url.replacen("://", &format!("://{name}:{pw}@"), 1)
            );
            Ok(0)
        }),
        TeamCmd::Join { url } => join(&url, &home()),
        TeamCmd::Leave => leave(&home()),
        TeamCmd::Purge { url, store, slug } => runtime()?.block_on(async {
            let t = db::Target::parse(&url).map_err(anyhow::Error::msg)?;
            let mut c = db::connect_client(&t, &home())
                .await
                .map_err(anyhow::Error::msg)?;
            let n = db::purge(&mut c, &store, &slug)
                .await
                .map_err(anyhow::Error::msg)?;
            if n == 0 {
                println!("nothing in {store} wrote {slug}: nothing erased");
                return Ok(1);
            }
            println!("{n} act(s) of {slug} in {store} erased; every mirror erases its copy on its next pass");
            Ok(0)
        }),
        TeamCmd::Status { c } => {
            let client = Client::new(c.url.as_deref())?;
            let a = client.call("team_status", json!({}))?;
            print_or_error(&c, &a.body, a.ok(), status_lines)
        }
        TeamCmd::Share { c } => {
            let client = Client::new(c.url.as_deref())?;
            let a = client.call("team_share", json!({}))?;
            print_or_error(&c, &a.body, a.ok(), |b| {
                println!(
                    "shared {} with the team as {} ({}): {} claim(s) queued, {} kept here by the hygiene floor",
                    b["root"].as_str().unwrap_or(""),
                    b["key"].as_str().unwrap_or(""),
                    b["label"].as_str().unwrap_or(""),
                    b["queued"],
                    b["refused"]
                );
            })
        }
    }
}

/// The admin URL with the member as its user and no password.
fn member_url(admin_shown: &str, name: &str) -> String {
    match admin_shown.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
            format!("{scheme}://{host}")
        }
        None => admin_shown.replace("{name}", name),
    }
}

fn print_or_error(
    c: &ClientOpts,
    body: &Value,
    ok: bool,
    human: impl FnOnce(&Value),
) -> anyhow::Result<i32> {
    if c.json {
        println!("{}", serde_json::to_string_pretty(body)?);
    } else if ok {
        human(body);
    } else {
        super::print::error(body);
    }
    Ok(if ok { 0 } else { 1 })
}

fn status_lines(b: &Value) {
    println!(
        "team {} as {}: {}{}",
        b["url"].as_str().unwrap_or(""),
        b["member"].as_str().unwrap_or(""),
        b["status"].as_str().unwrap_or(""),
        b["error"]
            .as_str()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default()
    );
    println!(
        "queued {}, kept here by the floor {}, log not yet applied {}",
        b["queued"], b["refused"], b["lag"]
    );
    if let Some(m) = b["members"].as_array() {
        let names: Vec<&str> = m.iter().filter_map(Value::as_str).collect();
        println!("members: {}", names.join(", "));
    }
    if let Some(s) = b["shared"].as_array() {
        for x in s {
            println!(
                "shared: {} as {} ({})",
                x["root"].as_str().unwrap_or(""),
                x["key"].as_str().unwrap_or(""),
                x["label"].as_str().unwrap_or("")
            );
        }
    }
    for r in b["purge_requests"].as_array().into_iter().flatten() {
        println!(
            "purge requested by {}: {} in {} (admin: {})",
            r["member"].as_str().unwrap_or(""),
            r["slug"].as_str().unwrap_or(""),
            r["store"].as_str().unwrap_or(""),
            r["fix"].as_str().unwrap_or("")
        );
    }
    if let Some(cs) = b["conflicts"].as_array() {
        for r in cs {
            if r["conflict"].is_object() {
                println!(
                    "conflict: {} ({}) by {} vs {} by {}",
                    r["label"].as_str().unwrap_or(""),
                    r["tier"].as_str().unwrap_or(""),
                    r["member"].as_str().unwrap_or("?"),
                    r["conflict"]["with"].as_str().unwrap_or(""),
                    r["conflict"]["member"].as_str().unwrap_or("")
                );
            }
            for x in r["races"].as_array().into_iter().flatten() {
                println!(
                    "conflict: {} ({}): {} ({}) meant {}, superseded meanwhile",
                    r["label"].as_str().unwrap_or(""),
                    r["tier"].as_str().unwrap_or(""),
                    x["member"].as_str().unwrap_or(""),
                    x["act"].as_str().unwrap_or(""),
                    x["version"].as_str().unwrap_or("")
                );
            }
        }
    }
}

/// Write `[team] url` (no password) into config.toml and the password into the pgpass
/// file, then check the database answers and has its schema.
fn join(url: &str, home: &Path) -> anyhow::Result<i32> {
    let t = db::Target::parse(url).map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(home.join("team"))?;
    if let Some(pw) = db::password_of(url) {
        let line = db::pgpass_line(url, &pw).map_err(anyhow::Error::msg)?;
        let file = home.join("team").join("pgpass");
        write_private(&file, &line)?;
    }
    let cfg = home.join("config.toml");
    let text = std::fs::read_to_string(&cfg).unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML: fix it first", cfg.display()))?;
    let mut table = toml_edit::Table::new();
    table["url"] = toml_edit::value(t.shown.clone());
    doc["team"] = toml_edit::Item::Table(table);
    std::fs::write(&cfg, doc.to_string())?;
    let reached = runtime()?.block_on(async {
        let c = db::connect_client(&t, home).await?;
        db::schema_ready(&c).await
    });
    // A running owner joins now: no restart.
    let live = match super::restore::running_owner(home) {
        Some(owner) => {
            let a = Client::new(Some(&owner))?.call("team_join", json!({}))?;
            if !a.ok() {
                super::print::error(&a.body);
                return Ok(1);
            }
            true
        }
        None => false,
    };
    match reached {
        Ok(true) if live => {
            println!(
                "joined {} as {}: the running owner syncs now",
                t.shown, t.member
            );
            Ok(0)
        }
        Ok(true) => {
            println!(
                "joined {} as {}: the owner syncs from its next start",
                t.shown, t.member
            );
            Ok(0)
        }
        Ok(false) => bail!(
            "joined {} in config.toml, but the database has no medulla schema: a team admin runs `medulla team init URL`",
            t.shown
        ),
        Err(e) => {
            eprintln!("joined {} in config.toml, but: {e}. The owner keeps trying; writes queue meanwhile.", t.shown);
            Ok(1)
        }
    }
}

fn write_private(file: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    o.mode(0o600);
    let mut f = o
        .open(file)
        .with_context(|| format!("cannot write {}", file.display()))?;
    f.write_all(text.as_bytes())?;
    Ok(())
}

/// Leave the team: every shared store stops sharing (what it queued and never sent is
/// dropped: nothing more is queued or sent), then `[team]` and the pgpass go. A running
/// owner does the first part itself (`team_leave`); otherwise the stores are opened here.
fn leave(home: &Path) -> anyhow::Result<i32> {
    let team_dir = home.join("team");
    if let Some(owner) = super::restore::running_owner(home) {
        let a = Client::new(Some(&owner))?.call("team_leave", json!({}))?;
        if !a.ok() {
            super::print::error(&a.body);
            return Ok(1);
        }
        if a.body["dropped"].as_u64().unwrap_or(0) > 0 {
            println!(
                "{} act(s) that were never sent are dropped",
                a.body["dropped"]
            );
        }
        return forget_team(home);
    }
    let mut dirs = vec![team_dir.join("medulla")];
    dirs.extend(
        crate::team::shares::load(&team_dir)
            .into_iter()
            .map(|s| home.join("brains").join(s.fingerprint.as_str())),
    );
    for dir in dirs
        .iter()
        .filter(|d| d.join(brains::store::DB_FILE).exists())
    {
        let (mut store, _) = brains::Store::open(dir, brains::StoreOptions::default())
            .with_context(|| format!("cannot open {}", dir.display()))?;
        let dropped = store.stop_sharing()?;
        store.close()?;
        if dropped > 0 {
            println!(
                "{}: {dropped} act(s) that were never sent are dropped",
                dir.display()
            );
        }
    }
    let _ = std::fs::remove_file(team_dir.join("shares.json"));
    forget_team(home)
}

/// Take `[team]` out of config.toml and the pgpass away.
fn forget_team(home: &Path) -> anyhow::Result<i32> {
    let cfg = home.join("config.toml");
    let text = std::fs::read_to_string(&cfg).unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML: fix it first", cfg.display()))?;
    if doc.remove("team").is_none() {
        println!("this owner has joined no team");
        return Ok(0);
    }
    std::fs::write(&cfg, doc.to_string())?;
    let _ = std::fs::remove_file(home.join("team").join("pgpass"));
    println!(
        "left the team: nothing more is queued or sent; the mirrors stay in {} until you remove them",
        home.join("team").display()
    );
    Ok(0)
}
