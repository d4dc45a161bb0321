//! `git` run with a fixed identity and no user or system configuration: how the benches
//! and the tests (which include this file) make the repositories they need.

use std::path::Path;
use std::process::Command;

/// Run `git ARGS` in `dir`; its error output when it fails.
pub fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=medulla test",
            "-c",
            "user.email=test@medulla.invalid",
        ])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .map_err(|e| format!("git could not be run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {args:?} in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
