//! The service: every tool (MCP verb) and REST read, over the owner. MCP, REST and the
//! CLI all come through here, so a verb behaves the same on every surface.

pub mod mailbox;
pub mod north;
pub mod promote;
pub mod render;
pub mod route;
pub mod tools;
pub mod transfer;

use std::sync::Arc;

use brains::{Clock, Retrieval};
use serde_json::{json, Value};

use crate::error::{OwnerError, Result};
use crate::owner::{BrainCounters, OwnerHandle};
use crate::roster::Manifest;
pub use route::{RouteInput, Routed, Via};

/// The owner as request handlers see it.
#[derive(Clone)]
pub struct Service {
    pub owner: OwnerHandle,
    /// `Hybrid` when an embedding model is loaded, else `Lexical`.
    pub retrieval: Retrieval,
    /// Why there is no model, when there is none.
    pub model_note: Option<String>,
    pub clock: Arc<dyn Clock>,
    /// The owner's founder token (`$MEDULLA_HOME/founder.token`).
    pub founder_token: Arc<String>,
}

/// Longest accepted query or task, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;

/// A query or task within bounds.
pub fn check_query(what: &'static str, q: &str) -> Result<()> {
    if q.len() > MAX_QUERY_BYTES {
        return Err(OwnerError::TooLong {
            what,
            len: q.len(),
            max: MAX_QUERY_BYTES,
        });
    }
    brains::claim::check_text(what, q)?;
    Ok(())
}

/// A `limit` argument: absent = the default; 0 or past the maximum is an error, never a
/// silent clamp.
pub fn check_limit(limit: Option<usize>, default: usize, max: usize) -> Result<usize> {
    match limit {
        None => Ok(default),
        Some(l) if (1..=max).contains(&l) => Ok(l),
        Some(l) => Err(OwnerError::LimitOutOfRange { limit: l, max }),
    }
}

/// The answer of one tool call: its JSON and the brain it landed on (for stickiness).
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub value: Value,
    pub landed: Option<String>,
}

impl Service {
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    pub fn route(&self, input: &RouteInput) -> Result<Routed> {
        route::route(&self.owner.registry, &self.owner.config, input)
    }

    /// Does a presented token prove the founder?
    pub fn is_founder(&self, presented: Option<&str>) -> bool {
        presented.is_some_and(|p| crate::founder::matches(&self.founder_token, p))
    }

    /// A verb that names a brain may act on it only for a caller routed to that brain,
    /// or for the founder: naming another project's brain must never become a way to
    /// read or write its memory.
    pub fn authorize_brain(
        &self,
        routed: &Routed,
        input: &RouteInput,
        brain: &Manifest,
        verb: &'static str,
    ) -> Result<()> {
        if input.founder
            || routed.brain.as_ref().map(|b| &b.fingerprint) == Some(&brain.fingerprint)
        {
            return Ok(());
        }
        Err(OwnerError::NotYourBrain {
            brain: brain.root.clone(),
            routed: routed
                .brain
                .as_ref()
                .map(|b| b.root.clone())
                .unwrap_or_else(|| "no brain".into()),
            verb,
        })
    }

    /// Verbs that only the founder surface may use.
    pub fn founder_only(&self, input: &RouteInput, what: &str) -> Result<()> {
        if input.founder {
            Ok(())
        } else {
            Err(OwnerError::FounderOnly {
                what: what.to_string(),
            })
        }
    }

    pub fn counters(&self, fp: &str) -> Arc<BrainCounters> {
        self.owner.registry.counters(fp)
    }

    /// Call a tool by name with JSON arguments.
    pub async fn call_tool(
        &self,
        name: &str,
        args: Value,
        input: &RouteInput,
    ) -> Result<ToolOutput> {
        let args = if args.is_null() { json!({}) } else { args };
        tools::dispatch(self, name, args, input).await
    }

    /// `GET /api/health`.
    pub fn health(&self) -> Value {
        json!({
            "status": "ok",
            "version": env!("CARGO_PKG_VERSION"),
            "pid": std::process::id(),
            "home": self.owner.config.home.to_string_lossy(),
            "retrieval": self.retrieval.as_str(),
            "model_note": self.model_note,
            "brains_registered": self.owner.registry.all_manifests().len(),
            "brains_warm": self.owner.registry.warm.read().expect("registry lock").len(),
            "caption": "owner-wide numbers",
        })
    }

