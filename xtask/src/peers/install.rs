//! Installing the other servers once per machine under `target/peers/`: the reference
//! memory server with npm, basic-memory with pip into a virtualenv, and a fastembed
//! cache made from a local model so basic-memory's hybrid search runs offline.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The reference memory server, pinned.
const SERVER_MEMORY: &str = "@modelcontextprotocol/server-memory@2026.8.31";
/// basic-memory, pinned: 0.24.x pins a fastmcp whose dependencies are not all published
/// on pip yet (certifi ≥ 2026.10.19), so the newest that installs is 0.23.2.
const BASIC_MEMORY: &str = "basic-memory==0.23.2";
/// pyenv's Pythons here are built without SQLite extension loading, which basic-memory's
/// vector index (sqlite-vec) needs; this wheel brings a SQLite that has it.
const PYSQLITE: &str = "pysqlite3-binary==0.5.4.post2";
/// The embedding model basic-memory is told to use: fastembed's name for MiniLM-L6-v2,
/// served from a local cache made of medulla's own model files (no hub is reachable).
pub(super) const BM_MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";
const BM_MODEL_REPO: &str = "Qdrant/all-MiniLM-L6-v2-onnx";

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peers")
}

fn run_cmd(cmd: &mut Command, what: &str) -> Result<()> {
    let out = cmd.output().with_context(|| format!("cannot run {what}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(4).collect();
        bail!(
            "{what} failed: {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        );
    }
    Ok(())
}

/// Install the reference memory server with npm (once) and return its entry script.
fn install_server_memory() -> Result<PathBuf> {
    let dir = peers_dir().join("server-memory");
    let script = dir.join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let stamp = dir.join(".installed");
    if script.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(SERVER_MEMORY) {
        return Ok(script);
    }
    std::fs::create_dir_all(&dir)?;
    eprintln!(
        "installing {SERVER_MEMORY} with npm into {}…",
        dir.display()
    );
    run_cmd(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg(SERVER_MEMORY),
        "npm install",
    )?;
    if !script.exists() {
        bail!("npm installed no {}", script.display());
    }
    std::fs::write(stamp, SERVER_MEMORY)?;
    Ok(script)
}

/// A Python ≥ 3.12 to build basic-memory's virtualenv with.
fn python312() -> Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let mut candidates: Vec<PathBuf> = ["3.12.1", "3.13.0"]
        .iter()
        .map(|v| home.join(".pyenv/versions").join(v).join("bin/python3"))
        .collect();
    candidates.extend(["python3.12", "python3.13"].map(PathBuf::from));
    for c in candidates {
        let ok = Command::new(&c)
            .args(["-c", "import sys; assert sys.version_info >= (3, 12)"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Ok(c);
        }
    }
    bail!("basic-memory needs Python ≥ 3.12 and none was found (tried ~/.pyenv/versions/3.12.1, 3.13.0, python3.12, python3.13)")
}

/// The sitecustomize that makes `import sqlite3` load pysqlite3 (which can load extensions).
const SITECUSTOMIZE: &str = "\
# Written by `cargo xtask bench --peers`: this Python's sqlite3 cannot load extensions,
# which basic-memory's vector search (sqlite-vec) needs; pysqlite3 can.
try:
    import sys
    import pysqlite3
    import pysqlite3.dbapi2
    sys.modules[\"sqlite3\"] = pysqlite3
    sys.modules[\"sqlite3.dbapi2\"] = pysqlite3.dbapi2
except ImportError:
    pass
";

/// Install basic-memory into a virtualenv (once); its `basic-memory` command.
fn install_basic_memory() -> Result<PathBuf> {
    let venv = peers_dir().join("bm-venv");
    let exe = venv.join("bin/basic-memory");
    let stamp = venv.join(".installed");
    let want = format!("{BASIC_MEMORY} {PYSQLITE}");
    if !(exe.exists() && std::fs::read_to_string(&stamp).ok() == Some(want.clone())) {
        let py = python312()?;
        std::fs::create_dir_all(peers_dir())?;
        if !venv.join("bin/python").exists() {
            run_cmd(
                Command::new(&py).args(["-m", "venv"]).arg(&venv),
                "python -m venv",
            )?;
        }
        eprintln!(
            "installing {BASIC_MEMORY} with pip into {} (minutes)…",
            venv.display()
        );
        run_cmd(
            Command::new(venv.join("bin/pip")).args(["install", "-q", BASIC_MEMORY, PYSQLITE]),
            "pip install basic-memory",
        )?;
        std::fs::write(&stamp, &want)?;
    }
    // Idempotent, and needed only when the interpreter's sqlite3 lacks extension loading.
    let site = Command::new(venv.join("bin/python"))
        .args(["-c", "import site; print(site.getsitepackages()[0])"])
        .output()?;
    let site = PathBuf::from(String::from_utf8_lossy(&site.stdout).trim());
    std::fs::write(site.join("sitecustomize.py"), SITECUSTOMIZE)?;
    Ok(exe)
}

/// A fastembed cache holding a local MiniLM ONNX export under the name fastembed looks
/// for, so basic-memory's semantic search runs with the hub offline. medulla itself no
/// longer ships an ONNX model, so the directory comes from `MEDULLA_PEERS_ONNX_DIR`.
pub(super) fn fastembed_cache(into: &Path) -> Result<PathBuf> {
    let dir = std::env::var_os("MEDULLA_PEERS_ONNX_DIR")
        .map(PathBuf::from)
        .filter(|d| d.join("model.onnx").exists())
        .context(
            "basic-memory's hybrid mode needs a local all-MiniLM-L6-v2 ONNX export: set MEDULLA_PEERS_ONNX_DIR to a directory holding model.onnx, config.json and the tokenizer files (no model hub is reachable here)",
        )?;
    let repo = into.join(format!("models--{}", BM_MODEL_REPO.replace('/', "--")));
    let snap = repo.join("snapshots/local");
    std::fs::create_dir_all(&snap)?;
    std::fs::create_dir_all(repo.join("refs"))?;
    std::fs::write(repo.join("refs/main"), "local")?;
    for f in [
        "model.onnx",
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
    ] {
        let src = dir.join(f);
        if !src.exists() {
            bail!("the local model lacks {f} ({})", dir.display());
        }
        std::fs::copy(&src, snap.join(f))?;
    }
    Ok(into.to_path_buf())
}

/// Installs done at most once per run; a failure is remembered and reported per peer.
#[derive(Default)]
pub(super) struct Installs {
    server_memory: Option<Result<PathBuf, String>>,
    basic_memory: Option<Result<PathBuf, String>>,
}

impl Installs {
    pub(super) fn server_memory(&mut self) -> Result<PathBuf> {
        self.server_memory
            .get_or_insert_with(|| install_server_memory().map_err(|e| format!("{e:#}")))
            .clone()
            .map_err(anyhow::Error::msg)
    }
    pub(super) fn basic_memory(&mut self) -> Result<PathBuf> {
        self.basic_memory
            .get_or_insert_with(|| install_basic_memory().map_err(|e| format!("{e:#}")))
            .clone()
            .map_err(anyhow::Error::msg)
    }
}
