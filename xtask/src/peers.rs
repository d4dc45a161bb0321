//! `cargo xtask bench --peers`: one memory workload, one MCP client, several servers:
//! medulla over HTTP and through its stdio bridge, the MCP reference memory server
//! (`@modelcontextprotocol/server-memory`, installed with npm under `target/peers/`) and
//! basic-memory (installed with pip into a virtualenv under `target/peers/`), with its
//! full-text search and with its hybrid search on a local model. `medulla-http-fresh`
//! opens a new connection per call, to show medulla's cost without a kept-alive stall.
//!
//! The workload: N writes of codebase facts ("service × topic" sentences, deterministic,
//! each with a distinct label), then searches, half verbatim and half paraphrased by
//! hand-written templates; hit@5 is the target's label among the first five results.
//! Every server runs alone, loopback or stdio only, and every loop is bounded.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::bench_http::{require_binary, start_logged, Owner};
use crate::mcp::{self, HttpSession, ReqwestLink, Session, StdioSession};

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
const BM_MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";
const BM_MODEL_REPO: &str = "Qdrant/all-MiniLM-L6-v2-onnx";

const ALL_PEERS: &[&str] = &[
    "medulla-http",
    "medulla-bridge",
    "medulla-http-lexical",
    "medulla-http-fresh",
    "server-memory",
    "basic-memory-text",
    "basic-memory-hybrid",
];

// ---------------------------------------------------------------------------------
// The workload.

#[derive(Debug, Clone)]
pub struct Fact {
    pub label: String,
    pub text: String,
    pub paraphrase: String,
}

const SERVICES: &[&str] = &[
    "billing",
    "auth",
    "search",
    "ingest",
    "gateway",
    "notifications",
    "payments",
    "scheduler",
    "inventory",
    "reports",
    "checkout",
    "profile",
    "media",
    "analytics",
    "shipping",
    "catalog",
    "pricing",
    "fraud",
    "export",
    "sync",
];
/// Second words for sizes above 200 facts: `billing worker`, `auth cron`, …
const QUALIFIERS: &[&str] = &[
    "worker", "cron", "admin", "mobile", "partner", "ledger", "audit", "edge", "batch",
];

struct Slots {
    n: u32,
    pick: [usize; 2],
}

/// A topic: its label word, the fact, and a paraphrase a person would type to find it.
struct Topic {
    name: &'static str,
    fact: fn(&str, &Slots) -> String,
    paraphrase: fn(&str, &Slots) -> String,
}

const OBJECTS: &[&str] = &["webhooks", "payouts", "emails", "uploads", "callbacks"];
const DEPS: &[&str] = &[
    "the ledger",
    "the identity provider",
    "the tax API",
    "the geocoder",
];
const CACHED: &[&str] = &[
    "session tokens",
    "price lists",
    "user profiles",
    "feature flags",
];
const STORES: &[&str] = &["Redis", "Memcached", "an in-process LRU"];
const AUTH: &[&str] = &[
    "JWT bearer",
    "mutual TLS",
    "HMAC-signed",
    "OAuth client-credential",
];
const DBS: &[&str] = &["PostgreSQL", "MySQL", "DynamoDB", "CockroachDB"];
const TOOLS: &[&str] = &["Argo Rollouts", "Spinnaker", "Flagger"];
const SINKS: &[&str] = &["Loki", "Elasticsearch", "Datadog", "CloudWatch"];
const ALGOS: &[&str] = &["token bucket", "sliding window", "leaky bucket"];
const QUEUES: &[&str] = &["Kafka", "SQS", "RabbitMQ", "NATS"];
const METRICS: &[&str] = &[
    "error rate",
    "p99 latency budget",
    "CPU saturation",
    "queue lag",
];

fn pick<'a>(v: &[&'a str], s: &Slots, k: usize) -> &'a str {
    v[s.pick[k] % v.len()]
}

