//! `review`: a person looks at what agents wrote (SPEC §14). `list` shows the claims of
//! one store no person has looked at, newest first, with their provenance (agent,
//! session, checkout, evidence), their near-duplicates, and what the last tending left
//! for a person (disagreements, claims proposed for retirement, the joins it made).
//! `keep` marks a claim reviewed (`verify` raises it to `verified`), `retire` takes it
//! out with a reason, `edit` supersedes it with the person's text, `merge` joins
//! near-duplicates into it. Each is an act by a `human:` identity; an agent is refused.

use brains::{Claim, Strength};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::{OwnerError, Result};
use crate::service::rows::{Row, StoreTier};
use crate::service::similar::Near;
use crate::service::tending::{Disagreement, Join, Stale};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::service::{RouteInput, Service};
use crate::store_id::StoreId;

/// What to do.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum ReviewOp {
    /// The claims no person has looked at, and what tending left for a person.
    #[default]
    List,
    /// Mark a claim reviewed as it is (`verify`: raise it to verified).
    Keep,
    /// Take a claim out of recall, with a reason.
    Retire,
    /// Supersede a claim with the person's text.
    Edit,
    /// Join near-duplicates (`with`) into a claim.
    Merge,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ReviewArgs {
    /// `list` (default), `keep`, `retire`, `edit` or `merge`.
    #[arg(value_enum, help = "What to do [default: list]")]
    #[serde(default)]
    pub op: Option<ReviewOp>,
    /// The claim (its slug, or its label): for every op but `list`.
    #[arg(value_name = "SLUG", help = "The claim (every op but list)")]
    pub slug: Option<String>,
    /// The store: a brain's root or fingerprint, `medulla` or `team`. Default: the
    /// caller's brain.
    #[arg(
        long,
        value_name = "ROOT",
        help = "The store: a brain's root or fingerprint, medulla or team (default: this directory's brain)"
    )]
    pub brain: Option<String>,
    /// `keep`: raise the claim to `verified` too.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", help = "keep: raise it to verified")]
    #[serde(default)]
    pub verify: Option<bool>,
    /// `retire`: why it no longer holds, in one line.
    #[arg(long, help = "retire: why it no longer holds")]
    pub reason: Option<String>,
    /// `edit`: the person's text, superseding the claim's.
    #[arg(long, help = "edit: the text that supersedes it")]
    pub text: Option<String>,
    /// `merge`: the labels joined into the claim (they go to history, `consolidated:
    /// into <slug>`).
    #[arg(
        long,
        value_name = "SLUG",
        help = "merge: a label to join into it (repeat)"
    )]
    pub with: Option<Vec<String>>,
    /// `list`: skip this many (newest first).
    #[arg(long, help = "list: skip this many")]
    pub offset: Option<usize>,
    /// `list`: at most this many (default 20, at most 200).
    #[arg(long, help = "list: at most this many [default: 20]")]
    pub limit: Option<usize>,
}

/// One claim no person has looked at.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Unreviewed {
    pub claim: Row,
    /// The checkout it was written from, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_from: Option<String>,
    /// The client session that wrote it, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Live claims of the store that say nearly the same thing under another label.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub near: Vec<Near>,
}

/// What a person's act did.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Reviewed {
    /// The act recorded: `review`, `memorize` (keep with verify, edit), `retire`,
    /// `consolidate`.
    pub act: String,
    /// Who: a `human:` identity.
    pub by: String,
    /// The claim as it stands now (for retire: its retired version).
    pub claim: Row,
    /// `merge`: the labels joined into it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joined: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReviewAnswer {
    pub op: ReviewOp,
    /// The store: a brain's root, `medulla` or `team`.
    pub store: String,
    /// Claims agents wrote that no person has looked at, in all (after the act).
    pub unreviewed: usize,
    /// `list`: one page of them, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<Unreviewed>,
    /// `list`: where the next page starts, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// `list`: when the store was last tended (ms since the epoch; absent: never).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tended_at: Option<i64>,
    /// `list`: claims that disagree (never joined): keep one, edit or retire the other.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disagreements: Vec<Disagreement>,
    /// `list`: claims aged out and unused, proposed for retirement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retire: Vec<Stale>,
    /// `list`: the joins the last tending made or proposed, each with its undo.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joins: Vec<Join>,
    /// Every op but `list`: what was done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done: Option<Reviewed>,
}

impl Answer for ReviewAnswer {
    fn wrote(&self) -> bool {
        self.done.is_some()
    }
}

/// The person acting: the caller's `human:` identity, else the founder's.
pub fn person(input: &RouteInput) -> String {
    input
        .agent
        .as_deref()
        .filter(|a| brains::store::review::by_person(a))
        .unwrap_or(super::FOUNDER_AGENT)
        .to_string()
}

fn tier_of(store: &StoreId) -> StoreTier {
    match store {
        StoreId::Medulla => StoreTier::Medulla,
        StoreId::Team => StoreTier::Team,
        _ => StoreTier::Project,
    }
}

