//! The hygiene scanner against a corpus (`tests/data/hygiene/*.jsonl`): recall over
//! the positives, false-positive rate over the negatives, the cases a hostile tester
//! found by name, and redaction. Every secret here is fake but shaped like the real
//! thing.
//!
//! Corpus lines: `{"text": …, "kind": <FindingKind::as_str>, "secret": <the secret
//! value, or "" when the kind has no single value>, "note": …, "case": <optional name>}`
//! for positives; `{"text": …, "note": …, "case": …}` for negatives.

use std::path::PathBuf;

use brains::hygiene::corpus::{self, Case};
use brains::hygiene::{is_clean, redact, scan, scan_parts, FindingKind as K};

fn corpus(file: &str) -> Vec<Case> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "data", "hygiene", file]
        .iter()
        .collect();
    let raw = std::fs::read_to_string(&path).expect("the corpus file");
    corpus::parse(&raw).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_corpus_is_big_enough_to_mean_something() {
    let (p, n) = (corpus("positives.jsonl"), corpus("negatives.jsonl"));
    assert!(p.len() >= 150, "{} positives", p.len());
    assert!(n.len() >= 150, "{} negatives", n.len());
    let known: Vec<&str> = K::ALL.iter().map(|k| k.as_str()).collect();
    for c in &p {
        assert!(
            known.contains(&c.kind.as_str()),
            "unknown kind {:?} ({})",
            c.kind,
            c.note
        );
    }
}

#[test]
fn recall_and_false_positive_rate() {
    let negatives = corpus("negatives.jsonl");
    for c in &negatives {
        assert_eq!(is_clean(&c.text), scan(&c.text).is_empty());
    }
    let m = corpus::measure(&corpus("positives.jsonl"), &negatives);
    eprintln!("{m}");
    let (recall, fp_rate) = (m.recall(), m.fp_rate());
    assert!(
        recall >= 0.98,
        "recall {recall:.3}:\n{}",
        m.misses.join("\n")
    );
    assert!(
        fp_rate <= 0.02,
        "fp rate {fp_rate:.3}:\n{}",
        m.alarms.join("\n")
    );
}

/// The ten secrets the hostile tester saw pass, each caught as its kind.
#[test]
fn the_ten_reported_misses_are_caught() {
    let positives = corpus("positives.jsonl");
    let want = [
        ("miss:sts_json", K::AwsSecretKey),
        ("miss:postgres_url", K::UrlCredentials),
        ("miss:mysql_url", K::UrlCredentials),
        ("miss:sendgrid", K::SendgridKey),
        ("miss:discord_webhook", K::DiscordWebhook),
        ("miss:hex_signing_secret", K::PasswordAssignment),
        ("miss:prose_password", K::PasswordAssignment),
        ("miss:netrc", K::PasswordAssignment),
        ("miss:basic_auth", K::AuthHeader),
        ("miss:evidence_github_token", K::GithubToken),
    ];
    for (name, kind) in want {
        let c = positives
            .iter()
            .find(|c| c.case.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("corpus case {name} is missing"));
        let found = scan(&c.text);
        assert!(
            found.iter().any(|f| f.kind == kind),
            "{name}: want {kind:?}, got {found:?}"
        );
    }
    // The same, written inline, so the cases survive corpus edits.
    let inline: &[(&str, K)] = &[
        (
            r#"{"Credentials": {"AccessKeyId": "ASIAQ7XK3M2P9LW4ZB6N", "SecretAccessKey": "k9Vq3/Lm8ZxT2rW+pN4sY7hB1cD6fG0jK5eR9uAo", "SessionToken": "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD3"}}"#,
            K::AwsSecretKey,
        ),
        ("postgres://admin:pw@db.internal/app", K::UrlCredentials),
        ("mysql://root:pw@10.0.0.5:3306/crm", K::UrlCredentials),
        (
            "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",
            K::SendgridKey,
        ),
        (
            "https://discord.com/api/webhooks/1234567890123456789/Xk9LmZ2vT8rW4pN7sY1hb6cD0fG5jK2eR8uA3oQ9xV4zM7nB1tL6wP0yS5dH2gFqR8",
            K::DiscordWebhook,
        ),
        (
            r#"signing_secret = "3f9a1c7e5b2d4f6081a3c5e7f9b1d3e5a7c9e1f3b5d7f9a1c3e5b7d9f1a3c5e7""#,
            K::PasswordAssignment,
        ),
        ("the password is hunter2x", K::PasswordAssignment),
        (
            "machine api.example.com login bob password s3cr3tpw",
            K::PasswordAssignment,
        ),
        ("Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", K::AuthHeader),
        (
            r#"{"evidence": ["push log:\nghp_Q7xK3m2P9lW4zB6nR8tY1uI5oA0sD3fG7hJk"]}"#,
            K::GithubToken,
        ),
    ];
    for (text, kind) in inline {
        let found = scan(text);
        assert!(
            found.iter().any(|f| f.kind == *kind),
            "want {kind:?} in {text:?}, got {found:?}"
        );
    }
}

