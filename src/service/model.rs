//! The embedding model as the user's choice, on a running owner: `GET /api/model` (what
//! serves now, what was chosen, a change under way) and `POST /api/model` (change it).
//! A change embeds every warm store's claims under the new model in the background,
//! page by page, while recall keeps serving from the old vectors, then swaps each store
//! in one transaction (`Store::switch_model`). From its start, stores that open are
//! opened under the new model and queries are embedded with it; a store still under the
//! old one embeds the query itself. No claim is unfindable at any moment: its words find
//! it throughout.

use std::sync::Arc;
use std::time::Duration;

use brains::store::{Switched, ToEmbed};
use brains::Embedder;
use ractor::ActorRef;
use serde::{Deserialize, Serialize};

use super::Service;
use crate::brain::{BrainMsg, Shared};
use crate::error::{OwnerError, Result};
use crate::model::{Choice, Pooling};
use crate::owner::active_model::{SwitchPhase, SwitchStatus};

/// Claims embedded in one model call while a store changes model.
const PAGE: usize = 256;
/// How long one store's swap may take (a large store's transaction and index).
const SWAP_TIMEOUT: Duration = Duration::from_secs(600);

/// `POST /api/model`'s body.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UseModel {
    /// `static`, a directory with an ONNX model and its tokenizer, or a model fastembed
    /// knows by name.
    pub model: String,
    #[serde(default)]
    pub pooling: Option<Pooling>,
}

/// The model a store serves with now.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreModel {
    pub store: String,
    /// The model's id; none when lexical-only.
    pub model: Option<String>,
    /// Live claims with no vector yet (found by their words until the background
    /// embeds them).
    pub unembedded: usize,
}

/// `GET /api/model`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModelView {
    /// The model stores open under and queries are embedded with; none: lexical-only.
    pub active: Option<String>,
    pub dims: Option<usize>,
    /// Whether writes leave their vectors to the background (a transformer).
    pub deferred: bool,
    /// What `model.json` in the home says (none: never chosen, the static model).
    pub choice: Option<Choice>,
    pub switch: SwitchView,
    /// Every warm store's model.
    pub stores: Vec<StoreModel>,
}

/// [`SwitchStatus`] as the answer carries it.
pub type SwitchView = SwitchStatus;

/// A warm store: how it is named, its actor, its cell.
struct WarmStore {
    name: String,
    actor: ActorRef<BrainMsg>,
    store: Shared,
}

impl Service {
    fn warm_stores(&self) -> Vec<WarmStore> {
        let reg = &self.owner.registry;
        let mut out = vec![WarmStore {
            name: "medulla".into(),
            actor: reg.medulla(),
            store: reg.medulla_store(),
        }];
        if let (Some(actor), Some(store)) = (reg.team(), reg.team_store()) {
            out.push(WarmStore {
                name: "team".into(),
                actor,
                store,
            });
        }
        for fp in reg.warm_fps() {
            if let Some(w) = reg.warm(&fp) {
                let name = reg
                    .manifest(&fp)
                    .map(|m| m.root)
                    .unwrap_or_else(|| fp.to_string());
                out.push(WarmStore {
                    name,
                    actor: w.actor,
                    store: w.store,
                });
            }
        }
        out
    }

    /// What serves now, what was chosen, and a change under way.
    pub async fn model_status(&self) -> Result<ModelView> {
        let active = self.owner.registry.model.current();
        let mut stores = Vec::new();
        for w in self.warm_stores() {
            let read = crate::brain::read(w.store.clone(), |s| {
                Ok((
                    s.embedder().map(|e| e.id().to_string()),
                    s.unembedded_count(),
                ))
            })
            .await;
            if let Ok(Some((model, unembedded))) = read {
                stores.push(StoreModel {
                    store: w.name,
                    model,
                    unembedded,
                });
            }
        }
        let home = self.owner.config.home.clone();
        let choice = tokio::task::spawn_blocking(move || Choice::read(&home))
            .await
            .map_err(|e| OwnerError::Internal(e.to_string()))??;
        Ok(ModelView {
            active: active.as_ref().map(|e| e.id().to_string()),
            dims: active.as_ref().map(|e| e.dims()),
            deferred: active.as_ref().is_some_and(|e| e.deferred()),
            choice,
            switch: self.owner.registry.model.status(),
            stores,
        })
    }