const TOPICS: &[Topic] = &[
    Topic {
        name: "retries",
        fact: |svc, s| {
            format!(
                "The {svc} service retries failed {} {} times with exponential backoff starting at {} ms",
                pick(OBJECTS, s, 0),
                s.n % 5 + 2,
                100 * (s.n % 4 + 1)
            )
        },
        paraphrase: |svc, s| {
            format!(
                "what does {svc} do when sending {} fails, does it try again?",
                pick(OBJECTS, s, 0)
            )
        },
    },
    Topic {
        name: "timeouts",
        fact: |svc, s| {
            format!(
                "The {svc} service gives up on calls to {} after {} seconds and answers 504",
                pick(DEPS, s, 0),
                s.n % 25 + 5
            )
        },
        paraphrase: |svc, s| {
            format!(
                "how long will {svc} wait on {} before it stops waiting?",
                pick(DEPS, s, 0)
            )
        },
    },
    Topic {
        name: "caching",
        fact: |svc, s| {
            format!(
                "The {svc} service caches {} in {} for {} minutes",
                pick(CACHED, s, 0),
                pick(STORES, s, 1),
                s.n % 55 + 5
            )
        },
        paraphrase: |svc, s| {
            format!(
                "where does {svc} keep {} between requests, and for how long?",
                pick(CACHED, s, 0)
            )
        },
    },
    Topic {
        name: "authentication",
        fact: |svc, s| {
            format!(
                "The {svc} service authenticates callers with {} tokens that expire after {} hours",
                pick(AUTH, s, 0),
                s.n % 23 + 1
            )
        },
        paraphrase: |svc, _| format!("what credentials must a client present to call {svc}?"),
    },
    Topic {
        name: "storage",
        fact: |svc, s| {
            format!(
                "The {svc} service keeps its records in {} with {} read replicas",
                pick(DBS, s, 0),
                s.n % 4 + 1
            )
        },
        paraphrase: |svc, _| format!("which database backs {svc} and how is it replicated?"),
    },
    Topic {
        name: "deploys",
        fact: |svc, s| {
            format!(
                "The {svc} service ships through {} canaries that take {} percent of traffic first",
                pick(TOOLS, s, 0),
                s.n % 20 + 1
            )
        },
        paraphrase: |svc, _| format!("how are new versions of {svc} rolled out to production?"),
    },
    Topic {
        name: "logging",
        fact: |svc, s| {
            format!(
                "The {svc} service sends structured logs to {} and keeps them for {} days",
                pick(SINKS, s, 0),
                s.n % 80 + 7
            )
        },
        paraphrase: |svc, _| {
            format!("where do the log lines of {svc} end up, and what is their retention?")
        },
    },
    Topic {
        name: "rate limits",
        fact: |svc, s| {
            format!(
                "The {svc} service rate-limits each client to {} requests per second with a {}",
                10 * (s.n % 50 + 1),
                pick(ALGOS, s, 0)
            )
        },
        paraphrase: |svc, _| {
            format!("how many calls per second may one client make against {svc}?")
        },
    },
    Topic {
        name: "queue consumers",
        fact: |svc, s| {
            format!(
                "The {svc} service consumes jobs from a {} queue with {} workers",
                pick(QUEUES, s, 0),
                s.n % 30 + 2
            )
        },
        paraphrase: |svc, _| {
            format!("which message broker feeds work to {svc}, and how many consumers read it?")
        },
    },
    Topic {
        name: "alerting",
        fact: |svc, s| {
            format!(
                "The {svc} service pages on-call when its {} stays above {} percent for five minutes",
                pick(METRICS, s, 0),
                s.n % 15 + 2
            )
        },
        paraphrase: |svc, _| format!("when does {svc} wake somebody up at night?"),
    },
];

/// Services × topics: 200 × 10.
const MAX_FACTS: usize = (SERVICES.len() * (QUALIFIERS.len() + 1)) * 10;

