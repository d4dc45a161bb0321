//! Memory as MCP resources: the served brain's live claims (`medulla://brain/{slug}`),
//! the medulla's doctrine (`medulla://medulla/{slug}`) and the north digest
//! (`medulla://north`). Routed exactly like a tool call: the request's route decides the
//! brain, a brain URI names a slug of that brain and of no other, and an unrouted request
//! lists the medulla alone. No URI names a brain, so nothing of another brain can be
//! listed or read.

use brains::Claim;

use super::route::Routed;
use super::rows::{Row, StoreTier};
use super::verb::{Cx, Verb};
use super::verbs::beat::{North, NorthAnswer, NorthArgs};
use super::{drift, progress::Progress, provenance, RouteInput, Service};
use crate::error::OwnerError;
use crate::roster::Manifest;
use crate::store_id::{Fingerprint, StoreId};

/// The north digest.
pub const NORTH_URI: &str = "medulla://north";
const BRAIN_PREFIX: &str = "medulla://brain/";
/// Where a medulla claim's URI starts.
pub const MEDULLA_PREFIX: &str = "medulla://medulla/";
/// A team medulla claim's URI prefix.
pub const TEAM_PREFIX: &str = "medulla://team/";
/// A claim of the served brain, by slug.
pub const BRAIN_TEMPLATE: &str = "medulla://brain/{slug}";
/// A claim of the medulla, by slug.
pub const MEDULLA_TEMPLATE: &str = "medulla://medulla/{slug}";
/// A claim reads as its full row.
pub const CLAIM_MIME: &str = "application/json";
/// The digest reads as text for a model.
pub const DIGEST_MIME: &str = "text/markdown";
/// Most resources on one page of `resources/list`.
pub const PAGE: usize = 200;
/// The task the digest answers: what anyone about to work in the project should know.
pub const DIGEST_TASK: &str =
    "what to know before working in this project: its conventions, decisions and pitfalls";

/// What a resource or prompt request can fail with, each with a stable code.
#[derive(Debug, thiserror::Error)]
pub enum ResourceError {
    #[error("{uri:?} is not a medulla resource: read medulla://north, medulla://brain/<slug> or medulla://medulla/<slug> (resources/list names them)")]
    UnknownUri { uri: String },
    #[error("no live claim {slug:?} in {store}: resources/list names the live ones, and the history tool shows past versions")]
    NoSuchClaim { slug: String, store: String },
    #[error("no brain serves this request, so {uri} names nothing: the medulla's claims and medulla://north are readable; to read a brain, send your working directory as Medulla-Caller-Root, or create its brain with {fix}")]
    Unrouted { uri: String, fix: String },
    #[error("bad cursor {0:?}: pass the nextCursor of the previous page, or none for the first")]
    BadCursor(String),
    #[error("unknown prompt {0:?}: prompts/list names them")]
    UnknownPrompt(String),
    #[error("the {prompt} prompt needs the argument {argument:?}: {what}")]
    MissingArgument {
        prompt: &'static str,
        argument: &'static str,
        what: &'static str,
    },
    #[error(transparent)]
    Owner(#[from] OwnerError),
}

impl ResourceError {
    pub fn code(&self) -> &'static str {
        match self {
            ResourceError::UnknownUri { .. } => "unknown_resource",
            ResourceError::NoSuchClaim { .. } => "no_such_claim",
            ResourceError::Unrouted { .. } => "unbootstrapped",
            ResourceError::BadCursor(_) => "invalid_input",
            ResourceError::UnknownPrompt(_) => "unknown_prompt",
            ResourceError::MissingArgument { .. } => "invalid_input",
            ResourceError::Owner(e) => e.code(),
        }
    }

    /// Is it a resource that does not exist (as opposed to a bad request or a fault)?
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            ResourceError::UnknownUri { .. }
                | ResourceError::NoSuchClaim { .. }
                | ResourceError::Unrouted { .. }
        )
    }

    /// The error as the JSON object every surface returns.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            ResourceError::Owner(e) => e.to_json(),
            _ => serde_json::json!({ "code": self.code(), "message": self.to_string() }),
        }
    }
}

pub type Result<T, E = ResourceError> = std::result::Result<T, E>;

