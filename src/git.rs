//! Reading git repositories: the checkout a path is in (its top directory, its git
//! directory, the common directory a linked worktree shares with its main checkout),
//! which commit HEAD names (loose refs, packed refs, detached HEAD, linked worktrees),
//! and a repository's root commits, its identity (SPEC §3, §13), which is the one thing
//! read by running `git`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The working tree a path is in, and the repository behind it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Checkout {
    /// The working tree's top directory, where `.git` is.
    pub toplevel: PathBuf,
    /// This checkout's git directory: `.git`, or `<common>/worktrees/<name>` for a
    /// linked worktree.
    pub git_dir: PathBuf,
    /// The repository's common directory, shared by every worktree of it.
    pub common_dir: PathBuf,
}

impl Checkout {
    /// A linked worktree (`git worktree add`), not the repository's main checkout.
    pub fn is_linked(&self) -> bool {
        self.git_dir != self.common_dir
    }

    /// The repository's main checkout: the directory holding a common dir named `.git`;
    /// this checkout's own top directory when the repository is bare or a submodule.
    pub fn main_toplevel(&self) -> PathBuf {
        if self.is_linked() && self.common_dir.file_name().is_some_and(|n| n == ".git") {
            if let Some(main) = self.common_dir.parent() {
                return main.to_path_buf();
            }
        }
        self.toplevel.clone()
    }
}

/// The git directory `.git` at `dir` names: the directory itself, or the one a
/// worktree's (or submodule's) `.git` file points at.
fn git_dir_at(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    let meta = std::fs::metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git);
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let p = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
    let p = if p.is_absolute() { p } else { dir.join(p) };
    Some(crate::roster::lexical_normal(&p))
}

/// The common directory of a git directory: the one its `commondir` file names; else,
/// for `<dir>/worktrees/<name>`, `<dir>`; else itself.
fn common_dir_of(git_dir: &Path) -> PathBuf {
    match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => {
            let c = Path::new(c.trim());
            crate::roster::lexical_normal(&if c.is_absolute() {
                c.to_path_buf()
            } else {
                git_dir.join(c)
            })
        }
        Err(_) => git_dir
            .parent()
            .filter(|p| p.file_name().is_some_and(|n| n == "worktrees"))
            .and_then(Path::parent)
            .map_or_else(|| git_dir.to_path_buf(), Path::to_path_buf),
    }
}

/// The checkout whose top directory is `dir` itself.
pub fn checkout_at(dir: &Path) -> Option<Checkout> {
    let git_dir = git_dir_at(dir)?;
    Some(Checkout {
        toplevel: dir.to_path_buf(),
        common_dir: common_dir_of(&git_dir),
        git_dir,
    })
}

/// The checkout `path` is in: the nearest ancestor (itself included) holding `.git`.
/// Reads one `.git` entry per ancestor until it finds one, then at most that entry and
/// its `commondir`.
pub fn locate(path: &Path) -> Option<Checkout> {
    path.ancestors().find_map(checkout_at)
}

/// The main repository of a linked worktree (its checkout, or any directory inside it):
/// `<main>/.git/worktrees/<name>` → `<main>`. The same [`locate`] routing uses.
pub fn worktree_main(dir: &Path) -> Option<PathBuf> {
    locate(dir)
        .filter(Checkout::is_linked)
        .map(|c| c.main_toplevel())
}

fn is_sha(s: &str) -> bool {
    s.len() >= 40 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// The commit a checkout's HEAD points at.
pub fn head(root: &Path) -> Option<String> {
    let c = checkout_at(root)?;
    head_of(&c)
}

/// The commit a located checkout's HEAD points at; `None` while it has no commit.
pub fn head_of(c: &Checkout) -> Option<String> {
    let head = std::fs::read_to_string(c.git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let Some(reference) = head.strip_prefix("ref:").map(str::trim) else {
        return is_sha(head).then(|| head.to_string());
    };
    // Refs live in the common dir; a worktree's own refs (bisect, rewritten) in its own.
    for dir in [&c.git_dir, &c.common_dir] {
        if let Ok(s) = std::fs::read_to_string(dir.join(reference)) {
            let s = s.trim();
            if is_sha(s) {
                return Some(s.to_string());
            }
        }
    }
    let packed = std::fs::read_to_string(c.common_dir.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (sha, name) = line.split_once(' ')?;
        (name.trim() == reference && is_sha(sha)).then(|| sha.to_string())
    })
}

/// Why a repository's root commit could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RootCommitError {
    #[error("git could not be run ({0}): install git, or put it on the PATH")]
    NoGit(String),
    #[error("git could not read the repository at {path}: {detail}")]
    Unreadable { path: String, detail: String },
}

