//! The mailbox as the REST surface reads it: one box's letters, and `doctor`, the
//! numbers that tell whether memory is being delivered well.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::route::find_brain;
use super::verbs::instances::{instances, Instance};
use super::verbs::{SOFT_CAP, WARN_FROM};
use super::{RouteInput, Service};
use crate::error::{OwnerError, Result};
use crate::mailbox::letter::Counts;
use crate::mailbox::sweep::Unreachable;
use crate::mailbox::{self, LetterRow};
use crate::store_id::StoreId;

/// `GET /api/mailbox?brain=`: one box.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BoxView {
    pub served_brain: String,
    #[serde(rename = "box")]
    pub box_file: PathBuf,
    pub letters: Vec<LetterRow>,
    pub counts: Counts,
}

/// `GET /api/mailbox?brain=<root>|medulla`: a project's box for a caller routed to it
/// or the founder; the medulla's box for anyone.
pub async fn show_box(svc: &Service, brain: &str, input: &RouteInput) -> Result<BoxView> {
    let home = svc.owner.config.home.clone();
    let (served, box_file) = if brain == "medulla" {
        ("medulla".to_string(), home.join(mailbox::MEDULLA_BOX))
    } else {
        let m = find_brain(&svc.owner.registry, brain).ok_or_else(|| OwnerError::UnknownBrain {
            name: brain.to_string(),
        })?;
        svc.authorize_brain(&svc.route(input).await?, input, &m, "read the mailbox of")?;
        (m.root.clone(), mailbox::box_path(Path::new(&m.root)))
    };
    let bf = box_file.clone();
    let (letters, counts) =
        tokio::task::spawn_blocking(move || mailbox::sweep::read_box(&home, &bf))
            .await
            .map_err(|e| OwnerError::Internal(e.to_string()))?
            .map_err(|e| {
                OwnerError::Internal(format!("cannot read {}: {}", box_file.display(), e.kind()))
            })?;
    Ok(BoxView {
        served_brain: served,
        box_file,
        letters,
        counts,
    })
}

