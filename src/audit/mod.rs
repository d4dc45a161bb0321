//! The audit actor: the only path that writes the medulla. Promotions, doctrine births
//! and medulla-side `learn` verdicts (demotion included) pass through it one at a time,
//! so two brains promoting the same label at once end in one version and one bounce.
//!
//! Who may promote is etiquette, audited and not enforced: only `*:orchestrator` and
//! `human:founder` are expected to, and anyone else's promotion lands but is flagged in
//! the answer and in the act log. Agent ids are self-declared, so this is not a security
//! boundary and does not claim to be one.

use brains::claim::validate_agent_id;
use brains::{ActKind, Claim, MemorizeInput, MemorizeOutcome, StoreError, Verdict};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde_json::{json, Value};

use crate::brain::BrainMsg;
use crate::error::{OwnerError, Result};
use crate::floor;
use crate::owner::OwnerHandle;
use crate::roster::Manifest;
use crate::service::render::{row, Tier};

/// The medulla's soft cap on live claims, and the count from which it warns.
pub const SOFT_CAP: u64 = 200;
pub const WARN_FROM: u64 = 300;

/// True when the agent is expected to write the medulla.
pub fn etiquette_ok(agent: &str) -> bool {
    agent == "human:founder"
        || agent
            .split_once(':')
            .is_some_and(|(_, role)| role == "orchestrator")
}

fn etiquette_json(agent: &str) -> Value {
    if etiquette_ok(agent) {
        json!({ "expected": true })
    } else {
        json!({
            "expected": false,
            "flag": "etiquette_breach",
            "message": format!("{agent} is not an orchestrator or the founder: the write landed and is flagged in the audit log (etiquette is audited, not enforced)"),
        })
    }
}

/// Messages to the audit actor.
pub enum AuditMsg {
    /// One version of a legacy import into the medulla.
    Import {
        input: MemorizeInput,
        reply: RpcReplyPort<Result<MemorizeOutcome>>,
    },
    Promote {
        agent: String,
        brain: Manifest,
        slug: String,
        reason: String,
        reply: RpcReplyPort<Result<Value>>,
    },
    DoctrineBirth {
        input: MemorizeInput,
        reply: RpcReplyPort<Result<Value>>,
    },
    Learn {
        agent: String,
        slug: String,
        verdict: Verdict,
        note: Option<String>,
        reply: RpcReplyPort<Result<Value>>,
    },
    /// Erase a medulla claim and every version of it (the founder's way out for a secret).
    Purge {
        agent: String,
        slug: String,
        reply: RpcReplyPort<Result<brains::PurgeReport>>,
    },
}

pub struct AuditActor;

pub struct AuditState {
    owner: OwnerHandle,
}

impl Actor for AuditActor {
    type Msg = AuditMsg;
    type State = AuditState;
    type Arguments = OwnerHandle;

    async fn pre_start(
        &self,
        _me: ActorRef<AuditMsg>,
        owner: OwnerHandle,
    ) -> std::result::Result<AuditState, ActorProcessingErr> {
        Ok(AuditState { owner })
    }

    async fn handle(
        &self,
        _me: ActorRef<AuditMsg>,
        msg: AuditMsg,
        st: &mut AuditState,
    ) -> std::result::Result<(), ActorProcessingErr> {
        match msg {
            AuditMsg::Promote {
                agent,
                brain,
                slug,
                reason,
                reply,
            } => {
                let _ = reply.send(promote(&st.owner, &agent, &brain, &slug, &reason).await);
            }
            AuditMsg::DoctrineBirth { input, reply } => {
                let _ = reply.send(doctrine_birth(&st.owner, input).await);
            }
            AuditMsg::Purge { agent, slug, reply } => {
                let r = st
                    .owner
                    .ask(None, |r| BrainMsg::Purge {
                        slug: slug.clone(),
                        actor: agent.clone(),
                        reply: r,
                    })
                    .await;
                let _ = reply.send(r);
            }
            AuditMsg::Import { input, reply } => {
                let r = match hygiene_floor(&input) {
                    Ok(()) => {
                        st.owner
                            .ask(None, |r| BrainMsg::Memorize(input.clone(), r))
                            .await
                    }
                    Err(e) => Err(e),
                };
                let _ = reply.send(r);
            }
            AuditMsg::Learn {
                agent,
                slug,
                verdict,
                note,
                reply,
            } => {
                let _ = reply.send(learn(&st.owner, &agent, &slug, verdict, note).await);
            }
        }
        Ok(())
    }
}

