//! The field-report mailbox. Agents append letters to the spool
//! (`$MEDULLA_HOME/field-reports.jsonl`, append-only, never rewritten); the distributor
//! actor files each letter into exactly one box: `<repo>/.medulla/inbox.jsonl` for a
//! letter that names a project (brain or no brain), `$MEDULLA_HOME/inbox.jsonl` for a
//! genuinely projectless one, or leaves it pending in the spool when its repository is
//! not on this machine. Only the distributor writes boxes.

pub mod letter;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use letter::{counts, destination, fates, read_letters, Context, Destination, Letter};

pub const SPOOL: &str = "field-reports.jsonl";
pub const MEDULLA_BOX: &str = "inbox.jsonl";
const STATE: &str = "mailbox-state.json";

/// A project's box path.
pub fn box_path(repo: &Path) -> PathBuf {
    repo.join(".medulla").join("inbox.jsonl")
}

/// Append one letter to the spool with O_APPEND, as one line. Returns its raw line.
pub fn append_to_spool(home: &Path, body: &Value) -> std::io::Result<String> {
    let line = serde_json::to_string(body).expect("a JSON value serializes");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(home.join(SPOOL))?;
    // One write call per line: appends from several writers never interleave.
    f.write_all(format!("{line}\n").as_bytes())?;
    f.sync_data()?;
    Ok(line)
}

/// What the distributor remembers between runs.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct State {
    /// Bytes of the spool already read.
    pub offset: u64,
    /// Letters whose repository is absent: id → (repo, raw line).
    pub pending: BTreeMap<String, (String, String)>,
    /// Letters refused at the hygiene floor: id → what matched (redacted).
    pub refused: BTreeMap<String, String>,
    /// Spool lines that are not JSON objects: kept in the spool, counted here.
    pub garbage_lines: u64,
    /// Letters filed, by box path.
    pub filed: BTreeMap<String, u64>,
}

/// Shared, read by request handlers: open counts per box and the last state.
#[derive(Default)]
pub struct MailboxView {
    pub open_by_repo: RwLock<HashMap<String, usize>>,
    pub state: RwLock<State>,
    /// Where recent letters went, whichever pass filed them (bounded).
    pub destinations: RwLock<HashMap<String, Value>>,
}