/// What a resource URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceUri {
    /// A live claim of the served brain (`Project`) or of the medulla.
    Claim {
        tier: StoreTier,
        slug: String,
    },
    North,
}

impl ResourceUri {
    pub fn parse(uri: &str) -> Result<ResourceUri> {
        let unknown = || ResourceError::UnknownUri {
            uri: uri.to_string(),
        };
        if uri == NORTH_URI {
            return Ok(ResourceUri::North);
        }
        let (tier, rest) = if let Some(rest) = uri.strip_prefix(BRAIN_PREFIX) {
            (StoreTier::Project, rest)
        } else if let Some(rest) = uri.strip_prefix(MEDULLA_PREFIX) {
            (StoreTier::Medulla, rest)
        } else if let Some(rest) = uri.strip_prefix(TEAM_PREFIX) {
            (StoreTier::Team, rest)
        } else {
            return Err(unknown());
        };
        let slug = percent_decode(rest).ok_or_else(unknown)?;
        if slug.is_empty() || slug.contains('/') || slug.chars().any(char::is_control) {
            return Err(unknown());
        }
        Ok(ResourceUri::Claim { tier, slug })
    }

    pub fn uri(&self) -> String {
        match self {
            ResourceUri::North => NORTH_URI.to_string(),
            ResourceUri::Claim { tier, slug } => claim_uri(*tier, slug),
        }
    }
}

/// The URI of a claim of a tier.
pub fn claim_uri(tier: StoreTier, slug: &str) -> String {
    let prefix = match tier {
        StoreTier::Project => BRAIN_PREFIX,
        StoreTier::Medulla => MEDULLA_PREFIX,
        StoreTier::Team => TEAM_PREFIX,
    };
    format!("{prefix}{}", percent_encode(slug))
}

/// RFC 3986: everything but the unreserved characters is escaped.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// One listed resource.
#[derive(Debug, Clone)]
pub struct Listed {
    pub uri: String,
    /// `brain/<slug>`, `medulla/<slug>` or `north`.
    pub name: String,
    pub title: String,
    pub description: String,
    pub mime_type: &'static str,
}

/// One page of `resources/list`.
#[derive(Debug, Clone)]
pub struct Listing {
    pub resources: Vec<Listed>,
    pub next_cursor: Option<String>,
    /// The brain the request was routed to.
    pub landed: Option<Fingerprint>,
}

/// A resource's contents.
#[derive(Debug, Clone)]
pub struct Contents {
    pub uri: String,
    pub mime_type: &'static str,
    pub text: String,
    pub landed: Option<Fingerprint>,
}

/// A resource template.
#[derive(Debug, Clone, Copy)]
pub struct Template {
    pub uri_template: &'static str,
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub mime_type: &'static str,
}

/// The templates: one per store a claim can be read from.
pub const TEMPLATES: [Template; 2] = [
    Template {
        uri_template: BRAIN_TEMPLATE,
        name: "brain-claim",
        title: "A claim of this project's brain",
        description: "The live version of a claim of the brain that serves this session, by slug, as its full row (text, provenance, strength, trust, age). Only the served brain: no URI reaches another project's brain.",
        mime_type: CLAIM_MIME,
    },
    Template {
        uri_template: MEDULLA_TEMPLATE,
        name: "medulla-claim",
        title: "A claim of the medulla's doctrine",
        description: "The live version of a medulla claim (doctrine shared across projects), by slug, as its full row with its promotion chain.",
        mime_type: CLAIM_MIME,
    },
];

/// A claim's text as a listing's description: one line of at most 160 characters.
fn snippet(text: &str) -> String {
    super::rows::one_line(text, 160)
}

fn listed(c: &Claim, tier: StoreTier) -> Listed {
    let (name, whose) = match tier {
        StoreTier::Project => (format!("brain/{}", c.slug), "this brain"),
        StoreTier::Medulla => (format!("medulla/{}", c.slug), "the medulla"),
        StoreTier::Team => (format!("team/{}", c.slug), "the team medulla"),
    };
    Listed {
        uri: claim_uri(tier, &c.slug),
        name,
        title: c.label.clone(),
        description: format!(
            "{} ({whose}, {}, by {}): {}",
            c.label,
            c.strength.as_str(),
            c.source_agent,
            snippet(&c.text)
        ),
        mime_type: CLAIM_MIME,
    }
}

