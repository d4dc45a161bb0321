//! The `medulla` command line. Every command but `serve` is a client of the running
//! owner over HTTP; the caller root is the working directory.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context};
use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};

use crate::config::{default_home, Config};

#[derive(Debug, Parser)]
#[command(
    name = "medulla",
    version,
    about = "A local memory owner for AI coding agents"
)]
pub struct Cli {
    /// The owner's URL (default: from $MEDULLA_HOME/owner.json, else http://127.0.0.1:1338).
    #[arg(long, global = true, env = "MEDULLA_URL")]
    pub url: Option<String>,
    /// Print the owner's JSON answer instead of a summary.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the owner (the long-running process that holds every brain).
    Serve(ServeArgs),
    /// Is an owner running, and how is it?
    Status,
    /// A stdio MCP server forwarding to the running owner (for stdio-only clients).
    Bridge,
    /// List every brain on disk, warm or dormant.
    Brains,
    /// Create the brain for a project root (default: the working directory).
    Bootstrap { path: Option<PathBuf> },
    /// Write a claim into this project's brain.
    Memorize {
        #[arg(long)]
        label: String,
        #[arg(long)]
        text: String,
        /// hint, observed (default) or verified.
        #[arg(long)]
        strength: Option<String>,
        #[arg(long = "evidence")]
        evidence: Vec<String>,
        /// Who writes (vendor:role).
        #[arg(long, default_value = "human:founder")]
        agent: String,
    },
    /// Recall claims (default: this brain plus the medulla).
    Seek {
        query: Vec<String>,
        /// project, medulla or all-brains.
        #[arg(long)]
        tier: Option<String>,
        #[arg(long)]
        scope: Option<String>,
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Every version of a claim.
    History {
        slug: String,
        #[arg(long)]
        tier: Option<String>,
    },
    /// Copy a project claim into the medulla, through the audit actor.
    Promote {
        /// The source brain's root (or fingerprint).
        #[arg(long)]
        brain: String,
        /// The claim's slug in that brain.
        #[arg(long)]
        claim: String,
        /// Why it holds beyond its project, in one line.
        #[arg(long)]
        reason: String,
        #[arg(long, default_value = "human:founder")]
        agent: String,
    },
    /// The medulla's audit log: promotions, doctrine births, demotions, etiquette flags.
    Audit {
        #[arg(long)]
        brain: Option<String>,
        #[arg(long)]
        agent: Option<String>,
        #[arg(long)]
        limit: Option<usize>,
    },
    /// What this brain and the medulla know about a task.
    North { task: Vec<String> },
    /// A delegation packet for a subagent (printed as text; --json for the packet).
    Delegate {
        task: Vec<String>,
        #[arg(long)]
        child_agent: Option<String>,
    },
    /// File a field report (a letter) into the spool.
    Report {
        /// The whole letter as a JSON object; the flags below fill fields of it.
        #[arg(long)]
        letter: Option<String>,
        #[arg(long)]
        class: Option<String>,
        #[arg(long)]
        kind: Option<String>,
        #[arg(long)]
        repo: Option<String>,
        #[arg(long)]
        what: Option<String>,
        #[arg(long, default_value = "human:founder")]
        agent: String,
    },
    /// The field-report mailbox.
    #[command(subcommand)]
    Mailbox(MailboxCmd),
    /// Counts that tell whether memory is being delivered well, per ISO week.
    Doctor,
    /// Import a directory of legacy .light.md files into a brain or the medulla.
    Import {
        dir: PathBuf,
        #[arg(long, conflicts_with = "medulla")]
        brain: Option<String>,
        #[arg(long)]
        medulla: bool,
        #[arg(long)]
        dry_run: bool,
        /// Triage a mixed legacy store by the rules in this TOML file (see docs/OPERATIONS.md).
        #[arg(long, conflicts_with_all = ["brain", "medulla"])]
        triage: Option<PathBuf>,
    },
    /// Write a brain's (or the medulla's) claims as .light.md files.
    Export {
        dir: PathBuf,
        #[arg(long, conflicts_with = "medulla")]
        brain: Option<String>,
        #[arg(long)]
        medulla: bool,
        /// Also write outdated versions under .history/.
        #[arg(long)]
        history: bool,
    },
    /// Erase a claim and every version of it (for a secret that got in); the act that
    /// records it keeps no content.
    Purge {
        /// The claim's slug (a label is accepted).
        slug: String,
        /// project (default: this brain) or medulla.
        #[arg(long)]
        tier: Option<String>,
        #[arg(long, default_value = "human:founder")]
        agent: String,
    },
    /// Grade a claim: correct, partial or wrong.
    Learn {
        slug: String,
        verdict: String,
        #[arg(long)]
        note: Option<String>,
        #[arg(long, default_value = "human:founder")]
        agent: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum MailboxCmd {
    /// Every letter once (spool and every known box), with fates.
    Sweep,
    /// One box: this project's (default), another brain's, or `medulla`.
    Show {
        #[arg(long)]
        brain: Option<String>,
    },
    /// File pending letters now instead of waiting for the watcher.
    Distribute,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where stores live (default: $MEDULLA_HOME, else ~/.medulla).
    #[arg(long)]
    pub home: Option<PathBuf>,
    /// Address to listen on (default 127.0.0.1:1338; port 0 picks a free one).
    #[arg(long)]
    pub listen: Option<String>,
    /// Allow a listen address that is not loopback.
    #[arg(long)]
    pub allow_remote: bool,
    /// Run lexical-only even if an embedding model is present.
    #[arg(long)]
    pub no_model: bool,
    /// Directory of the embedding model files.
    #[arg(long, env = "MEDULLA_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
    /// Budget of the medulla part of a beat, in ms (fail-open past it).
    #[arg(long)]
    pub medulla_budget_ms: Option<u64>,
    /// Unload a brain after this many idle seconds.
    #[arg(long)]
    pub idle_unload_secs: Option<u64>,
}

/// Run a command; the exit code on success.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    if let Command::Serve(args) = cli.command {
        return serve(args);
    }
    if let Command::Bridge = cli.command {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter("warn")
            .init();
        return crate::bridge::main(owner_url(cli.url.clone()));
    }
    let client = Client::new(cli.url.clone())?;
    let out = match &cli.command {
        Command::Serve(_) | Command::Bridge => unreachable!("handled above"),
        Command::Status => client.get("/api/health")?,
        Command::Brains => client.get("/api/instances")?,
        Command::Bootstrap { path } => {
            let root = match path {
                Some(p) => std::fs::canonicalize(p).with_context(|| format!("{} does not exist", p.display()))?,
                None => std::env::current_dir()?,
            };
            client.call("bootstrap", json!({ "root": root.to_string_lossy() }))?
        }
        Command::Memorize { label, text, strength, evidence, agent } => client.call(
            "memorize",
            json!({ "label": label, "text": text, "strength": strength, "evidence": evidence, "agent_id": agent }),
        )?,
        Command::Seek { query, tier, scope, limit } => {
            client.call("seek", json!({ "query": query.join(" "), "tier": tier, "scope": scope, "limit": limit }))?
        }
        Command::Promote { brain, claim, reason, agent } => {
            let brain = std::fs::canonicalize(brain).map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|_| brain.clone());
            client.send(
                client
                    .http
                    .post(format!("{}/api/promote", client.base))
                    .json(&json!({ "brain": brain, "claim": claim, "reason": reason, "agent_id": agent })),
            )?
        }
        Command::Audit { brain, agent, limit } => {
            client.call("audit", json!({ "brain": brain, "agent": agent, "limit": limit }))?
        }
        Command::North { task } => client.call("north", json!({ "task": task.join(" ") }))?,
        Command::Delegate { task, child_agent } => {
            client.call("delegate", json!({ "task": task.join(" "), "child_agent": child_agent }))?
        }
        Command::Report { letter, class, kind, repo, what, agent } => {
            let mut l: serde_json::Map<String, Value> = match letter {
                Some(t) => serde_json::from_str(t).context("--letter is not a JSON object")?,
                None => Default::default(),
            };
            for (k, v) in [("class", class), ("kind", kind), ("repo", repo), ("what", what)] {
                if let Some(v) = v {
                    l.insert(k.into(), json!(v));
                }
            }
            l.entry("agent").or_insert_with(|| json!(agent));
            client.send(client.http.post(format!("{}/api/reports", client.base)).json(&l))?
        }
        Command::Mailbox(MailboxCmd::Sweep) => client.get("/api/mailbox/sweep")?,
        Command::Mailbox(MailboxCmd::Distribute) => {
            client.send(client.http.post(format!("{}/api/mailbox/distribute", client.base)))?
        }
        Command::Mailbox(MailboxCmd::Show { brain }) => {
            let b = match brain {
                Some(b) => b.clone(),
                None => std::env::current_dir()?.to_string_lossy().into_owned(),
            };
            client.get(&format!("/api/mailbox?brain={}", encode(&b)))?
        }
        Command::Doctor => client.get("/api/doctor")?,
        Command::Import { dir, brain, medulla, dry_run, triage } => {
            let triage = triage.as_ref().map(std::fs::canonicalize).transpose().context("the rules file does not exist")?;
            let dir = std::fs::canonicalize(dir).with_context(|| format!("{} does not exist", dir.display()))?;
            let brain = brain.as_ref().map(|b| std::fs::canonicalize(b).map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|_| b.clone()));
            client.call("import", json!({ "dir": dir, "brain": brain, "medulla": medulla, "dry_run": dry_run, "triage": triage }))?
        }
        Command::Export { dir, brain, medulla, history } => {
            let dir = std::path::absolute(dir)?;
            let brain = brain.as_ref().map(|b| std::fs::canonicalize(b).map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|_| b.clone()));
            client.call("export", json!({ "dir": dir, "brain": brain, "medulla": medulla, "history": history }))?
        }
        Command::History { slug, tier } => client.call("history", json!({ "slug": slug, "tier": tier }))?,
        Command::Purge { slug, tier, agent } => {
            client.call("purge", json!({ "slug": slug, "tier": tier, "agent_id": agent }))?
        }
        Command::Learn { slug, verdict, note, agent } => {
            client.call("learn", json!({ "slug": slug, "verdict": verdict, "note": note, "agent_id": agent }))?
        }
    };
    let (status, body) = out;
    if cli.json {
        println!("{}", serde_json::to_string_pretty(&body)?);
    } else {
        print_human(&cli.command, status, &body);
    }
    Ok(if (200..300).contains(&status) { 0 } else { 1 })
}

