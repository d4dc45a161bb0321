//! The tools: argument schemas (published in MCP `tools/list`) and their handlers.

use brains::{Claim, MemorizeInput, MemorizeOutcome, RecallQuery, Strength, Verdict};
use futures::future::join_all;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::mailbox::{self, ReportArgs, SweepArgs};
use super::north::{self, DebriefArgs, DelegateArgs, NorthArgs};
use super::promote::{self, AuditArgs, PromoteArgs};
use super::render::{row, Tier};
use super::route::{bootstrap_fix, Routed};
use super::transfer::{self, ExportArgs, ImportArgs};
use super::{RouteInput, Service, ToolOutput};
use crate::brain::BrainMsg;
use crate::error::{OwnerError, Result};
use crate::owner::BrainCounters;
use crate::roster::{self, Manifest};

const DEFAULT_LIMIT: usize = 10;
const MAX_LIMIT: usize = 200;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BootstrapArgs {
    /// Absolute path of the project root. Defaults to the caller root.
    pub root: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrainsArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorizeArgs {
    /// The claim's name; its identity within the store (a slug is derived from it).
    pub label: String,
    /// The claim itself.
    pub text: String,
    /// Who writes it, `vendor:role` (e.g. `claude:maker`). Defaults to the Medulla-Agent header.
    pub agent_id: Option<String>,
    /// `hint`, `observed` (default) or `verified`. A weaker write than the live version is refused.
    pub strength: Option<String>,
    /// Paths or references backing the claim.
    pub evidence: Option<Vec<String>>,
    /// `project` (default). `medulla` is doctrine birth: written straight into the medulla through the audit actor.
    pub tier: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SeekArgs {
    /// What to look for. Empty = the most recent claims.
    #[serde(default)]
    pub query: String,
    /// Absent = this brain + the medulla; `project`; `medulla`; `all-brains` (every registered brain, grouped by origin).
    pub tier: Option<String>,
    /// Slug or label prefix filter.
    pub scope: Option<String>,
    /// Most rows to return (default 10, at most 200).
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// The claim's slug (a label is accepted and slugified).
    pub slug: String,
    /// Absent = this brain, then the medulla; `project`; `medulla`.
    pub tier: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BootMemoryArgs {
    /// `get`, `set`, `list` or `delete`.
    pub op: String,
    pub key: Option<String>,
    /// The value, for `set`.
    pub value: Option<String>,
    /// Absent = this brain (reads fall back to the medulla); `project`; `medulla`.
    pub tier: Option<String>,
    /// Who writes, for `set` and `delete`. Defaults to the Medulla-Agent header.
    pub agent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LearnArgs {
    /// The claim's slug (a label is accepted and slugified).
    pub slug: String,
    /// `correct`, `partial` or `wrong`. On a medulla claim, `wrong` demotes it (the project witness is untouched).
    pub verdict: String,
    pub agent_id: Option<String>,
    /// Why, in one line.
    pub note: Option<String>,
    /// `project` (default) or `medulla`.
    pub tier: Option<String>,
}

/// A tool as published: name, description, input schema.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: Map<String, Value>,
}

fn schema<T: JsonSchema>() -> Map<String, Value> {
    let s = schemars::schema_for!(T);
    match serde_json::to_value(s) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// Every tool the owner serves.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "bootstrap",
            description: "Create the brain for a project root (idempotent). Without `root`, the caller root is used.",
            schema: schema::<BootstrapArgs>(),
        },
        ToolSpec {
            name: "brains",
            description: "List every brain on disk, warm or dormant, with its manifest and per-brain counts.",
            schema: schema::<BrainsArgs>(),
        },
        ToolSpec {
            name: "memorize",
            description: "Write a claim into this project's brain. Same label at equal or greater strength supersedes (old version kept in history); weaker is refused; identical is a no-op.",
            schema: schema::<MemorizeArgs>(),
        },
        ToolSpec {
            name: "seek",
            description: "Recall claims: by default this brain plus the medulla. tier: project | medulla | all-brains (explicit cross-project pull, grouped by origin). Rows carry tier, provenance, age and staleness.",
            schema: schema::<SeekArgs>(),
        },
        ToolSpec {
            name: "history",
            description: "Every version of a claim, oldest first, including outdated ones.",
            schema: schema::<HistoryArgs>(),
        },
        ToolSpec {
            name: "boot_memory",
            description: "A small key-value store per brain and for the medulla: op get | set | list | delete.",
            schema: schema::<BootMemoryArgs>(),
        },
        ToolSpec {
            name: "north",
            description: "The default beat before a task: this brain's task-relevant claims plus the medulla's doctrine, labelled, with memory_exists counts (never a false 'no memory').",
            schema: schema::<NorthArgs>(),
        },
        ToolSpec {
            name: "delegate",
            description: "Compose a delegation packet for a subagent: the brain binding (the header the child must send), a labelled memory slice for the task, sources, and the etiquette line; as JSON and as text.",
            schema: schema::<DelegateArgs>(),
        },
        ToolSpec {
            name: "debrief",
            description: "Memorize a child's findings project-private under the child's agent id in the bound brain. Never writes the medulla.",
            schema: schema::<DebriefArgs>(),
        },
        ToolSpec {
            name: "promote",
            description: "Copy a project claim into the medulla through the audit actor (hygiene floor, provenance chain, witness stamped promoted_to). Expected of *:orchestrator and human:founder; others land flagged.",
            schema: schema::<PromoteArgs>(),
        },
        ToolSpec {
            name: "audit",
            description: "The medulla's audit log: promotions, doctrine births and demotions, newest first, with etiquette flags; filter by brain or agent.",
            schema: schema::<AuditArgs>(),
        },
        ToolSpec {
            name: "report",
            description: "File a field report: append a letter to the spool (never rewritten); the distributor files it into its project's box, the medulla box if projectless, or keeps it pending.",
            schema: schema::<ReportArgs>(),
        },
        ToolSpec {
            name: "inbox_sweep",
            description: "Every letter once: the spool plus every known box, with derived fates (wet_ink, in_flight, fired_clay, external) and the boxes that could not be reached.",
            schema: schema::<SweepArgs>(),
        },
        ToolSpec {
            name: "import",
            description: "Import a directory of legacy .light.md claim files (and .history/ versions) into a brain or the medulla; count-conserving report; dry_run to check first.",
            schema: schema::<ImportArgs>(),
        },
        ToolSpec {
            name: "export",
            description: "Render a brain's (or the medulla's) live claims, and optionally their history, as .light.md files with every provenance field.",
            schema: schema::<ExportArgs>(),
        },
        ToolSpec {
            name: "learn",
            description: "Grade a claim: verdict correct | partial | wrong adjusts its trust.",
            schema: schema::<LearnArgs>(),
        },
    ]
}

fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T> {
    serde_json::from_value(args).map_err(|e| {
        OwnerError::BadInput(format!(
            "bad arguments for {tool}: {e}; see the tool's input schema in tools/list"
        ))
    })
}

pub async fn dispatch(
    svc: &Service,
    name: &str,
    args: Value,
    input: &RouteInput,
) -> Result<ToolOutput> {
    let routed = svc.route(input)?;
    let landed = routed.brain.as_ref().map(|m| m.fingerprint.clone());
    let mut value = match name {
        "bootstrap" => bootstrap(svc, parse(name, args)?, &routed).await?,
        "brains" => {
            let _: BrainsArgs = parse(name, args)?;
            svc.instances().await?
        }
        "memorize" => memorize(svc, parse(name, args)?, &routed, input).await?,
        "seek" => seek(svc, parse(name, args)?, &routed).await?,
        "history" => history(svc, parse(name, args)?, &routed).await?,
        "boot_memory" => boot_memory(svc, parse(name, args)?, &routed, input).await?,
        "learn" => learn(svc, parse(name, args)?, &routed, input).await?,
        "promote" => promote::promote(svc, parse(name, args)?, &routed, input).await?,
        "audit" => promote::audit_log(svc, parse(name, args)?).await?,
        "report" => mailbox::report(svc, parse(name, args)?, input).await?,
        "inbox_sweep" => {
            let _: SweepArgs = parse(name, args)?;
            mailbox::sweep(svc).await?
        }
        "import" => transfer::import(svc, parse(name, args)?).await?,
        "export" => transfer::export(svc, parse(name, args)?).await?,
        "north" => north::north(svc, parse(name, args)?, &routed).await?,
        "delegate" => north::delegate(svc, parse(name, args)?, &routed).await?,
        "debrief" => north::debrief(svc, parse(name, args)?, &routed, input).await?,
        other => return Err(OwnerError::UnknownTool(other.to_string())),
    };
    if let Value::Object(map) = &mut value {
        map.entry("retrieval")
            .or_insert_with(|| json!(svc.retrieval.as_str()));
        if let Some(r) = &routed.reception {
            map.insert("reception".into(), json!(r));
        }
        if let Some(b) = &routed.brain {
            map.entry("served_brain").or_insert_with(|| json!(b.root));
        }
    }
    let landed = if name == "bootstrap" {
        value["brain"]["fingerprint"]
            .as_str()
            .map(str::to_string)
            .or(landed)
    } else {
        landed
    };
    Ok(ToolOutput { value, landed })
}

/// The brain a write must land on, or the `unbootstrapped` refusal with the fix.
pub(crate) fn write_target(routed: &Routed) -> Result<&Manifest> {
    routed.brain.as_ref().ok_or_else(|| {
        let root = routed
            .caller_root
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned());
        OwnerError::Unbootstrapped {
            caller_root: root.clone().unwrap_or_else(|| "an unnamed caller".into()),
            fix: bootstrap_fix(root.as_deref()),
        }
    })
}

