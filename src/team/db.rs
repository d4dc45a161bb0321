//! The team's PostgreSQL: how to reach it (the URL, the password from the URL, the
//! environment or a pgpass file, TLS when the URL asks), its schema, and every query
//! the sync actor and the admin commands run. Nothing here holds state.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use brains::store::{Cursor, Entry, Incoming, Outgoing, SharedAct};
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, Connection, Socket};
use tokio_postgres_rustls::MakeRustlsConnect;

/// The TLS stream rustls gives a connection.
type TlsStream = <MakeRustlsConnect as MakeTlsConnect<Socket>>::Stream;

/// The schema, the member role group, the grants and the policies. Idempotent: `team
/// init` runs it as often as asked. Members may INSERT (three columns) and SELECT only;
/// `member`, `xid`, `seq` and `at` are the database's to fill.
pub const SCHEMA: &str = r#"
CREATE SCHEMA IF NOT EXISTS medulla;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'medulla_member') THEN
    CREATE ROLE medulla_member NOLOGIN;
  END IF;
END $$;
CREATE TABLE IF NOT EXISTS medulla.acts (
  seq    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  xid    xid8 NOT NULL DEFAULT pg_current_xact_id(),
  store  text NOT NULL CHECK (length(store) BETWEEN 1 AND 200),
  hash   text NOT NULL UNIQUE CHECK (length(hash) BETWEEN 1 AND 128),
  member name NOT NULL DEFAULT current_user,
  at     timestamptz NOT NULL DEFAULT now(),
  kind   text NOT NULL DEFAULT 'act' CHECK (kind IN ('act', 'tombstone')),
  body   jsonb CHECK (body IS NULL OR length(body::text) <= 262144)
);
CREATE INDEX IF NOT EXISTS acts_by_store ON medulla.acts (store, xid, seq);
CREATE TABLE IF NOT EXISTS medulla.shared_brains (
  repo   text PRIMARY KEY CHECK (length(repo) <= 200),
  label  text CHECK (length(label) <= 500),
  member name NOT NULL DEFAULT current_user,
  at     timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE medulla.acts ENABLE ROW LEVEL SECURITY;
ALTER TABLE medulla.shared_brains ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS acts_read ON medulla.acts;
CREATE POLICY acts_read ON medulla.acts FOR SELECT USING (true);
DROP POLICY IF EXISTS acts_write ON medulla.acts;
CREATE POLICY acts_write ON medulla.acts FOR INSERT
  WITH CHECK (member = current_user AND kind = 'act');
DROP POLICY IF EXISTS shared_read ON medulla.shared_brains;
CREATE POLICY shared_read ON medulla.shared_brains FOR SELECT USING (true);
DROP POLICY IF EXISTS shared_write ON medulla.shared_brains;
CREATE POLICY shared_write ON medulla.shared_brains FOR INSERT WITH CHECK (member = current_user);
REVOKE ALL ON medulla.acts, medulla.shared_brains FROM PUBLIC;
GRANT USAGE ON SCHEMA medulla TO medulla_member;
GRANT SELECT ON medulla.acts, medulla.shared_brains TO medulla_member;
GRANT INSERT (store, hash, body) ON medulla.acts TO medulla_member;
GRANT INSERT (repo, label) ON medulla.shared_brains TO medulla_member;
CREATE OR REPLACE FUNCTION medulla.notify_act() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM pg_notify('medulla_acts', NEW.store);
  RETURN NULL;
END $f$;
DROP TRIGGER IF EXISTS acts_notify ON medulla.acts;
CREATE TRIGGER acts_notify AFTER INSERT ON medulla.acts
  FOR EACH ROW EXECUTE FUNCTION medulla.notify_act();
"#;

/// The notification channel: its payload is a store key, never content.
pub const CHANNEL: &str = "medulla_acts";

/// How the URL asks the server's certificate to be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verify {
    /// `sslmode=disable`: no TLS.
    Off,
    /// `prefer` / `require`: encrypted, the certificate unchecked (libpq's meaning).
    Encrypt,
    /// `verify-ca` / `verify-full`: the web PKI roots, or `sslrootcert`.
    Full { root_cert: Option<PathBuf> },
}

/// A team database as a URL names it.
#[derive(Clone)]
pub struct Target {
    config: tokio_postgres::Config,
    verify: Verify,
    /// The role this owner writes as: the URL's user.
    pub member: String,
    /// The URL without its password: what config, logs and answers show.
    pub shown: String,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target").field("url", &self.shown).finish()
    }
}

/// The URL with any password taken out.
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some((a, h)) => (Some(a), h),
        None => (None, rest),
    };
    match auth {
        Some(a) => {
            let user = a.split_once(':').map_or(a, |(u, _)| u);
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_string(),
    }
}

