//! `brains_split`: a brain that served checkouts of different projects before projects
//! sharing history were told apart (a template's children, a fork beside its upstream;
//! SPEC §3) gives each other project a brain of its own. Every claim goes with the
//! project of the checkout it was written from: a version records where it came from
//! (`written_from`), and a version that does not (written before that was recorded) is
//! the brain's own project's when it is older than the first time another project's
//! checkout asked. A label all of whose versions are another project's moves to that
//! project's brain (every version, one `merge` act; retired here with the reason, kept
//! in history); a label whose versions are of both, or of no project that can be told,
//! stays and is listed: nothing is guessed. Founder only; idempotent.

use std::path::{Path, PathBuf};

use brains::Claim;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BrainRef;
use crate::error::{OwnerError, Result};
use crate::roster::Manifest;
use crate::service::route::find_brain;
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::store_id::StoreId;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct SplitArgs {
    /// The brain to separate (its root or fingerprint).
    #[arg(
        value_name = "BRAIN",
        help = "The brain to separate (its root or fingerprint)"
    )]
    pub brain: String,
    /// Say what would move and write nothing.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", help = "Say what would move, write nothing")]
    #[serde(default)]
    pub dry_run: Option<bool>,
}

/// A label left where it is, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Undecided {
    pub label: String,
    pub slug: String,
    pub why: String,
}

/// One other project the brain served, and what went (or would go) to its brain.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Separated {
    /// Its identity (`repo:<root commit>@<remote>`) and label.
    pub project: String,
    pub label: String,
    /// Its checkouts the brain served.
    pub checkouts: Vec<String>,
    /// Its brain: one that existed, one made now, or `None` when none of its checkouts
    /// exists on this machine (nothing moved then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brain: Option<String>,
    pub created: bool,
    /// Labels all of whose versions it wrote: moved (every version).
    pub moved: Vec<String>,
    /// Versions written into its brain.
    pub versions: usize,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SplitAnswer {
    pub brain: BrainRef,
    pub dry_run: bool,
    pub projects: Vec<Separated>,
    /// Labels that stay because they cannot be told apart (versions of several projects,
    /// or of none that can be told).
    pub undecided: Vec<Undecided>,
    /// Labels that are the brain's own project's, untouched.
    pub kept: usize,
}

impl Answer for SplitAnswer {}

/// A brain that served other projects' checkouts (doctor's `mixed_projects`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Mixed {
    pub brain: String,
    /// Its own project.
    pub project: String,
    /// The other projects, each with its checkouts.
    pub others: Vec<OtherProject>,
    /// The command that separates them.
    pub fix: String,
}

/// Another project a brain served.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct OtherProject {
    pub project: String,
    pub checkouts: Vec<String>,
}

/// Every brain that served checkouts of other projects.
pub fn mixed(manifests: &[Manifest]) -> Vec<Mixed> {
    manifests
        .iter()
        .filter(|m| m.merged_into.is_none())
        .filter_map(|m| {
            let mut others: Vec<OtherProject> = Vec::new();
            for c in m.checkouts.iter().filter(|c| c.foreign) {
                let key = c.key.clone().unwrap_or_default();
                match others.iter_mut().find(|o| o.project == key) {
                    Some(o) => o.checkouts.push(c.path.clone()),
                    None => others.push(OtherProject {
                        project: key,
                        checkouts: vec![c.path.clone()],
                    }),
                }
            }
            (!others.is_empty()).then(|| Mixed {
                brain: m.root.clone(),
                project: m.repo.as_ref().map(|r| r.key.clone()).unwrap_or_default(),
                others,
                fix: format!(
                    "medulla brains split {}",
                    crate::service::route::shell_quote(&m.root)
                ),
            })
        })
        .collect()
}

/// Whose a version is: the brain's own project (`None`) or another's (its key);
/// `Err(())` when it cannot be told.
fn owner_of(
    c: &Claim,
    own: &[&str],
    others: &[(String, Vec<String>)],
    first_foreign: i64,
) -> std::result::Result<Option<String>, ()> {
    let Some(from) = c.written_from.as_deref() else {
        return if c.created < first_foreign {
            Ok(None)
        } else {
            Err(())
        };
    };
    let inside = |p: &str| Path::new(from).starts_with(p);
    let deepest = |paths: &[&str]| paths.iter().filter(|p| inside(p)).map(|p| p.len()).max();
    let mut best: Option<(usize, Option<String>)> = deepest(own).map(|n| (n, None));
    for (key, paths) in others {
        let ps: Vec<&str> = paths.iter().map(String::as_str).collect();
        if let Some(n) = deepest(&ps) {
            if best.as_ref().is_none_or(|(b, _)| n > *b) {
                best = Some((n, Some(key.clone())));
            }
        }
    }
    best.map(|(_, k)| k).ok_or(())
}

pub struct BrainsSplit;

