//! The roster: which brains exist. Disk is the truth: every directory under
//! `$MEDULLA_HOME/brains/` is listed, warm or dormant, readable or not.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{OwnerError, Result};

/// `hex(sha256(root))[0..16]`.
pub fn fingerprint(root: &str) -> String {
    let digest = Sha256::digest(root.as_bytes());
    hex::encode(digest)[..16].to_string()
}

/// Normalise a path without touching the disk: absolute, `.` and `..` folded.
fn lexical_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A caller's root as routing sees it: absolute, canonical when it exists on disk,
/// lexically normalised when it does not (a caller may name a path this machine lacks).
pub fn normalize_caller_root(raw: &str) -> Result<PathBuf> {
    let raw = raw.trim();
    let p = Path::new(raw);
    if raw.is_empty() || !p.is_absolute() {
        return Err(OwnerError::BadInput(format!(
            "caller root {raw:?} is not an absolute path: send the absolute path of your working directory"
        )));
    }
    Ok(std::fs::canonicalize(p).unwrap_or_else(|_| lexical_normal(p)))
}

/// A root for bootstrap: must be an existing directory; canonicalised.
pub fn canonical_root(raw: &str) -> Result<PathBuf> {
    let p = normalize_caller_root(raw)?;
    if !p.is_dir() {
        return Err(OwnerError::BadInput(format!(
            "{} is not an existing directory: bootstrap the root of a project that exists on this machine",
            p.display()
        )));
    }
    Ok(p)
}

/// A brain's identity file, `brains/<fp>/brain.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub root: String,
    pub fingerprint: String,
    pub created: i64,
    /// Counts as of the last time the brain was unloaded or flushed.
    #[serde(default)]
    pub counts: ManifestCounts,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ManifestCounts {
    pub live_claims: u64,
    pub history_versions: u64,
    pub acts: u64,
    pub as_of: i64,
}

/// One row of the roster: a directory on disk and what could be read of it.
#[derive(Debug, Clone, Serialize)]
pub struct RosterEntry {
    pub dir: PathBuf,
    pub manifest: Option<Manifest>,
    /// Why the manifest could not be read, when it could not.
    pub problem: Option<String>,
}

impl RosterEntry {
    pub fn fingerprint(&self) -> String {
        match &self.manifest {
            Some(m) => m.fingerprint.clone(),
            None => self
                .dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }
}

pub const MANIFEST_FILE: &str = "brain.json";

/// Read every brain directory under `brains_dir`.
pub fn scan(brains_dir: &Path) -> Vec<RosterEntry> {
    let Ok(read) = std::fs::read_dir(brains_dir) else {
        return Vec::new();
    };
    let mut out: Vec<RosterEntry> = read
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let dir = e.path();
            match read_manifest(&dir) {
                Ok(m) => RosterEntry {
                    dir,
                    manifest: Some(m),
                    problem: None,
                },
                Err(problem) => RosterEntry {
                    dir,
                    manifest: None,
                    problem: Some(problem),
                },
            }
        })
        .collect();
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    out
}

pub fn read_manifest(dir: &Path) -> std::result::Result<Manifest, String> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a valid manifest: {e}", path.display()))
}

/// Write a manifest atomically (temp file, then rename).
pub fn write_manifest(dir: &Path, m: &Manifest) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!("{MANIFEST_FILE}.tmp"));
    std::fs::write(
        &tmp,
        serde_json::to_vec_pretty(m).expect("manifest serializes"),
    )?;
    std::fs::rename(tmp, dir.join(MANIFEST_FILE))
}

/// The registered brain whose root is the longest path-component prefix of `caller`.
pub fn longest_prefix<'a>(
    manifests: impl IntoIterator<Item = &'a Manifest>,
    caller: &Path,
) -> Option<&'a Manifest> {
    manifests
        .into_iter()
        .filter(|m| caller.starts_with(Path::new(&m.root)))
        .max_by_key(|m| Path::new(&m.root).components().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(root: &str) -> Manifest {
        Manifest {
            root: root.into(),
            fingerprint: fingerprint(root),
            created: 0,
            counts: Default::default(),
        }
    }

    #[test]
    fn fingerprint_is_16_hex_of_sha256() {
        let fp = fingerprint("/home/a/project");
        assert_eq!(fp.len(), 16);
        assert!(fp.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(fp, hex::encode(Sha256::digest(b"/home/a/project"))[..16]);
    }

    #[test]
    fn longest_prefix_is_component_wise_and_innermost() {
        let all = [m("/w/outer"), m("/w/outer/inner"), m("/w/out")];
        let hit = |p: &str| longest_prefix(all.iter(), Path::new(p)).map(|m| m.root.clone());
        assert_eq!(hit("/w/outer/inner/src/x"), Some("/w/outer/inner".into()));
        assert_eq!(hit("/w/outer/src"), Some("/w/outer".into()));
        // "/w/outerx" shares characters but not a component with "/w/outer".
        assert_eq!(hit("/w/outerx/src"), None);
        assert_eq!(hit("/w/out"), Some("/w/out".into()));
        assert_eq!(hit("/elsewhere"), None);
    }

    #[test]
    fn caller_roots_must_be_absolute_and_are_normalised() {
        assert!(normalize_caller_root("relative/path").is_err());
        assert!(normalize_caller_root("").is_err());
        let p = normalize_caller_root("/definitely/not/here/../there/./x").unwrap();
        assert_eq!(p, PathBuf::from("/definitely/not/there/x"));
    }
}