/// The password a URL carries, percent-decoded.
pub fn password_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let (auth, _) = rest.rsplit_once('@')?;
    let (_, pw) = auth.split_once(':')?;
    Some(
        percent_encoding::percent_decode_str(pw)
            .decode_utf8_lossy()
            .into_owned(),
    )
}

impl Target {
    /// Read a `postgres://` URL. `sslmode` may be `disable`, `prefer`, `require`,
    /// `verify-ca` or `verify-full` (with `sslrootcert=FILE`).
    pub fn parse(url: &str) -> Result<Target, String> {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut verify = Verify::Encrypt;
        let mut root_cert = None;
        let mut kept = Vec::new();
        let mut mode = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            match k {
                "sslmode" => mode = Some(v.to_string()),
                "sslrootcert" => root_cert = Some(PathBuf::from(v)),
                _ => kept.push(pair.to_string()),
            }
        }
        match mode.as_deref() {
            Some("disable") => {
                verify = Verify::Off;
                kept.push("sslmode=disable".into());
            }
            None | Some("prefer") => kept.push("sslmode=prefer".into()),
            Some("require") => kept.push("sslmode=require".into()),
            Some("verify-ca" | "verify-full") => {
                verify = Verify::Full { root_cert };
                kept.push("sslmode=require".into());
            }
            Some(other) => {
                return Err(format!(
                    "sslmode={other} is not one medulla knows: use disable, prefer, require, verify-ca or verify-full"
                ))
            }
        }
        let rebuilt = format!("{base}?{}", kept.join("&"));
        let config = tokio_postgres::Config::from_str(&rebuilt).map_err(|e| {
            format!(
                "the team URL {} is not a PostgreSQL URL ({e}): write it as postgres://USER@HOST:PORT/DATABASE",
                without_password(url)
            )
        })?;
        let member = config
            .get_user()
            .ok_or_else(|| {
                "the team URL names no user: write it as postgres://USER@HOST:PORT/DATABASE (USER is your member role)".to_string()
            })?
            .to_string();
        Ok(Target {
            config,
            verify,
            member,
            shown: without_password(url),
        })
    }

    /// What a pgpass line is matched on: host (`localhost` for a socket), port, database.
    fn pgpass_key(&self) -> (String, u16, String) {
        let host = match self.config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
            _ => "localhost".to_string(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        let db = self.config.get_dbname().unwrap_or(&self.member).to_string();
        (host, port, db)
    }

    /// The password: the URL's, `PGPASSWORD`, or the first pgpass line that matches
    /// (`PGPASSFILE`, then medulla's own `team/pgpass`, then `~/.pgpass`).
    fn with_password(&self, home: &Path) -> tokio_postgres::Config {
        let mut c = self.config.clone();
        if c.get_password().is_some() {
            return c;
        }
        if let Some(pw) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
            c.password(pw.to_string_lossy().as_bytes());
            return c;
        }
        let mut files: Vec<PathBuf> = Vec::new();
        if let Some(f) = std::env::var_os("PGPASSFILE") {
            files.push(PathBuf::from(f));
        }
        files.push(home.join("team").join("pgpass"));
        if let Some(h) = std::env::var_os("HOME") {
            files.push(PathBuf::from(h).join(".pgpass"));
        }
        let (host, port, db) = self.pgpass_key();
        let port = port.to_string();
        for f in files {
            if let Some(pw) = pgpass_lookup(&f, &host, &port, &db, &self.member) {
                c.password(pw.as_bytes());
                break;
            }
        }
        c
    }
}

/// One pgpass file's password for (host, port, database, user); `*` matches anything.
pub fn pgpass_lookup(file: &Path, host: &str, port: &str, db: &str, user: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() != 5 {
            continue;
        }
        let ok = |pat: &str, v: &str| pat == "*" || pat == v;
        if ok(&fields[0], host)
            && ok(&fields[1], port)
            && ok(&fields[2], db)
            && ok(&fields[3], user)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

/// A pgpass line's fields: `:` separates, `\` escapes.
fn split_pgpass(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.last_mut().expect("one field").push(n);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => out.last_mut().expect("one field").push(c),
        }
    }
    out
}

/// A pgpass line for a URL's host, port, database and user.
pub fn pgpass_line(url: &str, password: &str) -> Result<String, String> {
    let t = Target::parse(url)?;
    let esc = |s: &str| s.replace('\\', "\\\\").replace(':', "\\:");
    let (host, port, db) = t.pgpass_key();
    Ok(format!(
        "{}:{}:{}:{}:{}\n",
        esc(&host),
        port,
        esc(&db),
        esc(&t.member),
        esc(password)
    ))
}

