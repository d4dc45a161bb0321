//! `import --from SOURCE`: another tool's memory into the stores it belongs to. The
//! source is read into entries (`sources/`), each entry placed (`from_route.rs`), then per
//! store: every entry through the hygiene floor and the claim's checks, looked up (its
//! label's claim, and near-duplicates among the claims there before the import), and the
//! new and the changed written in batches (a brain's through `memorize_many`, the
//! medulla's one by one through the audit actor), as `import:<source>`, observed, with
//! the source's file and lines as evidence and its time as `created`. A second import of
//! the same source writes nothing; the source is only read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use brains::{ActKind, ClaimState, MemorizeInput, MemorizeOutcome, Strength};

use super::from_report::{FromReport, NearEntry, StoreTally};
use super::from_route::{Dest, Router};
use super::sources::{self, Entry, Scope, Source};
use super::{ImportArgs, ImportReport, Target, BATCH};
use crate::audit::AuditMsg;
use crate::error::{OwnerError, Result};
use crate::service::route::find_brain;
use crate::service::verb::Cx;
use crate::service::Service;
use crate::store_id::StoreId;

pub(super) async fn run(cx: Cx<'_>, source: Source, a: ImportArgs) -> Result<ImportReport> {
    let svc = cx.svc;
    let started = std::time::Instant::now();
    if a.medulla || a.triage.is_some() {
        return Err(OwnerError::BadInput(
            "an import from another tool places each entry itself (the person's into the medulla, a project's into its brain): name neither medulla nor triage; brain sends every entry that is not the person's there".into(),
        ));
    }
    let place = match a.dir.as_deref() {
        Some(d) => super::super::export::dir_arg(d)?,
        None => sources::default_place(source, &|k| std::env::var(k).ok()).ok_or_else(|| {
            OwnerError::BadInput(format!(
                "nothing says where {} is kept here: give its path",
                source.title()
            ))
        })?,
    };
    // Serena keeps memory in projects too: a home that is not there still leaves the
    // brains' own `.serena/memories/` to read.
    let home_missing_ok = source == Source::Serena && a.dir.is_none();
    if !place.exists() && !home_missing_ok {
        return Err(OwnerError::BadInput(format!(
            "{} does not exist: give the path where {} is kept",
            place.display(),
            source.title()
        )));
    }
    let brain = match a.brain.as_deref() {
        None => None,
        Some(b) => {
            let m = find_brain(&svc.owner.registry, b).ok_or_else(|| OwnerError::UnknownBrain {
                name: b.to_string(),
            })?;
            Some(Target::Brain(m.fingerprint, m.root))
        }
    };
    let projects: Vec<PathBuf> = svc
        .owner
        .registry
        .all_manifests()
        .iter()
        .filter(|m| m.merged_into.is_none())
        .map(|m| m.live_checkout())
        .collect();
    let at = place.clone();
    let read = tokio::task::spawn_blocking(move || sources::read(source, &at, &projects))
        .await
        .map_err(|e| OwnerError::Internal(format!("reading {} panicked: {e}", source.title())))?;
    let read_ms = started.elapsed().as_millis() as u64;
    let mut report = FromReport::new(source, place.display().to_string(), read.files);
    report.entries = read.entries.len();
    report.skipped = read.skipped;
    let mut router = Router::new(svc, brain);
    let mut stores: BTreeMap<String, (Target, Vec<Entry>)> = BTreeMap::new();
    for e in read.entries {
        match router.dest(&e.scope).await {
            Dest::Store(t) => stores
                .entry(t.name())
                .or_insert_with(|| (t, Vec::new()))
                .1
                .push(e),
            Dest::Unrouted { project, fix } => report.unrouted(project, fix, &e.label),
        }
    }
    if !a.dry_run {
        allowed(cx, stores.values().map(|(t, _)| t))?;
    }
    let mut progress = Tick {
        cx,
        done: 0,
        total: report.entries as u64,
    };
    progress.add(report.unrouted.iter().map(|u| u.entries).sum::<usize>());
    for (_, (tgt, entries)) in stores {
        let tally = into_store(svc, source, &tgt, entries, a.dry_run, &mut progress).await?;
        report.stores.push(tally);
    }
    tracing::info!(
        source = source.name(),
        entries = report.entries,
        written = report.written(),
        read_ms,
        total_ms = started.elapsed().as_millis() as u64,
        "import from done"
    );
    Ok(report.into_answer(a.dry_run))
}

