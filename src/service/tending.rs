//! What tending leaves for a person (SPEC §14): the disagreements it found (claims alike
//! but for a number, a name, a path, an identifier: never joined) and the claims it
//! proposes to retire (aged out, used by nothing in their half-life). Kept in
//! `tending.json` beside the store (derived, rewritten by each pass, never a claim's
//! state), read by `review`'s list and the Hall. And which store a person names.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::route::find_brain;
use super::Service;
use crate::error::{OwnerError, Result};
use crate::store_id::StoreId;

const FILE: &str = "tending.json";

/// Joins written in one transaction.
const JOIN_BATCH: usize = 64;

/// Claims whose nearest one read of the store finds: a fraction of a second, so a
/// write (and the reads queued behind it) waits that long at most, never for the pass.
const FIND_STEP: usize = 512;

/// One side of a disagreement, or a claim proposed for retirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Named {
    pub slug: String,
    pub label: String,
    pub text: String,
}

/// What differs between two claims that disagree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Differs {
    /// `number`, `version`, `path`, `identifier`, `name`, …
    pub kind: String,
    pub a: String,
    pub b: String,
}

/// Two claims alike but for what differs: for a person to settle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Disagreement {
    pub a: Named,
    pub b: Named,
    pub differences: Vec<Differs>,
}

/// A claim aged out that nothing used in its half-life.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Stale {
    #[serde(flatten)]
    pub claim: Named,
    pub created: i64,
    /// When something last used it (a seek row, a hint, a citation), if ever recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used: Option<i64>,
}

/// What a member of a join says that its survivor does not: left to history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dropped {
    pub slug: String,
    pub values: Vec<String>,
}

/// Claims that say the same thing, joined into one (or to be, on a dry run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Join {
    /// The label that survives: the strongest member, then the most recent.
    pub survivor: Named,
    /// The labels joined into it (outdated with `consolidated: into <survivor>`).
    pub joined: Vec<Named>,
    /// Details a joined claim gives that the survivor does not (kept in history).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<Dropped>,
    /// The join was made (an `--apply` pass); else proposed.
    pub done: bool,
    /// The command that undoes it.
    pub undo: String,
}

/// A store's last tending, for review.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// When the pass ran, ms since the epoch (0: never).
    pub at: i64,
    /// The joins it made or proposed.
    #[serde(default)]
    pub joins: Vec<Join>,
    pub disagreements: Vec<Disagreement>,
    pub retire: Vec<Stale>,
    /// The store's acts when the pass ended: a dormant brain with as many acts since has
    /// had nothing written, and the schedule lets it sleep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acts: Option<u64>,
}

/// One tending pass over one store (SPEC §14).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Pass {
    /// The store tended: a brain's root, `medulla` or `team`.
    pub store: String,
    /// The joins were made (`apply`); else only reported, nothing written.
    pub applied: bool,
    /// The calibration it judged with: `lexical`, `potion-base-8M`, `all-MiniLM-L6-v2`.
    pub mode: String,
    /// Live claims gone over, and distinct pairs judged.
    pub claims: usize,
    pub pairs_judged: usize,
    pub joins: Vec<Join>,
    /// Claims alike but for a number, a name, a path or an identifier: never joined; in
    /// the review list.
    pub disagreements: Vec<Disagreement>,
    /// Claims aged out that nothing used in their half-life: proposed for retirement in
    /// the review list.
    pub retire: Vec<Stale>,
    /// How long the pass took.
    pub ms: u64,
}

/// The member that survives a join: the judgement's choice (the strongest, then the
/// most recent), unless it is only an agent's and a person wrote or looked at another:
/// then the strongest, most recent of those.
fn survivor_of(c: &brains::tend::Cluster, personal: &std::collections::HashSet<String>) -> String {
    if personal.contains(&c.survivor) {
        return c.survivor.clone();
    }
    c.members
        .iter()
        .filter(|m| personal.contains(&m.slug))
        .max_by(|a, b| (a.strength, a.created).cmp(&(b.strength, b.created)))
        .map_or_else(|| c.survivor.clone(), |m| m.slug.clone())
}

/// A claim aged out (born more than a half-life ago) that nothing used in the last
/// half-life, as far as uses were watched: a store whose uses are recorded for less
/// than a half-life (a new one, or one from before uses were recorded) proposes
/// nothing, since an unrecorded use cannot be told from none.
fn unused_in_half_life(
    created: i64,
    last_used: Option<i64>,
    since: i64,
    now: i64,
    half_life: i64,
) -> bool {
    now - created > half_life
        && now - since > half_life
        && last_used.is_none_or(|u| now - u > half_life)
}

