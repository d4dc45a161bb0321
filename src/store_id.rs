//! Which store a request, an actor or a counter is about: one typed identity from the
//! route to the store, so no string or `Option` ever stands for one.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A brain's fingerprint: the first 16 hex digits of sha256 of its canonical root.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// The fingerprint of a canonical root.
    pub fn of_root(root: &str) -> Fingerprint {
        let digest = Sha256::digest(root.as_bytes());
        Fingerprint(hex::encode(digest)[..16].to_string())
    }

    /// Parse a written fingerprint: 16 hex digits, any case.
    pub fn parse(s: &str) -> Option<Fingerprint> {
        let s = s.trim();
        (s.len() == 16 && s.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| Fingerprint(s.to_ascii_lowercase()))
    }

    /// A fingerprint read from a brain's own manifest or directory name; trusted as is.
    pub fn from_manifest(s: String) -> Fingerprint {
        Fingerprint(s)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Fingerprint {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<std::path::Path> for Fingerprint {
    fn as_ref(&self) -> &std::path::Path {
        std::path::Path::new(&self.0)
    }
}

impl Borrow<str> for Fingerprint {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for Fingerprint {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Fingerprint {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl From<Fingerprint> for String {
    fn from(fp: Fingerprint) -> String {
        fp.0
    }
}

/// A store the owner hosts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StoreId {
    /// A project brain.
    Brain(Fingerprint),
    /// The personal medulla (this machine only, never shared).
    Medulla,
    /// The team medulla's local mirror (SPEC §13), when a team is joined.
    Team,
}

impl StoreId {
    pub fn brain(fp: &Fingerprint) -> StoreId {
        StoreId::Brain(fp.clone())
    }

    /// How logs and errors name its actor: `brain <fp>` or `medulla`.
    pub fn actor_name(&self) -> String {
        match self {
            StoreId::Brain(fp) => format!("brain {fp}"),
            StoreId::Medulla => "medulla".to_string(),
            StoreId::Team => "team medulla".to_string(),
        }
    }
}

impl fmt::Display for StoreId {
    /// The store's name on the wire: its fingerprint, or `medulla`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreId::Brain(fp) => f.write_str(fp),
            StoreId::Medulla => f.write_str("medulla"),
            StoreId::Team => f.write_str("team"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_is_16_hex_of_sha256_and_parses_back() {
        let fp = Fingerprint::of_root("/home/a/project");
        assert_eq!(fp.len(), 16);
        assert_eq!(
            Fingerprint::parse(&fp.to_ascii_uppercase()),
            Some(fp.clone())
        );
        assert_eq!(Fingerprint::parse("medulla"), None);
        assert_eq!(StoreId::brain(&fp).to_string(), fp.as_str());
        assert_eq!(StoreId::Medulla.to_string(), "medulla");
    }
}
