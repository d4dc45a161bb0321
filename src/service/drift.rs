//! Marking rows whose anchored evidence has changed or disappeared since the claim was
//! written, on every surface where rows appear. A file is read only for a caller who may
//! see that brain: the brain the request is routed to (its own claims, and medulla copies
//! whose witness lives there), or the founder. Never another project's files for a caller
//! not routed there.

use std::path::{Path, PathBuf};

use super::route::{RouteInput, Routed};
use super::rows::{Row, StoreTier};
use super::Service;

/// Mark rows of one project brain whose root is `root` (canonical). A row is judged in
/// the caller's own `checkout` of the brain (a worktree, a clone) when every file it
/// anchors exists there, else in the brain's first checkout that exists (its root, unless
/// it moved); a row judged elsewhere than the caller's checkout says where.
pub async fn mark_brain(svc: &Service, root: &str, checkout: Option<&Path>, rows: &mut [Row]) {
    let todo: Vec<(usize, Vec<brains::Anchor>)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.anchors.is_empty())
        .map(|(i, r)| (i, r.anchors.clone()))
        .collect();
    if todo.is_empty() {
        return;
    }
    let cache = svc.anchors.clone();
    let fallback = svc
        .owner
        .registry
        .manifest(&crate::roster::fingerprint(root))
        .map(|m| m.live_checkout())
        .unwrap_or_else(|| PathBuf::from(root));
    let caller = checkout.map(Path::to_path_buf);
    let root_path = PathBuf::from(root);
    let now = svc.now().ms;
    let checked = tokio::task::spawn_blocking(move || {
        let here = caller.as_ref().filter(|c| c.is_dir());
        // Rows grouped by the checkout each is judged in.
        let mut by_place: Vec<(PathBuf, Vec<usize>)> = Vec::new();
        for (n, (_, anchors)) in todo.iter().enumerate() {
            let at = here
                .filter(|c| anchors.iter().all(|a| c.join(&a.path).exists()))
                .unwrap_or(&fallback);
            match by_place.iter_mut().find(|(p, _)| p == at) {
                Some((_, v)) => v.push(n),
                None => by_place.push((at.clone(), vec![n])),
            }
        }
        let mut out = Vec::new();
        for (at, members) in by_place {
            let lists: Vec<&[brains::Anchor]> =
                members.iter().map(|&n| todo[n].1.as_slice()).collect();
            let changes = cache.check_many(&at, &lists, now);
            let elsewhere = match &caller {
                Some(c) => c != &at,
                None => at != root_path,
            };
            let judged_in = elsewhere.then(|| at.to_string_lossy().into_owned());
            for (n, ch) in members.into_iter().zip(changes) {
                out.push((todo[n].0, ch, judged_in.clone()));
            }
        }
        out
    })
    .await;
    match checked {
        Ok(found) => {
            for (i, changes, judged_in) in found {
                rows[i].evidence_changed = changes;
                rows[i].judged_in = judged_in;
            }
        }
        Err(e) => tracing::warn!(error = %e, "checking evidence anchors panicked"),
    }
}

/// Mark rows of any tier as the caller may see them: project rows from the routed brain,
/// medulla copies whose witness is in the routed brain; for the founder, any registered
/// brain's.
pub async fn mark(svc: &Service, routed: &Routed, input: &RouteInput, rows: &mut [Row]) {
    let routed_root = routed.brain.as_ref().map(|b| b.root.clone());
    let mut roots: Vec<String> = Vec::new();
    for r in rows.iter() {
        if r.anchors.is_empty() || r.state == Some(brains::ClaimState::Outdated) {
            continue;
        }
        let root = match r.tier {
            StoreTier::Project => routed_root.clone(),
            StoreTier::Medulla | StoreTier::Team => Some(r.origin_brain.clone()),
        };
        if let Some(root) = root {
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
    }
    for root in roots {
        let visible = routed_root.as_deref() == Some(root.as_str())
            || (input.founder
                && svc
                    .owner
                    .registry
                    .all_manifests()
                    .iter()
                    .any(|m| m.root == root));
        if !visible {
            continue;
        }
        let mut idx = Vec::new();
        let mut mine: Vec<Row> = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let r_root = match r.tier {
                StoreTier::Project => routed_root.as_deref(),
                StoreTier::Medulla | StoreTier::Team => Some(r.origin_brain.as_str()),
            };
            let live = r.state != Some(brains::ClaimState::Outdated);
            if r_root == Some(root.as_str()) && !r.anchors.is_empty() && live {
                idx.push(i);
                mine.push(r.clone());
            }
        }
        let checkout = routed
            .checkout
            .as_deref()
            .filter(|_| routed_root.as_deref() == Some(root.as_str()));
        mark_brain(svc, &root, checkout, &mut mine).await;
        for (i, r) in idx.into_iter().zip(mine) {
            rows[i].evidence_changed = r.evidence_changed;
        }
    }
}
