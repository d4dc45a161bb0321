//! `brains` (and `GET /api/instances`): every brain on disk, warm or dormant, with its
//! own numbers only (INV-7), unreadable ones with their problem.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::brain::Fault;
use crate::error::Result;
use crate::roster::{Manifest, RepoBinding};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::service::Service;
use crate::store_id::{Fingerprint, StoreId};

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrainsArgs {}

/// One brain's row: per-brain numbers only.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct InstanceRow {
    pub root: String,
    pub fingerprint: Fingerprint,
    pub created: i64,
    pub warm: bool,
    pub claims: u64,
    pub history_versions: u64,
    pub acts: u64,
    /// `live` (asked of the warm brain) or `manifest` (as of its last unload).
    pub counts_from: Cow<'static, str>,
    pub counts_as_of: Option<i64>,
    pub sessions: u64,
    pub recalls: u64,
    pub writes: u64,
    pub memory_beats_served: u64,
    pub mailbox_open_count: usize,
    /// Live claims agents wrote that no person has looked at (`medulla review`).
    #[serde(default)]
    pub unreviewed: u64,
    /// The store's fault while it lasts: quarantined (`damaged`), `disk_full` or `io`,
    /// with the fix (`medulla doctor` lists it too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// The repository the brain belongs to (SPEC §3), once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<RepoBinding>,
    /// Every checkout it has served: the one it was bootstrapped in first, then
    /// worktrees, clones and the places it was moved to.
    #[serde(default)]
    pub checkouts: Vec<CheckoutRow>,
    /// A checkout's brain of its own (`bootstrap --own`): reached only through its root.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own: bool,
}

/// One checkout a brain has served.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CheckoutRow {
    /// The brain's root as it stands in that checkout.
    pub path: String,
    /// The checkout the brain was bootstrapped in (its root).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bootstrapped: bool,
    /// When it first asked, for a checkout other than the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_seen: Option<i64>,
    /// False when the directory no longer exists (moved away, or a worktree removed).
    pub exists: bool,
}

/// A brain's checkouts as rows, its root first; each looked up on disk now.
pub fn checkout_rows(m: &Manifest) -> Vec<CheckoutRow> {
    let root = CheckoutRow {
        path: m.root.clone(),
        bootstrapped: true,
        first_seen: None,
        exists: std::path::Path::new(&m.root).is_dir(),
    };
    std::iter::once(root)
        .chain(m.checkouts.iter().map(|c| CheckoutRow {
            path: c.path.clone(),
            bootstrapped: false,
            first_seen: Some(c.first_seen),
            exists: std::path::Path::new(&c.path).is_dir(),
        }))
        .collect()
}

/// A brain directory whose manifest could not be read: listed, never hidden.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct UnreadableRow {
    pub fingerprint: Fingerprint,
    pub dir: String,
    pub problem: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Instance {
    Brain(Box<InstanceRow>),
    Unreadable(UnreadableRow),
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MedullaCounts {
    /// Zero, with `fault` saying why, while the medulla cannot be read.
    pub claims: u64,
    pub history_versions: u64,
    pub acts: u64,
    /// Live claims agents wrote that no person has looked at.
    #[serde(default)]
    pub unreviewed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Instances {
    pub instances: Vec<Instance>,
    pub medulla: MedullaCounts,
}

impl Answer for Instances {}

pub struct Brains;

impl Verb for Brains {
    const ROUTED: bool = false;
    const NAME: &'static str = "brains";
    const DESCRIPTION: &'static str =
        "List every brain on disk, warm or dormant, with its manifest and per-brain counts.";
    const EFFECT: Effect = Effect::Read;
    const IDEMPOTENT: bool = true;
    const ALSO: &'static [&'static str] = &["GET /api/instances"];
    type Args = BrainsArgs;
    type Answer = Instances;

    async fn run(cx: Cx<'_>, _: BrainsArgs) -> Result<Instances> {
        instances(cx.svc).await
    }
}

/// One brain's row.
pub async fn instance_row(svc: &Service, m: &Manifest) -> InstanceRow {
    let warm = svc.owner.registry.is_warm(&m.fingerprint);
    let c = svc.counters(&m.fingerprint);
    // Read in place: listing brains never keeps one warm.
    let live = if warm {
        svc.owner
            .read_warm(&m.fingerprint, |s| {
                Ok((s.stats()?, s.unreviewed_count()? as u64))
            })
            .await
    } else {
        None
    };
    let (claims, history_versions, acts, unreviewed) = match &live {
        Some((s, unreviewed)) => (s.live_claims, s.history_versions, s.acts, *unreviewed),
        None => (
            m.counts.live_claims,
            m.counts.history_versions,
            m.counts.acts,
            m.counts.unreviewed,
        ),
    };
    InstanceRow {
        root: m.root.clone(),
        fingerprint: m.fingerprint.clone(),
        created: m.created,
        warm,
        claims,
        history_versions,
        acts,
        counts_from: if live.is_some() { "live" } else { "manifest" }.into(),
        counts_as_of: (!warm).then_some(m.counts.as_of),
        sessions: c.sessions(),
        recalls: c.recalls(),
        writes: c.writes(),
        memory_beats_served: c.beats(),
        mailbox_open_count: svc.owner.registry.mailbox_view.open_count(&m.root),
        unreviewed,
        fault: svc.owner.fault(&StoreId::brain(&m.fingerprint)),
        repository: m.repo.clone(),
        checkouts: checkout_rows(m),
        own: m.own,
    }
}

/// A brain's unreviewed claims: asked of it when warm, else as of its last unload.
pub async fn unreviewed(svc: &Service, m: &Manifest) -> u64 {
    svc.owner
        .read_warm(&m.fingerprint, |s| Ok(s.unreviewed_count()? as u64))
        .await
        .unwrap_or(m.counts.unreviewed)
}

/// Every brain on disk, warm or dormant, plus unreadable ones.
pub async fn instances(svc: &Service) -> Result<Instances> {
    let entries = svc.owner.rescan().await?;
    let mut rows = Vec::new();
    for e in &entries {
        match &e.manifest {
            Some(m) => rows.push(Instance::Brain(Box::new(instance_row(svc, m).await))),
            None => rows.push(Instance::Unreadable(UnreadableRow {
                fingerprint: e.fingerprint(),
                dir: e.dir.to_string_lossy().into_owned(),
                problem: e.problem.clone(),
            })),
        }
    }
    // A medulla that cannot be read (quarantined, a full disk) is said so, and every
    // brain is still listed.
    let medulla = svc
        .owner
        .read(&StoreId::Medulla, |s| {
            Ok((s.stats()?, s.unreviewed_count()? as u64))
        })
        .await;
    let fault = svc.owner.fault(&StoreId::Medulla);
    let medulla = match medulla {
        Ok((s, unreviewed)) => MedullaCounts {
            claims: s.live_claims,
            history_versions: s.history_versions,
            acts: s.acts,
            unreviewed,
            fault,
        },
        Err(e) if fault.is_some() => {
            tracing::debug!(error = %e, "medulla counts unavailable");
            MedullaCounts {
                claims: 0,
                history_versions: 0,
                acts: 0,
                unreviewed: 0,
                fault,
            }
        }
        Err(e) => return Err(e),
    };
    Ok(Instances {
        instances: rows,
        medulla,
    })
}
