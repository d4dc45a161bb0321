//! The tool registry: every verb declared once — its name, argument type, answer type,
//! description, effect (read, write, destructive) and REST routes. MCP `tools/list`,
//! dispatch (MCP and REST alike), and the verb table of docs/PROTOCOL.md all derive
//! from this one list; a test fails when the document and the list disagree.

use std::sync::{Arc, LazyLock};

use brains::Retrieval;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::progress::Progress;
use super::route::Reception;
use super::verb::{Answer, Cx, Effect, Verb};
use super::verbs;
use super::{RouteInput, Service};
use crate::error::{OwnerError, Result};
use crate::events::EventKind;
use crate::store_id::Fingerprint;

/// Every tool answer carries how it was ranked, and, when routing had something to say
/// or a brain served it, `reception` and `served_brain`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Envelope<T> {
    #[serde(flatten)]
    pub body: T,
    pub retrieval: Retrieval,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reception: Option<Reception>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_brain: Option<String>,
    /// When a team is joined: connected or offline (since when), and what waits to be
    /// sent. Never says shared for what is only queued.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<crate::team::status::TeamNote>,
}

/// A verb as published. Built once per process (see [`specs`]); the schemas are shared,
/// never rebuilt per `tools/list`.
#[derive(Debug, Clone)]
pub struct Spec {
    pub name: &'static str,
    pub description: &'static str,
    pub effect: Effect,
    pub idempotent: bool,
    pub also: &'static [&'static str],
    /// A `POST` alias's body is this one argument (see [`Verb::BODY_IS`]).
    pub body_is: Option<&'static str>,
    pub input_schema: Arc<Map<String, Value>>,
    pub output_schema: Arc<Map<String, Value>>,
}

fn input_schema<T: JsonSchema>() -> Map<String, Value> {
    super::schema::publish(schemars::schema_for!(T))
}

fn output_schema<T: JsonSchema>() -> Map<String, Value> {
    let gen = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    super::schema::publish(gen.into_root_schema_for::<T>())
}

impl Spec {
    fn of<V: Verb>() -> Spec {
        Spec {
            name: V::NAME,
            description: V::DESCRIPTION,
            effect: V::EFFECT,
            idempotent: V::IDEMPOTENT,
            also: V::ALSO,
            body_is: V::BODY_IS,
            input_schema: Arc::new(input_schema::<V::Args>()),
            output_schema: Arc::new(output_schema::<Envelope<V::Answer>>()),
        }
    }
}

/// A call's arguments in the form they arrived, deserialized once, straight into the
/// verb's own type: a JSON object (MCP, a REST body) or a form-encoded query string (a
/// REST `GET`, its percent-escapes decoded by the deserializer, numbers and booleans read
/// as the type's fields say).
#[derive(Debug, Clone)]
pub enum Arguments {
    Json(Value),
    Query(String),
}

impl From<Value> for Arguments {
    fn from(v: Value) -> Self {
        Arguments::Json(v)
    }
}

impl Arguments {
    fn parse<T: serde::de::DeserializeOwned>(self) -> std::result::Result<T, String> {
        match self {
            // No arguments at all is an empty object.
            Arguments::Json(Value::Null) => {
                serde_json::from_value(Value::Object(Map::new())).map_err(|e| e.to_string())
            }
            Arguments::Json(v) => serde_json::from_value(v).map_err(|e| e.to_string()),
            Arguments::Query(q) => serde_urlencoded::from_str(&q).map_err(|e| e.to_string()),
        }
    }
}

/// The answer of one tool call: its JSON and the brain it landed on (for stickiness).
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub value: Value,
    pub landed: Option<Fingerprint>,
}

/// A verb's answer as JSON, and whether it changed state (a read of a verb that may
/// write, `boot_memory list` say, did not).
async fn call<V: Verb>(cx: Cx<'_>, args: Arguments) -> Result<(Value, bool)> {
    let args: V::Args = args.parse().map_err(|e| {
        OwnerError::BadInput(format!(
            "bad arguments for {}: {e}; see the tool's input schema in tools/list",
            V::NAME
        ))
    })?;
    let body = V::run(cx, args).await?;
    let wrote = V::EFFECT != Effect::Read && body.wrote();
    let team = team_note(cx, wrote).await;
    let envelope = Envelope {
        team,
        retrieval: body.retrieval().unwrap_or(cx.svc.retrieval),
        reception: cx.routed.reception.clone().filter(|_| V::ROUTED),
        served_brain: cx
            .routed
            .brain
            .as_ref()
            .filter(|_| V::ROUTED)
            .map(|b| b.root.clone()),
        body,
    };
    serde_json::to_value(&envelope)
        .map(|v| (v, wrote))
        .map_err(|e| OwnerError::Internal(e.to_string()))
}

