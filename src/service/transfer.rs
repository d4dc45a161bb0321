//! Getting memory in and out: import of a directory of legacy `.light.md` files (with
//! their `.history/` versions) into a brain or the medulla, and export back to that
//! format. Both run in the owner, which reads and writes the directory itself.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use brains::legacy::{self, LegacyClaim};
use brains::{Claim, MemorizeInput, MemorizeOutcome};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::route::{find_brain, Routed};
use super::{RouteInput, Service};
use crate::audit::AuditMsg;
use crate::brain::BrainMsg;
use crate::error::{OwnerError, Result};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportArgs {
    /// Absolute path of a directory of `.light.md` files (and optionally `.history/`).
    pub dir: String,
    /// Target brain (root or fingerprint); or set `medulla: true`.
    pub brain: Option<String>,
    #[serde(default)]
    pub medulla: bool,
    /// Count and check everything, write nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Who imports (recorded on every act). Defaults to `human:founder`.
    pub agent_id: Option<String>,
    /// Triage a mixed legacy store: the absolute path of a rules file (TOML) sending each
    /// claim to a project brain by path/label/text patterns; unmatched and ambiguous
    /// claims stay in the medulla. Replaces `brain`/`medulla`.
    pub triage: Option<String>,
}

/// One triage rule: every pattern given must match (regexes); `brain` is a registered root.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    brain: String,
    path: Option<String>,
    label: Option<String>,
    text: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rules {
    #[serde(default)]
    rule: Vec<Rule>,
}

struct CompiledRule {
    fp: String,
    root: String,
    path: Option<regex::Regex>,
    label: Option<regex::Regex>,
    text: Option<regex::Regex>,
}

/// Read the triage rules. Errors name the file and the line, never its bytes: an error
/// message must not become a way to read a file (`triage: "/etc/passwd"`).
fn load_rules(svc: &Service, path: &str) -> Result<Vec<CompiledRule>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        OwnerError::BadInput(format!("cannot read the triage rules {path}: {}", e.kind()))
    })?;
    let rules: Rules =
        toml::from_str(&text).map_err(|e| {
            OwnerError::BadInput(format!(
            "{path} is not a valid rules file ({}): see docs/OPERATIONS.md for the [[rule]] format",
            crate::config::toml_problem(&text, &e).chars().take(200).collect::<String>()
        ))
        })?;
    let re = |p: &Option<String>| -> Result<Option<regex::Regex>> {
        p.as_deref()
            .map(|p| {
                regex::Regex::new(p).map_err(|_| {
                    OwnerError::BadInput(format!("a pattern in {path} is not a valid regex"))
                })
            })
            .transpose()
    };
    rules
        .rule
        .iter()
        .map(|r| {
            let m = find_brain(&svc.owner.registry, &r.brain).ok_or_else(|| {
                OwnerError::UnknownBrain {
                    name: r.brain.clone(),
                }
            })?;
            Ok(CompiledRule {
                fp: m.fingerprint,
                root: m.root,
                path: re(&r.path)?,
                label: re(&r.label)?,
                text: re(&r.text)?,
            })
        })
        .collect()
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportArgs {
    /// Absolute path of the directory to write into (created if missing).
    pub dir: String,
    pub brain: Option<String>,
    #[serde(default)]
    pub medulla: bool,
    /// Also write every outdated version under `.history/`.
    #[serde(default)]
    pub history: bool,
}

#[derive(Clone)]
enum Target {
    Brain(String, String),
    Medulla,
}

fn target(
    svc: &Service,
    brain: Option<&str>,
    medulla: bool,
    routed: &Routed,
    input: &RouteInput,
    verb: &'static str,
) -> Result<Target> {
    match (brain, medulla) {
        (Some(_), true) | (None, false) => Err(OwnerError::BadInput(
            "name exactly one target: brain, or medulla: true".into(),
        )),
        (None, true) => Ok(Target::Medulla),
        (Some(b), false) => {
            let m = find_brain(&svc.owner.registry, b).ok_or_else(|| OwnerError::UnknownBrain {
                name: b.to_string(),
            })?;
            svc.authorize_brain(routed, input, &m, verb)?;
            Ok(Target::Brain(m.fingerprint, m.root))
        }
    }
}

