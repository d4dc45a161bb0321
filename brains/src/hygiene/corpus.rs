//! The scanner measured against a corpus: recall over secrets that must be caught as
//! their kind, false-positive rate over innocent texts. The test suite asserts on the
//! figures and `cargo xtask hygiene corpus` prints them, from this one definition.
//!
//! Corpus files are JSON lines: `{"text": …, "kind": <FindingKind::as_str>, "secret":
//! <the secret value, or "">, "note": …, "case": <optional name>}` for positives and
//! `{"text": …, "note": …, "case": …}` for negatives; other fields are ignored.

use serde_json::Value;

use super::{scan, Finding};

/// One corpus line.
#[derive(Debug, Clone)]
pub struct Case {
    pub text: String,
    /// The kind a positive must be caught as (empty for negatives).
    pub kind: String,
    /// The secret value a positive carries, when the kind has one.
    pub secret: String,
    pub note: String,
    /// A name the tests find the case by.
    pub case: Option<String>,
}

/// The cases of a corpus file's text; `Err` names the line that is not a JSON object.
pub fn parse(raw: &str) -> Result<Vec<Case>, String> {
    raw.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            let v: Value = serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1))?;
            let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            Ok(Case {
                text: s("text"),
                kind: s("kind"),
                secret: s("secret"),
                note: s("note"),
                case: v.get("case").and_then(Value::as_str).map(str::to_string),
            })
        })
        .collect()
}

/// What a corpus measured: every miss and false alarm, described.
#[derive(Debug, Clone)]
pub struct Measured {
    pub positives: usize,
    pub negatives: usize,
    pub misses: Vec<String>,
    pub alarms: Vec<String>,
}

impl Measured {
    /// The share of positives caught as their kind.
    pub fn recall(&self) -> f64 {
        1.0 - self.misses.len() as f64 / self.positives.max(1) as f64
    }

    /// The share of negatives with any finding.
    pub fn fp_rate(&self) -> f64 {
        self.alarms.len() as f64 / self.negatives.max(1) as f64
    }
}

impl std::fmt::Display for Measured {
    /// The summary line, then each miss and false alarm on its own line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "hygiene corpus: recall {:.1} % ({}/{} positives), false positives {:.1} % ({}/{} negatives)",
            self.recall() * 100.0,
            self.positives - self.misses.len(),
            self.positives,
            self.fp_rate() * 100.0,
            self.alarms.len(),
            self.negatives
        )?;
        for m in &self.misses {
            write!(f, "\n  miss: {m}")?;
        }
        for a in &self.alarms {
            write!(f, "\n  false alarm: {a}")?;
        }
        Ok(())
    }
}

fn kinds(found: &[Finding]) -> Vec<&'static str> {
    found.iter().map(|f| f.kind.as_str()).collect()
}

/// Scan every case: a positive is missed unless a finding has its kind; a negative is a
/// false alarm when anything is found.
pub fn measure(positives: &[Case], negatives: &[Case]) -> Measured {
    let mut misses = Vec::new();
    for c in positives {
        let found = scan(&c.text);
        if !found.iter().any(|f| f.kind.as_str() == c.kind) {
            misses.push(format!(
                "[{}] want {} got {:?}: {:?}",
                c.note,
                c.kind,
                kinds(&found),
                c.text
            ));
        }
    }
    let mut alarms = Vec::new();
    for c in negatives {
        let found = scan(&c.text);
        if !found.is_empty() {
            let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
            alarms.push(format!("[{}] {:?}: {:?}", c.note, shown, c.text));
        }
    }
    Measured {
        positives: positives.len(),
        negatives: negatives.len(),
        misses,
        alarms,
    }
}