    /// Change the model: load it (an error changes nothing), keep the choice in the
    /// home, and start moving every warm store to it in the background. Answers at once,
    /// with the change under way.
    pub async fn use_model(&self, req: UseModel) -> Result<ModelView> {
        let choice = Choice::parse(&req.model, req.pooling);
        let reg = &self.owner.registry;
        if let Some(to) = reg
            .model
            .status()
            .to
            .filter(|_| reg.model.status().phase == SwitchPhase::Switching)
        {
            return Err(OwnerError::ModelSwitching { to });
        }
        let c = choice.clone();
        let static_dir = self.owner.config.model_dir.clone();
        let loaded = tokio::task::spawn_blocking(move || c.load(static_dir.as_deref()))
            .await
            .map_err(|e| OwnerError::Internal(e.to_string()))??;
        let Some(next) = loaded else {
            return Err(OwnerError::Model(crate::model::ModelError::Embed(
                brains::EmbedError::ModelMissing {
                    dir: crate::model::default_dir().display().to_string(),
                    file: "model.safetensors".into(),
                },
            )));
        };
        let home = self.owner.config.home.clone();
        let c = choice.clone();
        tokio::task::spawn_blocking(move || c.write(&home))
            .await
            .map_err(|e| OwnerError::Internal(e.to_string()))??;
        let from = reg.model.current().map(|e| e.id().to_string());
        if !reg
            .model
            .begin(from.clone(), next.id().to_string(), self.now_ms())
        {
            return Err(OwnerError::ModelSwitching {
                to: reg.model.status().to.unwrap_or_default(),
            });
        }
        // From here stores open under the new model and queries are embedded with it.
        reg.model.set(Some(next.clone()));
        tracing::info!(
            from = from.as_deref().unwrap_or("none"),
            to = next.id(),
            "changing the embedding model"
        );
        let svc = self.clone();
        tokio::spawn(async move { svc.switch_all(next).await });
        self.model_status().await
    }

    /// Move every warm store to `model`, one at a time.
    async fn switch_all(&self, model: Arc<dyn Embedder>) {
        let reg = &self.owner.registry;
        let stores = self.warm_stores();
        reg.model.update(|s| s.stores_total = stores.len());
        let mut failed = None;
        for w in stores {
            match self.switch_store(&w, &model).await {
                Ok(done) => reg.model.update(|s| {
                    s.stores_done += 1;
                    s.claims_left_behind += done.left_behind;
                }),
                Err(e) => {
                    tracing::error!(store = %w.name, error = %e, "the change of model stopped at this store");
                    failed = Some(format!("{}: {e}", w.name));
                    break;
                }
            }
        }
        let now = self.now_ms();
        reg.model.update(|s| {
            s.finished_at = Some(now);
            match failed {
                Some(e) => {
                    s.phase = SwitchPhase::Failed;
                    s.error = Some(e);
                }
                None => s.phase = SwitchPhase::Done,
            }
        });
        tracing::info!(to = model.id(), status = ?reg.model.status(), "the change of model ended");
    }

    /// Embed one store's live claims under `model`, page by page, while it serves from
    /// its old vectors; then swap. A store already under `model` (opened since the
    /// change began) or closed meanwhile is left as it is.
    async fn switch_store(&self, w: &WarmStore, model: &Arc<dyn Embedder>) -> Result<Switched> {
        let id = model.id().to_string();
        let same = crate::brain::read(w.store.clone(), move |s| {
            Ok(s.embedder().is_some_and(|e| e.id() == id))
        })
        .await?;
        if same != Some(false) {
            return Ok(Switched::default());
        }
        let mut staged: Vec<(ToEmbed, Vec<f32>)> = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let a = after.clone();
            let page = crate::brain::read(w.store.clone(), move |s| {
                s.embedding_page(a.as_deref(), PAGE)
            })
            .await?;
            let Some(page) = page else {
                return Ok(Switched::default());
            };
            if page.is_empty() {
                break;
            }
            after = page.last().map(|t| t.slug.clone());
            let m = model.clone();
            let (page, vectors) = tokio::task::spawn_blocking(move || {
                let texts: Vec<&str> = page.iter().map(|t| t.text.as_str()).collect();
                let v = m.embed(&texts);
                (page, v)
            })
            .await
            .map_err(|e| OwnerError::Internal(e.to_string()))?;
            let vectors = vectors
                .map_err(|e| OwnerError::Store(brains::StoreError::Embedding(e.to_string())))?;
            let n = page.len() as u64;
            staged.extend(page.into_iter().zip(vectors));
            self.owner.registry.model.update(|s| s.claims_embedded += n);
        }
        let m = model.clone();
        let done = crate::call::call_actor(&w.actor, "switch_model", SWAP_TIMEOUT, move |r| {
            BrainMsg::SwitchModel(m, staged, r)
        })
        .await?
        .map_err(OwnerError::Store)?;
        Ok(done)
    }
}
