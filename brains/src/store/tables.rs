//! The redb tables of a store. `claims` holds live versions, `history` every outdated
//! one, `acts` the act log, `kv` boot memory, `vec_keys` and `vectors` the vectors the
//! derived index is rebuilt from, `meta` counters and the embedding model's id.

use redb::TableDefinition;

pub(super) const CLAIMS: TableDefinition<&str, &[u8]> = TableDefinition::new("claims");
pub(super) const HISTORY: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("history");
pub(super) const ACTS: TableDefinition<u64, &[u8]> = TableDefinition::new("acts");
pub(super) const KV: TableDefinition<&str, &str> = TableDefinition::new("kv");
pub(super) const VEC_KEYS: TableDefinition<&str, u64> = TableDefinition::new("vec_keys");
pub(super) const VECTORS: TableDefinition<u64, &[u8]> = TableDefinition::new("vectors");
pub(super) const META: TableDefinition<&str, &str> = TableDefinition::new("meta");
/// A shared store's acts waiting to be sent to the team (see `share`).
pub(super) const TEAM_OUTBOX: TableDefinition<u64, &[u8]> = TableDefinition::new("team_outbox");
/// Acts written here and not yet seen back from the team's log: hash → version id.
pub(super) const TEAM_PENDING: TableDefinition<&str, &str> = TableDefinition::new("team_pending");
/// Legacy (before issue 51): one row per act of the team's log, hash → slug. No longer
/// written: the cursor alone says what was applied, and a tombstone names its slugs.
/// Read only for an older tombstone that names hashes alone; emptied as they apply.
pub(super) const TEAM_SEEN: TableDefinition<&str, &str> = TableDefinition::new("team_seen");
/// The slugs that are in the team's log (written here and queued, or arrived): one row
/// per slug, never per act. A local `purge` of one is refused (the team keeps its copy).
pub(super) const TEAM_SLUGS: TableDefinition<&str, ()> = TableDefinition::new("team_slugs");
/// A person's review of a claim an agent wrote (SPEC §14): slug → the version looked at
/// and by whom (JSON, [`super::review::ReviewMark`]). A later version is unreviewed
/// again.
pub(super) const REVIEWED: TableDefinition<&str, &[u8]> = TableDefinition::new("reviewed");
/// Purges a member asked the team admin for: slug → who asked (one row per slug, gone
/// when a tombstone erases it).
pub(super) const TEAM_REQUESTS: TableDefinition<&str, &str> = TableDefinition::new("team_requests");
