//! The owner is there when an agent needs it (issue 47, SPEC §2): a client that finds no
//! owner starts one (exactly one per home, however many race), `medulla restart` is
//! invisible to a bridge's client, `prime` opens a session with its memory, the owner's
//! version and log are a command away, and `MEDULLA_NO_AUTOSTART=1` turns it all off.
//!
//! Every test runs on a home of its own whose `config.toml` listens on a free port (an
//! autostarted owner never binds the default one here), and stops every owner of that
//! home when it ends.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::cli::Run;
use crate::common::BIN;

/// A home whose owners are started by clients; every one of them is stopped on drop.
struct Home {
    dir: tempfile::TempDir,
    projects: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Self::with_config("")
    }

    /// A home with `extra` in its `config.toml` (which listens on any free port unless
    /// `extra` names an address).
    fn with_config(extra: &str) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let listen = if extra.contains("listen") {
            ""
        } else {
            "listen = \"127.0.0.1:0\"\n"
        };
        std::fs::write(
            dir.path().join("config.toml"),
            format!("{listen}no_model = true\nbackup_every_secs = 0\n{extra}"),
        )
        .unwrap();
        Home {
            dir,
            projects: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn project(&self, name: &str) -> PathBuf {
        let p = self.projects.path().join(name);
        std::fs::create_dir_all(&p).unwrap();
        std::fs::canonicalize(p).unwrap()
    }

    /// `medulla ARGS` in `cwd` as a user whose shell points at this home, autostart on.
    fn cmd(&self, cwd: &Path) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.current_dir(cwd)
            .env("MEDULLA_HOME", self.path())
            .env("MEDULLA_LOG", "warn")
            .env_remove("MEDULLA_NO_AUTOSTART")
            .env_remove("MEDULLA_URL")
            .env_remove("MEDULLA_BRAIN")
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, cwd: &Path, args: &[&str]) -> Run {
        let out = self.cmd(cwd).args(args).output().unwrap();
        Run::of(out)
    }

    /// `medulla ARGS`, which must succeed.
    fn ok(&self, cwd: &Path, args: &[&str]) -> Run {
        let r = self.run(cwd, args);
        assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
        r
    }

    /// A project `name`, bootstrapped through the command line (which starts the owner),
    /// holding the `release-process` claim.
    fn project_with_a_claim(&self, name: &str) -> PathBuf {
        let proj = self.project(name);
        self.ok(&proj, &["bootstrap"]);
        self.ok(
            &proj,
            &[
                "memorize",
                "--label",
                "release process",
                "--text",
                "we release with make release",
            ],
        );
        proj
    }

    /// The pids of every `medulla serve` of this home (read from the process table).
    fn owners(&self) -> Vec<u32> {
        owners_of(self.path())
    }

    fn health(&self) -> Value {
        let v = self.run(self.path(), &["status", "--json"]);
        assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
        serde_json::from_str(&v.stdout).unwrap()
    }

    fn bridge(&self, cwd: &Path) -> Bridge {
        let mut cmd = self.cmd(cwd);
        cmd.arg("bridge")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let (tx, rx) = mpsc::channel();
        let out = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Bridge { child, rx }
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        for pid in self.owners() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.owners().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        for pid in self.owners() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}

/// `medulla serve` processes whose command line names `home`.
fn owners_of(home: &Path) -> Vec<u32> {
    let home = home.to_string_lossy().into_owned();
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        // A zombie has an empty command line; a live owner names `serve` and the home.
        let state = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if !zombie && args.iter().any(|a| a == "serve") && args.contains(&home) {
            pids.push(pid);
        }
    }
    pids
}

struct Bridge {
    child: Child,
    rx: mpsc::Receiver<String>,
}

impl Bridge {
    fn send(&mut self, v: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    fn recv_by(&mut self, deadline: Instant) -> Option<Value> {
        let wait = deadline.saturating_duration_since(Instant::now());
        let line = self.rx.recv_timeout(wait).ok()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line:?}")))
    }