fn north_listed(routed: &Routed) -> Listed {
    Listed {
        uri: NORTH_URI.to_string(),
        name: "north".into(),
        title: "north: what memory holds for this project".into(),
        description: match &routed.brain {
            Some(b) => format!("The default beat as text: {}'s most relevant claims and the medulla's doctrine, labelled, never a false 'no memory'.", b.root),
            None => "The default beat as text: the medulla's doctrine (no brain serves this session).".into(),
        },
        mime_type: DIGEST_MIME,
    }
}

/// A store's live claims, newest first.
async fn newest_first(svc: &Service, store: &StoreId) -> Result<Vec<Claim>> {
    let mut claims = svc.owner.live_claims(store).await?;
    claims.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.slug.cmp(&b.slug)));
    Ok(claims)
}

impl Service {
    /// `resources/list`: the digest, then the served brain's live claims, then the
    /// medulla's, newest first in each, a page at a time.
    pub async fn list_resources(
        &self,
        input: &RouteInput,
        cursor: Option<&str>,
    ) -> Result<Listing> {
        let offset = match cursor {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .map_err(|_| ResourceError::BadCursor(c.to_string()))?,
        };
        let routed = self.route(input).await?;
        let mut all = vec![north_listed(&routed)];
        if let Some(b) = &routed.brain {
            let claims = newest_first(self, &StoreId::brain(&b.fingerprint)).await?;
            all.extend(claims.iter().map(|c| listed(c, StoreTier::Project)));
        }
        let doctrine = newest_first(self, &StoreId::Medulla).await?;
        all.extend(doctrine.iter().map(|c| listed(c, StoreTier::Medulla)));
        let total = all.len();
        let resources: Vec<Listed> = all.into_iter().skip(offset).take(PAGE).collect();
        let end = offset + resources.len();
        Ok(Listing {
            resources,
            next_cursor: (end < total).then(|| end.to_string()),
            landed: routed.brain.map(|b| b.fingerprint),
        })
    }

    /// `resources/read`: a claim of the served brain or of the medulla as its full row,
    /// or the north digest.
    pub async fn read_resource(&self, uri: &str, input: &RouteInput) -> Result<Contents> {
        let what = ResourceUri::parse(uri)?;
        let routed = self.route(input).await?;
        let landed = routed.brain.as_ref().map(|b| b.fingerprint.clone());
        let (mime_type, text) = match &what {
            ResourceUri::North => {
                let answer = self.beat(&routed, input, DIGEST_TASK).await?;
                (DIGEST_MIME, digest(&answer, routed.brain.as_ref()))
            }
            ResourceUri::Claim { tier, slug } => {
                let row = self.claim_row(&routed, input, *tier, slug, uri).await?;
                (CLAIM_MIME, row_json(&row))
            }
        };
        Ok(Contents {
            uri: what.uri(),
            mime_type,
            text,
            landed,
        })
    }

    /// One live claim of the served brain or of the medulla, as its full row.
    pub(crate) async fn claim_row(
        &self,
        routed: &Routed,
        input: &RouteInput,
        tier: StoreTier,
        slug: &str,
        uri: &str,
    ) -> Result<Row> {
        let (store, name) = match tier {
            StoreTier::Project => {
                let b = routed
                    .brain
                    .as_ref()
                    .ok_or_else(|| ResourceError::Unrouted {
                        uri: uri.to_string(),
                        fix: routed.fix.clone(),
                    })?;
                (StoreId::brain(&b.fingerprint), b.root.clone())
            }
            StoreTier::Medulla => (StoreId::Medulla, "the medulla".to_string()),
            StoreTier::Team => (StoreId::Team, "the team medulla".to_string()),
        };
        let claim =
            self.owner
                .get(&store, slug)
                .await?
                .ok_or_else(|| ResourceError::NoSuchClaim {
                    slug: slug.to_string(),
                    store: name.clone(),
                })?;
        let mut rows = vec![Row::of(&claim, tier, self.now(), None)];
        match tier {
            StoreTier::Project => {
                drift::mark_brain(self, &name, routed.checkout.as_deref(), &mut rows).await
            }
            StoreTier::Medulla => {
                provenance::mark_superseded(self, routed, input, &mut rows).await?;
                drift::mark(self, routed, input, &mut rows).await;
            }
            StoreTier::Team => drift::mark(self, routed, input, &mut rows).await,
        }
        Ok(rows.remove(0))
    }

