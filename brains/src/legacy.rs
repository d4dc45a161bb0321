//! The legacy `.light.md` grammar: a frontmatter of `Key: value` lines (optionally
//! fenced by `---`), a blank line, then the claim text. Unknown keys are ignored (kept
//! for diagnostics); a missing `Origin-Brain` is unknown, never guessed.

use std::collections::BTreeMap;

use crate::claim::{slugify, Claim, ClaimState, MemorizeInput, Strength};

/// Typed parse errors, each naming the fix.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LegacyError {
    #[error(
        "no frontmatter: a .light.md file starts with `Key: value` lines (Node:, Created:, ...)"
    )]
    NoFrontmatter,
    #[error("missing Node: every claim file names its label with `Node: <label>`")]
    MissingNode,
    #[error("Created is {0:?}, not milliseconds since the epoch: write Created: <ms>")]
    BadCreated(String),
    #[error("State is {0:?}: use authored or outdated")]
    BadState(String),
    #[error("Strength is {0:?}: use hint, observed or verified")]
    BadStrength(String),
    #[error("the claim text is empty: put the text after the frontmatter and a blank line")]
    EmptyBody,
}

/// A parsed legacy claim.
#[derive(Debug, Clone, PartialEq)]
pub struct LegacyClaim {
    pub label: String,
    pub text: String,
    pub state: ClaimState,
    pub created: Option<i64>,
    pub source_agent: Option<String>,
    pub origin_brain: Option<String>,
    pub strength: Strength,
    pub supersedes: Option<String>,
    pub evidence: Vec<String>,
    pub promoted_to: Option<String>,
    pub origin_claim: Option<String>,
    pub promoted_by: Option<String>,
    pub promotion_reason: Option<String>,
    /// Keys this grammar does not know, kept for diagnostics.
    pub unknown: BTreeMap<String, String>,
}

