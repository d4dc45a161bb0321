//! How to reach the team's PostgreSQL: the URL (shown without its password), the
//! password from the URL, the environment or a pgpass file, and whether TLS verifies.

use std::path::{Path, PathBuf};
use std::str::FromStr;

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
    pub(super) fn with_password(&self, home: &Path) -> tokio_postgres::Config {
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

impl Target {
    pub(super) fn verify_kind(&self) -> super::tls::Verify {
        match &self.verify {
            Verify::Off | Verify::Encrypt => super::tls::Verify::Encrypt,
            Verify::Full { root_cert } => super::tls::Verify::Full(root_cert.clone()),
        }
    }
}
