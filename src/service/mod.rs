//! The service: every verb and REST read over the owner, typed from edge to edge. MCP,
//! REST and the CLI all come through here, so a verb behaves the same on every surface.
//!
//! - [`registry`]: the one list of verbs; dispatch, `tools/list` and the protocol table.
//! - [`verbs`]: one concern per file.
//! - [`route`]: which brain serves a request.
//! - [`rows`]: claims as the rows every answer carries.
//! - [`mailbox`]: one box's letters and `doctor`.
//! - [`callers`]: the callers refused (another OS user, no client token), for `doctor`.
//! - [`resources`], [`prompts`], [`watch`]: memory as MCP resources and prompts, and
//!   which of a session's resources changed.
//! - [`schema`]: tool schemas with the formats JSON Schema defines and no others.
//!
//! Architecture invariant: the service answers typed values and typed errors; it knows
//! nothing of HTTP, headers or JSON-RPC.

pub mod anchor_watch;
pub mod anchors;
pub mod backup;
pub mod callers;
pub mod checkout;
pub mod drift;
pub mod health;
pub mod hints;
pub mod imported;
pub mod life;
pub mod mailbox;
pub mod model;
pub mod nudges;
pub mod progress;
pub mod prompts;
pub mod provenance;
pub mod query;
pub mod registry;
pub mod resources;
pub mod route;
pub mod route_view;
pub mod rows;
pub mod schema;
pub mod similar;
pub mod tending;
pub mod usage;
pub mod verb;
pub mod verbs;
pub mod watch;

use std::borrow::Cow;
use std::sync::Arc;

use brains::{Clock, Retrieval};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{OwnerError, Result};
use crate::owner::{BrainCounters, OwnerHandle};
use crate::roster::Manifest;
use crate::store_id::{Fingerprint, StoreId};
pub use registry::ToolOutput;
pub use route::{RouteInput, Routed};
use rows::{Now, Row, StoreTier};

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
    /// File hashes of anchored evidence, cached by (size, mtime, inode).
    pub anchors: Arc<anchors::AnchorCache>,
    /// The one backup gate: never two backups at once.
    pub backups: Arc<backup::Backups>,
    /// Which build runs, since when, and who keeps it running.
    pub life: Arc<life::Life>,
    /// Callers refused since the owner started (counted by the HTTP layer).
    pub refusals: Arc<callers::Refusals>,
    /// What the prompt and file hooks showed each client session (SPEC §5).
    pub hints: Arc<hints::ledger::Ledger>,
}

/// Who records a checkout when the caller names no agent of its own.
pub const ROUTER_AGENT: &str = "medulla:router";

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

/// `GET /api/health`: owner-wide, and captioned so.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Health {
    pub status: Cow<'static, str>,
    /// The package version and the commit it was built from (`0.1.0+1a2b3c4d5e6f`).
    pub version: Cow<'static, str>,
    pub pid: u32,
    /// When this owner started, ms since the epoch.
    pub started_at: i64,
    /// Who started it, and so who starts it again: `person`, `client` (autostart),
    /// `systemd`, `launchd`.
    pub keeper: life::Keeper,
    /// The binary it runs from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exe: Option<String>,
    /// That file was rebuilt or replaced since the owner started: `medulla restart`
    /// runs the new one.
    #[serde(default)]
    pub binary_changed: bool,
    pub home: String,
    pub retrieval: Retrieval,
    pub model_note: Option<String>,
    pub brains_registered: usize,
    pub brains_warm: usize,
    pub caption: Cow<'static, str>,
}

/// `GET /api/claims?brain=&offset=&limit=`: one page of a store's live claims, newest
/// first.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ClaimsView {
    pub served_brain: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<Fingerprint>,
    /// Live claims in the store.
    pub total: usize,
    pub claims: Vec<Row>,
    /// Pass as `offset` for the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// Most claims on one page of `GET /api/claims`.
pub const MAX_CLAIMS_PAGE: usize = 5000;

impl Service {
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The time and aging thresholds rows are rendered with.
    pub fn now(&self) -> Now {
        Now {
            aging: self.owner.opts.aging,
            ms: self.now_ms(),
        }
    }

