//! The legacy `.light.md` grammar: a frontmatter of `Key: value` lines (optionally
//! fenced by `---`), a blank line, then the claim text. Unknown keys are ignored (kept
//! for diagnostics); a missing `Origin-Brain` is unknown, never guessed.

use std::collections::BTreeMap;

use crate::claim::{slugify, Claim, ClaimState, MemorizeInput, Strength};

/// Typed parse errors, each naming the fix. They name the line, never the file's bytes:
/// an error message must not become a way to read a file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LegacyError {
    #[error(
        "no frontmatter: a .light.md file starts with `Key: value` lines (Node:, Created:, ...)"
    )]
    NoFrontmatter,
    #[error("missing Node: every claim file names its label with `Node: <label>`")]
    MissingNode,
    #[error("Created on line {line} is neither milliseconds since the epoch nor an ISO 8601 date: write Created: 1783209431408 or Created: 2026-07-04T10:00:00Z")]
    BadCreated { line: usize },
    #[error("State on line {line} is not a state: use authored or outdated")]
    BadState { line: usize },
    #[error("Strength on line {line} is not a strength: use hint, observed or verified")]
    BadStrength { line: usize },
    #[error("Evidence on line {line} starts with [ but is not a JSON list of strings: write Evidence: a, b or Evidence: [\"a, b\", \"c\"]")]
    BadEvidence { line: usize },
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
    pub origin_created: Option<i64>,
    pub origin_agent: Option<String>,
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

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `Created`: milliseconds since the epoch, or an ISO 8601 date or date-time
/// (`2026-07-04`, `2026-07-04T10:00:00Z`, `2026-07-04 10:00:00.250+02:00`; no zone = UTC).
pub fn parse_created(v: &str) -> Option<i64> {
    let v = v.trim();
    if let Ok(ms) = v.parse::<i64>() {
        return Some(ms);
    }
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (date, rest) = if v.len() > 10 {
        v.split_at(10)
    } else {
        (v, "")
    };
    let mut parts = date.split('-');
    let (y, m, d) = (
        num(parts.next()?)?,
        num(parts.next()?)?,
        num(parts.next()?)?,
    );
    if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, m, d) * 86_400_000;
    if rest.is_empty() {
        return Some(ms);
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    // Split the zone off: Z, or the last + / - (dates are already cut away).
    let (time, zone) = if let Some(t) = rest.strip_suffix(['Z', 'z']) {
        (t, 0)
    } else if let Some(i) = rest.rfind(['+', '-']) {
        let (t, z) = rest.split_at(i);
        let sign = if z.starts_with('-') { -1 } else { 1 };
        let z = &z[1..];
        let (zh, zm) = z.split_once(':').unwrap_or((z, "0"));
        (t, sign * (num(zh)? * 60 + num(zm)?) * 60_000)
    } else {
        (rest, 0)
    };
    let mut hms = time.split(':');
    let h = num(hms.next()?)?;
    let mi = num(hms.next()?)?;
    let (sec, frac) = match hms.next() {
        Some(sv) => match sv.split_once('.') {
            Some((s, f)) => {
                let f3: String = f.chars().chain("000".chars()).take(3).collect();
                (num(s)?, num(&f3)?)
            }
            None => (num(sv)?, 0),
        },
        None => (0, 0),
    };
    if hms.next().is_some() || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    ms += ((h * 60 + mi) * 60 + sec) * 1000 + frac;
    Some(ms - zone)
}

/// Evidence: `a, b, c`, or a JSON list when an entry holds a comma or a quote.
fn parse_evidence(v: &str, line: usize) -> Result<Vec<String>, LegacyError> {
    if v.starts_with('[') {
        return serde_json::from_str::<Vec<String>>(v)
            .map_err(|_| LegacyError::BadEvidence { line });
    }
    Ok(v.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .collect())
}

