//! Rendering of rows: every surfaced claim carries its tier, provenance (or the honest
//! `unknown`), age and the read-time aging overlay.

use brains::{Aging, Claim};
use serde_json::{json, Value};

/// The store a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    Project,
    Medulla,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Project => "project",
            Tier::Medulla => "medulla",
        }
    }
}

/// `YYYY-MM-DD` of a ms timestamp (UTC), for one-line renderings.
pub fn date(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    // Civil-from-days (proleptic Gregorian), valid for any i64 day count we will meet.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    format!("{:04}-{:02}-{:02}", if m <= 2 { y + 1 } else { y }, m, d)
}

/// The promotion chain of a medulla copy as one readable line.
pub fn chain_line(c: &Claim) -> Option<String> {
    let by = c.promoted_by.as_deref()?;
    let learned_in = c.origin_brain.as_deref().unwrap_or("unknown");
    let learned_by = c.origin_agent.as_deref().unwrap_or("unknown");
    let learned_when = c
        .origin_created
        .map(date)
        .unwrap_or_else(|| "unknown".into());
    let reason = c
        .promotion_reason
        .as_deref()
        .unwrap_or("no reason recorded");
    Some(format!(
        "learned in {learned_in} by {learned_by} ({learned_when}); promoted by {by} ({}): {reason}",
        date(c.created)
    ))
}

/// One claim as a row.
pub fn row(c: &Claim, tier: Tier, aging: &Aging, now_ms: i64, score: Option<f64>) -> Value {
    let o = aging.overlay(c.created, now_ms);
    let mut v = json!({
        "label": c.label,
        "slug": c.slug,
        "text": c.text,
        "tier": tier.as_str(),
        "origin_brain": c.origin_or_unknown(),
        "source_agent": c.source_agent,
        "created": c.created,
        "age_ms": o.age_ms,
        "stale": o.stale,
        "aged_out": o.aged_out,
        "strength": c.strength.as_str(),
        "trust": (c.trust.score() * 1000.0).round() / 1000.0,
        "trust_counts": c.trust,
        "state": c.state.as_str(),
        "version": c.version,
        "content_hash": c.content_hash,
    });
    if let Some(s) = score {
        v["score"] = json!((s * 1e6).round() / 1e6);
    }
    if !c.evidence.is_empty() {
        v["evidence"] = json!(c.evidence);
    }
    if let Some(s) = &c.supersedes {
        v["supersedes"] = json!(s);
    }
    if let Some(p) = &c.promoted_to {
        v["promoted_to"] = json!(p);
    }
    if let Some(r) = &c.outdated_reason {
        v["outdated_reason"] = json!(r);
    }
    if c.promoted_by.is_some() {
        v["promotion"] = json!({
            "origin_claim": c.origin_claim,
            "origin_agent": c.origin_agent,
            "origin_created": c.origin_created,
            "promoted_by": c.promoted_by,
            "promotion_reason": c.promotion_reason,
            "promoted_at": c.created,
            "chain": chain_line(c),
        });
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_render_in_utc() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(1_783_209_431_408), "2026-07-04");
        assert_eq!(date(951_782_400_000), "2000-02-29");
    }
}