impl Verb for BrainsSplit {
    const NAME: &'static str = "brains_split";
    const DESCRIPTION: &'static str = "Separate the other projects a brain served before projects sharing history were told apart (a template's children, a fork and its upstream): each gets a brain of its own (one that exists, else one made at its checkout), and every label all of whose versions it wrote moves there (every version; retired here with the reason, kept in history); labels that cannot be told apart stay, listed. `medulla doctor` lists the brains to separate. The founder's only.";
    const EFFECT: Effect = Effect::Write;
    const IDEMPOTENT: bool = true;
    const ROUTED: bool = false;
    const ALSO: &'static [&'static str] = &["POST /api/brains/split"];
    type Args = SplitArgs;
    type Answer = SplitAnswer;

    async fn run(cx: Cx<'_>, a: SplitArgs) -> Result<SplitAnswer> {
        let svc = cx.svc;
        svc.founder_only(cx.input, "separating a brain")?;
        let reg = &svc.owner.registry;
        let b = find_brain(reg, &a.brain).ok_or_else(|| OwnerError::UnknownBrain {
            name: a.brain.clone(),
        })?;
        let dry_run = a.dry_run.unwrap_or(false);
        // The other projects, by identity, each with its checkouts (first seen first).
        let mut others: Vec<(String, Vec<String>)> = Vec::new();
        let mut seen = b.checkouts.clone();
        seen.sort_by_key(|c| c.first_seen);
        for c in seen.iter().filter(|c| c.foreign) {
            let key = c.key.clone().unwrap_or_default();
            match others.iter_mut().find(|(k, _)| *k == key) {
                Some((_, ps)) => ps.push(c.path.clone()),
                None => others.push((key, vec![c.path.clone()])),
            }
        }
        let first_foreign = seen
            .iter()
            .filter(|c| c.foreign)
            .map(|c| c.first_seen)
            .min()
            .unwrap_or(i64::MAX);
        let own: Vec<&str> = b.project_paths().collect();
        let store = StoreId::brain(&b.fingerprint);
        let every = svc.owner.read(&store, |s| s.every_version()).await?;
        // Each label to one project, or undecided.
        let mut by_project: Vec<Vec<Vec<Claim>>> = vec![Vec::new(); others.len()];
        let mut undecided = Vec::new();
        let mut kept = 0;
        for versions in every {
            let Some(last) = versions.last() else {
                continue;
            };
            let owners: Vec<_> = versions
                .iter()
                .map(|c| owner_of(c, &own, &others, first_foreign))
                .collect();
            let (label, slug) = (last.label.clone(), last.slug.clone());
            if owners.iter().any(|o| o.is_err()) {
                undecided.push(Undecided {
                    label,
                    slug,
                    why: "a version written after another project's checkout first asked, whose checkout was not recorded: it cannot be told whose it is".into(),
                });
                continue;
            }
            let owners: Vec<Option<String>> =
                owners.into_iter().map(|o| o.unwrap_or_default()).collect();
            match owners.first().cloned().flatten() {
                _ if owners.windows(2).any(|w| w[0] != w[1]) => undecided.push(Undecided {
                    label,
                    slug,
                    why: "its versions were written from checkouts of different projects".into(),
                }),
                None => kept += 1,
                Some(key) => {
                    let i = others
                        .iter()
                        .position(|(k, _)| *k == key)
                        .expect("a known project");
                    by_project[i].push(versions);
                }
            }
        }
        let reason_for = |root: &str, key: &str| {
            format!("separated into {root}, the brain of its own project ({key})")
        };
        let mut projects = Vec::new();
        for ((key, paths), moved) in others.into_iter().zip(by_project) {
            let mut sep = Separated {
                label: key
                    .split_once('@')
                    .map_or(key.as_str(), |(_, r)| r)
                    .to_string(),
                project: key.clone(),
                checkouts: paths.clone(),
                brain: None,
                created: false,
                moved: moved
                    .iter()
                    .filter_map(|v| v.last())
                    .map(|c| c.label.clone())
                    .collect(),
                versions: moved.iter().map(Vec::len).sum(),
            };
            let existing = reg.all_manifests().into_iter().find(|m| {
                !m.own && m.merged_into.is_none() && m.repo.as_ref().is_some_and(|r| r.key == key)
            });
            let at = paths.iter().map(PathBuf::from).find(|p| p.is_dir());
            let target: Option<Manifest> = match (existing, at) {
                (Some(m), _) => Some(m),
                (None, Some(root)) if !dry_run => {
                    let repos = reg.repos.clone();
                    let r = root.clone();
                    let binding = tokio::task::spawn_blocking(move || {
                        crate::owner::repository::binding_of(&repos, &r)
                    })
                    .await
                    .map_err(|e| OwnerError::Internal(e.to_string()))?;
                    let (m, created) = svc.owner.bootstrap(root, binding, false).await?;
                    sep.created = created;
                    Some(m)
                }
                (None, Some(root)) => {
                    sep.created = true;
                    sep.brain = Some(root.to_string_lossy().into_owned());
                    None
                }
                (None, None) => None,
            };
            if let Some(t) = target {
                sep.brain = Some(t.root.clone());
                if !dry_run {
                    let reason = reason_for(&t.root, &key);
                    svc.owner
                        .separate(&b, &t, moved, (paths, key), &reason, "human:founder")
                        .await?;
                }
            } else if sep.brain.is_none() {
                sep.moved.clear();
                sep.versions = 0;
            }
            projects.push(sep);
        }
        let now = reg.manifest(&b.fingerprint).unwrap_or(b);
        Ok(SplitAnswer {
            brain: BrainRef::from(&now),
            dry_run,
            projects,
            undecided,
            kept,
        })
    }
}
