//! Build metadata: `MEDULLA_VERSION` is the package version with the commit it was built
//! from (`0.1.0+1a2b3c4d5e6f`), so a client can tell a rebuilt binary from the owner that
//! runs an older one (`medulla status`, `/api/health`).
//!
//! The script runs again only when HEAD moves. It registers only files that exist: cargo
//! runs a build script on every build for a registered path that does not exist (and then
//! recompiles the whole crate), as it did after `git gc` packed the branch's ref, or in a
//! repository with no packed refs (issue 65).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let pkg = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_hexdigit()));
    let version = match commit {
        Some(c) => format!("{pkg}+{c}"),
        None => pkg,
    };
    println!("cargo:rustc-env=MEDULLA_VERSION={version}");
    println!("cargo:rerun-if-changed=build.rs");
    for p in watched(Path::new(".")) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

/// The files whose change means HEAD moved, for the checkout at `root`: its HEAD (a
/// worktree's own), the branch's loose ref, or the directory it would appear in while the
/// ref is packed, and the packed refs. Only paths that exist.
pub fn watched(root: &Path) -> Vec<PathBuf> {
    let dot_git = root.join(".git");
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else {
        // A linked worktree's `.git` file names its git directory.
        let Some(p) = std::fs::read_to_string(&dot_git).ok().and_then(|t| {
            t.trim()
                .strip_prefix("gitdir:")
                .map(|p| PathBuf::from(p.trim()))
        }) else {
            return Vec::new();
        };
        if p.is_absolute() {
            p
        } else {
            root.join(p)
        }
    };
    // Refs live in the common directory a worktree's `commondir` names.
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) if Path::new(c.trim()).is_absolute() => PathBuf::from(c.trim()),
        Ok(c) => git_dir.join(c.trim()),
        Err(_) => git_dir.clone(),
    };
    let mut out = vec![git_dir.join("HEAD")];
    if let Ok(head) = std::fs::read_to_string(git_dir.join("HEAD")) {
        if let Some(r) = head.trim().strip_prefix("ref:") {
            let loose = common.join(r.trim());
            if loose.is_file() {
                out.push(loose);
            } else if let Some(dir) = loose
                .ancestors()
                .skip(1)
                .find(|d| d.is_dir() && d.starts_with(common.join("refs")))
            {
                // Packed (or no commit yet): a new loose ref shows in its directory.
                out.push(dir.to_path_buf());
            }
        }
    }
    out.push(common.join("packed-refs"));
    out.retain(|p| p.exists());
    out
}