fn load_state(home: &Path) -> State {
    std::fs::read(home.join(STATE))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn save_state(home: &Path, st: &State) -> std::io::Result<()> {
    let tmp = home.join(format!("{STATE}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(st)?)?;
    std::fs::rename(tmp, home.join(STATE))
}

fn ids_in(path: &Path) -> HashSet<String> {
    read_letters(path)
        .map(|(ls, _)| ls.into_iter().map(|l| l.id).collect())
        .unwrap_or_default()
}

/// Append raw lines to a box, skipping ids it already holds (boxes travel with git and
/// may hold letters this spool never saw; those are never touched).
fn file_into(box_file: &Path, letters: &[&Letter]) -> std::io::Result<u64> {
    let have = ids_in(box_file);
    let new: Vec<&&Letter> = letters.iter().filter(|l| !have.contains(&l.id)).collect();
    if new.is_empty() {
        return Ok(0);
    }
    if let Some(dir) = box_file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(box_file)?;
    let mut buf = String::new();
    let mut seen = HashSet::new();
    for l in new {
        if seen.insert(&l.id) {
            buf.push_str(&l.raw);
            buf.push('\n');
        }
    }
    f.write_all(buf.as_bytes())?;
    f.sync_data()?;
    Ok(seen.len() as u64)
}

/// What one distribution pass did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct PassReport {
    pub read: u64,
    pub filed: u64,
    pub pending: usize,
    pub refused: usize,
    pub garbage_lines: u64,
    /// id → where it went, for the letters read in this pass.
    pub destinations: BTreeMap<String, Value>,
    pub errors: Vec<String>,
}

/// One distribution pass: read the spool from the saved offset, file what can be filed,
/// retry pending letters, save the new offset.
pub fn distribute(home: &Path, roots: &[PathBuf]) -> std::io::Result<(PassReport, State)> {
    let mut st = load_state(home);
    let mut report = PassReport::default();
    let spool = home.join(SPOOL);
    let mut fresh = Vec::new();
    if let Ok(mut f) = std::fs::File::open(&spool) {
        let len = f.metadata()?.len();
        if len < st.offset {
            // The spool is never truncated by medulla; if something else did, start over.
            // Dedup by id keeps this from filing anything twice.
            report.errors.push(format!(
                "the spool shrank below the saved offset ({len} < {}); rescanned from the start",
                st.offset
            ));
            st.offset = 0;
        }
        f.seek(SeekFrom::Start(st.offset))?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)?;
        // Only complete lines: a writer may be mid-append.
        let complete = bytes
            .iter()
            .rposition(|b| *b == b'\n')
            .map(|i| i + 1)
            .unwrap_or(0);
        for line in bytes[..complete].split(|b| *b == b'\n') {
            let text = String::from_utf8_lossy(line);
            if text.trim().is_empty() {
                continue;
            }
            report.read += 1;
            match Letter::parse(&text) {
                Some(l) => fresh.push(l),
                None => st.garbage_lines += 1,
            }
        }
        st.offset += complete as u64;
    }
    let home_dir = std::env::var_os("HOME").map(PathBuf::from);
    let medulla_home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    let cx = Context {
        home_dir: home_dir.as_deref(),
        medulla_home: &medulla_home,
        roots,
    };
    let mut retry: Vec<Letter> = st
        .pending
        .values()
        .filter_map(|(_, raw)| Letter::parse(raw))
        .collect();
    retry.append(&mut fresh);
    let mut by_box: BTreeMap<PathBuf, Vec<&Letter>> = BTreeMap::new();
    for l in &retry {
        let findings = brains::hygiene::scan(&l.raw);
        if !findings.is_empty() {
            let what = findings
                .iter()
                .map(|f| f.to_string())
                .collect::<Vec<_>>()
                .join("; ");
            report
                .destinations
                .insert(l.id.clone(), json!({ "to": "refused", "found": what }));
            st.refused.insert(l.id.clone(), what);
            st.pending.remove(&l.id);
            continue;
        }
        match destination(l, &cx) {
            Destination::Project { repo } => {
                report
                    .destinations
                    .insert(l.id.clone(), json!({ "to": "project", "repo": repo }));
                by_box.entry(box_path(&repo)).or_default().push(l);
            }
            Destination::Medulla => {
                report
                    .destinations
                    .insert(l.id.clone(), json!({ "to": "medulla" }));
                by_box.entry(home.join(MEDULLA_BOX)).or_default().push(l);
            }
            Destination::Pending { repo } => {
                report.destinations.insert(
                    l.id.clone(),
                    json!({ "to": "pending_distribution", "repo": repo }),
                );
                st.pending.insert(l.id.clone(), (repo, l.raw.clone()));
            }
        }
    }
    for (box_file, letters) in &by_box {
        match file_into(box_file, letters) {
            Ok(n) => {
                report.filed += n;
                *st.filed
                    .entry(box_file.to_string_lossy().into_owned())
                    .or_default() += n;
                for l in letters {
                    st.pending.remove(&l.id);
                }
            }
            Err(e) => {
                // Not filed: keep them pending so the next pass tries again.
                report
                    .errors
                    .push(format!("cannot write {}: {e}", box_file.display()));
                for l in letters {
                    st.pending.insert(
                        l.id.clone(),
                        (box_file.to_string_lossy().into_owned(), l.raw.clone()),
                    );
                }
            }
        }
    }
    report.pending = st.pending.len();
    report.refused = st.refused.len();
    report.garbage_lines = st.garbage_lines;
    save_state(home, &st)?;
    Ok((report, st))
}

/// Every box the owner knows of: each registered root's, every box ever filed into,
/// and the medulla's.
pub fn known_boxes(home: &Path, roots: &[PathBuf], st: &State) -> Vec<PathBuf> {
    let mut boxes: Vec<PathBuf> = roots.iter().map(|r| box_path(r)).collect();
    boxes.extend(st.filed.keys().map(PathBuf::from));
    boxes.push(home.join(MEDULLA_BOX));
    boxes.sort();
    boxes.dedup();
    boxes
}

/// The union of the spool and every known box, each letter once, with fates, and the
/// boxes that could not be read named.
pub fn sweep(home: &Path, roots: &[PathBuf]) -> Value {
    let st = load_state(home);
    let (spool, garbage) = read_letters(&home.join(SPOOL)).unwrap_or_default();
    let mut all: Vec<Letter> = Vec::new();
    let mut seen = HashSet::new();
    let mut where_found: HashMap<String, Vec<String>> = HashMap::new();
    for l in spool {
        where_found
            .entry(l.id.clone())
            .or_default()
            .push("spool".into());
        if seen.insert(l.id.clone()) {
            all.push(l);
        }
    }
    let mut unreachable = Vec::new();
    for b in known_boxes(home, roots, &st) {
        let repo_dir = b.parent().and_then(Path::parent).map(Path::to_path_buf);
        if b != home.join(MEDULLA_BOX) && !repo_dir.as_ref().is_some_and(|d| d.is_dir()) {
            unreachable.push(json!({ "box": b, "why": "the repository is not on this machine" }));
            continue;
        }
        match read_letters(&b) {
            Ok((ls, _)) => {
                for l in ls {
                    where_found
                        .entry(l.id.clone())
                        .or_default()
                        .push(b.to_string_lossy().into_owned());
                    if seen.insert(l.id.clone()) {
                        all.push(l);
                    }
                }
            }
            Err(e) => unreachable.push(json!({ "box": b, "why": e.to_string() })),
        }
    }
    for (repo, _) in st.pending.values() {
        unreachable.push(json!({ "box": box_path(Path::new(repo)), "why": "pending: the repository is not on this machine" }));
    }
    let f = fates(&all, &all);
    let letters: Vec<Value> = all
        .iter()
        .map(|l| letter_json(l, &f, &all, where_found.get(&l.id)))
        .collect();
    json!({
        "letters": letters,
        "counts": counts(&f),
        "unreachable": unreachable,
        "spool_garbage_lines": garbage,
        "pending_distribution": st.pending.len(),
        "refused_at_floor": st.refused.len(),
    })
}

fn letter_json(
    l: &Letter,
    f: &HashMap<String, letter::Fate>,
    all: &[Letter],
    found_in: Option<&Vec<String>>,
) -> Value {
    let answered_by: Vec<&str> = all
        .iter()
        .filter(|o| o.answers().contains(&l.id))
        .map(|o| o.id.as_str())
        .collect();
    let mut v = json!({
        "id": l.id,
        "state": f.get(&l.id),
        "answers": l.answers(),
        "answered_by": answered_by,
        "letter": l.body,
    });
    for k in [
        "ts", "agent", "class", "kind", "repo", "brain", "tool", "what", "expected", "snippet",
    ] {
        if let Some(x) = l.body.get(k) {
            v[k] = x.clone();
        }
    }
    if let Some(w) = found_in {
        v["found_in"] = json!(w);
    }
    v
}

/// One box's letters with fates (answers looked up across the spool and the box).
pub fn read_box(home: &Path, box_file: &Path) -> std::io::Result<(Vec<Value>, Value)> {
    let (spool, _) = read_letters(&home.join(SPOOL)).unwrap_or_default();
    read_box_with(&spool, box_file)
}

/// One box's letters with fates, the spool already read (answers may live in either).
fn read_box_with(spool: &[Letter], box_file: &Path) -> std::io::Result<(Vec<Value>, Value)> {
    let (letters, _) = read_letters(box_file)?;
    let mut all = letters.clone();
    let ids: HashSet<&str> = letters.iter().map(|l| l.id.as_str()).collect();
    all.extend(
        spool
            .iter()
            .filter(|l| !ids.contains(l.id.as_str()))
            .cloned(),
    );
    let f = fates(&letters, &all);
    let rows = letters
        .iter()
        .map(|l| letter_json(l, &f, &all, None))
        .collect();
    Ok((rows, counts(&f)))
}

/// Each root's open count, reading the spool once for all of them.
fn open_counts(home: &Path, roots: &[PathBuf]) -> HashMap<String, usize> {
    let (spool, _) = read_letters(&home.join(SPOOL)).unwrap_or_default();
    roots
        .iter()
        .filter_map(|r| {
            let (_, c) = read_box_with(&spool, &box_path(r)).ok()?;
            Some((
                r.to_string_lossy().into_owned(),
                c["open"].as_u64().unwrap_or(0) as usize,
            ))
        })
        .collect()
}

/// Messages to the distributor.
pub enum MailboxMsg {
    /// Run a pass now; reply with its report.
    Distribute(Option<RpcReplyPort<Result<PassReport, String>>>),
    /// Something may have changed at this instant (a file event, the periodic tick). A
    /// pass that started after it has already seen the change, so bursts of events
    /// coalesce into one pass instead of queueing one each.
    Wake(std::time::Instant),
}

#[derive(Clone)]
pub struct DistributorArgs {
    pub home: PathBuf,
    pub roots: Arc<dyn Fn() -> Vec<PathBuf> + Send + Sync>,
    pub view: Arc<MailboxView>,
    pub rescan_every: Duration,
}

pub struct DistributorState {
    args: DistributorArgs,
    last_pass_started: Option<std::time::Instant>,
    _watcher: Option<notify::RecommendedWatcher>,
}

pub struct Distributor;

impl Actor for Distributor {
    type Msg = MailboxMsg;
    type State = DistributorState;
    type Arguments = DistributorArgs;

    async fn pre_start(
        &self,
        me: ActorRef<MailboxMsg>,
        args: DistributorArgs,
    ) -> Result<DistributorState, ActorProcessingErr> {
        use notify::Watcher;
        std::fs::create_dir_all(&args.home)?;
        // Watch the directory: the spool may not exist yet, and editors replace files.
        let wake = me.clone();
        let spool_name = std::ffi::OsString::from(SPOOL);
        let watcher = notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
            if let Ok(ev) = ev {
                if ev
                    .paths
                    .iter()
                    .any(|p| p.file_name() == Some(spool_name.as_os_str()))
                {
                    let _ = wake.cast(MailboxMsg::Wake(std::time::Instant::now()));
                }
            }
        })
        .and_then(|mut w| {
            w.watch(&args.home, notify::RecursiveMode::NonRecursive)
                .map(|_| w)
        });
        let watcher = match watcher {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch the spool; relying on the periodic rescan");
                None
            }
        };
        // The safety net: a periodic pass whatever the watcher says.
        let tick = me.clone();
        let every = args.rescan_every;
        tokio::spawn(async move {
            let mut iv = tokio::time::interval(every);
            loop {
                iv.tick().await;
                if tick
                    .cast(MailboxMsg::Wake(std::time::Instant::now()))
                    .is_err()
                {
                    break;
                }
            }
        });
        Ok(DistributorState {
            args,
            last_pass_started: None,
            _watcher: watcher,
        })
    }

    async fn handle(
        &self,
        _me: ActorRef<MailboxMsg>,
        msg: MailboxMsg,
        st: &mut DistributorState,
    ) -> Result<(), ActorProcessingErr> {
        let reply = match msg {
            MailboxMsg::Distribute(reply) => reply,
            MailboxMsg::Wake(at) => {
                if st.last_pass_started.is_some_and(|started| started >= at) {
                    return Ok(());
                }
                None
            }
        };
        st.last_pass_started = Some(std::time::Instant::now());
        let home = st.args.home.clone();
        let roots = (st.args.roots)();
        let view = st.args.view.clone();
        let result = tokio::task::spawn_blocking(move || {
            let (report, state) = distribute(&home, &roots)?;
            // Keep each brain's open count current so listings never read N boxes; a
            // pass that read and filed nothing changes no count, unless roots changed.
            let known = view.open_by_repo.read().expect("mailbox view lock").len();
            let open = if report.read > 0 || report.filed > 0 || known != roots.len() {
                open_counts(&home, &roots)
            } else {
                view.open_by_repo.read().expect("mailbox view lock").clone()
            };
            *view.open_by_repo.write().expect("mailbox view lock") = open;
            *view.state.write().expect("mailbox view lock") = state;
            let mut d = view.destinations.write().expect("mailbox view lock");
            if d.len() > 10_000 {
                d.clear();
            }
            d.extend(
                report
                    .destinations
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
            Ok::<_, std::io::Error>(report)
        })
        .await?
        .map_err(|e| e.to_string());
        if let Err(e) = &result {
            tracing::error!(error = %e, "distribution pass failed");
        }
        if let Some(r) = reply {
            let _ = r.send(result);
        }
        Ok(())
    }
}
