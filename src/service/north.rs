//! `north`, `delegate` and `debrief`: the default beat, the delegation packet a parent
//! hands a child, and the child's return path. The medulla part of a beat has a hard
//! time budget and is fail-open: the project part always arrives.

use std::path::Path;

use brains::{MemorizeInput, RecallQuery, Strength};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::render::{row, Tier};
use super::route::Routed;
use super::{RouteInput, Service};
use crate::brain::BrainMsg;
use crate::error::{OwnerError, Result};
use crate::owner::BrainCounters;
use crate::roster::Manifest;

/// The line every packet carries.
pub const ETIQUETTE: &str =
    "makers propose, orchestrators promote: memorize findings into this project; only an orchestrator or the founder promotes a claim to the medulla";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NorthArgs {
    /// The task about to be worked on.
    pub task: String,
    /// Most rows per tier (default 8, at most 50).
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelegateArgs {
    /// The child's task.
    pub task: String,
    /// The child's agent id (`vendor:role`), recorded in the packet.
    pub child_agent: Option<String>,
    /// Most rows per tier (default 8, at most 50).
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub label: String,
    pub text: String,
    pub strength: Option<String>,
    pub evidence: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebriefArgs {
    /// What the child found; each becomes a project-private claim under the child's id.
    pub findings: Vec<Finding>,
    /// The child's agent id. Defaults to the Medulla-Agent header.
    pub agent_id: Option<String>,
    /// Only `project` is accepted: a debrief never writes the medulla.
    pub tier: Option<String>,
}

fn limit(l: Option<usize>) -> usize {
    l.unwrap_or(8).clamp(1, 50)
}

/// The composed memory of a beat.
struct Beat {
    project: Vec<Value>,
    medulla: Vec<Value>,
    medulla_error: Option<Value>,
    exists: (u64, Option<u64>),
    recent: Vec<Value>,
}

async fn compose(
    svc: &Service,
    brain: Option<&Manifest>,
    task: &str,
    limit: usize,
) -> Result<Beat> {
    let q = RecallQuery {
        text: task.to_string(),
        scope: None,
        limit,
        mode: Default::default(),
        ..Default::default()
    };
    let now = svc.now_ms();
    let aging = svc.owner.opts.aging;
    let mut project = Vec::new();
    let mut project_count = 0;
    if let Some(b) = brain {
        let res = svc
            .owner
            .ask(Some(&b.fingerprint), |r| BrainMsg::Recall(q.clone(), r))
            .await?;
        project = res
            .hits
            .iter()
            .map(|h| row(&h.claim, Tier::Project, &aging, now, Some(h.score)))
            .collect();
        project_count = svc
            .owner
            .ask(Some(&b.fingerprint), super::brain_stats)
            .await?
            .live_claims;
    }
    // The medulla part: a hard budget, fail-open.
    let budget = svc.owner.config.medulla_budget;
    let medulla_part = async {
        let res = svc
            .owner
            .ask(None, |r| BrainMsg::Recall(q.clone(), r))
            .await?;
        let count = svc.owner.ask(None, super::brain_stats).await?.live_claims;
        Ok::<_, OwnerError>((res, count))
    };
    // A zero budget leaves the medulla no time at all: do not even ask.
    let outcome = if budget.is_zero() {
        Err(())
    } else {
        tokio::time::timeout(budget, medulla_part)
            .await
            .map_err(|_| ())
    };
    let (medulla, medulla_count, medulla_error) = match outcome {
        Ok(Ok((res, count))) => (
            res.hits
                .iter()
                .map(|h| row(&h.claim, Tier::Medulla, &aging, now, Some(h.score)))
                .collect(),
            Some(count),
            None,
        ),
        Ok(Err(e)) => (
            vec![],
            None,
            Some(json!({ "code": e.code(), "message": e.to_string() })),
        ),
        Err(_) => (
            vec![],
            None,
            Some(json!({
                "code": "medulla_timeout",
                "message": format!("the medulla did not answer within {} ms; the project part is complete", budget.as_millis())
            })),
        ),
    };
    // No false absence: stores that hold claims but matched nothing still say so, and
    // show their most recent claims, labelled as not matched.
    let mut recent = Vec::new();
    if project.is_empty() && medulla.is_empty() {
        if let Some(b) = brain.filter(|_| project_count > 0) {
            for c in svc
                .owner
                .ask(Some(&b.fingerprint), |r| BrainMsg::Recent(3, r))
                .await?
            {
                let mut r = row(&c, Tier::Project, &aging, now, None);
                r["matched_task"] = json!(false);
                recent.push(r);
            }
        }
        if medulla_count.unwrap_or(0) > 0 {
            if let Ok(cs) = svc.owner.ask(None, |r| BrainMsg::Recent(3, r)).await {
                for c in cs {
                    let mut r = row(&c, Tier::Medulla, &aging, now, None);
                    r["matched_task"] = json!(false);
                    recent.push(r);
                }
            }
        }
    }
    Ok(Beat {
        project,
        medulla,
        medulla_error,
        exists: (project_count, medulla_count),
        recent,
    })
}

fn exists_json(b: &Beat) -> Value {
    json!({ "project": b.exists.0, "medulla": b.exists.1 })
}

fn absence_note(b: &Beat) -> String {
    let (p, m) = b.exists;
    if !b.project.is_empty() || !b.medulla.is_empty() {
        return format!(
            "{} project and {} medulla claims matched the task",
            b.project.len(),
            b.medulla.len()
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

pub async fn north(svc: &Service, a: NorthArgs, routed: &Routed) -> Result<Value> {
    if a.task.trim().is_empty() {
        return Err(OwnerError::BadInput(
            "north needs a task: describe what you are about to work on".into(),
        ));
    }
    let brain = routed.brain.as_ref();
    let beat = compose(svc, brain, &a.task, limit(a.limit)).await?;
    if let Some(b) = brain {
        BrainCounters::bump(&svc.counters(&b.fingerprint).beats);
    }
    let mut v = json!({
        "task": a.task,
        "project": beat.project,
        "medulla": beat.medulla,
        "memory_exists": exists_json(&beat),
        "note": absence_note(&beat),
    });
    if !beat.recent.is_empty() {
        v["recent_unmatched"] = json!(beat.recent);
    }
    if let Some(e) = beat.medulla_error {
        v["medulla_error"] = e;
    }
    Ok(v)
}

/// The commit a repository's HEAD points at, read from `.git` without running git.
pub fn git_head(root: &Path) -> Option<String> {
    let dot_git = root.join(".git");
    // A worktree's `.git` is a file naming its git dir; refs live in the common dir.
    let git_dir = if dot_git.is_file() {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let p = text.trim().strip_prefix("gitdir:")?.trim().to_string();
        let p = Path::new(&p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            root.join(p)
        }
    } else {
        dot_git
    };
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => {
            let c = c.trim();
            if Path::new(c).is_absolute() {
                Path::new(c).to_path_buf()
            } else {
                git_dir.join(c)
            }
        }
        Err(_) => git_dir.clone(),
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let is_sha = |s: &str| s.len() >= 40 && s.chars().all(|c| c.is_ascii_hexdigit());
    let Some(reference) = head.strip_prefix("ref:").map(str::trim) else {
        return is_sha(head).then(|| head.to_string());
    };
    for dir in [&git_dir, &common] {
        if let Ok(s) = std::fs::read_to_string(dir.join(reference)) {
            let s = s.trim();
            if is_sha(s) {
                return Some(s.to_string());
            }
        }
    }
    let packed = std::fs::read_to_string(common.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (sha, name) = line.split_once(' ')?;
        (name.trim() == reference && is_sha(sha)).then(|| sha.to_string())
    })
}

fn render_packet_text(p: &Value) -> String {
    let mut s = String::new();
    s.push_str("## medulla delegation packet\n");
    s.push_str(&format!(
        "binding: send the header `{}` on every medulla call\n",
        p["binding"]["header"].as_str().unwrap_or("")
    ));
    s.push_str(&format!(
        "sources: project {} (fp {}), medulla {}, composed {}\n",
        p["sources"]["project"].as_str().unwrap_or(""),
        p["sources"]["fingerprint"].as_str().unwrap_or(""),
        p["sources"]["medulla"].as_str().unwrap_or(""),
        p["sources"]["composed_ts"]
    ));
    s.push_str("memory:\n");
    let rows = p["memory"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if rows.is_empty() {
        s.push_str(&format!(
            "- (none matched the task; {})\n",
            p["note"].as_str().unwrap_or("")
        ));
    }
    for r in rows {
        s.push_str(&format!(
            "- [{}] {}: {} ({}, by {}, {} days old{})\n",
            r["tier"].as_str().unwrap_or("?"),
            r["label"].as_str().unwrap_or(""),
            r["text"].as_str().unwrap_or(""),
            r["origin_brain"].as_str().unwrap_or("unknown"),
            r["source_agent"].as_str().unwrap_or("?"),
            r["age_ms"].as_i64().unwrap_or(0) / 86_400_000,
            if r["stale"].as_bool() == Some(true) {
                ", stale"
            } else {
                ""
            },
        ));
    }
    s.push_str(&format!("etiquette: {ETIQUETTE}\n"));
    s
}

pub async fn delegate(svc: &Service, a: DelegateArgs, routed: &Routed) -> Result<Value> {
    let brain = super::tools::write_target(routed)?.clone();
    if let Some(c) = &a.child_agent {
        brains::claim::validate_agent_id(c)?;
    }
    let beat = compose(svc, Some(&brain), &a.task, limit(a.limit)).await?;
    let head = git_head(Path::new(&brain.root)).unwrap_or_else(|| "unknown".into());
    let mut memory = beat.project.clone();
    memory.extend(beat.medulla.iter().cloned());
    let mut packet = json!({
        "task": a.task,
        "child_agent": a.child_agent,
        "binding": {
            "root": brain.root,
            "fingerprint": brain.fingerprint,
            "header": format!("Medulla-Brain: {}", brain.root),
        },
        "memory": memory,
        "memory_exists": exists_json(&beat),
        "note": absence_note(&beat),
        "sources": {
            "project": format!("{}@{head}", brain.root),
            "fingerprint": brain.fingerprint,
            "medulla": match beat.exists.1 { Some(n) => format!("{n} claims"), None => "unknown (the medulla failed)".into() },
            "composed_ts": svc.now_ms(),
        },
        "etiquette": ETIQUETTE,
    });
    if let Some(e) = beat.medulla_error {
        packet["medulla_error"] = e;
    }
    packet["text"] = json!(render_packet_text(&packet));
    Ok(packet)
}

pub async fn debrief(
    svc: &Service,
    a: DebriefArgs,
    routed: &Routed,
    input: &RouteInput,
) -> Result<Value> {
    if let Some(t) = a.tier.as_deref().filter(|t| *t != "project") {
        return Err(OwnerError::BadInput(format!(
            "debrief writes only the project tier, not {t:?}: findings are proposed here and promoted by an orchestrator"
        )));
    }
    if a.findings.is_empty() {
        return Err(OwnerError::BadInput(
            "debrief needs at least one finding".into(),
        ));
    }
    let target = super::tools::write_target(routed)?.clone();
    let agent = super::tools::agent(a.agent_id, input)?;
    // Validate all before writing any, so a bad finding never leaves a half debrief.
    let mut inputs = Vec::new();
    for f in a.findings {
        let mut mi = MemorizeInput {
            label: f.label,
            text: f.text,
            source_agent: agent.clone(),
            strength: f
                .strength
                .as_deref()
                .map(Strength::parse)
                .transpose()?
                .unwrap_or_default(),
            evidence: f.evidence.unwrap_or_default(),
            origin_brain: Some(target.root.clone()),
            ..Default::default()
        };
        mi.validate()?;
        inputs.push(mi);
    }
    let now = svc.now_ms();
    let aging = svc.owner.opts.aging;
    let mut results = Vec::new();
    for mi in inputs {
        let label = mi.label.clone();
        match svc
            .owner
            .ask(Some(&target.fingerprint), |r| {
                BrainMsg::Memorize(mi.clone(), r)
            })
            .await
        {
            Ok(outcome) => {
                BrainCounters::bump(&svc.counters(&target.fingerprint).writes);
                results.push(json!({
                    "label": label,
                    "outcome": match &outcome {
                        brains::MemorizeOutcome::Created { .. } => "created",
                        brains::MemorizeOutcome::Superseded { .. } => "superseded",
                        brains::MemorizeOutcome::Unchanged { .. } => "unchanged",
                    },
                    "claim": row(outcome.claim(), Tier::Project, &aging, now, None),
                }))
            }
            Err(e) => results.push(json!({ "label": label, "error": e.to_json() })),
        }
    }
    Ok(
        json!({ "brain": { "root": target.root, "fingerprint": target.fingerprint }, "agent": agent, "findings": results }),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use std::time::Duration;

    use brains::{Retrieval, StoreOptions, SystemClock};

    use super::*;
    use crate::config::Config;
    use crate::owner::OwnerHandle;

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
        let (m, _) = svc.owner.bootstrap(root.clone()).await.unwrap();
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

    #[test]
    fn git_head_reads_loose_packed_and_worktree_refs() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let other = "89abcdef0123456789abcdef0123456789abcdef";
        assert_eq!(git_head(root), None, "not a repository");
        std::fs::create_dir_all(root.join(".git/refs/heads")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            root.join(".git/packed-refs"),
            format!("# pack-refs with: peeled\n{sha} refs/heads/main\n"),
        )
        .unwrap();
        assert_eq!(git_head(root).as_deref(), Some(sha), "packed ref");
        std::fs::write(root.join(".git/refs/heads/main"), format!("{other}\n")).unwrap();
        assert_eq!(
            git_head(root).as_deref(),
            Some(other),
            "a loose ref wins over a packed one"
        );
        // A linked worktree: `.git` is a file; HEAD is per worktree, refs are shared.
        let wt = root.join("wt");
        let wt_git = root.join(".git/worktrees/wt");
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
        std::fs::write(wt_git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        assert_eq!(git_head(&wt).as_deref(), Some(other));
        std::fs::write(wt_git.join("HEAD"), format!("{sha}\n")).unwrap();
        assert_eq!(git_head(&wt).as_deref(), Some(sha), "a detached HEAD");
    }
}
