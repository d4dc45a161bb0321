//! Embeddings: the [`Embedder`] trait, the offline all-MiniLM-L6-v2 (int8 ONNX) model,
//! and where its files are looked for. With no model the engine runs lexical-only.

/// Errors of loading or running an embedding model.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model files not found in {dir}: run `cargo xtask fetch-model` or set MEDULLA_MODEL_DIR")]
    ModelMissing { dir: String },
    #[error("onnx runtime could not be loaded from {path}: {detail}")]
    Runtime { path: String, detail: String },
    #[error("embedding model failed: {0}")]
    Model(String),
}

/// Turns texts into unit-length vectors of a fixed dimension.
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// A stable identifier of the model; stores remember it and re-embed when it changes.
    fn id(&self) -> &str;
    fn dims(&self) -> usize;
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}
