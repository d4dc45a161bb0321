//! A claim's metadata, what scope and filters read: owned ([`ClaimMeta`]), borrowed as
//! the index holds it ([`MetaRef`]), and handed to the segment builder.

use super::segment::{MetaIn, Segment};
use crate::claim::{Claim, Strength};

/// A claim's metadata, owned: what scope and filters read.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimMeta {
    /// Lowercased label (scope matches label prefixes case-insensitively).
    pub label: String,
    pub source_agent: String,
    pub strength: Strength,
    pub trust: f64,
    pub created: i64,
    pub evidence: Vec<String>,
}

impl ClaimMeta {
    /// Borrowed, as the claim index hands metadata out.
    pub fn as_ref(&self) -> MetaRef<'_> {
        MetaRef::from(self)
    }

    pub fn of(c: &Claim) -> ClaimMeta {
        ClaimMeta {
            label: c.label.to_lowercase(),
            source_agent: c.source_agent.clone(),
            strength: c.strength,
            trust: c.trust.score(),
            created: c.created,
            evidence: c.evidence.clone(),
        }
    }
}

/// A claim's metadata as the index holds it, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct MetaRef<'a> {
    /// Lowercased label.
    pub label: &'a str,
    pub source_agent: &'a str,
    pub strength: Strength,
    pub trust: f64,
    pub created: i64,
    pub(super) evidence: Evidence<'a>,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Evidence<'a> {
    Base(&'a Segment, u32),
    Delta(&'a [String]),
}

impl<'a> From<&'a ClaimMeta> for MetaRef<'a> {
    fn from(m: &'a ClaimMeta) -> MetaRef<'a> {
        MetaRef {
            label: &m.label,
            source_agent: &m.source_agent,
            strength: m.strength,
            trust: m.trust,
            created: m.created,
            evidence: Evidence::Delta(&m.evidence),
        }
    }
}

impl From<MetaRef<'_>> for ClaimMeta {
    fn from(m: MetaRef<'_>) -> ClaimMeta {
        ClaimMeta {
            label: m.label.to_string(),
            source_agent: m.source_agent.to_string(),
            strength: m.strength,
            trust: m.trust,
            created: m.created,
            evidence: m.evidence().map(str::to_string).collect(),
        }
    }
}

impl<'a> MetaRef<'a> {
    pub fn evidence(&self) -> Box<dyn Iterator<Item = &'a str> + 'a> {
        match self.evidence {
            Evidence::Base(seg, d) => Box::new(seg.evidence(d)),
            Evidence::Delta(ev) => Box::new(ev.iter().map(String::as_str)),
        }
    }
}

impl<'a> MetaIn<'a> {
    pub(crate) fn of(m: &'a ClaimMeta) -> MetaIn<'a> {
        MetaIn {
            label: &m.label,
            source_agent: &m.source_agent,
            strength: m.strength,
            trust: m.trust,
            created: m.created,
            evidence: m.evidence.iter().map(String::as_str).collect(),
        }
    }
}
