//! Each agent client's own configuration file and the entry medulla writes there, in that
//! client's shape. A project scope is committed and cloned, so its caller root is a
//! variable the client expands (its own: `${workspaceFolder}` for VS Code and Cursor,
//! `${PWD}` for Claude Code and Gemini CLI, Codex's `env_http_headers` naming `PWD`,
//! `{env:PWD}` for opencode),
//! never this machine's path; a user scope is shared by every project, so it registers
//! the stdio bridge, which sends its working directory as the caller root.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The clients `medulla connect` configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentClient {
    /// Claude Code: `.mcp.json` (project) or `~/.claude.json` (user)
    ClaudeCode,
    /// Claude Desktop: its `claude_desktop_config.json` (user only; the stdio bridge)
    ClaudeDesktop,
    /// Codex: `.codex/config.toml` (a trusted project) or `~/.codex/config.toml`
    Codex,
    /// Cursor: `.cursor/mcp.json` or `~/.cursor/mcp.json`
    Cursor,
    /// VS Code: `.vscode/mcp.json` (project) or the user profile's `mcp.json`
    Vscode,
    /// Gemini CLI: `.gemini/settings.json` or `~/.gemini/settings.json`
    Gemini,
    /// Windsurf: `~/.codeium/windsurf/mcp_config.json` (user only; the stdio bridge)
    Windsurf,
    /// opencode: `opencode.json` (or `opencode.jsonc`) or `~/.config/opencode/opencode.json`
    Opencode,
}

/// Where an entry goes: this project's file, or the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    Project,
    User,
}

/// A configuration file's syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Json,
    Toml,
}

/// What `connect` writes for one client: the file, the path of keys to the entry, and the
/// entry itself (as JSON; TOML files get the same tree).
#[derive(Debug, Clone)]
pub struct Entry {
    pub file: PathBuf,
    pub syntax: Syntax,
    /// Keys from the document's root to the server's table, the last one `medulla`.
    pub keys: Vec<&'static str>,
    pub value: Value,
    /// The transport the entry configures, which `connect` then checks.
    pub transport: Transport,
}

/// How a configured client reaches the owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP to the owner with these headers (values as written: a variable
    /// the client expands stays a variable; the check expands it as the client would).
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// The stdio bridge, run in the project's directory.
    Stdio { command: String, args: Vec<String> },
}

/// opencode's project file: `opencode.jsonc` when the project keeps one, else
/// `opencode.json`.
fn opencode_file(root: &Path) -> PathBuf {
    let jsonc = root.join("opencode.jsonc");
    if jsonc.exists() && !root.join("opencode.json").exists() {
        jsonc
    } else {
        root.join("opencode.json")
    }
}

/// Where the user's files are.
#[derive(Debug, Clone)]
pub struct Places {
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    pub config: PathBuf,
}

impl Places {
    pub fn from_env() -> anyhow::Result<Places> {
        let home = std::env::var_os("HOME").map(PathBuf::from).ok_or_else(|| {
            anyhow::anyhow!(
                "HOME is not set: the user's configuration files cannot be found; set HOME"
            )
        })?;
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".config"));
        Ok(Places { home, config })
    }
}

