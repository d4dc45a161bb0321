//! Routing: which brain serves a request. Precedence: the binding header, the caller
//! root sent with the request (the longest registered root that contains it, else the
//! brain of its repository: `checkout.rs`), the session's sticky brain (only for a
//! request that carries neither), nothing.

use std::borrow::Cow;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{OwnerError, Result};
use crate::owner::Registry;
use crate::roster::{self, Manifest};
use crate::service::checkout;
use crate::store_id::Fingerprint;

/// What a request says about where it comes from (the HTTP layer reads it off headers).
#[derive(Debug, Clone, Default)]
pub struct RouteInput {
    /// An explicit binding: a registered brain's root or fingerprint.
    pub binding: Option<String>,
    /// The MCP session's sticky brain (a fingerprint).
    pub sticky: Option<Fingerprint>,
    pub caller_root: Option<String>,
    /// Agent id from the request header or the MCP client's name.
    pub agent: Option<String>,
    /// The request presented the owner's founder token: the founder surface.
    pub founder: bool,
    /// The client session the request belongs to (its MCP session), recorded with what
    /// it writes.
    pub session: Option<String>,
}

/// How the serving brain was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    Binding,
    Sticky,
    CallerRoot,
    /// The caller root's repository: a worktree, a moved checkout, a second clone.
    Repository,
    Unrouted,
}

/// The routing verdict of one request.
#[derive(Debug, Clone)]
pub struct Routed {
    pub brain: Option<Manifest>,
    /// How it was chosen.
    pub via: Via,
    pub caller_root: Option<PathBuf>,
    /// The served brain's root as it stands in the caller's checkout: the root itself,
    /// or where it stands in the worktree or clone the caller works in.
    pub checkout: Option<PathBuf>,
    /// What this request taught about the served brain's repository (a checkout it had
    /// not served, the identity of a repository that got its first commit), for the
    /// service to record.
    pub learned: Option<crate::owner::repository::Learned>,
    pub reception: Option<Reception>,
    /// The exact bootstrap call that would give this caller a brain.
    pub fix: String,
}

impl Routed {
    /// Where a write of this request comes from, as its claim records it: the caller's
    /// checkout of the served brain's root when the caller works inside it, else the
    /// caller's own directory (a binding from elsewhere); `None` when the request named
    /// no caller root.
    pub fn written_from(&self) -> Option<String> {
        let caller = self.caller_root.as_ref()?;
        let at = match &self.checkout {
            Some(c) if caller.starts_with(c) => c,
            _ => caller,
        };
        Some(at.to_string_lossy().into_owned())
    }

    /// Where a write's evidence files are anchored: the caller's own checkout of the
    /// served brain (a worktree, a clone), else the brain's first checkout that exists.
    pub fn anchor_root(&self) -> Option<String> {
        let b = self.brain.as_ref()?;
        let at = self
            .checkout
            .clone()
            .filter(|c| c.is_dir())
            .unwrap_or_else(|| b.live_checkout());
        Some(at.to_string_lossy().into_owned())
    }
}

/// The directory to suggest bootstrapping for a caller root: the git repository it is
/// in, else the directory itself, as long as it may be a brain's root at all.
pub fn suggested_root(caller: &std::path::Path, cfg: &Config) -> Option<PathBuf> {
    let allowed = |p: &std::path::Path| {
        roster::root_refusal(p, &cfg.canonical_home, cfg.user_home.as_deref()).is_none()
    };
    caller
        .ancestors()
        .take_while(|a| a.parent().is_some() && Some(*a) != cfg.user_home.as_deref())
        .find(|a| a.join(".git").exists() && allowed(a))
        .map(std::path::Path::to_path_buf)
        .or_else(|| allowed(caller).then(|| caller.to_path_buf()))
}

/// The fix for a caller with no brain.
fn fix_for(caller: Option<&PathBuf>, cfg: &Config) -> String {
    match caller {
        None => bootstrap_fix(None),
        Some(c) => match suggested_root(c, cfg) {
            Some(root) => bootstrap_fix(Some(&root.to_string_lossy())),
            None => format!(
                "{} can never be a brain's root (a system, home or medulla directory): work from a project's own directory, then bootstrap it",
                c.display()
            ),
        },
    }
}

/// Spoken when the served brain is not the one the caller's root implies.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Reception {
    /// `unrouted` (no brain covers the caller), `no_caller_root` (nothing said where the
    /// caller is), or `mismatch` (served by a brain other than the caller root's).
    pub status: Cow<'static, str>,
    pub served_brain: Option<String>,
    pub caller_root: Option<String>,
    pub message: String,
    pub options: Vec<String>,
    /// Brains of other projects that share the caller's history (a fork's upstream, a
    /// template's other children): never read unasked, named so the caller can ask
    /// (`tier: "all-brains"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
}

