//! The medulla-writing verbs as the service sees them: `promote`, doctrine birth
//! (`memorize` with `tier: "medulla"`), medulla `learn`, and the audit log. Each write
//! is handed to the audit actor; this module only validates and routes.

use brains::{ActKind, MemorizeInput, Verdict};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::route::{find_brain, Routed};
use super::{RouteInput, Service};
use crate::audit::{etiquette_ok, AuditMsg};
use crate::brain::BrainMsg;
use crate::error::{OwnerError, Result};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromoteArgs {
    /// The promoter, `vendor:role`. Expected: `*:orchestrator` or `human:founder` (audited, not enforced).
    pub agent_id: Option<String>,
    /// The source brain (root or fingerprint). Defaults to the routed brain.
    pub brain: Option<String>,
    /// The claim's slug in the source brain (a label is accepted and slugified).
    pub claim: String,
    /// Why this holds beyond its project, in one line.
    pub reason: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditArgs {
    /// Only entries whose claim came from this brain (root, or `medulla` for doctrine).
    pub brain: Option<String>,
    /// Only entries by this agent.
    pub agent: Option<String>,
    /// Most entries (default 50, at most 500).
    pub limit: Option<usize>,
}

pub async fn promote(
    svc: &Service,
    a: PromoteArgs,
    routed: &Routed,
    input: &RouteInput,
) -> Result<Value> {
    // The founder surface acts as the founder unless it names another agent.
    let agent = match (a.agent_id, input.founder) {
        (None, true) => "human:founder".to_string(),
        (id, _) => super::tools::agent(id, input)?,
    };
    let brain = match a.brain.as_deref() {
        Some(b) => find_brain(&svc.owner.registry, b).ok_or_else(|| OwnerError::UnknownBrain {
            name: b.to_string(),
        })?,
        None => super::tools::write_target(routed)?.clone(),
    };
    // Who may ask (SPEC §7): a caller routed to the claim's own brain, or the founder.
    // Anyone else would be copying another project's private claim into the memory
    // every brain reads.
    svc.authorize_brain(routed, input, &brain, "promote a claim of")?;
    super::check_query("claim", &a.claim)?;
    let slug = brains::slugify(&a.claim);
    let reason = a.reason;
    svc.owner
        .audit(|reply| AuditMsg::Promote {
            agent,
            brain,
            slug,
            reason,
            reply,
        })
        .await
}

pub async fn doctrine_birth(svc: &Service, mut input: MemorizeInput) -> Result<Value> {
    input.validate()?;
    svc.owner
        .audit(|reply| AuditMsg::DoctrineBirth { input, reply })
        .await
}

pub async fn learn_medulla(
    svc: &Service,
    agent: String,
    slug: String,
    verdict: Verdict,
    note: Option<String>,
) -> Result<Value> {
    svc.owner
        .audit(|reply| AuditMsg::Learn {
            agent,
            slug,
            verdict,
            note,
            reply,
        })
        .await
}

/// The audit log: promotions, doctrine births and demotions in the medulla's act log,
/// newest first, with their origin and etiquette verdict.
pub async fn audit_log(svc: &Service, a: AuditArgs) -> Result<Value> {
    let limit = super::check_limit(a.limit, 50, 500)?;
    let acts = svc
        .owner
        .ask(None, |r| BrainMsg::ActsNewest(5000, r))
        .await?;
    let brain_filter = match a.brain.as_deref() {
        None | Some("") => None,
        Some("medulla") => Some("medulla".to_string()),
        Some(b) => Some(
            find_brain(&svc.owner.registry, b)
                .map(|m| m.root)
                .unwrap_or_else(|| b.trim_end_matches('/').to_string()),
        ),
    };
    let mut entries = Vec::new();
    for act in acts {
        if !matches!(
            act.kind,
            ActKind::Promote | ActKind::DoctrineBirth | ActKind::Demote
        ) {
            continue;
        }
        if a.agent.as_deref().is_some_and(|ag| ag != act.actor) {
            continue;
        }
        let subject = act.subject.clone();
        let versions = svc
            .owner
            .ask(None, |r| BrainMsg::History(subject.clone(), r))
            .await
            .unwrap_or_default();
        let version = versions
            .iter()
            .find(|v| v.created == act.at)
            .or_else(|| {
                versions
                    .iter()
                    .rev()
                    .find(|v| act.after_hash.as_deref() == Some(v.content_hash.as_str()))
            })
            .or(versions.last());
        let origin = version
            .map(|v| v.origin_or_unknown().to_string())
            .unwrap_or_else(|| "unknown".into());
        if brain_filter.as_deref().is_some_and(|b| b != origin) {
            continue;
        }
        let reason = match act.kind {
            ActKind::Demote => version
                .and_then(|v| v.outdated_reason.clone())
                .or(act.note.clone()),
            _ => version
                .and_then(|v| v.promotion_reason.clone())
                .or(act.note.clone()),
        };
        let mut e = json!({
            "kind": act.kind.as_str(),
            "slug": act.subject,
            "agent": act.actor,
            "at": act.at,
            "origin_brain": origin,
            "origin_claim": version.and_then(|v| v.origin_claim.clone()),
            "reason": reason,
            "etiquette_expected": etiquette_ok(&act.actor),
        });
        if !etiquette_ok(&act.actor) {
            e["flag"] = json!("etiquette_breach");
        }
        entries.push(e);
        if entries.len() >= limit {
            break;
        }
    }
    Ok(json!({ "entries": entries, "caption": "the medulla's audit log, newest first" }))
}
