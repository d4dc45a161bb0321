//! Reading git repositories without running git: which commit HEAD names (loose refs,
//! packed refs, detached HEAD, linked worktrees) and a worktree's main repository.

use std::path::{Path, PathBuf};

/// The git directory of a checkout: `.git` itself, or the one a worktree's `.git` file
/// points at.
fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    if dot_git.is_file() {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let p = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
        Some(if p.is_absolute() { p } else { root.join(p) })
    } else {
        dot_git.is_dir().then_some(dot_git)
    }
}

/// The main repository of a linked worktree checkout (whose `.git` is a file):
/// `<main>/.git/worktrees/<name>` → `<main>`.
pub fn worktree_main(dir: &Path) -> Option<PathBuf> {
    if !dir.join(".git").is_file() {
        return None;
    }
    let gitdir = git_dir(dir)?;
    let dot_git = gitdir.parent()?.parent()?;
    (dot_git.file_name()? == ".git").then(|| dot_git.parent().map(Path::to_path_buf))?
}

/// The commit a repository's HEAD points at.
pub fn head(root: &Path) -> Option<String> {
    let git_dir = git_dir(root)?;
    // Refs live in the common dir, which a worktree names in `commondir`.
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => {
            let c = c.trim();
            if Path::new(c).is_absolute() {
                Path::new(c).to_path_buf()
            } else {
                git_dir.join(c)
            }
        }
        Err(_) => git_dir.clone(),
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let is_sha = |s: &str| s.len() >= 40 && s.chars().all(|c| c.is_ascii_hexdigit());
    let Some(reference) = head.strip_prefix("ref:").map(str::trim) else {
        return is_sha(head).then(|| head.to_string());
    };
    for dir in [&git_dir, &common] {
        if let Ok(s) = std::fs::read_to_string(dir.join(reference)) {
            let s = s.trim();
            if is_sha(s) {
                return Some(s.to_string());
            }
        }
    }
    let packed = std::fs::read_to_string(common.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (sha, name) = line.split_once(' ')?;
        (name.trim() == reference && is_sha(sha)).then(|| sha.to_string())
    })
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
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
        std::fs::write(wt_git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        assert_eq!(head(&wt).as_deref(), Some(other));
        assert_eq!(worktree_main(&wt).as_deref(), Some(root));
        assert_eq!(worktree_main(root), None, "a main checkout is no worktree");
        std::fs::write(wt_git.join("HEAD"), format!("{sha}\n")).unwrap();
        assert_eq!(head(&wt).as_deref(), Some(sha), "a detached HEAD");
    }
}