/// ISO year and week of a letter's `ts` (ms, or an ISO 8601 date-time string).
pub fn iso_week(ts: &Value) -> Option<String> {
    let ms = match ts {
        Value::Number(n) => n.as_i64()?,
        Value::String(s) => brains::legacy::parse_created(s.get(..10)?)?,
        _ => return None,
    };
    Some(crate::clock::iso_week(ms))
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct LetterTotals {
    pub pending_distribution: usize,
    pub refused_at_floor: usize,
    pub spool_garbage_lines: usize,
    pub unreachable_boxes: Vec<Unreachable>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct MedullaCap {
    pub live: u64,
    pub soft_cap: u64,
    pub warn_from: u64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BrainsOnDisk {
    pub on_disk: usize,
    pub warm: usize,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Broken {
    /// A brain's root (or fingerprint when unreadable), or `medulla`.
    pub brain: String,
    pub problem: String,
    /// A store fault: `damaged` (quarantined), `disk_full` or `io`, while it lasts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<crate::brain::cell::FaultKind>,
    /// Since when the fault has lasted (ms since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<i64>,
}

/// One ISO week, owner-wide.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Week {
    pub week: String,
    /// Live claims across every store (each store's latest count at or before the week).
    pub live_claims: u64,
    pub beats_served: u64,
    pub misdeliveries: u64,
    /// Misdelivery events per beat served; absent in a week without beats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub misdelivery_rate_per_beat: Option<f64>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Doctor {
    pub caption: Cow<'static, str>,
    /// `YYYY-Www` → kind → confirmed misdelivery events.
    pub misdelivery_by_week: BTreeMap<String, BTreeMap<String, u64>>,
    /// Per ISO week, oldest first: live claims, beats served, misdeliveries and their
    /// rate per beat. The confusion rate should fall as the volume grows.
    pub weekly: Vec<Week>,
    pub live_claims_all_stores: u64,
    pub memory_beats_served: u64,
    pub letters: LetterTotals,
    pub medulla: MedullaCap,
    pub brains: BrainsOnDisk,
    pub broken: Vec<Broken>,
    /// Medulla copies whose project witness changed after the promotion: the founder
    /// promotes again or demotes.
    pub witnesses_superseded: Vec<SupersededWitness>,
    /// Per brain: live claims whose anchored evidence files changed or disappeared since
    /// they were written (verify, then `learn correct` to re-anchor, or retire). Brains
    /// with none are left out.
    pub evidence_drift: Vec<DriftCount>,
    /// Per store: clusters of live claims that say nearly the same thing under different
    /// labels (supersede or retire all but one). Stores with none are left out.
    pub near_duplicates: Vec<NearDuplicates>,
    /// Per store: live claims imported from another tool, by source (`import --from`).
    /// Stores with none are left out.
    #[serde(default)]
    pub imported: Vec<super::imported::ImportedCount>,
    /// With `deep`: the integrity check of every store, one row each.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deep: Option<Vec<super::health::DeepCheck>>,
    /// When a team is joined: the link (connected or offline since when, queued, lag,
    /// members, shared brains) and the conflicts between members' versions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<super::verbs::team::TeamStatusAnswer>,
    /// Callers refused since the owner started: another OS user, an unknown peer, no
    /// client token (SPEC §15).
    #[serde(default)]
    pub refused_callers: super::callers::RefusedCallers,
    /// Per brain, the agent sessions the client hooks saw, those the end-of-turn nudge
    /// asked for a debrief, and the claims written within half an hour after a nudge:
    /// whether the nudge pays. Brains no recorded session worked in are left out.
    #[serde(default)]
    pub nudges: Vec<super::nudges::NudgeCount>,
    /// Brains that belong to one repository (they split before a brain belonged to its
    /// repository, or one is a checkout's own): `medulla brains merge FROM INTO` joins
    /// them. Repositories with one brain are left out.
    #[serde(default)]
    pub same_repository: Vec<SameRepository>,
    /// Per brain, whether the prompt and file hooks pay: prompts and files seen, claims
    /// added, and those the agent then graded, superseded or retired within the session.
    /// Brains no hook asked about are left out.
    #[serde(default)]
    pub hints: Vec<super::hints::HintCount>,
    /// Brains that served checkouts of other projects sharing their history before
    /// projects were told apart (a template's children, a fork): `medulla brains split
    /// ROOT` gives each a brain of its own.
    #[serde(default)]
    pub mixed_projects: Vec<super::verbs::split::Mixed>,
    /// Per store with any: claims agents wrote that no person has looked at, and the
    /// command that lists them.
    #[serde(default)]
    pub unreviewed: Vec<Unreviewed>,
}

/// A store's claims no person has looked at.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Unreviewed {
    /// A brain's root, or `medulla`.
    pub store: String,
    pub count: u64,
    pub fix: String,
}

/// Brains of one repository.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SameRepository {
    /// `repo:<root commit>@<remote>`.
    pub repository: String,
    pub label: String,
    /// Their roots, the one its checkouts reach first (the oldest not a checkout's own).
    pub brains: Vec<String>,
    /// The command that joins the others into the first.
    pub fix: String,
}

/// Brains, not merged away, grouped by the repository they belong to; groups of two or
/// more.
pub fn same_repository(manifests: &[crate::roster::Manifest]) -> Vec<SameRepository> {
    let mut groups: BTreeMap<String, Vec<&crate::roster::Manifest>> = BTreeMap::new();
    for m in manifests.iter().filter(|m| m.merged_into.is_none()) {
        if let Some(r) = &m.repo {
            groups.entry(r.key.clone()).or_default().push(m);
        }
    }
    groups
        .into_iter()
        .filter(|(_, ms)| ms.len() > 1)
        .map(|(key, mut ms)| {
            ms.sort_by(|a, b| (a.own, a.created, &a.root).cmp(&(b.own, b.created, &b.root)));
            let into = ms[0].root.clone();
            let fix = ms[1..]
                .iter()
                .map(|m| format!("medulla brains merge {} {}", m.root, into))
                .collect::<Vec<_>>()
                .join("; ");
            SameRepository {
                label: ms[0]
                    .repo
                    .as_ref()
                    .map(|r| r.label.clone())
                    .unwrap_or_default(),
                repository: key,
                brains: ms.iter().map(|m| m.root.clone()).collect(),
                fix,
            }
        })
        .collect()
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NearDuplicates {
    /// A brain's root, or `medulla`.
    pub store: String,
    pub clusters: Vec<Vec<ClusterMember>>,
    /// The store holds more than the most recent claims checked (the older were not).
    pub capped: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ClusterMember {
    pub slug: String,
    pub label: String,
}

/// How many of a store's most recent live claims doctor checks for near-duplicates.
const NEAR_DUPLICATE_SCAN: usize = 2000;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DriftCount {
    pub brain: String,
    /// Live claims with at least one anchored evidence file.
    pub anchored: u64,
    /// Of those, claims whose evidence changed or disappeared.
    pub drifted: u64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SupersededWitness {
    pub slug: String,
    pub witness: String,
    pub at: i64,
    pub by_version: u64,
}

/// `GET /api/doctor` (`?deep=true`: also the integrity check of every store).
pub async fn doctor(svc: &Service, deep: bool) -> Result<Doctor> {
    let swept = svc.sweep().await?;
    let mut weeks: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for l in &swept.letters {
        if l.field("class").and_then(Value::as_str) != Some("memory_misdelivery") {
            continue;
        }
        let week = l
            .field("ts")
            .and_then(iso_week)
            .unwrap_or_else(|| "unknown".into());
        let kind = l
            .field("kind")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string();
        *weeks.entry(week).or_default().entry(kind).or_default() += 1;
    }
    let inst = instances(svc).await?;
    let rows: Vec<_> = inst
        .instances
        .iter()
        .filter_map(|i| match i {
            Instance::Brain(r) => Some(r),
            Instance::Unreadable(_) => None,
        })
        .collect();
    let mut broken = Vec::new();
    for i in &inst.instances {
        if let Instance::Unreadable(u) = i {
            broken.push(Broken {
                brain: u.fingerprint.to_string(),
                problem: u.problem.clone().unwrap_or_default(),
                fault: None,
                since: None,
            });
        }
    }
    let mut stores: Vec<(StoreId, String)> = rows
        .iter()
        .map(|r| (StoreId::brain(&r.fingerprint), r.root.clone()))
        .collect();
    stores.push((StoreId::Medulla, StoreId::Medulla.to_string()));
    if svc.owner.registry.team_store().is_some() {
        stores.push((StoreId::Team, StoreId::Team.to_string()));
    }
    for p in super::health::faults(svc, &stores) {
        broken.push(Broken {
            brain: p.store,
            problem: p.text,
            fault: Some(p.kind),
            since: Some(p.since),
        });
    }
    let deep = if deep {
        Some(super::health::deep(svc, &stores).await)
    } else {
        None
    };
    for r in &rows {
        if r.warm && svc.owner.fault(&StoreId::brain(&r.fingerprint)).is_none() {
            if let Ok(Some(why)) = svc.owner.check_index(&StoreId::brain(&r.fingerprint)).await {
                broken.push(Broken {
                    brain: r.root.clone(),
                    problem: format!("vector index out of step: {why}"),
                    fault: None,
                    since: None,
                });
            }
        }
        let dir = Path::new(&r.root).join(".medulla");
        let probe = if dir.exists() {
            dir.clone()
        } else {
            PathBuf::from(&r.root)
        };
        if std::fs::metadata(&probe)
            .map(|m| m.permissions().readonly())
            .unwrap_or(true)
        {
            broken.push(Broken {
                brain: r.root.clone(),
                problem: format!("box not writable: {}", dir.display()),
                fault: None,
                since: None,
            });
        }
    }
    let mut evidence_drift = Vec::new();
    let mut imported = Vec::new();
    for r in &rows {
        let Ok(live) = svc.owner.live_claims(&StoreId::brain(&r.fingerprint)).await else {
            continue;
        };
        imported.extend(super::imported::count(&r.root, &live));
        let mut claims: Vec<crate::service::rows::Row> = live
            .iter()
            .filter(|c| !c.anchors.is_empty())
            .map(|c| {
                crate::service::rows::Row::of(
                    c,
                    crate::service::rows::StoreTier::Project,
                    svc.now(),
                    None,
                )
            })
            .collect();
        if claims.is_empty() {
            continue;
        }
        super::drift::mark_brain(svc, &r.root, None, &mut claims).await;
        evidence_drift.push(DriftCount {
            brain: r.root.clone(),
            anchored: claims.len() as u64,
            drifted: claims
                .iter()
                .filter(|c| !c.evidence_changed.is_empty())
                .count() as u64,
        });
    }
    if let Ok(live) = svc.owner.live_claims(&StoreId::Medulla).await {
        imported.extend(super::imported::count("medulla", &live));
    }
    let mut near_duplicates = Vec::new();
    for (id, name) in stores {
        let Ok(found) = svc
            .owner
            .read(&id, |s| s.near_duplicate_clusters(NEAR_DUPLICATE_SCAN))
            .await
        else {
            continue;
        };
        if found.clusters.is_empty() {
            continue;
        }
        near_duplicates.push(NearDuplicates {
            store: name,
            clusters: found
                .clusters
                .into_iter()
                .map(|g| {
                    g.into_iter()
                        .map(|(slug, label)| ClusterMember { slug, label })
                        .collect()
                })
                .collect(),
            capped: found.capped,
        });
    }
    let weekly = weekly_series(svc, &weeks);
    let mut witnesses_superseded: Vec<SupersededWitness> = super::provenance::markers(svc)
        .await?
        .into_iter()
        .map(|(slug, m)| SupersededWitness {
            slug,
            witness: m.witness,
            at: m.at,
            by_version: m.by_version,
        })
        .collect();
    witnesses_superseded.sort_by(|a, b| a.slug.cmp(&b.slug));
    Ok(Doctor {
        caption: "owner-wide counts unless a row names its brain".into(),
        weekly,
        misdelivery_by_week: weeks,
        live_claims_all_stores: rows.iter().map(|r| r.claims).sum::<u64>() + inst.medulla.claims,
        memory_beats_served: rows.iter().map(|r| r.memory_beats_served).sum(),
        letters: LetterTotals {
            pending_distribution: swept.pending_distribution,
            refused_at_floor: swept.refused_at_floor,
            spool_garbage_lines: swept.spool_garbage_lines,
            unreachable_boxes: swept.unreachable,
        },
        medulla: MedullaCap {
            live: inst.medulla.claims,
            soft_cap: SOFT_CAP,
            warn_from: WARN_FROM,
        },
        brains: BrainsOnDisk {
            on_disk: inst.instances.len(),
            warm: rows.iter().filter(|r| r.warm).count(),
        },
        broken,
        witnesses_superseded,
        evidence_drift,
        near_duplicates,
        imported,
        deep,
        team: super::verbs::team::report(svc).await?,
        refused_callers: svc.refusals.snapshot(),
        nudges: super::nudges::counts(svc).await?,
        same_repository: same_repository(&svc.owner.registry.all_manifests()),
        hints: super::hints::counts(svc),
        mixed_projects: super::verbs::split::mixed(&svc.owner.registry.all_manifests()),
        unreviewed: rows
            .iter()
            .map(|r| (r.root.clone(), r.unreviewed))
            .chain(std::iter::once((
                "medulla".to_string(),
                inst.medulla.unreviewed,
            )))
            .filter(|(_, n)| *n > 0)
            .map(|(store, count)| Unreviewed {
                fix: format!(
                    "medulla review --brain {}",
                    super::route::shell_quote(&store)
                ),
                store,
                count,
            })
            .collect(),
    })
}

/// The weekly series, from every store's persisted counters and the misdelivery letters.
fn weekly_series(
    svc: &Service,
    misdelivered: &BTreeMap<String, BTreeMap<String, u64>>,
) -> Vec<Week> {
    use crate::owner::counters::Record;
    svc.owner.registry.flush_counters();
    let cfg = &svc.owner.config;
    let mut records: Vec<Record> = svc
        .owner
        .registry
        .all_manifests()
        .iter()
        .map(|m| Record::read(&cfg.brains_dir().join(m.fingerprint.as_str())))
        .collect();
    records.push(Record::read(&cfg.medulla_dir()));
    let mut weeks: std::collections::BTreeSet<String> = misdelivered.keys().cloned().collect();
    for r in &records {
        weeks.extend(r.weeks.keys().cloned());
    }
    weeks.remove("unknown");
    weeks
        .into_iter()
        .map(|week| {
            let beats: u64 = records
                .iter()
                .filter_map(|r| r.weeks.get(&week))
                .map(|c| c.beats)
                .sum();
            // A store's live count carries forward from its last record.
            let live_claims = records
                .iter()
                .filter_map(|r| {
                    r.weeks
                        .range(..=week.clone())
                        .rev()
                        .find_map(|(_, c)| c.live_claims)
                })
                .sum();
            let misdeliveries: u64 = misdelivered
                .get(&week)
                .map(|k| k.values().sum())
                .unwrap_or(0);
            Week {
                misdelivery_rate_per_beat: (beats > 0).then(|| misdeliveries as f64 / beats as f64),
                week,
                live_claims,
                beats_served: beats,
                misdeliveries,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn iso_weeks_follow_the_thursday_rule() {
        assert_eq!(
            iso_week(&json!("2026-07-05T10:00:00Z")).as_deref(),
            Some("2026-W27")
        );
        assert_eq!(iso_week(&json!("2021-01-03")).as_deref(), Some("2020-W53"));
        assert_eq!(iso_week(&json!("2024-12-30")).as_deref(), Some("2025-W01"));
        assert_eq!(iso_week(&json!(0)).as_deref(), Some("1970-W01"));
        assert_eq!(iso_week(&json!("garbage")), None);
    }
}