pub(crate) fn agent(arg: Option<String>, input: &RouteInput) -> Result<String> {
    let a = arg.or_else(|| input.agent.clone()).ok_or_else(|| {
        OwnerError::BadInput(
            "no agent id: pass agent_id (vendor:role, e.g. claude:maker) or send the Medulla-Agent header".into(),
        )
    })?;
    brains::claim::validate_agent_id(&a)?;
    Ok(a)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TierArg {
    Default,
    Project,
    Medulla,
    AllBrains,
}

fn tier_arg(t: Option<&str>, allow_all: bool) -> Result<TierArg> {
    match t.map(str::trim) {
        None | Some("") => Ok(TierArg::Default),
        Some("project") => Ok(TierArg::Project),
        Some("medulla") => Ok(TierArg::Medulla),
        Some("all-brains") if allow_all => Ok(TierArg::AllBrains),
        Some(other) => Err(OwnerError::BadInput(format!(
            "unknown tier {other:?}: use {}",
            if allow_all {
                "project, medulla or all-brains, or leave it out"
            } else {
                "project or medulla, or leave it out"
            }
        ))),
    }
}

fn brain_json(m: &Manifest) -> Value {
    json!({ "root": m.root, "fingerprint": m.fingerprint, "created": m.created })
}

async fn bootstrap(svc: &Service, a: BootstrapArgs, routed: &Routed) -> Result<Value> {
    let raw = match a.root {
        Some(r) => r,
        None => routed
            .caller_root
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned())
            .ok_or_else(|| {
                OwnerError::BadInput("no root given and no caller root header: pass root".into())
            })?,
    };
    let root = roster::canonical_root(&raw)?;
    let (m, created) = svc.owner.bootstrap(root).await?;
    Ok(json!({
        "brain": brain_json(&m),
        "created": created,
        "binding_header": format!("Medulla-Brain: {}", m.root),
    }))
}