fn serve(args: ServeArgs) -> anyhow::Result<i32> {
    let home = args.home.unwrap_or_else(default_home);
    std::fs::create_dir_all(&home).with_context(|| format!("cannot create {}", home.display()))?;
    let mut cfg = Config::load(&home)?;
    if let Some(l) = args.listen {
        cfg.listen = l
            .parse()
            .with_context(|| format!("--listen {l:?} is not ip:port"))?;
    }
    cfg.allow_remote |= args.allow_remote;
    cfg.no_model |= args.no_model;
    if args.model_dir.is_some() {
        cfg.model_dir = args.model_dir;
    }
    if let Some(ms) = args.medulla_budget_ms {
        cfg.medulla_budget = Duration::from_millis(ms);
    }
    if let Some(s) = args.idle_unload_secs {
        cfg.idle_unload = Duration::from_secs(s);
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MEDULLA_LOG")
                .unwrap_or_else(|_| "medulla=info,warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(crate::serve::run(cfg))?;
    Ok(0)
}

/// A blocking HTTP client of the owner.
struct Client {
    base: String,
    http: reqwest::Client,
    rt: tokio::runtime::Runtime,
}

fn owner_url(explicit: Option<String>) -> String {
    if let Some(u) = explicit {
        return u.trim_end_matches('/').to_string();
    }
    let file = default_home().join("owner.json");
    if let Ok(text) = std::fs::read_to_string(file) {
        if let Some(u) = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["url"].as_str().map(str::to_string))
        {
            return u;
        }
    }
    format!("http://{}", crate::config::DEFAULT_LISTEN)
}

impl Client {
    fn new(url: Option<String>) -> anyhow::Result<Client> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()?;
        Ok(Client {
            base: owner_url(url),
            http,
            rt,
        })
    }

    fn send(&self, req: reqwest::RequestBuilder) -> anyhow::Result<(u16, Value)> {
        let cwd = std::env::current_dir()?;
        let mut req = req.header("Medulla-Caller-Root", cwd.to_string_lossy().as_ref());
        // The command line is the founder's surface: it presents the owner's token.
        if let Some(t) = crate::founder::read(&default_home()) {
            req = req.header("Medulla-Founder-Token", t);
        }
        if let Ok(b) = std::env::var("MEDULLA_BRAIN") {
            req = req.header("Medulla-Brain", b);
        }
        self.rt.block_on(async {
            let resp = req.send().await.map_err(|e| {
                if e.is_connect() {
                    anyhow!(
                        "no medulla owner is running at {}: start one with `medulla serve` (or `cargo run --release -- serve`)",
                        self.base
                    )
                } else {
                    anyhow!("request to {} failed: {e}", self.base)
                }
            })?;
            let status = resp.status().as_u16();
            let body: Value = resp.json().await.context("the owner's answer was not JSON")?;
            Ok((status, body))
        })
    }

    fn get(&self, path: &str) -> anyhow::Result<(u16, Value)> {
        self.send(self.http.get(format!("{}{path}", self.base)))
    }

    fn call(&self, tool: &str, args: Value) -> anyhow::Result<(u16, Value)> {
        // Drop nulls so optional arguments stay absent.
        let args = match args {
            Value::Object(m) => {
                Value::Object(m.into_iter().filter(|(_, v)| !v.is_null()).collect())
            }
            v => v,
        };
        self.send(
            self.http
                .post(format!("{}/api/call/{tool}", self.base))
                .json(&args),
        )
    }
}