fn is_key_line(l: &str) -> Option<(&str, &str)> {
    let (k, v) = l.split_once(':')?;
    let k = k.trim();
    (!k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    .then(|| (k, v.trim()))
}

/// Parse one `.light.md` file.
pub fn parse(text: &str) -> Result<LegacyClaim, LegacyError> {
    let text = text.replace("\r\n", "\n");
    let mut lines = text.lines().peekable();
    let fenced = lines.peek().is_some_and(|l| l.trim() == "---");
    if fenced {
        lines.next();
    }
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in lines.by_ref() {
        if fenced && line.trim() == "---" {
            break;
        }
        if line.trim().is_empty() {
            if fenced {
                continue;
            }
            break;
        }
        match is_key_line(line) {
            Some((k, v)) => fields.push((k.to_string(), v.to_string())),
            None if fields.is_empty() => return Err(LegacyError::NoFrontmatter),
            None => {
                // A continuation of the previous value (wrapped lines).
                if let Some(last) = fields.last_mut() {
                    last.1.push(' ');
                    last.1.push_str(line.trim());
                }
            }
        }
    }
    if fields.is_empty() {
        return Err(LegacyError::NoFrontmatter);
    }
    let body = lines.collect::<Vec<_>>().join("\n").trim().to_string();
    let mut c = LegacyClaim {
        label: String::new(),
        text: body,
        state: ClaimState::Authored,
        created: None,
        source_agent: None,
        origin_brain: None,
        strength: Strength::default(),
        supersedes: None,
        evidence: vec![],
        promoted_to: None,
        origin_claim: None,
        promoted_by: None,
        promotion_reason: None,
        unknown: BTreeMap::new(),
    };
    let opt = |v: &str| (!v.is_empty()).then(|| v.to_string());
    for (k, v) in fields {
        match k.to_ascii_lowercase().as_str() {
            "node" => c.label = v,
            "state" => {
                c.state = match v.to_ascii_lowercase().as_str() {
                    "authored" | "" => ClaimState::Authored,
                    "outdated" => ClaimState::Outdated,
                    _ => return Err(LegacyError::BadState(v)),
                }
            }
            "created" => {
                c.created = Some(v.parse().map_err(|_| LegacyError::BadCreated(v.clone()))?)
            }
            "source-agent" => c.source_agent = opt(&v),
            "origin-brain" => c.origin_brain = opt(&v),
            "strength" => {
                c.strength = Strength::parse(&v).map_err(|_| LegacyError::BadStrength(v.clone()))?
            }
            "supersedes" => c.supersedes = opt(&v),
            "evidence" => c.evidence.extend(
                v.split(',')
                    .map(str::trim)
                    .filter(|e| !e.is_empty())
                    .map(str::to_string),
            ),
            "promoted-to" => c.promoted_to = opt(&v),
            "origin-claim" => c.origin_claim = opt(&v),
            "promoted-by" => c.promoted_by = opt(&v),
            "promotion-reason" => c.promotion_reason = opt(&v),
            "protocol" => {}
            _ => {
                c.unknown.insert(k, v);
            }
        }
    }
    if c.label.trim().is_empty() {
        return Err(LegacyError::MissingNode);
    }
    if c.text.is_empty() {
        return Err(LegacyError::EmptyBody);
    }
    Ok(c)
}

impl LegacyClaim {
    pub fn slug(&self) -> String {
        slugify(&self.label)
    }

    /// A memorize input carrying every provenance field; an unknown agent is said so.
    pub fn to_input(&self) -> MemorizeInput {
        MemorizeInput {
            label: self.label.clone(),
            text: self.text.clone(),
            source_agent: self
                .source_agent
                .clone()
                .unwrap_or_else(|| "unknown:legacy".into()),
            strength: self.strength,
            evidence: self.evidence.clone(),
            origin_brain: self.origin_brain.clone(),
            origin_claim: self.origin_claim.clone(),
            promoted_by: self.promoted_by.clone(),
            promotion_reason: self.promotion_reason.clone(),
            origin_created: None,
            origin_agent: None,
            created: self.created,
            act: Some(crate::claim::ActKind::Import),
        }
    }
}

/// Render a claim in the legacy grammar, every provenance field included.
pub fn render(c: &Claim) -> String {
    let mut s = String::from("Protocol: L1GHT/1.0\n");
    let mut kv = |k: &str, v: &str| {
        // One line per value: newlines would break the frontmatter.
        s.push_str(&format!("{k}: {}\n", v.replace('\n', " ")));
    };
    kv("Node", &c.label);
    kv("State", c.state.as_str());
    kv("Created", &c.created.to_string());
    kv("Source-Agent", &c.source_agent);
    if let Some(o) = &c.origin_brain {
        kv("Origin-Brain", o);
    }
    kv("Strength", c.strength.as_str());
    if let Some(x) = &c.supersedes {
        kv("Supersedes", x);
    }
    if !c.evidence.is_empty() {
        kv("Evidence", &c.evidence.join(", "));
    }
    for (k, v) in [
        ("Promoted-To", &c.promoted_to),
        ("Origin-Claim", &c.origin_claim),
        ("Promoted-By", &c.promoted_by),
        ("Promotion-Reason", &c.promotion_reason),
    ] {
        if let Some(v) = v {
            kv(k, v);
        }
    }
    s.push('\n');
    s.push_str(&c.text);
    s.push('\n');
    s
}

/// `.history/<slug>.<ms>.light.md`.
pub fn history_file_name(slug: &str, ms: i64) -> String {
    format!("{slug}.{ms}.light.md")
}

/// The slug and time of a history file name.
pub fn parse_history_file_name(name: &str) -> Option<(String, i64)> {
    let stem = name.strip_suffix(".light.md")?;
    let (slug, ms) = stem.rsplit_once('.')?;
    Some((slug.to_string(), ms.parse().ok()?))
}
