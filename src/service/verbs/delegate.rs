//! `delegate`: the packet a parent hands a child: the brain binding (the header the child
//! must send), a labelled memory slice for the task (this brain and the medulla, never
//! another brain), its sources, and the etiquette line; as JSON and as text.

use std::borrow::Cow;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::beat::{beat_limit, compose, Exists};
use super::seek::shown;
use super::{write_target, ErrorBody};
use crate::error::Result;
use crate::service::check_query;
use crate::service::rows::Row;
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::Fingerprint;

/// The line every packet carries.
pub const ETIQUETTE: &str =
    "makers propose, orchestrators promote: memorize findings into this project; only an orchestrator or the founder promotes a claim to the medulla";

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct DelegateArgs {
    /// The child's task.
    #[arg(skip)]
    pub task: String,
    /// The child's agent id (`vendor:role`), recorded in the packet.
    #[arg(long, help = "The subagent's agent id (vendor:role)")]
    pub child_agent: Option<String>,
    /// Most rows per tier (default 8, from 1 to 50).
    #[arg(long, help = "How many memory rows")]
    pub limit: Option<usize>,
    /// Rows with their full provenance; without it rows are compact.
    #[serde(default)]
    #[arg(skip)]
    pub detail: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Binding {
    pub root: String,
    pub fingerprint: Fingerprint,
    /// The exact header the child sends on every call.
    pub header: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Sources {
    /// `<root>@<git HEAD sha or unknown>`.
    pub project: String,
    pub fingerprint: Fingerprint,
    /// `<n> claims`, or why the count is unknown.
    pub medulla: String,
    pub composed_ts: i64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Packet {
    pub task: String,
    pub child_agent: Option<String>,
    pub binding: Binding,
    pub memory: Vec<Row>,
    /// When nothing matched the task over stores that hold claims: their most recent
    /// claims, each marked `matched_task: false`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent_unmatched: Vec<Row>,
    pub memory_exists: Exists,
    pub note: String,
    pub sources: Sources,
    pub etiquette: Cow<'static, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medulla_error: Option<ErrorBody>,
    /// The same packet as a block to paste into the child's brief.
    pub text: String,
}

impl Answer for Packet {}

pub struct Delegate;

impl Verb for Delegate {
    const NAME: &'static str = "delegate";
    const DESCRIPTION: &'static str = "Compose a delegation packet for a subagent: the brain binding (the header the child must send), a labelled memory slice for the task, sources, and the etiquette line; as JSON and as text.";
    const EFFECT: Effect = Effect::Read;
    const IDEMPOTENT: bool = true;
    type Args = DelegateArgs;
    type Answer = Packet;

    async fn run(cx: Cx<'_>, a: DelegateArgs) -> Result<Packet> {
        let svc = cx.svc;
        let brain = write_target(cx.routed)?.clone();
        if let Some(c) = &a.child_agent {
            brains::claim::validate_agent_id(c)?;
        }
        check_query("task", &a.task)?;
        let mut beat = compose(
            svc,
            Some(&brain),
            &a.task,
            beat_limit(a.limit)?,
            Default::default(),
        )
        .await?;
        beat.settle(cx).await?;
        let head = crate::git::head(Path::new(&brain.root)).unwrap_or_else(|| "unknown".into());
        let note = beat.note();
        let mut memory = shown(beat.project, a.detail);
        memory.extend(shown(beat.medulla, a.detail));
        let mut packet = Packet {
            task: a.task,
            child_agent: a.child_agent,
            binding: Binding {
                header: format!("Medulla-Brain: {}", brain.root),
                root: brain.root.clone(),
                fingerprint: brain.fingerprint.clone(),
            },
            memory,
            recent_unmatched: shown(beat.recent, a.detail),
            memory_exists: beat.exists,
            note,
            sources: Sources {
                project: format!("{}@{head}", brain.root),
                fingerprint: brain.fingerprint.clone(),
                medulla: match beat.exists.medulla {
                    Some(n) => format!("{n} claims"),
                    None => "unknown (the medulla failed)".into(),
                },
                composed_ts: svc.now_ms(),
            },
            etiquette: ETIQUETTE.into(),
            medulla_error: beat.medulla_error,
            text: String::new(),
        };
        packet.text = render_text(&packet);
        Ok(packet)
    }
}

/// The packet as a block to paste into a child's brief: the task, who the child is,
/// how it stays bound to this brain (the header, or `MEDULLA_BRAIN` for the stdio
/// bridge), what memory says, and how to hand findings back.
fn render_text(p: &Packet) -> String {
    let mut s = String::new();
    s.push_str("## medulla delegation packet\n");
    s.push_str(&format!("task: {}\n", p.task));
    if let Some(c) = &p.child_agent {
        s.push_str(&format!("you are: {c}\n"));
    }
    s.push_str(&format!(
        "binding: send the header `{}` on every medulla call (over the stdio bridge: set MEDULLA_BRAIN={})\n",
        p.binding.header, p.binding.root
    ));
    s.push_str(&format!(
        "sources: project {} (fp {}), medulla {}, composed {}\n",
        p.sources.project,
        p.sources.fingerprint,
        p.sources.medulla,
        crate::service::rows::date(p.sources.composed_ts)
    ));
    s.push_str("memory:\n");
    let line = |s: &mut String, r: &Row, tag: &str| {
        s.push_str(&format!(
            "- [{}{tag}] {} ({}): {} ({}, by {}, {} days old{})\n",
            r.tier.as_str(),
            r.label,
            r.slug,
            r.text,
            r.origin_brain,
            r.source_agent,
            r.age_ms / 86_400_000,
            if r.stale { ", stale" } else { "" },
        ));
    };
    if p.memory.is_empty() {
        s.push_str(&format!("- (none matched the task; {})\n", p.note));
    }
    for r in &p.memory {
        line(&mut s, r, "");
    }
    for r in &p.recent_unmatched {
        line(&mut s, r, ", not matched");
    }
    s.push_str(&format!(
        "when done: call debrief {{\"findings\": [{{\"label\": \"...\", \"text\": \"...\"}}]{}}} with the binding header, so your findings land in this brain\n",
        p.child_agent
            .as_ref()
            .map(|c| format!(", \"agent_id\": \"{c}\""))
            .unwrap_or_default()
    ));
    s.push_str(&format!("etiquette: {ETIQUETTE}\n"));
    s
}
