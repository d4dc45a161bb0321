//! Rows: every surfaced claim as one typed record, carrying its tier, provenance (or the
//! honest `unknown`), age and the read-time aging overlay. Rendering lives here and only
//! here; nothing reads a row back for logic.

use brains::{Aging, Anchor, Claim, ClaimState, Strength, Trust};

use super::anchors::EvidenceChange;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The store a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StoreTier {
    Project,
    Medulla,
    /// The team medulla (SPEC §13).
    Team,
}

impl StoreTier {
    pub fn as_str(self) -> &'static str {
        match self {
            StoreTier::Project => "project",
            StoreTier::Medulla => "medulla",
            StoreTier::Team => "team",
        }
    }
}

/// The promotion chain of a medulla copy.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Promotion {
    pub origin_claim: Option<String>,
    pub origin_agent: Option<String>,
    pub origin_created: Option<i64>,
    pub promoted_by: Option<String>,
    pub promotion_reason: Option<String>,
    pub promoted_at: i64,
    /// The chain as one readable line.
    pub chain: Option<String>,
}

/// One claim as it surfaces. Recall answers (`seek`, `north`, `delegate`) are compact by
/// default — what an agent needs to use and cite a claim, and what SPEC §5 asks of every
/// row — and carry the full provenance with `detail: true`; `history`, listings and write
/// answers are always full.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Row {
    pub label: String,
    pub slug: String,
    pub text: String,
    pub tier: StoreTier,
    /// Root where the claim was born, `medulla`, or `unknown` (never guessed).
    pub origin_brain: String,
    pub source_agent: String,
    pub created: i64,
    pub age_ms: i64,
    pub stale: bool,
    pub aged_out: bool,
    pub strength: Strength,
    /// Laplace-smoothed trust in [0, 1].
    pub trust: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// A weak row (`seek`'s `weak` list): it did not clear the relevance floor and may be
    /// unrelated; shown, labelled, so memory that exists is never said to be absent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub weak: bool,
    /// A weak row's evidence: the share of the query's terms it matched (normalised
    /// BM25, 0..1) and its cosine to the query (with a model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f64>,
    /// A medulla copy's provenance as one line: learned in, by, when; promoted by, why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
    /// A promoted claim surfaces once: the medulla copy, naming its project witness too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identities: Option<Identities>,
    /// A medulla copy whose project witness has changed since it was promoted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness_superseded: Option<WitnessSuperseded>,
    /// Anchored evidence files that changed or disappeared since the claim was written:
    /// verify before relying on it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence_changed: Vec<EvidenceChange>,
    /// The checkout the evidence was judged in, when it is not the caller's own (the
    /// caller's lacks an anchored file, or the caller works in no checkout of the brain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_in: Option<String>,
    /// The claim's evidence anchors, for the drift check; not rendered.
    #[serde(skip)]
    #[schemars(skip)]
    pub anchors: Vec<Anchor>,
    // The full provenance (`detail: true`, `history`, listings, writes):
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust_counts: Option<Trust>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<ClaimState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promoted_to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outdated_reason: Option<String>,
    /// Who took this version out of recall (a demotion or a retirement).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outdated_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promotion: Option<Promotion>,
    /// Set on the most recent claims a beat lists when nothing matched its task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_task: Option<bool>,
    /// A shared store's row: the team member who wrote it, as the database stamped it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// Another member superseded the same version at the same time: the other version
    /// and its member. Shown, never resolved silently.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<brains::claim::Conflict>,
    /// Verdicts and retirements a member made on a version another member superseded
    /// meanwhile: who, what, and the version meant. Shown, never dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub races: Vec<brains::claim::Race>,
}

/// Both identities of a promoted claim.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Identities {
    /// `medulla#<slug>`.
    pub medulla: String,
    /// `<root>#<slug>`: the project witness.
    pub witness: String,
}

/// The project witness of a medulla copy changed after the promotion.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WitnessSuperseded {
    /// `<root>#<slug>`.
    pub witness: String,
    /// When the change was noticed (the new witness version's birth).
    pub at: i64,
    /// The witness's version now.
    pub by_version: u64,
    /// The witness's text now: only for a caller routed to the witness's own brain, or
    /// the founder (another project's private text never reaches a beat).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_text: Option<String>,
}

