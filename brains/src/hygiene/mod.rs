//! The hygiene scanner: secrets and merge-conflict markers, reported redacted. It is the
//! floor every shared or committable text passes (promotion, doctrine birth, imports,
//! letters filed into a committable box, exports) and, by default, every project write.
//!
//! Because it refuses ordinary writes, precision matters as much as recall. The scan runs
//! in rule families, most specific first; a span claimed by one rule is not reported
//! again by a looser one:
//!
//! 1. `providers`: private-key blocks and vendor token formats whose shape alone is
//!    the evidence (AWS, GitHub, GitLab, Slack, Stripe, SendGrid, JWTs, …).
//! 2. `web`: credentials inside URLs (`postgres://user:pw@host`) and HTTP auth headers.
//! 3. `assign`: a value assigned to a secret-ish name, in prose (`the password is …`)
//!    and in config syntaxes (env files, YAML, JSON, TOML, INI, XML, CLI flags, `.netrc`,
//!    `.pgpass`). The value is judged with its context: placeholders, references to
//!    variables and code, type names and plain English words are not secrets.
//! 4. `loose`: long random-looking tokens standing alone, judged by their structure
//!    (not identifiers, not digests, not base64 of readable text, not paths).
//! 5. merge-conflict markers.
//!
//! Text is scanned as given, with JSON string escapes (`\n`, `\t`, `\"`) blanked to
//! spaces first, so a secret inside a raw JSON letter reads as it would unescaped.
//! Everything is linear in the text: the `regex` crate's searches (gated by cheap
//! literal checks, run on a lowercased copy instead of with case folding), then bounded
//! checks per candidate; every look around a match is capped.
//!
//! Judgement calls, so callers know what to expect:
//!
//! - Placeholders are recognised by what they are: templates and references (`${X}`,
//!   `$X`, `$(cmd)`, `{{ x }}`, `<x>`, `%X%`, `os.environ["X"]`, `process.env.X`),
//!   filler (`xxxx`, `***`, `…`), and marks (`changeme`, `example`, `your-…`,
//!   `REDACTED`, `dummy`, `fake`), never by remembering particular test values. A
//!   vendor-shaped key is judged only for filler and word-made bodies, so the AWS
//!   documentation keys (`AKIAIOSFODNN7EXAMPLE`, `wJalr…EXAMPLEKEY`), full-format keys,
//!   are still reported.
//! - A value that is a plain word (`refreshed`, `required`, `SecretStr`) is not a secret
//!   in prose or unquoted config; quoted, it counts only under a password name and from
//!   8 characters (`db_password: "correct-horse-battery"`). Letters-only passwords in
//!   unquoted config are therefore missed, as most scanners miss them.
//! - Hex digests, UUIDs and integrity hashes are secrets only when assigned to a
//!   secret-ish name (`signing_secret = "3f9a…"`), never standing alone.
//! - A URL password counts down to two characters (`postgres://admin:pw@host`) and
//!   `user:pass` counts; a password equal to its user (`guest:guest`), an env var's
//!   name (`USER:PASSWORD`) or a metasyntactic word (`foo:bar`) does not.
//! - A loose token must be 24+ characters of mixed case and digits, not word-shaped,
//!   not base64 of readable text (that is decoded and scanned once instead), and not
//!   named public by what precedes it (`integrity`, `sha256:`, `commit`, `PublicKey`).
//! - A record with several fields (label, text, evidence strings) must be scanned
//!   whole: [`scan_parts`] joins them.

