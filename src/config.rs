//! Owner settings: `$MEDULLA_HOME`, the listen address, timeouts and aging thresholds,
//! read from `$MEDULLA_HOME/config.toml` when present and overridden by flags.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use brains::Aging;
use serde::Deserialize;

/// Default address of the owner.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:1338";

/// Everything the owner needs to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub home: PathBuf,
    pub listen: SocketAddr,
    /// Allow a non-loopback listen address (off unless explicitly asked for).
    pub allow_remote: bool,
    /// Unload a brain after this long without a request.
    pub idle_unload: Duration,
    /// Most brains kept loaded at once; past it the least recently used is unloaded.
    pub max_warm_brains: usize,
    /// How long a caller waits for a brain actor before a 504.
    pub call_timeout: Duration,
    /// The medulla part of a beat (north, delegate) must answer within this, or the
    /// beat arrives without it (fail-open).
    pub medulla_budget: Duration,
    /// The distributor's safety-net rescan of the spool (besides file watching).
    pub mailbox_rescan: Duration,
    /// Largest accepted request body.
    pub max_body_bytes: usize,
    pub aging: Aging,
    /// Where the embedding model lives; `None` = the default cache location.
    pub model_dir: Option<PathBuf>,
    /// Run lexical-only even when a model is present.
    pub no_model: bool,
    /// What a project write carrying a secret gets: refused (default) or accepted and
    /// flagged. Shared and committable text (the medulla, boxes, exports) is always refused.
    pub project_secrets: SecretPolicy,
    /// Most MCP sessions held at once; past it the least recently used is closed.
    pub max_sessions: usize,
    /// An MCP session unused this long is closed (its client starts a new one).
    pub session_idle: Duration,
    /// A request body must arrive within this, else 408.
    pub body_timeout: Duration,
    /// `$MEDULLA_HOME` canonicalised, for the checks that keep writes out of it.
    pub canonical_home: PathBuf,
    /// The user's home directory (never a brain root), canonicalised when it exists.
    pub user_home: Option<PathBuf>,
    /// How often the owner writes a scheduled backup into `$MEDULLA_HOME/backups/`;
    /// `None` when `backup_every_secs = 0` (off).
    pub backup_every: Option<Duration>,
    /// How often every brain and the medulla are tended (joins made, the review list
    /// refreshed); `None` when `tend_every_secs = 0` (off).
    pub tend_every: Option<Duration>,
    /// How many backups the schedule keeps in `$MEDULLA_HOME/backups/`.
    pub backup_keep: usize,
    /// Test only: read "now" from this file (ms since the epoch) instead of the system.
    pub clock_file: Option<PathBuf>,
    /// The team this owner joined (`[team]` in `config.toml`, SPEC §13); `None` = none.
    pub team: Option<TeamConfig>,
    /// Ask the kernel which user owns each connection's other end and serve only our own
    /// (SPEC §15, on by default). `peer_check = false` asks every caller for the client
    /// token instead, as on systems where the kernel cannot say (and in tests).
    pub peer_check: bool,
    /// Hints at the point of use (SPEC §5): the prompt and file hooks.
    pub hints: HintsConfig,
}

/// The prompt and file hooks' settings (`hints`, `hint_claims`, `hint_budget_chars`,
/// `hint_session_tokens`, `hint_session_idle_secs` in `config.toml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HintsConfig {
    /// `hints = false` turns both hooks off (the hook prints nothing; the owner answers
    /// nothing).
    pub on: bool,
    /// Most claims one hint adds.
    pub claims: usize,
    /// Most characters one hint adds (its claims' lines; the heading and the line that
    /// says how many more matched come on top).
    pub budget_chars: usize,
    /// Most tokens (estimated) medulla adds to one client session, its session-start
    /// digest and its hints together; past them a hint says only how many claims matched
    /// and the `seek` that shows them. 0: no cap.
    pub session_tokens: u64,
    /// A client session unused this long is forgotten: its claims may be added again.
    pub session_idle: Duration,
}

impl Default for HintsConfig {
    fn default() -> Self {
        HintsConfig {
            on: true,
            claims: 3,
            budget_chars: 1500,
            session_tokens: 6000,
            session_idle: Duration::from_secs(4 * 3600),
        }
    }
}

/// A joined team: its database and how often the mirrors poll behind LISTEN/NOTIFY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamConfig {
    /// The database URL, without a password (that lives in the pgpass file, the
    /// environment, or nowhere).
    pub url: String,
    /// The periodic poll behind the notifications.
    pub poll: Duration,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TeamFile {
    url: String,
    poll_ms: Option<u64>,
}

/// What a project write carrying a secret gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SecretPolicy {
    #[default]
    Refuse,
    Flag,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: Option<String>,
    /// Read by clients (the launch module's `autostart_off`), not the owner: accepted here so
    /// the owner does not refuse the key.
    #[allow(dead_code)]
    autostart: Option<bool>,
    /// Read by `medulla nudge` (the launch module's `nudge_off`), not the owner.
    #[allow(dead_code)]
    nudge: Option<bool>,
    allow_remote: Option<bool>,
    idle_unload_secs: Option<u64>,
    max_warm_brains: Option<usize>,
    call_timeout_ms: Option<u64>,
    medulla_budget_ms: Option<u64>,
    mailbox_rescan_secs: Option<u64>,
    max_body_bytes: Option<usize>,
    stale_after_days: Option<u64>,
    half_life_hours: Option<u64>,
    model_dir: Option<PathBuf>,
    no_model: Option<bool>,
    project_secrets: Option<SecretPolicy>,
    max_sessions: Option<usize>,
    session_idle_secs: Option<u64>,
    body_timeout_ms: Option<u64>,
    backup_every_secs: Option<u64>,
    backup_keep: Option<usize>,
    tend_every_secs: Option<u64>,
    clock_file: Option<PathBuf>,
    team: Option<TeamFile>,
    peer_check: Option<bool>,
    hints: Option<bool>,
    hint_claims: Option<usize>,
    hint_budget_chars: Option<usize>,
    hint_session_tokens: Option<u64>,
    hint_session_idle_secs: Option<u64>,
}

