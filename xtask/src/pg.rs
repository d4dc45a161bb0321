//! A real, throwaway PostgreSQL server for tests and benchmarks.
//!
//! `Postgres::start()` runs `initdb` into a fresh temp dir and starts the server on
//! 127.0.0.1:<free port> plus a Unix socket in that temp dir; dropping it stops the
//! server and removes everything. As root, the server tools run as the `postgres` OS
//! user (through `runuser`), since `initdb` refuses to run as root.
//!
//! Std + `tempfile` only: the black-box tests include this file with
//! `#[path = "../../xtask/src/pg.rs"] mod pg;`.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// One running (or stopped) throwaway server; see the module docs.
pub struct Postgres {
    dir: tempfile::TempDir,
    data: PathBuf,
    log: PathBuf,
    port: u16,
    password: String,
    bin: PathBuf,
    root: bool,
    running: bool,
}

impl Postgres {
    /// `initdb` into a fresh temp dir and start the server listening on
    /// 127.0.0.1:<free port> and a Unix socket in the temp dir.
    pub fn start() -> Postgres {
        let root = is_root();
        let bin = find_bindir(root);
        let dir = tempfile::Builder::new()
            .prefix("medulla-pg-")
            .tempdir()
            .expect("create a temp dir for PostgreSQL");
        let mut random = [0u8; 16];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut random))
            .expect("read 16 bytes from /dev/urandom");
        let password: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let pwfile = dir.path().join("pwfile");
        std::fs::write(&pwfile, &password).expect("write the PostgreSQL password file");
        if root {
            let out = Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(dir.path())
                .output()
                .expect("run chown");
            assert!(
                out.status.success(),
                "chown -R postgres: {:?} failed (is there a `postgres` OS user?): {}",
                dir.path(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let data = dir.path().join("data");
        let log = dir.path().join("server.log");
        let mut pg = Postgres {
            dir,
            data,
            log,
            port: 0,
            password,
            bin,
            root,
            running: false,
        };
        let mut initdb = pg.tool("initdb");
        initdb
            .arg("-D")
            .arg(&pg.data)
            .args(["-U", "postgres", "--auth-local=trust"]);
        initdb.args([
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-instructions",
        ]);
        let out = initdb
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // The free port can be taken between picking and binding: retry with another.
        for attempt in 1..=3 {
            pg.port = free_port();
            match pg.launch() {
                Ok(()) => return pg,
                Err(e) if attempt < 3 && e.contains("could not bind") => continue,
                Err(e) => panic!("{e}"),
            }
        }
        unreachable!("the last attempt returns or panics")
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `postgres://postgres:<pw>@127.0.0.1:<port>/<db>` (superuser, password auth over TCP).
    pub fn admin_url(&self, db: &str) -> String {
        format!(
            "postgres://postgres:{}@127.0.0.1:{}/{db}",
            self.password, self.port
        )
    }

    /// Create a database owned by the superuser.
    pub fn create_db(&self, name: &str) {
        self.psql(
            "postgres",
            &format!("CREATE DATABASE \"{}\"", name.replace('"', "\"\"")),
        );
    }

    /// Run SQL (any script `psql` accepts) as the superuser over the Unix socket and
    /// return stdout (unaligned, tuples only); panics with stderr on failure.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let mut cmd = self.tool("psql");
        cmd.arg("-h")
            .arg(self.dir.path())
            .args(["-p", &self.port.to_string(), "-U", "postgres"]);
        let out = run_psql(cmd, db, sql);
        match out {
            Ok(stdout) => stdout,
            Err(stderr) => panic!("psql on {db} failed: {stderr}\nSQL: {sql}"),
        }
    }

    /// Run SQL over TCP 127.0.0.1 as `user` with `password`: stdout, or stderr when
    /// the server refuses (a login, a permission, an error).
    pub fn try_psql_as(
        &self,
        db: &str,
        user: &str,
        password: &str,
        sql: &str,
    ) -> Result<String, String> {
        let mut cmd = Command::new(self.bin.join("psql"));
        cmd.args([
            "-w",
            "-h",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
            "-U",
            user,
        ]);
        cmd.env("PGPASSWORD", password)
            .env("PGCONNECT_TIMEOUT", "10");
        run_psql(cmd, db, sql)
    }

    /// `pg_ctl stop -m fast`: the server is down, its data kept.
    pub fn stop(&mut self) {
        let out = self
            .pg_ctl(&["stop", "-m", "fast"])
            .output()
            .expect("run pg_ctl stop");
        assert!(
            out.status.success(),
            "pg_ctl stop failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.log_tail()
        );
        self.running = false;
    }

    /// Start the stopped server again, on the same port with the same data.
    pub fn start_again(&mut self) {
        assert!(!self.running, "start_again: the server is already running");
        if let Err(e) = self.launch() {
            panic!("{e}");
        }
    }

    /// The whole database as a plain-text `pg_dump` (schema and data, COPY format),
    /// for tests that scan every table for a string. `bytea` values appear as hex.
    pub fn dump(&self, db: &str) -> String {
        let mut cmd = self.tool("pg_dump");
        cmd.arg("-h")
            .arg(self.dir.path())
            .args(["-p", &self.port.to_string(), "-U", "postgres"]);
        let out = cmd
            .args(["--no-owner", "--no-privileges", "-d", db])
            .output()
            .expect("run pg_dump");
        assert!(
            out.status.success(),
            "pg_dump {db} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("pg_dump output is UTF-8")
    }

    /// A server tool from the bin dir, as the `postgres` OS user when we are root,
    /// run from the temp dir (the caller's cwd may be closed to that user).
    fn tool(&self, name: &str) -> Command {
        let mut cmd = if self.root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(self.bin.join(name));
            c
        } else {
            Command::new(self.bin.join(name))
        };
        cmd.current_dir(self.dir.path());
        cmd
    }

    fn pg_ctl(&self, args: &[&str]) -> Command {
        let mut cmd = self.tool("pg_ctl");
        cmd.arg("-D")
            .arg(&self.data)
            .args(["-w", "-t", "60"])
            .args(args);
        cmd
    }

    /// `pg_ctl start` on `self.port`, then wait until `pg_isready` says yes (≤ 30 s).
    fn launch(&mut self) -> Result<(), String> {
        let opts = format!(
            "-c listen_addresses=127.0.0.1 -p {} -c unix_socket_directories='{}' -c fsync=off -c max_connections=200 -c shared_buffers=32MB",
            self.port,
            self.dir.path().display()
        );
        let mut cmd = self.pg_ctl(&["start", "-o", &opts]);
        // Counted as running from here: a timed-out start may have left a postmaster.
        self.running = true;
        let out = cmd
            .arg("-l")
            .arg(&self.log)
            .output()
            .expect("run pg_ctl start");
        if !out.status.success() {
            return Err(format!(
                "pg_ctl start failed: {}\n{}",
                String::from_utf8_lossy(&out.stderr),
                self.log_tail()
            ));
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "PostgreSQL did not accept connections on port {} within 30 s\n{}",
                    self.port,
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        format!(
            "server log tail:\n{}",
            lines[lines.len().saturating_sub(30)..].join("\n")
        )
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.running {
            let _ = self
                .pg_ctl(&["stop", "-m", "immediate"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        // The TempDir removes the files (root may delete the postgres-owned tree).
    }
}

/// Run `psql` (already given its connection options) on `db` with `sql` on stdin.
fn run_psql(mut cmd: Command, db: &str, sql: &str) -> Result<String, String> {
    cmd.args([
        "-X",
        "-q",
        "-At",
        "-v",
        "ON_ERROR_STOP=1",
        "-d",
        db,
        "-f",
        "-",
    ]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run psql");
    let mut stdin = child.stdin.take().expect("psql stdin is piped");
    let sql = sql.to_owned();
    // A writer thread, so a large script and a large result cannot block each other.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(sql.as_bytes());
    });
    let out: Output = child.wait_with_output().expect("wait for psql");
    let _ = writer.join();
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Whether this process runs as root (the server tools then run as `postgres`).
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0 to pick a free port");
    listener.local_addr().expect("the picked port").port()
}

/// The PostgreSQL server bin dir; as root, installs `postgresql` with apt-get if absent.
fn find_bindir(root: bool) -> PathBuf {
    if let Some(bin) = locate_bindir() {
        return bin;
    }
    if root {
        let apt = |args: &[&str]| {
            Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .is_ok_and(|s| s.success())
        };
        if !apt(&["install", "-y", "postgresql"]) {
            apt(&["update"]);
            apt(&["install", "-y", "postgresql"]);
        }
        if let Some(bin) = locate_bindir() {
            return bin;
        }
    }
    panic!("PostgreSQL server binaries (initdb) not found; install them with `apt-get install -y postgresql`")
}

/// `pg_config --bindir` if it has `initdb`, else the newest `/usr/lib/postgresql/*/bin`.
fn locate_bindir() -> Option<PathBuf> {
    let from_config = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .filter(|o| o.status.success());
    if let Some(out) = from_config {
        let bin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if bin.join("initdb").is_file() {
            return Some(bin);
        }
    }
    let version = |p: &Path| -> Vec<u32> {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        name.split('.')
            .map(|part| part.parse().unwrap_or(0))
            .collect()
    };
    std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|dir| dir.join("bin/initdb").is_file())
        .max_by_key(|dir| version(dir))
        .map(|dir| dir.join("bin"))
}

#[cfg(test)]
mod tests {
    use super::Postgres;

    #[test]
    fn starts_stops_and_starts_again() {
        let mut pg = Postgres::start();
        pg.create_db("t");
        assert_eq!(pg.psql("t", "select 1").trim(), "1");
        let url = pg.admin_url("t");
        let password = url
            .split([':', '@'])
            .nth(2)
            .expect("password in the admin url");
        assert_eq!(
            pg.try_psql_as("t", "postgres", password, "select 2")
                .as_deref(),
            Ok("2\n")
        );
        assert!(pg
            .try_psql_as("t", "postgres", "wrong", "select 2")
            .is_err());
        pg.psql(
            "t",
            "create table k (v text); insert into k values ('needle-42');",
        );
        assert!(pg.dump("t").contains("needle-42"));
        pg.stop();
        pg.start_again();
        assert_eq!(pg.psql("t", "select 1").trim(), "1");
        assert_eq!(pg.psql("t", "select v from k").trim(), "needle-42");
    }
}
