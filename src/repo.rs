//! A project's identity (SPEC §3, §13): inside a git repository it is its history and
//! where it comes from, `repo:<root commit>@<remote>` (the smallest root commit of HEAD's
//! history, and the normalized URL of its `origin`, or its only remote), so a linked
//! worktree, a moved checkout and a second clone are aliases of one identity while a
//! template's children, a fork beside its upstream or the parts of a split monorepo,
//! which share history but not their remote, are projects of their own. An `origin`
//! that is a local path is the repository it points at (a clone of a clone on this
//! machine); a repository with no remote is `repo:<root commit>` alone; outside any
//! repository, and while a repository has no commit, the identity is the path.
//!
//! The root commit is the one thing read by running `git`; [`Repos`] keeps the identity
//! per repository (its common directory, checked by that directory's inode and its
//! config file's, so a directory replaced by another repository or a remote set anew is
//! read again) and remembers per caller root which `.git` entry answered, checked by one
//! `stat` of it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::git::{self, Checkout};

/// A repository as medulla and the team name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repo {
    /// `repo:<root commit>@<normalized remote>`, or `repo:<root commit>` with no remote.
    pub key: String,
    /// The normalized remote URL, or the main checkout's directory name.
    pub label: String,
}

/// The history part of a project's key, `repo:<root commit>`: what a template's children,
/// a fork and its upstream share, and what a checkout keeps when its remote moves.
pub fn history(key: &str) -> &str {
    key.split_once('@').map_or(key, |(h, _)| h)
}

/// How many local-path remotes are followed (a clone of a clone of …) before giving up.
const MAX_LOCAL_HOPS: usize = 8;

/// The path a remote URL names when it is a repository on this machine (`/abs`,
/// `file:///abs`, or relative to the checkout).
fn local_path(url: &str, c: &Checkout) -> Option<PathBuf> {
    let u = url.trim();
    let p = if let Some(rest) = u.strip_prefix("file://") {
        PathBuf::from(rest)
    } else if u.starts_with('/') {
        PathBuf::from(u)
    } else if u.starts_with("./") || u.starts_with("../") {
        c.toplevel.join(u)
    } else {
        return None;
    };
    Some(crate::roster::lexical_normal(&p))
}

/// Where a checkout's project comes from: its remote, normalized; a remote that is a
/// repository on this machine is followed to where that one comes from. `None`: no
/// remote (or one that leads nowhere readable).
fn project_remote(c: &Checkout) -> Option<String> {
    let mut c = c.clone();
    let mut seen = vec![c.common_dir.clone()];
    for _ in 0..MAX_LOCAL_HOPS {
        let url = git::remote_url(&c)?;
        let Some(path) = local_path(&url, &c) else {
            return Some(normalize_remote(&url));
        };
        let next = git::locate(&path)?;
        if seen.contains(&next.common_dir) {
            return None;
        }
        seen.push(next.common_dir.clone());
        c = next;
    }
    None
}

/// Where a path stands in its repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub checkout: Checkout,
    /// `None` while the repository has no commit (its identity is then its path).
    pub repo: Option<Repo>,
    /// The path relative to the checkout's top directory (empty at the top).
    pub rel: PathBuf,
}

impl Located {
    /// The directory in this checkout that stands where `subdir` stands in any other.
    pub fn at(&self, subdir: &str) -> PathBuf {
        if subdir.is_empty() {
            self.checkout.toplevel.clone()
        } else {
            self.checkout.toplevel.join(subdir)
        }
    }
}

