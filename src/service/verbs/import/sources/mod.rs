//! The memory other tools keep, read into one shape: each source a small reader of its
//! own files into [`Entry`]s (what a claim needs, where it came from, whose it is), never
//! writing a byte back. Which store an entry goes to is decided after reading, from its
//! [`Scope`] (`import/from_route.rs`).

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod basic_memory;
mod claude;
mod codex;
mod mcp_memory;
mod serena;
pub(super) mod text;

/// A tool whose memory `import --from` reads.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Claude Code's auto memory (`~/.claude/projects/<project>/memory/`).
    Claude,
    /// Codex's memories (`~/.codex/memories/`).
    Codex,
    /// Serena's memories (`<project>/.serena/memories/`, `~/.serena/memories/global/`).
    Serena,
    /// basic-memory's notes (its projects, from `~/.basic-memory/config.json`).
    BasicMemory,
    /// The MCP reference memory server's `memory.jsonl`.
    McpMemory,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Claude => "claude",
            Source::Codex => "codex",
            Source::Serena => "serena",
            Source::BasicMemory => "basic-memory",
            Source::McpMemory => "mcp-memory",
        }
    }

    /// The agent every claim of this source is written as (`import:claude`).
    pub fn agent(self) -> String {
        format!("import:{}", self.name())
    }

    /// How people call it.
    pub fn title(self) -> &'static str {
        match self {
            Source::Claude => "Claude Code auto memory",
            Source::Codex => "Codex memories",
            Source::Serena => "Serena memories",
            Source::BasicMemory => "basic-memory notes",
            Source::McpMemory => "the MCP memory server's graph",
        }
    }
}

/// Whose an entry is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// The project at this path: the brain a request from there reaches.
    Project(PathBuf),
    /// A Claude Code project directory, named by the slug of its project's path (never
    /// decoded: matched against each brain's root and checkouts); `cwd` is the working
    /// directory one of its transcripts recorded, when one did.
    ClaudeProject { slug: String, cwd: Option<PathBuf> },
    /// About the person, wherever they work: the medulla.
    Person,
    /// A note of a knowledge base tied to no project: the medulla, unless the import
    /// names a brain.
    Unplaced,
    /// Project memory whose project the source does not say (the reason): only an
    /// import that names a brain takes it.
    Unknown(String),
}

/// One memory entry of a source: what its claim says and where it came from.
#[derive(Debug, Clone)]
pub struct Entry {
    pub scope: Scope,
    pub label: String,
    pub text: String,
    /// The file it was read from and its lines (1-based, inclusive).
    pub file: PathBuf,
    pub lines: (usize, usize),
    /// Further provenance that is not a file (`claude-session:<id>`, `codex-thread:<id>`).
    pub refs: Vec<String>,
    /// The source's own time for it, ms since the epoch (else the file's).
    pub created: Option<i64>,
}

impl Read {
    /// Each part of a body (`text::parts`) as an entry of `scope`, read at its lines of
    /// `file`.
    fn push_parts(
        &mut self,
        parts: Vec<text::Part>,
        scope: &Scope,
        file: &Path,
        refs: &[String],
        created: Option<i64>,
    ) {
        self.entries.extend(parts.into_iter().map(|p| Entry {
            scope: scope.clone(),
            label: p.label,
            text: p.text,
            file: file.to_path_buf(),
            lines: (p.start, p.end),
            refs: refs.to_vec(),
            created,
        }));
    }
}

/// What a source holds that the import leaves alone, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Skipped {
    pub file: PathBuf,
    pub why: String,
}

/// What reading a source gave.
#[derive(Debug, Default)]
pub struct Read {
    pub entries: Vec<Entry>,
    pub skipped: Vec<Skipped>,
    /// The files read.
    pub files: usize,
}

impl Read {
    fn skip(&mut self, file: &Path, why: impl Into<String>) {
        self.skipped.push(Skipped {
            file: file.to_path_buf(),
            why: why.into(),
        });
    }
}

/// Read `source` at `place` (a file or directory it keeps; see each reader). `projects`
/// are the directories known to be projects (each brain's checkouts that exist), where a
/// source that keeps memory inside projects (Serena) looks too when `place` is its home.
pub fn read(source: Source, place: &Path, projects: &[PathBuf]) -> Read {
    let mut out = Read::default();
    match source {
        Source::Claude => claude::read(place, &mut out),
        Source::Codex => codex::read(place, &mut out),
        Source::Serena => serena::read(place, projects, &mut out),
        Source::BasicMemory => basic_memory::read(place, &mut out),
        Source::McpMemory => mcp_memory::read(place, &mut out),
    }
    out
}

/// Where `source` keeps its memory when no path is given, from the environment `var`
/// reads (`HOME` and the tool's own variables): `CLAUDE_CONFIG_DIR` or `~/.claude`;
/// `CODEX_HOME` or `~/.codex`; `SERENA_HOME` or `~/.serena`; `BASIC_MEMORY_CONFIG_DIR`,
/// `$XDG_CONFIG_HOME/basic-memory` or `~/.basic-memory`; `MEMORY_FILE_PATH`, else the
/// newest `memory.jsonl` of the server in npx's cache. `None` when nothing says.
pub fn default_place(source: Source, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| var(k).filter(|v| !v.trim().is_empty()).map(PathBuf::from);
    let home = set("HOME");
    let under_home = |rel: &str| home.as_ref().map(|h| h.join(rel));
    match source {
        Source::Claude => set("CLAUDE_CONFIG_DIR").or_else(|| under_home(".claude")),
        Source::Codex => set("CODEX_HOME").or_else(|| under_home(".codex")),
        Source::Serena => set("SERENA_HOME").or_else(|| under_home(".serena")),
        Source::BasicMemory => set("BASIC_MEMORY_CONFIG_DIR")
            .or_else(|| set("XDG_CONFIG_HOME").map(|x| x.join("basic-memory")))
            .filter(|d| d.is_dir())
            .or_else(|| under_home(".basic-memory")),
        Source::McpMemory => set("MEMORY_FILE_PATH")
            .filter(|p| p.is_absolute())
            .or_else(|| mcp_memory::in_npx_cache(home.as_deref()?)),
    }
}

/// The `.md` files under `dir`, recursively, by path; hidden directories left out.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let hidden = e.file_name().to_string_lossy().starts_with('.');
            if p.is_dir() {
                if !hidden {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "md") && p.is_file() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A file's text, or why not (said without its bytes).
fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("unreadable: {}", e.kind()))?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

/// The fixture of one tool's memory under `tests/data/import/`.
#[cfg(test)]
fn fixture(tool: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/import")
        .join(tool)
}
