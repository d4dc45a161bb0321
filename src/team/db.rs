//! The team's PostgreSQL: connecting (how to reach it is `target.rs`), its schema, and
//! every query the sync actor and the admin commands run. Nothing here holds state.

use std::path::Path;

pub use super::target::{password_of, pgpass_line, without_password, Target};

use brains::store::{Cursor, Entry, Incoming, Outgoing, SharedAct};

use crate::repo::Repo;
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

/// The team's name for a project's store: `repo.key` (`repo:<root commit>@<remote>`),
/// unless the team already shares that project under the name brains had before a
/// project was its remote too (`repo:<root commit>`, announced with the same remote as
/// its label): then that one, so the clones shared before and after the rule converge on
/// one store. A template's other child, shared under the old name with another remote,
/// is another project: it keeps the old name, this one takes the new.
pub async fn team_key(client: &Client, repo: &Repo) -> Result<String, String> {
    let legacy = crate::repo::history(&repo.key);
    if legacy == repo.key {
        return Ok(repo.key.clone());
    }
    let row = client
        .query_opt(
            "SELECT coalesce(label, '') FROM medulla.shared_brains WHERE repo = $1",
            &[&legacy],
        )
        .await
        .map_err(|e| describe(&e))?;
    Ok(match row {
        Some(r) if r.get::<_, String>(0) == repo.label => legacy.to_string(),
        _ => repo.key.clone(),
    })
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
