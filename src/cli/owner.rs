//! The owner's life from the command line: `serve` (and its logs), `bridge`, `stop`, and
//! `hall`, which opens the founder's web page with a one-time ticket.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::client::{Client, OwnerNotRunning};
use super::print::{self, note, out, paint, GREEN};
use super::ClientOpts;
use crate::config::{default_home, Config};
use crate::http::rest::{HallTicket, Stopping};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where stores live [default: $MEDULLA_HOME, else ~/.medulla]
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:1338; port 0 picks a free one]
    #[arg(long, value_name = "IP:PORT")]
    pub listen: Option<String>,
    /// Allow a listen address that is not loopback (medulla has no authentication)
    #[arg(long)]
    pub allow_remote: bool,
    /// Run lexical-only even if an embedding model is present
    #[arg(long)]
    pub no_model: bool,
    /// Directory of the embedding model files
    #[arg(long, env = "MEDULLA_MODEL_DIR", value_name = "DIR")]
    pub model_dir: Option<PathBuf>,
    /// Budget of the medulla part of a beat, in ms (fail-open past it)
    #[arg(long, value_name = "MS")]
    pub medulla_budget_ms: Option<u64>,
    /// Unload a brain after this many idle seconds
    #[arg(long, value_name = "SECS")]
    pub idle_unload_secs: Option<u64>,
}

/// Logs go to stderr, in colour only when stderr is a terminal (and `NO_COLOR` is unset). By default the owner's
/// own start-up lines (`medulla::serve` at info) are left out: the first stdout lines
/// already say where it listens and why recall is lexical-only, and saying it twice is
/// noise. `MEDULLA_LOG` overrides all of it.
fn init_logs(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MEDULLA_LOG")
        .unwrap_or_else(|_| default.into());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .init();
}

pub fn serve(args: ServeArgs) -> anyhow::Result<i32> {
    let home = match args.home {
        Some(h) => super::paths::absolute(&h)?,
        None => default_home(),
    };
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
    init_logs("medulla=info,medulla::serve=warn,warn");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(crate::serve::run(cfg))?;
    note!("medulla: the owner stopped; every store is closed");
    Ok(0)
}

pub fn bridge(url: Option<&str>) -> anyhow::Result<i32> {
    init_logs("warn");
    crate::bridge::main(super::client::owner_url(url))
}

/// How long `stop` waits for the owner to be gone: 100 polls, 100 ms apart.
const STOP_POLLS: u32 = 100;
const STOP_POLL_EVERY: Duration = Duration::from_millis(100);

/// `medulla stop`: ask the owner to stop (founder only), then wait until it no longer
/// answers.
pub fn stop(c: &Client, opts: &ClientOpts) -> anyhow::Result<i32> {
    let a = c.post("/api/shutdown", serde_json::Value::Null)?;
    if !a.ok() {
        if opts.json {
            out!("{}", serde_json::to_string_pretty(&a.body)?);
        } else {
            print::error(&a.body);
        }
        return Ok(1);
    }
    let pid = super::commands::read::<Stopping>(&a.body, "stop")?.pid;
    for _ in 0..STOP_POLLS {
        match c.get("/api/health") {
            Err(e) if e.downcast_ref::<OwnerNotRunning>().is_some() => {
                if opts.json {
                    let mut body = a.body.clone();
                    body["stopped"] = true.into();
                    out!("{}", serde_json::to_string_pretty(&body)?);
                } else {
                    out!(
                        "{} the owner (pid {pid}) at {}",
                        paint(GREEN, "stopped"),
                        c.base
                    );
                }
                return Ok(0);
            }
            _ => std::thread::sleep(STOP_POLL_EVERY),
        }
    }
    let waited = STOP_POLL_EVERY * STOP_POLLS;
    if opts.json {
        let mut body = a.body.clone();
        body["stopped"] = false.into();
        out!("{}", serde_json::to_string_pretty(&body)?);
    } else {
        note!(
            "medulla: the owner (pid {pid}) is still answering after {}s: it is finishing in-flight requests; check again with `medulla status`",
            waited.as_secs()
        );
    }
    Ok(1)
}

/// `medulla hall`: a one-time ticket, its URL printed, and a browser opened when one is
/// at hand (never failing the command when none is).
pub fn hall(c: &Client, opts: &ClientOpts, no_open: bool) -> anyhow::Result<i32> {
    let a = c.post("/api/hall/ticket", serde_json::Value::Null)?;
    if opts.json || !a.ok() {
        if opts.json {
            out!("{}", serde_json::to_string_pretty(&a.body)?);
        } else {
            print::error(&a.body);
        }
        return Ok(if a.ok() { 0 } else { 1 });
    }
    let t = super::commands::read::<HallTicket>(&a.body, "a Hall ticket")?;
    let (url, secs) = (t.url.as_str(), t.expires_in_secs);
    // The URL alone on its line: it is copied whole, never wrapped or cut.
    out!(
        "the Hall, with a one-time ticket valid for {} minutes:",
        secs.div_ceil(60)
    );
    out!("{url}");
    if !no_open && open_browser(url) {
        out!("opened in your browser");
    }
    Ok(0)
}

/// Spawn the platform's opener, detached; false when there is none or no display.
fn open_browser(url: &str) -> bool {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        let display = ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()));
        if !display {
            return false;
        }
        "xdg-open"
    };
    Command::new(opener)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .is_ok()
}
