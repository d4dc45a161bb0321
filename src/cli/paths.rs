//! Path arguments: the owner runs elsewhere, so every relative path a command takes is made
//! absolute against the working directory before it is sent.

use std::path::{Component, Path, PathBuf};

use anyhow::Context;

/// `p` as an absolute path: canonical when it exists (symlinks resolved); otherwise the
/// canonical form of its longest existing ancestor with the rest appended, `.` and `..`
/// folded, so `../out` never reaches the owner as a relative or dotted path.
pub fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    let p = expand_tilde(p);
    if let Ok(c) = std::fs::canonicalize(&p) {
        return Ok(c);
    }
    let joined = if p.is_absolute() {
        p
    } else {
        std::env::current_dir()
            .context("the working directory is gone: give an absolute path")?
            .join(p)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    // Resolve symlinks in the part that exists.
    let mut existing = out.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match existing.file_name() {
            Some(name) => {
                rest.push(name.to_owned());
                existing.pop();
            }
            None => break,
        }
    }
    let mut base = std::fs::canonicalize(&existing).unwrap_or(existing);
    for name in rest.into_iter().rev() {
        base.push(name);
    }
    Ok(base)
}

/// An existing path, made absolute; a missing one is an error naming it.
pub fn existing(p: &Path, what: &str) -> anyhow::Result<PathBuf> {
    let abs = absolute(p)?;
    anyhow::ensure!(abs.exists(), "{what} {} does not exist", abs.display());
    Ok(abs)
}

fn expand_tilde(p: &Path) -> PathBuf {
    let Ok(rest) = p.strip_prefix("~") else {
        return p.to_path_buf();
    };
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(rest),
        None => p.to_path_buf(),
    }
}

fn is_fingerprint(s: &str) -> bool {
    s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A `--brain` value: `medulla` and a 16-hex fingerprint pass as they are; anything else
/// is a root, made absolute (a directory of that name in the working directory wins over
/// a fingerprint it happens to spell).
pub fn brain(value: &str) -> anyhow::Result<String> {
    if value == "medulla" {
        return Ok(value.to_string());
    }
    let p = Path::new(value);
    if is_fingerprint(value) && !p.exists() {
        return Ok(value.to_string());
    }
    Ok(absolute(p)?.to_string_lossy().into_owned())
}

/// A store a person names: `medulla`, `team`, or a brain as [`brain`] reads it.
pub fn store(value: &str) -> anyhow::Result<String> {
    match value {
        "medulla" | "team" => Ok(value.to_string()),
        _ => brain(value),
    }
}

/// A letter's `repo`: a path (`.`, `..`, anything with a slash, `~`, or a name that
/// exists here) is made absolute; a bare name that is no path here (`m1nd`, `all`) is
/// left for the owner to match against registered roots.
pub fn repo(value: &str) -> anyhow::Result<String> {
    let p = Path::new(value);
    let looks_like_path =
        value.starts_with('.') || value.starts_with('~') || value.contains('/') || p.exists();
    if !looks_like_path || value.contains('(') {
        return Ok(value.to_string());
    }
    Ok(absolute(p)?.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_become_absolute_and_folded() {
        let cwd = std::env::current_dir().unwrap();
        let cwd = std::fs::canonicalize(cwd).unwrap();
        assert_eq!(absolute(Path::new(".")).unwrap(), cwd);
        let missing = absolute(Path::new("no-such-dir/../out/x")).unwrap();
        assert_eq!(missing, cwd.join("out/x"));
    }

    #[test]
    fn brain_names_that_are_not_paths_pass_through() {
        assert_eq!(brain("medulla").unwrap(), "medulla");
        assert_eq!(brain("0123456789abcdef").unwrap(), "0123456789abcdef");
        assert!(Path::new(&brain(".").unwrap()).is_absolute());
    }

    #[test]
    fn a_bare_repo_name_is_left_for_the_owner() {
        assert_eq!(repo("m1nd").unwrap(), "m1nd");
        assert_eq!(repo("all").unwrap(), "all");
        assert_eq!(
            repo("(research task, no repo)").unwrap(),
            "(research task, no repo)"
        );
        assert!(Path::new(&repo(".").unwrap()).is_absolute());
        assert!(Path::new(&repo("../x").unwrap()).is_absolute());
    }
}
