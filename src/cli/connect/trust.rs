//! What a person must still do before a client uses what `connect` wrote in a project.
//! Each client below reads a project's own settings (its MCP entry, its hooks, its
//! permission rules) only once the person has trusted the folder, a step the client asks
//! about at its first interactive run and a headless run never shows. Trusting a folder
//! hands it more than medulla (its commands, its sandbox), so `connect` never does it for
//! the person: it reads whether the folder is trusted and, when not, names the step.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::clients::{AgentClient, Places};
use super::files;

/// The step left for `client` in the project at `root`, or `None` when there is none.
pub fn note(client: AgentClient, root: &Path) -> Option<String> {
    let main = crate::git::locate(root).map(|c| c.main_toplevel());
    match client {
        AgentClient::ClaudeCode => claude(root, main.as_deref()),
        AgentClient::Codex => codex(root, main.as_deref()),
        AgentClient::Gemini => gemini(root),
        _ => None,
    }
}

fn json_file(path: &Path) -> Value {
    files::read(path)
        .ok()
        .flatten()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Claude Code ignores a project's `permissions.allow` until its folder is trusted
/// (`projects["<dir>"].hasTrustDialogAccepted` in `~/.claude.json`; a linked worktree
/// counts as its main checkout, a trusted folder covers those below it).
fn claude(root: &Path, main: Option<&Path>) -> Option<String> {
    let home = Places::from_env().ok()?.home;
    let dir = std::env::var_os("CLAUDE_CONFIG_DIR").map_or(home, PathBuf::from);
    let state = json_file(&dir.join(".claude.json"));
    let trusted = |d: &Path| {
        state["projects"][d.to_string_lossy().as_ref()]["hasTrustDialogAccepted"] == true
    };
    let any = root
        .ancestors()
        .chain(main.into_iter().flat_map(Path::ancestors))
        .any(trusted);
    (!any).then(|| {
        format!(
            "Claude Code applies this project's rule for medulla's tools once you trust the folder: run `claude` in {} once and accept its trust dialog (until then a headless `claude -p` is refused medulla's tools; `--allowedTools {}` allows them for one run)",
            main.unwrap_or(root).display(),
            super::permissions::CLAUDE_ALLOW
        )
    })
}

/// Codex reads a project's `.codex/config.toml` only in a trusted project
/// (`[projects."<main checkout>"] trust_level = "trusted"` in its user config).
fn codex(root: &Path, main: Option<&Path>) -> Option<String> {
    let config = super::codex::home().ok()?.join("config.toml");
    let text = files::read(&config).ok().flatten().unwrap_or_default();
    let doc: toml::Table = toml::from_str(&text).unwrap_or_default();
    let trusted = |d: &Path| {
        doc.get("projects")
            .and_then(|p| p.get(d.to_string_lossy().as_ref()))
            .and_then(|p| p.get("trust_level"))
            .and_then(|t| t.as_str())
            == Some("trusted")
    };
    let checkout = main.unwrap_or(root);
    (!trusted(checkout) && !trusted(root)).then(|| {
        format!(
            "Codex reads this project's .codex/config.toml (medulla's entry) once you trust the project: run `codex` in {} once and trust it, or `codex exec --trust`",
            checkout.display()
        )
    })
}

/// Gemini CLI reads a project's `.gemini/settings.json` only in a trusted folder, and a
/// headless run in any other stops (exit 55). Its trust is by path: a folder named
/// `TRUST_FOLDER`, or below one named `TRUST_PARENT`, in `~/.gemini/trustedFolders.json`;
/// so each linked worktree is a folder of its own. Off altogether with
/// `GEMINI_CLI_TRUST_WORKSPACE=true` or `security.folderTrust.enabled = false`.
fn gemini(root: &Path) -> Option<String> {
    if std::env::var("GEMINI_CLI_TRUST_WORKSPACE").is_ok_and(|v| v == "true") {
        return None;
    }
    let home = Places::from_env().ok()?.home;
    let dir = std::env::var_os("GEMINI_CLI_HOME").map_or(home, PathBuf::from);
    let settings = json_file(&dir.join(".gemini").join("settings.json"));
    if settings["security"]["folderTrust"]["enabled"] == false {
        return None;
    }
    let folders = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH").map_or_else(
        || dir.join(".gemini").join("trustedFolders.json"),
        PathBuf::from,
    );
    let folders = json_file(&folders);
    let level = |d: &Path| {
        folders[d.to_string_lossy().as_ref()]
            .as_str()
            .map(str::to_string)
    };
    let trusted = level(root).as_deref() == Some("TRUST_FOLDER")
        || root
            .ancestors()
            .skip(1)
            .any(|d| level(d).as_deref() == Some("TRUST_PARENT"));
    (!trusted).then(|| {
        format!(
            "Gemini CLI reads .gemini/settings.json (medulla's server and hooks) only in a trusted folder, and a headless `gemini -p` elsewhere stops: trust {} when Gemini asks, or add it to ~/.gemini/trustedFolders.json as TRUST_FOLDER (each linked worktree is a folder of its own: TRUST_PARENT on the directory holding them covers them all)",
            root.display()
        )
    })
}
