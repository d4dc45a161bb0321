//! The client token: a random secret in `$MEDULLA_HOME/client.token`, mode 0600, that
//! proves a caller is the owner's own OS user where the kernel cannot say who is calling
//! (systems other than Linux, `--allow-remote`, `peer_check = false`; SPEC §15). Clients
//! (`medulla`, the stdio bridge) read it and send `Authorization: Bearer <token>`; a
//! project's committed files never hold its value.

use std::path::{Path, PathBuf};

pub const FILE: &str = "client.token";

pub fn path(home: &Path) -> PathBuf {
    home.join(FILE)
}

/// The token, created (0600) when missing, as the founder token is.
pub fn ensure(home: &Path) -> std::io::Result<String> {
    crate::founder::ensure_secret(home, FILE)
}

/// The token when the file exists and holds one (and this user may read it).
pub fn read(home: &Path) -> Option<String> {
    crate::founder::read_secret(home, FILE)
}

/// The `Authorization` header's value for the token in `$MEDULLA_HOME`, when there is one.
pub fn bearer() -> Option<String> {
    read(&crate::config::default_home()).map(|t| format!("Bearer {t}"))
}

/// The token presented in an `Authorization: Bearer` value.
pub fn presented(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_token_is_private_and_read_back() {
        let home = tempfile::tempdir().unwrap();
        let t = ensure(home.path()).unwrap();
        assert_eq!(read(home.path()).as_deref(), Some(t.as_str()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path(home.path()))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_ne!(t, crate::founder::ensure(home.path()).unwrap());
        assert_eq!(presented(&format!("Bearer {t}")), Some(t.as_str()));
        assert_eq!(presented(&format!("bearer  {t} ")), Some(t.as_str()));
        assert_eq!(presented(&format!("Basic {t}")), None);
        assert_eq!(presented(&t), None);
    }
}
