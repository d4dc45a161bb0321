//! The hygiene scanner: secrets and merge-conflict markers, reported redacted. It runs
//! before anything is shared beyond its project (promotion, doctrine birth, filing a
//! letter into a committable box).

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// What kind of thing matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    PrivateKey,
    AwsAccessKey,
    AwsSecretKey,
    GithubToken,
    GitlabToken,
    SlackToken,
    OpenaiKey,
    PasswordAssignment,
    HighEntropy,
    MergeConflict,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::PrivateKey => "private_key",
            FindingKind::AwsAccessKey => "aws_access_key",
            FindingKind::AwsSecretKey => "aws_secret_key",
            FindingKind::GithubToken => "github_token",
            FindingKind::GitlabToken => "gitlab_token",
            FindingKind::SlackToken => "slack_token",
            FindingKind::OpenaiKey => "openai_key",
            FindingKind::PasswordAssignment => "password_assignment",
            FindingKind::HighEntropy => "high_entropy",
            FindingKind::MergeConflict => "merge_conflict",
        }
    }
}

/// One match, never carrying the secret itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub redacted: String,
    /// 1-based line of the match.
    pub line: usize,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} on line {}",
            self.kind.as_str(),
            self.redacted,
            self.line
        )
    }
}

/// At most four leading and two trailing characters survive.
pub fn redact(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= 8 {
        return "…".to_string();
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 2..].iter().collect();
    format!("{head}…{tail}")
}

macro_rules! re {
    ($name:ident, $pat:expr) => {
        static $name: LazyLock<Regex> =
            LazyLock::new(|| Regex::new($pat).expect("a valid pattern"));
    };
}

