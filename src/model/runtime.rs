//! ONNX Runtime, which a transformer model runs on: loaded at run time (`ort` with
//! `load-dynamic`), from `$MEDULLA_ONNXRUNTIME` or the copy [`fetch_runtime`] takes
//! from the pinned `onnxruntime` wheel into the user's cache. Nothing is downloaded at
//! build time, and an owner on the static model never loads it.

use std::path::{Path, PathBuf};

use super::{cache_root, extract, io, python, wheel, ModelError, Wheel};

/// The variable naming a libonnxruntime to use instead of the fetched one.
pub const RUNTIME_ENV: &str = "MEDULLA_ONNXRUNTIME";

const VERSION: &str = "1.31.1";
/// The library's name inside the wheel and in the cache.
const LIBRARY: &str = "libonnxruntime.so.1.31.1";
const MEMBER_DIR: &str = "onnxruntime/capi/";

/// The wheel the library is taken from, for the platforms one is pinned for.
fn pinned() -> Option<Wheel> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some(Wheel {
            package: "onnxruntime==1.31.1",
            file: "onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl",
            sha256: "5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f",
            tags: &[
                "--only-binary=:all:",
                "--platform",
                "manylinux_2_28_x86_64",
                "--python-version",
                "3.11",
            ],
        }),
        _ => None,
    }
}

/// Where the fetched library lives.
fn cached() -> PathBuf {
    cache_root()
        .join(format!("onnxruntime-{VERSION}"))
        .join(LIBRARY)
}

/// The library a transformer loads: `$MEDULLA_ONNXRUNTIME` when set, else the fetched
/// copy; `None` when neither is there.
pub fn locate_runtime() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(RUNTIME_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    Some(cached()).filter(|p| p.is_file())
}

/// The library, fetched into the cache when it is not there (`python3 -m pip download`
/// of the pinned wheel, checked, and its library extracted).
pub fn fetch_runtime(progress: &mut dyn FnMut(&str)) -> Result<PathBuf, ModelError> {
    if let Some(p) = locate_runtime() {
        return Ok(p);
    }
    if let Some(p) = std::env::var_os(RUNTIME_ENV).filter(|p| !p.is_empty()) {
        return Err(ModelError::RuntimeMissing {
            path: PathBuf::from(p).display().to_string(),
            env: RUNTIME_ENV,
        });
    }
    let dest = cached();
    fetch_runtime_to(dest.parent().unwrap_or(Path::new(".")), progress)
}

/// The library fetched into `dir` (left alone when it is there); its path.
pub fn fetch_runtime_to(dir: &Path, progress: &mut dyn FnMut(&str)) -> Result<PathBuf, ModelError> {
    let dest = dir.join(LIBRARY);
    if dest.is_file() {
        return Ok(dest);
    }
    let Some(w) = pinned() else {
        return Err(ModelError::RuntimeUnsupported {
            platform: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
            env: RUNTIME_ENV,
        });
    };
    let py = python();
    let whl = wheel(&py, &cache_root().join("wheels"), &w, progress)?;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    progress("extracting ONNX Runtime");
    let work = dir.join(super::private_name("runtime"));
    std::fs::create_dir_all(&work).map_err(io(&work))?;
    let placed = extract(&py, &whl, MEMBER_DIR, &[LIBRARY], &work)
        .and_then(|()| std::fs::rename(work.join(LIBRARY), &dest).map_err(io(&dest)));
    let _ = std::fs::remove_dir_all(&work);
    placed?;
    progress(&format!("ONNX Runtime ready at {}", dest.display()));
    Ok(dest)
}

/// Load the library into this process (once; later calls keep the first).
pub(super) fn init() -> Result<PathBuf, ModelError> {
    let path = locate_runtime().ok_or_else(|| ModelError::RuntimeMissing {
        path: std::env::var_os(RUNTIME_ENV)
            .map(|p| PathBuf::from(p).display().to_string())
            .unwrap_or_else(|| cached().display().to_string()),
        env: RUNTIME_ENV,
    })?;
    ort::init_from(&path).map_err(|e| ModelError::RuntimeLoad {
        path: path.display().to_string(),
        detail: e.to_string(),
        env: RUNTIME_ENV,
    })?;
    Ok(path)
}
