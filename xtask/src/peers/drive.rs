//! Each peer's driver: how to start it (medulla over HTTP or its bridge, the reference
//! memory server, basic-memory) and how to write a fact and search with its tools.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde_json::{json, Value};

use super::install::{fastembed_cache, Installs, BM_MODEL};
use super::workload::Fact;
use super::ALL_PEERS;
use crate::bench::http::{require_binary, start_logged, Owner};
use crate::mcp::{HttpSession, ReqwestLink, Session, StdioSession};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Api {
    Medulla,
    ServerMemory,
    BasicMemory { hybrid: bool },
}

/// A started server: its session, the processes to measure, and what keeps it alive.
pub(super) struct Running {
    pub(super) session: Box<dyn Session>,
    api: Api,
    pub(super) pids: Vec<u32>,
    pub(super) startup: Duration,
    pub(super) owner: Option<Owner>,
    pub(super) note: String,
    _dirs: Vec<tempfile::TempDir>,
}

pub(super) fn write(r: &mut Running, f: &Fact) -> Result<(), String> {
    let (tool, args) = match r.api {
        Api::Medulla => ("memorize", json!({ "label": f.label, "text": f.text })),
        Api::ServerMemory => (
            "create_entities",
            json!({ "entities": [{ "name": f.label, "entityType": "fact", "observations": [f.text] }] }),
        ),
        Api::BasicMemory { .. } => (
            "write_note",
            json!({ "title": f.label, "content": f.text, "directory": "facts" }),
        ),
    };
    let a = r.session.call_tool(tool, args).map_err(|e| e.to_string())?;
    if a.is_error {
        return Err(a.text.chars().take(300).collect());
    }
    Ok(())
}

/// The labels of the first five results, in order.
pub(super) fn search(r: &mut Running, q: &str) -> Result<Vec<String>, String> {
    let (tool, args, list, key) = match r.api {
        Api::Medulla => (
            "seek",
            json!({ "query": q, "limit": 5 }),
            "/results",
            "label",
        ),
        Api::ServerMemory => ("search_nodes", json!({ "query": q }), "/entities", "name"),
        Api::BasicMemory { hybrid } => (
            "search_notes",
            json!({ "query": q, "page_size": 5, "output_format": "json",
                    "search_type": if hybrid { "hybrid" } else { "text" } }),
            "/result/results",
            "title",
        ),
    };
    let a = r.session.call_tool(tool, args).map_err(|e| e.to_string())?;
    if a.is_error {
        return Err(a.text.chars().take(300).collect());
    }
    let v = a
        .json()
        .ok_or_else(|| "an answer that is not JSON".to_string())?;
    // basic-memory reports a failed search as text with isError false.
    let last = list.rsplit('/').next().unwrap_or(list);
    let rows = v
        .pointer(list)
        .or_else(|| v.get(last))
        .and_then(Value::as_array)
        .ok_or_else(|| {
            format!(
                "no {list} in the answer: {}",
                a.text.chars().take(200).collect::<String>()
            )
        })?;
    Ok(rows
        .iter()
        .take(5)
        .filter_map(|r| r[key].as_str().map(str::to_string))
        .collect())
}

const STARTUP_LIMIT: Duration = Duration::from_secs(180);