re!(
    PRIVATE_KEY,
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
);
re!(AWS_ACCESS, r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b");
re!(
    AWS_SECRET,
    r#"(?i)aws.{0,20}?(?:secret|sk).{0,20}?['"=:\s]\s*['"]?([A-Za-z0-9/+=]{40})\b"#
);
re!(
    GITHUB,
    r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"
);
re!(GITLAB, r"\bglpat-[A-Za-z0-9_\-]{20,}\b");
re!(
    SLACK,
    r"\bxox[baprs]-[A-Za-z0-9-]{10,}\b|https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}"
);
re!(
    OPENAI,
    r"\bsk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_\-]{20,}\b"
);
re!(
    ASSIGNMENT,
    r#"(?i)(?:\b|_)(password|passwd|pwd|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|client[_-]?secret)\b["']?\s*[:=]\s*(?:"([^"\n]*)"|'([^'\n]*)'|([^\s,;'"]+))"#
);
re!(CANDIDATE, r"[A-Za-z0-9+/_\-]{24,}={0,2}");

const PLACEHOLDERS: &[&str] = &[
    "changeme",
    "password",
    "secret",
    "xxx",
    "xxxx",
    "xxxxxx",
    "example",
    "placeholder",
    "redacted",
    "none",
    "null",
    "true",
    "false",
    "your-password-here",
    "your_password",
    "hunter2x",
];

fn is_placeholder(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    v.chars().count() < 6
        || PLACEHOLDERS.contains(&l.as_str())
        || l.starts_with("your")
        || l.starts_with("<") && l.ends_with('>')
        || l.starts_with("${") || l.starts_with("$(") || l.starts_with('$')
        || l.starts_with("{{")
        || v.chars().all(|c| c == '*' || c == 'x' || c == 'X' || c == '.')
        // code, not a value: getenv(...), config.password, a type annotation
        || v.contains('(')
        || l.starts_with("os.") || l.starts_with("env") || l.starts_with("process.") || l.starts_with("self.")
        || matches!(l.as_str(), "str" | "string" | "bytes" | "option<string>" | "string," | "&str")
}

fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in s.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let n = s.chars().count() as f64;
    counts
        .values()
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

fn looks_like_credential(tok: &str) -> bool {
    let t = tok.trim_matches(|c| c == '=' || c == '-' || c == '_');
    let n = t.chars().count();
    if n < 24 {
        return false;
    }
    let hex = t.chars().all(|c| c.is_ascii_hexdigit());
    if hex {
        // git shas (40), sha256 digests (64) and their kin are identifiers, not secrets.
        return false;
    }
    let upper = t.chars().any(|c| c.is_ascii_uppercase());
    let lower = t.chars().any(|c| c.is_ascii_lowercase());
    let digit = t.chars().any(|c| c.is_ascii_digit());
    if !(upper && lower && digit) {
        return false;
    }
    // Words glued together (CamelCase identifiers) are long but low in entropy per char.
    entropy(t) > 4.2
}

/// Every secret and conflict marker in `text`.
pub fn scan(text: &str) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut taken: Vec<(usize, usize)> = Vec::new();
    let line_of = |pos: usize| text[..pos].matches('\n').count() + 1;
    let push = |out: &mut Vec<Finding>,
                taken: &mut Vec<(usize, usize)>,
                kind,
                start: usize,
                end: usize,
                shown: &str| {
        if taken.iter().any(|(s, e)| start < *e && *s < end) {
            return;
        }
        taken.push((start, end));
        out.push(Finding {
            kind,
            redacted: redact(shown),
            line: line_of(start),
        });
    };
    for m in PRIVATE_KEY.find_iter(text) {
        let end = text[m.end()..]
            .find("-----END")
            .map(|i| m.end() + i)
            .unwrap_or(m.end());
        push(
            &mut out,
            &mut taken,
            FindingKind::PrivateKey,
            m.start(),
            end.max(m.end()),
            "-----BEGIN PRIVATE KEY-----",
        );
    }
    for (re, kind) in [
        (&*AWS_ACCESS, FindingKind::AwsAccessKey),
        (&*GITHUB, FindingKind::GithubToken),
        (&*GITLAB, FindingKind::GitlabToken),
        (&*SLACK, FindingKind::SlackToken),
        (&*OPENAI, FindingKind::OpenaiKey),
    ] {
        for m in re.find_iter(text) {
            push(&mut out, &mut taken, kind, m.start(), m.end(), m.as_str());
        }
    }
    for c in AWS_SECRET.captures_iter(text) {
        let g = c.get(1).expect("group 1");
        push(
            &mut out,
            &mut taken,
            FindingKind::AwsSecretKey,
            g.start(),
            g.end(),
            g.as_str(),
        );
    }
    for c in ASSIGNMENT.captures_iter(text) {
        let v = c
            .get(2)
            .or_else(|| c.get(3))
            .or_else(|| c.get(4))
            .expect("one value group");
        if is_placeholder(v.as_str()) {
            continue;
        }
        push(
            &mut out,
            &mut taken,
            FindingKind::PasswordAssignment,
            v.start(),
            v.end(),
            v.as_str(),
        );
    }
    for m in CANDIDATE.find_iter(text) {
        // A path or URL segment is not a credential.
        let before = text[..m.start()].chars().last();
        if matches!(before, Some('/') | Some('.') | Some('#'))
            || m.as_str().contains('/') && m.as_str().matches('/').count() > 1
        {
            continue;
        }
        if looks_like_credential(m.as_str()) {
            push(
                &mut out,
                &mut taken,
                FindingKind::HighEntropy,
                m.start(),
                m.end(),
                m.as_str(),
            );
        }
    }
    // Conflict markers: an opening marker at a line start (with or without the others).
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let l = line.trim_end_matches(['\n', '\r']);
        if l.starts_with("<<<<<<< ") || l == "<<<<<<<" {
            push(
                &mut out,
                &mut taken,
                FindingKind::MergeConflict,
                offset,
                offset + l.len().max(1),
                "<<<<<<< marker",
            );
        }
        offset += line.len();
    }
    out.sort_by_key(|f| f.line);
    out
}

/// True when nothing matched.
pub fn is_clean(text: &str) -> bool {
    scan(text).is_empty()
}
