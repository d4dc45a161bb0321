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

    /// Record what a request learned. Replies whether the checkout is new to the brain
    /// (its act is then the caller's to write).
    pub(super) fn learn(&mut self, l: Learned) -> Result<bool> {
        let registry = self.registry();
        let mut guard = registry.manifests.write().expect("registry lock");
        let manifests = Arc::make_mut(&mut guard);
        let Some(m) = manifests.get_mut(&l.fp) else {
            return Ok(false);
        };
        let mut changed = false;
        if let (None, Some(repo)) = (&m.repo, l.repo) {
            tracing::info!(brain = %l.fp, key = %repo.key, "a brain's repository identified");
            m.repo = Some(repo);
            changed = true;
        }
        let new_checkout = match l.checkout {
            Some(path) if !m.knows_checkout(&path) => {
                tracing::info!(brain = %l.fp, checkout = %path, "a new checkout of a brain's repository");
                m.checkouts.push(CheckoutSeen {
                    path,
                    first_seen: self.handle.opts.clock.now_ms(),
                });
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
        Ok(new_checkout)
    }
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
        let write = |m: &Manifest| {
            roster::write_manifest(&dirs.join(&m.fingerprint), m).map_err(|e| {
                OwnerError::Internal(format!("cannot write the manifest of {}: {e}", m.root))
            })
        };
        let target = manifests.get_mut(into).expect("looked up above");
        for path in f.checkout_paths() {
            if !target.knows_checkout(path) {
                target.checkouts.push(CheckoutSeen {
                    path: path.to_string(),
                    first_seen: now,
                });
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

/// Identify, beside the supervisor, every brain whose repository is not known yet (a
/// brain bootstrapped before brains belonged to repositories): each one's root is read
/// once, on the blocking pool. Routing through repositories waits for this pass.
pub(super) fn identify_all(me: ActorRef<OwnerMsg>, registry: Arc<Registry>, timeout: Duration) {
    tokio::spawn(async move {
        let unknown: Vec<Manifest> = registry
            .all_manifests()
            .into_iter()
            .filter(|m| m.repo.is_none())
            .collect();
        let repos = registry.repos.clone();
        let found = tokio::task::spawn_blocking(move || {
            unknown
                .into_iter()
                .filter_map(|m| {
                    let repo = binding_of(&repos, Path::new(&m.root))?;
                    Some(Learned {
                        fp: m.fingerprint,
                        repo: Some(repo),
                        checkout: None,
                    })
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        for l in found {
            let recorded = crate::call::call_actor(&me, "owner", timeout, |reply| {
                OwnerMsg::Learn { learned: l, reply }
            })
            .await
            .and_then(|r| r);
            if let Err(e) = recorded {
                tracing::warn!(error = %e, "a brain's repository could not be recorded");
            }
        }
        registry.identified.send_replace(true);
    });
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