/// The command line's progress: entries accounted for, of all read.
struct Tick<'a> {
    cx: Cx<'a>,
    done: u64,
    total: u64,
}

impl Tick<'_> {
    fn add(&mut self, n: usize) {
        self.done += n as u64;
        self.cx
            .progress
            .tick(self.done, Some(self.total), "entries");
    }
}

/// Writing the medulla is the founder's; writing a brain, a caller routed to it or the
/// founder's (as for any import). Checked for every store before anything is written.
fn allowed<'t>(cx: Cx<'_>, targets: impl Iterator<Item = &'t Target>) -> Result<()> {
    for t in targets {
        match t {
            Target::Medulla => cx
                .svc
                .founder_only(cx.input, "importing the person's memory into the medulla")?,
            Target::Brain(fp, root) => {
                let m = cx
                    .svc
                    .owner
                    .registry
                    .manifest(fp)
                    .ok_or_else(|| OwnerError::UnknownBrain { name: root.clone() })?;
                cx.svc
                    .authorize_brain(cx.routed, cx.input, &m, "import into")?;
            }
        }
    }
    Ok(())
}

/// An entry checked and ready for its store.
struct Ready {
    slug: String,
    /// Where it was read (`file:lines`), its first evidence entry.
    at: String,
    input: MemorizeInput,
    hash: String,
    /// The checkout its evidence is relative to, anchored there (a file inside the
    /// brain's project).
    anchor_at: Option<PathBuf>,
}