impl AgentClient {
    pub fn name(self) -> &'static str {
        match self {
            AgentClient::ClaudeCode => "claude-code",
            AgentClient::ClaudeDesktop => "claude-desktop",
            AgentClient::Codex => "codex",
            AgentClient::Cursor => "cursor",
            AgentClient::Vscode => "vscode",
            AgentClient::Gemini => "gemini",
            AgentClient::Windsurf => "windsurf",
            AgentClient::Opencode => "opencode",
        }
    }

    /// The MCP protocol version the client's SDK asks for in `initialize`: the check
    /// speaks it, and reads the owner's event streams as that client reads them.
    pub fn protocol(self) -> &'static str {
        match self {
            // Claude Code 2.1 asks for 2025-11-25 (after a `server/discover` probe);
            // opencode 1.18's TypeScript SDK for 2025-11-25 too.
            AgentClient::ClaudeCode | AgentClient::Opencode => "2025-11-25",
            // Codex 0.171 (rmcp) and Gemini CLI 0.61 (a TypeScript SDK that parses every
            // event as a message) ask for 2025-06-18; so do the others medulla knows.
            _ => "2025-06-18",
        }
    }

    /// The scope used when none is asked for: the project's where the client has one.
    pub fn default_scope(self) -> Scope {
        match self {
            AgentClient::ClaudeDesktop | AgentClient::Windsurf => Scope::User,
            _ => Scope::Project,
        }
    }

    /// The agent id its calls carry (`Medulla-Agent`), vendor:role.
    fn agent(self) -> &'static str {
        match self {
            AgentClient::ClaudeCode | AgentClient::ClaudeDesktop => "claude:maker",
            AgentClient::Codex => "codex:maker",
            AgentClient::Cursor => "cursor:maker",
            AgentClient::Vscode => "copilot:maker",
            AgentClient::Gemini => "gemini:maker",
            AgentClient::Windsurf => "windsurf:maker",
            AgentClient::Opencode => "opencode:maker",
        }
    }

    /// The entry for this client in `scope`: `root` is the project (canonical), `url` the
    /// owner's MCP endpoint, `bin` how the bridge runs medulla.
    pub fn entry(
        self,
        scope: Scope,
        places: &Places,
        root: &Path,
        url: &str,
        bin: &crate::cli::launcher::Launcher,
    ) -> anyhow::Result<Entry> {
        let (bin, bridge_args) = bin.argv(&["bridge"]);
        let mcp = format!("{}/mcp", url.trim_end_matches('/'));
        // What each client expands in a committed file to the directory it runs in.
        const PWD: &str = "${PWD}";
        const OPENCODE_PWD: &str = "{env:PWD}";
        const WORKSPACE: &str = "${workspaceFolder}";
        let headers = |root: &str| {
            vec![
                ("Medulla-Caller-Root".to_string(), root.to_string()),
                ("Medulla-Agent".to_string(), self.agent().to_string()),
            ]
        };
        let header_map = |h: &[(String, String)]| {
            Value::Object(
                h.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            )
        };
        let http = |root: &str| Transport::Http {
            url: mcp.clone(),
            headers: headers(root),
        };
        let stdio = Transport::Stdio {
            command: bin.clone(),
            args: bridge_args.clone(),
        };
        let no_project = || {
            anyhow::anyhow!(
                "{} has no project scope: it reads one user-wide file; run `medulla connect {} --scope user` (it registers the stdio bridge, which routes by the directory the client runs in)",
                self.name(),
                self.name()
            )
        };
        let e = match (self, scope) {
            // Claude Code expands `${VAR}` and `${VAR:-default}` in `headers` from its own
            // environment; the shell that starts it sets `PWD` to where it runs.
            (AgentClient::ClaudeCode, Scope::Project) => Entry {
                file: root.join(".mcp.json"),
                syntax: Syntax::Json,
                keys: vec!["mcpServers", "medulla"],
                value: json!({ "type": "http", "url": mcp, "headers": header_map(&headers(PWD)) }),
                transport: http(PWD),
            },
            (AgentClient::ClaudeCode, Scope::User) => Entry {
                file: places.home.join(".claude.json"),
                syntax: Syntax::Json,
                keys: vec!["mcpServers", "medulla"],
                value: json!({ "type": "stdio", "command": bin, "args": bridge_args }),
                transport: stdio,
            },
            (AgentClient::ClaudeDesktop, Scope::User) => Entry {
                file: places
                    .config
                    .join("Claude")
                    .join("claude_desktop_config.json"),
                syntax: Syntax::Json,
                keys: vec!["mcpServers", "medulla"],
                value: json!({ "command": bin, "args": bridge_args }),
                transport: stdio,
            },
            (AgentClient::Codex, Scope::Project) => Entry {
                file: root.join(".codex").join("config.toml"),
                syntax: Syntax::Toml,
                keys: vec!["mcp_servers", "medulla"],
                // Codex reads `http_headers` (literal values; a plain `headers` key is
                // ignored there) and `env_http_headers` (a header from the variable named).
                value: json!({
                    "url": mcp,
                    "http_headers": { "Medulla-Agent": self.agent() },
                    "env_http_headers": { "Medulla-Caller-Root": "PWD" },
                }),
                transport: http(PWD),
            },
            (AgentClient::Codex, Scope::User) => Entry {
                file: places.home.join(".codex").join("config.toml"),
                syntax: Syntax::Toml,
                keys: vec!["mcp_servers", "medulla"],
                value: json!({ "command": bin, "args": bridge_args }),
                transport: stdio,
            },
            // Cursor expands `${workspaceFolder}` in `headers`, as VS Code does.
            (AgentClient::Cursor, Scope::Project) => Entry {
                file: root.join(".cursor").join("mcp.json"),
                syntax: Syntax::Json,
                keys: vec!["mcpServers", "medulla"],
                value: json!({ "url": mcp, "headers": header_map(&headers(WORKSPACE)) }),
                transport: http(WORKSPACE),
            },
            (AgentClient::Cursor, Scope::User) => Entry {
                file: places.home.join(".cursor").join("mcp.json"),
                syntax: Syntax::Json,
                keys: vec!["mcpServers", "medulla"],
                value: json!({ "command": bin, "args": bridge_args }),
                transport: stdio,
            },
            // VS Code expands `${workspaceFolder}` in mcp.json: the project entry names
            // its own root wherever the clone lives.
            (AgentClient::Vscode, Scope::Project) => Entry {
                file: root.join(".vscode").join("mcp.json"),
                syntax: Syntax::Json,
                keys: vec!["servers", "medulla"],
                value: json!({ "type": "http", "url": mcp, "headers": header_map(&headers(WORKSPACE)) }),
                transport: http(WORKSPACE),
            },
            (AgentClient::Vscode, Scope::User) => Entry {
                file: places.config.join("Code").join("User").join("mcp.json"),
                syntax: Syntax::Json,
                keys: vec!["servers", "medulla"],
                value: json!({ "type": "stdio", "command": bin, "args": bridge_args }),
                transport: stdio,
            },
            // Gemini CLI: `httpUrl` is Streamable HTTP (a plain `url` would mean SSE); it
            // resolves `$VAR` and `${VAR}` in every string of settings.json.
            // Headless, Gemini CLI offers its model no tool it would have to ask about:
            // `trust` lets medulla's run without asking, all but `purge` (erasing every
            // version of a claim), which is left out.
            (AgentClient::Gemini, Scope::Project) => Entry {
                file: root.join(".gemini").join("settings.json"),
                syntax: Syntax::Json,
                keys: vec!["mcpServers", "medulla"],
                value: json!({ "httpUrl": mcp, "headers": header_map(&headers(PWD)),
                               "trust": true, "excludeTools": ["purge"] }),
                transport: http(PWD),
            },
            (AgentClient::Gemini, Scope::User) => Entry {
                file: places.home.join(".gemini").join("settings.json"),
                syntax: Syntax::Json,
                keys: vec!["mcpServers", "medulla"],
                value: json!({ "command": bin, "args": bridge_args,
                               "trust": true, "excludeTools": ["purge"] }),
                transport: stdio,
            },
            (AgentClient::Windsurf, Scope::User) => Entry {
                file: places
                    .home
                    .join(".codeium")
                    .join("windsurf")
                    .join("mcp_config.json"),
                syntax: Syntax::Json,
                keys: vec!["mcpServers", "medulla"],
                value: json!({ "command": bin, "args": bridge_args }),
                transport: stdio,
            },
            // opencode substitutes `{env:VAR}` in its config when it loads it; its remote
            // servers are Streamable HTTP. An `opencode.jsonc` the project keeps is edited in
            // its place.
            (AgentClient::Opencode, Scope::Project) => Entry {
                file: opencode_file(root),
                syntax: Syntax::Json,
                keys: vec!["mcp", "medulla"],
                value: json!({ "type": "remote", "url": mcp, "enabled": true,
                               "headers": header_map(&headers(OPENCODE_PWD)) }),
                transport: http(OPENCODE_PWD),
            },
            (AgentClient::Opencode, Scope::User) => {
                let mut command = vec![bin.clone()];
                command.extend(bridge_args.iter().cloned());
                Entry {
                    file: places.config.join("opencode").join("opencode.json"),
                    syntax: Syntax::Json,
                    keys: vec!["mcp", "medulla"],
                    value: json!({ "type": "local", "command": command, "enabled": true }),
                    transport: stdio,
                }
            }
            (AgentClient::ClaudeDesktop | AgentClient::Windsurf, Scope::Project) => {
                return Err(no_project())
            }
        };
        Ok(e)
    }
}
