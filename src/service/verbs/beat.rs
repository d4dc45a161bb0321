//! `north`, the default beat: the served brain's task-relevant claims plus the medulla's
//! doctrine, labelled. The medulla part has a hard time budget and is fail-open: the
//! project part always arrives. No false absence: stores that hold claims but matched
//! nothing say so and list their most recent claims, marked as not matched.

use std::borrow::Cow;

use brains::RecallFilter;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::seek::shown;
use super::ErrorBody;
use crate::error::{OwnerError, Result};
use crate::roster::Manifest;
use crate::service::query::Filters;
use crate::service::rows::{Row, StoreTier};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::service::{check_limit, check_query, Service};
use crate::store_id::StoreId;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct NorthArgs {
    /// The task about to be worked on.
    #[arg(skip)]
    pub task: String,
    /// Most rows per tier (default 8, from 1 to 50).
    #[arg(long, help = "How many rows per store")]
    pub limit: Option<usize>,
    /// Rows with their full provenance; without it rows are compact.
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

/// Doctrine that disagrees with its own origin: the medulla holds a copy of a project
/// claim that has changed in its project since.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Disagreement {
    pub slug: String,
    /// What the medulla says.
    pub medulla_text: String,
    /// `<root>#<slug>`.
    pub witness: String,
    pub witness_version: u64,
    /// What the project says now (for its own brain or the founder only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness_text: Option<String>,
    pub fix: Cow<'static, str>,
}

/// How many live claims each store holds; `medulla: null` when it could not be asked.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub struct Exists {
    pub project: u64,
    pub medulla: Option<u64>,
}

/// The composed memory of a beat.
pub struct Beat {
    pub project: Vec<Row>,
    pub medulla: Vec<Row>,
    pub medulla_error: Option<ErrorBody>,
    pub exists: Exists,
    pub recent: Vec<Row>,
    /// Rows below the relevance floor but above its weak bound: counted, never shown
    /// (a beat stays confident); `north` says `seek` shows them.
    pub weak: usize,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NorthAnswer {
    pub task: String,
    pub project: Vec<Row>,
    pub medulla: Vec<Row>,
    pub memory_exists: Exists,
    pub note: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent_unmatched: Vec<Row>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medulla_error: Option<ErrorBody>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disagreements: Vec<Disagreement>,
    /// Verify before relying on: claims listed above whose anchored evidence files
    /// changed or disappeared since they were written (each row's `evidence_changed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verify_first: Vec<Row>,
}

impl Answer for NorthAnswer {}

/// The doctrine rows whose witness changed, labelled for the beat.
pub fn disagreements(medulla: &[Row]) -> Vec<Disagreement> {
    medulla
        .iter()
        .filter_map(|r| {
            let w = r.witness_superseded.as_ref()?;
            Some(Disagreement {
                slug: r.slug.clone(),
                medulla_text: r.text.clone(),
                witness: w.witness.clone(),
                witness_version: w.by_version,
                witness_text: w.new_text.clone(),
                fix: "the founder promotes the witness again, or demotes the medulla copy".into(),
            })
        })
        .collect()
}

pub struct North;

impl Verb for North {
    const NAME: &'static str = "north";
    const DESCRIPTION: &'static str = "The default beat before a task: this brain's task-relevant claims plus the medulla's doctrine, labelled, with memory_exists counts (never a false 'no memory').";
    const EFFECT: Effect = Effect::Read;
    const IDEMPOTENT: bool = true;
    type Args = NorthArgs;
    type Answer = NorthAnswer;