/// `n` facts, deterministic from `seed`: services × topics, each label distinct.
pub fn facts(n: usize, seed: u64) -> Vec<Fact> {
    let mut services: Vec<String> = SERVICES.iter().map(|s| s.to_string()).collect();
    for q in QUALIFIERS {
        for s in SERVICES {
            services.push(format!("{s} {q}"));
        }
    }
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut out = Vec::with_capacity(n);
    'outer: for svc in &services {
        for t in TOPICS {
            if out.len() == n {
                break 'outer;
            }
            let slots = Slots {
                n: (next() % 1000) as u32,
                pick: [(next() % 97) as usize, (next() % 89) as usize],
            };
            out.push(Fact {
                label: format!("{svc} {}", t.name),
                text: (t.fact)(svc, &slots),
                paraphrase: (t.paraphrase)(svc, &slots),
            });
        }
    }
    out
}

/// `count` searches: (target index, query, verbatim?), half verbatim, half paraphrased,
/// targets spread over the facts.
fn searches(facts: &[Fact], count: usize) -> Vec<(usize, String, bool)> {
    (0..count)
        .map(|i| {
            let target = (i * 7919 + 13) % facts.len();
            if i % 2 == 0 {
                (target, facts[target].text.clone(), true)
            } else {
                (target, facts[target].paraphrase.clone(), false)
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// The peers.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Api {
    Medulla,
    ServerMemory,
    BasicMemory { hybrid: bool },
}

/// A started server: its session, the processes to measure, and what keeps it alive.
struct Running {
    session: Box<dyn Session>,
    api: Api,
    pids: Vec<u32>,
    startup: Duration,
    owner: Option<Owner>,
    note: String,
    _dirs: Vec<tempfile::TempDir>,
}

fn write(r: &mut Running, f: &Fact) -> Result<(), String> {
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
fn search(r: &mut Running, q: &str) -> Result<Vec<String>, String> {
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
fn fastembed_cache(into: &Path) -> Result<PathBuf> {
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

const STARTUP_LIMIT: Duration = Duration::from_secs(180);

fn start_peer(name: &str, install: &mut Installs) -> Result<Running> {
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

/// Installs done at most once per run; a failure is remembered and reported per peer.
#[derive(Default)]
struct Installs {
    server_memory: Option<Result<PathBuf, String>>,
    basic_memory: Option<Result<PathBuf, String>>,
}

impl Installs {
    fn server_memory(&mut self) -> Result<PathBuf> {
        self.server_memory
            .get_or_insert_with(|| install_server_memory().map_err(|e| format!("{e:#}")))
            .clone()
            .map_err(anyhow::Error::msg)
    }
    fn basic_memory(&mut self) -> Result<PathBuf> {
        self.basic_memory
            .get_or_insert_with(|| install_basic_memory().map_err(|e| format!("{e:#}")))
            .clone()
            .map_err(anyhow::Error::msg)
    }
}

// ---------------------------------------------------------------------------------
// Running and reporting.

/// What one peer did at one size.
#[derive(Debug, Default)]
struct Outcome {
    peer: String,
    size: usize,
    note: String,
    startup_ms: f64,
    written: usize,
    write_errors: usize,
    write: Vec<Duration>,
    search: Vec<Duration>,
    search_errors: usize,
    hits_verbatim: usize,
    hits_para: usize,
    verbatim: usize,
    para: usize,
    rss_kib: u64,
    first_error: Option<String>,
    /// Why the peer did not run, or stopped, at this size.
    skipped: Option<String>,
}

fn measure(
    name: &str,
    size: usize,
    n_search: usize,
    budget: Duration,
    installs: &mut Installs,
) -> Outcome {
    let mut out = Outcome {
        peer: name.into(),
        size,
        ..Default::default()
    };
    let mut r = match start_peer(name, installs) {
        Ok(r) => r,
        Err(e) => {
            out.skipped = Some(format!("cannot run: {e:#}"));
            return out;
        }
    };
    out.note = r.note.clone();
    out.startup_ms = r.startup.as_secs_f64() * 1000.0;
    let facts = facts(size, 42);
    let t = Instant::now();
    for f in &facts {
        if t.elapsed() > budget {
            out.skipped = Some(format!(
                "wrote {} of {size} facts in the {} s budget; searches skipped",
                out.written,
                budget.as_secs()
            ));
            break;
        }
        let s = Instant::now();
        match write(&mut r, f) {
            Ok(()) => {
                out.write.push(s.elapsed());
                out.written += 1;
            }
            Err(e) => {
                out.write_errors += 1;
                out.first_error.get_or_insert(format!("write: {e}"));
                if out.write_errors >= 20 && out.written == 0 {
                    out.skipped = Some(format!("every write failed: {e}"));
                    break;
                }
            }
        }
    }
    if out.skipped.is_none() {
        for (target, q, verbatim) in searches(&facts, n_search) {
            let s = Instant::now();
            let got = search(&mut r, &q);
            let took = s.elapsed();
            if verbatim {
                out.verbatim += 1;
            } else {
                out.para += 1;
            }
            match got {
                Ok(labels) => {
                    out.search.push(took);
                    let want = facts[target].label.to_lowercase();
                    if labels.iter().any(|l| l.trim().to_lowercase() == want) {
                        if verbatim {
                            out.hits_verbatim += 1;
                        } else {
                            out.hits_para += 1;
                        }
                    }
                }
                Err(e) => {
                    out.search_errors += 1;
                    out.first_error.get_or_insert(format!("search: {e}"));
                }
            }
        }
    }
    out.rss_kib = r.pids.iter().map(|p| mcp::rss_tree_kib(*p)).sum();
    if let Some(o) = &r.owner {
        // The bridge's row counts the owner too; say so.
        if r.pids.len() > 1 {
            out.note = format!(
                "{}; RSS is owner {:.0} MiB + bridge {:.0} MiB",
                out.note,
                o.rss_kib() as f64 / 1024.0,
                mcp::rss_tree_kib(r.pids[1]) as f64 / 1024.0
            );
        }
    }
    let Running { session, owner, .. } = r;
    drop(session);
    drop(owner);
    out
}

fn fmt_ms(v: &mut [Duration], p: f64) -> String {
    if v.is_empty() {
        "–".into()
    } else {
        format!("{:.2}", mcp::pct_ms(v, p))
    }
}

fn ratio(v: &mut [Duration], base: &mut [Duration]) -> String {
    if v.is_empty() || base.is_empty() {
        "–".into()
    } else {
        let r = mcp::pct_ms(v, 0.5) / mcp::pct_ms(base, 0.5);
        if r < 0.95 {
            format!("{r:.2}×")
        } else {
            format!("{r:.1}×")
        }
    }
}

fn print_table(results: &mut [Outcome]) {
    println!("\n| peer | facts | write p50 (ms) | write p95 (ms) | search p50 (ms) | search p95 (ms) | hit@5 verbatim | hit@5 paraphrased | hit@5 all | RSS (MiB) | startup (s) | write p50 vs medulla-http | search p50 vs medulla-http |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let sizes: Vec<usize> = {
        let mut s: Vec<usize> = results.iter().map(|o| o.size).collect();
        s.dedup();
        s
    };
    for size in sizes {
        let base = results
            .iter()
            .position(|o| o.size == size && o.peer == "medulla-http" && o.skipped.is_none());
        let (mut bw, mut bs) = base
            .map(|i| (results[i].write.clone(), results[i].search.clone()))
            .unwrap_or_default();
        for o in results.iter_mut().filter(|o| o.size == size) {
            if o.write.is_empty() && o.skipped.is_some() {
                println!(
                    "| {} | {size} | – | – | – | – | – | – | – | – | – | – | – |",
                    o.peer
                );
                continue;
            }
            let searched = o.skipped.is_none();
            let hit = |h: usize, n: usize| {
                if searched && n > 0 {
                    format!("{:.2} ({h}/{n})", h as f64 / n as f64)
                } else {
                    "–".into()
                }
            };
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.1} | {} | {} |",
                o.peer,
                if searched {
                    size.to_string()
                } else {
                    format!("{} of {size}", o.written)
                },
                fmt_ms(&mut o.write, 0.5),
                fmt_ms(&mut o.write, 0.95),
                fmt_ms(&mut o.search, 0.5),
                fmt_ms(&mut o.search, 0.95),
                hit(o.hits_verbatim, o.verbatim),
                hit(o.hits_para, o.para),
                hit(o.hits_verbatim + o.hits_para, o.verbatim + o.para),
                o.rss_kib as f64 / 1024.0,
                o.startup_ms / 1000.0,
                ratio(&mut o.write, &mut bw),
                ratio(&mut o.search, &mut bs),
            );
        }
    }
    println!();
    for o in results.iter() {
        let mut line = format!("- {} at {} facts: {}", o.peer, o.size, o.note);
        if o.write_errors + o.search_errors > 0 {
            line.push_str(&format!(
                "; {} write errors, {} search errors (first: {})",
                o.write_errors,
                o.search_errors,
                o.first_error.as_deref().unwrap_or("?")
            ));
        }
        if let Some(s) = &o.skipped {
            line.push_str(&format!("; {s}"));
        }
        println!("{line}");
    }
}

pub fn run(args: &[String]) -> Result<()> {
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let sizes: Vec<usize> = value("--sizes")
        .unwrap_or_else(|| "200,2000".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .context("--sizes takes numbers, e.g. 200,2000")
        })
        .collect::<Result<_>>()?;
    let n_search = crate::flag_num(args, "--searches", 100)?;
    let budget = Duration::from_secs(crate::flag_num(args, "--budget-secs", 300)? as u64);
    let only: Vec<String> = value("--only")
        .map(|o| o.split(',').map(str::to_string).collect())
        .unwrap_or_else(|| ALL_PEERS.iter().map(|s| s.to_string()).collect());
    for p in &only {
        if !ALL_PEERS.contains(&p.as_str()) {
            bail!("unknown peer {p:?}: one of {}", ALL_PEERS.join(", "));
        }
    }
    if sizes.iter().any(|&s| s == 0 || s > MAX_FACTS) || n_search == 0 {
        bail!("--sizes must be within 1..={MAX_FACTS} and --searches at least 1");
    }
    println!(
        "workload: per size, that many facts written one by one, then {n_search} searches (half verbatim, half paraphrased); hit@5 = the target's label among the first 5 results; write budget {} s per peer and size",
        budget.as_secs()
    );
    let mut installs = Installs::default();
    let mut results = Vec::new();
    for &size in &sizes {
        for p in &only {
            eprintln!("{p}: {size} facts…");
            let t = Instant::now();
            let o = measure(p, size, n_search, budget, &mut installs);
            eprintln!(
                "{p}: {size} facts done in {:.0} s{}",
                t.elapsed().as_secs_f64(),
                o.skipped
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            );
            results.push(o);
        }
    }
    print_table(&mut results);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_deterministic_and_labels_distinct() {
        let a = facts(2000, 42);
        assert_eq!(a.len(), 2000);
        let labels: std::collections::HashSet<_> = a.iter().map(|f| &f.label).collect();
        assert_eq!(labels.len(), 2000);
        assert_eq!(facts(200, 42)[17].text, a[17].text);
    }

    #[test]
    fn half_the_searches_are_paraphrased() {
        let f = facts(200, 42);
        let s = searches(&f, 100);
        assert_eq!(s.iter().filter(|(_, _, v)| *v).count(), 50);
        assert!(s.iter().all(|(t, q, v)| *v == (q == &f[*t].text)));
    }
}