/// The hygiene floor over every field that enters the medulla: label, text, evidence and
/// the promotion reason.
fn hygiene_floor(input: &MemorizeInput) -> Result<()> {
    let mut fields = floor::claim_fields(&input.label, &input.text, &input.evidence);
    if let Some(r) = &input.promotion_reason {
        fields.push(("promotion reason", r.as_str()));
    }
    floor::refuse(fields, floor::FIX_SHARED)
}

async fn cap_report(owner: &OwnerHandle) -> Result<Value> {
    let live = owner
        .ask(None, crate::service::brain_stats)
        .await?
        .live_claims;
    let status = if live >= WARN_FROM {
        "warn"
    } else if live > SOFT_CAP {
        "over_soft_cap"
    } else {
        "ok"
    };
    let mut v =
        json!({ "live": live, "soft_cap": SOFT_CAP, "warn_from": WARN_FROM, "status": status });
    if status != "ok" {
        v["message"] = json!(format!(
            "the medulla holds {live} live claims (soft cap {SOFT_CAP}): it is an index, not a warehouse; demote what no longer holds across projects"
        ));
    }
    Ok(v)
}

async fn promote(
    owner: &OwnerHandle,
    agent: &str,
    brain: &Manifest,
    slug: &str,
    reason: &str,
) -> Result<Value> {
    validate_agent_id(agent)?;
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(OwnerError::BadInput(
            "a promotion needs a reason: say in one line why this holds beyond its project".into(),
        ));
    }
    if reason.contains('\n') {
        return Err(OwnerError::BadInput(
            "the promotion reason must be one line".into(),
        ));
    }
    let s = slug.to_string();
    let witness: Claim = owner
        .ask(Some(&brain.fingerprint), |r| BrainMsg::Get(s.clone(), r))
        .await?
        .ok_or_else(|| StoreError::UnknownClaim {
            slug: slug.to_string(),
        })?;
    let origin_claim = format!("{}#{}", brain.root, witness.slug);
    // Two origins racing for one label: the first lands, the second bounces unless it
    // is strictly stronger. Serialised here, so there is never a torn medulla.
    let ws = witness.slug.clone();
    if let Some(live) = owner.ask(None, |r| BrainMsg::Get(ws.clone(), r)).await? {
        let other_origin = live.origin_claim.as_deref() != Some(origin_claim.as_str());
        if other_origin
            && witness.strength == live.strength
            && live.content_hash != witness.content_hash
        {
            return Err(OwnerError::PromotionConflict {
                slug: live.slug.clone(),
                holder: live
                    .origin_claim
                    .clone()
                    .unwrap_or_else(|| live.origin_or_unknown().to_string()),
            });
        }
    }
    let input = MemorizeInput {
        label: witness.label.clone(),
        text: witness.text.clone(),
        source_agent: witness.source_agent.clone(),
        strength: witness.strength,
        evidence: witness.evidence.clone(),
        origin_brain: Some(brain.root.clone()),
        origin_claim: Some(origin_claim.clone()),
        promoted_by: Some(agent.to_string()),
        promotion_reason: Some(reason.to_string()),
        origin_created: Some(witness.created),
        origin_agent: Some(witness.source_agent.clone()),
        created: None,
        act: Some(ActKind::Promote),
    };
    hygiene_floor(&input)?;
    let outcome = owner
        .ask(None, |r| BrainMsg::Memorize(input.clone(), r))
        .await?;
    let copy = outcome.claim().clone();
    let now = owner.opts.clock.now_ms();
    let aging = owner.opts.aging;
    let stamp = format!("medulla@{}@{}", copy.slug, copy.created);
    let witness_after = if witness.promoted_to.as_deref() == Some(stamp.as_str()) {
        witness.clone()
    } else {
        let (s, st, a) = (witness.slug.clone(), stamp.clone(), agent.to_string());
        owner
            .ask(Some(&brain.fingerprint), |r| BrainMsg::StampPromoted {
                slug: s.clone(),
                stamp: st.clone(),
                actor: a.clone(),
                reply: r,
            })
            .await?
    };
    Ok(json!({
        "outcome": outcome_name(&outcome),
        "medulla_claim": row(&copy, Tier::Medulla, &aging, now, None),
        "witness": row(&witness_after, Tier::Project, &aging, now, None),
        "identities": { "medulla": format!("medulla#{}", copy.slug), "witness": origin_claim, "promoted_to": stamp },
        "etiquette": etiquette_json(agent),
        "medulla_cap": cap_report(owner).await?,
    }))
}

