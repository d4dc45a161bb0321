//! Which of a session's resources changed. The owner's event bus says that a write
//! happened somewhere; a watch compares what the session can see before and after — the
//! served brain's and the medulla's claim counts, and each subscribed resource's version —
//! so a session hears of changes to its own brain and to the medulla, never of another
//! brain's writes.

use std::collections::HashMap;

use tokio::sync::broadcast::error::RecvError;

use super::resources::{ResourceUri, Result};
use super::rows::StoreTier;
use super::Service;
use crate::events::{Event, EventKind};
use crate::roster::Manifest;
use crate::store_id::{Fingerprint, StoreId};

/// Something a session should hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The set of claims the session lists changed (`notifications/resources/list_changed`).
    ListChanged,
    /// A subscribed resource changed (`notifications/resources/updated`).
    Updated(String),
}

/// A store's claims as counted: (live, history versions). Any claim created,
/// superseded, demoted, retired, promoted or purged moves one of them.
type Counts = (u64, u64);

/// One session's view of its resources, and the bus that says when to look again.
pub struct Watch {
    svc: Service,
    rx: tokio::sync::broadcast::Receiver<Event>,
    brain: Option<(Fingerprint, Counts)>,
    medulla: Option<Counts>,
    /// Each subscribed URI's version as last seen (`None`: absent).
    items: HashMap<String, Option<String>>,
    primed: bool,
}

impl Watch {
    /// Starts listening now: a write after this call is never missed.
    pub fn new(svc: &Service) -> Watch {
        Watch {
            svc: svc.clone(),
            rx: svc.owner.registry.events.subscribe(),
            brain: None,
            medulla: None,
            items: HashMap::new(),
            primed: false,
        }
    }

    async fn counts(&self, store: &StoreId) -> Result<Counts> {
        let s = self.svc.owner.stats(store).await?;
        Ok((s.live_claims, s.history_versions))
    }

    /// A resource's version: what a change to it moves.
    async fn version(&self, uri: &str, brain: Option<&Manifest>) -> Result<Option<String>> {
        let Ok(what) = ResourceUri::parse(uri) else {
            return Ok(None);
        };
        let (store, slug) = match &what {
            ResourceUri::North => {
                return Ok(Some(format!("{:?}/{:?}", self.brain, self.medulla)));
            }
            ResourceUri::Claim {
                tier: StoreTier::Project,
                slug,
            } => match brain {
                Some(b) => (StoreId::brain(&b.fingerprint), slug),
                None => return Ok(None),
            },
            ResourceUri::Claim {
                tier: StoreTier::Medulla,
                slug,
            } => (StoreId::Medulla, slug),
            ResourceUri::Claim {
                tier: StoreTier::Team,
                slug,
            } => (StoreId::Team, slug),
        };
        Ok(self
            .svc
            .owner
            .get(&store, slug)
            .await?
            .map(|c| format!("{}@{}@{:?}", c.version, c.content_hash, c.trust)))
    }

    /// Looks again: the changes since the last look. `touched_brain`: whether the
    /// session's brain may have been written since. A session that lands on a brain (or
    /// moves) takes it as it finds it: its own request listed it, nothing changed.
    async fn look(
        &mut self,
        brain: Option<&Manifest>,
        subscribed: &[String],
        touched_brain: bool,
    ) -> Result<Vec<Change>> {
        let mut changes = Vec::new();
        let medulla = Some(self.counts(&StoreId::Medulla).await?);
        let seen = self.brain.as_ref().map(|(fp, _)| fp);
        let moved = brain.map(|b| &b.fingerprint) != seen;
        let brain_now = match brain {
            Some(b) if touched_brain || moved => Some((
                b.fingerprint.clone(),
                self.counts(&StoreId::brain(&b.fingerprint)).await?,
            )),
            Some(_) => self.brain.clone(),
            None => None,
        };
        let listed_changed = (!moved && brain_now != self.brain) || medulla != self.medulla;
        if self.primed && listed_changed {
            changes.push(Change::ListChanged);
        }
        self.brain = brain_now;
        self.medulla = medulla;
        self.items.retain(|uri, _| subscribed.contains(uri));
        for uri in subscribed {
            let now = self.version(uri, brain).await?;
            // A brain resource of a session that just landed is taken as it is found; a
            // medulla claim is the same wherever the session is.
            let same_store = !moved || uri.starts_with(super::resources::MEDULLA_PREFIX);
            match self.items.insert(uri.clone(), now.clone()) {
                Some(before) if same_store && before != now => {
                    changes.push(Change::Updated(uri.clone()))
                }
                _ => {}
            }
        }
        self.primed = true;
        Ok(changes)
    }

    /// Waits for the next change this session can see: of its brain or of the medulla,
    /// and of the resources it subscribed to. `brain` and `subscribed` are asked again
    /// at every look, so a session that lands or subscribes later is followed; `landed`,
    /// when given, is notified as the session lands on a brain, so its state is taken
    /// then and a write after it is never mistaken for the state it landed on. `None`
    /// when the owner's bus closed.
    pub async fn next(
        &mut self,
        brain: impl Fn() -> Option<Manifest>,
        subscribed: impl Fn() -> Vec<String>,
        landed: Option<&tokio::sync::Notify>,
    ) -> Option<Vec<Change>> {
        if !self.primed {
            if let Err(e) = self.look(brain().as_ref(), &subscribed(), true).await {
                tracing::debug!(code = e.code(), "resource watch could not look");
            }
        }
        loop {
            let mut touched = false;
            let mut any = false;
            let landing = async {
                match landed {
                    Some(n) => n.notified().await,
                    None => std::future::pending().await,
                }
            };
            let received = tokio::select! {
                r = self.rx.recv() => Some(r),
                () = landing => None,
            };
            let session_brain = brain();
            let Some(received) = received else {
                // The session landed: take its brain as it is now.
                match self
                    .look(session_brain.as_ref(), &subscribed(), false)
                    .await
                {
                    Ok(changes) if !changes.is_empty() => return Some(changes),
                    Ok(_) => {}
                    Err(e) => tracing::debug!(code = e.code(), "resource watch could not look"),
                }
                continue;
            };
            let mut first = Some(received);
            // Take every event already waiting: one look answers a burst.
            loop {
                let got = match first.take() {
                    Some(r) => r,
                    None => match self.rx.try_recv() {
                        Ok(ev) => Ok(ev),
                        Err(tokio::sync::broadcast::error::TryRecvError::Lagged(n)) => {
                            Err(RecvError::Lagged(n))
                        }
                        Err(_) => break,
                    },
                };
                match got {
                    Ok(ev) if ev.kind == EventKind::Act => {
                        any = true;
                        touched |= match (&ev.store, &session_brain) {
                            (Some(store), Some(b)) => *store == b.root,
                            _ => true,
                        };
                    }
                    Ok(_) => {}
                    Err(RecvError::Lagged(_)) => {
                        any = true;
                        touched = true;
                    }
                    Err(RecvError::Closed) => return None,
                }
            }
            if !any {
                continue;
            }
            match self
                .look(session_brain.as_ref(), &subscribed(), touched)
                .await
            {
                Ok(changes) if !changes.is_empty() => return Some(changes),
                Ok(_) => {}
                Err(e) => tracing::debug!(code = e.code(), "resource watch could not look"),
            }
        }
    }
}
