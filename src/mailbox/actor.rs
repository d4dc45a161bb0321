//! The distributor actor: wakes on file events for the spool, a periodic rescan and every
//! `report`, and runs distribution passes one at a time (bursts of wake-ups coalesce
//! into one pass). It keeps the view request handlers read without a message: each
//! brain's open count and where recent letters went.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::distribute::{distribute, Filed, PassReport, State};
use super::sweep::open_counts;
use super::SPOOL;
use crate::events::{EventKind, Events};

/// Shared, read by request handlers: open counts per box and the last state.
#[derive(Default)]
pub struct MailboxView {
    pub open_by_repo: RwLock<HashMap<String, usize>>,
    pub state: RwLock<State>,
    /// Where recent letters went, whichever pass filed them (bounded).
    pub destinations: RwLock<HashMap<String, Filed>>,
}

impl MailboxView {
    /// A brain's open count (wet ink + in flight), kept current by the distributor.
    pub fn open_count(&self, root: &str) -> usize {
        self.open_by_repo
            .read()
            .expect("mailbox view lock")
            .get(root)
            .copied()
            .unwrap_or(0)
    }

    /// Where a letter went, if a recent pass filed it.
    pub fn destination(&self, id: &str) -> Option<Filed> {
        self.destinations
            .read()
            .expect("mailbox view lock")
            .get(id)
            .cloned()
    }
}

/// Why a distribution pass failed (the letters stay safe in the spool either way).
#[derive(Debug, thiserror::Error)]
pub enum MailboxError {
    #[error("the distribution pass failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the distribution pass panicked: {0}")]
    Panicked(String),
    #[error("the distribution pass was cancelled: the owner is stopping")]
    Cancelled,
}

/// Messages to the distributor.
pub enum MailboxMsg {
    /// Run a pass now; reply with its report.
    Distribute(Option<RpcReplyPort<Result<PassReport, MailboxError>>>),
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
    /// Where a pass that filed letters is announced.
    pub events: Arc<Events>,
    pub clock: Arc<dyn brains::Clock>,
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
            Ok::<_, MailboxError>(report)
        })
        .await
        .unwrap_or_else(|e| {
            Err(if e.is_cancelled() {
                MailboxError::Cancelled
            } else {
                MailboxError::Panicked(e.to_string())
            })
        });
        match &result {
            // Shutting down cancels a pass in flight; the spool keeps every letter.
            Err(MailboxError::Cancelled) => tracing::debug!("distribution pass cancelled"),
            Err(e) => tracing::error!(error = %e, "distribution pass failed"),
            Ok(report) if report.filed > 0 => {
                st.args
                    .events
                    .publish(st.args.clock.now_ms(), EventKind::Mail, None, None)
            }
            Ok(_) => {}
        }
        if let Some(r) = reply {
            let _ = r.send(result);
        }
        Ok(())
    }
}