async fn memorize(
    svc: &Service,
    a: MemorizeArgs,
    routed: &Routed,
    input: &RouteInput,
) -> Result<Value> {
    let tier = tier_arg(a.tier.as_deref(), false)?;
    let strength = a
        .strength
        .as_deref()
        .map(Strength::parse)
        .transpose()?
        .unwrap_or_default();
    if tier == TierArg::Medulla {
        let mi = MemorizeInput {
            label: a.label,
            text: a.text,
            source_agent: agent(a.agent_id, input)?,
            strength,
            evidence: a.evidence.unwrap_or_default(),
            ..Default::default()
        };
        return promote::doctrine_birth(svc, mi).await;
    }
    let target = write_target(routed)?;
    let mi = MemorizeInput {
        label: a.label,
        text: a.text,
        source_agent: agent(a.agent_id, input)?,
        strength,
        evidence: a.evidence.unwrap_or_default(),
        origin_brain: Some(target.root.clone()),
        ..Default::default()
    };
    let outcome = svc
        .owner
        .ask(Some(&target.fingerprint), |r| {
            BrainMsg::Memorize(mi.clone(), r)
        })
        .await?;
    BrainCounters::bump(&svc.counters(&target.fingerprint).writes);
    let now = svc.now_ms();
    let aging = svc.owner.opts.aging;
    let mut v = json!({
        "outcome": match &outcome {
            MemorizeOutcome::Created { .. } => "created",
            MemorizeOutcome::Superseded { .. } => "superseded",
            MemorizeOutcome::Unchanged { .. } => "unchanged",
        },
        "unchanged": outcome.unchanged(),
        "claim": row(outcome.claim(), Tier::Project, &aging, now, None),
        "brain": brain_json(target),
    });
    if let MemorizeOutcome::Superseded { previous, .. } = &outcome {
        v["previous"] = row(previous, Tier::Project, &aging, now, None);
    }
    Ok(v)
}

