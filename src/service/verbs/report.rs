//! `report` (append a letter to the spool, then file it) and `inbox_sweep` (every letter
//! once, with fates).

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{OwnerError, Result};
use crate::mailbox::{self, letter, Filed, Sweep};
use crate::service::verb::{Answer, Cx, Effect, Verb};

/// Largest letter accepted into the spool, in bytes (as one JSON line).
pub const MAX_LETTER_BYTES: usize = 64 * 1024;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportArgs {
    /// The letter: a JSON object with the usual fields ts, agent, class, kind, repo, brain,
    /// tool, what, expected, snippet, answers[]. `ts` and `agent` are filled in when absent.
    pub letter: Map<String, Value>,
}

/// Where the letter went: a box, pending, refused at the floor, or still in the spool
/// (with why, when the distributor could not be asked).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Filing {
    Filed(Filed),
    Spool {
        /// Always `spool`.
        to: Cow<'static, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReportAnswer {
    /// The first 12 hex characters of the sha256 of the raw line.
    pub id: String,
    pub appended: bool,
    pub filed: Filing,
}

impl Answer for ReportAnswer {}

pub struct Report;

impl Verb for Report {
    const NAME: &'static str = "report";
    const DESCRIPTION: &'static str = "File a field report: append a letter to the spool (never rewritten); the distributor files it into its project's box, the medulla box if projectless, or keeps it pending.";
    const EFFECT: Effect = Effect::Write;
    const ALSO: &'static [&'static str] = &["POST /api/reports"];
    const BODY_IS: Option<&'static str> = Some("letter");
    type Args = ReportArgs;
    type Answer = ReportAnswer;

    async fn run(cx: Cx<'_>, a: ReportArgs) -> Result<ReportAnswer> {
        let svc = cx.svc;
        let mut body = Value::Object(a.letter);
        letter::validate(&body).map_err(OwnerError::BadInput)?;
        let len = body.to_string().len();
        if len > MAX_LETTER_BYTES {
            return Err(OwnerError::TooLong {
                what: "a letter",
                len,
                max: MAX_LETTER_BYTES,
            });
        }
        if body.get("ts").is_none() {
            body["ts"] = Value::from(svc.now_ms());
        }
        if body.get("agent").is_none() {
            if let Some(agent) = &cx.input.agent {
                body["agent"] = Value::from(agent.clone());
            }
        }
        let home = svc.owner.config.home.clone();
        let spool = home.join(mailbox::SPOOL);
        let line = tokio::task::spawn_blocking(move || mailbox::append_to_spool(&home, &body))
            .await
            .map_err(|e| OwnerError::Internal(e.to_string()))?
            .map_err(|e| OwnerError::spool(&spool, e))?;
        let id = letter::letter_id(line.as_bytes());
        // Filing is best-effort here: the letter is safe in the spool either way. The
        // watcher may have filed it already; either way the view knows where it went.
        let filed = match svc.owner.distribute().await {
            Ok(_) => match svc.owner.registry.mailbox_view.destination(&id) {
                Some(f) => Filing::Filed(f),
                None => Filing::Spool {
                    to: "spool".into(),
                    note: None,
                },
            },
            Err(e) => Filing::Spool {
                to: "spool".into(),
                note: Some(e.to_string()),
            },
        };
        Ok(ReportAnswer {
            id,
            appended: true,
            filed,
        })
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepArgs {}

impl Answer for Sweep {}

pub struct InboxSweep;

impl Verb for InboxSweep {
    const ROUTED: bool = false;
    const NAME: &'static str = "inbox_sweep";
    const DESCRIPTION: &'static str = "Every letter once: the spool plus every known box, with derived fates (wet_ink, in_flight, fired_clay, external) and the boxes that could not be reached.";
    const EFFECT: Effect = Effect::Read;
    const IDEMPOTENT: bool = true;
    const ALSO: &'static [&'static str] = &["GET /api/mailbox/sweep"];
    type Args = SweepArgs;
    type Answer = Sweep;

    async fn run(cx: Cx<'_>, _: SweepArgs) -> Result<Sweep> {
        cx.svc.sweep().await
    }
}