/// The four innocent look-alikes the hostile tester saw refused, each clean.
#[test]
fn the_four_reported_false_positives_are_clean() {
    let negatives = corpus("negatives.jsonl");
    for name in [
        "fp:camelcase",
        "fp:access_token_refreshed",
        "fp:npm_integrity",
        "fp:base64_fixture",
    ] {
        let c = negatives
            .iter()
            .find(|c| c.case.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("corpus case {name} is missing"));
        assert!(is_clean(&c.text), "{name}: {:?}", scan(&c.text));
    }
    for text in [
        "AbstractSingletonProxyFactoryBeanConfigurationHolder2",
        "access token: refreshed",
        r#""integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==""#,
        r#"let fixture = "SGVsbG8gV29ybGQhIFRoaXMgaXMgYSB0ZXN0IGZpeHR1cmUu";"#,
    ] {
        assert!(is_clean(text), "{text:?}: {:?}", scan(text));
    }
}

/// The longest run of characters the redacted form shares with the secret.
fn longest_shared(redacted: &str, secret: &str) -> usize {
    let s: Vec<char> = secret.chars().collect();
    let mut best = 0;
    for i in 0..s.len() {
        for j in (i + best + 1)..=s.len() {
            let piece: String = s[i..j].iter().collect();
            if redacted.contains(&piece) {
                best = j - i;
            } else {
                break;
            }
        }
    }
    best
}

#[test]
fn findings_never_carry_the_secret() {
    for c in corpus("positives.jsonl") {
        if c.secret.is_empty() {
            continue;
        }
        for f in scan(&c.text) {
            assert!(
                !f.redacted.contains(&c.secret),
                "[{}] {f:?} shows the secret",
                c.note
            );
            // At most a few characters of the secret survive: four, or a quarter of a
            // short one.
            let allowed = (c.secret.chars().count() / 4).clamp(1, 4);
            // A key's name (`db_password=…`) is shown; only what follows it counts.
            let shown = match f.kind {
                K::PasswordAssignment => f.redacted.rsplit('=').next().unwrap_or(""),
                _ => f.redacted.as_str(),
            };
            let shared = longest_shared(shown, &c.secret);
            assert!(
                shared <= allowed,
                "[{}] {f:?} shares {shared} characters with the secret",
                c.note
            );
        }
    }
}

#[test]
fn findings_are_redacted_located_and_sorted() {
    let text = "line one\ndeploy key AKIAQ7XK3M2P9LW4ZB6N here";
    let f = scan(text);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].line, 2);
    assert_eq!(f[0].kind, K::AwsAccessKey);
    assert!(!f[0].redacted.contains("AKIAQ7XK3M2P9LW4ZB6N"));
    assert!(f[0].redacted.starts_with("AKIA"));
    assert!(f[0].to_string().contains("aws_access_key"));

    let text = "a\npassword: Qwerty!2345\nb\n<<<<<<< HEAD\nc\npostgres://app:Zq8mR2pL4x@db/app";
    let f = scan(text);
    assert_eq!(
        f.iter().map(|f| (f.kind, f.line)).collect::<Vec<_>>(),
        vec![
            (K::PasswordAssignment, 2),
            (K::MergeConflict, 4),
            (K::UrlCredentials, 6)
        ]
    );
    assert_eq!(f[2].redacted, "postgres://app:***@db");
    let json = serde_json::to_value(&f[0]).expect("serializes");
    assert_eq!(json["kind"], "password_assignment");
    assert_eq!(json["line"], 2);

    assert_eq!(redact("short"), "…");
    assert_eq!(redact("Zx9qL2mN8vB4cX7wR5tY"), "Zx9q…");
    assert_eq!(redact("abcdefghij"), "ab…");
}

#[test]
fn scan_parts_reads_every_field() {
    let f = scan_parts(&[
        "label",
        "text",
        "evidence: ghp_Q7xK3m2P9lW4zB6nR8tY1uI5oA0sD3fG7hJk",
    ]);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, K::GithubToken);
    assert_eq!(f[0].line, 3);
}

#[test]
fn kinds_have_stable_snake_case_names() {
    for k in K::ALL {
        let json = serde_json::to_value(k).expect("serializes");
        assert_eq!(json.as_str(), Some(k.as_str()));
    }
}

/// Arbitrary text never panics the scanner: fragments of secrets, separators and
/// multi-byte characters shuffled together (a fixed xorshift, so failures replay).
#[test]
fn arbitrary_unicode_never_panics() {
    const PIECES: &[&str] = &[
        "password",
        "token",
        " is ",
        ": ",
        "=",
        "\"",
        "'",
        "`",
        "\\n",
        "\\\"",
        "\n",
        " ",
        "│",
        "é",
        "日本",
        "🔑",
        "ß",
        "—",
        "ghp_",
        "AKIA",
        "sk-",
        "://",
        "@",
        "user:",
        "<<<<<<< ",
        "-----BEGIN PRIVATE KEY-----",
        "Bearer ",
        "Authorization: Basic ",
        "Zx9qL2mN8vB4cX7w",
        "R5tY3uI1oP6aS0dF",
        "hunter2x",
        "${X}",
        "<",
        ">",
        "/",
        ".",
        "api key",
        "--password",
        "-p'",
        "machine h login u password ",
        "a:1:b:c:",
        "SGVsbG8gV29ybGQh",
        "==",
        "sha512-",
        "key",
        "_",
        "-",
        "é=é",
        "pass",
        "\t",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..3000 {
        let n = (next() % 40) as usize;
        let text: String = (0..n)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect();
        for f in scan(&text) {
            assert!(
                f.line >= 1 && f.line <= text.lines().count().max(1) + 1,
                "{text:?}"
            );
        }
    }
}