    fn recv(&mut self) -> Value {
        self.recv_by(Instant::now() + Duration::from_secs(30))
            .expect("the bridge answered")
    }

    fn handshake(&mut self) -> Value {
        self.send(
            json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "autostart-test", "version": "0" } } }),
        );
        let init = self.recv();
        self.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        init
    }

    fn seek(&mut self, id: u64, query: &str) -> Value {
        self.send(
            json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "seek", "arguments": { "query": query } } }),
        );
        let v = self.recv();
        assert_eq!(v["id"], id, "{v}");
        assert!(v.get("error").is_none(), "{v}");
        assert_ne!(v["result"]["isError"], true, "{v}");
        v["result"]["structuredContent"].clone()
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn slugs(seek: &Value) -> Vec<String> {
    seek["results"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| r["slug"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Issue 47: eight stdio clients started at once with no owner got "no medulla owner is
/// running" (0 of 8 served). Now each is served within 10 s, by one owner.
#[test]
fn eight_bridges_started_at_once_with_no_owner_are_all_served_by_one_owner() {
    let home = Home::new();
    let proj = home.project("p");
    assert!(home.owners().is_empty());
    let started = Instant::now();
    let mut bridges: Vec<Bridge> = (0..8).map(|_| home.bridge(&proj)).collect();
    for b in &mut bridges {
        b.send(
            json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "racer", "version": "0" } } }),
        );
    }
    let deadline = started + Duration::from_secs(10);
    for b in &mut bridges {
        let init = b
            .recv_by(deadline)
            .expect("initialize answered within 10 s");
        assert!(init["result"]["protocolVersion"].is_string(), "{init}");
        b.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        b.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
        let list = b
            .recv_by(deadline)
            .expect("tools/list answered within 10 s");
        let tools = list["result"]["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(tools.iter().any(|t| t["name"] == "seek"), "{list}");
    }
    eprintln!("8 bridges served in {:?}", started.elapsed());
    assert_eq!(home.owners().len(), 1, "exactly one owner for the home");
    let h = home.health();
    let own = Command::new(BIN).arg("--version").output().unwrap();
    let own = String::from_utf8_lossy(&own.stdout);
    let version = h["version"].as_str().unwrap();
    assert!(own.trim().ends_with(version), "{own} vs {h}");
    assert_eq!(h["keeper"], "client", "{h}");
    assert!(h["started_at"].as_i64().unwrap() > 0, "{h}");
}

/// Issue 47: a restart under a live bridge session was an error for its client (the
/// owner forgets MCP sessions). Now the same session's next call answers as before.
#[test]
fn a_restart_under_a_bridge_session_is_invisible_to_its_client() {
    let home = Home::new();
    let proj = home.project_with_a_claim("p");
    let mut b = home.bridge(&proj);
    b.handshake();
    let before = b.seek(1, "release");
    assert!(
        slugs(&before).contains(&"release-process".to_string()),
        "{before}"
    );
    let pid = home.health()["pid"].as_u64().unwrap();

    let r = home.ok(&proj, &["restart"]);
    assert!(r.stdout.contains("restarted"), "{}", r.stdout);
    let after_pid = home.health()["pid"].as_u64().unwrap();
    assert_ne!(pid, after_pid, "a new owner");
    assert_eq!(home.owners(), vec![after_pid as u32]);

    let after = b.seek(2, "release");
    assert_eq!(slugs(&after), slugs(&before), "{after}");
    // And a write through the same session lands in the same brain.
    b.send(json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "memorize", "arguments": { "label": "after restart", "text": "still here", "agent_id": "claude:maker" } } }));
    let v = b.recv();
    assert_eq!(
        v["result"]["structuredContent"]["outcome"], "created",
        "{v}"
    );
}