fn named(m: &brains::tend::Member) -> Named {
    Named {
        slug: m.slug.clone(),
        label: m.label.clone(),
        text: m.text.clone(),
    }
}

fn kind_name(k: &impl Serialize) -> String {
    serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The words that name a store on the command line.
fn store_flag(name: &str) -> String {
    match name {
        "medulla" | "team" => format!(" --brain {name}"),
        root => format!(" --brain {}", super::route::shell_quote(root)),
    }
}

impl Service {
    /// Tend one store: find what says the same thing, what disagrees, and what aged out
    /// unused; with `apply`, join each cluster as one `consolidate` act by `actor`
    /// (through the audit actor for the medulla and team tiers). The report is kept for
    /// review either way (derived, not a claim's state); a dry run writes no claim and no
    /// act. Claims a join would drop details of are joined still: the detail stays in
    /// history and the answer names it.
    pub async fn tend_pass(
        &self,
        store: &StoreId,
        name: &str,
        apply: bool,
        actor: &str,
    ) -> Result<Pass> {
        let started = std::time::Instant::now();
        let found = self.candidates(store).await?;
        let judged_ms = started.elapsed().as_millis();
        let births = self.owner.read(store, |s| Ok(s.live_births())).await?;
        let undo_flag = store_flag(name);
        // What a person wrote or looked at survives a join with what only agents wrote:
        // tending never puts a person's word in history under an agent's.
        let all: Vec<String> = found
            .clusters
            .iter()
            .flat_map(|c| c.members.iter().map(|m| m.slug.clone()))
            .collect();
        let personal = self
            .owner
            .read(store, move |s| s.by_person_or_reviewed(&all))
            .await?;
        let mut joins = Vec::new();
        for c in &found.clusters {
            let survivor_slug = survivor_of(c, &personal);
            let Some(survivor) = c.members.iter().find(|m| m.slug == survivor_slug) else {
                continue;
            };
            let joined: Vec<Named> = c
                .members
                .iter()
                .filter(|m| m.slug != survivor_slug)
                .map(named)
                .collect();
            joins.push(Join {
                survivor: named(survivor),
                joined,
                dropped: if survivor_slug == c.survivor {
                    c.dropped.clone()
                } else {
                    c.dropped_under(&survivor_slug)
                }
                .into_iter()
                .map(|d| Dropped {
                    slug: d.slug,
                    values: d.values,
                })
                .collect(),
                done: false,
                undo: format!("medulla tend{undo_flag} --undo {survivor_slug}"),
            });
        }
        let join_started = std::time::Instant::now();
        if apply {
            self.join_all(store, name, &mut joins, actor).await?;
        }
        let joined_ms = join_started.elapsed().as_millis();
        // A disagreement names its two claims by slug; their texts are read here.
        let sides: Vec<String> = found
            .disagreements
            .iter()
            .flat_map(|d| [d.a.clone(), d.b.clone()])
            .collect();
        let texts: std::collections::HashMap<String, String> = self
            .owner
            .read(store, move |s| {
                let mut out = std::collections::HashMap::new();
                for slug in &sides {
                    if let Some(c) = s.get(slug)? {
                        out.insert(c.slug, c.text);
                    }
                }
                Ok(out)
            })
            .await?;
        let side = |slug: &str, label: &str| Named {
            slug: slug.to_string(),
            label: label.to_string(),
            text: texts.get(slug).cloned().unwrap_or_default(),
        };
        let disagreements = found
            .disagreements
            .iter()
            .map(|d| Disagreement {
                a: side(&d.a, &d.a_label),
                b: side(&d.b, &d.b_label),
                differences: d
                    .differences
                    .iter()
                    .map(|x| Differs {
                        kind: kind_name(&x.kind),
                        a: x.a.clone(),
                        b: x.b.clone(),
                    })
                    .collect(),
            })
            .collect();
        let retire = self.stale(store, &births, &joins).await?;
        let acts = self.owner.read(store, |s| Ok(s.stats()?.acts)).await?;
        let report = Report {
            at: self.now_ms(),
            joins: joins.clone(),
            disagreements,
            retire,
            acts: Some(acts),
        };
        self.keep_tending(store, &report)?;
        tracing::debug!(
            store = name,
            judged_ms,
            joined_ms,
            total_ms = started.elapsed().as_millis(),
            "tending pass"
        );
        Ok(Pass {
            store: name.to_string(),
            applied: apply,
            mode: found.mode,
            claims: found.claims,
            pairs_judged: found.pairs_judged,
            joins,
            disagreements: report.disagreements,
            retire: report.retire,
            ms: started.elapsed().as_millis() as u64,
        })
    }

    /// The pass's judgement over `store`, in steps: the store is read [`FIND_STEP`]
    /// claims at a time, and the pairs are judged off it (the judgement needs only the
    /// texts read at the start).
    async fn candidates(&self, store: &StoreId) -> Result<brains::tend::Tending> {
        let t = std::time::Instant::now();
        let work = self.owner.read(store, |s| s.tend_begin()).await?;
        let work = std::sync::Arc::new(std::sync::Mutex::new(work));
        let mut steps = 0u32;
        loop {
            let w = work.clone();
            steps += 1;
            let found_all = self
                .owner
                .read(store, move |s| {
                    let mut w = w.lock().unwrap_or_else(|p| p.into_inner());
                    s.tend_find(&mut w, FIND_STEP)?;
                    Ok(w.found_all())
                })
                .await?;
            if found_all {
                break;
            }
        }
        let found_ms = t.elapsed().as_millis();
        let w = work.clone();
        tokio::task::spawn_blocking(move || w.lock().unwrap_or_else(|p| p.into_inner()).judge())
            .await
            .map_err(|e| OwnerError::Internal(format!("tending's judgement: {e}")))??;
        let judge_ms = t.elapsed().as_millis() - found_ms;
        let out = self
            .owner
            .read(store, move |s| {
                s.tend_group(&work.lock().unwrap_or_else(|p| p.into_inner()))
            })
            .await;
        tracing::debug!(
            steps,
            found_ms,
            judge_ms,
            group_ms = t.elapsed().as_millis() - found_ms - judge_ms,
            "tending's judgement"
        );
        out
    }

    /// Make `joins`, [`JOIN_BATCH`] to a transaction (so a reader waits for one batch at
    /// most, never for the pass); each marked done when all its labels left. A join one
    /// of whose claims changed since the pass read it (superseded, retired) is left for
    /// the next pass, never made on a stale reading.
    async fn join_all(
        &self,
        store: &StoreId,
        name: &str,
        joins: &mut [Join],
        actor: &str,
    ) -> Result<()> {
        for batch in joins.chunks_mut(JOIN_BATCH) {
            let op = crate::brain::Tending::ConsolidateMany {
                joins: batch
                    .iter()
                    .map(|j| {
                        (
                            j.survivor.slug.clone(),
                            j.joined.iter().map(|n| n.slug.clone()).collect(),
                        )
                    })
                    .collect(),
            };
            let left: std::collections::HashSet<String> = self
                .owner
                .tend_write(store, op, actor)
                .await?
                .into_iter()
                .map(|c| c.slug)
                .collect();
            for j in batch.iter_mut() {
                j.done = j.joined.iter().all(|n| left.contains(&n.slug));
                if !j.done {
                    tracing::info!(store = name, survivor = %j.survivor.slug, "a join was skipped: a claim changed since the pass read it");
                }
            }
        }
        Ok(())
    }

    /// The live claims aged out (older than the half-life) that nothing used in the
    /// half-life: no seek row, hint, citation or grade recorded since. Oldest first;
    /// a claim a join just took out is not among them.
    async fn stale(
        &self,
        store: &StoreId,
        births: &[(String, i64)],
        joins: &[Join],
    ) -> Result<Vec<Stale>> {
        let now = self.now_ms();
        let half_life = self.owner.config.aging.half_life_ms;
        let counters = self.owner.registry.counters(store);
        let (used, since) = (counters.last_used(), counters.used_since());
        let gone: std::collections::HashSet<&str> = joins
            .iter()
            .filter(|j| j.done)
            .flat_map(|j| j.joined.iter().map(|n| n.slug.as_str()))
            .collect();
        let mut old: Vec<(i64, String)> = births
            .iter()
            .filter(|(slug, created)| {
                !gone.contains(slug.as_str())
                    && unused_in_half_life(*created, used.get(slug).copied(), since, now, half_life)
            })
            .map(|(slug, created)| (*created, slug.clone()))
            .collect();
        old.sort();
        let slugs: Vec<String> = old.into_iter().map(|(_, s)| s).collect();
        let claims = self
            .owner
            .read(store, move |s| {
                slugs
                    .iter()
                    .filter_map(|slug| s.get(slug).transpose())
                    .collect::<std::result::Result<Vec<_>, _>>()
            })
            .await?;
        Ok(claims
            .into_iter()
            .map(|c| Stale {
                last_used: used.get(&c.slug).copied(),
                created: c.created,
                claim: Named {
                    slug: c.slug,
                    label: c.label,
                    text: c.text,
                },
            })
            .collect())
    }

    /// Undo a join: `slug` a survivor brings back every label joined into it and not live
    /// since; `slug` a label a join took out brings back that one. Each a `revive` act by
    /// `actor`. Nothing to undo is a typed error naming what to pass.
    pub async fn tend_undo(&self, store: &StoreId, slug: &str, actor: &str) -> Result<Vec<Named>> {
        let key = brains::claim::slugify(slug);
        let k = key.clone();
        let (mut back, last) = self
            .owner
            .read(store, move |s| {
                let joined = s.consolidated_into(&k)?;
                Ok((joined, s.history(&k)?.pop()))
            })
            .await?;
        if back.is_empty() {
            let taken = last.as_ref().is_some_and(|c| {
                c.state != brains::ClaimState::Authored
                    && c.outdated_reason
                        .as_deref()
                        .is_some_and(|r| r.starts_with("consolidated"))
            });
            if !taken {
                return Err(OwnerError::BadInput(format!(
                    "{key} is no join to undo: pass the surviving label of a join (tend lists each join's `undo` command) or a label a join took out"
                )));
            }
            back.push(key);
        }
        let mut out = Vec::new();
        for slug in back {
            let op = crate::brain::Tending::Revive { slug };
            for c in self.owner.tend_write(store, op, actor).await? {
                out.push(Named {
                    slug: c.slug,
                    label: c.label,
                    text: c.text,
                });
            }
        }
        Ok(out)
    }

    /// The store a person names: `medulla`, `team`, a brain's root or fingerprint, else
    /// the brain serving `routed` (the caller's).
    pub fn named_store(
        &self,
        name: Option<&str>,
        routed: &super::route::Routed,
    ) -> Result<(StoreId, String)> {
        match name.map(str::trim).filter(|n| !n.is_empty()) {
            Some("medulla") => Ok((StoreId::Medulla, "medulla".into())),
            Some("team") => {
                self.owner.registry.team().ok_or(OwnerError::NoTeam)?;
                Ok((StoreId::Team, "team".into()))
            }
            Some(n) => {
                let m = find_brain(&self.owner.registry, n).ok_or_else(|| {
                    OwnerError::UnknownBrain {
                        name: n.to_string(),
                    }
                })?;
                Ok((StoreId::brain(&m.fingerprint), m.root))
            }
            None => {
                let b = super::verbs::write_target(routed)?;
                Ok((StoreId::brain(&b.fingerprint), b.root.clone()))
            }
        }
    }

    /// A store's last tending report (empty when it was never tended).
    pub fn tending(&self, store: &StoreId) -> Report {
        std::fs::read(self.owner.registry.store_dir(store).join(FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Keep a store's tending report (written whole, then renamed over the old one).
    pub fn keep_tending(&self, store: &StoreId, r: &Report) -> Result<()> {
        let dir = self.owner.registry.store_dir(store);
        let tmp = dir.join(format!("{FILE}.tmp"));
        let bytes = serde_json::to_vec(r).map_err(|e| OwnerError::Internal(e.to_string()))?;
        std::fs::write(&tmp, bytes)
            .and_then(|_| std::fs::rename(&tmp, dir.join(FILE)))
            .map_err(|e| {
                OwnerError::Internal(format!("cannot write {}: {e}", dir.join(FILE).display()))
            })
    }
}

/// The first scheduled pass comes this long after the owner starts (or after
/// `tend_every_secs`, when that is shorter): never in the way of a start.
const FIRST_AFTER: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// The actor a scheduled pass records its joins as.
pub const SCHEDULED: &str = "medulla:tend";

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

#[cfg(test)]
mod tests {
    use super::unused_in_half_life as unused;

    const H: i64 = 1000;

    #[test]
    fn a_claim_is_proposed_only_when_it_was_watched_unused_for_a_half_life() {
        // Aged out, watched for longer than a half-life, never used: proposed.
        assert!(unused(0, None, 0, 2 * H, H));
        // Used within the half-life: kept.
        assert!(!unused(0, Some(2 * H - 10), 0, 2 * H, H));
        // Used, but longer ago than a half-life: proposed.
        assert!(unused(0, Some(H - 10), 0, 2 * H + 10, H));
        // Not aged out yet.
        assert!(!unused(H + 10, None, 0, 2 * H, H));
        // Uses watched for less than a half-life (an upgrade, a new store): unknown,
        // never proposed.
        assert!(!unused(0, None, 2 * H - 10, 2 * H, H));
    }
}