/// A TOML error as line, column and message, never quoting the file's bytes.
pub fn toml_problem(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
            format!("line {line}, column {col}: {}", e.message().trim())
        }
        None => e.message().trim().to_string(),
    }
}

/// `$MEDULLA_HOME`, else `~/.medulla`.
pub fn default_home() -> PathBuf {
    if let Some(h) = std::env::var_os("MEDULLA_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".medulla")
}

impl Config {
    /// Load `config.toml` from `home` (absent file = defaults).
    pub fn load(home: &Path) -> anyhow::Result<Config> {
        let path = home.join("config.toml");
        let file: FileConfig = match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text).map_err(|e| {
                anyhow::anyhow!(
                    "{} is not valid ({}): fix or remove it",
                    path.display(),
                    toml_problem(&text, &e)
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => FileConfig::default(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let listen = file.listen.as_deref().unwrap_or(DEFAULT_LISTEN);
        let listen: SocketAddr = listen.parse().with_context(|| {
            format!(
                "listen address {listen:?} in {} is not ip:port",
                path.display()
            )
        })?;
        let mut aging = Aging::default();
        if let Some(d) = file.stale_after_days {
            aging.stale_after_ms = (d * 24 * 3600 * 1000) as i64;
        }
        if let Some(h) = file.half_life_hours {
            aging.half_life_ms = (h * 3600 * 1000) as i64;
        }
        Ok(Config {
            home: home.to_path_buf(),
            listen,
            allow_remote: file.allow_remote.unwrap_or(false),
            idle_unload: Duration::from_secs(file.idle_unload_secs.unwrap_or(15 * 60)),
            max_warm_brains: file.max_warm_brains.unwrap_or(32).max(1),
            call_timeout: Duration::from_millis(file.call_timeout_ms.unwrap_or(30_000)),
            medulla_budget: Duration::from_millis(file.medulla_budget_ms.unwrap_or(1000)),
            mailbox_rescan: Duration::from_secs(file.mailbox_rescan_secs.unwrap_or(10)),
            max_body_bytes: file.max_body_bytes.unwrap_or(1024 * 1024),
            aging,
            model_dir: file.model_dir,
            no_model: file.no_model.unwrap_or(false),
            project_secrets: file.project_secrets.unwrap_or_default(),
            max_sessions: file.max_sessions.unwrap_or(256).max(1),
            session_idle: Duration::from_secs(file.session_idle_secs.unwrap_or(30 * 60)),
            body_timeout: Duration::from_millis(file.body_timeout_ms.unwrap_or(10_000)),
            backup_every: Some(file.backup_every_secs.unwrap_or(24 * 3600))
                .filter(|s| *s > 0)
                .map(Duration::from_secs),
            backup_keep: file.backup_keep.unwrap_or(7).max(1),
            tend_every: Some(file.tend_every_secs.unwrap_or(24 * 3600))
                .filter(|s| *s > 0)
                .map(Duration::from_secs),
            canonical_home: std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf()),
            clock_file: file.clock_file,
            team: file.team.map(|t| TeamConfig {
                url: t.url,
                poll: Duration::from_millis(t.poll_ms.unwrap_or(1000).max(50)),
            }),
            peer_check: file.peer_check.unwrap_or(true),
            hints: {
                let d = HintsConfig::default();
                HintsConfig {
                    on: file.hints.unwrap_or(d.on),
                    claims: file.hint_claims.unwrap_or(d.claims).clamp(1, 20),
                    budget_chars: file
                        .hint_budget_chars
                        .unwrap_or(d.budget_chars)
                        .clamp(200, 20_000),
                    session_tokens: file.hint_session_tokens.unwrap_or(d.session_tokens),
                    session_idle: file
                        .hint_session_idle_secs
                        .map_or(d.session_idle, Duration::from_secs),
                }
            },
            user_home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| std::fs::canonicalize(&h).unwrap_or_else(|_| PathBuf::from(h))),
        })
    }

    /// Refuse a listen address off loopback unless explicitly allowed.
    pub fn check_listen(&self) -> anyhow::Result<()> {
        if !self.listen.ip().is_loopback() && !self.allow_remote {
            bail!(
                "refusing to listen on {} (not loopback): medulla serves one machine's memory; pass --allow-remote if you really mean it",
                self.listen
            );
        }
        Ok(())
    }

    pub fn brains_dir(&self) -> PathBuf {
        self.home.join("brains")
    }
    pub fn medulla_dir(&self) -> PathBuf {
        self.home.join("medulla")
    }
    /// The team's files: the team medulla's mirror, the shared brains' list, the pgpass.
    pub fn team_dir(&self) -> PathBuf {
        self.home.join("team")
    }
    pub fn owner_file(&self) -> PathBuf {
        self.home.join("owner.json")
    }
}
