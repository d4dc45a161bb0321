//! Which embedding model the user chose (`medulla model use`), kept in the home's
//! `model.json`: the static model (the default, shipped), a transformer fastembed knows by
//! name, or a directory with an ONNX model and its tokenizer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use brains::Embedder;
use serde::{Deserialize, Serialize};

use super::transformer::{named_cache, Transformer};
use super::{io, load_default, ModelError};

/// The file in the home that holds the choice.
pub const CHOICE_FILE: &str = "model.json";

/// How a transformer's token vectors make the text's vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Pooling {
    /// The mean of the token vectors (sentence-transformers models).
    Mean,
    /// The first token's vector (BGE models).
    Cls,
}

impl Pooling {
    pub fn as_str(self) -> &'static str {
        match self {
            Pooling::Mean => "mean",
            Pooling::Cls => "cls",
        }
    }

    /// What a sentence-transformers export says in `1_Pooling/config.json`; mean when it
    /// says nothing.
    pub fn of_dir(dir: &Path) -> Pooling {
        let cfg: serde_json::Value = std::fs::read(dir.join("1_Pooling/config.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        if cfg["pooling_mode_cls_token"].as_bool() == Some(true) {
            Pooling::Cls
        } else {
            Pooling::Mean
        }
    }
}

/// The model a user chose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Choice {
    /// The static model (potion-base-8M): the default.
    Static,
    /// A model fastembed knows, by name.
    Named { name: String },
    /// An ONNX model and its tokenizer in a directory.
    Dir {
        dir: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pooling: Option<Pooling>,
    },
}

impl Choice {
    /// What `medulla model use ARG` means: `static` (or the static model's name), an
    /// existing directory, else a name fastembed is asked for.
    pub fn parse(arg: &str, pooling: Option<Pooling>) -> Choice {
        let a = arg.trim();
        if a.eq_ignore_ascii_case("static") || a.eq_ignore_ascii_case(super::MODEL_NAME) {
            return Choice::Static;
        }
        let p = Path::new(a);
        if p.is_dir() {
            let dir = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            return Choice::Dir { dir, pooling };
        }
        Choice::Named {
            name: a.to_string(),
        }
    }

    /// The choice in `home`, `None` when none was made (the static model).
    pub fn read(home: &Path) -> Result<Option<Choice>, ModelError> {
        let path = home.join(CHOICE_FILE);
        match std::fs::read(&path) {
            Ok(b) => serde_json::from_slice(&b)
                .map(Some)
                .map_err(|e| ModelError::Choice {
                    path: path.display().to_string(),
                    detail: e.to_string(),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(&path)(e)),
        }
    }

    /// Keep the choice in `home` (written aside, then renamed into place).
    pub fn write(&self, home: &Path) -> Result<(), ModelError> {
        std::fs::create_dir_all(home).map_err(io(home))?;
        let path = home.join(CHOICE_FILE);
        let tmp = home.join(super::private_name("model-choice"));
        let body = serde_json::to_vec_pretty(self).expect("a choice serializes");
        std::fs::write(&tmp, body).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))
    }

    /// Load the chosen model: `Ok(None)` for the static model when its files are not
    /// on this machine (lexical-only, said in every answer). `static_dir`: where the
    /// static model is when the owner was told (`--model-dir`), else found as usual.
    pub fn load(&self, static_dir: Option<&Path>) -> Result<Option<Arc<dyn Embedder>>, ModelError> {
        match self {
            Choice::Static => match static_dir {
                Some(d) if super::is_complete(d) => super::load(d).map(Some),
                Some(_) => Ok(None),
                None => load_default(),
            },
            Choice::Named { name } => Ok(Some(Arc::new(Transformer::named(name, &named_cache())?))),
            Choice::Dir { dir, pooling } => {
                Ok(Some(Arc::new(Transformer::from_dir(dir, *pooling)?)))
            }
        }
    }

    /// How the choice reads to a person.
    pub fn describe(&self) -> String {
        match self {
            Choice::Static => format!("the static model ({})", super::MODEL_NAME),
            Choice::Named { name } => format!("the transformer {name} (fastembed)"),
            Choice::Dir { dir, .. } => format!("the ONNX model in {}", dir.display()),
        }
    }
}
