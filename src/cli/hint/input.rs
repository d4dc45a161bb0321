//! What a client's prompt or tool hook says on stdin, in each client's own shape:
//! Claude Code's `UserPromptSubmit` and `PostToolUse` (`Read`, `Edit`, `Write`,
//! `MultiEdit`: `tool_input.file_path`; `NotebookEdit`: `notebook_path`), Codex's
//! `UserPromptSubmit` and `PostToolUse` (`apply_patch`: the paths on the patch's `*** …
//! File:` lines; `Bash`: the words of the command that are files of the project, since
//! Codex reads files with shell commands), Gemini CLI's `BeforeAgent` and `AfterTool`
//! (`read_file`, `write_file`, `replace`: `file_path`; `read_many_files`: `include`);
//! medulla's opencode plugin speaks Claude Code's shape.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cli::hook::HookClient;

/// Most files one tool call names that are asked about.
const MAX_FILES: usize = 8;

/// What the hook asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    Prompt(String),
    Files(Vec<PathBuf>),
}

/// A hook call as medulla reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCall {
    /// The event's name as the client sent it: the answer names it back.
    pub event: String,
    pub session: String,
    /// The directory the session works in: the caller root.
    pub cwd: PathBuf,
    pub ask: Ask,
}

/// Read a hook's JSON; `None` for anything that is not a prompt or file event medulla
/// answers (another tool, a malformed input).
pub fn read(client: HookClient, raw: &str) -> Option<HookCall> {
    let v: Value = serde_json::from_str(raw).ok()?;
    let event = v["hook_event_name"].as_str()?.to_string();
    let session = v["session_id"]
        .as_str()
        .filter(|s| !s.is_empty())?
        .to_string();
    let cwd = PathBuf::from(v["cwd"].as_str().filter(|c| Path::new(c).is_absolute())?);
    let prompt_event = match client {
        HookClient::Claude | HookClient::Codex | HookClient::Opencode => "UserPromptSubmit",
        HookClient::Gemini => "BeforeAgent",
    };
    let ask = if event == prompt_event {
        Ask::Prompt(v["prompt"].as_str()?.to_string())
    } else {
        let tool = v["tool_name"].as_str()?;
        let input = &v["tool_input"];
        let files = match (client, tool) {
            (
                HookClient::Claude | HookClient::Opencode,
                "Read" | "Edit" | "Write" | "MultiEdit",
            ) => {
                vec![input["file_path"].as_str()?.to_string()]
            }
            (HookClient::Claude, "NotebookEdit") => {
                vec![input["notebook_path"].as_str()?.to_string()]
            }
            (HookClient::Codex, "apply_patch" | "Edit" | "Write") => {
                patch_files(input["command"].as_str().or(input["patch"].as_str())?)
            }
            (HookClient::Codex, "Bash" | "shell" | "exec_command") => {
                let cmd = match &input["command"] {
                    Value::String(s) => s.clone(),
                    Value::Array(a) => a
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" "),
                    _ => return None,
                };
                command_files(&cmd, &cwd)
            }
            (HookClient::Gemini, "read_file" | "write_file" | "replace") => {
                vec![input["file_path"].as_str()?.to_string()]
            }
            (HookClient::Gemini, "read_many_files") => input["include"]
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .filter(|p| !p.contains(['*', '?', '[']))
                .map(str::to_string)
                .collect(),
            _ => return None,
        };
        let files: Vec<PathBuf> = files
            .into_iter()
            .take(MAX_FILES)
            .map(|f| {
                let p = PathBuf::from(f);
                if p.is_absolute() {
                    p
                } else {
                    cwd.join(p)
                }
            })
            .collect();
        if files.is_empty() {
            return None;
        }
        Ask::Files(files)
    };
    Some(HookCall {
        event,
        session,
        cwd,
        ask,
    })
}

/// The files an `apply_patch` patch adds, updates, deletes or moves to.
fn patch_files(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|l| {
            [
                "*** Add File: ",
                "*** Update File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ]
            .iter()
            .find_map(|p| l.strip_prefix(p))
        })
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// The words of a shell command that name a regular file under `cwd` (`cat src/a.rs`,
/// `sed -n 1,80p src/a.rs`, `rg cents src/billing.rs`).
fn command_files(cmd: &str, cwd: &Path) -> Vec<String> {
    cmd.split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '<' | '>'))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"'))
        .filter(|w| !w.is_empty() && !w.starts_with('-') && !w.contains('$'))
        .filter(|w| {
            let p = Path::new(w);
            let p = if p.is_absolute() {
                p.to_path_buf()
            } else {
                cwd.join(p)
            };
            p.starts_with(cwd) && p.is_file()
        })
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_client_is_read_in_its_own_shape() {
        let claude = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "UserPromptSubmit", "prompt": "how do I migrate?"});
        let c = read(HookClient::Claude, &claude.to_string()).unwrap();
        assert_eq!(c.ask, Ask::Prompt("how do I migrate?".into()));
        let read_file = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": "/p/src/billing.rs"}});
        assert_eq!(
            read(HookClient::Claude, &read_file.to_string())
                .unwrap()
                .ask,
            Ask::Files(vec![PathBuf::from("/p/src/billing.rs")])
        );
        let other_tool = json!({"session_id": "s1", "cwd": "/p", "hook_event_name": "PostToolUse", "tool_name": "WebFetch", "tool_input": {}});
        assert_eq!(read(HookClient::Claude, &other_tool.to_string()), None);
        let patch = "*** Begin Patch\n*** Update File: src/billing.rs\n@@\n-a\n+b\n*** Add File: src/new.rs\n+x\n*** End Patch";
        let codex = json!({"session_id": "s2", "cwd": "/p", "hook_event_name": "PostToolUse", "tool_name": "apply_patch", "tool_input": {"command": patch}});
        assert_eq!(
            read(HookClient::Codex, &codex.to_string()).unwrap().ask,
            Ask::Files(vec![
                PathBuf::from("/p/src/billing.rs"),
                PathBuf::from("/p/src/new.rs")
            ])
        );
        let gemini = json!({"session_id": "s3", "cwd": "/p", "hook_event_name": "BeforeAgent", "prompt": "hi"});
        assert_eq!(
            read(HookClient::Gemini, &gemini.to_string()).unwrap().ask,
            Ask::Prompt("hi".into())
        );
        let gemini_file = json!({"session_id": "s3", "cwd": "/p", "hook_event_name": "AfterTool", "tool_name": "read_file", "tool_input": {"file_path": "src/billing.rs"}});
        assert_eq!(
            read(HookClient::Gemini, &gemini_file.to_string())
                .unwrap()
                .ask,
            Ask::Files(vec![PathBuf::from("/p/src/billing.rs")])
        );
        for bad in ["", "{", "[]", r#"{"hook_event_name": "UserPromptSubmit"}"#] {
            assert_eq!(read(HookClient::Claude, bad), None, "{bad}");
        }
    }

    #[test]
    fn a_shell_command_names_the_project_files_it_reads() {
        let d = tempfile::tempdir().unwrap();
        let cwd = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(cwd.join("src")).unwrap();
        std::fs::write(cwd.join("src/billing.rs"), "x").unwrap();
        assert_eq!(
            command_files("sed -n '1,80p' src/billing.rs | head", &cwd),
            ["src/billing.rs"]
        );
        assert!(command_files("cat /etc/hostname", &cwd).is_empty());
        assert!(
            command_files("ls src", &cwd).is_empty(),
            "a directory is no file"
        );
    }
}
