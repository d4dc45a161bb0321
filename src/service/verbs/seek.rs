//! `seek`: recall. Default: this brain plus the medulla (the beat); `project`;
//! `medulla`; `all-brains`, the explicit cross-project pull, grouped by origin.

use std::borrow::Cow;

use brains::{RecallQuery, Retrieval};
use futures::future::join_all;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{write_target, ErrorBody};
use crate::error::Result;
use crate::service::drift;
use crate::service::provenance::{mark_superseded, merge_promoted};
use crate::service::query::Filters;
use crate::service::rows::{Row, StoreTier};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::service::{check_limit, check_query, Service};
use crate::store_id::{Fingerprint, StoreId};

pub const DEFAULT_LIMIT: usize = 10;
pub const MAX_LIMIT: usize = 200;
/// The most weak rows a seek returns (SPEC §5): a model judges three candidates well.
pub const WEAK_ROWS: usize = 3;
/// The heading of the weak rows, in the answer just before them.
pub const WEAK_NOTE: &str =
    "these rows did not clear the relevance floor and may be unrelated: judge each before using it";

/// Which stores a seek reads.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
pub enum SeekTier {
    /// The routed brain only.
    #[serde(rename = "project")]
    #[value(help = "This project's brain only")]
    Project,
    /// The medulla only.
    #[serde(rename = "medulla")]
    #[value(help = "The medulla only")]
    Medulla,
    /// The team medulla only (a joined team's mirror).
    #[serde(rename = "team")]
    #[value(help = "The team medulla only (when a team is joined)")]
    Team,
    /// Every registered brain plus the medulla, grouped by origin: an explicit pull.
    #[serde(rename = "all-brains")]
    #[value(
        help = "Every brain plus the medulla, grouped by origin (an explicit cross-project pull)"
    )]
    AllBrains,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct SeekArgs {
    /// What to look for. Empty = the most recent claims.
    #[serde(default)]
    #[arg(skip)]
    pub query: String,
    /// Absent = this brain + the medulla; `project`; `medulla`; `all-brains` (every registered brain, grouped by origin).
    #[arg(
        long,
        value_enum,
        help = "Where to look [default: this brain plus the medulla]"
    )]
    pub tier: Option<SeekTier>,
    /// Slug or label prefix filter.
    #[arg(
        long,
        value_name = "PREFIX",
        help = "Only claims whose slug or label starts with this"
    )]
    pub scope: Option<String>,
    /// Most rows to return (default 10, from 1 to 200).
    #[arg(long, help = "How many rows, 1 to 200 [default: 10]")]
    pub limit: Option<usize>,
    /// Rows with their full provenance (trust counts, version, content hash, evidence,
    /// the promotion record). Without it rows are compact.
    #[serde(default)]
    #[arg(
        long,
        help = "Show each row's full provenance (trust counts, version, hash, evidence, promotion)"
    )]
    pub detail: bool,
    /// Narrow the candidates: by agent, minimum strength or trust, creation time, evidence.
    #[command(flatten)]
    pub filter: Option<Filters>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Flat {
    /// `project`, `medulla`, or `project+medulla` for the default beat.
    pub tier: Cow<'static, str>,
    /// The confident rows: each cleared the relevance floor.
    pub results: Vec<Row>,
    /// Says what the weak rows are, when there are any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below_floor: Option<Cow<'static, str>>,
    /// When the confident rows are fewer than asked: up to three rows below the floor
    /// but above its weak bound, each `weak: true` with its scores. Never in `north`,
    /// `delegate` or `prime`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weak: Vec<Row>,
    /// When nothing cleared the relevance floor: how many live claims each store asked
    /// holds (no false absence, and no false presence).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_exists: Option<Counts>,
    /// When nothing matched: says whether memory exists, and what to try.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// While a brain restarted in the middle of catching up on an import still reads
    /// back the vectors it held: how many were not read yet. Their claims were matched
    /// by their words only (one that shares no word with the query may be missing until
    /// they are read, in seconds); `vectors_loading_note` says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors_loading: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors_loading_note: Option<Cow<'static, str>>,
    /// Published in the envelope (`Answer::retrieval`); read back from there.
    #[serde(skip, default = "lexical")]
    pub retrieval: Retrieval,
}

/// What `vectors_loading` means, beside it in every answer that has it.
pub const LOADING_NOTE: &str = "some claims' vectors are still being read back after a \
    restart: those claims were matched by their words only; ask again in a few seconds \
    to match them by meaning too";