/// The team part of an answer. After a write, what waits in the outboxes it may have
/// queued into (the team medulla's, the routed brain's) is counted now, and the sync
/// actor is asked for a pass.
async fn team_note(cx: Cx<'_>, wrote: bool) -> Option<crate::team::status::TeamNote> {
    let registry = &cx.svc.owner.registry;
    let status = registry.team_status()?;
    let mut note = status.note();
    if wrote {
        registry.kick_sync();
        let mut ids = vec![crate::store_id::StoreId::Team];
        if let Some(b) = &cx.routed.brain {
            if registry.is_warm(&b.fingerprint) {
                ids.push(crate::store_id::StoreId::brain(&b.fingerprint));
            }
        }
        let mut queued = 0;
        for id in ids {
            if let Ok((q, _)) = cx.svc.owner.read(&id, |s| s.outbox_len()).await {
                queued += q;
            }
        }
        note.queued = note.queued.max(queued);
        note.shared = note.shared && note.queued == 0;
    }
    Some(note)
}

macro_rules! registry {
    ($($v:ty),* $(,)?) => {
        /// Every tool the owner serves, in the order `tools/list` shows them, with its
        /// schemas: derived from the types on first use, then shared.
        pub fn specs() -> &'static [Spec] {
            static SPECS: LazyLock<Vec<Spec>> = LazyLock::new(|| vec![$(Spec::of::<$v>()),*]);
            &SPECS
        }

        async fn dispatch_named(name: &str, cx: Cx<'_>, args: Arguments) -> Result<(Value, bool)> {
            $(if name == <$v as Verb>::NAME {
                return call::<$v>(cx, args).await;
            })*
            Err(OwnerError::UnknownTool(name.to_string()))
        }

        /// Is there a verb of this name?
        pub fn exists(name: &str) -> bool {
            [$(<$v as Verb>::NAME),*].contains(&name)
        }
    };
}

registry! {
    verbs::bootstrap::Bootstrap,
    verbs::instances::Brains,
    verbs::merge::BrainsMerge,
    verbs::split::BrainsSplit,
    verbs::memorize::Memorize,
    verbs::seek::Seek,
    verbs::history::History,
    verbs::boot_memory::BootMemory,
    verbs::beat::North,
    verbs::delegate::Delegate,
    verbs::debrief::Debrief,
    verbs::promote::Promote,
    verbs::audit_log::Audit,
    verbs::acts::Acts,
    verbs::report::Report,
    verbs::report::InboxSweep,
    verbs::import::Import,
    verbs::export::Export,
    verbs::backup::Backup,
    verbs::purge::Purge,
    verbs::learn::Learn,
    verbs::retire::Retire,
    verbs::review::Review,
    verbs::tend::Tend,
    verbs::team::TeamStatus,
    verbs::team::TeamShare,
    verbs::team_link::TeamJoin,
    verbs::team_link::TeamLeave,
}

/// Route a call and run it: the one entry of MCP and REST.
pub async fn dispatch(
    svc: &Service,
    name: &str,
    args: Arguments,
    input: &RouteInput,
    progress: Progress,
) -> Result<ToolOutput> {
    let routed = svc.route(input).await?;
    let cx = Cx {
        svc,
        routed: &routed,
        input,
        progress: &progress,
    };
    let (value, wrote) = dispatch_named(name, cx, args).await?;
    // Only a call that changed state is announced (live views, resource watches).
    if wrote {
        let store = routed.brain.as_ref().map(|m| m.root.clone());
        svc.owner
            .registry
            .events
            .publish(svc.now_ms(), EventKind::Act, Some(name), store);
    }
    // `bootstrap` never rebinds a session: what it created is not where the call landed.
    Ok(ToolOutput {
        value,
        landed: routed.brain.as_ref().map(|m| m.fingerprint.clone()),
    })
}

