//! Routing: which brain serves a request. Precedence: the binding header, the
//! session's sticky brain, the caller root (longest path-component prefix), nothing.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::{OwnerError, Result};
use crate::owner::Registry;
use crate::roster::{self, Manifest};

/// Header naming a brain explicitly (root or fingerprint).
pub const BRAIN_HEADER: &str = "medulla-brain";
/// Header carrying the caller's working directory.
pub const CALLER_ROOT_HEADER: &str = "medulla-caller-root";
/// The legacy spelling of the caller-root header, still accepted.
pub const LEGACY_CALLER_ROOT_HEADER: &str = "m1nd-caller-root";
/// Header carrying the caller's agent id (`vendor:role`), used when a tool call has none.
pub const AGENT_HEADER: &str = "medulla-agent";

/// What a request says about where it comes from.
#[derive(Debug, Clone, Default)]
pub struct RouteInput {
    pub binding: Option<String>,
    /// The MCP session's sticky brain (a fingerprint).
    pub sticky: Option<String>,
    pub caller_root: Option<String>,
    /// Agent id from the request header or the MCP client's name.
    pub agent: Option<String>,
}

/// How the serving brain was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    Binding,
    Sticky,
    CallerRoot,
    Unrouted,
}

/// The routing verdict of one request.
#[derive(Debug, Clone)]
pub struct Routed {
    pub brain: Option<Manifest>,
    pub via: Via,
    pub caller_root: Option<PathBuf>,
    pub reception: Option<Reception>,
}

/// Spoken when the served brain is not the one the caller's root implies.
#[derive(Debug, Clone, Serialize)]
pub struct Reception {
    /// `unrouted` (no brain covers the caller), `no_caller_root` (nothing said where the
    /// caller is), or `mismatch` (served by a brain other than the caller root's).
    pub status: &'static str,
    pub served_brain: Option<String>,
    pub caller_root: Option<String>,
    pub message: String,
    pub options: Vec<String>,
}

/// The exact bootstrap call that fixes an unrouted root.
pub fn bootstrap_fix(root: Option<&str>) -> String {
    match root {
        Some(r) => format!(
            "the MCP tool call bootstrap {{\"root\": {}}} (or `medulla bootstrap {}` in a shell)",
            serde_json::to_string(r).unwrap_or_default(),
            shell_quote(r)
        ),
        None => "a Medulla-Caller-Root header naming your working directory, then the MCP tool call bootstrap {\"root\": \"<that directory>\"}".to_string(),
    }
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Find a registered brain by root path or fingerprint.
pub fn find_brain(reg: &Registry, name: &str) -> Option<Manifest> {
    let name = name.trim();
    if name.len() == 16 && name.chars().all(|c| c.is_ascii_hexdigit()) {
        if let Some(m) = reg.manifest(&name.to_ascii_lowercase()) {
            return Some(m);
        }
    }
    let root = roster::normalize_caller_root(name).ok()?;
    reg.manifest(&roster::fingerprint(&root.to_string_lossy()))
}

/// Decide which brain serves a request.
pub fn route(reg: &Registry, input: &RouteInput) -> Result<Routed> {
    let caller_root = match input
        .caller_root
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        Some(raw) => Some(roster::normalize_caller_root(raw)?),
        None => None,
    };
    let by_caller = caller_root
        .as_ref()
        .and_then(|c| roster::longest_prefix(reg.all_manifests().iter(), c).cloned());

    let (brain, via) = if let Some(b) = input.binding.as_deref().filter(|s| !s.trim().is_empty()) {
        let m = find_brain(reg, b).ok_or_else(|| OwnerError::UnknownBrain {
            name: b.to_string(),
        })?;
        (Some(m), Via::Binding)
    } else if let Some(m) = input.sticky.as_deref().and_then(|fp| reg.manifest(fp)) {
        (Some(m), Via::Sticky)
    } else if let Some(m) = by_caller.clone() {
        (Some(m), Via::CallerRoot)
    } else {
        (None, Via::Unrouted)
    };

    let caller_s = caller_root
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned());
    let reception = match (&brain, &caller_s) {
        (None, Some(c)) => Some(Reception {
            status: "unrouted",
            served_brain: None,
            caller_root: Some(c.clone()),
            message: format!("no brain covers {c}: reads are answered from the medulla alone and writes are refused"),
            options: vec![bootstrap_fix(Some(c))],
        }),
        (None, None) => Some(Reception {
            status: "no_caller_root",
            served_brain: None,
            caller_root: None,
            message: "the request named no brain and no caller root: reads are answered from the medulla alone and writes are refused".into(),
            options: vec![bootstrap_fix(None)],
        }),
        (Some(b), Some(c)) if by_caller.as_ref().map(|m| &m.fingerprint) != Some(&b.fingerprint) => Some(Reception {
            status: "mismatch",
            served_brain: Some(b.root.clone()),
            caller_root: Some(c.clone()),
            message: match &by_caller {
                Some(m) => format!("served by {} ({:?}) although {c} belongs to {}", b.root, via, m.root),
                None => format!("served by {} ({:?}); no brain covers {c}", b.root, via),
            },
            options: match &by_caller {
                Some(m) => vec![format!("send Medulla-Brain: {} to be served by the caller root's brain", m.root)],
                None => vec![bootstrap_fix(Some(c))],
            },
        }),
        // Served by the caller root's own brain, or by a binding with no caller root to
        // compare against: silence.
        _ => None,
    };
    Ok(Routed {
        brain,
        via,
        caller_root,
        reception,
    })
}
