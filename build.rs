//! Build metadata: `MEDULLA_VERSION` is the package version with the commit it was built
//! from (`0.1.0+1a2b3c4d5e6f`), so a client can tell a rebuilt binary from the owner that
//! runs an older one (`medulla status`, `/api/health`).

use std::path::Path;
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
    // Run again when HEAD moves (a commit, a checkout); a worktree's `.git` is a file,
    // and then any change to the package runs this again, which costs one `git` call.
    let git = Path::new(".git");
    if git.is_dir() {
        println!("cargo:rerun-if-changed=.git/HEAD");
        if let Ok(head) = std::fs::read_to_string(git.join("HEAD")) {
            if let Some(r) = head.trim().strip_prefix("ref: ") {
                println!("cargo:rerun-if-changed=.git/{r}");
            }
        }
        println!("cargo:rerun-if-changed=.git/packed-refs");
    }
}
