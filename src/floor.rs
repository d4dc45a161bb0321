//! The hygiene floor: every field of text that enters the medulla, a mailbox box or an
//! export (label, text, evidence, the promotion reason) is scanned for secrets and
//! merge-conflict markers, and a project write is scanned too (refused by default, or
//! accepted and flagged when `project_secrets = "flag"`). Findings are redacted: a
//! refusal never repeats the secret it refused.

use serde::Serialize;
use serde_json::Value;

use crate::error::OwnerError;

/// One finding, with the field it was found in.
#[derive(Debug, Clone, Serialize)]
pub struct FieldFinding {
    pub field: String,
    #[serde(flatten)]
    pub finding: brains::hygiene::Finding,
}

/// Every finding over the named fields.
pub fn scan<'a>(fields: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<FieldFinding> {
    fields
        .into_iter()
        .flat_map(|(field, text)| {
            brains::hygiene::scan(text)
                .into_iter()
                .map(move |finding| FieldFinding {
                    field: field.to_string(),
                    finding,
                })
        })
        .collect()
}

/// The fields of a claim the floor reads.
pub fn claim_fields<'a>(
    label: &'a str,
    text: &'a str,
    evidence: &'a [String],
) -> Vec<(&'a str, &'a str)> {
    let mut v = vec![("label", label), ("text", text)];
    v.extend(evidence.iter().map(|e| ("evidence", e.as_str())));
    v
}

/// Findings as the one line a message carries.
pub fn summary(findings: &[FieldFinding]) -> String {
    findings
        .iter()
        .map(|f| {
            format!(
                "{} {} on line {} of the {}",
                f.finding.kind.as_str(),
                f.finding.redacted,
                f.finding.line,
                f.field
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn to_json(findings: &[FieldFinding]) -> Value {
    serde_json::to_value(findings).unwrap_or(Value::Null)
}

/// The fix a refusal names, by where the text was going.
pub const FIX_SHARED: &str = "remove the secret or conflict marker (supersede the claim without it, or purge it) and try again; shared memory never holds secrets";
pub const FIX_PROJECT: &str = "keep secrets in your secret store and write a reference to it instead (\"the deploy key is in the vault under deploy/prod\"); to accept and flag secrets in project brains set project_secrets = \"flag\" in config.toml";

/// Refuse when anything matched.
pub fn refuse<'a>(
    fields: impl IntoIterator<Item = (&'a str, &'a str)>,
    fix: &str,
) -> Result<(), OwnerError> {
    let findings = scan(fields);
    if findings.is_empty() {
        return Ok(());
    }
    Err(OwnerError::HygieneRefused {
        found: summary(&findings),
        findings: to_json(&findings),
        fix: fix.to_string(),
    })
}
