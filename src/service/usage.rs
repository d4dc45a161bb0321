//! Which claims were used, and when (SPEC §14): a claim shown as a `seek` row or added
//! by a hint, cited by the agent, or graded is used then. Tending proposes retiring a
//! claim aged out that nothing used in its half-life. Kept with each store's counters.

use super::rows::{Row, StoreTier};
use super::Service;
use crate::store_id::StoreId;

/// The store a row was read from.
fn store_of(svc: &Service, r: &Row) -> Option<StoreId> {
    match r.tier {
        StoreTier::Project => {
            let root = r.origin_brain.as_str();
            let m = crate::service::route::find_brain(&svc.owner.registry, root)?;
            Some(StoreId::brain(&m.fingerprint))
        }
        StoreTier::Medulla => Some(StoreId::Medulla),
        StoreTier::Team => Some(StoreId::Team),
    }
}

/// These rows were shown: each one's claim used now.
pub fn note<'a>(svc: &Service, rows: impl IntoIterator<Item = &'a Row>) {
    let mut by_store: Vec<(StoreId, Vec<&str>)> = Vec::new();
    for r in rows {
        let Some(id) = store_of(svc, r) else { continue };
        match by_store.iter_mut().find(|(s, _)| *s == id) {
            Some((_, slugs)) => slugs.push(&r.slug),
            None => by_store.push((id, vec![&r.slug])),
        }
    }
    for (id, slugs) in by_store {
        svc.owner.registry.counters(&id).used(slugs);
    }
}
