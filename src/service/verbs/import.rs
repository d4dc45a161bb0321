//! `import`: a directory of legacy `.light.md` files (and `.history/` versions) into a
//! brain or the medulla, or triaged across brains. Count-conserving, idempotent, with a
//! dry run: files seen = imported live + into history + refused. With `from`, another
//! tool's memory instead (`from.rs`): each entry into the store it belongs to.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use brains::ClaimState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::triage::{self, CompiledRule};
use crate::error::{OwnerError, Result};
use crate::roster::Manifest;
use crate::service::route::find_brain;
use crate::service::verb::{Answer, Cx, Effect, Verb};
use crate::service::Service;
use crate::store_id::{Fingerprint, StoreId};
use read::{Checked, Loaded, Parsed};
use sources::Source;
use write::Run;

mod from;
pub mod from_report;
mod from_route;
mod read;
pub mod sources;
mod write;

#[derive(Debug, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
#[command(group(clap::ArgGroup::new("target").args(["brain", "medulla", "triage"])))]
pub struct ImportArgs {
    /// Absolute path of a directory of `.light.md` files (and optionally `.history/`);
    /// with `from`, where that tool keeps its memory (a file or directory; the tool's own
    /// place when left out).
    #[serde(default)]
    #[arg(
        value_name = "PATH",
        required_unless_present = "from",
        help = "The directory of .light.md files (and .history/); with --from, where that tool keeps its memory [default: its own place]"
    )]
    pub dir: Option<String>,
    /// Another tool's memory: `claude` (Claude Code's auto memory), `codex`, `serena`,
    /// `basic-memory` or `mcp-memory` (the MCP reference memory server's JSONL). Each
    /// entry becomes a claim of the store it belongs to: a project's into its brain, the
    /// person's into the medulla.
    #[serde(default)]
    #[arg(
        long,
        value_enum,
        value_name = "SOURCE",
        conflicts_with_all = ["medulla", "triage"],
        help = "Another tool's memory: each entry into its project's brain, the person's into the medulla"
    )]
    pub from: Option<Source>,
    /// Target brain (root or fingerprint); or set `medulla: true`. With `from`: the brain
    /// every entry that is not the person's goes to.
    #[arg(
        long,
        value_name = "ROOT",
        required_unless_present_any = ["medulla", "triage", "from"],
        help = "Into this brain (its root or fingerprint); with --from, every entry not about the person"
    )]
    pub brain: Option<String>,
    #[serde(default)]
    #[arg(long, help = "Into the medulla (the founder's only)")]
    pub medulla: bool,
    /// Triage a mixed legacy store: the absolute path of a rules file (TOML) sending each
    /// claim to a project brain by path/label/text patterns; unmatched and ambiguous
    /// claims stay in the medulla. Replaces `brain`/`medulla`.
    #[arg(
        long,
        value_name = "RULES.toml",
        help = "Split a mixed legacy store by the rules in this TOML file (see docs/OPERATIONS.md)"
    )]
    pub triage: Option<String>,
    /// Count and check everything, write nothing.
    #[serde(default)]
    #[arg(long)]
    pub dry_run: bool,
    /// Who imports (recorded on every act). Defaults to `human:founder`.
    #[arg(skip)]
    pub agent_id: Option<String>,
}

/// One file not imported, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Refusal {
    pub file: PathBuf,
    /// `unreadable`, `unparseable`, `secret found`, `duplicate`, `invalid` or `refused`.
    pub reason: Cow<'static, str>,
    pub detail: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Ambiguous {
    pub slug: String,
    pub file: PathBuf,
    pub candidates: Vec<String>,
}

/// The triage gate: every live claim of the legacy store is live in exactly one store.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CountGate {
    pub baseline: usize,
    pub placed: usize,
    pub holds: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ImportReport {
    pub dry_run: bool,
    /// The target root, `medulla`, or `triage`.
    pub target: String,
    pub live_by_store: BTreeMap<String, usize>,
    pub ambiguous_kept_in_medulla: Vec<Ambiguous>,
    pub count_gate: CountGate,
    pub files_seen: usize,
    pub imported_live: usize,
    pub into_history: usize,
    pub refused: usize,
    pub refusals: Vec<Refusal>,
    pub origin_unknown: usize,
    pub count_conserved: bool,
    /// An import from another tool (`from`): per store, what it did or would do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Box<from_report::FromReport>>,
}

