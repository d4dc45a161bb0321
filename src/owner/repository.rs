//! A brain's repository (SPEC §3): what the owner records in its manifest when a brain is
//! bootstrapped, when its repository is first identified (a brain from before the rule,
//! a repository's first commit), and when a checkout of it asks for the first time.
//!
//! Architecture invariant: only the owner actor writes a manifest's repository and
//! checkouts; the act that records a new checkout is written by the brain's own actor.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ractor::ActorRef;

use super::{OwnerMsg, OwnerState, Registry};
use crate::error::{OwnerError, Result};
use crate::roster::{self, CheckoutSeen, Manifest, RepoBinding};
use crate::store_id::Fingerprint;

/// What a request taught about a brain's repository, for the owner to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learned {
    pub fp: Fingerprint,
    /// Its repository's identity, first known now.
    pub repo: Option<RepoBinding>,
    /// A checkout (the brain's root as it stands there) that asked for the first time.
    pub checkout: Option<String>,
    /// A checkout of the brain whose project identity is now another: its remote moved.
    pub moved: Option<Moved>,
    /// Checkouts recorded before a project was its history and its remote, identified
    /// now: (path, its project's key, whether that is another project than the brain's).
    pub identified: Vec<(String, String, bool)>,
}

impl Learned {
    /// Nothing learned yet of the brain `fp`.
    pub fn of(fp: Fingerprint) -> Learned {
        Learned {
            fp,
            repo: None,
            checkout: None,
            moved: None,
            identified: Vec::new(),
        }
    }
}

/// A checkout's project identity, recorded anew: the checkout keeps its brain (SPEC §3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The checkout (the brain's root as it stands there); `None`: the brain's own root,
    /// whose identity is the brain's.
    pub checkout: Option<String>,
    pub from: String,
    pub key: String,
    pub label: String,
}

/// What the owner recorded of a [`Learned`]: the acts the brain's log is owed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recorded {
    /// The checkout it names was new to the brain.
    pub new_checkout: bool,
    /// A checkout's identity was recorded anew.
    pub moved: bool,
    /// Checkouts found to be another project's, served before projects sharing history
    /// were told apart.
    pub foreign: Vec<(String, String)>,
}

impl OwnerState {
    /// Create a brain for a canonical root (idempotent): its manifest records the
    /// repository it belongs to, and whether it is a checkout's own.
    pub(super) async fn bootstrap(
        &mut self,
        me: &ActorRef<OwnerMsg>,
        root: &Path,
        repo: Option<RepoBinding>,
        own: bool,
    ) -> Result<(Manifest, bool)> {
        let root_s = root.to_string_lossy().into_owned();
        let fp = roster::fingerprint(&root_s);
        if let Some(m) = self.registry().manifest(&fp) {
            return Ok((m, false));
        }
        let dir = self.brain_dir(&fp);
        if let Ok(m) = roster::read_manifest(&dir) {
            self.registry()
                .manifests_mut(|ms| ms.insert(fp.clone(), m.clone()));
            return Ok((m, false));
        }
        let mut m = Manifest::new(root_s, self.handle.opts.clock.now_ms());
        m.repo = repo;
        m.own = own;
        roster::write_manifest(&dir, &m).map_err(|e| {
            OwnerError::Internal(format!("cannot write manifest in {}: {e}", dir.display()))
        })?;
        self.registry()
            .manifests_mut(|ms| ms.insert(fp.clone(), m.clone()));
        // Warm it now, beside the supervisor: its first request need not wait.
        self.load(me, &fp)?;
        tracing::info!(brain = %fp, root = %m.root, repo = ?m.repo.as_ref().map(|r| &r.key), own, "brain bootstrapped");
        Ok((m, true))
    }

