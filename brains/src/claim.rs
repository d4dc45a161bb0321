//! Claims: one labelled belief in one store, its lifecycle fields, and the validation
//! every write passes before it touches disk.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::anchor::Anchor;
use crate::error::StoreError;
pub use crate::strength::Strength;

mod check;

pub use check::{check_line, check_text, validate_agent_id};

/// Longest accepted claim text, in bytes.
pub const MAX_TEXT_BYTES: usize = 16 * 1024;
/// Longest accepted label, in characters.
pub const MAX_LABEL_CHARS: usize = 200;
/// Longest slug, in characters.
pub const MAX_SLUG_CHARS: usize = 80;
/// Longest accepted agent id, reason line or evidence entry, in bytes.
pub const MAX_SHORT_FIELD_BYTES: usize = 512;
/// Most evidence entries on one claim.
pub const MAX_EVIDENCE: usize = 32;

/// Liveness of one version of a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum ClaimState {
    /// The live version.
    Authored,
    /// A superseded or demoted version, kept in history forever.
    Outdated,
}

impl ClaimState {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimState::Authored => "authored",
            ClaimState::Outdated => "outdated",
        }
    }
}

/// The trust grade of a claim, accumulated by `learn` verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Trust {
    pub correct: u32,
    pub partial: u32,
    pub wrong: u32,
}

impl Trust {
    /// Count one verdict.
    pub fn record(&mut self, v: Verdict) {
        match v {
            Verdict::Correct => self.correct += 1,
            Verdict::Partial => self.partial += 1,
            Verdict::Wrong => self.wrong += 1,
        }
    }

    /// Laplace-smoothed score in `[0, 1]`; an ungraded claim scores 0.5.
    pub fn score(&self) -> f64 {
        let n = (self.correct + self.partial + self.wrong) as f64;
        (self.correct as f64 + 0.5 * self.partial as f64 + 1.0) / (n + 2.0)
    }
}

/// A `learn` verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Verdict {
    #[cfg_attr(feature = "clap", value(help = "The claim held"))]
    Correct,
    #[cfg_attr(feature = "clap", value(help = "It held in part"))]
    Partial,
    #[cfg_attr(
        feature = "clap",
        value(help = "It did not hold (on a medulla claim: demotes it)")
    )]
    Wrong,
}

impl Verdict {
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "correct" => Ok(Verdict::Correct),
            "partial" => Ok(Verdict::Partial),
            "wrong" => Ok(Verdict::Wrong),
            other => Err(StoreError::Invalid(format!(
                "unknown verdict {other:?}: use correct, partial or wrong"
            ))),
        }
    }
    /// The act note a verdict leaves: `wrong`, or `wrong: <note>`.
    pub fn act_note(self, note: Option<&str>) -> String {
        match note {
            Some(n) => format!("{}: {n}", self.as_str()),
            None => self.as_str().to_string(),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Correct => "correct",
            Verdict::Partial => "partial",
            Verdict::Wrong => "wrong",
        }
    }
}

/// One version of one claim, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    pub label: String,
    pub slug: String,
    pub text: String,
    pub state: ClaimState,
    /// Birth of this version, ms since the Unix epoch. Immutable.
    pub created: i64,
    pub source_agent: String,
    /// Root where the claim was born, or `medulla`; `None` renders as `unknown`.
    pub origin_brain: Option<String>,
    pub strength: Strength,
    /// Version id (`<slug>@<created>`) of the version this one replaced.
    pub supersedes: Option<String>,
    pub trust: Trust,
    pub evidence: Vec<String>,
    /// sha256 (hex) of the canonical content, see [`content_hash`].
    pub content_hash: String,
    /// 1 for the first version of a slug, then +1 per supersession.
    pub version: u64,
    /// Witness only: `medulla@<slug>@<ms>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promoted_to: Option<String>,
    /// Medulla copy only: `<root>#<slug>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_claim: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promoted_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promotion_reason: Option<String>,
    /// Medulla copy only: when the original was learned (the witness's `created`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_created: Option<i64>,
    /// Medulla copy only: who wrote the original in its project brain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_agent: Option<String>,
    /// Set when a version leaves the live set: why (superseded, demoted: reason, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outdated_reason: Option<String>,
    /// When this version left the live set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outdated_at: Option<i64>,
    /// Who took this version out of recall without a replacement (a demotion or a
    /// retirement); the act log has the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outdated_by: Option<String>,
    /// The evidence files as they were when this version was written or re-anchored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<Anchor>,
    /// A shared store's version only: the team member (a PostgreSQL role) who wrote it,
    /// as the database stamped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// A shared store's version only: another member superseded the same version at the
    /// same time; both versions name each other. Never resolved silently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<Conflict>,
    /// A shared store's version only: verdicts and retirements another member made on a
    /// version that another owner superseded meanwhile (on the version meant and on the
    /// live one). Recorded and shown, never dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub races: Vec<Race>,
    /// Where the write came from: the checkout of the brain's root its caller worked in,
    /// else the caller's own directory (stamped by the owner; absent on versions written
    /// before it was recorded). Provenance, not content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_from: Option<String>,
    /// The client session that wrote it (an MCP session, a hook's client session), as
    /// the owner knew it. Provenance, not content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// An act that raced a supersession: a member graded or retired a version that, by the