/// Percent-encode a query value.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn print_rows(rows: &[Value]) {
    for r in rows {
        let stale = if r["stale"].as_bool() == Some(true) {
            " stale"
        } else {
            ""
        };
        println!(
            "[{}] {} — {}\n    {} · {} · {}{}",
            r["tier"].as_str().unwrap_or("?"),
            r["label"].as_str().unwrap_or(""),
            r["text"].as_str().unwrap_or(""),
            r["origin_brain"].as_str().unwrap_or("unknown"),
            r["source_agent"].as_str().unwrap_or("?"),
            r["strength"].as_str().unwrap_or("?"),
            stale,
        );
        if let Some(chain) = r["promotion"]["chain"].as_str() {
            println!("    {chain}");
        }
    }
}

fn print_human(cmd: &Command, status: u16, body: &Value) {
    if let Some(err) = body.get("error") {
        eprintln!(
            "medulla: {} ({})",
            err["message"].as_str().unwrap_or("error"),
            err["code"].as_str().unwrap_or("error")
        );
        return;
    }
    if let Some(r) = body.get("reception") {
        eprintln!("reception: {}", r["message"].as_str().unwrap_or(""));
        if let Some(opts) = r["options"].as_array() {
            for o in opts {
                eprintln!("  fix: {}", o.as_str().unwrap_or(""));
            }
        }
    }
    match cmd {
        Command::Status => println!(
            "medulla {} is running (pid {}), home {}, retrieval {}, {} brains ({} warm)",
            body["version"].as_str().unwrap_or("?"),
            body["pid"],
            body["home"].as_str().unwrap_or("?"),
            body["retrieval"].as_str().unwrap_or("?"),
            body["brains_registered"],
            body["brains_warm"]
        ),
        Command::Brains => {
            for b in body["instances"].as_array().into_iter().flatten() {
                match b["root"].as_str() {
                    Some(root) => println!(
                        "{} {} {:>6} claims {}",
                        b["fingerprint"].as_str().unwrap_or(""),
                        if b["warm"].as_bool() == Some(true) {
                            "warm   "
                        } else {
                            "dormant"
                        },
                        b["claims"],
                        root
                    ),
                    None => println!(
                        "{} unreadable: {}",
                        b["fingerprint"].as_str().unwrap_or(""),
                        b["problem"]
                    ),
                }
            }
            println!("medulla: {} claims", body["medulla"]["claims"]);
        }
        Command::Bootstrap { .. } => println!(
            "{} brain {} for {}",
            if body["created"].as_bool() == Some(true) {
                "created"
            } else {
                "already had"
            },
            body["brain"]["fingerprint"].as_str().unwrap_or(""),
            body["brain"]["root"].as_str().unwrap_or("")
        ),
        Command::Memorize { .. } => {
            println!(
                "{}: {}",
                body["outcome"].as_str().unwrap_or("?"),
                body["claim"]["slug"].as_str().unwrap_or("")
            )
        }
        Command::Seek { .. } => {
            if let Some(groups) = body["groups"].as_array() {
                for g in groups {
                    println!("== {}", g["origin_brain"].as_str().unwrap_or("unknown"));
                    print_rows(g["results"].as_array().map(Vec::as_slice).unwrap_or(&[]));
                }
            } else {
                let rows = body["results"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                if rows.is_empty() {
                    println!(
                        "no claim matched (retrieval: {})",
                        body["retrieval"].as_str().unwrap_or("?")
                    );
                }
                print_rows(rows);
            }
        }
        Command::History { .. } => {
            for v in body["versions"].as_array().into_iter().flatten() {
                println!(
                    "v{} {} [{}] {} — {}",
                    v["version"],
                    v["state"].as_str().unwrap_or("?"),
                    v["tier"].as_str().unwrap_or("?"),
                    v["source_agent"].as_str().unwrap_or("?"),
                    v["text"].as_str().unwrap_or("")
                );
            }
        }
        Command::Learn { .. } => println!(
            "{} recorded; trust now {}",
            body["verdict"].as_str().unwrap_or("?"),
            body["claim"]["trust"]
        ),
        Command::Promote { .. } => {
            println!(
                "{}: {} → {}",
                body["outcome"].as_str().unwrap_or("?"),
                body["identities"]["witness"].as_str().unwrap_or(""),
                body["identities"]["medulla"].as_str().unwrap_or("")
            );
            if body["etiquette"]["expected"].as_bool() == Some(false) {
                println!(
                    "etiquette: {}",
                    body["etiquette"]["message"].as_str().unwrap_or("")
                );
            }
            println!(
                "medulla: {} live claims (soft cap {})",
                body["medulla_cap"]["live"], body["medulla_cap"]["soft_cap"]
            );
        }
        Command::Audit { .. } => {
            for e in body["entries"].as_array().into_iter().flatten() {
                println!(
                    "{} {} {} by {} from {}{}: {}",
                    crate::service::rows::date(e["at"].as_i64().unwrap_or(0)),
                    e["kind"].as_str().unwrap_or("?"),
                    e["slug"].as_str().unwrap_or(""),
                    e["agent"].as_str().unwrap_or("?"),
                    e["origin_brain"].as_str().unwrap_or("unknown"),
                    if e["flag"].is_string() {
                        " [etiquette breach]"
                    } else {
                        ""
                    },
                    e["reason"].as_str().unwrap_or("")
                );
            }
        }
        Command::North { .. } => {
            println!("{}", body["note"].as_str().unwrap_or(""));
            print_rows(body["project"].as_array().map(Vec::as_slice).unwrap_or(&[]));
            print_rows(body["medulla"].as_array().map(Vec::as_slice).unwrap_or(&[]));
            print_rows(
                body["recent_unmatched"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or(&[]),
            );
            if let Some(e) = body.get("medulla_error") {
                println!(
                    "medulla part failed: {}",
                    e["message"].as_str().unwrap_or("")
                );
            }
        }
        Command::Delegate { .. } => print!("{}", body["text"].as_str().unwrap_or("")),
        Command::Report { .. } => println!(
            "letter {} filed: {}",
            body["id"].as_str().unwrap_or("?"),
            body["filed"]
        ),
        Command::Mailbox(MailboxCmd::Show { .. }) | Command::Mailbox(MailboxCmd::Sweep) => {
            if let Some(s) = body["served_brain"].as_str() {
                println!("box of {s}");
            }
            for l in body["letters"].as_array().into_iter().flatten() {
                let mark = match l["state"].as_str() {
                    Some("wet_ink") => "●",
                    Some("in_flight") => "◍",
                    Some("fired_clay") => "↳",
                    Some("external") => "◌",
                    _ => "?",
                };
                println!(
                    "{mark} {} [{}] {} — {}",
                    l["id"].as_str().unwrap_or(""),
                    l["class"].as_str().unwrap_or("?"),
                    l["agent"].as_str().unwrap_or("?"),
                    l["what"].as_str().unwrap_or("")
                );
            }
            println!("open: {} ({})", body["counts"]["open"], body["counts"]);
            for u in body["unreachable"].as_array().into_iter().flatten() {
                println!(
                    "unreachable: {} ({})",
                    u["box"],
                    u["why"].as_str().unwrap_or("")
                );
            }
        }
        Command::Mailbox(MailboxCmd::Distribute) => {
            println!(
                "filed {}; pending {}; refused {}",
                body["filed"], body["pending"], body["refused"]
            )
        }
        Command::Import { .. } => {
            println!(
                "{}{} files seen = {} imported live + {} into history + {} refused{}",
                if body["dry_run"] == true {
                    "dry run: "
                } else {
                    ""
                },
                body["files_seen"],
                body["imported_live"],
                body["into_history"],
                body["refused"],
                if body["count_conserved"] == true {
                    ""
                } else {
                    "  (COUNTS DO NOT ADD UP)"
                }
            );
            for r in body["refusals"].as_array().into_iter().flatten() {
                println!(
                    "  refused {}: {} ({})",
                    r["file"].as_str().unwrap_or("?"),
                    r["reason"].as_str().unwrap_or("?"),
                    r["detail"].as_str().unwrap_or("")
                );
            }
            if let Some(by) = body["live_by_store"].as_object() {
                for (store, n) in by {
                    println!("  {n} live claims → {store}");
                }
            }
            for a in body["ambiguous_kept_in_medulla"]
                .as_array()
                .into_iter()
                .flatten()
            {
                println!(
                    "  ambiguous, kept in the medulla for you to triage: {} ({})",
                    a["slug"].as_str().unwrap_or("?"),
                    a["candidates"]
                );
            }
            if body["target"] == "triage" {
                println!(
                    "  count gate (baseline = project + medulla): {}",
                    body["count_gate"]
                );
            }
            if body["origin_unknown"].as_u64().unwrap_or(0) > 0 {
                println!(
                    "  {} versions had no Origin-Brain and are recorded as unknown",
                    body["origin_unknown"]
                );
            }
        }
        Command::Export { .. } => println!(
            "wrote {} claims and {} history versions into {}",
            body["live_files"],
            body["history_files"],
            body["dir"].as_str().unwrap_or("?")
        ),
        Command::Doctor => println!("{}", serde_json::to_string_pretty(body).unwrap_or_default()),
        Command::Purge { .. } => {
            println!(
                "purged {} versions ({} act notes scrubbed); the log records {}",
                body["purged"]["versions_erased"],
                body["purged"]["acts_scrubbed"],
                body["purged"]["subject"].as_str().unwrap_or("?")
            );
            if let Some(n) = body["note"].as_str() {
                println!("note: {n}");
            }
        }
        Command::Serve(_) | Command::Bridge => {}
    }
    let _ = status;
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn unreachable_owner_names_the_command_that_starts_one() {
        // Port 9 on loopback: nothing listens there in a test sandbox.
        let client = Client::new(Some("http://127.0.0.1:9".into())).unwrap();
        let err = client.get("/api/health").unwrap_err().to_string();
        assert!(err.contains("medulla serve"), "{err}");
    }
}