impl Answer for ImportReport {
    /// A dry run writes nothing.
    fn wrote(&self) -> bool {
        !self.dry_run
    }
}

pub struct Import;

impl Verb for Import {
    const NAME: &'static str = "import";
    const DESCRIPTION: &'static str = "Import a directory of legacy .light.md claim files (and .history/ versions) into a brain or the medulla; or, with from, another tool's memory (claude, codex, serena, basic-memory, mcp-memory), each entry into its project's brain or, the person's, the medulla. Count-conserving report; dry_run to check first.";
    const EFFECT: Effect = Effect::Write;
    const IDEMPOTENT: bool = true;
    type Args = ImportArgs;
    type Answer = ImportReport;

    async fn run(cx: Cx<'_>, a: ImportArgs) -> Result<ImportReport> {
        if let Some(source) = a.from {
            return from::run(cx, source, a).await;
        }
        let svc = cx.svc;
        let dir = a.dir.as_deref().ok_or_else(|| {
            OwnerError::BadInput(
                "give dir (a directory of .light.md files), or from (another tool's memory)".into(),
            )
        })?;
        let dir = super::export::dir_arg(dir)?;
        if !dir.is_dir() {
            return Err(OwnerError::BadInput(format!(
                "{} is not an existing directory",
                dir.display()
            )));
        }
        if a.medulla {
            svc.founder_only(cx.input, "importing into the medulla")?;
        }
        let plan = match &a.triage {
            Some(p) if a.brain.is_none() && !a.medulla => {
                svc.founder_only(cx.input, "triage of a legacy store across brains")?;
                Plan::Triage(triage::load(svc, &super::export::dir_arg(p)?)?)
            }
            Some(_) => {
                return Err(OwnerError::BadInput(
                    "triage chooses each claim's store: do not also name brain or medulla".into(),
                ))
            }
            None => Plan::Fixed(target(cx, a.brain.as_deref(), a.medulla)?),
        };
        let agent = a.agent_id.clone().unwrap_or_else(|| "human:founder".into());
        brains::claim::validate_agent_id(&agent)?;
        // Vectors worked out ahead only for a model writes wait for: a deferring one's
        // come from the brain's background embedding.
        let embedder = svc.owner.registry.model.current().filter(|e| !e.deferred());
        let mut run = Run::new(&plan, a.dry_run, agent, embedder);
        let started = std::time::Instant::now();
        let progress = cx.progress.clone();
        let read = tokio::task::spawn_blocking(move || {
            read::read_dir(&dir, &|done, total| {
                progress.tick(done as u64, Some(total as u64), "files read")
            })
        })
        .await
        .map_err(|e| OwnerError::Internal(format!("reading the legacy files panicked: {e}")))?;
        let groups = run.group(read);
        let read_ms = started.elapsed().as_millis() as u64;
        let total = groups.values().map(Vec::len).sum::<usize>() as u64;
        let mut done = 0u64;
        cx.progress.tick(0, Some(total), "files");
        // Slugs a chunk at a time: checked (secrets, validation, hashes) on the cores the
        // chunk before leaves idle while it is written; then their duplicates looked up in
        // one read of each store, and their versions queued for the store's next batch.
        let mut slugs = groups.into_iter();
        let mut next = spawn_check(&mut slugs);
        loop {
            let checked = next.await.map_err(|e| {
                OwnerError::Internal(format!("checking the legacy files panicked: {e}"))
            })?;
            if checked.is_empty() {
                break;
            }
            next = spawn_check(&mut slugs);
            let mut chunk = Vec::with_capacity(checked.len());
            for Checked {
                slug,
                files,
                versions,
            } in checked
            {
                let versions: Vec<Parsed> = versions
                    .into_iter()
                    .filter_map(|v| v.map_err(|r| run.refused.push(r)).ok())
                    .collect();
                if versions.is_empty() {
                    done += files as u64;
                    continue;
                }
                chunk.push(run.prepare(&plan, slug, versions, files));
            }
            let t = std::time::Instant::now();
            let existing = lookup(svc, &chunk).await?;
            run.lookup_ms += t.elapsed().as_millis() as u64;
            for (g, existing) in chunk.into_iter().zip(existing) {
                done += g.files as u64;
                run.replay(svc, g, existing).await?;
                cx.progress.tick(done, Some(total), "files");
            }
        }
        run.flush_all(svc).await?;
        tracing::info!(
            files = run.seen,
            read_ms,
            lookup_ms = run.lookup_ms,
            anchor_ms = run.anchor_ms,
            write_ms = run.write_ms,
            demote_ms = run.demote_ms,
            total_ms = started.elapsed().as_millis() as u64,
            "import done"
        );
        Ok(run.report(&plan))
    }
}

