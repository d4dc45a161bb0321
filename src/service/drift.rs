//! Marking rows whose anchored evidence has changed or disappeared since the claim was
//! written, on every surface where rows appear. A file is read only for a caller who may
//! see that brain: the brain the request is routed to (its own claims, and medulla copies
//! whose witness lives there), or the founder. Never another project's files for a caller
//! not routed there.

use std::path::PathBuf;

use super::route::{RouteInput, Routed};
use super::rows::{Row, StoreTier};
use super::Service;

/// Mark rows of one project brain whose root is `root` (canonical).
pub async fn mark_brain(svc: &Service, root: &str, rows: &mut [Row]) {
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
    let root = PathBuf::from(root);
    let now = svc.now().ms;
    let checked = tokio::task::spawn_blocking(move || {
        let lists: Vec<&[brains::Anchor]> = todo.iter().map(|(_, a)| a.as_slice()).collect();
        let changes = cache.check_many(&root, &lists, now);
        todo.iter()
            .map(|(i, _)| *i)
            .zip(changes)
            .collect::<Vec<_>>()
    })
    .await;
    match checked {
        Ok(found) => {
            for (i, changes) in found {
                rows[i].evidence_changed = changes;
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
        mark_brain(svc, &root, &mut mine).await;
        for (i, r) in idx.into_iter().zip(mine) {
            rows[i].evidence_changed = r.evidence_changed;
        }
    }
}
