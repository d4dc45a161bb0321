//! `boot_memory`: a small key-value store per brain and for the medulla.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::memorize::project_floor;
use super::{agent, write_target, Cap, Etiquette, Tier};
use crate::audit::AuditMsg;
use crate::error::{OwnerError, Result};
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Get,
    Set,
    List,
    Delete,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Get => "get",
            Op::Set => "set",
            Op::List => "list",
            Op::Delete => "delete",
        }
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BootMemoryArgs {
    /// `get`, `set`, `list` or `delete`.
    pub op: Op,
    pub key: Option<String>,
    /// The value, for `set`.
    pub value: Option<String>,
    /// Absent = this brain (reads fall back to the medulla); `project`; `medulla`.
    pub tier: Option<Tier>,
    /// Who writes, for `set` and `delete`. Defaults to the Medulla-Agent header.
    pub agent_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KvTier {
    Project,
    Medulla,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Entry {
    pub key: String,
    pub value: String,
    pub tier: KvTier,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Changed {
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub tier: KvTier,
    pub op: Op,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub etiquette: Option<Etiquette>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medulla_cap: Option<Cap>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Entries {
    pub entries: Vec<Entry>,
}

/// Read back by trying each shape in order: `Changed` first, since a set's answer also
/// has an entry's fields.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum BootMemoryAnswer {
    Changed(Changed),
    List(Entries),
    Value(Entry),
}

impl Answer for BootMemoryAnswer {
    /// `get` and `list` read; only `set` and `delete` change state.
    fn wrote(&self) -> bool {
        matches!(self, BootMemoryAnswer::Changed(_))
    }
}

pub struct BootMemory;

impl Verb for BootMemory {
    const NAME: &'static str = "boot_memory";
    const DESCRIPTION: &'static str =
        "A small key-value store per brain and for the medulla: op get | set | list | delete.";
    const EFFECT: Effect = Effect::Destructive;
    type Args = BootMemoryArgs;
    type Answer = BootMemoryAnswer;

    async fn run(cx: Cx<'_>, a: BootMemoryArgs) -> Result<BootMemoryAnswer> {
        super::no_team_tier(a.tier, "boot_memory")?;
        let svc = cx.svc;
        let key = || -> Result<String> {
            a.key
                .clone()
                .filter(|k| !k.is_empty())
                .ok_or_else(|| OwnerError::BadInput(format!("op {} needs a key", a.op.as_str())))
        };
        let brain_fp = cx.routed.brain.as_ref().map(|m| m.fingerprint.clone());
        match a.op {
            Op::Get => {
                let k = key()?;
                if a.tier != Some(Tier::Medulla) {
                    if let Some(fp) = &brain_fp {
                        if let Some(v) = svc.owner.kv_get(&StoreId::brain(fp), &k).await? {
                            return Ok(BootMemoryAnswer::Value(Entry {
                                key: k,
                                value: v,
                                tier: KvTier::Project,
                            }));
                        }
                    } else if a.tier == Some(Tier::Project) {
                        write_target(cx.routed)?;
                    }
                }
                if a.tier != Some(Tier::Project) {
                    if let Some(v) = svc.owner.kv_get(&StoreId::Medulla, &k).await? {
                        return Ok(BootMemoryAnswer::Value(Entry {
                            key: k,
                            value: v,
                            tier: KvTier::Medulla,
                        }));
                    }
                }
                Err(brains::StoreError::UnknownKey { key: k }.into())
            }
            Op::List => {
                let mut entries = Vec::new();
                if a.tier != Some(Tier::Medulla) {
                    if let Some(fp) = &brain_fp {
                        for (key, value) in svc.owner.kv_list(&StoreId::brain(fp)).await? {
                            entries.push(Entry {
                                key,
                                value,
                                tier: KvTier::Project,
                            });
                        }
                    }
                }
                if a.tier != Some(Tier::Project) {
                    for (key, value) in svc.owner.kv_list(&StoreId::Medulla).await? {
                        entries.push(Entry {
                            key,
                            value,
                            tier: KvTier::Medulla,
                        });
                    }
                }
                Ok(BootMemoryAnswer::List(Entries { entries }))
            }
            Op::Set | Op::Delete if a.tier == Some(Tier::Medulla) => {
                // The medulla is written only through the audit actor.
                let k = key()?;
                brains::claim::check_line("key", &k)?;
                let actor = agent(a.agent_id.clone(), cx.input)?;
                let value = match a.op {
                    Op::Set => {
                        let v = a
                            .value
                            .clone()
                            .ok_or_else(|| OwnerError::BadInput("op set needs a value".into()))?;
                        brains::claim::check_text("value", &v)?;
                        Some(v)
                    }
                    _ => None,
                };
                let live = svc
                    .owner
                    .audit(|reply| AuditMsg::Kv {
                        key: k.clone(),
                        value: value.clone(),
                        actor: actor.clone(),
                        reply,
                    })
                    .await?;
                Ok(BootMemoryAnswer::Changed(Changed {
                    key: k,
                    value,
                    tier: KvTier::Medulla,
                    op: a.op,
                    etiquette: Some(Etiquette::of(&actor)),
                    medulla_cap: Some(Cap::of(live)),
                }))
            }
            Op::Set | Op::Delete => {
                let target = write_target(cx.routed)?.fingerprint.clone();
                let k = key()?;
                brains::claim::check_line("key", &k)?;
                let actor = agent(a.agent_id.clone(), cx.input)?;
                if a.op == Op::Set {
                    let v = a
                        .value
                        .clone()
                        .ok_or_else(|| OwnerError::BadInput("op set needs a value".into()))?;
                    brains::claim::check_text("value", &v)?;
                    project_floor(svc, [("key", k.as_str()), ("value", v.as_str())])?;
                    svc.owner
                        .kv_set(&StoreId::brain(&target), &k, &v, &actor)
                        .await?;
                    Ok(BootMemoryAnswer::Changed(Changed {
                        key: k,
                        value: Some(v),
                        tier: KvTier::Project,
                        op: Op::Set,
                        etiquette: None,
                        medulla_cap: None,
                    }))
                } else {
                    svc.owner
                        .kv_delete(&StoreId::brain(&target), &k, &actor)
                        .await?;
                    Ok(BootMemoryAnswer::Changed(Changed {
                        key: k,
                        value: None,
                        tier: KvTier::Project,
                        op: Op::Delete,
                        etiquette: None,
                        medulla_cap: None,
                    }))
                }
            }
        }
    }
}