pub(super) fn start_peer(name: &str, install: &mut Installs) -> Result<Running> {
    let client = "peers-bench";
    match name {
        "medulla-http" | "medulla-bridge" | "medulla-http-lexical" | "medulla-http-fresh" => {
            require_binary()?;
            let model = name != "medulla-http-lexical";
            let home = tempfile::tempdir()?;
            let proj = tempfile::tempdir()?;
            let root = std::fs::canonicalize(proj.path())?;
            let rs = root.to_string_lossy().to_string();
            let log = home.path().join("owner.log");
            let t = Instant::now();
            let owner = start_logged(home.path(), model, Some(&log))?;
            let health: Value = owner
                .http
                .get(format!("{}/api/health", owner.url))
                .send()?
                .json()?;
            owner.call("bootstrap", json!({ "root": rs }), &rs)?;
            let mut note = format!("retrieval {}", health["retrieval"].as_str().unwrap_or("?"));
            if name == "medulla-http-fresh" {
                note.push_str("; a new TCP connection per call (not what SDKs do: it only shows the cost without the kept-alive stall)");
            }
            let mut pids = vec![owner.child.id()];
            let (session, startup): (Box<dyn Session>, Duration) = if name == "medulla-bridge" {
                let mut cmd = Command::new(require_binary()?);
                cmd.args(["bridge", "--url", &owner.url]).current_dir(&root);
                let s = StdioSession::spawn(cmd, client, STARTUP_LIMIT)?;
                pids.push(s.child.id());
                (Box::new(s), t.elapsed())
            } else {
                let link = if name == "medulla-http-fresh" {
                    ReqwestLink::fresh(&owner.url)?
                } else {
                    ReqwestLink::new(&owner.url)?
                };
                let s = HttpSession::open(
                    link,
                    &[
                        ("Medulla-Caller-Root", &rs),
                        ("Medulla-Agent", "bench:peers"),
                    ],
                    client,
                )?;
                (Box::new(s), t.elapsed())
            };
            Ok(Running {
                session,
                api: Api::Medulla,
                pids,
                startup,
                owner: Some(owner),
                note,
                _dirs: vec![home, proj],
            })
        }
        "server-memory" => {
            let script = install.server_memory()?;
            let dir = tempfile::tempdir()?;
            let mut cmd = Command::new("node");
            cmd.arg(script)
                .env("MEMORY_FILE_PATH", dir.path().join("memory.jsonl"))
                .stderr(std::process::Stdio::null());
            let s = StdioSession::spawn(cmd, client, STARTUP_LIMIT)?;
            Ok(Running {
                pids: vec![s.child.id()],
                startup: s.startup,
                session: Box::new(s),
                api: Api::ServerMemory,
                owner: None,
                note: "substring match over a JSONL file".into(),
                _dirs: vec![dir],
            })
        }
        "basic-memory-text" | "basic-memory-hybrid" => {
            let hybrid = name.ends_with("hybrid");
            let exe = install.basic_memory()?;
            let dir = tempfile::tempdir()?;
            let cfg = dir.path().join("config");
            let notes = dir.path().join("notes");
            std::fs::create_dir_all(&cfg)?;
            std::fs::create_dir_all(&notes)?;
            let mut cmd = Command::new(exe);
            cmd.arg("mcp")
                .env("BASIC_MEMORY_CONFIG_DIR", &cfg)
                .env("BASIC_MEMORY_HOME", &notes)
                .env("HF_HUB_OFFLINE", "1")
                .env("DO_NOT_TRACK", "1")
                .env("BASIC_MEMORY_NO_PROMOS", "1")
                .stderr(std::fs::File::create(dir.path().join("stderr.log"))?);
            let note = if hybrid {
                let cache = fastembed_cache(&dir.path().join("fastembed"))?;
                cmd.env("BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED", "true")
                    .env("BASIC_MEMORY_SEMANTIC_EMBEDDING_MODEL", BM_MODEL)
                    .env("BASIC_MEMORY_SEMANTIC_EMBEDDING_CACHE_DIR", cache)
                    .env("BASIC_MEMORY_DEFAULT_SEARCH_TYPE", "hybrid");
                "hybrid search, MiniLM-L6-v2 from MEDULLA_PEERS_ONNX_DIR (hub offline)"
            } else {
                cmd.env("BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED", "false");
                "full-text search (SQLite FTS5), semantic search off"
            };
            let s = StdioSession::spawn(cmd, client, STARTUP_LIMIT)?;
            Ok(Running {
                pids: vec![s.child.id()],
                startup: s.startup,
                session: Box::new(s),
                api: Api::BasicMemory { hybrid },
                owner: None,
                note: note.into(),
                _dirs: vec![dir],
            })
        }
        other => bail!("unknown peer {other:?}: one of {}", ALL_PEERS.join(", ")),
    }
}
