//! The build script registers only files that exist (issue 65, item 6). Reported: after
//! `git gc` or `git pack-refs` (no loose ref), or in a fresh `git init` (no packed refs),
//! it registered a path that did not exist, so cargo ran it on every build and recompiled
//! the whole crate: ~10 minutes of release build each time with nothing changed.

use std::path::Path;

use crate::repository::git;

#[allow(dead_code)]
#[path = "../../build.rs"]
mod build_script;

fn names(root: &Path) -> Vec<String> {
    let watched = build_script::watched(root);
    for p in &watched {
        assert!(
            p.exists(),
            "a watched path that does not exist: {}",
            p.display()
        );
    }
    watched
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn the_build_script_watches_only_what_exists_and_what_moves_head() {
    let d = tempfile::tempdir().unwrap();
    let repo = std::fs::canonicalize(d.path()).unwrap().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    assert!(build_script::watched(&repo).is_empty(), "not a repository");

    // A fresh `git init`: no commit, no loose ref, no packed refs.
    git(&repo, &["init", "-q"]);
    let w = names(&repo);
    assert!(w.iter().any(|p| p.ends_with(".git/HEAD")), "{w:?}");
    assert!(
        w.iter().any(|p| p.ends_with(".git/refs/heads")),
        "where the ref will appear: {w:?}"
    );

    // A commit: the loose ref.
    std::fs::write(repo.join("f"), "x").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "one"]);
    let w = names(&repo);
    assert!(
        w.iter().any(|p| p.ends_with(".git/refs/heads/main")),
        "{w:?}"
    );

    // Packed, as after `git gc`: no loose ref; the packed refs and the refs directory.
    git(&repo, &["pack-refs", "--all"]);
    let w = names(&repo);
    assert!(w.iter().any(|p| p.ends_with(".git/packed-refs")), "{w:?}");
    assert!(w.iter().any(|p| p.ends_with(".git/refs/heads")), "{w:?}");

    // A linked worktree: its own HEAD, the common directory's refs.
    git(&repo, &["worktree", "add", "-q", "../wt"]);
    let wt = repo.parent().unwrap().join("wt");
    let w = names(&wt);
    assert!(
        w.iter().any(|p| p.ends_with(".git/worktrees/wt/HEAD")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|p| p.ends_with("refs/heads/wt") || p.ends_with("refs/heads")),
        "{w:?}"
    );
}