/// An absolute directory argument, `..` folded and symlinks resolved.
fn dir_arg(raw: &str) -> Result<PathBuf> {
    if raw.len() > crate::roster::MAX_PATH_BYTES {
        return Err(OwnerError::TooLong {
            what: "dir",
            len: raw.len(),
            max: crate::roster::MAX_PATH_BYTES,
        });
    }
    brains::claim::check_line("dir", raw)?;
    let p = Path::new(raw);
    if !p.is_absolute() {
        return Err(OwnerError::BadInput(format!(
            "{raw} is not an absolute path: give the directory's absolute path"
        )));
    }
    Ok(crate::roster::resolve_path(p))
}

fn light_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.to_string_lossy().ends_with(".light.md"))
        .collect();
    v.sort();
    v
}

struct Parsed {
    file: PathBuf,
    claim: LegacyClaim,
}

pub async fn import(
    svc: &Service,
    a: ImportArgs,
    routed: &Routed,
    input: &RouteInput,
) -> Result<Value> {
    let dir = dir_arg(&a.dir)?;
    if !dir.is_dir() {
        return Err(OwnerError::BadInput(format!(
            "{} is not an existing directory",
            dir.display()
        )));
    }
    if a.medulla {
        svc.founder_only(input, "importing into the medulla")?;
    }
    let rules = match &a.triage {
        Some(p) if a.brain.is_none() && !a.medulla => {
            svc.founder_only(input, "triage of a legacy store across brains")?;
            Some(load_rules(svc, &dir_arg(p)?.to_string_lossy())?)
        }
        Some(_) => {
            return Err(OwnerError::BadInput(
                "triage chooses each claim's store: do not also name brain or medulla".into(),
            ))
        }
        None => None,
    };
    let fixed = if rules.is_none() {
        Some(target(
            svc,
            a.brain.as_deref(),
            a.medulla,
            routed,
            input,
            "import into",
        )?)
    } else {
        None
    };
    let mut per_target: BTreeMap<String, usize> = BTreeMap::new();
    let mut ambiguous: Vec<Value> = Vec::new();
    let mut baseline = 0usize;
    let agent = a.agent_id.clone().unwrap_or_else(|| "human:founder".into());
    brains::claim::validate_agent_id(&agent)?;
    let mut files = light_files(&dir);
    files.extend(light_files(&dir.join(".history")));
    let seen = files.len();
    let mut refused: Vec<Value> = Vec::new();
    let mut groups: BTreeMap<String, Vec<Parsed>> = BTreeMap::new();
    for f in files {
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => {
                refused.push(json!({ "file": f, "reason": "unreadable", "detail": e.to_string() }));
                continue;
            }
        };
        match legacy::parse(&text) {
            Err(e) => {
                refused.push(json!({ "file": f, "reason": "unparseable", "detail": e.to_string() }))
            }
            Ok(c) => {
                let mut fields = crate::floor::claim_fields(&c.label, &c.text, &c.evidence);
                if let Some(r) = &c.promotion_reason {
                    fields.push(("promotion reason", r.as_str()));
                }
                let findings = crate::floor::scan(fields);
                if !findings.is_empty() {
                    refused.push(
                        json!({ "file": f, "reason": "secret found", "detail": crate::floor::summary(&findings) }),
                    );
                } else if c.slug().is_empty() {
                    refused.push(json!({ "file": f, "reason": "unparseable", "detail": "the label has no letters or digits" }));
                } else {
                    groups
                        .entry(c.slug())
                        .or_default()
                        .push(Parsed { file: f, claim: c });
                }
            }
        }
    }
    let (mut live, mut into_history) = (0usize, 0usize);
    let mut unknown_origin = 0usize;
    for (slug, mut versions) in groups {
        let tgt = match (&fixed, &rules) {
            (Some(t), _) => t.clone(),
            (None, Some(rules)) => {
                let probe = versions
                    .iter()
                    .rev()
                    .find(|p| p.claim.state == brains::ClaimState::Authored)
                    .or(versions.last());
                let probe = probe.expect("a group is never empty");
                let hits: std::collections::BTreeSet<(String, String)> = rules
                    .iter()
                    .filter(|r| {
                        r.path
                            .as_ref()
                            .is_none_or(|re| re.is_match(&probe.file.to_string_lossy()))
                            && r.label
                                .as_ref()
                                .is_none_or(|re| re.is_match(&probe.claim.label))
                            && r.text
                                .as_ref()
                                .is_none_or(|re| re.is_match(&probe.claim.text))
                    })
                    .map(|r| (r.fp.clone(), r.root.clone()))
                    .collect();
                match hits.len() {
                    1 => {
                        let (fp, root) = hits.into_iter().next().expect("one hit");
                        Target::Brain(fp, root)
                    }
                    0 => Target::Medulla,
                    _ => {
                        ambiguous.push(json!({ "slug": slug, "file": probe.file, "candidates": hits.iter().map(|h| &h.1).collect::<Vec<_>>() }));
                        Target::Medulla
                    }
                }
            }
            (None, None) => unreachable!("a fixed target or rules"),
        };
        let tgt_name = match &tgt {
            Target::Brain(_, root) => root.clone(),
            Target::Medulla => "medulla".to_string(),
        };
        // Oldest first; the authored version last among equals, so it ends live.
        versions.sort_by_key(|p| {
            (
                p.claim.created.unwrap_or(0),
                p.claim.state == brains::ClaimState::Authored,
            )
        });
        let existing: HashSet<(String, i64)> = {
            let s = slug.clone();
            let hist = match &tgt {
                Target::Brain(fp, _) => {
                    svc.owner
                        .ask(Some(fp), |r| BrainMsg::History(s.clone(), r))
                        .await?
                }
                Target::Medulla => {
                    svc.owner
                        .ask(None, |r| BrainMsg::History(s.clone(), r))
                        .await?
                }
            };
            hist.iter()
                .map(|c| (c.content_hash.clone(), c.created))
                .collect()
        };
        let n = versions.len();
        // A slug whose every file is outdated had no live version: it stays in history.
        let all_outdated = versions
            .iter()
            .all(|p| p.claim.state == brains::ClaimState::Outdated);
        let mut seen_here: HashSet<(String, i64)> = HashSet::new();
        for (i, p) in versions.into_iter().enumerate() {
            let mut input: MemorizeInput = p.claim.to_input();
            if p.claim.source_agent.is_none() {
                input.source_agent = "unknown:legacy".into();
            }
            if input.origin_brain.is_none() {
                unknown_origin += 1;
            }
            let mut check = input.clone();
            if let Err(e) = check.validate() {
                refused
                    .push(json!({ "file": p.file, "reason": "invalid", "detail": e.to_string() }));
                continue;
            }
            let hash = brains::claim::content_hash(
                &check.label,
                &check.text,
                check.strength,
                &check.evidence,
            );
            let key = (hash, input.created.unwrap_or(0));
            if existing.contains(&key) || !seen_here.insert(key) {
                refused.push(json!({ "file": p.file, "reason": "duplicate", "detail": "this version is already in the store" }));
                continue;
            }
            let is_last = i + 1 == n && !all_outdated;
            if is_last {
                baseline += 1;
            }
            if a.dry_run {
                if is_last {
                    live += 1;
                    *per_target.entry(tgt_name.clone()).or_default() += 1;
                } else {
                    into_history += 1
                }
                continue;
            }
            let outcome: std::result::Result<MemorizeOutcome, OwnerError> = match &tgt {
                Target::Brain(fp, _) => {
                    svc.owner
                        .ask(Some(fp), |r| BrainMsg::Memorize(input.clone(), r))
                        .await
                }
                Target::Medulla => {
                    svc.owner
                        .audit(|reply| AuditMsg::Import {
                            input: input.clone(),
                            reply,
                        })
                        .await
                }
            };
            match outcome {
                Ok(MemorizeOutcome::Unchanged { .. }) => {
                    refused.push(json!({ "file": p.file, "reason": "duplicate", "detail": "identical to the live version" }))
                }
                Ok(_) => {
                    if is_last {
                        live += 1;
                        *per_target.entry(tgt_name.clone()).or_default() += 1;
                    } else {
                        into_history += 1
                    }
                    if i + 1 == n && all_outdated {
                        if let Target::Brain(fp, _) = &tgt {
                            let (s, who) = (slug.clone(), agent.clone());
                            svc.owner
                                .ask(Some(fp), |r| BrainMsg::Demote { slug: s.clone(), actor: who.clone(), reason: "imported as outdated".into(), reply: r })
                                .await?;
                        }
                    }
                }
                Err(e) => refused.push(json!({ "file": p.file, "reason": "refused", "detail": e.to_string() })),
            }
        }
    }
    let conserved = seen == live + into_history + refused.len();
    Ok(json!({
        "dry_run": a.dry_run,
        "target": match &fixed { Some(Target::Brain(_, root)) => json!(root), Some(Target::Medulla) => json!("medulla"), None => json!("triage") },
        "live_by_store": per_target,
        "ambiguous_kept_in_medulla": ambiguous,
        // The triage gate: every live claim of the legacy store is live in exactly one store.
        "count_gate": { "baseline": baseline, "placed": live, "holds": baseline == live },
        "files_seen": seen,
        "imported_live": live,
        "into_history": into_history,
        "refused": refused.len(),
        "refusals": refused,
        "origin_unknown": unknown_origin,
        "count_conserved": conserved,
    }))
}