fn outcome_name(o: &MemorizeOutcome) -> &'static str {
    match o {
        MemorizeOutcome::Created { .. } => "created",
        MemorizeOutcome::Superseded { .. } => "superseded",
        MemorizeOutcome::Unchanged { .. } => "unchanged",
    }
}

async fn doctrine_birth(owner: &OwnerHandle, mut input: MemorizeInput) -> Result<Value> {
    hygiene_floor(&input)?;
    input.origin_brain = Some("medulla".into());
    input.act = Some(ActKind::DoctrineBirth);
    let agent = input.source_agent.clone();
    let outcome = owner
        .ask(None, |r| BrainMsg::Memorize(input.clone(), r))
        .await?;
    let c = outcome.claim().clone();
    Ok(json!({
        "outcome": outcome_name(&outcome),
        "unchanged": outcome.unchanged(),
        "claim": row(&c, Tier::Medulla, &owner.opts.aging, owner.opts.clock.now_ms(), None),
        "etiquette": etiquette_json(&agent),
        "medulla_cap": cap_report(owner).await?,
    }))
}

async fn learn(
    owner: &OwnerHandle,
    agent: &str,
    slug: &str,
    verdict: Verdict,
    note_text: Option<String>,
) -> Result<Value> {
    validate_agent_id(agent)?;
    let now = owner.opts.clock.now_ms();
    let aging = owner.opts.aging;
    let s = slug.to_string();
    if verdict == Verdict::Wrong {
        // Demotion: the medulla version goes to history; the project witness is not touched.
        let reason = note_text.clone().unwrap_or_else(|| "judged wrong".into());
        let (a, r2) = (agent.to_string(), reason.clone());
        let demoted = owner
            .ask(None, |r| BrainMsg::Demote {
                slug: s.clone(),
                actor: a.clone(),
                reason: r2.clone(),
                reply: r,
            })
            .await?;
        return Ok(json!({
            "verdict": "wrong",
            "demoted": row(&demoted, Tier::Medulla, &aging, now, None),
            "witness_untouched": demoted.origin_claim,
            "etiquette": etiquette_json(agent),
            "medulla_cap": cap_report(owner).await?,
        }));
    }
    let a = agent.to_string();
    let c = owner
        .ask(None, |r| BrainMsg::Learn {
            slug: s.clone(),
            verdict,
            actor: a.clone(),
            note: note_text.clone(),
            reply: r,
        })
        .await?;
    Ok(json!({
        "verdict": verdict.as_str(),
        "claim": row(&c, Tier::Medulla, &aging, now, None),
        "etiquette": etiquette_json(agent),
        "medulla_cap": cap_report(owner).await?,
    }))
}
