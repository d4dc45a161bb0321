//! The recall filters and `--detail`, as `seek` and `north` take them on the command line.

use anyhow::{bail, Result};
use clap::Args;
use serde_json::{json, Map, Value};

use super::values::{name, Strength};

#[derive(Debug, Args, Default)]
pub struct RecallFlags {
    /// Only claims written by this agent (vendor:role), or by any role of a vendor
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Only claims at least this strong
    #[arg(long, value_enum, value_name = "STRENGTH")]
    pub min_strength: Option<Strength>,
    /// Only claims whose trust (0 to 1; ungraded 0.5) is at least this
    #[arg(long, value_name = "TRUST")]
    pub min_trust: Option<f64>,
    /// Only claims created at or after this (ms since the epoch, or an ISO 8601 date such as 2026-07-04)
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only claims created at or before this (ms since the epoch, or an ISO 8601 date)
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Only claims with an evidence entry starting with this (a path prefix, say)
    #[arg(long, value_name = "PREFIX")]
    pub evidence: Option<String>,
    /// Show each row's full provenance (trust counts, version, hash, evidence, promotion)
    #[arg(long)]
    pub detail: bool,
}

fn instant(flag: &str, v: &Option<String>) -> Result<Option<i64>> {
    match v {
        None => Ok(None),
        Some(s) => match brains::legacy::parse_created(s) {
            Some(ms) => Ok(Some(ms)),
            None => bail!(
                "--{flag} {s:?} is not a time: give milliseconds since the epoch or an ISO 8601 \
                 date (2026-07-04) or date-time (2026-07-04T10:00:00Z)"
            ),
        },
    }
}

impl RecallFlags {
    /// Add `filter` (when any is set) and `detail` to a request's arguments.
    pub fn apply(&self, args: &mut Value) -> Result<()> {
        let mut f = Map::new();
        if let Some(a) = &self.agent {
            f.insert("agent".into(), json!(a));
        }
        if let Some(s) = self.min_strength {
            f.insert("min_strength".into(), json!(name(s)));
        }
        if let Some(t) = self.min_trust {
            f.insert("min_trust".into(), json!(t));
        }
        if let Some(ms) = instant("since", &self.since)? {
            f.insert("since".into(), json!(ms));
        }
        if let Some(ms) = instant("until", &self.until)? {
            f.insert("until".into(), json!(ms));
        }
        if let Some(e) = &self.evidence {
            f.insert("evidence".into(), json!(e));
        }
        if let Some(o) = args.as_object_mut() {
            if !f.is_empty() {
                o.insert("filter".into(), Value::Object(f));
            }
            if self.detail {
                o.insert("detail".into(), json!(true));
            }
        }
        Ok(())
    }
}