    /// Record what a request learned. Replies what the brain's log is owed (a checkout
    /// new to the brain, an identity recorded anew: their acts are the caller's to
    /// write).
    pub(super) fn learn(&mut self, l: Learned) -> Result<Recorded> {
        let registry = self.registry();
        let mut guard = registry.manifests.write().expect("registry lock");
        let manifests = Arc::make_mut(&mut guard);
        let Some(m) = manifests.get_mut(&l.fp) else {
            return Ok(Recorded::default());
        };
        let mut changed = false;
        let mut moved = false;
        if let Some(mv) = &l.moved {
            match &mv.checkout {
                None => {
                    if let Some(r) = m.repo.as_mut().filter(|r| r.key != mv.key) {
                        tracing::info!(brain = %l.fp, from = %r.key, to = %mv.key, "a brain's project identity recorded anew");
                        r.key = mv.key.clone();
                        r.label = mv.label.clone();
                        moved = true;
                    }
                }
                Some(path) => {
                    if let Some(c) = m
                        .checkouts
                        .iter_mut()
                        .find(|c| &c.path == path && c.key.as_deref() != Some(mv.key.as_str()))
                    {
                        tracing::info!(brain = %l.fp, checkout = %path, to = %mv.key, "a checkout's project identity recorded anew");
                        c.key = Some(mv.key.clone());
                        moved = true;
                    }
                }
            }
            changed |= moved;
        }
        let mut foreign = Vec::new();
        for (path, key, other) in &l.identified {
            if let Some(c) = m
                .checkouts
                .iter_mut()
                .find(|c| &c.path == path && c.key.is_none())
            {
                c.key = Some(key.clone());
                c.foreign = *other;
                if *other {
                    tracing::warn!(brain = %l.fp, checkout = %path, project = %key, "a brain served another project's checkout before projects sharing history were told apart");
                    foreign.push((path.clone(), key.clone()));
                }
                changed = true;
            }
        }
        if let (None, Some(repo)) = (&m.repo, l.repo) {
            tracing::info!(brain = %l.fp, key = %repo.key, "a brain's repository identified");
            m.repo = Some(repo);
            changed = true;
        }
        let new_checkout = match l.checkout {
            Some(path) if !m.knows_checkout(&path) => {
                tracing::info!(brain = %l.fp, checkout = %path, "a new checkout of a brain's repository");
                let key = m.repo.as_ref().map(|r| r.key.clone());
                m.checkouts.push(CheckoutSeen::new(
                    path,
                    self.handle.opts.clock.now_ms(),
                    key,
                ));
                changed = true;
                true
            }
            _ => false,
        };
        if changed {
            let dir = self.config().brains_dir().join(&l.fp);
            roster::write_manifest(&dir, m).map_err(|e| {
                OwnerError::Internal(format!("cannot write manifest in {}: {e}", dir.display()))
            })?;
            registry.changed();
        }
        Ok(Recorded {
            new_checkout,
            moved,
            foreign,
        })
    }
}

/// Write a brain's manifest into its directory under `dirs`.
fn write_manifest(dirs: &std::path::Path, m: &Manifest) -> Result<()> {
    roster::write_manifest(&dirs.join(&m.fingerprint), m)
        .map_err(|e| OwnerError::Internal(format!("cannot write the manifest of {}: {e}", m.root)))
}

impl OwnerState {
    /// `from` was merged into `into`: `from` is never routed to again, and its checkouts
    /// (its root first) are `into`'s now.
    pub(super) fn merged(&mut self, from: &Fingerprint, into: &Fingerprint) -> Result<Manifest> {
        let registry = self.registry();
        let now = self.handle.opts.clock.now_ms();
        let mut guard = registry.manifests.write().expect("registry lock");
        let manifests = Arc::make_mut(&mut guard);
        let (Some(f), Some(_)) = (manifests.get(from).cloned(), manifests.get(into)) else {
            return Err(OwnerError::UnknownBrain {
                name: from.to_string(),
            });
        };
        let dirs = self.config().brains_dir();
        let write = |m: &Manifest| write_manifest(&dirs, m);
        let target = manifests.get_mut(into).expect("looked up above");
        for path in f.checkout_paths() {
            if !target.knows_checkout(path) {
                let key = target.repo.as_ref().map(|r| r.key.clone());
                target
                    .checkouts
                    .push(CheckoutSeen::new(path.to_string(), now, key));
            }
        }
        if target.repo.is_none() {
            target.repo = f.repo.clone();
        }
        write(target)?;
        let target = target.clone();
        let source = manifests.get_mut(from).expect("looked up above");
        source.merged_into = Some(target.root.clone());
        write(source)?;
        registry.changed();
        Ok(target)
    }
}

