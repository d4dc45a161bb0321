//! Tending on a schedule (`tend_every_secs`), like backups.

use super::StoreId;
use crate::service::Service;

/// The first scheduled pass comes this long after the owner starts (or after
/// `tend_every_secs`, when that is shorter): never in the way of a start.
const FIRST_AFTER: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// The actor a scheduled pass records its joins as.
const SCHEDULED: &str = "medulla:tend";

/// Tend every brain (not merged away) and the medulla every `tend_every_secs`, joins
/// made (each undoable), the review list refreshed; a store tended within the period
/// (by hand, say) is skipped, and so is a dormant brain with nothing written since its
/// last pass (never woken for nothing). The team medulla is tended only when a person asks
/// (`medulla tend --brain team`): a join there reaches every member.
pub async fn schedule(svc: Service) {
    let Some(every) = svc.owner.config.tend_every else {
        return;
    };
    let mut wait = every.min(FIRST_AFTER);
    loop {
        tokio::time::sleep(wait).await;
        wait = every;
        let registry = &svc.owner.registry;
        let mut stores: Vec<(StoreId, String)> = registry
            .all_manifests()
            .into_iter()
            .filter(|m| m.merged_into.is_none())
            .filter(|m| {
                // A dormant brain with nothing written since its last pass is left to
                // sleep: the pass would find what it found (its report stays).
                let asleep = !registry.is_warm(&m.fingerprint)
                    && svc.tending(&StoreId::brain(&m.fingerprint)).acts == Some(m.counts.acts);
                if asleep {
                    tracing::debug!(brain = %m.root, "scheduled tending: nothing written since the last pass");
                }
                !asleep
            })
            .map(|m| (StoreId::brain(&m.fingerprint), m.root))
            .collect();
        stores.push((StoreId::Medulla, "medulla".into()));
        let period = every.as_millis() as i64;
        for (store, name) in stores {
            if svc.now_ms() - svc.tending(&store).at < period {
                continue;
            }
            match svc.tend_pass(&store, &name, true, SCHEDULED).await {
                Ok(p) => tracing::info!(
                    store = %name,
                    claims = p.claims,
                    joined = p.joins.iter().filter(|j| j.done).count(),
                    disagreements = p.disagreements.len(),
                    retire = p.retire.len(),
                    ms = p.ms,
                    "scheduled tending"
                ),
                Err(e) => {
                    tracing::warn!(store = %name, error = %e, "scheduled tending failed; the next is due in one period")
                }
            }
        }
    }
}