/// Live claims per store asked.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medulla: Option<u64>,
}

impl Flat {
    fn new(tier: &'static str, found: Found, detail: bool) -> Flat {
        let weak = shown(found.weak, detail);
        Flat {
            tier: tier.into(),
            results: shown(found.rows, detail),
            below_floor: (!weak.is_empty()).then_some(Cow::Borrowed(WEAK_NOTE)),
            weak,
            memory_exists: None,
            note: None,
            vectors_loading: (found.vectors_loading > 0).then_some(found.vectors_loading),
            vectors_loading_note: (found.vectors_loading > 0)
                .then_some(Cow::Borrowed(LOADING_NOTE)),
            retrieval: found.retrieval,
        }
    }

    /// An empty answer says whether the stores it asked hold memory at all.
    async fn stamp_when_empty(
        mut self,
        svc: &Service,
        project: Option<&Fingerprint>,
        medulla: bool,
    ) -> Result<Flat> {
        if !self.results.is_empty() {
            return Ok(self);
        }
        let mut counts = Counts::default();
        if let Some(fp) = project {
            counts.project = Some(svc.owner.stats(&StoreId::brain(fp)).await?.live_claims);
        }
        if medulla {
            counts.medulla = Some(svc.owner.stats(&StoreId::Medulla).await?.live_claims);
        }
        let total = counts.project.unwrap_or(0) + counts.medulla.unwrap_or(0);
        let held = [("project", counts.project), ("medulla", counts.medulla)]
            .iter()
            .filter_map(|(t, n)| n.map(|n| format!("{n} {t}")))
            .collect::<Vec<_>>()
            .join(", ");
        self.note = Some(if total == 0 {
            "no memory yet: the stores asked hold no claims".into()
        } else if !self.weak.is_empty() {
            format!(
                "memory exists ({held} claims) but none cleared the relevance floor for this query; \
                 {} below it may answer it (`weak`): judge them, or try other words",
                self.weak.len()
            )
        } else {
            format!(
                "memory exists ({held} claims) but none cleared the relevance floor for this query; \
                 try other words, a wider filter, or an empty query for the most recent claims"
            )
        });
        self.memory_exists = Some(counts);
        Ok(self)
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Group {
    pub origin_brain: String,
    pub results: Vec<Row>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FailedBrain {
    pub brain: String,
    pub error: ErrorBody,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Grouped {
    pub tier: Cow<'static, str>,
    pub brains_searched: usize,
    pub groups: Vec<Group>,
    pub failed: Vec<FailedBrain>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SeekAnswer {
    Flat(Flat),
    Grouped(Grouped),
}

impl Answer for SeekAnswer {
    fn retrieval(&self) -> Option<Retrieval> {
        match self {
            SeekAnswer::Flat(f) => Some(f.retrieval),
            SeekAnswer::Grouped(_) => None,
        }
    }
}

pub struct Seek;

impl Verb for Seek {
    const NAME: &'static str = "seek";
    const DESCRIPTION: &'static str = "Recall claims: by default this brain plus the medulla (plus the team medulla when a team is joined). tier: project | medulla | team | all-brains (explicit cross-project pull, grouped by origin). Rows carry tier, provenance, age and staleness.";
    const EFFECT: Effect = Effect::Read;
    const IDEMPOTENT: bool = true;
    type Args = SeekArgs;
    type Answer = SeekAnswer;

    async fn run(cx: Cx<'_>, a: SeekArgs) -> Result<SeekAnswer> {
        let svc = cx.svc;
        let answer = seek(cx, a).await?;
        if let SeekAnswer::Flat(f) = &answer {
            crate::service::usage::note(svc, f.results.iter().chain(&f.weak));
        }
        Ok(answer)
    }
}

/// The seek itself; [`Seek::run`] notes which claims it showed.
async fn seek(cx: Cx<'_>, a: SeekArgs) -> Result<SeekAnswer> {
    {
        let svc = cx.svc;
        check_query("query", &a.query)?;
        if let Some(sc) = &a.scope {
            check_query("scope", sc)?;
        }
        let limit = check_limit(a.limit, DEFAULT_LIMIT, MAX_LIMIT)?;
        let mut q = svc
            .query(
                a.query,
                a.scope,
                limit,
                a.filter.unwrap_or_default().to_filter()?,
            )
            .await?;
        let brain = cx.routed.brain.as_ref();
        if let Some(b) = brain {
            svc.counters(&b.fingerprint).recalled();
        }
        if a.tier == Some(SeekTier::AllBrains) {
            return all_brains(svc, &q, a.detail).await.map(SeekAnswer::Grouped);
        }
        // A flat seek may fill in below the floor (SPEC §5); the grouped pull does not.
        q.weak = WEAK_ROWS;
        match a.tier {
            Some(SeekTier::Project) => {
                let b = write_target(cx.routed)?;
                let mut found =
                    recall_rows(svc, &StoreId::brain(&b.fingerprint), &q, StoreTier::Project)
                        .await?;
                found.mark_drift(svc, cx).await;
                return Flat::new("project", found, a.detail)
                    .stamp_when_empty(svc, Some(&b.fingerprint), false)
                    .await
                    .map(SeekAnswer::Flat);
            }
            Some(SeekTier::Medulla) => {
                let mut found = recall_rows(svc, &StoreId::Medulla, &q, StoreTier::Medulla).await?;
                mark_superseded(svc, cx.routed, cx.input, &mut found.rows).await?;
                found.mark_drift(svc, cx).await;
                return Flat::new("medulla", found, a.detail)
                    .stamp_when_empty(svc, None, true)
                    .await
                    .map(SeekAnswer::Flat);
            }
            Some(SeekTier::Team) => {
                svc.owner
                    .registry
                    .team()
                    .ok_or(crate::error::OwnerError::NoTeam)?;
                let mut found = recall_rows(svc, &StoreId::Team, &q, StoreTier::Team).await?;
                found.mark_drift(svc, cx).await;
                return Ok(SeekAnswer::Flat(Flat::new("team", found, a.detail)));
            }
            Some(SeekTier::AllBrains) | None => {}
        }
        // The default beat: this brain plus the medulla (and the team medulla, when a
        // team is joined), nothing else, asked at once.
        let project = async {
            match brain {
                Some(b) => {
                    recall_rows(svc, &StoreId::brain(&b.fingerprint), &q, StoreTier::Project)
                        .await
                        .map(Some)
                }
                None => Ok(None),
            }
        };
        let team_joined = svc.owner.registry.team_store().is_some();
        let team = async {
            if team_joined {
                recall_rows(svc, &StoreId::Team, &q, StoreTier::Team)
                    .await
                    .map(Some)
            } else {
                Ok(None)
            }
        };
        let (medulla, project, team) = tokio::join!(
            recall_rows(svc, &StoreId::Medulla, &q, StoreTier::Medulla),
            project,
            team
        );
        let mut found = medulla?;
        if let Some(t) = team? {
            found.join(t);
        }
        mark_superseded(svc, cx.routed, cx.input, &mut found.rows).await?;
        if let Some(mut p) = project? {
            merge_promoted(&mut p.rows, &mut found.rows);
            found.join(p);
        }
        let tier = match (brain.is_some(), team_joined) {
            (true, false) => "project+medulla",
            (false, false) => "medulla",
            (true, true) => "project+medulla+team",
            (false, true) => "medulla+team",
        };
        found.rows = best(found.rows, limit);
        // Weak rows only while the confident ones are fewer than asked, the best three of
        // every store's.
        found.weak = if found.rows.len() < limit {
            best(found.weak, WEAK_ROWS)
        } else {
            Vec::new()
        };
        found.mark_drift(svc, cx).await;
        Flat::new(tier, found, a.detail)
            .stamp_when_empty(svc, brain.map(|b| &b.fingerprint), true)
            .await
            .map(SeekAnswer::Flat)
    }
}

/// One recall's rows: the confident ones, the weak ones (below the floor, labelled), and
/// how they were found.
pub struct Found {
    pub rows: Vec<Row>,
    pub weak: Vec<Row>,
    pub retrieval: Retrieval,
    /// Vectors not read back yet ([`brains::recall::RecallResult::vectors_loading`]).
    pub vectors_loading: u64,
}

impl Found {
    /// Another store's rows beside these; lexical-only when either was.
    fn join(&mut self, other: Found) {
        self.rows.extend(other.rows);
        self.weak.extend(other.weak);
        self.vectors_loading += other.vectors_loading;
        if other.retrieval == Retrieval::Lexical {
            self.retrieval = Retrieval::Lexical;
        }
    }

    async fn mark_drift(&mut self, svc: &Service, cx: Cx<'_>) {
        drift::mark(svc, cx.routed, cx.input, &mut self.rows).await;
        drift::mark(svc, cx.routed, cx.input, &mut self.weak).await;
    }
}

fn lexical() -> Retrieval {
    Retrieval::Lexical
}

/// Rows as the answer shows them: compact unless `detail`.
pub fn shown(rows: Vec<Row>, detail: bool) -> Vec<Row> {
    rows.into_iter().map(|r| r.shown(detail)).collect()
}

/// The best `limit` rows of several stores.
fn best(mut rows: Vec<Row>, limit: usize) -> Vec<Row> {
    rows.sort_by(Row::by_score);
    rows.truncate(limit);
    rows
}

/// Recall one store and render its rows: those that cleared the floor, and the weak
/// ones the query asked for.
pub async fn recall_rows(
    svc: &Service,
    store: &StoreId,
    q: &RecallQuery,
    tier: StoreTier,
) -> Result<Found> {
    let res = svc.owner.recall(store, q.clone()).await?;
    let now = svc.now();
    let (mut rows, mut weak) = (Vec::new(), Vec::new());
    for h in &res.hits {
        if h.matched {
            rows.push(Row::of(&h.claim, tier, now, Some(h.score)));
        } else {
            weak.push(Row::weak(&h.claim, tier, now, h));
        }
    }
    Ok(Found {
        rows,
        weak,
        retrieval: res.retrieval,
        vectors_loading: res.vectors_loading as u64,
    })
}

async fn all_brains(svc: &Service, q: &RecallQuery, detail: bool) -> Result<Grouped> {
    let manifests = svc.owner.registry.all_manifests();
    // Brains that were dormant are loaded for this read only, then let go again.
    let dormant: Vec<Fingerprint> = manifests
        .iter()
        .filter(|m| !svc.owner.registry.is_warm(&m.fingerprint))
        .map(|m| m.fingerprint.clone())
        .collect();
    let stores: Vec<StoreId> = manifests
        .iter()
        .map(|m| StoreId::brain(&m.fingerprint))
        .collect();
    let per_brain = join_all(
        stores
            .iter()
            .map(|id| recall_rows(svc, id, q, StoreTier::Project)),
    )
    .await;
    let medulla_rows = recall_rows(svc, &StoreId::Medulla, q, StoreTier::Medulla)
        .await?
        .rows;
    if !dormant.is_empty() {
        let owner = svc.owner.clone();
        tokio::spawn(async move {
            for fp in dormant {
                let _ = owner.unload(&fp).await;
            }
        });
    }
    let mut groups: std::collections::BTreeMap<String, Vec<Row>> = Default::default();
    let mut failed = Vec::new();
    for (m, res) in manifests.iter().zip(per_brain) {
        match res {
            Ok(found) => {
                for r in found.rows {
                    groups.entry(r.origin_brain.clone()).or_default().push(r);
                }
            }
            Err(e) => failed.push(FailedBrain {
                brain: m.root.clone(),
                error: ErrorBody::from(&e),
            }),
        }
    }
    if !medulla_rows.is_empty() {
        groups
            .entry("medulla".into())
            .or_default()
            .extend(medulla_rows);
    }
    Ok(Grouped {
        tier: "all-brains".into(),
        brains_searched: manifests.len(),
        groups: groups
            .into_iter()
            .map(|(origin_brain, rows)| Group {
                origin_brain,
                results: shown(best(rows, q.limit), detail),
            })
            .collect(),
        failed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(loading: u64) -> Found {
        Found {
            rows: vec![],
            weak: vec![],
            retrieval: Retrieval::Hybrid,
            vectors_loading: loading,
        }
    }

    /// Law 4: while a restarted brain still reads back its vectors, the answer says how
    /// many and that those claims were matched by their words only; otherwise nothing.
    #[test]
    fn an_answer_says_when_vectors_were_still_being_read() {
        let mut f = found(0);
        f.join(found(1200));
        f.join(found(34));
        let v = serde_json::to_value(Flat::new("project+medulla", f, false)).unwrap();
        assert_eq!(v["vectors_loading"], 1234);
        assert_eq!(v["vectors_loading_note"], LOADING_NOTE);
        assert!(LOADING_NOTE.contains("words only"));
        let v = serde_json::to_value(Flat::new("project", found(0), false)).unwrap();
        assert!(v.get("vectors_loading").is_none(), "{v}");
        assert!(v.get("vectors_loading_note").is_none(), "{v}");
    }
}
