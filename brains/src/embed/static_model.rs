//! A static embedding model in the model2vec format (the default: potion-base-8M, 256
//! dimensions). A sentence's vector is the mean of its tokens' rows in a table, then
//! L2-normalised: a tokenizer pass and a table lookup, no neural network at run time.
//!
//! The model runs in the official `model2vec-rs` crate (its own WordPiece and Unigram
//! tokenizers, model2vec's recipe: no special tokens, the unknown token dropped, 512
//! tokens at most after the text is cut to 512 × the vocabulary's median token length in
//! characters, the optional `mapping` and `weights`, normalised when `config.json` says
//! so). What stays here: reading the files with typed errors, the checks that make a bad
//! file an error at load rather than a wrong vector later, and the model's identity.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::{EmbedError, Embedder};

/// The files a static model directory holds.
pub const STATIC_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

/// A model2vec static embedding model held in memory.
pub struct StaticModel {
    id: String,
    model: model2vec_rs::model::StaticModel,
    rows: usize,
    dims: usize,
}

impl std::fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticModel")
            .field("id", &self.id)
            .field("rows", &self.rows)
            .field("dims", &self.dims)
            .finish()
    }
}

/// The shape of a safetensors file's tensors, read from its header: `(rows, dims)` of
/// the embedding table, and the optional `mapping` from token ids to rows.
struct Layout {
    rows: usize,
    dims: usize,
    mapping: Option<Mapping>,
}

/// A vocabulary-quantised model's token → row mapping: how many tokens it covers, and
/// the highest row it sends one to.
struct Mapping {
    tokens: usize,
    top: usize,
}

fn layout(safetensors: &[u8]) -> Result<Layout, String> {
    let len = safetensors
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize)
        .ok_or("the file is too short for a header")?;
    let header = safetensors
        .get(8..8usize.saturating_add(len))
        .ok_or("the header runs past the end of the file")?;
    let header: serde_json::Value =
        serde_json::from_slice(header).map_err(|e| format!("the header is not JSON: {e}"))?;
    let shape = |name: &str| -> Option<Vec<usize>> {
        header[name]["shape"]
            .as_array()?
            .iter()
            .map(|d| d.as_u64().map(|d| d as usize))
            .collect()
    };
    let table = shape("embeddings")
        .or_else(|| shape("embedding.weight"))
        .ok_or("there is no `embeddings` tensor")?;
    let [rows, dims]: [usize; 2] = table
        .try_into()
        .map_err(|_| "the embeddings tensor is not two-dimensional")?;
    if rows == 0 || dims == 0 {
        return Err("the embeddings tensor is empty".into());
    }
    let mapping = match header.get("mapping") {
        None => None,
        Some(t) => {
            let width = match t["dtype"].as_str() {
                Some("I32") => 4,
                Some("I64") => 8,
                other => return Err(format!("the mapping tensor has dtype {other:?}")),
            };
            let offset = |i: usize| t["data_offsets"][i].as_u64().map(|o| o as usize);
            let (at, end) = offset(0)
                .zip(offset(1))
                .ok_or("the mapping tensor has no data offsets")?;
            let data = safetensors
                .get(8 + len + at..8 + len + end)
                .ok_or("the mapping tensor runs past the end of the file")?;
            let rows_of = data.chunks_exact(width).map(|b| match width {
                4 => i32::from_le_bytes(b.try_into().expect("4 bytes")) as i64,
                _ => i64::from_le_bytes(b.try_into().expect("8 bytes")),
            });
            if rows_of.clone().any(|r| r < 0) {
                return Err("the mapping sends a token to a negative row".into());
            }
            Some(Mapping {
                tokens: data.len() / width,
                top: rows_of.max().unwrap_or(0) as usize,
            })
        }
    };
    Ok(Layout {
        rows,
        dims,
        mapping,
    })
}

impl StaticModel {
    /// Load the model from a directory holding [`STATIC_FILES`].
    pub fn load(dir: &Path) -> Result<StaticModel, EmbedError> {
        let d = dir.display().to_string();
        let read = |f: &str| {
            let p = dir.join(f);
            if !p.is_file() {
                return Err(EmbedError::ModelMissing {
                    dir: d.clone(),
                    file: f.to_string(),
                });
            }
            std::fs::read(&p).map_err(|e| EmbedError::Invalid {
                dir: d.clone(),
                detail: format!("cannot read {f}: {e}"),
            })
        };
        let model = read("model.safetensors")?;
        let tokenizer = read("tokenizer.json")?;
        let config = read("config.json")?;
        Self::from_bytes(&d, &tokenizer, &model, &config)
    }