/// time the act reached the team's log, another member had superseded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Race {
    /// Who acted (as the database stamped it).
    pub member: String,
    /// What they did: `learn wrong` (`learn <verdict>`), `retired`, `demoted`.
    pub act: String,
    /// The version they meant (`<slug>@<created>`).
    pub version: String,
}

/// Two members superseded the same version of a label: the later in the team's log is
/// live, the other outdated; each carries the other's version and member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Conflict {
    /// The other version (`<slug>@<created>`).
    pub with: String,
    /// Who wrote the other version.
    pub member: String,
}

impl Claim {
    /// `<slug>@<created>`: the identity of one version.
    pub fn version_id(&self) -> String {
        format!("{}@{}", self.slug, self.created)
    }
    /// `origin_brain`, or the honest `unknown`.
    pub fn origin_or_unknown(&self) -> &str {
        self.origin_brain.as_deref().unwrap_or("unknown")
    }
}

/// What a caller asks to be written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemorizeInput {
    pub label: String,
    pub text: String,
    pub source_agent: String,
    #[serde(default)]
    pub strength: Strength,
    #[serde(default)]
    pub evidence: Vec<String>,
    /// Stamped by the owner: the routed brain's root, or `medulla`. `None` only for
    /// imported legacy claims that never said.
    #[serde(default)]
    pub origin_brain: Option<String>,
    /// Medulla copies carry their promotion chain.
    #[serde(default)]
    pub origin_claim: Option<String>,
    #[serde(default)]
    pub promoted_by: Option<String>,
    #[serde(default)]
    pub promotion_reason: Option<String>,
    #[serde(default)]
    pub origin_created: Option<i64>,
    #[serde(default)]
    pub origin_agent: Option<String>,
    /// Imports keep the original birth time; `None` = the store clock's now.
    #[serde(default)]
    pub created: Option<i64>,
    /// Recorded on the act ("memorize", "promote", "doctrine_birth", "import", ...).
    #[serde(default)]
    pub act: Option<ActKind>,
    /// The evidence files' anchors, taken by the owner (it knows the root). Not part of
    /// the content hash: the same claim anchored twice is the same claim.
    #[serde(default)]
    pub anchors: Vec<Anchor>,
    /// Stamped by the owner: where the write came from, and its client session
    /// ([`Claim::written_from`], [`Claim::session`]). Not part of the content hash.
    #[serde(default)]
    pub written_from: Option<String>,
    #[serde(default)]
    pub session: Option<String>,
    /// Who the act is by, when not the claim's author (a person bringing a joined claim
    /// back keeps the agent who wrote it as its author).
    #[serde(default)]
    pub acted_by: Option<String>,
}

/// The result of a memorize.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum MemorizeOutcome {
    /// A new slug.
    Created { claim: Claim },
    /// The live version was replaced; `previous` is now in history as outdated.
    Superseded { claim: Claim, previous: Box<Claim> },
    /// Identical content: no new version, nothing written but nothing lost.
    Unchanged { claim: Claim },
}

impl MemorizeOutcome {
    pub fn claim(&self) -> &Claim {
        match self {
            MemorizeOutcome::Created { claim }
            | MemorizeOutcome::Superseded { claim, .. }
            | MemorizeOutcome::Unchanged { claim } => claim,
        }
    }
    pub fn unchanged(&self) -> bool {
        matches!(self, MemorizeOutcome::Unchanged { .. })
    }
}