impl OwnerState {
    /// `paths`, checkouts of another project (`key`) that `from` served before projects
    /// sharing history were told apart, are `into`'s now: they leave `from`'s manifest
    /// and are recorded in `into`'s as that project's.
    pub(super) fn separated(
        &mut self,
        from: &Fingerprint,
        into: &Fingerprint,
        paths: &[String],
        key: &str,
    ) -> Result<Manifest> {
        let registry = self.registry();
        let now = self.handle.opts.clock.now_ms();
        let mut guard = registry.manifests.write().expect("registry lock");
        let manifests = Arc::make_mut(&mut guard);
        if !manifests.contains_key(from) || !manifests.contains_key(into) {
            return Err(OwnerError::UnknownBrain {
                name: from.to_string(),
            });
        }
        let dirs = self.config().brains_dir();
        let write = |m: &Manifest| write_manifest(&dirs, m);
        let source = manifests.get_mut(from).expect("looked up above");
        source.checkouts.retain(|c| !paths.contains(&c.path));
        write(source)?;
        let target = manifests.get_mut(into).expect("looked up above");
        for path in paths {
            if !target.knows_checkout(path) {
                let mut seen = CheckoutSeen::new(path.clone(), now, Some(key.to_string()));
                seen.foreign = target.repo.as_ref().is_some_and(|r| r.key != key);
                target.checkouts.push(seen);
            }
        }
        write(target)?;
        let target = target.clone();
        registry.changed();
        Ok(target)
    }
}

/// Identify, beside the supervisor, what brains from before the rules are missing: the
/// repository of a brain that has none yet (bootstrapped before brains belonged to
/// repositories), the remote in the identity of a brain identified by its history alone,
/// and the project of each checkout recorded before a project was its history and its
/// remote (another project's is marked, never routed by its path again, and listed by
/// doctor). Each repository is read once, on the blocking pool; routing through
/// repositories waits for this pass. What it records goes through the same path as a
/// request's (acts in each brain's log).
pub(super) fn identify_all<F>(
    me: ActorRef<OwnerMsg>,
    registry: Arc<Registry>,
    record: impl Fn(Learned) -> F + Send + 'static,
    timeout: Duration,
) where
    F: std::future::Future<Output = Result<()>> + Send,
{
    tokio::spawn(async move {
        let all: Vec<Manifest> = registry
            .all_manifests()
            .into_iter()
            .filter(|m| m.merged_into.is_none())
            .collect();
        let repos = registry.repos.clone();
        let found = tokio::task::spawn_blocking(move || {
            all.into_iter()
                .filter_map(|m| identified(&repos, &m))
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        for l in found {
            let first = l.repo.is_some();
            let recorded = if first {
                crate::call::call_actor(&me, "owner", timeout, |reply| OwnerMsg::Learn {
                    learned: l,
                    reply,
                })
                .await
                .and_then(|r| r)
                .map(|_| ())
            } else {
                record(l).await
            };
            if let Err(e) = recorded {
                tracing::warn!(error = %e, "a brain's repository could not be recorded");
            }
        }
        registry.identified.send_replace(true);
    });
}

/// What is to be recorded of one brain at start (blocking: it may run `git`).
fn identified(repos: &crate::repo::Repos, m: &Manifest) -> Option<Learned> {
    let Some(mine) = &m.repo else {
        let repo = binding_of(repos, Path::new(&m.root))?;
        return Some(Learned {
            repo: Some(repo),
            ..Learned::of(m.fingerprint.clone())
        });
    };
    let mut l = Learned::of(m.fingerprint.clone());
    let mut key = mine.key.clone();
    if let Some(now) = binding_of(repos, Path::new(&m.root)) {
        if now.key != mine.key && crate::repo::history(&now.key) == crate::repo::history(&mine.key)
        {
            l.moved = Some(Moved {
                checkout: None,
                from: mine.key.clone(),
                key: now.key.clone(),
                label: now.label.clone(),
            });
            key = now.key;
        }
    }
    for c in m.checkouts.iter().filter(|c| c.key.is_none() && !c.foreign) {
        if let Some(there) = binding_of(repos, Path::new(&c.path)) {
            let other = there.key != key;
            l.identified.push((c.path.clone(), there.key, other));
        }
    }
    (l.moved.is_some() || !l.identified.is_empty()).then_some(l)
}

/// The repository `root` belongs to, as a brain rooted there records it: `None` outside
/// a repository, or while it has no commit. Blocking (it may run `git`).
pub fn binding_of(repos: &crate::repo::Repos, root: &Path) -> Option<RepoBinding> {
    let l = repos.resolve(root)?;
    let repo = l.repo?;
    Some(RepoBinding {
        key: repo.key,
        label: repo.label,
        subdir: l.rel.to_string_lossy().into_owned(),
    })
}
