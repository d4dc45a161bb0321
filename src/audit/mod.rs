//! The audit actor: the only path that writes the medulla. Promotions, doctrine births,
//! medulla-side `learn` verdicts (demotion included), legacy imports and purges pass
//! through it one at a time, so two brains promoting the same label at once end in one
//! version and one bounce. It runs the hygiene floor over every field and replies with
//! typed outcomes; rendering them is the service's business.
//!
//! Who may promote is etiquette, audited and not enforced: only `*:orchestrator` and
//! `human:founder` are expected to, and anyone else's promotion lands but is flagged in
//! the answer and in the act log. Agent ids are self-declared, so this is not a security
//! boundary and does not claim to be one. (Who may *ask* for a promotion at all — a
//! caller routed to the claim's brain, or the founder — is checked before the message is
//! sent.)
//!
//! Architecture invariant: it reaches stores through the narrow [`Stores`] handle, never
//! through the owner itself.

use std::sync::Arc;

use brains::claim::validate_agent_id;
use brains::{ActKind, Claim, MemorizeInput, MemorizeOutcome, PurgeReport, StoreError, Verdict};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use crate::brain::stores::{ask, read, Stores};
use crate::brain::BrainMsg;
use crate::error::{OwnerError, Result};
use crate::floor;
use crate::store_id::StoreId;

/// True when the agent is expected to write the medulla.
pub fn etiquette_ok(agent: &str) -> bool {
    agent == "human:founder"
        || agent
            .split_once(':')
            .is_some_and(|(_, role)| role == "orchestrator")
}

/// What a promotion did.
#[derive(Debug, Clone)]
pub struct Promoted {
    /// The medulla copy's write.
    pub outcome: MemorizeOutcome,
    /// The witness after its stamp.
    pub witness: Claim,
    /// `<root>#<slug>`.
    pub origin_claim: String,
    /// `medulla@<slug>@<ms>`.
    pub stamp: String,
    /// The medulla's live claims after the write (for the soft cap).
    pub medulla_live: u64,
}

/// What a medulla `learn` did.
#[derive(Debug, Clone)]
pub enum MedullaLearn {
    Graded(Claim),
    Demoted(Claim),
}

/// Messages to the audit actor. Replies carry the medulla's live count where a write
/// changed it.
pub enum AuditMsg {
    /// One version of a legacy import into the medulla. `outdated_by`: the last version
    /// of a slug whose every file was outdated, moved to history as soon as it is written
    /// (by this importer), so it never lands live.
    Import {
        input: MemorizeInput,
        outdated_by: Option<String>,
        reply: RpcReplyPort<Result<MemorizeOutcome>>,
    },
    /// A promoted witness was superseded in its project: note it on the medulla copy (a
    /// boot-memory marker, a recorded act) when the copy still stands for that witness.
    WitnessSuperseded {
        slug: String,
        witness: String,
        marker: String,
        reply: RpcReplyPort<Result<bool>>,
    },
    /// Set or delete a key of the medulla's boot memory.
    Kv {
        key: String,
        value: Option<String>,
        actor: String,
        reply: RpcReplyPort<Result<u64>>,
    },
    Promote {
        /// The medulla, or the team medulla.
        to: StoreId,
        agent: String,
        /// Where the witness lives: a project brain (its root), or the personal
        /// medulla (`"medulla"`) when promoting to the team.
        from: (StoreId, String),
        slug: String,
        reason: String,
        reply: RpcReplyPort<Result<Promoted>>,
    },
    DoctrineBirth {
        to: StoreId,
        input: MemorizeInput,
        reply: RpcReplyPort<Result<(MemorizeOutcome, u64)>>,
    },
    Learn {
        to: StoreId,
        agent: String,
        slug: String,
        verdict: Verdict,
        note: Option<String>,
        reply: RpcReplyPort<Result<(MedullaLearn, u64)>>,
    },
    /// Take a medulla claim out of recall with a reason (the same rules as a demotion:
    /// the project witness is never touched). Replies with the medulla's live count.
    Retire {
        to: StoreId,
        agent: String,
        slug: String,
        reason: String,
        reply: RpcReplyPort<Result<(Claim, u64)>>,
    },
    /// A write of tending or of a person's review on the medulla or the team medulla
    /// (joins, their undoing, a person's keep): every write of those stores passes here.
    Tend {
        to: StoreId,
        agent: String,
        op: crate::brain::Tending,
        reply: RpcReplyPort<Result<Vec<Claim>>>,
    },
    /// Erase a medulla claim and every version of it (the founder's way out for a secret).
    Purge {
        agent: String,
        slug: String,
        reply: RpcReplyPort<Result<PurgeReport>>,
    },
}

