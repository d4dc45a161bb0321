//! all-MiniLM-L6-v2 (int8 ONNX, mean pooling, 384 dimensions), run by ONNX Runtime.
//! Kept to measure it against the static model as a second dense list.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::{EmbedError, Embedder};

pub const MODEL_ID: &str = "all-minilm-l6-v2-int8";
pub const MODEL_DIMS: usize = 384;

static RUNTIME: OnceLock<Result<PathBuf, String>> = OnceLock::new();

fn init_runtime(lib: &Path) -> Result<(), EmbedError> {
    let r = RUNTIME.get_or_init(|| match ort::init_from(lib) {
        Ok(_builder) => Ok(lib.to_path_buf()),
        Err(e) => Err(e.to_string()),
    });
    r.as_ref()
        .map(|_| ())
        .map_err(|e| EmbedError::Model(format!("onnx runtime {}: {e}", lib.display())))
}

pub struct MiniLm {
    model: Mutex<fastembed::TextEmbedding>,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MiniLm")
    }
}

impl MiniLm {
    pub fn load(dir: &Path) -> Result<MiniLm, EmbedError> {
        let read = |f: &str| {
            std::fs::read(dir.join(f)).map_err(|_| EmbedError::ModelMissing {
                dir: dir.display().to_string(),
                file: f.to_string(),
            })
        };
        init_runtime(&dir.join("libonnxruntime.so"))?;
        let tokenizer = fastembed::TokenizerFiles {
            tokenizer_file: read("tokenizer.json")?,
            config_file: read("config.json")?,
            special_tokens_map_file: read("special_tokens_map.json")?,
            tokenizer_config_file: read("tokenizer_config.json")?,
        };
        let model = fastembed::UserDefinedEmbeddingModel::new(read("model.onnx")?, tokenizer)
            .with_pooling(fastembed::Pooling::Mean);
        let te = fastembed::TextEmbedding::try_new_from_user_defined(
            model,
            fastembed::InitOptionsUserDefined::new().with_max_length(256),
        )
        .map_err(|e| EmbedError::Model(e.to_string()))?;
        Ok(MiniLm {
            model: Mutex::new(te),
        })
    }
}

impl Embedder for MiniLm {
    fn id(&self) -> &str {
        MODEL_ID
    }
    fn dims(&self) -> usize {
        MODEL_DIMS
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut m = self.model.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = m
            .embed(texts, Some(32))
            .map_err(|e| EmbedError::Model(e.to_string()))?;
        for v in &mut out {
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if n > 0.0 {
                v.iter_mut().for_each(|x| *x /= n);
            }
        }
        Ok(out)
    }
}