    async fn run(cx: Cx<'_>, a: NorthArgs) -> Result<NorthAnswer> {
        if a.task.trim().is_empty() {
            return Err(OwnerError::BadInput(
                "north needs a task: describe what you are about to work on".into(),
            ));
        }
        check_query("task", &a.task)?;
        let brain = cx.routed.brain.as_ref();
        let filter = a.filter.unwrap_or_default().to_filter()?;
        let mut beat = compose(cx.svc, brain, &a.task, beat_limit(a.limit)?, filter).await?;
        beat.settle(cx).await?;
        if let Some(b) = brain {
            cx.svc.counters(&b.fingerprint).beat();
        }
        let mut note = beat.note();
        if beat.project.is_empty() && beat.medulla.is_empty() && beat.weak > 0 {
            note.push_str(&format!(
                "; {} weak match(es) fell short of the relevance floor: `seek` the same words to see them, labelled",
                beat.weak.min(super::seek::WEAK_ROWS)
            ));
        }
        let verify_first = beat.verify_first();
        if !verify_first.is_empty() {
            note.push_str(&format!(
                "; verify before relying on {} claim(s) whose evidence changed since they were written (see verify_first)",
                verify_first.len()
            ));
        }
        let disagreements = disagreements(&beat.medulla);
        if !disagreements.is_empty() {
            note.push_str(&format!(
                "; {} medulla claim(s) disagree with their project witness, changed since the promotion (see disagreements)",
                disagreements.len()
            ));
        }
        Ok(NorthAnswer {
            note,
            task: a.task,
            project: shown(beat.project, a.detail),
            medulla: shown(beat.medulla, a.detail),
            memory_exists: beat.exists,
            recent_unmatched: shown(beat.recent, a.detail),
            medulla_error: beat.medulla_error,
            disagreements,
            verify_first: shown(verify_first, a.detail),
        })
    }
}

pub fn beat_limit(l: Option<usize>) -> Result<usize> {
    check_limit(l, 8, 50)
}

impl Beat {
    /// One row per promoted claim, and doctrine whose witness changed marked as such.
    pub async fn settle(&mut self, cx: Cx<'_>) -> Result<()> {
        crate::service::provenance::merge_promoted(&mut self.project, &mut self.medulla);
        crate::service::provenance::mark_superseded(cx.svc, cx.routed, cx.input, &mut self.medulla)
            .await?;
        for rows in [&mut self.project, &mut self.medulla, &mut self.recent] {
            crate::service::drift::mark(cx.svc, cx.routed, cx.input, rows).await;
        }
        Ok(())
    }

    /// Rows whose anchored evidence changed since they were written: listed apart, to be
    /// verified before relying on them.
    pub fn verify_first(&self) -> Vec<Row> {
        self.project
            .iter()
            .chain(&self.medulla)
            .chain(&self.recent)
            .filter(|r| !r.evidence_changed.is_empty())
            .cloned()
            .collect()
    }