/// A brain of another project that shares the caller's history.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Related {
    /// The brain's root.
    pub brain: String,
    /// Its project (the normalized remote, or its directory's name).
    pub project: String,
}

/// The brains of other projects that share the history of the repository `caller` is
/// in (its identity differs: another remote).
async fn related(
    reg: &Registry,
    manifests: &[&Manifest],
    caller: &std::path::Path,
) -> Vec<Related> {
    let Some(there) = checkout::locate(&reg.repos, caller)
        .await
        .and_then(|l| l.repo)
    else {
        return Vec::new();
    };
    let mut out: Vec<Related> = manifests
        .iter()
        .filter(|m| !m.own && m.merged_into.is_none())
        .filter_map(|m| {
            let r = m.repo.as_ref()?;
            (crate::repo::history(&r.key) == crate::repo::history(&there.key) && r.key != there.key)
                .then(|| Related {
                    brain: m.root.clone(),
                    project: r.label.clone(),
                })
        })
        .collect();
    out.sort_by(|a, b| a.brain.cmp(&b.brain));
    out
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

/// `s` as one word of a POSIX shell: as it is when every character is safe there, else
/// single-quoted. The one quoting every command medulla prints or writes uses.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=@:,%".contains(c))
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

/// Decide which brain serves a request. Precedence (SPEC §3): an explicit binding; the
/// caller root sent with this request (the longest registered root containing it, else
/// its repository's brain); the session's sticky brain, only when the request carries
/// neither; nothing. A brain registered at a root that can never be a project's (one
/// bootstrapped before roots were checked, say `/`) is never matched by caller root: it
/// would be a catch-all default brain.
pub async fn route(reg: &Registry, cfg: &Config, input: &RouteInput) -> Result<Routed> {
    let caller_root = match input
        .caller_root
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        Some(raw) => Some(roster::normalize_caller_root(raw)?),
        None => None,
    };
    // The manifests as they are now, shared: routing clones none of them.
    let view = reg.manifests_view();
    let manifests: Vec<&Manifest> = view.values().collect();
    let mut learned = None;
    let (by_caller, checkout, via_repo) = match &caller_root {
        Some(c) => {
            let found = by_caller_root(reg, cfg, &manifests, c).await;
            learned = found.as_ref().and_then(|f| f.learned.clone());
            match found {
                Some(f) => (Some(f.brain), Some(f.checkout), f.via_repository),
                None => (None, None, false),
            }
        }
        None => (None, None, false),
    };
    let sticky = input.sticky.as_ref().and_then(|fp| reg.manifest(fp));

    let (brain, via) = if let Some(b) = input.binding.as_deref().filter(|s| !s.trim().is_empty()) {
        let mut m = find_brain(reg, b).ok_or_else(|| OwnerError::UnknownBrain {
            name: b.to_string(),
        })?;
        // A brain merged into another is served by that one.
        for _ in 0..8 {
            match m.merged_into.as_deref().and_then(|r| find_brain(reg, r)) {
                Some(next) if next.fingerprint != m.fingerprint => m = next,
                _ => break,
            }
        }
        // A binding is not the caller's checkout: nothing to record about it.
        learned = None;
        (Some(m), Via::Binding)
    } else if caller_root.is_some() {
        match by_caller.clone() {
            Some(m) if via_repo => (Some(m), Via::Repository),
            Some(m) => (Some(m), Via::CallerRoot),
            None => (None, Via::Unrouted),
        }
    } else if let Some(m) = sticky.clone() {
        (Some(m), Via::Sticky)
    } else {
        (None, Via::Unrouted)
    };
    let checkout = match via {
        Via::CallerRoot | Via::Repository => checkout,
        _ => brain.as_ref().map(|b| b.live_checkout()),
    };

    let caller_s = caller_root
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned());
    let fix = fix_for(caller_root.as_ref(), cfg);
    // The session moved: its earlier calls landed elsewhere than this one.
    let moved_from = sticky.as_ref().filter(|s| {
        via != Via::Sticky && brain.as_ref().map(|b| &b.fingerprint) != Some(&s.fingerprint)
    });
    let kin = match (&brain, &caller_root) {
        (None, Some(c)) => related(reg, &manifests, c).await,
        _ => Vec::new(),
    };
    let reception = match (&brain, &caller_s) {
        (None, Some(c)) => Some(Reception {
            status: "unrouted".into(),
            served_brain: None,
            caller_root: Some(c.clone()),
            message: {
                let mut m = match moved_from {
                    Some(s) => format!("no brain covers {c}: reads are answered from the medulla alone and writes are refused (this session's earlier calls landed on {}, which this request's caller root does not belong to)", s.root),
                    None => format!("no brain covers {c}: reads are answered from the medulla alone and writes are refused"),
                };
                if !kin.is_empty() {
                    let names: Vec<String> = kin.iter().map(|k| format!("{} ({})", k.brain, k.project)).collect();
                    m.push_str(&format!("; it shares its history with another project's brain, {}, whose memory comes only when asked (`tier: \"all-brains\"`)", names.join(", ")));
                }
                m
            },
            options: vec![fix.clone()],
            related: kin,
        }),
        (None, None) => Some(Reception {
            status: "no_caller_root".into(),
            served_brain: None,
            caller_root: None,
            message: "the request named no brain and no caller root: reads are answered from the medulla alone and writes are refused".into(),
            options: vec![bootstrap_fix(None)],
            related: Vec::new(),
        }),
        (Some(b), Some(c)) if via == Via::Binding && by_caller.as_ref().map(|m| &m.fingerprint) != Some(&b.fingerprint) => Some(Reception {
            status: "mismatch".into(),
            served_brain: Some(b.root.clone()),
            caller_root: Some(c.clone()),
            message: match &by_caller {
                Some(m) => format!("served by {} (the binding header) although {c} belongs to {}", b.root, m.root),
                None => format!("served by {} (the binding header); no brain covers {c}", b.root),
            },
            options: match &by_caller {
                Some(m) => vec![format!("drop the Medulla-Brain header to be served by {}", m.root)],
                None => vec![fix.clone()],
            },
            related: Vec::new(),
        }),
        (Some(b), Some(c)) => moved_from.map(|s| Reception {
            status: "mismatch".into(),
            served_brain: Some(b.root.clone()),
            caller_root: Some(c.clone()),
            message: format!("served by {} (this request's caller root); this session's earlier calls landed on {}", b.root, s.root),
            options: vec![format!("send Medulla-Brain: {} to be served by {} instead", s.root, s.root)],
            related: Vec::new(),
        }),
        // Served by a binding or the sticky session with no caller root to compare: silence.
        _ => None,
    };
    Ok(Routed {
        brain,
        via,
        caller_root,
        checkout,
        learned,
        reception,
        fix,
    })
}

