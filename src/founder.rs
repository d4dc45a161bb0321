//! The founder token: a random secret in `$MEDULLA_HOME/founder.token`, readable only by
//! the user the owner runs as (mode 0600). The `medulla` command line reads it and sends
//! it as `Medulla-Founder-Token`; a request carrying it is the founder surface, allowed
//! the verbs that reach across brains (promotion of another brain's claim, imports and
//! exports of any store, reading another brain's claims). Anything that merely reaches
//! the port, or an agent that only knows its own caller root, cannot present it.

use std::io::Write;
use std::path::Path;

pub const FILE: &str = "founder.token";

/// A fresh random secret: 64 hex digits (256 bits), alphanumeric, for tokens,
/// tickets, sessions and generated passwords.
pub fn random_secret() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// The token, created (0600) when missing; a file others could read is made private.
pub fn ensure(home: &Path) -> std::io::Result<String> {
    ensure_secret(home, FILE)
}

/// The secret in `home/file`, created (0600) when missing; a file others could read is
/// made private. The founder token and the client token (`client_token`) are both made so.
pub fn ensure_secret(home: &Path, file: &str) -> std::io::Result<String> {
    let p = home.join(file);
    if let Some(t) = read_secret(home, file) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p)?.permissions().mode();
            if mode & 0o077 != 0 {
                tracing::warn!(path = %p.display(), "a token was readable by others; made it private (0600)");
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600))?;
            }
        }
        return Ok(t);
    }
    let token = random_secret();
    let tmp = home.join(format!(".{file}.{}", std::process::id()));
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&tmp)?;
    f.write_all(token.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, &p)?;
    Ok(token)
}

/// The token when the file exists and holds one.
pub fn read(home: &Path) -> Option<String> {
    read_secret(home, FILE)
}

/// The secret in `home/file` when the file exists and holds one.
pub fn read_secret(home: &Path, file: &str) -> Option<String> {
    let t = std::fs::read_to_string(home.join(file)).ok()?;
    let t = t.trim();
    (t.len() >= 32).then(|| t.to_string())
}

/// Constant-time comparison: how much of a guess was right never shows in the timing.
pub fn matches(expected: &str, presented: &str) -> bool {
    let (a, b) = (expected.as_bytes(), presented.trim().as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_private_stable_and_compared_exactly() {
        let home = tempfile::tempdir().unwrap();
        let t = ensure(home.path()).unwrap();
        assert_eq!(t.len(), 64);
        assert_eq!(ensure(home.path()).unwrap(), t, "stable across starts");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(home.path().join(FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(matches(&t, &t));
        assert!(!matches(&t, &t[1..]));
        assert!(!matches(&t, &format!("{}x", &t[..63])));
        assert!(!matches(&t, ""));
    }
}