/// Connect: the connection is the caller's to drive.
pub async fn connect(
    t: &Target,
    home: &Path,
) -> Result<(Client, Connection<Socket, TlsStream>), String> {
    let config = t.with_password(home);
    let tls = MakeRustlsConnect::new(super::tls::client_config(&t.verify_kind())?);
    config.connect(tls).await.map_err(|e| {
        format!(
            "cannot reach the team database {}: {}",
            t.shown,
            describe(&e)
        )
    })
}

impl Target {
    fn verify_kind(&self) -> super::tls::Verify {
        match &self.verify {
            Verify::Off | Verify::Encrypt => super::tls::Verify::Encrypt,
            Verify::Full { root_cert } => super::tls::Verify::Full(root_cert.clone()),
        }
    }
}

/// Connect and drive the connection on its own task.
pub async fn connect_client(t: &Target, home: &Path) -> Result<Client, String> {
    let (client, conn) = connect(t, home).await?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "team database connection ended");
        }
    });
    Ok(client)
}

/// An error as one line, with the server's message when there is one (never the URL's
/// password: the URL is never part of it).
pub fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(inner) = src {
                s.push_str(": ");
                s.push_str(&inner.to_string());
                src = inner.source();
            }
            s
        }
    }
}

/// The sync actor's statements, prepared once per connection (each would otherwise cost
/// a round trip of its own on every pass).
pub struct Statements {
    push: tokio_postgres::Statement,
    pull: tokio_postgres::Statement,
    lag: tokio_postgres::Statement,
}

impl Statements {
    pub async fn prepare(client: &Client) -> Result<Statements, String> {
        let p =
            |sql: &'static str| async move { client.prepare(sql).await.map_err(|e| describe(&e)) };
        Ok(Statements {
            push: p(
                "INSERT INTO medulla.acts (store, hash, body) VALUES ($1, $2, $3::text::jsonb) \
                     ON CONFLICT (hash) DO NOTHING",
            )
            .await?,
            pull: p(
                "SELECT xid::text, seq, hash, member::text, kind, body::text FROM medulla.acts \
                     WHERE store = $1 AND (xid, seq) > ($2::text::xid8, $3::int8) \
                       AND xid < pg_snapshot_xmin(pg_current_snapshot()) \
                     ORDER BY xid, seq LIMIT $4",
            )
            .await?,
            lag: p("SELECT count(*) FROM medulla.acts WHERE store = $1 \
                    AND (xid, seq) > ($2::text::xid8, $3::int8)")
            .await?,
        })
    }
}

/// Send outbox entries in order, in one transaction; an act the log already holds
/// (sent before a crash or a lost answer) is skipped by its hash.
pub async fn push(
    client: &mut Client,
    sts: &Statements,
    store: &str,
    out: &[Outgoing],
) -> Result<(), String> {
    let tx = client.transaction().await.map_err(|e| describe(&e))?;
    let st = &sts.push;
    for o in out {
        let n = tx
            .execute(st, &[&store, &o.hash, &o.body])
            .await
            .map_err(|e| describe(&e))?;
        if n == 0 {
            // Already in the log (sent before a crash or a lost answer): read it back to
            // be sure it is this act of this store, not a stranger under the same hash.
            let row = tx
                .query_one("SELECT store FROM medulla.acts WHERE hash = $1", &[&o.hash])
                .await
                .map_err(|e| describe(&e))?;
            let there: String = row.get(0);
            if there != store {
                return Err(format!(
                    "act {} is already in the team's log under store {there}, not {store}: this outbox entry is left queued; report it",
                    o.hash
                ));
            }
        }
    }
    tx.commit().await.map_err(|e| describe(&e))
}