    /// What the beat says about what matched, never a false "no memory".
    pub fn note(&self) -> String {
        let Exists {
            project: p,
            medulla: m,
        } = self.exists;
        if !self.project.is_empty() || !self.medulla.is_empty() {
            return format!(
                "{} project and {} medulla claims matched the task",
                self.project.len(),
                self.medulla.len()
            );
        }
        match m {
            Some(m) if p == 0 && m == 0 => "no memory yet: this brain and the medulla hold no claims".into(),
            Some(m) => format!(
                "memory exists ({p} project, {m} medulla claims) but none matched this task; the most recent are listed as not matched"
            ),
            None => format!(
                "memory exists ({p} project claims; the medulla's count is unknown because it failed) but none matched this task"
            ),
        }
    }
}

/// The beat: the brain's part, then the medulla's part under its budget (fail-open).
pub async fn compose(
    svc: &Service,
    brain: Option<&Manifest>,
    task: &str,
    limit: usize,
    filter: RecallFilter,
) -> Result<Beat> {
    let mut q = svc.query(task.to_string(), None, limit, filter).await?;
    // Weak rows are asked for only to be counted (SPEC §5): a beat shows none.
    q.weak = super::seek::WEAK_ROWS;
    let now = svc.now();
    // The brain's part and the medulla's part are asked at once; the medulla's under its
    // budget, fail-open.
    let project_part = async {
        match brain {
            Some(b) => {
                let res = svc
                    .owner
                    .recall(&StoreId::brain(&b.fingerprint), q.clone())
                    .await?;
                let count = svc
                    .owner
                    .stats(&StoreId::brain(&b.fingerprint))
                    .await?
                    .live_claims;
                Ok::<_, OwnerError>((res.hits, count))
            }
            None => Ok((Vec::new(), 0)),
        }
    };
    let budget = svc.owner.config.medulla_budget;
    let medulla_part = async {
        // A zero budget leaves the medulla no time at all: do not even ask.
        if budget.is_zero() {
            return Err(());
        }
        let ask = async {
            let res = svc.owner.recall(&StoreId::Medulla, q.clone()).await?;
            let count = svc.owner.stats(&StoreId::Medulla).await?.live_claims;
            let mut weak = res.hits.iter().filter(|h| !h.matched).count();
            let mut rows: Vec<Row> = res
                .hits
                .iter()
                .filter(|h| h.matched)
                .map(|h| Row::of(&h.claim, StoreTier::Medulla, now, Some(h.score)))
                .collect();
            let mut count = count;
            // The team medulla, when a team is joined: read from the local mirror.
            if svc.owner.registry.team_store().is_some() {
                let team = svc.owner.recall(&StoreId::Team, q.clone()).await?;
                count += svc.owner.stats(&StoreId::Team).await?.live_claims;
                weak += team.hits.iter().filter(|h| !h.matched).count();
                rows.extend(
                    team.hits
                        .iter()
                        .filter(|h| h.matched)
                        .map(|h| Row::of(&h.claim, StoreTier::Team, now, Some(h.score))),
                );
                rows.sort_by(Row::by_score);
                rows.truncate(q.limit);
            }
            Ok::<_, OwnerError>((rows, count, weak))
        };
        tokio::time::timeout(budget, ask).await.map_err(|_| ())
    };
    let (project_part, outcome) = tokio::join!(project_part, medulla_part);
    let (hits, project_count) = project_part?;
    let project: Vec<Row> = hits
        .iter()
        .filter(|h| h.matched)
        .map(|h| Row::of(&h.claim, StoreTier::Project, now, Some(h.score)))
        .collect();
    let mut weak = hits.iter().filter(|h| !h.matched).count();
    let (medulla, medulla_count, medulla_error) = match outcome {
        Ok(Ok((rows, count, w))) => {
            weak += w;
            (rows, Some(count), None)
        }
        Ok(Err(e)) => (vec![], None, Some(ErrorBody::from(&e))),
        Err(_) => (
            vec![],
            None,
            Some(ErrorBody::from(&OwnerError::MedullaTimeout {
                ms: budget.as_millis() as u64,
            })),
        ),
    };
    let mut recent = Vec::new();
    if project.is_empty() && medulla.is_empty() {
        if let Some(b) = brain.filter(|_| project_count > 0) {
            for c in svc.owner.recent(&StoreId::brain(&b.fingerprint), 3).await? {
                let mut r = Row::of(&c, StoreTier::Project, now, None);
                r.matched_task = Some(false);
                recent.push(r);
            }
        }
        if medulla_count.unwrap_or(0) > 0 {
            if let Ok(cs) = svc.owner.recent(&StoreId::Medulla, 3).await {
                for c in cs {
                    let mut r = Row::of(&c, StoreTier::Medulla, now, None);
                    r.matched_task = Some(false);
                    recent.push(r);
                }
            }
        }
    }
    Ok(Beat {
        project,
        medulla,
        medulla_error,
        exists: Exists {
            project: project_count,
            medulla: medulla_count,
        },
        recent,
        weak,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;
    use std::time::Duration;

    use brains::{Retrieval, StoreOptions, SystemClock};
    use serde_json::json;

    use crate::brain::BrainMsg;
    use crate::config::Config;
    use crate::owner::OwnerHandle;
    use crate::service::{RouteInput, Service};

    async fn service(home: &Path) -> Service {
        let cfg = Arc::new(Config::load(home).unwrap());
        let (owner, _join) = OwnerHandle::start(cfg, StoreOptions::default())
            .await
            .unwrap();
        Service {
            owner,
            retrieval: Retrieval::Lexical,
            model_note: None,
            clock: Arc::new(SystemClock),
            founder_token: Arc::new("test-founder-token".repeat(4)),
            anchors: Default::default(),
            backups: Default::default(),
            life: Default::default(),
            refusals: Default::default(),
            hints: Arc::new(crate::service::hints::ledger::Ledger::new(
                std::time::Duration::from_secs(3600),
            )),
        }
    }

    /// The medulla part is fail-open: a stalled medulla costs the beat its medulla rows,
    /// never its project rows, and the answer says what failed.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn north_arrives_without_a_stalled_medulla() {
        let home = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let svc = service(home.path()).await;
        let root = std::fs::canonicalize(proj.path()).unwrap();
        let (m, _) = svc
            .owner
            .bootstrap(root.clone(), None, false)
            .await
            .unwrap();
        let input = RouteInput {
            binding: Some(m.root.clone()),
            agent: Some("claude:maker".into()),
            ..Default::default()
        };
        svc.call_tool(
            "memorize",
            json!({ "label": "deploy", "text": "deploy with the blue-green script" }),
            &input,
        )
        .await
        .unwrap();
        svc.owner
            .registry
            .medulla()
            .cast(BrainMsg::Stall(Duration::from_secs(4)))
            .unwrap();
        // The stall is a slow write: wait until it holds the medulla's store.
        let store = svc.owner.registry.medulla_store();
        let held = tokio::time::timeout(Duration::from_secs(3), async {
            while !store.write_held() {
                tokio::task::yield_now().await;
            }
        })
        .await;
        assert!(held.is_ok(), "the stall took the store");
        let out = svc
            .call_tool("north", json!({ "task": "how do we deploy" }), &input)
            .await
            .unwrap()
            .value;
        assert_eq!(out["project"][0]["label"], "deploy", "{out}");
        assert_eq!(out["medulla_error"]["code"], "medulla_timeout", "{out}");
        assert_eq!(out["memory_exists"]["project"], 1);
        assert!(
            out["memory_exists"]["medulla"].is_null(),
            "an unknown count is not a zero: {out}"
        );
    }
}