pub struct AuditActor;

pub struct AuditState {
    stores: Arc<dyn Stores>,
}

impl Actor for AuditActor {
    type Msg = AuditMsg;
    type State = AuditState;
    type Arguments = Arc<dyn Stores>;

    async fn pre_start(
        &self,
        _me: ActorRef<AuditMsg>,
        stores: Arc<dyn Stores>,
    ) -> std::result::Result<AuditState, ActorProcessingErr> {
        Ok(AuditState { stores })
    }

    async fn handle(
        &self,
        _me: ActorRef<AuditMsg>,
        msg: AuditMsg,
        st: &mut AuditState,
    ) -> std::result::Result<(), ActorProcessingErr> {
        let s = st.stores.as_ref();
        match msg {
            AuditMsg::Promote {
                to,
                agent,
                from,
                slug,
                reason,
                reply,
            } => {
                let _ = reply.send(promote(s, &to, &agent, &from, &slug, &reason).await);
            }
            AuditMsg::DoctrineBirth { to, input, reply } => {
                let _ = reply.send(doctrine_birth(s, &to, input).await);
            }
            AuditMsg::Import {
                input,
                outdated_by,
                reply,
            } => {
                let _ = reply.send(import(s, input, outdated_by).await);
            }
            AuditMsg::WitnessSuperseded {
                slug,
                witness,
                marker,
                reply,
            } => {
                let _ = reply.send(witness_superseded(s, &slug, &witness, &marker).await);
            }
            AuditMsg::Kv {
                key,
                value,
                actor,
                reply,
            } => {
                let _ = reply.send(kv(s, key, value, actor).await);
            }
            AuditMsg::Learn {
                to,
                agent,
                slug,
                verdict,
                note,
                reply,
            } => {
                let _ = reply.send(learn(s, &to, &agent, &slug, verdict, note).await);
            }
            AuditMsg::Retire {
                to,
                agent,
                slug,
                reason,
                reply,
            } => {
                let _ = reply.send(retire(s, &to, &agent, &slug, &reason).await);
            }
            AuditMsg::Tend {
                to,
                agent,
                op,
                reply,
            } => {
                let r = match validate_agent_id(&agent) {
                    Ok(()) => {
                        ask(s, &to, |r| BrainMsg::Tend {
                            op,
                            actor: agent,
                            reply: r,
                        })
                        .await
                    }
                    Err(e) => Err(e.into()),
                };
                let _ = reply.send(r);
            }
            AuditMsg::Purge { agent, slug, reply } => {
                let r = ask(s, &M, |r| BrainMsg::Purge {
                    slug,
                    actor: agent,
                    reply: r,
                })
                .await;
                let _ = reply.send(r);
            }
        }
        Ok(())
    }
}

/// The store this actor writes.
const M: StoreId = StoreId::Medulla;

/// Read a claim by slug.
fn get(
    slug: &str,
) -> impl Fn(&brains::Store) -> std::result::Result<Option<Claim>, StoreError> + Clone + Send + 'static
{
    let slug = slug.to_string();
    move |st| st.get(&slug)
}