fn clamp_limit(l: Option<usize>) -> usize {
    l.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT)
}

/// Recall one store and render its rows.
async fn recall_rows(
    svc: &Service,
    fp: Option<&str>,
    q: &RecallQuery,
    tier: Tier,
) -> Result<(Vec<Value>, brains::Retrieval)> {
    let res = svc
        .owner
        .ask(fp, |r| BrainMsg::Recall(q.clone(), r))
        .await?;
    let now = svc.now_ms();
    let aging = svc.owner.opts.aging;
    let rows = res
        .hits
        .iter()
        .map(|h| row(&h.claim, tier, &aging, now, Some(h.score)))
        .collect();
    Ok((rows, res.retrieval))
}

fn merge_by_score(mut rows: Vec<Value>, limit: usize) -> Vec<Value> {
    rows.sort_by(|a, b| {
        let sa = a["score"].as_f64().unwrap_or(0.0);
        let sb = b["score"].as_f64().unwrap_or(0.0);
        sb.total_cmp(&sa)
            .then_with(|| b["created"].as_i64().cmp(&a["created"].as_i64()))
    });
    rows.truncate(limit);
    rows
}

async fn seek(svc: &Service, a: SeekArgs, routed: &Routed) -> Result<Value> {
    let tier = tier_arg(a.tier.as_deref(), true)?;
    let limit = clamp_limit(a.limit);
    let q = RecallQuery {
        text: a.query.clone(),
        scope: a.scope.clone(),
        limit,
        mode: Default::default(),
        ..Default::default()
    };
    let brain = routed.brain.as_ref();
    if let Some(b) = brain {
        BrainCounters::bump(&svc.counters(&b.fingerprint).recalls);
    }
    match tier {
        TierArg::AllBrains => return seek_all_brains(svc, &q).await,
        TierArg::Project => {
            let b = brain.ok_or_else(|| OwnerError::Unbootstrapped {
                caller_root: routed
                    .caller_root
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "an unnamed caller".into()),
                fix: bootstrap_fix(
                    routed
                        .caller_root
                        .as_ref()
                        .map(|p| p.to_string_lossy())
                        .as_deref(),
                ),
            })?;
            let (rows, retrieval) =
                recall_rows(svc, Some(&b.fingerprint), &q, Tier::Project).await?;
            return Ok(
                json!({ "tier": "project", "results": rows, "retrieval": retrieval.as_str() }),
            );
        }
        TierArg::Medulla => {
            let (rows, retrieval) = recall_rows(svc, None, &q, Tier::Medulla).await?;
            return Ok(
                json!({ "tier": "medulla", "results": rows, "retrieval": retrieval.as_str() }),
            );
        }
        TierArg::Default => {}
    }
    // The default beat: this brain plus the medulla, nothing else.
    let (mut rows, mut retrieval) = recall_rows(svc, None, &q, Tier::Medulla).await?;
    if let Some(b) = brain {
        let (p, r) = recall_rows(svc, Some(&b.fingerprint), &q, Tier::Project).await?;
        rows.extend(p);
        if r == brains::Retrieval::Lexical {
            retrieval = r;
        }
    }
    Ok(json!({
        "tier": if brain.is_some() { "project+medulla" } else { "medulla" },
        "results": merge_by_score(rows, limit),
        "retrieval": retrieval.as_str(),
    }))
}

