//! Routing through the project (SPEC §3): when no registered root contains the caller
//! root, a checkout the brain served before serves it (its remote may have moved since),
//! else the brain of the caller's project (its history and its remote), so a linked
//! worktree, a moved checkout and a second clone on this machine reach the project's one
//! brain while projects that merely share history (a template's children, a fork and its
//! upstream) never reach each other's; and a registered root that now holds another
//! repository never serves it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::owner::repository::{Learned, Moved};
use crate::repo::{history, Located, Lookup, Repos};
use crate::roster::{Manifest, RepoBinding};

/// Where `path` stands in its repository: from memory, or read on the blocking pool the
/// first time a repository is met (reading its identity runs `git`).
pub async fn locate(repos: &Arc<Repos>, path: &Path) -> Option<Located> {
    match repos.lookup(path) {
        Lookup::Outside => None,
        Lookup::Found(l) => Some(l),
        Lookup::Unread(c) => {
            let (repos, p) = (repos.clone(), path.to_path_buf());
            tokio::task::spawn_blocking(move || repos.resolve_checkout(&p, c))
                .await
                .ok()
                .flatten()
        }
    }
}

/// The brain of a located caller's repository: among brains that are not a checkout's
/// own, the one whose root stands deepest on the caller's path (a sub-project's), the
/// oldest when several (brains that split before this rule: `brains merge` joins them).
pub fn brain_of<'a>(manifests: &[&'a Manifest], l: &Located) -> Option<&'a Manifest> {
    let key = &l.repo.as_ref()?.key;
    manifests
        .iter()
        .copied()
        .filter(|m| !m.own && m.merged_into.is_none())
        .filter_map(|m| {
            let r = m.repo.as_ref().filter(|r| &r.key == key)?;
            l.rel
                .starts_with(&r.subdir)
                .then(|| (m, Path::new(&r.subdir).components().count()))
        })
        .max_by(|(a, da), (b, db)| {
            da.cmp(db)
                .then(b.created.cmp(&a.created))
                .then(b.root.cmp(&a.root))
        })
        .map(|(m, _)| m)
}

/// A brain reached through a caller's repository, and what to record about it.
pub struct Reached {
    pub brain: Manifest,
    /// The brain's root as it stands in the caller's checkout.
    pub checkout: PathBuf,
    pub learned: Option<Learned>,
}

/// The brain of the repository `l` is in, with the checkout to record when the brain
/// has not served it before.
pub fn reach(manifests: &[&Manifest], l: &Located) -> Option<Reached> {
    let m = brain_of(manifests, l)?;
    let subdir = m.repo.as_ref().map(|r| r.subdir.as_str()).unwrap_or("");
    let checkout = l.at(subdir);
    let path = checkout.to_string_lossy().into_owned();
    let learned = (!m.knows_checkout(&path)).then(|| Learned {
        checkout: Some(path),
        ..Learned::of(m.fingerprint.clone())
    });
    Some(Reached {
        brain: m.clone(),
        checkout,
        learned,
    })
}

/// Is a registered root's directory now inside another repository than its brain's
/// (the root moved away and another repository took its place)? Such a root no longer
/// serves by its path. Another history makes another repository; the same history with
/// another remote is the brain's own checkout whose remote moved ([`root_moved`]).
pub fn root_taken(m: &Manifest, caller: &Located) -> bool {
    let (Some(mine), Some(there)) = (&m.repo, &caller.repo) else {
        return false;
    };
    history(&mine.key) != history(&there.key)
        && Path::new(&m.root).starts_with(&caller.checkout.toplevel)
}

/// A registered root whose project identity is now another with the same history (its
/// remote moved, or the brain was identified before a project was its remote too): the
/// root keeps its brain, and the brain's identity is recorded anew.
pub fn root_moved(m: &Manifest, caller: &Located) -> Option<Learned> {
    let (mine, there) = (m.repo.as_ref()?, caller.repo.as_ref()?);
    let same_place = Path::new(&m.root).starts_with(&caller.checkout.toplevel);
    (same_place && mine.key != there.key && history(&mine.key) == history(&there.key)).then(|| {
        Learned {
            moved: Some(Moved {
                checkout: None,
                from: mine.key.clone(),
                key: there.key.clone(),
                label: there.label.clone(),
            }),
            ..Learned::of(m.fingerprint.clone())
        }
    })
}

/// A checkout of its own project a brain served before that contains the caller (the
/// deepest), while the caller's history is still the brain's: it keeps its brain though
/// its remote moved since (the new identity then recorded). Another project's checkouts
/// the brain served before projects sharing history were told apart never count.
pub fn recorded(manifests: &[&Manifest], caller: &Path, l: &Located) -> Option<Reached> {
    let there = l.repo.as_ref()?;
    let (m, seen) = manifests
        .iter()
        .copied()
        .filter(|m| !m.own && m.merged_into.is_none())
        .filter(|m| {
            m.repo
                .as_ref()
                .is_some_and(|r| history(&r.key) == history(&there.key))
        })
        .flat_map(|m| m.checkouts.iter().map(move |c| (m, c)))
        .filter(|(_, c)| !c.foreign && caller.starts_with(&c.path))
        .max_by_key(|(_, c)| c.path.len())?;
    let was = seen
        .key
        .clone()
        .or_else(|| m.repo.as_ref().map(|r| r.key.clone()))
        .unwrap_or_default();
    let learned = (was != there.key).then(|| Learned {
        moved: Some(Moved {
            checkout: Some(seen.path.clone()),
            from: was,
            key: there.key.clone(),
            label: there.label.clone(),
        }),
        ..Learned::of(m.fingerprint.clone())
    });
    Some(Reached {
        brain: m.clone(),
        checkout: PathBuf::from(&seen.path),
        learned,
    })
}

/// A registered brain with no repository yet whose root is now in one (its first commit,
/// or `git init` after bootstrap): the identity to record.
pub fn first_identity(m: &Manifest, root: &Located) -> Option<Learned> {
    let repo = root.repo.as_ref()?;
    m.repo.is_none().then(|| Learned {
        repo: Some(RepoBinding {
            key: repo.key.clone(),
            label: repo.label.clone(),
            subdir: root.rel.to_string_lossy().into_owned(),
        }),
        ..Learned::of(m.fingerprint.clone())
    })
}
