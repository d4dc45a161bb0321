//! A tending pass over one store (SPEC §14): what says the same thing (joined with
//! `apply`, undone by `tend_undo`), what disagrees (never joined) and what aged out
//! unused (proposed for retirement), for a person to review; and which store a person
//! names. `report.rs` holds what a pass answers and the report it keeps beside the
//! store, `schedule.rs` the pass on a schedule.

use serde::Serialize;

use super::route::find_brain;
use super::Service;
use crate::error::{OwnerError, Result};
use crate::store_id::StoreId;

mod report;
mod schedule;

pub use report::{Differs, Disagreement, Dropped, Join, Named, Pass, Report, Stale};
pub use schedule::schedule;

/// Joins written in one transaction.
const JOIN_BATCH: usize = 64;

/// Claims whose nearest one read of the store finds: a fraction of a second, so a
/// write (and the reads queued behind it) waits that long at most, never for the pass.
const FIND_STEP: usize = 512;

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
