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
    /// Started by a client that found no owner: leave the caller's session (no terminal)
    #[arg(long, hide = true)]
    pub detached: bool,
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

/// The owner's logs: to stderr as [`init_logs`] says (not when detached: nobody reads
/// it), and always to `$MEDULLA_HOME/logs/owner.log` at info, rotated by size, which
/// `medulla logs` reads. A panic is logged there too before it unwinds.
fn init_owner_logs(home: &std::path::Path, detached: bool) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{EnvFilter, Layer};
    let stderr = (!detached).then(|| {
        let filter = EnvFilter::try_from_env("MEDULLA_LOG")
            .unwrap_or_else(|_| "medulla=info,medulla::serve=warn,warn".into());
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
            .with_filter(filter)
    });
    let file = match crate::logfile::Rotating::open(home) {
        Ok(w) => Some(
            tracing_subscriber::fmt::layer()
                .with_writer(w)
                .with_ansi(false)
                .with_filter(EnvFilter::new("medulla=info,warn")),
        ),
        Err(e) => {
            eprintln!(
                "medulla: cannot open the log in {} ({e}); logging to stderr only",
                crate::logfile::dir(home).display()
            );
            None
        }
    };
    tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .init();
    let before = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        tracing::error!(target: "medulla::panic", "{info}");
        before(info);
    }));
}

pub fn serve(args: ServeArgs) -> anyhow::Result<i32> {
    // No transparent huge pages for the owner: the allocator madvises its arenas for
    // them, and the kernel then zeroes two megabytes at each first touch of memory it
    // gives back and takes again; a bulk import spent a fifth of its time there
    // (docs/BENCHMARKS.md, issue 67).
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    if args.detached {
        // Out of the caller's session and process group: its terminal closing, or a
        // Ctrl-C meant for the caller, never reaches the owner.
        #[cfg(unix)]
        let _ = rustix::process::setsid();
    }
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
    init_owner_logs(&home, args.detached);
    let keeper = crate::service::life::Keeper::of_this_process(args.detached);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    if let Err(e) = rt.block_on(crate::serve::run(cfg, keeper)) {
        tracing::error!("the owner stopped: {e:#}");
        return Err(e);
    }
    note!("medulla: the owner stopped; every store is closed");
    Ok(0)
}

pub fn bridge(url: Option<String>) -> anyhow::Result<i32> {
    init_logs("warn");
    crate::bridge::main(default_home(), url)
}

/// How long `stop` waits for the owner to be gone: 100 polls, 100 ms apart.
const STOP_POLLS: u32 = 100;
const STOP_POLL_EVERY: Duration = Duration::from_millis(100);

/// Ask the owner to stop (founder only): what it answered, or the refusal as it came.
fn ask_to_stop(
    c: &Client,
) -> anyhow::Result<Result<(Stopping, serde_json::Value), super::client::Answer>> {
    let a = c.post("/api/shutdown", serde_json::Value::Null)?;
    if !a.ok() {
        return Ok(Err(a));
    }
    let stopping = super::client::read::<Stopping>(&a.body, "stop")?;
    Ok(Ok((stopping, a.body)))
}