/// The arguments that name the store to a verb called on the person's behalf.
fn aimed(store: &StoreId, name: &str, input: &RouteInput, by: &str) -> (RouteInput, &'static str) {
    let mut i = RouteInput {
        founder: true,
        agent: Some(by.to_string()),
        session: input.session.clone(),
        ..RouteInput::default()
    };
    let tier = match store {
        StoreId::Medulla => "medulla",
        StoreId::Team => "team",
        _ => {
            i.binding = Some(name.to_string());
            "project"
        }
    };
    (i, tier)
}

fn needs<'a>(v: Option<&'a str>, op: &str, what: &str) -> Result<&'a str> {
    v.map(str::trim).filter(|s| !s.is_empty()).ok_or_else(|| {
        OwnerError::BadInput(format!(
            "review {op} needs {what}: `medulla review {op} SLUG{}`",
            match what {
                "a reason" => " --reason \"why it no longer holds\"",
                "the new text" => " --text \"what holds now\"",
                "the labels to join" => " --with OTHER-SLUG",
                _ => "",
            }
        ))
    })
}

async fn live(svc: &Service, store: &StoreId, slug: &str) -> Result<Claim> {
    let key = brains::claim::slugify(slug);
    svc.owner
        .get(store, &key)
        .await?
        .ok_or_else(|| brains::StoreError::UnknownClaim { slug: key }.into())
}

/// The newest version of `slug` (live, or its last in history).
async fn newest(svc: &Service, store: &StoreId, slug: &str) -> Result<Claim> {
    let key = brains::claim::slugify(slug);
    svc.owner
        .history(store, &key)
        .await?
        .pop()
        .ok_or_else(|| brains::StoreError::UnknownClaim { slug: key }.into())
}

/// Run a verb for the person, on the store `input` aims at (the verb's own checks,
/// the secret floor among them, apply as to any write).
async fn as_person<V: Verb>(
    svc: &Service,
    input: &RouteInput,
    args: serde_json::Value,
) -> Result<V::Answer> {
    let args: V::Args = serde_json::from_value(args)
        .map_err(|e| OwnerError::Internal(format!("review's call of {}: {e}", V::NAME)))?;
    let routed = svc.route(input).await?;
    let progress = crate::service::progress::Progress::none();
    let cx = Cx {
        svc,
        routed: &routed,
        input,
        progress: &progress,
    };
    V::run(cx, args).await
}

pub struct Review;

impl Verb for Review {
    const NAME: &'static str = "review";
    const DESCRIPTION: &'static str = "A person's review of what agents wrote (not an agent's: refused). `list` (default): the claims of a store no person has looked at, newest first, with provenance (agent, session, checkout, evidence) and near-duplicates, and what tending left for a person (disagreements, claims proposed for retirement, joins with their undo). `keep SLUG` marks it reviewed (`verify`: raised to verified); `retire SLUG reason` retires it; `edit SLUG text` supersedes it with the person's text (the secret floor applies); `merge SLUG with [...]` joins near-duplicates into it. Each a recorded act by a `human:` identity.";
    const EFFECT: Effect = Effect::Write;
    const ROUTED: bool = false;
    const ALSO: &'static [&'static str] = &["POST /api/review"];
    type Args = ReviewArgs;
    type Answer = ReviewAnswer;

