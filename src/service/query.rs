//! The query a recall verb sends to its stores: its filters, typed from the arguments,
//! and its vector, embedded once per request at the service edge (on the blocking pool)
//! and shared by every store that answers it.

use std::sync::Arc;

use brains::{RecallFilter, RecallQuery, Strength};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Service;
use crate::error::{OwnerError, Result};

/// Filters a recall verb takes, each narrowing the candidates before they compete.
#[derive(Debug, Default, Clone, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct Filters {
    /// Only claims written by this agent (`vendor:role`), or by any role of a vendor.
    #[arg(
        long,
        value_name = "ID",
        help = "Only claims written by this agent (vendor:role), or by any role of a vendor"
    )]
    pub agent: Option<String>,
    /// Only claims at least this strong.
    #[arg(long, value_enum, value_name = "STRENGTH")]
    pub min_strength: Option<Strength>,
    /// Only claims whose trust score (0–1; ungraded 0.5) is at least this.
    #[arg(
        long,
        value_name = "TRUST",
        help = "Only claims whose trust (0 to 1; ungraded 0.5) is at least this"
    )]
    pub min_trust: Option<f64>,
    /// Only claims created at or after this instant (ms since the epoch).
    #[arg(
        long,
        value_name = "WHEN",
        value_parser = instant,
        help = "Only claims created at or after this (ms since the epoch, or an ISO 8601 date such as 2026-07-04)"
    )]
    pub since: Option<i64>,
    /// Only claims created at or before this instant (ms since the epoch).
    #[arg(
        long,
        value_name = "WHEN",
        value_parser = instant,
        help = "Only claims created at or before this (ms since the epoch, or an ISO 8601 date)"
    )]
    pub until: Option<i64>,
    /// Only claims with an evidence entry starting with this (a path prefix, say).
    #[arg(long, value_name = "PREFIX")]
    pub evidence: Option<String>,
}

/// An instant as the command line takes it: milliseconds since the epoch, or an ISO 8601
/// date or date-time.
fn instant(s: &str) -> std::result::Result<i64, String> {
    brains::legacy::parse_created(s).ok_or_else(|| {
        "not a time: give milliseconds since the epoch or an ISO 8601 date (2026-07-04) or \
         date-time (2026-07-04T10:00:00Z)"
            .to_string()
    })
}

impl Filters {
    pub fn to_filter(&self) -> Result<RecallFilter> {
        if let Some(t) = self.min_trust {
            if !(0.0..=1.0).contains(&t) {
                return Err(OwnerError::BadInput(format!(
                    "min_trust {t} is out of range: give a trust score from 0 to 1"
                )));
            }
        }
        if let (Some(a), Some(b)) = (self.since, self.until) {
            if a > b {
                return Err(OwnerError::BadInput(
                    "since is after until: nothing could match".into(),
                ));
            }
        }
        for (what, v) in [("agent", &self.agent), ("evidence", &self.evidence)] {
            if let Some(v) = v {
                super::check_query(what, v)?;
            }
        }
        Ok(RecallFilter {
            source_agent: self.agent.clone(),
            min_strength: self.min_strength,
            min_trust: self.min_trust,
            created_since: self.since,
            created_until: self.until,
            evidence_prefix: self.evidence.clone(),
            evidence_file: None,
        })
    }
}

impl Service {
    /// A recall query with its vector computed once, off the async threads, when a model
    /// is loaded and the text is not empty.
    pub async fn query(
        &self,
        text: String,
        scope: Option<String>,
        limit: usize,
        filter: RecallFilter,
    ) -> Result<RecallQuery> {
        // Under the model the owner serves with now; a store still under another (a
        // change of model under way) embeds the text itself.
        let model = self.owner.registry.model.current();
        let (vector, vector_model) = match (model, text.trim().is_empty()) {
            (Some(e), false) => {
                let id: Arc<str> = e.id().into();
                let t = text.clone();
                let v = tokio::task::spawn_blocking(move || brains::embed_query(e.as_ref(), &t))
                    .await
                    .map_err(|e| OwnerError::Internal(e.to_string()))?
                    .map_err(|e| OwnerError::Store(brains::StoreError::Embedding(e.to_string())))?;
                (Some(v), Some(id))
            }
            _ => (None, None),
        };
        Ok(RecallQuery {
            text,
            scope,
            limit,
            vector,
            vector_model,
            filter,
            ..Default::default()
        })
    }
}