/// Read a boot-memory value.
fn kv_get(
    key: String,
) -> impl Fn(&brains::Store) -> std::result::Result<Option<String>, StoreError> + Clone + Send + 'static
{
    move |st| st.kv_get(&key)
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

async fn import(
    s: &dyn Stores,
    input: MemorizeInput,
    outdated_by: Option<String>,
) -> Result<MemorizeOutcome> {
    hygiene_floor(&input)?;
    let slug = brains::slugify(&input.label);
    let outcome = ask(s, &M, |r| BrainMsg::Memorize(Box::new(input), r)).await?;
    if let Some(actor) = outdated_by {
        ask(s, &M, |r| BrainMsg::Demote {
            slug: slug.clone(),
            actor: actor.clone(),
            reason: "imported as outdated".into(),
            reply: r,
        })
        .await?;
    }
    Ok(outcome)
}

/// The medulla's boot memory: shared, so its values meet the shared floor. Replies with
/// the medulla's live claim count, like every medulla write.
async fn kv(s: &dyn Stores, key: String, value: Option<String>, actor: String) -> Result<u64> {
    validate_agent_id(&actor)?;
    match value {
        Some(v) => {
            floor::refuse(
                [("key", key.as_str()), ("value", v.as_str())],
                floor::FIX_SHARED,
            )?;
            ask(s, &M, |r| BrainMsg::KvSet {
                key: key.clone(),
                value: v.clone(),
                actor: actor.clone(),
                reply: r,
            })
            .await?
        }
        None => {
            ask(s, &M, |r| BrainMsg::KvDelete {
                key: key.clone(),
                actor: actor.clone(),
                reply: r,
            })
            .await?
        }
    }
    medulla_live(s).await
}

/// The boot-memory key of a copy's superseded-witness marker (see the service's
/// `provenance` module, which reads it).
fn marker_key(slug: &str) -> String {
    format!("witness_superseded:{slug}")
}

async fn witness_superseded(
    s: &dyn Stores,
    slug: &str,
    witness: &str,
    marker: &str,
) -> Result<bool> {
    let copy = read(s, &M, get(slug)).await?;
    if copy.and_then(|c| c.origin_claim).as_deref() != Some(witness) {
        return Ok(false);
    }
    ask(s, &M, |r| BrainMsg::KvSet {
        key: marker_key(slug),
        value: marker.to_string(),
        actor: "medulla:audit".into(),
        reply: r,
    })
    .await?;
    Ok(true)
}

/// A re-promotion or a demotion resolves a superseded witness: the marker goes.
async fn clear_marker(s: &dyn Stores, slug: &str, actor: &str) -> Result<()> {
    if read(s, &M, kv_get(marker_key(slug))).await?.is_some() {
        ask(s, &M, |r| BrainMsg::KvDelete {
            key: marker_key(slug),
            actor: actor.to_string(),
            reply: r,
        })
        .await?;
    }
    Ok(())
}

async fn medulla_live(s: &dyn Stores) -> Result<u64> {
    live(s, &M).await
}

async fn live(s: &dyn Stores, to: &StoreId) -> Result<u64> {
    Ok(read(s, to, |st| st.stats()).await?.live_claims)
}

/// The witness's stamp prefix for a target: `medulla` or `team`.
fn tier_name(to: &StoreId) -> &'static str {
    match to {
        StoreId::Team => "team",
        _ => "medulla",
    }
}