mod assign;
pub mod corpus;
mod judge;
mod loose;
mod providers;
mod web;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// What kind of thing matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A PEM, OpenSSH, PGP or age private key (also inside a service-account JSON).
    PrivateKey,
    AwsAccessKey,
    AwsSecretKey,
    AwsSessionToken,
    GithubToken,
    GitlabToken,
    SlackToken,
    SlackWebhook,
    DiscordWebhook,
    DiscordToken,
    StripeKey,
    SendgridKey,
    TwilioKey,
    GoogleApiKey,
    AzureStorageKey,
    NpmToken,
    PypiToken,
    OpenaiKey,
    AnthropicKey,
    Jwt,
    HerokuKey,
    MailgunKey,
    DigitaloceanToken,
    VaultToken,
    ShopifyToken,
    TelegramBotToken,
    /// Another vendor's token format (Hugging Face, Linear, Doppler, Grafana, …).
    ProviderToken,
    /// `scheme://user:password@host`.
    UrlCredentials,
    /// `Authorization: Basic …` / `Bearer …`, `X-Api-Key: …` and kin.
    AuthHeader,
    /// A literal value assigned to a secret-ish name (password, token, api key, secret…),
    /// in prose or in any config syntax.
    PasswordAssignment,
    /// A long random-looking token with no word structure.
    HighEntropy,
    MergeConflict,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::PrivateKey => "private_key",
            FindingKind::AwsAccessKey => "aws_access_key",
            FindingKind::AwsSecretKey => "aws_secret_key",
            FindingKind::AwsSessionToken => "aws_session_token",
            FindingKind::GithubToken => "github_token",
            FindingKind::GitlabToken => "gitlab_token",
            FindingKind::SlackToken => "slack_token",
            FindingKind::SlackWebhook => "slack_webhook",
            FindingKind::DiscordWebhook => "discord_webhook",
            FindingKind::DiscordToken => "discord_token",
            FindingKind::StripeKey => "stripe_key",
            FindingKind::SendgridKey => "sendgrid_key",
            FindingKind::TwilioKey => "twilio_key",
            FindingKind::GoogleApiKey => "google_api_key",
            FindingKind::AzureStorageKey => "azure_storage_key",
            FindingKind::NpmToken => "npm_token",
            FindingKind::PypiToken => "pypi_token",
            FindingKind::OpenaiKey => "openai_key",
            FindingKind::AnthropicKey => "anthropic_key",
            FindingKind::Jwt => "jwt",
            FindingKind::HerokuKey => "heroku_key",
            FindingKind::MailgunKey => "mailgun_key",
            FindingKind::DigitaloceanToken => "digitalocean_token",
            FindingKind::VaultToken => "vault_token",
            FindingKind::ShopifyToken => "shopify_token",
            FindingKind::TelegramBotToken => "telegram_bot_token",
            FindingKind::ProviderToken => "provider_token",
            FindingKind::UrlCredentials => "url_credentials",
            FindingKind::AuthHeader => "auth_header",
            FindingKind::PasswordAssignment => "password_assignment",
            FindingKind::HighEntropy => "high_entropy",
            FindingKind::MergeConflict => "merge_conflict",
        }
    }

    /// Every kind, in declaration order.
    pub const ALL: &'static [FindingKind] = &[
        FindingKind::PrivateKey,
        FindingKind::AwsAccessKey,
        FindingKind::AwsSecretKey,
        FindingKind::AwsSessionToken,
        FindingKind::GithubToken,
        FindingKind::GitlabToken,
        FindingKind::SlackToken,
        FindingKind::SlackWebhook,
        FindingKind::DiscordWebhook,
        FindingKind::DiscordToken,
        FindingKind::StripeKey,
        FindingKind::SendgridKey,
        FindingKind::TwilioKey,
        FindingKind::GoogleApiKey,
        FindingKind::AzureStorageKey,
        FindingKind::NpmToken,
        FindingKind::PypiToken,
        FindingKind::OpenaiKey,
        FindingKind::AnthropicKey,
        FindingKind::Jwt,
        FindingKind::HerokuKey,
        FindingKind::MailgunKey,
        FindingKind::DigitaloceanToken,
        FindingKind::VaultToken,
        FindingKind::ShopifyToken,
        FindingKind::TelegramBotToken,
        FindingKind::ProviderToken,
        FindingKind::UrlCredentials,
        FindingKind::AuthHeader,
        FindingKind::PasswordAssignment,
        FindingKind::HighEntropy,
        FindingKind::MergeConflict,
    ];
}

/// One match, never carrying the secret itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// What matched, with the secret masked: a few leading characters (or a vendor's
    /// public prefix, a key's name, a URL's scheme and host) and `…` / `***`.
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

/// A secret's redacted form: nothing for 8 characters or fewer, else at most four
/// leading characters (a quarter of it for shorter ones) and `…`.
pub fn redact(s: &str) -> String {
    let n = s.chars().count();
    if n <= 8 {
        return "…".to_string();
    }
    let keep = (n / 4).min(4);
    let head: String = s.chars().take(keep).collect();
    format!("{head}…")
}

/// A public prefix (a vendor's token marker, a URL's scheme and host) followed by `…`.
/// The prefix is capped at 40 characters.
fn redact_after(prefix: &str) -> String {
    let head: String = prefix.chars().take(40).collect();
    format!("{head}…")
}

/// Every secret and conflict marker in `text`, sorted by line.
pub fn scan(text: &str) -> Vec<Finding> {
    scan_inner(text, true)
}

/// True when nothing matched.
pub fn is_clean(text: &str) -> bool {
    scan(text).is_empty()
}

/// Scan several fields of one record (a claim's label, text and evidence strings) as
/// one text, joined by newlines: lines count through the joined text.
pub fn scan_parts(parts: &[&str]) -> Vec<Finding> {
    scan(&parts.join("\n"))
}

fn scan_inner(text: &str, decode_base64: bool) -> Vec<Finding> {
    let norm = normalize(text);
    let mut sink = Sink::new(text, &norm);
    providers::scan(&mut sink);
    web::scan(&mut sink);
    assign::scan(&mut sink);
    loose::scan(&mut sink, decode_base64);
    conflicts(&mut sink);
    sink.finish()
}

/// The text being scanned and what was found so far.
pub(crate) struct Sink<'t> {
    /// The text as given.
    pub(crate) raw: &'t str,
    /// The text with JSON escapes blanked (same byte offsets as the input).
    pub(crate) text: &'t str,
    /// ASCII-lowercased copy of `text`, for keyword searches.
    pub(crate) lower: String,
    /// Reported spans, disjoint, by start: end and kind.
    taken: BTreeMap<usize, (usize, FindingKind)>,
    found: Vec<(usize, Finding)>,
    /// Offsets of the newlines, built at the first finding.
    newlines: Option<Vec<usize>>,
}