/// The brain a caller root belongs to, and how it was found.
struct ByCaller {
    brain: Manifest,
    checkout: PathBuf,
    via_repository: bool,
    learned: Option<crate::owner::repository::Learned>,
}

/// The longest registered root containing the caller root (unless another repository
/// has since taken that root's place), else a checkout of its own project a brain served
/// before, else the brain of the caller's project.
async fn by_caller_root(
    reg: &Registry,
    cfg: &Config,
    manifests: &[&Manifest],
    caller: &std::path::Path,
) -> Option<ByCaller> {
    // Only the roots that contain the caller are judged (a judgement is some forty path
    // comparisons, and every request routes).
    let eligible = manifests
        .iter()
        .copied()
        .filter(|m| m.merged_into.is_none() && caller.starts_with(&m.root))
        .filter(|m| {
            roster::root_refusal(
                std::path::Path::new(&m.root),
                &cfg.canonical_home,
                cfg.user_home.as_deref(),
            )
            .is_none()
        });
    let by_root = roster::longest_prefix(eligible, caller);
    let located = match by_root {
        // A brain with no repository yet: its own root is read instead (below).
        Some(m) if m.repo.is_none() => None,
        _ => checkout::locate(&reg.repos, caller).await,
    };
    if let Some(m) = by_root {
        if !located.as_ref().is_some_and(|l| checkout::root_taken(m, l)) {
            let learned = match &m.repo {
                None => checkout::locate(&reg.repos, std::path::Path::new(&m.root))
                    .await
                    .and_then(|r| checkout::first_identity(m, &r)),
                Some(_) => located.as_ref().and_then(|l| checkout::root_moved(m, l)),
            };
            return Some(ByCaller {
                brain: m.clone(),
                checkout: std::path::PathBuf::from(&m.root),
                via_repository: false,
                learned,
            });
        }
    }
    let located = located?;
    located.repo.as_ref()?;
    // A checkout this brain served before keeps it, though its remote moved since.
    if let Some(r) = checkout::recorded(manifests, caller, &located) {
        return Some(ByCaller {
            brain: r.brain,
            checkout: r.checkout,
            via_repository: true,
            learned: r.learned,
        });
    }
    let mut reached = checkout::reach(manifests, &located);
    if reached.is_none() && !*reg.identified.borrow() {
        // Brains from before repositories are being identified: wait for that pass.
        let mut rx = reg.identified.subscribe();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(10), rx.wait_for(|d| *d)).await;
        let view = reg.manifests_view();
        reached = checkout::reach(&view.values().collect::<Vec<_>>(), &located);
    }
    let r = reached?;
    Some(ByCaller {
        brain: r.brain,
        checkout: r.checkout,
        via_repository: true,
        learned: r.learned,
    })
}