async fn promote(
    s: &dyn Stores,
    to: &StoreId,
    agent: &str,
    from: &(StoreId, String),
    slug: &str,
    reason: &str,
) -> Result<Promoted> {
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
    if from.0 == *to {
        return Err(OwnerError::BadInput(
            "a claim cannot be promoted into the store it lives in".into(),
        ));
    }
    let (witness_store, root) = (from.0.clone(), from.1.as_str());
    let witness: Claim =
        read(s, &witness_store, get(slug))
            .await?
            .ok_or_else(|| StoreError::UnknownClaim {
                slug: slug.to_string(),
            })?;
    let origin_claim = format!("{root}#{}", witness.slug);
    let input = MemorizeInput {
        label: witness.label.clone(),
        text: witness.text.clone(),
        source_agent: witness.source_agent.clone(),
        strength: witness.strength,
        evidence: witness.evidence.clone(),
        origin_brain: Some(root.to_string()),
        origin_claim: Some(origin_claim.clone()),
        promoted_by: Some(agent.to_string()),
        promotion_reason: Some(reason.to_string()),
        origin_created: Some(witness.created),
        origin_agent: Some(witness.source_agent.clone()),
        created: None,
        act: Some(ActKind::Promote),
        // The copy's anchors are the witness's: only the witness's brain can check them.
        anchors: witness.anchors.clone(),
        written_from: witness.written_from.clone(),
        session: witness.session.clone(),
        acted_by: None,
    };
    hygiene_floor(&input)?;
    // Two origins racing for one label: the first lands, the second bounces unless it
    // is strictly stronger. Serialised here, so there is never a torn medulla.
    if let Some(live) = read(s, to, get(&witness.slug)).await? {
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
    let outcome = ask(s, to, |r| BrainMsg::Memorize(Box::new(input), r)).await?;
    if *to == M {
        clear_marker(s, &witness.slug, agent).await?;
    }
    let copy = outcome.claim().clone();
    let stamp = format!("{}@{}@{}", tier_name(to), copy.slug, copy.created);
    let witness = if witness.promoted_to.as_deref() == Some(stamp.as_str()) {
        witness
    } else {
        ask(s, &witness_store, |r| BrainMsg::StampPromoted {
            slug: witness.slug.clone(),
            stamp: stamp.clone(),
            actor: agent.to_string(),
            reply: r,
        })
        .await?
    };
    Ok(Promoted {
        outcome,
        witness,
        origin_claim,
        stamp,
        medulla_live: live(s, to).await?,
    })
}

async fn doctrine_birth(
    s: &dyn Stores,
    to: &StoreId,
    mut input: MemorizeInput,
) -> Result<(MemorizeOutcome, u64)> {
    hygiene_floor(&input)?;
    input.origin_brain = Some(tier_name(to).into());
    input.act = Some(ActKind::DoctrineBirth);
    let outcome = ask(s, to, |r| BrainMsg::Memorize(Box::new(input), r)).await?;
    Ok((outcome, live(s, to).await?))
}

async fn retire(
    s: &dyn Stores,
    to: &StoreId,
    agent: &str,
    slug: &str,
    reason: &str,
) -> Result<(Claim, u64)> {
    validate_agent_id(agent)?;
    floor::refuse([("reason", reason)], floor::FIX_SHARED)?;
    let retired = ask(s, to, |r| BrainMsg::Retire {
        slug: slug.to_string(),
        actor: agent.to_string(),
        reason: reason.to_string(),
        reply: r,
    })
    .await?;
    if *to == M {
        clear_marker(s, slug, agent).await?;
    }
    Ok((retired, live(s, to).await?))
}

async fn learn(
    s: &dyn Stores,
    to: &StoreId,
    agent: &str,
    slug: &str,
    verdict: Verdict,
    note: Option<String>,
) -> Result<(MedullaLearn, u64)> {
    validate_agent_id(agent)?;
    let done = if verdict == Verdict::Wrong {
        // Demotion: the medulla version goes to history; the project witness is not touched.
        let reason = note.unwrap_or_else(|| "judged wrong".into());
        let demoted = ask(s, to, |r| BrainMsg::Demote {
            slug: slug.to_string(),
            actor: agent.to_string(),
            reason: reason.clone(),
            reply: r,
        })
        .await?;
        if *to == M {
            clear_marker(s, slug, agent).await?;
        }
        MedullaLearn::Demoted(demoted)
    } else {
        MedullaLearn::Graded(
            ask(s, to, |r| BrainMsg::Learn {
                slug: slug.to_string(),
                verdict,
                actor: agent.to_string(),
                note: note.clone(),
                reply: r,
            })
            .await?,
        )
    };
    Ok((done, live(s, to).await?))
}
