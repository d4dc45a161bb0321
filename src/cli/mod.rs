//! The `medulla` command line. `serve` runs the owner; `bridge` is stdio MCP; `model`
//! fetches the embedding model; every other command is a client of the running owner over
//! HTTP, sending the working directory as the caller root and the owner's founder token,
//! which makes it the founder surface.
//!
//! - this file: the command-line grammar (clap) and [`run`];
//! - `client`: the HTTP client (owner discovery, headers, NDJSON progress);
//! - `commands`: what each client command sends and how its answer is printed;
//! - `model`: `medulla model fetch | status`;
//! - `owner`: `serve`, `stop`, `restart`, `hall`, and the logs' colour;
//! - `logs`: `medulla logs`, the owner's log read from the home;
//! - `restore`: `medulla restore`, which works on the files of a stopped home;
//! - `paths`: relative path arguments made absolute before they are sent;
//! - `values`: a letter's closed sets of values (classes, misdelivery kinds);
//! - `print`: human output, one module per family of answers.
//!
//! A verb's flags are its arguments' own type (`service::verbs::*::XxxArgs`, which
//! derives both `clap::Args` and `Deserialize`): the command line parses into the very
//! struct the owner deserializes, and sends it serialized. Only what the command line
//! takes differently is declared here (the words of a query or task, the kv subcommands,
//! a letter's fields).

mod client;
mod commands;
mod connect;
mod hint;
mod hook;
pub mod launcher;
mod logs;
mod model;
mod model_use;
mod nudge;
mod owner;
mod paths;
mod prime;
mod print;
mod restore;
mod service;
mod sync;
mod team;
mod values;

use clap::{Args, Parser, Subcommand};

pub use client::OwnerNotRunning;
use values::{Class, Kind};

use crate::service::verbs::{
    acts::ActsArgs, audit_log::AuditArgs, beat::NorthArgs, bootstrap::BootstrapArgs,
    delegate::DelegateArgs, export::ExportArgs, history::HistoryArgs, import::ImportArgs,
    learn::LearnArgs, memorize::MemorizeArgs, merge::MergeArgs, promote::PromoteArgs,
    purge::PurgeArgs, retire::RetireArgs, review::ReviewArgs, seek::SeekArgs, split::SplitArgs,
    tend::TendArgs, Tier, FOUNDER_AGENT as FOUNDER,
};

#[derive(Debug, Parser)]
#[command(
    name = "medulla",
    version = env!("MEDULLA_VERSION"),
    about = "A local memory owner for AI coding agents",
    long_about = "A local memory owner for AI coding agents: one brain per project, one shared \
medulla.\n\n`medulla serve` runs the owner. Every other command is a client of the running \
owner: the working directory is the caller root (it picks the brain), and the owner's \
founder token ($MEDULLA_HOME/founder.token) makes the command line the founder surface.",
    after_help = "With no owner running, a client command starts one (`medulla serve`, detached, its \
log in $MEDULLA_HOME/logs/) and waits until it answers; with MEDULLA_NO_AUTOSTART=1 or \
`autostart = false` in config.toml it says so, names `medulla serve`, and exits 2."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// How a client command reaches the owner and prints its answer.
#[derive(Debug, Clone, Default, Args)]
pub struct ClientOpts {
    /// The owner's URL [default: from $MEDULLA_HOME/owner.json, else http://127.0.0.1:1338]
    #[arg(long, global = true, env = "MEDULLA_URL", value_name = "URL")]
    pub url: Option<String>,
    /// Print the owner's JSON answer (pretty) instead of a summary
    #[arg(long, global = true)]
    pub json: bool,
}