    /// The `north` verb's answer for a task, for the routed request.
    pub(crate) async fn beat(
        &self,
        routed: &Routed,
        input: &RouteInput,
        task: &str,
    ) -> Result<NorthAnswer> {
        let progress = Progress::none();
        let cx = Cx {
            svc: self,
            routed,
            input,
            progress: &progress,
        };
        let args = NorthArgs {
            task: task.to_string(),
            limit: None,
            detail: true,
            filter: None,
        };
        Ok(North::run(cx, args).await?)
    }
}

/// A row as a claim resource's text.
pub fn row_json(row: &Row) -> String {
    serde_json::to_string_pretty(row).unwrap_or_default()
}

/// The URI a row is read at.
pub fn row_uri(row: &Row) -> String {
    claim_uri(row.tier, &row.slug)
}

fn bullet(out: &mut String, r: &Row) {
    let mut marks = vec![
        r.strength.as_str().to_string(),
        format!("by {}", r.source_agent),
    ];
    marks.push(super::rows::date(r.created));
    if r.stale {
        marks.push("stale".into());
    }
    if !r.evidence_changed.is_empty() {
        marks.push("evidence changed: verify first".into());
    }
    out.push_str(&format!(
        "- **{}** <{}> ({}): {}\n",
        r.label,
        row_uri(r),
        marks.join(", "),
        r.text.replace('\n', " ")
    ));
}

/// The north answer as text for a model: each claim with the URI it is read at.
pub fn digest(a: &NorthAnswer, brain: Option<&Manifest>) -> String {
    let mut out = String::from("# north: what memory holds\n\n");
    match brain {
        Some(b) => out.push_str(&format!("Served brain: {}\n", b.root)),
        None => out.push_str("No brain serves this session: the medulla's doctrine alone.\n"),
    }
    out.push_str(&format!("Task: {}\n\n{}.\n", a.task, a.note));
    let sections: [(&str, &[Row]); 3] = [
        ("This project's brain", &a.project),
        ("The medulla's doctrine", &a.medulla),
        (
            "Most recent claims (not matched to the task)",
            &a.recent_unmatched,
        ),
    ];
    for (title, rows) in sections {
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!("\n## {title}\n\n"));
        for r in rows {
            bullet(&mut out, r);
        }
    }
    if !a.disagreements.is_empty() {
        out.push_str("\n## Doctrine that disagrees with its project witness\n\n");
        for d in &a.disagreements {
            out.push_str(&format!(
                "- **{}**: the medulla says \"{}\"; {} changed since (version {}); {}\n",
                d.slug, d.medulla_text, d.witness, d.witness_version, d.fix
            ));
        }
    }
    if let Some(e) = &a.medulla_error {
        out.push_str(&format!(
            "\nThe medulla could not be asked: {} ({}).\n",
            e.0["message"].as_str().unwrap_or("no message"),
            e.0["code"].as_str().unwrap_or("unknown")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip() {
        for (uri, want) in [
            (NORTH_URI, ResourceUri::North),
            (
                "medulla://brain/deploy-steps",
                ResourceUri::Claim {
                    tier: StoreTier::Project,
                    slug: "deploy-steps".into(),
                },
            ),
            (
                "medulla://medulla/caf%C3%A9",
                ResourceUri::Claim {
                    tier: StoreTier::Medulla,
                    slug: "café".into(),
                },
            ),
        ] {
            let got = ResourceUri::parse(uri).unwrap();
            assert_eq!(got, want);
            assert_eq!(got.uri(), uri);
        }
        for bad in [
            "medulla://brain/",
            "medulla://brain/a/b",
            "medulla://other/x",
            "file:///etc/passwd",
            "medulla://brain/%zz",
            "medulla://north/x",
        ] {
            assert!(ResourceUri::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn snippets_are_one_bounded_line() {
        assert_eq!(snippet("a\n b\tc"), "a b c");
        let long = "x".repeat(500);
        assert_eq!(snippet(&long).chars().count(), 161);
    }
}