async fn seek_all_brains(svc: &Service, q: &RecallQuery) -> Result<Value> {
    let manifests = svc.owner.registry.all_manifests();
    let per_brain = join_all(
        manifests
            .iter()
            .map(|m| recall_rows(svc, Some(&m.fingerprint), q, Tier::Project)),
    )
    .await;
    let (medulla_rows, _) = recall_rows(svc, None, q, Tier::Medulla).await?;
    let mut groups: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    let mut failed = Vec::new();
    for (m, res) in manifests.iter().zip(per_brain) {
        match res {
            Ok((rows, _)) => {
                for r in rows {
                    let origin = r["origin_brain"].as_str().unwrap_or("unknown").to_string();
                    groups.entry(origin).or_default().push(r);
                }
            }
            Err(e) => failed.push(json!({ "brain": m.root, "error": e.to_json() })),
        }
    }
    for r in medulla_rows {
        groups.entry("medulla".into()).or_default().push(r);
    }
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(origin, rows)| json!({ "origin_brain": origin, "results": merge_by_score(rows, q.limit) }))
        .collect();
    Ok(
        json!({ "tier": "all-brains", "brains_searched": manifests.len(), "groups": groups, "failed": failed }),
    )
}

async fn history(svc: &Service, a: HistoryArgs, routed: &Routed) -> Result<Value> {
    let tier = tier_arg(a.tier.as_deref(), false)?;
    let slug = brains::slugify(&a.slug);
    let now = svc.now_ms();
    let aging = svc.owner.opts.aging;
    let render = |vs: Vec<Claim>, t: Tier| -> Vec<Value> {
        vs.iter().map(|c| row(c, t, &aging, now, None)).collect()
    };
    let mut versions = Vec::new();
    if tier != TierArg::Medulla {
        if let Some(b) = routed.brain.as_ref() {
            let s = slug.clone();
            versions.extend(render(
                svc.owner
                    .ask(Some(&b.fingerprint), |r| BrainMsg::History(s.clone(), r))
                    .await?,
                Tier::Project,
            ));
        } else if tier == TierArg::Project {
            return Err(write_target(routed).unwrap_err());
        }
    }
    if tier == TierArg::Medulla || (tier == TierArg::Default && versions.is_empty()) {
        let s = slug.clone();
        versions.extend(render(
            svc.owner
                .ask(None, |r| BrainMsg::History(s.clone(), r))
                .await?,
            Tier::Medulla,
        ));
    }
    if versions.is_empty() {
        return Err(brains::StoreError::UnknownClaim { slug }.into());
    }
    Ok(json!({ "slug": slug, "versions": versions }))
}

