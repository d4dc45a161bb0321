//! A static embedding model in the model2vec format (the default: potion-base-8M, 256
//! dimensions). A sentence's vector is the mean of its tokens' rows in a table, then
//! L2-normalised: a tokenizer pass and a table lookup, no neural network at run time.
//!
//! The inference recipe follows model2vec's: tokenize without special tokens, drop the
//! unknown token, cut to 512 tokens (the text is first cut to 512 × the vocabulary's
//! median token length in characters), map through the optional `mapping` tensor, scale
//! by the optional `weights` tensor, take the mean, and normalise when `config.json` says
//! `"normalize": true`. A text with no known token embeds to the zero vector.

use std::path::Path;

use safetensors::{tensor::Dtype, SafeTensors};
use sha2::{Digest, Sha256};
use tokenizers::Tokenizer;

use super::words::Words;
use super::{EmbedError, Embedder};

/// The files a static model directory holds.
pub const STATIC_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

/// Tokens per text taken into the mean, as model2vec's `encode` defaults.
const MAX_TOKENS: usize = 512;

/// A model2vec static embedding model held in memory.
pub struct StaticModel {
    id: String,
    tokenizer: Tokenizer,
    /// Row-major `rows × dims`.
    table: Vec<f32>,
    rows: usize,
    dims: usize,
    /// Per-token scale, indexed by token id (absent in potion models: baked in).
    weights: Option<Vec<f32>>,
    /// Token id → table row (vocabulary-quantised models).
    mapping: Option<Vec<u32>>,
    unk: Option<u32>,
    normalize: bool,
    max_chars: usize,
    /// The fast path to plain ASCII text's token ids, when the tokenizer is one it
    /// reproduces exactly.
    words: Option<Words>,
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

fn floats(dir: &str, name: &str, dtype: Dtype, raw: &[u8]) -> Result<Vec<f32>, EmbedError> {
    match dtype {
        Dtype::F32 => Ok(raw
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()),
        Dtype::F64 => Ok(raw
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")) as f32)
            .collect()),
        other => Err(EmbedError::Invalid {
            dir: dir.to_string(),
            detail: format!("tensor {name} has dtype {other:?}; only F32 and F64 are read"),
        }),
    }
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
        let config: serde_json::Value = serde_json::from_slice(config_json)
            .map_err(|e| invalid(format!("config.json: {e}")))?;
        let normalize = config
            .get("normalize")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(true);
        let spec: serde_json::Value = serde_json::from_slice(tokenizer_json)
            .map_err(|e| invalid(format!("tokenizer.json: {e}")))?;
        let tokenizer = Tokenizer::from_bytes(tokenizer_json)
            .map_err(|e| invalid(format!("tokenizer.json: {e}")))?;
        let unk = match spec["model"]["unk_token"].as_str() {
            Some(t) => Some(tokenizer.token_to_id(t).ok_or_else(|| {
                invalid(format!("the unknown token {t:?} is not in the vocabulary"))
            })?),
            None => None,
        };
        let vocab = tokenizer.get_vocab(false);
        let mut lens: Vec<usize> = vocab.keys().map(|t| t.chars().count()).collect();
        lens.sort_unstable();
        let median = lens.get(lens.len() / 2).copied().unwrap_or(1).max(1);

        let st = SafeTensors::deserialize(safetensors)
            .map_err(|e| invalid(format!("model.safetensors: {e}")))?;
        let emb = st
            .tensor("embeddings")
            .or_else(|_| st.tensor("embedding.weight"))
            .map_err(|_| invalid("model.safetensors has no `embeddings` tensor".into()))?;
        let [rows, dims]: [usize; 2] = emb
            .shape()
            .try_into()
            .map_err(|_| invalid("the embeddings tensor is not two-dimensional".into()))?;
        if rows == 0 || dims == 0 {
            return Err(invalid("the embeddings tensor is empty".into()));
        }
        let table = floats(origin, "embeddings", emb.dtype(), emb.data())?;
        let weights = match st.tensor("weights") {
            Ok(t) => Some(floats(origin, "weights", t.dtype(), t.data())?),
            Err(_) => None,
        };
        let mapping = match st.tensor("mapping") {
            Ok(t) => Some(match t.dtype() {
                Dtype::I32 => t
                    .data()
                    .chunks_exact(4)
                    .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u32)
                    .collect(),
                Dtype::I64 => t
                    .data()
                    .chunks_exact(8)
                    .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")) as u32)
                    .collect::<Vec<u32>>(),
                other => return Err(invalid(format!("tensor mapping has dtype {other:?}"))),
            }),
            Err(_) => None,
        };
        match &mapping {
            Some(m) if m.iter().any(|r| *r as usize >= rows) => {
                return Err(invalid("the mapping points past the table".into()));
            }
            Some(_) => {}
            None if rows < vocab.len() => {
                return Err(invalid(format!(
                    "the table has {rows} rows for a vocabulary of {}",
                    vocab.len()
                )))
            }
            None => {}
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
            tokenizer,
            table,
            rows,
            dims,
            weights,
            mapping,
            unk,
            normalize,
            max_chars: MAX_TOKENS * median,
            words: Words::for_spec(&spec),
        })
    }

    /// Rows of the embedding table.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// A text's vector through the tokenizer's own pass only (no word cache): what the
    /// fast path is checked against.
    #[doc(hidden)]
    pub fn embed_exact(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_with(text, false)
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_with(text, true)
    }

    fn embed_with(&self, text: &str, fast: bool) -> Result<Vec<f32>, EmbedError> {
        let text = match text.char_indices().nth(self.max_chars) {
            Some((i, _)) => &text[..i],
            None => text,
        };
        let fast_ids = match (&self.words, fast) {
            (Some(w), true) => w.ids(text, &self.tokenizer)?,
            _ => None,
        };
        let ids = match fast_ids {
            Some(ids) => ids,
            None => self
                .tokenizer
                .encode_fast(text, false)
                .map_err(|e| EmbedError::Model(format!("tokenizer: {e}")))?
                .get_ids()
                .to_vec(),
        };
        let mut sum = vec![0f32; self.dims];
        let mut n = 0usize;
        for &id in &ids {
            if Some(id) == self.unk {
                continue;
            }
            if n == MAX_TOKENS {
                break;
            }
            let row = match &self.mapping {
                Some(m) => m.get(id as usize).copied(),
                None => Some(id),
            };
            let Some(row) = row.map(|r| r as usize).filter(|r| *r < self.rows) else {
                continue;
            };
            let scale = self
                .weights
                .as_ref()
                .and_then(|w| w.get(id as usize).copied())
                .unwrap_or(1.0);
            let r = &self.table[row * self.dims..(row + 1) * self.dims];
            for (s, x) in sum.iter_mut().zip(r) {
                *s += x * scale;
            }
            n += 1;
        }
        if n > 0 {
            let inv = 1.0 / n as f32;
            sum.iter_mut().for_each(|x| *x *= inv);
        }
        if self.normalize {
            let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                sum.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Ok(sum)
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
    /// A batch large enough is split over every core (a bulk write, a re-embed): the
    /// tokenizer is most of a static model's cost, and each text is its own work.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        crate::par::map(texts, PARALLEL_BATCH, |t| self.embed_one(t))
            .ok_or_else(|| EmbedError::Model("an embedding thread panicked".into()))?
            .into_iter()
            .collect()
    }
}