const CREATED_HELP: &str = "Legacy files are `*.light.md` in DIR and DIR/.history/: a frontmatter of \
`Key: value` lines (Node, State, Created, Source-Agent, Origin-Brain, Strength, Supersedes, \
Evidence, Promoted-To, Origin-Claim, Promoted-By, Promotion-Reason), a blank line, then the text.\n\n\
`Created` is milliseconds since the epoch (1783159200000) or an ISO 8601 date or date-time: \
`2026-07-04`, `2026-07-04T10:00:00Z`, `2026-07-04T12:00:00+02:00` (no offset = UTC).\n\n\
Duplicates (versions the store already holds) are reported as already imported: re-running an \
import imports nothing new. An import that refuses every file it does not already hold exits 1.\n\n\
--from SOURCE reads another tool's memory where it keeps it (or at PATH): claude \
($CLAUDE_CONFIG_DIR or ~/.claude: projects/<project>/memory/), codex ($CODEX_HOME or ~/.codex: \
memories/), serena ($SERENA_HOME or ~/.serena: global memories, and each brain's \
.serena/memories/), basic-memory ($BASIC_MEMORY_CONFIG_DIR or ~/.basic-memory: config.json's \
projects), mcp-memory ($MEMORY_FILE_PATH: the server's memory.jsonl). Each entry becomes an \
observed claim by import:<source>, its file and lines as evidence: a project's into the brain \
of that project (a Claude Code project directory is matched by its name against every brain's \
root and checkouts), the person's (Claude's type: user, Codex's preferences, Serena's global \
memories) into the medulla; basic-memory notes and the MCP graph into the medulla unless \
--brain names a brain. A project with no brain is listed with the bootstrap that would take \
it. Unchanged entries are already there on a second run; a changed one supersedes its earlier \
import; one that says nearly what a claim already there says is not written (that claim is \
named); a secret is refused. The source is only read.";

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the owner (the long-running process that holds every brain)
    Serve(owner::ServeArgs),
    /// Stop the running owner and wait until it is gone
    Stop {
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Is an owner running, and how is it? (never starts one)
    Status {
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Restart the owner: drain, stop, start (from this binary), wait until it answers
    Restart {
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Show the owner's log ($MEDULLA_HOME/logs/owner.log)
    Logs(logs::LogsArgs),
    /// Open the Hall (the founder's web page) with a one-time ticket
    Hall {
        /// Print the URL only; do not open a browser
        #[arg(long)]
        no_open: bool,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// A stdio MCP server forwarding to the running owner (for stdio-only clients)
    Bridge {
        /// The owner's URL [default: from $MEDULLA_HOME/owner.json, else http://127.0.0.1:1338]
        #[arg(long, env = "MEDULLA_URL", value_name = "URL")]
        url: Option<String>,
    },
    /// List every brain on disk, warm or dormant, with the checkouts each serves
    Brains {
        #[command(subcommand)]
        cmd: Option<BrainsCmd>,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Create the brain for a project root
    Bootstrap {
        #[command(flatten)]
        args: BootstrapArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Write a claim into this project's brain (or, with --tier medulla, into the medulla)
    Memorize {
        #[command(flatten)]
        args: MemorizeArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Recall claims (default: this brain plus the medulla); each row leads with its slug
    Seek {
        /// What to look for (empty: the most recent claims)
        query: Vec<String>,
        #[command(flatten)]
        args: SeekArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Every version of a claim, oldest first
    History {
        #[command(flatten)]
        args: HistoryArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Grade a claim (its trust moves; `wrong` on a medulla claim demotes it)
    Learn {
        #[command(flatten)]
        args: LearnArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// What this brain and the medulla know about a task
    North {
        /// The task, in words
        task: Vec<String>,
        #[command(flatten)]
        args: NorthArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// A delegation packet to paste into a subagent's brief
    Delegate {
        /// The task the subagent is given
        task: Vec<String>,
        #[command(flatten)]
        args: DelegateArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Copy a project claim into the medulla, through the audit actor
    Promote {
        #[command(flatten)]
        args: PromoteArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Erase a claim and every version of it (a secret that got in); the act keeps no content
    Purge {
        #[command(flatten)]
        args: PurgeArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Take a claim out of recall with a reason (history keeps it; purge erases)
    Retire {
        #[command(flatten)]
        args: RetireArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Review what agents wrote: list the unreviewed, keep, retire, edit or merge (a person's acts)
    Review {
        #[command(flatten)]
        args: ReviewArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Keep a brain lean: join what says the same thing, list what disagrees (--apply to join)
    Tend {
        #[command(flatten)]
        args: TendArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Boot memory: a small key-value store per brain and for the medulla
    #[command(subcommand)]
    Kv(KvCmd),
    /// The medulla's audit log: promotions, doctrine births, demotions, etiquette flags
    Audit {
        #[command(flatten)]
        args: AuditArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// A store's act log, newest first, a page at a time
    Acts {
        #[command(flatten)]
        args: ActsArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// File a field report (a letter) into the spool
    Report(ReportArgs),
    /// The field-report mailbox
    #[command(subcommand)]
    Mailbox(MailboxCmd),
    /// Whether memory is delivered well: misdelivery per week, letters, stores
    Doctor {
        /// Also run the integrity check of every store (reads every page of every store
        /// file; quarantines a damaged one, releases a quarantined one found clean)
        #[arg(long)]
        deep: bool,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Import memory: a directory of legacy .light.md files, or another tool's (--from)
    #[command(after_long_help = CREATED_HELP)]
    Import {
        #[command(flatten)]
        args: ImportArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Write a brain's (or the medulla's) live claims as .light.md files
    #[command(after_long_help = "Files are written as DIR/<slug>.light.md (and \
DIR/.history/<slug>.<created>.light.md with --history), `Created` in milliseconds since the \
epoch, every provenance field included: importing them again is lossless.")]
    Export {
        #[command(flatten)]
        args: ExportArgs,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Write a consistent copy of every store, the spool and the config, while serving
    #[command(
        after_long_help = "Each store is copied from one read transaction of its own: \
writes go on meanwhile, and the copy holds every write acknowledged before it began. The \
backup is DIR/<time>/ (written as <time>.partial, renamed when complete) with a \
manifest.json of counts and sha256 hashes. Restore it with `medulla restore`."
    )]
    Backup {
        /// The directory to write the backup under [default: $MEDULLA_HOME/backups]
        dir: Option<std::path::PathBuf>,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Put a backup back (the owner stopped): the whole home, or one brain or the medulla
    #[command(
        after_long_help = "Every hash in the backup's manifest is checked, and every \
store copy opened and counted, before anything is touched. What is replaced is moved to \
$MEDULLA_HOME/replaced/<time>/, never deleted. Refused while an owner runs on the home: \
`medulla stop` first."
    )]
    Restore(restore::RestoreArgs),
    /// Keep the owner running as a user service (systemd user unit, launchd agent)
    #[command(subcommand)]
    Service(service::ServiceCmd),
    /// A team on PostgreSQL: init, add-member (admin), join, share, status, leave, purge
    #[command(subcommand)]
    Team(team::TeamCmd),
    /// The embedding model's files: fetch them, or see where they are
    #[command(subcommand)]
    Model(model::ModelCmd),
    /// Write medulla into an agent client's own configuration (merged with what is there),
    /// then check the connection
    #[command(
        after_long_help = "Project scope writes the project's file with the owner's URL and this \
project's root; user scope writes the user's file with the stdio bridge (`medulla bridge`), which \
routes by the directory the client runs in. The files: claude-code .mcp.json | ~/.claude.json; \
claude-desktop ~/.config/Claude/claude_desktop_config.json; codex .codex/config.toml | \
~/.codex/config.toml; cursor .cursor/mcp.json | ~/.cursor/mcp.json; vscode .vscode/mcp.json | \
~/.config/Code/User/mcp.json; gemini .gemini/settings.json | ~/.gemini/settings.json; windsurf \
~/.codeium/windsurf/mcp_config.json."
    )]
    Connect(connect::ConnectArgs),
    /// Take medulla out of an agent client's configuration (nothing else is touched)
    Disconnect(connect::DisconnectArgs),
    /// What an agent should know as a session opens here, for a session-start hook (always
    /// exits 0; prints nothing when no owner runs or no brain covers the directory)
    Prime(prime::PrimeArgs),
    /// The end-of-turn hook: asks the agent once per session to debrief what it learned,
    /// after real work that wrote nothing to this project's brain (always exits 0; never
    /// starts an owner)
    Nudge(nudge::NudgeArgs),
    /// The prompt and file hooks: what the brain knows about the prompt just submitted or
    /// the file just read or edited, added to the agent's context (always exits 0; never
    /// starts an owner)
    Hint(hint::HintArgs),
    /// Write durable memory into this repository's instruction files (AGENTS.md and the
    /// Cursor, Copilot and Windsurf rules), never over a person's edit
    Sync(sync::SyncArgs),
    /// Print a shell completion script
    #[command(
        after_help = "For example: medulla completions bash > ~/.local/share/bash-completion/completions/medulla"
    )]
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// The whole letter as a JSON object; the flags below fill fields of it
    #[arg(long, value_name = "JSON")]
    pub letter: Option<String>,
    /// What kind of letter
    #[arg(long, value_enum)]
    pub class: Option<Class>,
    /// The misdelivery kind (with --class memory_misdelivery)
    #[arg(long, value_enum)]
    pub kind: Option<Kind>,
    /// The repository it is about (a path, made absolute; or a registered repo's name)
    #[arg(long)]
    pub repo: Option<String>,
    /// What happened
    #[arg(long)]
    pub what: Option<String>,
    /// What should have happened
    #[arg(long)]
    pub expected: Option<String>,
    /// The ids of the letters this one answers (repeat for several)
    #[arg(long = "answers", value_name = "ID")]
    pub answers: Vec<String>,
    /// Who reports (vendor:role)
    #[arg(long, default_value = FOUNDER)]
    pub agent: String,
    #[command(flatten)]
    pub c: ClientOpts,
}

#[derive(Debug, Subcommand)]
enum MailboxCmd {
    /// One box: this project's, another brain's, or `medulla`
    Show {
        /// Whose box: a brain's root or fingerprint, or `medulla` [default: the working directory]
        #[arg(long, value_name = "ROOT|medulla")]
        brain: Option<String>,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Every letter once (the spool and every known box), with fates
    Sweep {
        #[command(flatten)]
        c: ClientOpts,
    },
    /// File pending letters now instead of waiting for the watcher
    Distribute {
        #[command(flatten)]
        c: ClientOpts,
    },
}

#[derive(Debug, Subcommand)]
enum BrainsCmd {
    /// Merge brain FROM into brain INTO (two brains of one repository): every version
    /// kept, FROM never routed to again (the founder's only)
    Merge {
        #[command(flatten)]
        args: MergeArgs,
    },
    /// Give each other project a brain served before projects sharing history were told
    /// apart a brain of its own, its claims with it (the founder's only; `doctor` lists them)
    Split {
        #[command(flatten)]
        args: SplitArgs,
    },
}

#[derive(Debug, Subcommand)]
enum KvCmd {
    /// A key's value (this brain's, else the medulla's)
    Get {
        /// The key
        key: String,
        /// Read only this store
        #[arg(long, value_enum)]
        tier: Option<Tier>,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Set a key (a recorded act)
    Set {
        /// The key
        key: String,
        /// The value
        value: String,
        /// The store written [default: this brain]
        #[arg(long, value_enum)]
        tier: Option<Tier>,
        /// Who writes (vendor:role)
        #[arg(long, default_value = FOUNDER)]
        agent: String,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Every key of both stores, labelled by tier
    List {
        /// List only this store
        #[arg(long, value_enum)]
        tier: Option<Tier>,
        #[command(flatten)]
        c: ClientOpts,
    },
    /// Delete a key (a recorded act)
    Delete {
        /// The key
        key: String,
        /// The store written [default: this brain]
        #[arg(long, value_enum)]
        tier: Option<Tier>,
        /// Who deletes (vendor:role)
        #[arg(long, default_value = FOUNDER)]
        agent: String,
        #[command(flatten)]
        c: ClientOpts,
    },
}

impl Command {
    /// The client options of a command that talks to the owner.
    fn client_opts(&self) -> Option<&ClientOpts> {
        use Command as C;
        Some(match self {
            C::Serve(_)
            | C::Bridge { .. }
            | C::Completions { .. }
            | C::Model(_)
            | C::Prime(_)
            | C::Nudge(_)
            | C::Hint(_)
            | C::Sync(_)
            | C::Restore(_)
            | C::Logs(_)
            | C::Service(_)
            | C::Team(_) => return None,
            C::Connect(a) => &a.c,
            C::Disconnect(a) => &a.c,
            C::Stop { c }
            | C::Status { c }
            | C::Restart { c }
            | C::Hall { c, .. }
            | C::Brains { c, .. }
            | C::Bootstrap { c, .. }
            | C::Memorize { c, .. }
            | C::Seek { c, .. }
            | C::History { c, .. }
            | C::Learn { c, .. }
            | C::North { c, .. }
            | C::Delegate { c, .. }
            | C::Promote { c, .. }
            | C::Purge { c, .. }
            | C::Retire { c, .. }
            | C::Review { c, .. }
            | C::Tend { c, .. }
            | C::Audit { c, .. }
            | C::Acts { c, .. }
            | C::Import { c, .. }
            | C::Export { c, .. }
            | C::Doctor { c, .. }
            | C::Backup { c, .. } => c,
            C::Report(a) => &a.c,
            C::Kv(
                KvCmd::Get { c, .. }
                | KvCmd::Set { c, .. }
                | KvCmd::List { c, .. }
                | KvCmd::Delete { c, .. },
            ) => c,
            C::Mailbox(
                MailboxCmd::Show { c, .. } | MailboxCmd::Sweep { c } | MailboxCmd::Distribute { c },
            ) => c,
        })
    }
}

/// Run a command; the exit code on success (0 done, 1 the owner refused, 2 no owner).
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    let opts = cli.command.client_opts().cloned();
    match cli.command {
        Command::Serve(args) => owner::serve(args),
        Command::Bridge { url } => owner::bridge(url),
        Command::Logs(a) => logs::logs(a),
        Command::Model(cmd) => model::run(cmd),
        Command::Prime(a) => Ok(prime::prime(a)),
        Command::Nudge(a) => Ok(nudge::nudge(a)),
        Command::Hint(a) => Ok(hint::hint(a)),
        Command::Sync(a) => sync::sync(a),
        Command::Connect(a) => connect::connect(a),
        Command::Disconnect(a) => connect::disconnect(a),
        Command::Restore(args) => restore::run(args),
        Command::Service(cmd) => service::run(cmd),
        Command::Team(cmd) => team::run(cmd),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "medulla",
                &mut std::io::stdout(),
            );
            Ok(0)
        }
        command => {
            let opts = opts.unwrap_or_default();
            let result = commands::execute(&opts, command);
            let Some(e) = result
                .as_ref()
                .err()
                .and_then(|e| e.downcast_ref::<OwnerNotRunning>())
            else {
                return result;
            };
            if opts.json {
                print::out!("{}", serde_json::to_string_pretty(&e.to_json())?);
            } else {
                print::note!("medulla: {e}");
            }
            Ok(2)
        }
    }
}

#[cfg(test)]
mod tests;