/// Issue 47: `prime` (the session-start hook) printed nothing and exited 0 with no owner
/// running, so a session opened with no memory. Now it starts the owner and primes.
#[test]
fn prime_with_no_owner_running_starts_one_and_prints_the_memory() {
    let home = Home::new();
    let proj = home.project_with_a_claim("p");
    home.ok(&proj, &["stop"]);
    assert!(home.owners().is_empty(), "stopped");
    let r = home.ok(&proj, &["prime", "--client", "claude"]);
    let v: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|_| panic!("{r:?}", r = r.stdout));
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(ctx.contains("make release"), "{ctx}");
    assert_eq!(home.owners().len(), 1);
}

/// With autostart off (`MEDULLA_NO_AUTOSTART=1`, or `autostart = false`), nothing
/// starts, and the refusal names the fix.
#[test]
fn with_autostart_off_nothing_starts_and_the_refusal_names_the_fix() {
    let home = Home::new();
    let proj = home.project("p");
    let out = home
        .cmd(&proj)
        .env("MEDULLA_NO_AUTOSTART", "1")
        .args(["seek", "anything"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("medulla serve") && err.contains("MEDULLA_NO_AUTOSTART"),
        "{err}"
    );
    let out = home
        .cmd(&proj)
        .env("MEDULLA_NO_AUTOSTART", "1")
        .args(["prime"])
        .output()
        .unwrap();
    assert_eq!((out.status.code(), out.stdout.len()), (Some(0), 0));
    assert!(home.owners().is_empty());

    let off = Home::with_config("autostart = false\n");
    let mut b = off.bridge(&off.project("p"));
    b.send(json!({ "jsonrpc": "2.0", "id": 7, "method": "ping" }));
    let v = b.recv();
    let msg = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("autostart = false") && msg.contains("medulla serve"),
        "{v}"
    );
    let r = off.run(&off.project("p"), &["seek", "x", "--json"]);
    assert_eq!(r.code, 2);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["error"]["code"], "owner_not_running", "{v}");
    assert!(off.owners().is_empty());
    assert!(!off.path().join("owner.json").exists());
}

/// `medulla logs` shows what the owner wrote when it started listening; `status` names
/// its version; a second `serve` on the home refuses while the first runs.
#[test]
fn the_owners_log_version_and_lock_are_a_command_away() {
    let home = Home::new();
    let proj = home.project("p");
    home.ok(&proj, &["brains"]);
    let r = home.ok(&proj, &["logs", "-n", "50"]);
    assert!(
        r.stdout.contains("medulla listening on http://127.0.0.1:"),
        "{}",
        r.stdout
    );
    let r = home.ok(&proj, &["status"]);
    let h = home.health();
    assert!(
        r.stdout.contains(h["version"].as_str().unwrap()),
        "{}",
        r.stdout
    );

    let second = home
        .cmd(&proj)
        .args(["serve", "--home"])
        .arg(home.path())
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(2));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("an owner already runs"), "{err}");
    assert_eq!(home.owners().len(), 1);
}

/// A port nothing listens on now (the kernel's pick, let go at once).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Issue 47: HTTP clients that speak MCP re-initialize when the owner answers `404` for
/// a session it forgot. Checked with the official Python SDK, through a real restart:
/// the same `ClientSession` seeks before and after `medulla restart`.
#[test]
fn the_python_sdk_rides_an_owner_restart() {
    let port = free_port();
    let home = Home::with_config(&format!("listen = \"127.0.0.1:{port}\"\n"));
    let proj = home.project_with_a_claim("p");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/restart_client.py");
    let mut py = Command::new(crate::python::python())
        .arg(&script)
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .arg(&proj)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(py.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "seeked");
    home.ok(&proj, &["restart"]);
    writeln!(py.stdin.as_mut().unwrap()).unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    let _ = py.wait();
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("{line:?}"));
    assert!(v.get("error").is_none(), "{v}");
    assert_eq!(v["after"], v["before"], "{v}");
    assert_eq!(v["before"], json!(["release-process"]), "{v}");
}
