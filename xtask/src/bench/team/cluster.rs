//! The team bench's cast: a team database with its admin, member homes, and running
//! owners joined to it, driven through the `medulla` command and the REST API.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::bench::http::{require_binary, start_logged, Owner};
use crate::pg::Postgres;

/// A reader that has not seen a row after this long fails the bench.
pub(super) const GIVE_UP: Duration = Duration::from_secs(60);

/// `medulla ARGS` with `MEDULLA_HOME=home`: its stdout and stderr, or an error.
fn medulla(home: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new(require_binary()?)
        .args(args)
        .env("MEDULLA_HOME", home)
        .env_remove("MEDULLA_URL")
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .output()
        .context("run medulla")?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        bail!("medulla {}: {text}", args.first().copied().unwrap_or(""));
    }
    Ok(text)
}

/// A team database: created, its schema from `medulla team init`.
pub(super) struct Team<'a> {
    pub(super) pg: &'a Postgres,
    pub(super) db: String,
    pub(super) admin: tempfile::TempDir,
    pub(super) poll_ms: Option<usize>,
}

impl<'a> Team<'a> {
    pub(super) fn new(pg: &'a Postgres, db: &str, poll_ms: Option<usize>) -> Result<Team<'a>> {
        pg.create_db(db);
        let admin = tempfile::tempdir()?;
        medulla(admin.path(), &["team", "init", &pg.admin_url(db)])?;
        Ok(Team {
            pg,
            db: db.to_string(),
            admin,
            poll_ms,
        })
    }

    /// `team add-member NAME`: the join URL it prints (with the password).
    pub(super) fn add_member(&self, name: &str) -> Result<String> {
        let out = medulla(
            self.admin.path(),
            &[
                "team",
                "add-member",
                name,
                "--url",
                &self.pg.admin_url(&self.db),
            ],
        )?;
        Ok(out
            .split('\'')
            .find(|w| w.starts_with("postgres://"))
            .with_context(|| format!("no join URL in {out}"))?
            .to_string())
    }

    /// A member's owner over a fresh home, joined through the command line; started
    /// by `start`.
    pub(super) fn member(&self, name: &str) -> Result<Home> {
        let url = self.add_member(name)?;
        let home = Home::new()?;
        medulla(home.home.path(), &["team", "join", &url])?;
        if let Some(ms) = self.poll_ms {
            // The [team] table is the file's last.
            let cfg = home.home.path().join("config.toml");
            let text = std::fs::read_to_string(&cfg)?;
            std::fs::write(&cfg, format!("{text}poll_ms = {ms}\n"))?;
        }
        Ok(home)
    }

    pub(super) fn count(&self, sql: &str) -> Result<Vec<u64>> {
        let out = self.pg.psql(&self.db, sql);
        out.trim()
            .split('|')
            .map(|f| f.parse().with_context(|| format!("a count in {out:?}")))
            .collect()
    }
}

/// An owner's home, one project directory, and where its log goes (at `warn`).
pub(super) struct Home {
    pub(super) home: tempfile::TempDir,
    pub(super) project: tempfile::TempDir,
    pub(super) logs: tempfile::TempDir,
}

impl Home {
    pub(super) fn new() -> Result<Home> {
        Ok(Home {
            home: tempfile::tempdir()?,
            project: tempfile::tempdir()?,
            logs: tempfile::tempdir()?,
        })
    }

    pub(super) fn launch(&self) -> Result<Owner> {
        start_logged(
            self.home.path(),
            false,
            Some(&self.logs.path().join("owner.log")),
        )
    }

    pub(super) fn start(self) -> Result<Running> {
        let o = self.launch()?;
        Running::new(o, self)
    }
}

/// A started owner (dropped first: the process stops before its home goes).
pub(super) struct Running {
    pub(super) o: Owner,
    pub(super) root: String,
    pub(super) home: Home,
}

impl Running {
    pub(super) fn new(o: Owner, home: Home) -> Result<Running> {
        let root = std::fs::canonicalize(home.project.path())?
            .to_string_lossy()
            .into_owned();
        o.call("bootstrap", json!({ "root": root }), &root)?;
        Ok(Running { o, root, home })
    }

    pub(super) fn call(&self, tool: &str, args: Value) -> Result<Value> {
        self.o.call(tool, args, &self.root)
    }

    pub(super) fn memorize(&self, label: &str, text: &str, tier: &str) -> Result<Value> {
        self.call(
            "memorize",
            json!({ "label": label, "text": text, "tier": tier }),
        )
    }

    /// Whether a team-tier seek scoped to `label` returns it.
    pub(super) fn sees(&self, label: &str) -> Result<bool> {
        let v = self.call(
            "seek",
            json!({ "query": "", "tier": "team", "scope": label, "limit": 5 }),
        )?;
        Ok(v["results"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["tier"] == "team" && r["label"] == label)))
    }

    pub(super) fn team(&self) -> Result<Value> {
        let r = self.o.http.get(format!("{}/api/team", self.o.url)).send()?;
        let ok = r.status().is_success();
        let v: Value = r.json()?;
        if !ok {
            bail!("GET /api/team: {v}");
        }
        Ok(v)
    }

    /// Wait until the team link says connected.
    pub(super) fn connected(&self) -> Result<()> {
        let until = Instant::now() + GIVE_UP;
        loop {
            if self.team()?["status"] == "connected" {
                return Ok(());
            }
            if Instant::now() > until {
                bail!(
                    "the owner never reached the team database: {}",
                    self.team()?
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