/// What kind of act a log entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum ActKind {
    Memorize,
    Supersede,
    Promote,
    PromotedStamp,
    DoctrineBirth,
    Demote,
    Retire,
    Learn,
    Reanchor,
    Import,
    KvSet,
    KvDelete,
    Purge,
    /// A checkout of the brain's repository (a worktree, a clone, the root moved) asked
    /// for the first time: its path is the subject. No claim changes.
    Checkout,
    /// Versions merged in from another brain of the same repository (`brains merge`).
    Merge,
    /// The brain's project identity, or one of its checkouts', recorded anew (a remote
    /// moved, or identified with its remote): the checkout's path is the subject. No
    /// claim changes.
    Identity,
    /// A claim that said what another says was joined into it (`tend`, or a person's
    /// `review merge`): its live version went to history, `consolidated: into <slug>`.
    Consolidate,
    /// A joined or retired claim brought back live (a join undone): a new version with the
    /// content of its last one.
    Revive,
    /// A person looked at a claim an agent wrote and kept it as it is (`review keep`).
    Review,
}

impl ActKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActKind::Memorize => "memorize",
            ActKind::Supersede => "supersede",
            ActKind::Promote => "promote",
            ActKind::PromotedStamp => "promoted_stamp",
            ActKind::DoctrineBirth => "doctrine_birth",
            ActKind::Demote => "demote",
            ActKind::Retire => "retire",
            ActKind::Learn => "learn",
            ActKind::Reanchor => "reanchor",
            ActKind::Import => "import",
            ActKind::KvSet => "kv_set",
            ActKind::KvDelete => "kv_delete",
            ActKind::Purge => "purge",
            ActKind::Checkout => "checkout",
            ActKind::Merge => "merge",
            ActKind::Identity => "identity",
            ActKind::Consolidate => "consolidate",
            ActKind::Revive => "revive",
            ActKind::Review => "review",
        }
    }

    /// Does the act's subject name a claim (a slug)? Boot memory's acts name a key and a
    /// checkout's a path: replaying the log never reads those as slugs.
    pub fn names_claim(self) -> bool {
        !matches!(
            self,
            ActKind::KvSet | ActKind::KvDelete | ActKind::Checkout | ActKind::Identity
        )
    }
}

/// One entry of a store's act log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Act {
    pub seq: u64,
    pub kind: ActKind,
    /// The claim slug or boot-memory key acted on.
    pub subject: String,
    pub actor: String,
    pub at: i64,
    pub before_hash: Option<String>,
    pub after_hash: Option<String>,
    /// A free-form note (reason, verdict, etiquette flag, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Derive a slug: lowercase, every run of non-alphanumerics becomes one `-`, trimmed,
/// at most [`MAX_SLUG_CHARS`] characters. Non-ASCII letters are kept (lowercased).
pub fn slugify(label: &str) -> String {
    let mut out = slug_words(label);
    if let Some((cut, _)) = out.char_indices().nth(MAX_SLUG_CHARS) {
        out.truncate(cut);
    }
    out.truncate(out.trim_end_matches('-').len());
    out
}

/// [`slugify`] before its length cap: the alphanumeric runs, lowercased, one `-` between
/// two.
fn slug_words(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    let mut pending_dash = false;
    for ch in label.chars() {
        if ch.is_alphanumeric() {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.extend(ch.to_lowercase());
        } else {
            pending_dash = true;
        }
    }
    out
}

/// sha256 (hex) over the canonical content of a claim: what makes two writes "the same".
pub fn content_hash(label: &str, text: &str, strength: Strength, evidence: &[String]) -> String {
    let mut h = Sha256::new();
    for part in [label, text, strength.as_str()] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    for e in evidence {
        h.update((e.len() as u64).to_le_bytes());
        h.update(e.as_bytes());
    }
    hex::encode(h.finalize())
}