/// Wait until the owner is gone: it no longer answers, and then no longer holds its
/// home's owner lock (it has closed every store); false when it is still there after
/// the wait.
fn wait_gone(c: &Client, s: &Stopping) -> bool {
    let deadline = std::time::Instant::now() + STOP_POLL_EVERY * STOP_POLLS;
    while std::time::Instant::now() < deadline {
        match c.get("/api/health") {
            Err(e) if e.downcast_ref::<OwnerNotRunning>().is_some() => break,
            _ => std::thread::sleep(STOP_POLL_EVERY),
        }
    }
    if s.home.is_empty() {
        return std::time::Instant::now() < deadline;
    }
    let home = std::path::Path::new(&s.home);
    while std::time::Instant::now() < deadline {
        if let Ok(Some(_free)) = crate::launch::hold_owner_lock(home) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn refused(opts: &ClientOpts, a: &super::client::Answer) -> anyhow::Result<i32> {
    if opts.json {
        out!("{}", serde_json::to_string_pretty(&a.body)?);
    } else {
        print::error(&a.body);
    }
    Ok(1)
}

/// `medulla stop`: ask the owner to stop (founder only), then wait until it no longer
/// answers.
pub fn stop(c: &Client, opts: &ClientOpts) -> anyhow::Result<i32> {
    let (stopping, mut body) = match ask_to_stop(c)? {
        Ok(p) => p,
        Err(a) => return refused(opts, &a),
    };
    let pid = stopping.pid;
    let gone = wait_gone(c, &stopping);
    if opts.json {
        body["stopped"] = gone.into();
        out!("{}", serde_json::to_string_pretty(&body)?);
    } else if gone {
        out!(
            "{} the owner (pid {pid}) at {}",
            paint(GREEN, "stopped"),
            c.base()
        );
    } else {
        note!(
            "medulla: the owner (pid {pid}) is still answering after {}s: it is finishing in-flight requests; check again with `medulla status`",
            (STOP_POLL_EVERY * STOP_POLLS).as_secs()
        );
    }
    Ok(if gone { 0 } else { 1 })
}

/// `medulla restart`: the owner drained and stopped (every acknowledged write is on disk
/// before it exits), then started again from this binary, and waited for. An owner kept
/// by a service manager is restarted by it, so it stays supervised.
pub fn restart(c: &Client, opts: &ClientOpts) -> anyhow::Result<i32> {
    use crate::service::life::Keeper;
    use crate::service::Health;
    let before = match c.get("/api/health") {
        Ok(a) if a.ok() => Some(super::client::read::<Health>(&a.body, "health")?),
        Ok(a) => return refused(opts, &a),
        Err(e) if e.downcast_ref::<OwnerNotRunning>().is_some() => None,
        Err(e) => return Err(e),
    };
    let home = before
        .as_ref()
        .map_or_else(default_home, |h| PathBuf::from(&h.home));
    let url = match before.as_ref().map(|h| h.keeper) {
        Some(k @ (Keeper::Systemd | Keeper::Launchd)) => {
            let old = before.as_ref().map_or(0, |h| h.pid);
            super::service::restart_supervised(k)?;
            wait_for_new_pid(&home, old)?
        }
        Some(_) => {
            let (stopping, _) = match ask_to_stop(c)? {
                Ok(p) => p,
                Err(a) => return refused(opts, &a),
            };
            let pid = stopping.pid;
            if !wait_gone(c, &stopping) {
                note!("medulla: the owner (pid {pid}) is still finishing in-flight requests; not started again: try `medulla restart` once `medulla status` says it stopped");
                return Ok(1);
            }
            crate::launch::start(&home)?
        }
        None => crate::launch::start(&home)?,
    };
    let after = super::client::Client::without_autostart(Some(&url))?.get("/api/health")?;
    let now = super::client::read::<Health>(&after.body, "health")?;
    if opts.json {
        out!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "restarted": before.is_some(),
                "before": before.as_ref().map(|h| serde_json::json!({"pid": h.pid, "version": h.version})),
                "after": after.body,
            }))?
        );
    } else {
        match &before {
            Some(b) => out!(
                "{} the owner: pid {} ({}) → pid {} ({}) at {url}",
                paint(GREEN, "restarted"),
                b.pid,
                b.version,
                now.pid,
                now.version
            ),
            None => out!(
                "no owner was running; {} one: pid {} ({}) at {url}",
                paint(GREEN, "started"),
                now.pid,
                now.version
            ),
        }
    }
    Ok(0)
}

/// After a service manager was told to restart the owner: the URL of an owner of `home`
/// that answers with another pid than `old`.
fn wait_for_new_pid(home: &std::path::Path, old: u32) -> anyhow::Result<String> {
    let deadline = std::time::Instant::now() + crate::launch::WAIT;
    loop {
        let url = crate::launch::locate(home, None).url;
        if let Some(h) = crate::launch::health(home, &url, Duration::from_millis(500)) {
            if h["pid"].as_u64().is_some_and(|p| p != u64::from(old)) {
                return Ok(url);
            }
        }
        if std::time::Instant::now() >= deadline {
            anyhow::bail!(
                "the service manager did not bring the owner back within {} s: see `medulla logs` and `medulla service status`",
                crate::launch::WAIT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
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
    let t = super::client::read::<HallTicket>(&a.body, "a Hall ticket")?;
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
