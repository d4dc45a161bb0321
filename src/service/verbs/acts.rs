//! `acts`: one store's act log, newest first, paged — every change of state, who did it,
//! when, and the content hashes before and after (INV-2). A project brain's log is for a
//! caller routed to it or the founder; the medulla's is anyone's.

use brains::ActKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::write_target;
use crate::error::{OwnerError, Result};
use crate::service::check_limit;
use crate::service::route::find_brain;
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ActsArgs {
    /// A brain's root or fingerprint, or `medulla`. Defaults to the routed brain.
    #[arg(
        long,
        value_name = "ROOT|medulla",
        help = "The store: a brain's root or fingerprint, or `medulla` [default: this brain]"
    )]
    pub brain: Option<String>,
    /// Only acts older than this sequence number (the `next_before` of the previous page).
    #[arg(
        long,
        value_name = "SEQ",
        help = "Only acts older than this sequence number (the previous page's hint)"
    )]
    pub before: Option<u64>,
    /// Most acts on the page (default 50, from 1 to 500).
    #[arg(long, help = "Acts per page, 1 to 500 [default: 50]")]
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ActRow {
    pub seq: u64,
    pub kind: ActKind,
    /// The claim slug or boot-memory key acted on (`purged:<hash>` after a purge).
    pub subject: String,
    pub actor: String,
    pub at: i64,
    pub before_hash: Option<String>,
    pub after_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ActsPage {
    /// The store's root, or `medulla`.
    pub store: String,
    pub acts: Vec<ActRow>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_before: Option<u64>,
}

impl Answer for ActsPage {}

pub struct Acts;

impl Verb for Acts {
    const NAME: &'static str = "acts";
    const DESCRIPTION: &'static str = "A store's act log, newest first, paged: every change of state with who, when and the content hashes before and after. Defaults to this brain; brain: medulla (or team, when a team is joined) for theirs.";
    const EFFECT: Effect = Effect::Read;
    const IDEMPOTENT: bool = true;
    const ALSO: &'static [&'static str] = &["GET /api/acts"];
    type Args = ActsArgs;
    type Answer = ActsPage;

    async fn run(cx: Cx<'_>, a: ActsArgs) -> Result<ActsPage> {
        let svc = cx.svc;
        let limit = check_limit(a.limit, 50, 500)?;
        let (id, store) = match a.brain.as_deref() {
            Some("medulla") => (StoreId::Medulla, StoreId::Medulla.to_string()),
            Some("team") if svc.owner.registry.team_store().is_some() => {
                (StoreId::Team, StoreId::Team.to_string())
            }
            Some(b) => {
                let m =
                    find_brain(&svc.owner.registry, b).ok_or_else(|| OwnerError::UnknownBrain {
                        name: b.to_string(),
                    })?;
                svc.authorize_brain(cx.routed, cx.input, &m, "read the act log of")?;
                (StoreId::Brain(m.fingerprint), m.root)
            }
            None => {
                let m = write_target(cx.routed)?;
                (StoreId::brain(&m.fingerprint), m.root.clone())
            }
        };
        let before = a.before.unwrap_or(u64::MAX);
        // One more than asked tells whether an older page exists.
        let mut acts = svc.owner.acts_before(&id, before, limit + 1).await?;
        let more = acts.len() > limit;
        acts.truncate(limit);
        Ok(ActsPage {
            store,
            next_before: more.then(|| acts.last().map(|a| a.seq)).flatten(),
            acts: acts
                .into_iter()
                .map(|a| ActRow {
                    seq: a.seq,
                    kind: a.kind,
                    subject: a.subject,
                    actor: a.actor,
                    at: a.at,
                    before_hash: a.before_hash,
                    after_hash: a.after_hash,
                    note: a.note,
                })
                .collect(),
        })
    }
}