/// The identity of a label: case and runs of whitespace do not make a different claim,
/// anything else does (`C++ build` and `C# build` are two claims, though both slug to
/// `c-build`).
pub fn label_identity(label: &str) -> String {
    label
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// True when two labels name the same claim.
pub fn same_label(a: &str, b: &str) -> bool {
    label_identity(a) == label_identity(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_lowercases_and_collapses_separators() {
        assert_eq!(slugify("  Hall Fix: CI -- flake!  "), "hall-fix-ci-flake");
        assert_eq!(slugify("MedullaProbeSentinel"), "medullaprobesentinel");
        assert_eq!(slugify("Ünïcode Ok"), "ünïcode-ok");
        assert_eq!(slugify("!!!"), "");
    }

    #[test]
    fn slug_is_bounded_without_trailing_dash() {
        let label = format!("{} {}", "a".repeat(79), "b".repeat(10));
        let slug = slugify(&label);
        assert!(slug.chars().count() <= MAX_SLUG_CHARS);
        assert!(!slug.ends_with('-'));
    }

    #[test]
    fn agent_ids_must_be_vendor_role() {
        for ok in [
            "claude:maker",
            "codex:orchestrator",
            "human:founder",
            "a.b:c-d_e",
        ] {
            assert!(validate_agent_id(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "claude",
            ":maker",
            "claude:",
            "claude:ma ker",
            "a:b:c",
            "Claude Maker",
        ] {
            let err = validate_agent_id(bad).unwrap_err();
            assert_eq!(err.code(), "bad_agent_id", "{bad}");
        }
    }

    #[test]
    fn strength_orders_hint_observed_verified() {
        assert!(Strength::Hint < Strength::Observed);
        assert!(Strength::Observed < Strength::Verified);
        assert_eq!(Strength::parse("Verified").unwrap(), Strength::Verified);
        assert_eq!(
            StoreError::from(Strength::parse("strong").unwrap_err()).code(),
            "invalid_input"
        );
    }

    #[test]
    fn content_hash_separates_fields() {
        let a = content_hash("ab", "c", Strength::Observed, &[]);
        let b = content_hash("a", "bc", Strength::Observed, &[]);
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        let c = content_hash("ab", "c", Strength::Verified, &[]);
        assert_ne!(a, c);
    }

    #[test]
    fn validation_names_each_problem() {
        let base = MemorizeInput {
            label: "x".into(),
            text: "y".into(),
            source_agent: "claude:maker".into(),
            ..Default::default()
        };
        let mut m = base.clone();
        m.text = "   ".into();
        assert_eq!(m.validate().unwrap_err().code(), "empty_text");
        let mut m = base.clone();
        m.text = "x".repeat(MAX_TEXT_BYTES + 1);
        assert_eq!(m.validate().unwrap_err().code(), "text_too_long");
        let mut m = base.clone();
        m.label = "l".repeat(MAX_LABEL_CHARS + 1);
        assert_eq!(m.validate().unwrap_err().code(), "label_too_long");
        let mut m = base.clone();
        m.label = "--".into();
        assert_eq!(m.validate().unwrap_err().code(), "label_without_slug");
        let mut m = base.clone();
        m.source_agent = "nobody".into();
        assert_eq!(m.validate().unwrap_err().code(), "bad_agent_id");
        let mut m = base.clone();
        m.label = "a\u{0}b".into();
        assert_eq!(m.validate().unwrap_err().code(), "control_characters");
        let mut m = base.clone();
        m.label = "two\nlines".into();
        assert_eq!(m.validate().unwrap_err().code(), "control_characters");
        let mut m = base.clone();
        m.text = "bell \u{7} in text".into();
        assert_eq!(m.validate().unwrap_err().code(), "control_characters");
        let mut m = base.clone();
        m.evidence = vec!["src/a.rs\nsrc/b.rs".into()];
        assert_eq!(m.validate().unwrap_err().code(), "control_characters");
        let mut m = base.clone();
        m.text = "lines\r\nand\ttabs are text".into();
        assert!(m.validate().is_ok());
        let mut m = base;
        assert_eq!(m.validate().unwrap(), "x");
    }

    #[test]
    fn labels_are_identities_up_to_case_and_spacing() {
        assert!(same_label("Deploy  rule", "deploy rule"));
        assert!(!same_label("C++ build", "C# build"));
        assert_eq!(slugify("C++ build"), slugify("C# build"));
    }

    #[test]
    fn trust_score_moves_with_verdicts() {
        let mut t = Trust::default();
        assert!((t.score() - 0.5).abs() < 1e-9);
        t.correct += 2;
        assert!(t.score() > 0.5);
        t.wrong += 5;
        assert!(t.score() < 0.5);
    }
}