    async fn run(cx: Cx<'_>, a: ReviewArgs) -> Result<ReviewAnswer> {
        let svc = cx.svc;
        svc.founder_only(
            cx.input,
            "reviewing what agents wrote (a person's act: `medulla review` or the Hall's review page)",
        )?;
        let by = person(cx.input);
        let (store, name) = svc.named_store(a.brain.as_deref(), cx.routed)?;
        let op = a.op.unwrap_or_default();
        let tier = tier_of(&store);
        let now = svc.now();
        let slug = a.slug.as_deref();
        let done = match op {
            ReviewOp::List => return list(svc, &store, &name, &a).await,
            ReviewOp::Keep => {
                let slug = needs(slug, "keep", "a claim")?;
                let c = live(svc, &store, slug).await?;
                if a.verify.unwrap_or(false) && c.strength < Strength::Verified {
                    // A person's version at `verified`: written by a person, so reviewed.
                    let (input, t) = aimed(&store, &name, cx.input, &by);
                    let args = json!({"label": c.label, "text": c.text, "strength": "verified",
                        "evidence": c.evidence, "tier": t, "agent_id": by});
                    as_person::<super::memorize::Memorize>(svc, &input, args).await?;
                    Reviewed {
                        act: "memorize".into(),
                        by: by.clone(),
                        claim: Row::of(&live(svc, &store, &c.slug).await?, tier, now, None),
                        joined: Vec::new(),
                    }
                } else {
                    let op = crate::brain::Tending::Review {
                        slug: c.slug.clone(),
                    };
                    let kept = svc.owner.tend_write(&store, op, &by).await?;
                    Reviewed {
                        act: "review".into(),
                        by: by.clone(),
                        claim: Row::of(kept.first().unwrap_or(&c), tier, now, None),
                        joined: Vec::new(),
                    }
                }
            }
            ReviewOp::Retire => {
                let slug = needs(slug, "retire", "a claim")?;
                let reason = needs(a.reason.as_deref(), "retire", "a reason")?;
                let c = live(svc, &store, slug).await?;
                let (input, t) = aimed(&store, &name, cx.input, &by);
                let args = json!({"slug": c.slug, "reason": reason, "tier": t, "agent_id": by});
                as_person::<super::retire::Retire>(svc, &input, args).await?;
                Reviewed {
                    act: "retire".into(),
                    by: by.clone(),
                    claim: Row::of(&newest(svc, &store, &c.slug).await?, tier, now, None),
                    joined: Vec::new(),
                }
            }
            ReviewOp::Edit => {
                let slug = needs(slug, "edit", "a claim")?;
                let text = needs(a.text.as_deref(), "edit", "the new text")?;
                let c = live(svc, &store, slug).await?;
                let (input, t) = aimed(&store, &name, cx.input, &by);
                let args = json!({"label": c.label, "text": text, "strength": c.strength,
                    "evidence": c.evidence, "tier": t, "agent_id": by});
                as_person::<super::memorize::Memorize>(svc, &input, args).await?;
                Reviewed {
                    act: "memorize".into(),
                    by: by.clone(),
                    claim: Row::of(&live(svc, &store, &c.slug).await?, tier, now, None),
                    joined: Vec::new(),
                }
            }
            ReviewOp::Merge => {
                let slug = needs(slug, "merge", "a claim")?;
                let with: Vec<String> = a
                    .with
                    .iter()
                    .flatten()
                    .map(|s| brains::claim::slugify(s))
                    .filter(|s| !s.is_empty())
                    .collect();
                if with.is_empty() {
                    needs(None, "merge", "the labels to join")?;
                }
                let c = live(svc, &store, slug).await?;
                for w in &with {
                    live(svc, &store, w).await?;
                }
                let op = crate::brain::Tending::Consolidate {
                    survivor: c.slug.clone(),
                    joined: with.clone(),
                };
                svc.owner.tend_write(&store, op, &by).await?;
                // The person chose what survives: it is reviewed.
                let op = crate::brain::Tending::Review {
                    slug: c.slug.clone(),
                };
                let kept = svc.owner.tend_write(&store, op, &by).await?;
                Reviewed {
                    act: "consolidate".into(),
                    by: by.clone(),
                    claim: Row::of(kept.first().unwrap_or(&c), tier, now, None),
                    joined: with,
                }
            }
        };
        let unreviewed = svc.owner.read(&store, |s| s.unreviewed_count()).await?;
        Ok(ReviewAnswer {
            op,
            store: name,
            unreviewed,
            claims: Vec::new(),
            next_offset: None,
            tended_at: None,
            disagreements: Vec::new(),
            retire: Vec::new(),
            joins: Vec::new(),
            done: Some(done),
        })
    }
}

/// One page of the unreviewed, and what tending left.
async fn list(svc: &Service, store: &StoreId, name: &str, a: &ReviewArgs) -> Result<ReviewAnswer> {
    let offset = a.offset.unwrap_or(0);
    let limit = a.limit.unwrap_or(20).clamp(1, 200);
    let (total, page) = svc
        .owner
        .read(store, move |s| s.unreviewed(offset, limit))
        .await?;
    let tier = tier_of(store);
    let now = svc.now();
    let mut claims = Vec::with_capacity(page.len());
    for c in page {
        let near = crate::service::similar::near(
            svc,
            &c.label,
            &c.text,
            &c.slug,
            &[(store.clone(), tier)],
        )
        .await;
        claims.push(Unreviewed {
            claim: Row::of(&c, tier, now, None),
            written_from: c.written_from.clone(),
            session: c.session.clone(),
            near,
        });
    }
    let report = svc.tending(store);
    // What a person settled since the pass (retired, edited) is no longer asked.
    let live: std::collections::HashSet<String> = svc
        .owner
        .read(store, |s| Ok(s.live_births()))
        .await?
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    let end = offset + claims.len();
    Ok(ReviewAnswer {
        op: ReviewOp::List,
        store: name.to_string(),
        unreviewed: total,
        claims,
        next_offset: (end < total).then_some(end),
        tended_at: (report.at > 0).then_some(report.at),
        disagreements: report
            .disagreements
            .into_iter()
            .filter(|d| live.contains(&d.a.slug) && live.contains(&d.b.slug))
            .collect(),
        retire: report
            .retire
            .into_iter()
            .filter(|r| live.contains(&r.claim.slug))
            .collect(),
        joins: report.joins,
        done: None,
    })
}