/// The smallest root commit of HEAD's history (a repository's identity, as the team
/// computes it); `Ok(None)` while HEAD has no commit.
pub fn root_commit(c: &Checkout) -> Result<Option<String>, RootCommitError> {
    if head_of(c).is_none() {
        return Ok(None);
    }
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(&c.git_dir)
        .args(["rev-list", "--max-parents=0", "HEAD"])
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .map_err(|e| RootCommitError::NoGit(e.to_string()))?;
    if !out.status.success() {
        return Err(RootCommitError::Unreadable {
            path: c.toplevel.display().to_string(),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| is_sha(l))
        .min()
        .map(str::to_string))
}

/// The repository's remotes (`[remote "NAME"] url = …` in its config, read from the
/// file), in the order the file names them.
pub fn remotes(c: &Checkout) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(c.common_dir.join("config")) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            let compact = line.replace(char::is_whitespace, "");
            current = compact
                .strip_prefix("[remote\"")
                .and_then(|r| r.strip_suffix("\"]"))
                .map(str::to_string);
        } else if let Some(name) = &current {
            if let Some((k, v)) = line.split_once('=') {
                let v = v.trim();
                if k.trim() == "url" && !v.is_empty() && !out.iter().any(|(n, _)| n == name) {
                    out.push((name.clone(), v.to_string()));
                }
            }
        }
    }
    out
}

/// Where the repository comes from: its `origin`, else its only remote (none when it has
/// several and no `origin`: none of them says it more than another).
pub fn remote_url(c: &Checkout) -> Option<String> {
    let all = remotes(c);
    if let Some((_, u)) = all.iter().find(|(n, _)| n == "origin") {
        return Some(u.clone());
    }
    match all.as_slice() {
        [(_, u)] => Some(u.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_reads_loose_packed_and_worktree_refs() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let other = "89abcdef0123456789abcdef0123456789abcdef";
        assert_eq!(head(root), None, "not a repository");
        std::fs::create_dir_all(root.join(".git/refs/heads")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            root.join(".git/packed-refs"),
            format!("# pack-refs with: peeled\n{sha} refs/heads/main\n"),
        )
        .unwrap();
        assert_eq!(head(root).as_deref(), Some(sha), "packed ref");
        std::fs::write(root.join(".git/refs/heads/main"), format!("{other}\n")).unwrap();
        assert_eq!(
            head(root).as_deref(),
            Some(other),
            "a loose ref wins over a packed one"
        );
        // A linked worktree: `.git` is a file; HEAD is per worktree, refs are shared.
        let wt = root.join("wt");
        let wt_git = root.join(".git/worktrees/wt");
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::create_dir_all(wt.join("src/deep")).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
        std::fs::write(wt_git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        assert_eq!(head(&wt).as_deref(), Some(other));
        assert_eq!(worktree_main(&wt).as_deref(), Some(root));
        assert_eq!(
            worktree_main(&wt.join("src/deep")).as_deref(),
            Some(root),
            "a directory inside a worktree belongs to its main repository too"
        );
        assert_eq!(worktree_main(root), None, "a main checkout is no worktree");
        let c = locate(&wt.join("src/deep")).unwrap();
        assert_eq!(c.toplevel, wt);
        assert_eq!(c.common_dir, root.join(".git"));
        assert!(c.is_linked());
        std::fs::write(wt_git.join("HEAD"), format!("{sha}\n")).unwrap();
        assert_eq!(head(&wt).as_deref(), Some(sha), "a detached HEAD");
    }

    #[test]
    fn origin_is_read_from_the_common_config_else_the_only_remote() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".git")).unwrap();
        let config = |remotes: &str| {
            std::fs::write(
                d.path().join(".git/config"),
                format!("[core]\n\tbare = false\n{remotes}"),
            )
            .unwrap();
            checkout_at(d.path()).unwrap()
        };
        let c = config("[remote \"upstream\"]\n\turl = x\n[remote \"origin\"]\n\turl = git@example.org:acme/shop.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n");
        assert_eq!(
            remote_url(&c).as_deref(),
            Some("git@example.org:acme/shop.git")
        );
        assert_eq!(remotes(&c).len(), 2);
        let only = config("[remote \"mine\"]\n\turl = https://example.org/alice/shop\n");
        assert_eq!(
            remote_url(&only).as_deref(),
            Some("https://example.org/alice/shop")
        );
        let two = config("[remote \"a\"]\n\turl = x\n[remote \"b\"]\n\turl = y\n");
        assert_eq!(
            remote_url(&two),
            None,
            "several and no origin: none says it"
        );
        assert_eq!(remote_url(&config("")), None);
    }
}