impl<'t> Sink<'t> {
    fn new(raw: &'t str, text: &'t str) -> Self {
        Sink {
            raw,
            text,
            lower: text.to_ascii_lowercase(),
            taken: BTreeMap::new(),
            found: Vec::new(),
            newlines: None,
        }
    }

    /// True when `[start, end)` overlaps a span already reported. The spans are
    /// disjoint, so the one starting last before `end` is the only one to check.
    pub(crate) fn is_taken(&self, start: usize, end: usize) -> bool {
        self.taken
            .range(..end.max(start + 1))
            .next_back()
            .is_some_and(|(_, &(e, _))| e > start)
    }

    /// Any finding already reported, of these kinds, starting within `[start, end)`.
    pub(crate) fn has_kind_near(&self, kinds: &[FindingKind], start: usize, end: usize) -> bool {
        self.taken
            .range(start..end)
            .any(|(_, (_, k))| kinds.contains(k))
    }

    /// Report `[start, end)` unless an earlier rule already claimed part of it.
    pub(crate) fn push(&mut self, kind: FindingKind, start: usize, end: usize, redacted: String) {
        let end = end.max(start + 1);
        if self.is_taken(start, end) {
            return;
        }
        self.taken.insert(start, (end, kind));
        let text = self.text;
        let newlines = self.newlines.get_or_insert_with(|| {
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i)
                .collect()
        });
        let line = newlines.partition_point(|&nl| nl < start) + 1;
        self.found.push((
            start,
            Finding {
                kind,
                redacted,
                line,
            },
        ));
    }

    fn finish(mut self) -> Vec<Finding> {
        self.found.sort_by_key(|(at, f)| (f.line, *at));
        self.found.into_iter().map(|(_, f)| f).collect()
    }
}

/// Start of the line holding byte `at`, looking back at most `max` bytes: long lines are
/// judged by their nearby text, which keeps every per-match look linear overall.
pub(crate) fn line_start_near(text: &str, at: usize, max: usize) -> usize {
    let mut floor = at.saturating_sub(max);
    while !text.is_char_boundary(floor) {
        floor += 1;
    }
    text[floor..at].rfind('\n').map_or(floor, |i| floor + i + 1)
}

/// End of the line holding byte `at` (its newline or the text's end), looking ahead at
/// most `max` bytes.
pub(crate) fn line_end_near(text: &str, at: usize, max: usize) -> usize {
    let mut ceil = (at + max).min(text.len());
    while !text.is_char_boundary(ceil) {
        ceil -= 1;
    }
    text[at..ceil].find('\n').map_or(ceil, |i| at + i)
}

/// Blank JSON string escapes so a value inside a raw JSON document reads as unescaped
/// text: `\n`, `\r`, `\t` become two spaces and `\"` becomes ` "`. Byte offsets (and so
/// line numbers, which count real newlines) are unchanged.
fn normalize(text: &str) -> Cow<'_, str> {
    if !text.as_bytes().contains(&b'\\') {
        return Cow::Borrowed(text);
    }
    let mut b = text.as_bytes().to_vec();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'\\' {
            match b[i + 1] {
                b'n' | b'r' | b't' => {
                    b[i] = b' ';
                    b[i + 1] = b' ';
                }
                b'"' => b[i] = b' ',
                _ => {}
            }
            // An escaped backslash is skipped whole, so `\\n` stays a backslash and `n`.
            i += 2;
        } else {
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes.
    Cow::Owned(String::from_utf8(b).unwrap_or_else(|_| text.to_string()))
}

macro_rules! re {
    ($name:ident, $pat:expr) => {
        static $name: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(&$crate::hygiene::ascii_bounds($pat)).expect("a valid pattern")
        });
    };
}
pub(crate) use re;

/// `\b` in our patterns means an ASCII word boundary: Unicode boundaries would push the
/// regex engine off its fast path on non-ASCII text.
pub(crate) fn ascii_bounds(pat: &str) -> String {
    pat.replace(r"\b", r"(?-u:\b)")
}

static CONFLICT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^<<<<<<<(?:[ \t]|\r?$)|\\n<<<<<<<(?:[ \t]|\\[nr]|$)").expect("a valid pattern")
});

/// Conflict markers: an opening marker at a line start (with or without the others),
/// also after an escaped newline inside a JSON string. Read from the raw text.
fn conflicts(sink: &mut Sink<'_>) {
    let hits: Vec<usize> = CONFLICT
        .find_iter(sink.raw)
        .map(|m| {
            if m.as_str().starts_with('\\') {
                m.start() + 2
            } else {
                m.start()
            }
        })
        .collect();
    for start in hits {
        sink.push(
            FindingKind::MergeConflict,
            start,
            start + 7,
            "<<<<<<< marker".to_string(),
        );
    }
}
