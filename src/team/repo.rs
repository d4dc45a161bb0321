//! A repository's team identity: the hash of its root commit (the smallest, when
//! there are several), so clones at any path converge on one shared brain; the
//! normalized remote URL is its label.

use std::path::Path;
use std::process::Command;

/// A repository as the team knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// `repo:<root commit>`.
    pub key: String,
    /// The normalized `origin` URL, or the directory name.
    pub label: String,
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The identity of the repository at `root`, or why it has none.
pub fn identify(root: &Path) -> Result<Repo, String> {
    let roots = git(root, &["rev-list", "--max-parents=0", "HEAD"]).ok_or_else(|| {
        format!(
            "{} is not a git repository with a commit: a shared brain is identified by its repository's first commit; commit once, then share",
            root.display()
        )
    })?;
    let first = roots
        .lines()
        .map(str::trim)
        .filter(|l| l.len() >= 40 && l.chars().all(|c| c.is_ascii_hexdigit()))
        .min()
        .ok_or_else(|| format!("{} has no root commit", root.display()))?;
    let label = git(root, &["remote", "get-url", "origin"])
        .filter(|u| !u.is_empty())
        .map(|u| normalize_remote(&u))
        .unwrap_or_else(|| {
            root.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    Ok(Repo {
        key: format!("repo:{first}"),
        label,
    })
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

#[cfg(test)]
mod tests {
    use super::normalize_remote;

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