/// The identity of the repository of a located checkout, or why it has none.
pub fn identify_checkout(c: &Checkout) -> Result<Option<Repo>, git::RootCommitError> {
    let Some(first) = git::root_commit(c)? else {
        return Ok(None);
    };
    let remote = project_remote(c);
    let key = match &remote {
        Some(r) => format!("repo:{first}@{r}"),
        None => format!("repo:{first}"),
    };
    let label = remote.unwrap_or_else(|| {
        c.main_toplevel()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    Ok(Some(Repo { key, label }))
}

/// The identity of the repository at `root` (the team's `share`), or why it has none.
pub fn identify(root: &Path) -> Result<Repo, String> {
    let no_commit = || {
        format!(
            "{} is not a git repository with a commit: a shared brain is identified by its repository's first commit and its remote; commit once, then share",
            root.display()
        )
    };
    let c = git::locate(root).ok_or_else(no_commit)?;
    identify_checkout(&c)
        .map_err(|e| e.to_string())?
        .ok_or_else(no_commit)
}

/// `git@host:org/repo.git`, `https://user@host/org/repo` and `ssh://git@host/org/repo/`
/// all become `host/org/repo`.
pub fn normalize_remote(url: &str) -> String {
    let u = url.trim();
    let (rest, scp) = match u.split_once("://") {
        Some((_, r)) => (r, false),
        None => (u, true),
    };
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let rest = if scp {
        rest.replacen(':', "/", 1)
    } else {
        rest.to_string()
    };
    let rest = rest.trim_end_matches('/');
    let rest = rest.strip_suffix(".git").unwrap_or(rest);
    match rest.split_once('/') {
        Some((host, path)) => {
            let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
            format!("{host}/{path}")
        }
        None => rest.to_ascii_lowercase(),
    }
}

/// A file's identity on disk: device and inode (its path's, for a directory replaced).
#[cfg(unix)]
fn stamp(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn stamp(p: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(p).ok().map(|_| (0, 0))
}

/// A file's identity on disk, when it could be read.
type FileStamp = Option<(u64, u64)>;

/// A repository's stamp: its common directory's and its config file's.
type RepoStamp = (FileStamp, FileStamp);

/// A repository's stamp: its common directory's and its config file's.
fn repo_stamp(common: &Path) -> RepoStamp {
    (stamp(common), stamp(&common.join("config")))
}

/// What is known of one repository, by its common directory.
#[derive(Debug, Clone)]
struct Known {
    /// The common directory's identity on disk and its config file's (rewritten, so a
    /// new inode, whenever a remote is added, removed or set anew).
    stamp: RepoStamp,
    /// `None`: no commit when last read; read again once HEAD names one.
    repo: Option<Repo>,
}

/// Which checkout a caller root was found in.
#[derive(Debug, Clone)]
struct Seen {
    dot_git: PathBuf,
    stamp: Option<(u64, u64)>,
    checkout: Checkout,
}

/// The most caller roots and repositories remembered; past it the memory starts over.
const MAX_REMEMBERED: usize = 4096;

/// What a cached lookup found.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// Not inside any git repository.
    Outside,
    Found(Located),
    /// Inside a checkout whose repository's identity must be read with `git` (on a
    /// thread that may block): [`Repos::identify`].
    Unread(Checkout),
}

/// Repository identities by common directory, and checkouts by caller root.
#[derive(Debug, Default)]
pub struct Repos {
    known: Mutex<HashMap<PathBuf, Known>>,
    seen: Mutex<HashMap<PathBuf, Seen>>,
    /// Paths found in no repository, and when: looked at again after [`OUTSIDE_FOR`]
    /// (a `git init` is noticed within it).
    outside: Mutex<HashMap<PathBuf, Instant>>,
}

/// How long a path found in no repository is taken to be in none.
const OUTSIDE_FOR: Duration = Duration::from_secs(2);

impl Repos {
    /// The checkout `path` is in, from memory when the `.git` entry that answered last
    /// time is still the same file.
    fn checkout(&self, path: &Path) -> Option<Checkout> {
        if let Some(s) = self.seen.lock().expect("repos lock").get(path) {
            if stamp(&s.dot_git) == s.stamp {
                return Some(s.checkout.clone());
            }
        }
        if let Some(at) = self.outside.lock().expect("repos lock").get(path) {
            if at.elapsed() < OUTSIDE_FOR {
                return None;
            }
        }
        let Some(c) = git::locate(path) else {
            let mut outside = self.outside.lock().expect("repos lock");
            if outside.len() >= MAX_REMEMBERED {
                outside.clear();
            }
            outside.insert(path.to_path_buf(), Instant::now());
            return None;
        };
        let dot_git = c.toplevel.join(".git");
        let mut seen = self.seen.lock().expect("repos lock");
        if seen.len() >= MAX_REMEMBERED {
            seen.clear();
        }
        seen.insert(
            path.to_path_buf(),
            Seen {
                stamp: stamp(&dot_git),
                dot_git,
                checkout: c.clone(),
            },
        );
        Some(c)
    }

    /// Where `path` stands, without running anything that may block for long: a
    /// repository never read (or changed since) comes back [`Lookup::Unread`].
    pub fn lookup(&self, path: &Path) -> Lookup {
        let Some(c) = self.checkout(path) else {
            return Lookup::Outside;
        };
        let known = self
            .known
            .lock()
            .expect("repos lock")
            .get(&c.common_dir)
            .cloned();
        match known {
            Some(k) if k.stamp == repo_stamp(&c.common_dir) => {
                // A repository with no commit is read again once HEAD names one.
                if k.repo.is_none() && git::head_of(&c).is_some() {
                    return Lookup::Unread(c);
                }
                Lookup::Found(located(path, c, k.repo))
            }
            _ => Lookup::Unread(c),
        }
    }

    /// Read a checkout's repository identity with `git` (blocking) and remember it.
    pub fn identify(&self, path: &Path, c: Checkout) -> Result<Located, git::RootCommitError> {
        let repo = identify_checkout(&c)?;
        let mut known = self.known.lock().expect("repos lock");
        if known.len() >= MAX_REMEMBERED {
            known.clear();
        }
        known.insert(
            c.common_dir.clone(),
            Known {
                stamp: repo_stamp(&c.common_dir),
                repo: repo.clone(),
            },
        );
        Ok(located(path, c, repo))
    }

    /// [`Repos::identify`], a failure logged and answered as no identity (the path
    /// stands for it).
    pub fn resolve_checkout(&self, path: &Path, c: Checkout) -> Option<Located> {
        match self.identify(path, c) {
            Ok(l) => Some(l),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "a repository's identity could not be read: its path stands for it");
                None
            }
        }
    }

    /// [`Repos::lookup`], then [`Repos::identify`] when needed: for blocking threads.
    pub fn resolve(&self, path: &Path) -> Option<Located> {
        match self.lookup(path) {
            Lookup::Outside => None,
            Lookup::Found(l) => Some(l),
            Lookup::Unread(c) => self.resolve_checkout(path, c),
        }
    }
}

fn located(path: &Path, checkout: Checkout, repo: Option<Repo>) -> Located {
    let rel = path
        .strip_prefix(&checkout.toplevel)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    Located {
        checkout,
        repo,
        rel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remotes_of_one_repository_normalize_alike() {
        for u in [
            "git@GitHub.com:acme/widgets.git",
            "https://alice@github.com/acme/widgets",
            "ssh://git@github.com:22/acme/widgets/",
            "https://github.com/acme/widgets.git",
        ] {
            assert_eq!(normalize_remote(u), "github.com/acme/widgets", "{u}");
        }
    }
}