async fn boot_memory(
    svc: &Service,
    a: BootMemoryArgs,
    routed: &Routed,
    input: &RouteInput,
) -> Result<Value> {
    let tier = tier_arg(a.tier.as_deref(), false)?;
    let key = || -> Result<String> {
        a.key
            .clone()
            .filter(|k| !k.is_empty())
            .ok_or_else(|| OwnerError::BadInput(format!("op {} needs a key", a.op)))
    };
    let brain_fp = routed.brain.as_ref().map(|m| m.fingerprint.clone());
    match a.op.as_str() {
        "get" => {
            let k = key()?;
            if tier != TierArg::Medulla {
                if let Some(fp) = &brain_fp {
                    let kk = k.clone();
                    if let Some(v) = svc
                        .owner
                        .ask(Some(fp), |r| BrainMsg::KvGet(kk.clone(), r))
                        .await?
                    {
                        return Ok(json!({ "key": k, "value": v, "tier": "project" }));
                    }
                } else if tier == TierArg::Project {
                    return Err(write_target(routed).unwrap_err());
                }
            }
            if tier != TierArg::Project {
                let kk = k.clone();
                if let Some(v) = svc
                    .owner
                    .ask(None, |r| BrainMsg::KvGet(kk.clone(), r))
                    .await?
                {
                    return Ok(json!({ "key": k, "value": v, "tier": "medulla" }));
                }
            }
            Err(brains::StoreError::UnknownKey { key: k }.into())
        }
        "list" => {
            let mut entries = Vec::new();
            if tier != TierArg::Medulla {
                if let Some(fp) = &brain_fp {
                    for (k, v) in svc.owner.ask(Some(fp), BrainMsg::KvList).await? {
                        entries.push(json!({ "key": k, "value": v, "tier": "project" }));
                    }
                }
            }
            if tier != TierArg::Project {
                for (k, v) in svc.owner.ask(None, BrainMsg::KvList).await? {
                    entries.push(json!({ "key": k, "value": v, "tier": "medulla" }));
                }
            }
            Ok(json!({ "entries": entries }))
        }
        "set" | "delete" => {
            if tier == TierArg::Medulla {
                return Err(OwnerError::NotYet {
                    what: "boot_memory writes to the medulla".into(),
                    detail: "the medulla is written only through the audit actor; write the project's boot memory".into(),
                });
            }
            let target = write_target(routed)?.fingerprint.clone();
            let k = key()?;
            let actor = agent(a.agent_id.clone(), input)?;
            if a.op == "set" {
                let v = a
                    .value
                    .clone()
                    .ok_or_else(|| OwnerError::BadInput("op set needs a value".into()))?;
                let (kk, vv, aa) = (k.clone(), v.clone(), actor.clone());
                svc.owner
                    .ask(Some(&target), |r| BrainMsg::KvSet {
                        key: kk.clone(),
                        value: vv.clone(),
                        actor: aa.clone(),
                        reply: r,
                    })
                    .await?;
                Ok(json!({ "key": k, "value": v, "tier": "project", "op": "set" }))
            } else {
                let (kk, aa) = (k.clone(), actor.clone());
                svc.owner
                    .ask(Some(&target), |r| BrainMsg::KvDelete {
                        key: kk.clone(),
                        actor: aa.clone(),
                        reply: r,
                    })
                    .await?;
                Ok(json!({ "key": k, "tier": "project", "op": "delete" }))
            }
        }
        other => Err(OwnerError::BadInput(format!(
            "unknown op {other:?}: use get, set, list or delete"
        ))),
    }
}

async fn learn(svc: &Service, a: LearnArgs, routed: &Routed, input: &RouteInput) -> Result<Value> {
    let tier = tier_arg(a.tier.as_deref(), false)?;
    let verdict = Verdict::parse(&a.verdict)?;
    let actor = agent(a.agent_id, input)?;
    let slug = brains::slugify(&a.slug);
    if tier == TierArg::Medulla {
        return promote::learn_medulla(svc, actor, slug, verdict, a.note).await;
    }
    let target = write_target(routed)?;
    let s = slug.clone();
    let claim = svc
        .owner
        .ask(Some(&target.fingerprint), |r| BrainMsg::Learn {
            slug: s.clone(),
            verdict,
            actor: actor.clone(),
            note: a.note.clone(),
            reply: r,
        })
        .await?;
    let now = svc.now_ms();
    Ok(
        json!({ "verdict": verdict.as_str(), "claim": row(&claim, Tier::Project, &svc.owner.opts.aging, now, None) }),
    )
}