/// Log entries of one store after `cursor`, in log order, up to the oldest transaction
/// still in flight: an act whose transaction commits late has an id at or past that
/// horizon, so it is read on a later pull and never skipped.
pub async fn pull(
    client: &Client,
    sts: &Statements,
    store: &str,
    cursor: Cursor,
    limit: i64,
) -> Result<Vec<Incoming>, String> {
    let rows = client
        .query(
            &sts.pull,
            &[&store, &cursor.xid.to_string(), &cursor.seq, &limit],
        )
        .await
        .map_err(|e| describe(&e))?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let xid: String = r.get(0);
        let body: Option<String> = r.get(5);
        let kind: String = r.get(4);
        let hash: String = r.get(2);
        let entry = match (kind.as_str(), body) {
            ("tombstone", Some(b)) => {
                let v = serde_json::from_str::<serde_json::Value>(&b).unwrap_or_default();
                let list = |k: &str| -> Vec<String> {
                    v.get(k)
                        .and_then(|a| a.as_array())
                        .map(|a| {
                            a.iter()
                                .filter_map(|t| t.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                Entry::Tombstone {
                    targets: list("targets"),
                    slugs: list("slugs"),
                }
            }
            (_, None) => Entry::Erased,
            (_, Some(b)) => match serde_json::from_str::<SharedAct>(&b) {
                Ok(a) => Entry::Act(a),
                Err(e) => {
                    tracing::warn!(store, hash = %hash, error = %e, "a team act this owner cannot read is skipped");
                    Entry::Erased
                }
            },
        };
        out.push(Incoming {
            cursor: Cursor {
                xid: xid
                    .parse()
                    .map_err(|_| format!("a log id {xid:?} is not a number"))?,
                seq: r.get(1),
            },
            hash,
            member: r.get(3),
            entry,
        });
    }
    Ok(out)
}

/// Entries of one store past `cursor`, committed or not yet visible.
pub async fn lag(
    client: &Client,
    sts: &Statements,
    store: &str,
    cursor: Cursor,
) -> Result<i64, String> {
    client
        .query_one(&sts.lag, &[&store, &cursor.xid.to_string(), &cursor.seq])
        .await
        .map(|r| r.get(0))
        .map_err(|e| describe(&e))
}

/// Every shared brain: (store key, label).
pub async fn shared_brains(client: &Client) -> Result<Vec<(String, String)>, String> {
    let rows = client
        .query(
            "SELECT repo, coalesce(label, '') FROM medulla.shared_brains ORDER BY repo",
            &[],
        )
        .await
        .map_err(|e| describe(&e))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Announce a shared brain (idempotent).
pub async fn announce(client: &Client, key: &str, label: &str) -> Result<(), String> {
    client
        .execute(
            "INSERT INTO medulla.shared_brains (repo, label) VALUES ($1, $2) ON CONFLICT (repo) DO NOTHING",
            &[&key, &label],
        )
        .await
        .map(|_| ())
        .map_err(|e| describe(&e))
}

/// The team's members (the roles in the member group).
pub async fn members(client: &Client) -> Result<Vec<String>, String> {
    let rows = client
        .query(
            "SELECT m.rolname::text FROM pg_auth_members a \
             JOIN pg_roles m ON m.oid = a.member JOIN pg_roles g ON g.oid = a.roleid \
             WHERE g.rolname = 'medulla_member' ORDER BY 1",
            &[],
        )
        .await
        .map_err(|e| describe(&e))?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// A member name a role can have: lowercase letters, digits and `_`, a letter first.
pub fn check_member_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} cannot be a member name: use lowercase letters, digits and _, starting with a letter (at most 63)"
        ))
    }
}

/// Create a member role (admin): it may log in with `password` and is in the group.
pub async fn add_member(client: &Client, name: &str, password: &str) -> Result<(), String> {
    check_member_name(name)?;
    if !password.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err("the generated password must be alphanumeric".into());
    }
    client
        .batch_execute(&format!(
            "DO $$ BEGIN \
               IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{name}') THEN \
                 ALTER ROLE \"{name}\" LOGIN PASSWORD '{password}'; \
               ELSE \
                 CREATE ROLE \"{name}\" LOGIN PASSWORD '{password}'; \
               END IF; \
             END $$; \
             GRANT medulla_member TO \"{name}\";"
        ))
        .await
        .map_err(|e| describe(&e))
}

/// Erase a claim from a shared store (admin): every act that wrote it loses its
/// content, and one content-free tombstone names them, so every mirror erases its copy.
pub async fn purge(client: &mut Client, store: &str, slug: &str) -> Result<usize, String> {
    let tx = client.transaction().await.map_err(|e| describe(&e))?;
    let rows = tx
        .query(
            "UPDATE medulla.acts SET body = NULL WHERE store = $1 AND kind = 'act' \
               AND coalesce(body->'claim'->>'slug', body->>'slug') = $2 RETURNING hash",
            &[&store, &slug],
        )
        .await
        .map_err(|e| describe(&e))?;
    let mut targets: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    if targets.is_empty() {
        return Ok(0);
    }
    targets.sort();
    // The slug travels with the hashes: a mirror erases by slug, with no per-act record.
    let body = serde_json::json!({ "targets": targets, "slugs": [slug] }).to_string();
    let hash = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(
            format!("tombstone:{store}:{}", targets.join(",")).as_bytes(),
        ))
    };
    tx.execute(
        "INSERT INTO medulla.acts (store, hash, kind, body) VALUES ($1, $2, 'tombstone', $3::text::jsonb) \
         ON CONFLICT (hash) DO NOTHING",
        &[&store, &hash, &body],
    )
    .await
    .map_err(|e| describe(&e))?;
    tx.commit().await.map_err(|e| describe(&e))?;
    Ok(targets.len())
}

/// Whether the schema is there (a member's first check after `team join`).
pub async fn schema_ready(client: &Client) -> Result<bool, String> {
    client
        .query_one("SELECT to_regclass('medulla.acts') IS NOT NULL", &[])
        .await
        .map(|r| r.get(0))
        .map_err(|e| describe(&e))
}