/// Where claims go.
#[derive(Debug, Clone)]
enum Target {
    /// A brain, by fingerprint and root.
    Brain(Fingerprint, String),
    Medulla,
}

impl Target {
    fn name(&self) -> String {
        match self {
            Target::Brain(_, root) => root.clone(),
            Target::Medulla => "medulla".to_string(),
        }
    }

    fn store(&self) -> StoreId {
        match self {
            Target::Brain(fp, _) => StoreId::brain(fp),
            Target::Medulla => StoreId::Medulla,
        }
    }
}

enum Plan {
    Fixed(Target),
    Triage(Vec<CompiledRule>),
}

fn target(cx: Cx<'_>, brain: Option<&str>, medulla: bool) -> Result<Target> {
    match (brain, medulla) {
        (Some(_), true) | (None, false) => Err(OwnerError::BadInput(
            "name exactly one target: brain, or medulla: true".into(),
        )),
        (None, true) => Ok(Target::Medulla),
        (Some(b), false) => {
            let m: Manifest =
                find_brain(&cx.svc.owner.registry, b).ok_or_else(|| OwnerError::UnknownBrain {
                    name: b.to_string(),
                })?;
            cx.svc
                .authorize_brain(cx.routed, cx.input, &m, "import into")?;
            Ok(Target::Brain(m.fingerprint, m.root))
        }
    }
}

/// How many slugs have their duplicates looked up in one read of a store (and are
/// checked together, beside the writes of the chunk before).
const LOOKUP: usize = 4096;

/// How many versions one batch writes (one redb transaction, one embedding call). Larger
/// batches commit less often and give the embedding and tokenizing more to share among
/// the cores (at 100 000 files, 1 024 wrote 23% faster than 256 lexical-only, 4 096 10%
/// faster than 1 024 hybrid, and 4 096 ~4% faster than 2 048 once a batch's embedding
/// overlapped its transaction); but a batch holds the brain's store, and its readers
/// wait, for its whole write (~0.2 s at 4 096), so it stays well under a second.
const BATCH: usize = 4096;

/// The next chunk of slugs, checked on a blocking thread (an empty list when none is
/// left).
fn spawn_check(
    slugs: &mut impl Iterator<Item = (String, Vec<Loaded>)>,
) -> tokio::task::JoinHandle<Vec<Checked>> {
    let chunk: Vec<(String, Vec<Loaded>)> = slugs.by_ref().take(LOOKUP).collect();
    tokio::task::spawn_blocking(move || read::check(chunk))
}

/// One slug's versions, oldest first, ready to replay into their store.
struct Group {
    slug: String,
    tgt: Target,
    versions: Vec<Parsed>,
    /// Files this group stood for when it was read (progress counts them).
    files: usize,
}

impl Group {
    fn store(&self) -> StoreId {
        self.tgt.store()
    }
}

/// What a store already holds of one slug: every version's (content hash, created),
/// and which of them is live.
#[derive(Default, Clone)]
struct Existing {
    versions: HashSet<(String, i64)>,
    live: Option<(String, i64)>,
}

/// What each group's store already holds of its slug, in the order of `groups`: one
/// read per store for the whole chunk.
async fn lookup(svc: &Service, groups: &[Group]) -> Result<Vec<Existing>> {
    let mut by_store: HashMap<StoreId, Vec<usize>> = HashMap::new();
    for (i, g) in groups.iter().enumerate() {
        by_store.entry(g.store()).or_default().push(i);
    }
    let mut out = vec![Existing::default(); groups.len()];
    for (store, at) in by_store {
        let slugs = at.iter().map(|&i| groups[i].slug.clone()).collect();
        let found = svc.owner.histories(&store, slugs).await?;
        for (i, versions) in at.into_iter().zip(found) {
            let mut e = Existing::default();
            for c in versions {
                let key = (c.content_hash, c.created);
                if c.state == ClaimState::Authored {
                    e.live = Some(key.clone());
                }
                e.versions.insert(key);
            }
            out[i] = e;
        }
    }
    Ok(out)
}