/// An entry the floor or the claim's checks refused: label, where, reason, detail.
type Unfit = (String, String, &'static str, String);

/// What the store says of an entry before the import writes.
enum Look {
    Create,
    /// Its label's claim is this source's earlier import, saying something else.
    Supersede,
    /// Its label's claim (or, retired since, a version of it) says the same.
    Already,
    /// Another writer's live claim has its label.
    Held {
        agent: String,
        slug: String,
    },
    /// A claim there before says nearly the same under another label.
    Near {
        slug: String,
        label: String,
        score: f64,
    },
}

/// One store's entries: checked, looked up, then (unless a dry run) written.
async fn into_store(
    svc: &Service,
    source: Source,
    tgt: &Target,
    entries: Vec<Entry>,
    dry_run: bool,
    progress: &mut Tick<'_>,
) -> Result<StoreTally> {
    let mut tally = StoreTally::new(tgt.name());
    let agent = source.agent();
    let (checkout, origin) = match tgt {
        Target::Brain(fp, root) => (
            Some(
                svc.owner
                    .registry
                    .manifest(fp)
                    .map(|m| m.live_checkout())
                    .unwrap_or_else(|| PathBuf::from(root)),
            ),
            root.clone(),
        ),
        Target::Medulla => (None, "medulla".to_string()),
    };
    let home = svc.owner.config.user_home.clone();
    let who = agent.clone();
    let prepared = tokio::task::spawn_blocking(move || {
        prepare(entries, &who, &origin, checkout.as_deref(), home.as_deref())
    })
    .await
    .map_err(|e| OwnerError::Internal(format!("checking the entries panicked: {e}")))?;
    let mut ready = Vec::with_capacity(prepared.len());
    for p in prepared {
        match p {
            Ok(r) => ready.push(r),
            Err((label, at, reason, detail)) => {
                tally.refuse(&label, &at, reason, detail);
                progress.add(1);
            }
        }
    }
    // Everything looked up first, so near-duplicates are the claims there before.
    let store = tgt.store();
    let mut looked = Vec::with_capacity(ready.len());
    for chunk in ready.chunks(BATCH) {
        looked.extend(look(svc, &store, chunk, &agent).await?);
    }
    let mut batch: Vec<Ready> = Vec::new();
    let mut written = 0;
    for (r, l) in ready.into_iter().zip(looked) {
        match l {
            Look::Already => {
                tally.already += 1;
                progress.add(1);
            }
            Look::Held { agent, slug } => {
                tally.refuse(
                    &r.input.label,
                    &r.at,
                    "label held",
                    format!("{agent}'s live claim {slug} has this label: retire it, or rename one, to import this entry"),
                );
                progress.add(1);
            }
            Look::Near { slug, label, score } => {
                tally.near_duplicates.push(NearEntry {
                    label: r.input.label,
                    evidence: r.at,
                    existing_slug: slug,
                    existing_label: label,
                    score,
                });
                progress.add(1);
            }
            Look::Supersede if dry_run => {
                tally.superseded(&r.input.label);
                progress.add(1);
            }
            Look::Create if dry_run => {
                tally.created(&r.input.label);
                progress.add(1);
            }
            Look::Supersede | Look::Create => {
                batch.push(r);
                if batch.len() >= BATCH {
                    written += batch.len();
                    write(svc, tgt, std::mem::take(&mut batch), &mut tally, progress).await?;
                }
            }
        }
    }
    if !batch.is_empty() {
        written += batch.len();
        write(svc, tgt, batch, &mut tally, progress).await?;
    }
    if written > 0 && store != StoreId::Medulla {
        if let Err(e) = svc.owner.bulk_written(&store).await {
            tracing::debug!(error = %e, "could not part an imported brain's fresh vectors");
        }
    }
    Ok(tally)
}

/// Each entry as its store's memorize input: a label unique in the store (a repeated
/// one numbered), its evidence (where it was read, relative to the brain's checkout when
/// inside it, else `~/…` or absolute; then the source's own references), the floor (a
/// secret refuses the entry; nothing of it is kept), the claim's checks, the content hash.
fn prepare(
    entries: Vec<Entry>,
    agent: &str,
    origin: &str,
    checkout: Option<&Path>,
    home: Option<&Path>,
) -> Vec<std::result::Result<Ready, Unfit>> {
    let mut slugs = std::collections::HashSet::new();
    entries
        .into_iter()
        .map(|e| {
            let anchor_at = checkout.and_then(|c| match &e.scope {
                Scope::Project(p) if e.file.starts_with(p) => Some(p.clone()),
                _ => e.file.starts_with(c).then(|| c.to_path_buf()),
            });
            let at = location(&e, anchor_at.as_deref(), home);
            let base = match e.label.trim() {
                "" => sources::text::first_words(&e.text),
                l => l.to_string(),
            };
            let mut label = base.clone();
            let mut n = 1;
            while !slugs.insert(brains::slugify(&label)) {
                n += 1;
                label = format!("{base} ({n})");
            }
            let mut evidence = vec![at.clone()];
            evidence.extend(e.refs);
            let findings =
                crate::floor::scan(crate::floor::claim_fields(&label, &e.text, &evidence));
            if !findings.is_empty() {
                return Err((label, at, "secret found", crate::floor::summary(&findings)));
            }
            let mut input = MemorizeInput {
                label,
                text: e.text,
                source_agent: agent.to_string(),
                strength: Strength::Observed,
                evidence,
                origin_brain: Some(origin.to_string()),
                created: e.created,
                act: Some(ActKind::Import),
                ..Default::default()
            };
            let slug = match input.validate() {
                Ok(s) => s,
                Err(err) => return Err((input.label, at, "invalid", err.to_string())),
            };
            let hash = brains::claim::content_hash(
                &input.label,
                &input.text,
                input.strength,
                &input.evidence,
            );
            Ok(Ready {
                slug,
                at,
                input,
                hash,
                anchor_at,
            })
        })
        .collect()
}

/// `file:line` or `file:start-end`, the file relative to `anchor` when inside it, else
/// under `~/` when in the home directory.
fn location(e: &Entry, anchor: Option<&Path>, home: Option<&Path>) -> String {
    let file = match anchor.and_then(|a| e.file.strip_prefix(a).ok()) {
        Some(rel) => rel.display().to_string(),
        None => match home.and_then(|h| e.file.strip_prefix(h).ok()) {
            Some(rel) => format!("~/{}", rel.display()),
            None => e.file.display().to_string(),
        },
    };
    match e.lines {
        (a, b) if a == b => format!("{file}:{a}"),
        (a, b) => format!("{file}:{a}-{b}"),
    }
}

/// What `store` holds of each entry's label, and for an entry it holds nothing of, the
/// nearest claim of another writer that says nearly the same: one read for the chunk.
async fn look(svc: &Service, store: &StoreId, chunk: &[Ready], agent: &str) -> Result<Vec<Look>> {
    let items: Arc<Vec<(String, String, String, String)>> = Arc::new(
        chunk
            .iter()
            .map(|r| {
                (
                    r.slug.clone(),
                    r.input.label.clone(),
                    r.input.text.clone(),
                    r.hash.clone(),
                )
            })
            .collect(),
    );
    let agent = agent.to_string();
    svc.owner
        .read(store, move |s| {
            let slugs: Vec<String> = items.iter().map(|i| i.0.clone()).collect();
            let found = s.histories(&slugs)?;
            items
                .iter()
                .zip(found)
                .map(|((slug, label, text, hash), versions)| {
                    if let Some(l) = versions.iter().find(|c| c.state == ClaimState::Authored) {
                        return Ok(if &l.content_hash == hash {
                            Look::Already
                        } else if l.source_agent == agent {
                            Look::Supersede
                        } else {
                            Look::Held {
                                agent: l.source_agent.clone(),
                                slug: slug.clone(),
                            }
                        });
                    }
                    // Imported once, retired or demoted since: left so.
                    if versions.iter().any(|c| &c.content_hash == hash) {
                        return Ok(Look::Already);
                    }
                    let near = s
                        .similar(label, text, Some(slug.as_str()))?
                        .into_iter()
                        .find(|h| h.claim.source_agent != agent);
                    Ok(match near {
                        Some(h) => Look::Near {
                            slug: h.claim.slug,
                            label: h.claim.label,
                            score: (h.score * 1000.0).round() / 1000.0,
                        },
                        None => Look::Create,
                    })
                })
                .collect()
        })
        .await
}

/// Write a batch: a brain's in one `memorize_many` (evidence inside its checkout
/// anchored first), the medulla's through the audit actor one by one; each outcome
/// counted.
async fn write(
    svc: &Service,
    tgt: &Target,
    batch: Vec<Ready>,
    tally: &mut StoreTally,
    progress: &mut Tick<'_>,
) -> Result<()> {
    let n = batch.len();
    let mut meta = Vec::with_capacity(n);
    let mut inputs = Vec::with_capacity(n);
    let mut dirs: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
    for (i, r) in batch.into_iter().enumerate() {
        if let Some(d) = r.anchor_at {
            dirs.entry(d).or_default().push(i);
        }
        meta.push((r.input.label.clone(), r.at));
        inputs.push(r.input);
    }
    let outcomes: Vec<std::result::Result<MemorizeOutcome, String>> = match tgt {
        Target::Brain(fp, _) => {
            let now = svc.now().ms;
            for (dir, at) in dirs {
                let evidence: Vec<Vec<String>> =
                    at.iter().map(|&i| inputs[i].evidence.clone()).collect();
                let anchored = tokio::task::spawn_blocking(move || {
                    crate::service::anchors::take_many(&dir, &evidence, now)
                })
                .await
                .unwrap_or_default();
                for (i, a) in at.into_iter().zip(anchored) {
                    inputs[i].anchors = a;
                }
            }
            let ahead = (0..n).map(|_| None).collect();
            svc.owner
                .memorize_many(&StoreId::brain(fp), inputs, ahead)
                .await?
                .into_iter()
                .map(|o| o.map_err(|e| e.to_string()))
                .collect()
        }
        Target::Medulla => {
            let mut out = Vec::with_capacity(n);
            for input in inputs {
                let o = svc
                    .owner
                    .audit(|reply| AuditMsg::Import {
                        input,
                        outdated_by: None,
                        reply,
                    })
                    .await;
                out.push(o.map_err(|e| e.to_string()));
            }
            out
        }
    };
    for ((label, at), o) in meta.into_iter().zip(outcomes) {
        match o {
            Ok(MemorizeOutcome::Created { .. }) => tally.created(&label),
            Ok(MemorizeOutcome::Superseded { .. }) => tally.superseded(&label),
            Ok(MemorizeOutcome::Unchanged { .. }) => tally.already += 1,
            Err(e) => tally.refuse(&label, &at, "refused", e),
        }
    }
    progress.add(n);
    Ok(())
}