    /// Build the model from the bytes of its three files; `origin` names them in errors.
    pub fn from_bytes(
        origin: &str,
        tokenizer_json: &[u8],
        safetensors: &[u8],
        config_json: &[u8],
    ) -> Result<StaticModel, EmbedError> {
        let invalid = |detail: String| EmbedError::Invalid {
            dir: origin.to_string(),
            detail,
        };
        serde_json::from_slice::<serde_json::Value>(config_json)
            .map_err(|e| invalid(format!("config.json: {e}")))?;
        let spec: serde_json::Value = serde_json::from_slice(tokenizer_json)
            .map_err(|e| invalid(format!("tokenizer.json: {e}")))?;
        let Layout {
            rows,
            dims,
            mapping,
        } = layout(safetensors).map_err(|e| invalid(format!("model.safetensors: {e}")))?;
        // Every token id must name a row (through the mapping when there is one): the
        // crate indexes the table by id, so a short table would be a panic, not an error.
        let vocab = &spec["model"]["vocab"];
        let words = vocab
            .as_object()
            .map(|m| m.len())
            .or_else(|| vocab.as_array().map(Vec::len))
            .ok_or_else(|| invalid("tokenizer.json has no vocabulary".into()))?;
        let ids = spec["added_tokens"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["id"].as_u64())
            .map(|id| id as usize + 1)
            .fold(words, usize::max);
        match mapping {
            Some(m) if m.tokens < ids => {
                return Err(invalid(format!(
                    "the mapping covers {} tokens of a vocabulary of {ids}",
                    m.tokens
                )))
            }
            Some(m) if m.top >= rows => {
                return Err(invalid("the mapping points past the table".into()));
            }
            None if rows < ids => {
                return Err(invalid(format!(
                    "the table has {rows} rows for a vocabulary of {ids}"
                )))
            }
            _ => {}
        }
        let model = model2vec_rs::model::StaticModel::from_bytes(
            tokenizer_json,
            safetensors,
            config_json,
            None,
        )
        .map_err(|e| invalid(format!("{e:#}")))?;
        if model.dim() != dims {
            return Err(invalid(format!(
                "the model makes {} dimensions, its table has {dims}",
                model.dim()
            )));
        }
        // The identity stores remember: the shape and a digest of every input file's
        // content (the table sampled with a stride: any other model differs throughout).
        let mut h = Sha256::new();
        h.update(tokenizer_json);
        h.update(config_json);
        h.update(&safetensors[..safetensors.len().min(4096)]);
        for chunk in safetensors.chunks(4096).step_by(16) {
            h.update(&chunk[..chunk.len().min(64)]);
        }
        let digest = hex::encode(h.finalize());
        Ok(StaticModel {
            id: format!("model2vec-{dims}d-{}", &digest[..12]),
            model,
            rows,
            dims,
        })
    }

    /// Rows of the embedding table.
    pub fn rows(&self) -> usize {
        self.rows
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        // The crate panics where a tokenizer fails (its fallback path for pipelines it
        // does not run itself): an error here, never a store thread lost.
        // `encode_single` takes 512 tokens at most, as model2vec's `encode` does.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.model.encode_single(text)
        }))
        .map_err(|_| EmbedError::Model("the tokenizer failed on a text".into()))
    }
}

/// Texts from which a batch is embedded on every core.
const PARALLEL_BATCH: usize = 64;

impl Embedder for StaticModel {
    fn id(&self) -> &str {
        &self.id
    }
    fn dims(&self) -> usize {
        self.dims
    }
    /// A batch large enough is split over every core (a bulk write, a re-embed): each
    /// text is its own work.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        crate::par::map(texts, PARALLEL_BATCH, |t| self.embed_one(t))
            .ok_or_else(|| EmbedError::Model("an embedding thread panicked".into()))?
            .into_iter()
            .collect()
    }
}
