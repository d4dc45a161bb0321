//! Triage rules for importing a mixed legacy store: each claim to the one brain whose
//! rules match it; unmatched and ambiguous claims stay in the medulla.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;

use crate::error::{OwnerError, Result};
use crate::service::route::find_brain;
use crate::service::Service;
use crate::store_id::Fingerprint;

/// One rule: every pattern given must match (regexes); `brain` is a registered root.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    brain: String,
    path: Option<String>,
    label: Option<String>,
    text: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rules {
    #[serde(default)]
    rule: Vec<Rule>,
}

pub struct CompiledRule {
    pub fp: Fingerprint,
    pub root: String,
    path: Option<regex::Regex>,
    label: Option<regex::Regex>,
    text: Option<regex::Regex>,
}

/// Read the rules. Errors name the file and the line, never its bytes: an error message
/// must not become a way to read a file (`triage: "/etc/passwd"`).
pub fn load(svc: &Service, path: &Path) -> Result<Vec<CompiledRule>> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| {
        OwnerError::BadInput(format!(
            "cannot read the triage rules {shown}: {}",
            e.kind()
        ))
    })?;
    let rules: Rules = toml::from_str(&text).map_err(|e| {
        OwnerError::BadInput(format!(
            "{shown} is not a valid rules file ({}): see docs/OPERATIONS.md for the [[rule]] format",
            crate::config::toml_problem(&text, &e).chars().take(200).collect::<String>()
        ))
    })?;
    let re = |p: &Option<String>| -> Result<Option<regex::Regex>> {
        p.as_deref()
            .map(|p| {
                regex::Regex::new(p).map_err(|_| {
                    OwnerError::BadInput(format!("a pattern in {shown} is not a valid regex"))
                })
            })
            .transpose()
    };
    rules
        .rule
        .iter()
        .map(|r| {
            let m = find_brain(&svc.owner.registry, &r.brain).ok_or_else(|| {
                OwnerError::UnknownBrain {
                    name: r.brain.clone(),
                }
            })?;
            Ok(CompiledRule {
                fp: m.fingerprint,
                root: m.root,
                path: re(&r.path)?,
                label: re(&r.label)?,
                text: re(&r.text)?,
            })
        })
        .collect()
}

/// The brains (fingerprint, root) whose rules match a claim.
pub fn matches(
    rules: &[CompiledRule],
    file: &Path,
    label: &str,
    text: &str,
) -> BTreeSet<(Fingerprint, String)> {
    rules
        .iter()
        .filter(|r| {
            r.path
                .as_ref()
                .is_none_or(|re| re.is_match(&file.to_string_lossy()))
                && r.label.as_ref().is_none_or(|re| re.is_match(label))
                && r.text.as_ref().is_none_or(|re| re.is_match(text))
        })
        .map(|r| (r.fp.clone(), r.root.clone()))
        .collect()
}