/// Render context: the aging thresholds and the time of the answer.
#[derive(Debug, Clone, Copy)]
pub struct Now {
    pub aging: Aging,
    pub ms: i64,
}

impl Row {
    pub fn of(c: &Claim, tier: StoreTier, now: Now, score: Option<f64>) -> Row {
        let o = now.aging.overlay(c.created, now.ms);
        Row {
            label: c.label.clone(),
            slug: c.slug.clone(),
            text: c.text.clone(),
            tier,
            origin_brain: c.origin_or_unknown().to_string(),
            source_agent: c.source_agent.clone(),
            created: c.created,
            age_ms: o.age_ms,
            stale: o.stale,
            aged_out: o.aged_out,
            strength: c.strength,
            trust: (c.trust.score() * 1000.0).round() / 1000.0,
            score: score.map(|s| (s * 1e6).round() / 1e6),
            weak: false,
            lexical: None,
            cosine: None,
            chain: chain_line(c),
            identities: None,
            witness_superseded: None,
            evidence_changed: Vec::new(),
            judged_in: None,
            anchors: c.anchors.clone(),
            trust_counts: Some(c.trust),
            state: Some(c.state),
            version: Some(c.version),
            content_hash: Some(c.content_hash.clone()),
            evidence: c.evidence.clone(),
            supersedes: c.supersedes.clone(),
            promoted_to: c.promoted_to.clone(),
            outdated_reason: c.outdated_reason.clone(),
            outdated_by: c.outdated_by.clone(),
            promotion: c.promoted_by.is_some().then(|| Promotion {
                origin_claim: c.origin_claim.clone(),
                origin_agent: c.origin_agent.clone(),
                origin_created: c.origin_created,
                promoted_by: c.promoted_by.clone(),
                promotion_reason: c.promotion_reason.clone(),
                promoted_at: c.created,
                chain: chain_line(c),
            }),
            matched_task: None,
            member: c.member.clone(),
            conflict: c.conflict.clone(),
            races: c.races.clone(),
        }
    }

    /// The row as a recall answer shows it without `detail`: the full provenance dropped
    /// (it is one `detail: true` or one `history` away).
    pub fn compact(mut self) -> Row {
        self.trust_counts = None;
        self.state = None;
        self.version = None;
        self.content_hash = None;
        self.evidence.clear();
        self.supersedes = None;
        self.promoted_to = None;
        self.outdated_reason = None;
        self.outdated_by = None;
        self.promotion = None;
        self
    }

    /// Compact unless `detail`.
    /// A weak recall hit: labelled, with its evidence.
    pub fn weak(c: &Claim, tier: StoreTier, now: Now, hit: &brains::Hit) -> Row {
        let round = |x: f64| (x * 1e4).round() / 1e4;
        Row {
            weak: true,
            lexical: Some(round(hit.lexical)),
            cosine: hit.vector.map(round),
            ..Row::of(c, tier, now, Some(hit.score))
        }
    }

    pub fn shown(self, detail: bool) -> Row {
        if detail {
            self
        } else {
            self.compact()
        }
    }

    /// Rows of several claims of one tier.
    pub fn all(cs: &[Claim], tier: StoreTier, now: Now) -> Vec<Row> {
        cs.iter().map(|c| Row::of(c, tier, now, None)).collect()
    }

    /// Best score first, then newest.
    pub fn by_score(a: &Row, b: &Row) -> std::cmp::Ordering {
        b.score
            .unwrap_or(0.0)
            .total_cmp(&a.score.unwrap_or(0.0))
            .then_with(|| b.created.cmp(&a.created))
    }
}

/// `YYYY-MM-DD` of a ms timestamp (UTC), for one-line renderings.
pub fn date(ms: i64) -> String {
    let (y, m, d) = crate::clock::civil(ms.div_euclid(86_400_000));
    format!("{y:04}-{m:02}-{d:02}")
}

/// A text on one line (every run of whitespace one space), cut to `max` characters with
/// an ellipsis when longer.
pub fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
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