/// Parse one `.light.md` file. The frontmatter may use CRLF line ends; the body is
/// kept byte for byte (only leading and trailing whitespace trimmed, as every stored
/// text is), so carriage returns inside a text survive a round trip.
pub fn parse(text: &str) -> Result<LegacyClaim, LegacyError> {
    let mut offset = 0usize;
    let mut lines = text.split_inclusive('\n').peekable();
    let strip = |l: &str| l.trim_end_matches(['\n', '\r']).to_string();
    let fenced = lines.peek().is_some_and(|l| strip(l).trim() == "---");
    if fenced {
        offset += lines.next().map(str::len).unwrap_or(0);
    }
    // (line number, key, value)
    let mut fields: Vec<(usize, String, String)> = Vec::new();
    let mut line_no = usize::from(fenced);
    for raw in lines {
        offset += raw.len();
        line_no += 1;
        let line = strip(raw);
        if fenced && line.trim() == "---" {
            break;
        }
        if line.trim().is_empty() {
            if fenced {
                continue;
            }
            break;
        }
        match is_key_line(&line) {
            Some((k, v)) => fields.push((line_no, k.to_string(), v.to_string())),
            None if fields.is_empty() => return Err(LegacyError::NoFrontmatter),
            None => {
                // A continuation of the previous value (wrapped lines).
                if let Some(last) = fields.last_mut() {
                    last.2.push(' ');
                    last.2.push_str(line.trim());
                }
            }
        }
    }
    if fields.is_empty() {
        return Err(LegacyError::NoFrontmatter);
    }
    let body = text.get(offset..).unwrap_or("").trim().to_string();
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
        origin_created: None,
        origin_agent: None,
        unknown: BTreeMap::new(),
    };
    let opt = |v: &str| (!v.is_empty()).then(|| v.to_string());
    for (line, k, v) in fields {
        match k.to_ascii_lowercase().as_str() {
            "node" => c.label = v,
            "state" => {
                c.state = match v.to_ascii_lowercase().as_str() {
                    "authored" | "" => ClaimState::Authored,
                    "outdated" => ClaimState::Outdated,
                    _ => return Err(LegacyError::BadState { line }),
                }
            }
            "created" => {
                c.created = Some(parse_created(&v).ok_or(LegacyError::BadCreated { line })?)
            }
            "source-agent" => c.source_agent = opt(&v),
            "origin-brain" => c.origin_brain = opt(&v),
            "strength" => {
                c.strength = Strength::parse(&v).map_err(|_| LegacyError::BadStrength { line })?
            }
            "supersedes" => c.supersedes = opt(&v),
            "evidence" => c.evidence.extend(parse_evidence(&v, line)?),
            "promoted-to" => c.promoted_to = opt(&v),
            "origin-claim" => c.origin_claim = opt(&v),
            "promoted-by" => c.promoted_by = opt(&v),
            "promotion-reason" => c.promotion_reason = opt(&v),
            "origin-created" => c.origin_created = parse_created(&v),
            "origin-agent" => c.origin_agent = opt(&v),
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
        self.clone().into_input()
    }

    /// `to_input`, consuming the claim (no field is copied).
    pub fn into_input(self) -> MemorizeInput {
        MemorizeInput {
            label: self.label,
            text: self.text,
            source_agent: self.source_agent.unwrap_or_else(|| "unknown:legacy".into()),
            strength: self.strength,
            evidence: self.evidence,
            origin_brain: self.origin_brain,
            origin_claim: self.origin_claim,
            promoted_by: self.promoted_by,
            promotion_reason: self.promotion_reason,
            origin_created: self.origin_created,
            origin_agent: self.origin_agent,
            created: self.created,
            act: Some(crate::claim::ActKind::Import),
            anchors: Vec::new(),
            written_from: None,
            session: None,
            acted_by: None,
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
        // The plain comma form reads best; an entry that would not survive it (a comma, a
        // quote, a leading bracket) makes the whole list JSON.
        let plain = c
            .evidence
            .iter()
            .all(|e| !e.contains(',') && !e.contains('"') && !e.starts_with('[') && e.trim() == e);
        if plain {
            kv("Evidence", &c.evidence.join(", "));
        } else {
            kv(
                "Evidence",
                &serde_json::to_string(&c.evidence).expect("strings serialize"),
            );
        }
    }
    for (k, v) in [
        ("Promoted-To", &c.promoted_to),
        ("Origin-Claim", &c.origin_claim),
        ("Promoted-By", &c.promoted_by),
        ("Promotion-Reason", &c.promotion_reason),
        ("Origin-Agent", &c.origin_agent),
    ] {
        if let Some(v) = v {
            kv(k, v);
        }
    }
    if let Some(t) = c.origin_created {
        kv("Origin-Created", &t.to_string());
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
