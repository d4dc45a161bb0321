//! Embeddings: the [`Embedder`] trait, its errors, and the static model (model2vec) that
//! is the default. Loading only: obtaining the model files is the owner's business
//! (`medulla::model`); this crate does no network or process I/O. With no model the
//! engine runs lexical-only.

use std::sync::Arc;

mod static_model;

pub use static_model::{StaticModel, STATIC_FILES};

/// Errors of loading or running an embedding model.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// A file the model needs is not in its directory.
    #[error("embedding model file {file} not found in {dir}: run `medulla model fetch` or set MEDULLA_MODEL_DIR")]
    ModelMissing { dir: String, file: String },
    /// The files are there but do not make a usable model.
    #[error(
        "embedding model in {dir} is unusable ({detail}): run `medulla model fetch` to replace it"
    )]
    Invalid { dir: String, detail: String },
    /// A vector handed in has the wrong number of dimensions for this model.
    #[error("a query vector of {got} dimensions was given, the model makes {want}: embed it with the store's model")]
    Dims { got: usize, want: usize },
    #[error("embedding model failed: {0}")]
    Model(String),
}

/// Turns texts into unit-length vectors of a fixed dimension.
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// A stable identifier of the model; stores remember it and re-embed when it changes.
    fn id(&self) -> &str;
    fn dims(&self) -> usize;
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Whether writes go on without waiting for this model: a store under it leaves a
    /// new claim's vector to the owner's background embedding
    /// (`Store::attach_vectors`); the claim is found by its words meanwhile. A model that
    /// costs milliseconds a text (a transformer) defers; the static model does not.
    fn deferred(&self) -> bool {
        false
    }
}

/// Embed a recall query once, to hand the same vector to every store a request reads
/// (`RecallQuery::vector`). The text is embedded as the store embeds queries itself.
pub fn embed_query(e: &dyn Embedder, text: &str) -> Result<Arc<[f32]>, EmbedError> {
    let mut v = e.embed(&[text.trim()])?;
    let v = v
        .pop()
        .ok_or_else(|| EmbedError::Model("the model returned no vector".into()))?;
    if v.len() != e.dims() {
        return Err(EmbedError::Dims {
            got: v.len(),
            want: e.dims(),
        });
    }
    Ok(v.into())
}