/// The verb table of docs/PROTOCOL.md, as the registry says it must read.
#[cfg(test)]
fn protocol_table() -> String {
    let mut s = String::from("| verb | effect | REST | what it does |\n|---|---|---|---|\n");
    for v in specs() {
        let mut rest = vec![format!("`POST /api/call/{}`", v.name)];
        rest.extend(v.also.iter().map(|a| format!("`{a}`")));
        s.push_str(&format!(
            "| `{}` | {}{} | {} | {} |\n",
            v.name,
            v.effect.as_str(),
            if v.idempotent { ", idempotent" } else { "" },
            rest.join(", "),
            v.description
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEGIN: &str = "<!-- verbs:begin (generated from the registry; a test checks it) -->\n";
    const END: &str = "<!-- verbs:end -->";

    /// docs/PROTOCOL.md's verb table is the registry's: a verb added, renamed or
    /// re-described in one place and not the other fails here, printing the table to paste.
    #[test]
    fn protocol_md_lists_exactly_the_registry() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/PROTOCOL.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let start = doc
            .find(BEGIN)
            .expect("PROTOCOL.md has the verbs:begin marker")
            + BEGIN.len();
        let end = doc.find(END).expect("PROTOCOL.md has the verbs:end marker");
        let want = protocol_table();
        assert!(
            doc[start..end] == want,
            "docs/PROTOCOL.md's verb table is out of step with the registry; replace it with:\n{want}"
        );
    }

    /// A REST query string reaches the verb as its own typed arguments: decoded once,
    /// numbers read as numbers, and what the verb does not take refused.
    #[test]
    fn a_query_string_deserializes_straight_into_the_verbs_arguments() {
        use crate::service::verbs::acts::ActsArgs;
        let q = |s: &str| Arguments::Query(s.into()).parse::<ActsArgs>();
        let a = q("brain=%2Fhome%2Fa%20b&limit=5&before=12").unwrap();
        assert_eq!(a.brain.as_deref(), Some("/home/a b"));
        assert_eq!((a.limit, a.before), (Some(5), Some(12)));
        // `+` is a space and `%2B` a plus, each decoded exactly once.
        let a = q("brain=a+b%2Bc%2520").unwrap();
        assert_eq!(a.brain.as_deref(), Some("a b+c%20"));
        assert!(q("limit=ten").unwrap_err().contains("invalid digit"));
        assert!(q("limt=5").unwrap_err().contains("unknown field"));
        assert_eq!(q("").unwrap().limit, None);
    }

    /// `tools/list` publishes the specs built once: asking twice hands out the same
    /// schemas, not new copies derived again.
    #[test]
    fn schemas_are_built_once() {
        let a = &specs()[0];
        let b = &specs()[0];
        assert!(Arc::ptr_eq(&a.input_schema, &b.input_schema));
        assert!(Arc::ptr_eq(&a.output_schema, &b.output_schema));
    }

    #[test]
    fn every_verb_has_object_schemas_and_a_unique_name() {
        let specs = specs();
        let mut names: Vec<_> = specs.iter().map(|s| s.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), specs.len());
        for s in specs {
            assert_eq!(s.input_schema["type"], "object", "{}", s.name);
            assert!(s.output_schema.contains_key("$schema"), "{}", s.name);
            assert!(exists(s.name));
        }
        assert!(!exists("nope"));
    }

    /// Regression (issue 22, part 5): the TypeScript SDK printed 194 warnings such as
    /// `unknown format "uint64" ignored in schema at path "#/$defs/InstanceRow/properties/acts"`
    /// on every tools/list. Every tool's input and output schema must pass a strict 2020-12
    /// validator: valid against the meta-schema, standard keywords and formats only.
    #[test]
    fn every_tool_schema_passes_a_strict_validator() {
        let mut bad = Vec::new();
        for s in specs() {
            crate::service::schema::tests::check(
                &format!("{} input", s.name),
                &s.input_schema,
                &mut bad,
            );
            crate::service::schema::tests::check(
                &format!("{} output", s.name),
                &s.output_schema,
                &mut bad,
            );
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
}