pub async fn export(
    svc: &Service,
    a: ExportArgs,
    routed: &Routed,
    input: &RouteInput,
) -> Result<Value> {
    let dir = dir_arg(&a.dir)?;
    let home = &svc.owner.config.canonical_home;
    if dir.starts_with(home) {
        return Err(OwnerError::InsideMedullaHome {
            dir: dir.display().to_string(),
            home: home.display().to_string(),
        });
    }
    let tgt = target(svc, a.brain.as_deref(), a.medulla, routed, input, "export")?;
    let fp = match &tgt {
        Target::Brain(fp, _) => Some(fp.clone()),
        Target::Medulla => None,
    };
    let live: Vec<Claim> = svc.owner.ask(fp.as_deref(), BrainMsg::LiveClaims).await?;
    let mut outdated: Vec<Claim> = Vec::new();
    if a.history {
        let acts = svc
            .owner
            .ask(fp.as_deref(), |r| BrainMsg::ActsNewest(usize::MAX, r))
            .await?;
        let slugs: std::collections::BTreeSet<String> =
            acts.into_iter().map(|a| a.subject).collect();
        for s in slugs {
            let ss = s.clone();
            let versions = svc
                .owner
                .ask(fp.as_deref(), |r| BrainMsg::History(ss.clone(), r))
                .await?;
            outdated.extend(
                versions
                    .into_iter()
                    .filter(|c| c.state == brains::ClaimState::Outdated),
            );
        }
    }
    // Exported files are committable text: the floor keeps secrets out of them.
    let mut refused: Vec<Value> = Vec::new();
    let mut clean = |cs: Vec<Claim>| -> Vec<Claim> {
        cs.into_iter()
            .filter(|c| {
                let findings =
                    crate::floor::scan(crate::floor::claim_fields(&c.label, &c.text, &c.evidence));
                if findings.is_empty() {
                    return true;
                }
                refused.push(json!({ "slug": c.slug, "version": c.version, "found": crate::floor::summary(&findings) }));
                false
            })
            .collect()
    };
    let live = clean(live);
    let outdated = clean(outdated);
    let out_dir = dir.clone();
    let write = move || -> std::io::Result<(usize, usize)> {
        let dir = out_dir;
        std::fs::create_dir_all(&dir)?;
        for c in &live {
            std::fs::write(dir.join(format!("{}.light.md", c.slug)), legacy::render(c))?;
        }
        if !outdated.is_empty() {
            std::fs::create_dir_all(dir.join(".history"))?;
        }
        for c in &outdated {
            std::fs::write(
                dir.join(".history")
                    .join(legacy::history_file_name(&c.slug, c.created)),
                legacy::render(c),
            )?;
        }
        Ok((live.len(), outdated.len()))
    };
    let (n_live, n_hist) = tokio::task::spawn_blocking(write)
        .await
        .map_err(|e| OwnerError::Internal(e.to_string()))?
        .map_err(|e| {
            OwnerError::Internal(format!("cannot write into {}: {}", dir.display(), e.kind()))
        })?;
    Ok(json!({ "dir": dir, "live_files": n_live, "history_files": n_hist, "refused": refused }))
}