    /// One brain's row: per-brain numbers only.
    pub async fn instance_row(&self, m: &Manifest) -> Value {
        let warm = self.owner.registry.is_warm(&m.fingerprint);
        let c = self.counters(&m.fingerprint);
        let (claims, history, acts, counts_from) = if warm {
            match self.owner.ask(Some(&m.fingerprint), brain_stats).await {
                Ok(s) => (
                    s.live_claims,
                    s.history_versions,
                    s.acts,
                    "live".to_string(),
                ),
                Err(_) => (
                    m.counts.live_claims,
                    m.counts.history_versions,
                    m.counts.acts,
                    "manifest".into(),
                ),
            }
        } else {
            (
                m.counts.live_claims,
                m.counts.history_versions,
                m.counts.acts,
                "manifest".into(),
            )
        };
        json!({
            "root": m.root,
            "fingerprint": m.fingerprint,
            "created": m.created,
            "warm": warm,
            "claims": claims,
            "history_versions": history,
            "acts": acts,
            "counts_from": counts_from,
            "counts_as_of": if warm { None } else { Some(m.counts.as_of) },
            "sessions": BrainCounters::get(&c.sessions),
            "recalls": BrainCounters::get(&c.recalls),
            "writes": BrainCounters::get(&c.writes),
            "memory_beats_served": BrainCounters::get(&c.beats),
            "mailbox_open_count": self.owner.registry.mailbox_view.open_by_repo.read().expect("mailbox view lock").get(&m.root).copied().unwrap_or(0),
        })
    }

    /// `GET /api/instances`: every brain on disk, warm or dormant, plus unreadable ones.
    pub async fn instances(&self) -> Result<Value> {
        let entries = self.owner.rescan().await?;
        let mut rows = Vec::new();
        for e in &entries {
            match &e.manifest {
                Some(m) => rows.push(self.instance_row(m).await),
                None => rows.push(json!({
                    "fingerprint": e.fingerprint(),
                    "dir": e.dir.to_string_lossy(),
                    "problem": e.problem,
                })),
            }
        }
        let medulla = self.owner.ask(None, brain_stats).await?;
        Ok(json!({
            "instances": rows,
            "medulla": { "claims": medulla.live_claims, "history_versions": medulla.history_versions, "acts": medulla.acts },
            "retrieval": self.retrieval.as_str(),
        }))
    }

    /// `GET /api/claims?brain=`: the live claims of one brain (or `medulla`), for a
    /// caller routed to that brain or the founder.
    pub async fn claims(&self, brain: &str, input: &RouteInput) -> Result<Value> {
        let now = self.now_ms();
        let aging = self.owner.opts.aging;
        if brain == "medulla" {
            let claims = self.owner.ask(None, brains_live).await?;
            let rows: Vec<Value> = claims
                .iter()
                .map(|c| render::row(c, render::Tier::Medulla, &aging, now, None))
                .collect();
            return Ok(json!({ "served_brain": "medulla", "claims": rows }));
        }
        let m = route::find_brain(&self.owner.registry, brain).ok_or_else(|| {
            OwnerError::UnknownBrain {
                name: brain.to_string(),
            }
        })?;
        self.authorize_brain(&self.route(input)?, input, &m, "read the claims of")?;
        let claims = self.owner.ask(Some(&m.fingerprint), brains_live).await?;
        let mut rows: Vec<Value> = claims
            .iter()
            .map(|c| render::row(c, render::Tier::Project, &aging, now, None))
            .collect();
        rows.sort_by(|a, b| b["created"].as_i64().cmp(&a["created"].as_i64()));
        Ok(json!({ "served_brain": m.root, "fingerprint": m.fingerprint, "claims": rows }))
    }
}

pub(crate) fn brain_stats(
    r: ractor::RpcReplyPort<std::result::Result<brains::StoreStats, brains::StoreError>>,
) -> crate::brain::BrainMsg {
    crate::brain::BrainMsg::Stats(r)
}

pub(crate) fn brains_live(
    r: ractor::RpcReplyPort<std::result::Result<Vec<brains::Claim>, brains::StoreError>>,
) -> crate::brain::BrainMsg {
    crate::brain::BrainMsg::LiveClaims(r)
}