    /// Which brain serves a request; what it taught about that brain's repository (a
    /// checkout new to it, its identity) is recorded before it is served.
    pub async fn route(&self, input: &RouteInput) -> Result<Routed> {
        let routed = route::route(&self.owner.registry, &self.owner.config, input).await?;
        if let Some(learned) = routed.learned.clone() {
            let actor = input
                .agent
                .as_deref()
                .filter(|a| brains::claim::validate_agent_id(a).is_ok())
                .unwrap_or(ROUTER_AGENT);
            if let Err(e) = self.owner.record_learned(learned, actor).await {
                tracing::warn!(error = %e, "what routing learned of a brain's repository could not be recorded; it is learned again next time");
            }
        }
        Ok(routed)
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

    pub fn counters(&self, fp: &Fingerprint) -> Arc<BrainCounters> {
        self.owner.registry.counters(&StoreId::brain(fp))
    }

    /// The agent acted on a claim (graded, superseded, retired it): counted as a hint
    /// used when a hint had added it to a live session.
    pub fn hint_used(&self, brain: Option<&Fingerprint>, slug: &str) {
        if let Some(fp) = brain {
            // Graded, superseded or retired: used now (tending reads it).
            self.counters(fp).used([slug]);
        }
        let n = self.hints.used(brain, slug);
        if let (Some(fp), true) = (brain, n > 0) {
            self.counters(fp).hints_used(n);
        }
    }

    /// A session's first routed call landed on this brain.
    pub fn session_started(&self, fp: &Fingerprint) {
        self.counters(fp).session();
    }

    /// Call a verb by name with its arguments (JSON, or a REST query string).
    pub async fn call_tool(
        &self,
        name: &str,
        args: impl Into<registry::Arguments>,
        input: &RouteInput,
    ) -> Result<ToolOutput> {
        registry::dispatch(self, name, args.into(), input, progress::Progress::none()).await
    }

    /// The same, reporting a long verb's progress to `progress`.
    pub async fn call_tool_with_progress(
        &self,
        name: &str,
        args: impl Into<registry::Arguments>,
        input: &RouteInput,
        progress: progress::Progress,
    ) -> Result<ToolOutput> {
        registry::dispatch(self, name, args.into(), input, progress).await
    }

    pub fn health(&self) -> Health {
        Health {
            status: "ok".into(),
            version: life::VERSION.into(),
            pid: std::process::id(),
            started_at: self.life.started_at_ms,
            keeper: self.life.keeper,
            exe: self.life.exe.as_ref().map(|e| e.display().to_string()),
            binary_changed: self.life.binary_changed(),
            home: self.owner.config.home.to_string_lossy().into_owned(),
            retrieval: self.retrieval,
            model_note: self.model_note.clone(),
            brains_registered: self.owner.registry.all_manifests().len(),
            brains_warm: self.owner.registry.warm_count(),
            caption: "owner-wide numbers".into(),
        }
    }

    /// One page of a store's live claims, newest first, for a caller routed to it or
    /// the founder; the medulla's for anyone.
    pub async fn claims(
        &self,
        brain: &str,
        offset: usize,
        limit: Option<usize>,
        input: &RouteInput,
    ) -> Result<ClaimsView> {
        let limit = check_limit(limit, MAX_CLAIMS_PAGE, MAX_CLAIMS_PAGE)?;
        let routed = self.route(input).await?;
        let (fp, served, tier) = if brain == "medulla" {
            (None, StoreId::Medulla.to_string(), StoreTier::Medulla)
        } else if brain == "team" && self.owner.registry.team_store().is_some() {
            (None, StoreId::Team.to_string(), StoreTier::Team)
        } else {
            let m = route::find_brain(&self.owner.registry, brain).ok_or_else(|| {
                OwnerError::UnknownBrain {
                    name: brain.to_string(),
                }
            })?;
            self.authorize_brain(&routed, input, &m, "read the claims of")?;
            (Some(m.fingerprint), m.root, StoreTier::Project)
        };
        let store = match (&fp, tier) {
            (Some(fp), _) => StoreId::brain(fp),
            (None, StoreTier::Team) => StoreId::Team,
            (None, _) => StoreId::Medulla,
        };
        let mut claims = self.owner.live_claims(&store).await?;
        claims.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.slug.cmp(&b.slug)));
        let total = claims.len();
        let page: Vec<_> = claims.into_iter().skip(offset).take(limit).collect();
        let end = offset + page.len();
        let mut rows = Row::all(&page, tier, self.now());
        if tier == StoreTier::Medulla {
            provenance::mark_superseded(self, &routed, input, &mut rows).await?;
            drift::mark(self, &routed, input, &mut rows).await;
        } else if tier == StoreTier::Team {
            drift::mark(self, &routed, input, &mut rows).await;
        } else {
            // Authorized above: the caller is routed to this brain, or is the founder.
            drift::mark_brain(
                self,
                &served,
                routed
                    .checkout
                    .as_deref()
                    .filter(|_| routed.brain.as_ref().is_some_and(|b| b.root == served)),
                &mut rows,
            )
            .await;
        }
        Ok(ClaimsView {
            served_brain: served,
            fingerprint: fp,
            total,
            claims: rows,
            next_offset: (end < total).then_some(end),
        })
    }

    /// The union of the spool and every known box.
    pub async fn sweep(&self) -> Result<crate::mailbox::Sweep> {
        let home = self.owner.config.home.clone();
        let roots = self.owner.registry.roots();
        tokio::task::spawn_blocking(move || crate::mailbox::sweep::sweep(&home, &roots))
            .await
            .map_err(|e| OwnerError::Internal(e.to_string()))
    }
}
