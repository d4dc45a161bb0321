//! `audit`: the medulla's audit log — promotions, doctrine births and demotions in its
//! act log, newest first, with their origin and etiquette verdict. Derived from the act
//! log; there is no second copy.

use std::borrow::Cow;

use brains::ActKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::audit::etiquette_ok;
use crate::error::Result;
use crate::service::check_limit;
use crate::service::provenance::MARKER;
use crate::service::route::find_brain;
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct AuditArgs {
    /// Only entries whose claim came from this brain (root, or `medulla` for doctrine).
    #[arg(
        long,
        value_name = "ROOT",
        help = "Only entries from this brain (a root, or `medulla` for doctrine births)"
    )]
    pub brain: Option<String>,
    /// Only entries by this agent.
    #[arg(long, help = "Only entries by this agent (vendor:role)")]
    pub agent: Option<String>,
    /// Most entries (default 50, from 1 to 500).
    #[arg(long, help = "How many entries")]
    pub limit: Option<usize>,
}

/// What an audit entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditKind {
    Promote,
    DoctrineBirth,
    Demote,
    /// Taken out of recall with a reason, no replacement.
    Retire,
    /// The project witness of a medulla copy changed: noticed and noted.
    WitnessSuperseded,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AuditEntry {
    pub kind: AuditKind,
    pub slug: String,
    pub agent: String,
    pub at: i64,
    pub origin_brain: String,
    pub origin_claim: Option<String>,
    pub reason: Option<String>,
    pub etiquette_expected: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flag: Option<Cow<'static, str>>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AuditLog {
    pub entries: Vec<AuditEntry>,
    pub caption: Cow<'static, str>,
}

impl Answer for AuditLog {}

pub struct Audit;

impl Verb for Audit {
    const ROUTED: bool = false;
    const NAME: &'static str = "audit";
    const DESCRIPTION: &'static str = "The medulla's audit log: promotions, doctrine births and demotions, newest first, with etiquette flags; filter by brain or agent.";
    const EFFECT: Effect = Effect::Read;
    const IDEMPOTENT: bool = true;
    const ALSO: &'static [&'static str] = &["GET /api/audit"];
    type Args = AuditArgs;
    type Answer = AuditLog;

    async fn run(cx: Cx<'_>, a: AuditArgs) -> Result<AuditLog> {
        let svc = cx.svc;
        let limit = check_limit(a.limit, 50, 500)?;
        let acts = svc.owner.acts_newest(&StoreId::Medulla, 5000).await?;
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
            let kind = match act.kind {
                ActKind::Promote => AuditKind::Promote,
                ActKind::DoctrineBirth => AuditKind::DoctrineBirth,
                ActKind::Demote => AuditKind::Demote,
                ActKind::Retire => AuditKind::Retire,
                ActKind::KvSet if act.subject.starts_with(MARKER) => AuditKind::WitnessSuperseded,
                _ => continue,
            };
            let subject = act
                .subject
                .strip_prefix(MARKER)
                .unwrap_or(&act.subject)
                .to_string();
            if a.agent.as_deref().is_some_and(|ag| ag != act.actor) {
                continue;
            }
            let versions = svc
                .owner
                .history(&StoreId::Medulla, &subject)
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
            let reason = match kind {
                AuditKind::Demote | AuditKind::Retire => version
                    .and_then(|v| v.outdated_reason.clone())
                    .or(act.note.clone()),
                AuditKind::WitnessSuperseded => {
                    Some("the project witness changed after the promotion".into())
                }
                _ => version
                    .and_then(|v| v.promotion_reason.clone())
                    .or(act.note.clone()),
            };
            // Etiquette is about who chose to write doctrine; the audit actor noting a
            // changed witness chose nothing.
            let expected = kind == AuditKind::WitnessSuperseded || etiquette_ok(&act.actor);
            entries.push(AuditEntry {
                kind,
                slug: subject,
                agent: act.actor,
                at: act.at,
                origin_brain: origin,
                origin_claim: version.and_then(|v| v.origin_claim.clone()),
                reason,
                etiquette_expected: expected,
                flag: (!expected).then_some("etiquette_breach".into()),
            });
            if entries.len() >= limit {
                break;
            }
        }
        Ok(AuditLog {
            entries,
            caption: "the medulla's audit log, newest first".into(),
        })
    }
}
