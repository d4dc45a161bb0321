//! A value assigned to a secret-ish name. The name decides whether the value matters
//! (`db_password`, `signing_secret`, `GITHUB_TOKEN`, `apiKey` do; `password_min_length`,
//! `token_url`, `secretName`, `max_tokens` do not); the syntax decides how literal the
//! value is; the value itself decides the rest.
//!
//! Syntaxes: env files and shell (`KEY=value`, `export KEY=…`), YAML and INI
//! (`key: value`, `key = value`), JSON and TOML (`"key": "value"`), code (`key := "v"`,
//! `key => 'v'`, `key == "v"`), XML (`<password>v</password>`, `<add key="Password"
//! value="v"/>`), CLI flags (`--password v`, `-p'v'`, `curl -u user:pass`), prose
//! (`the password is v`, `changed the root password to v`), `.netrc` and `.pgpass`
//! lines.

use super::judge::{
    base64_is_userpass, base64_of_placeholder, classes, is_code_reference, is_code_token,
    is_env_name, is_filler, is_hexish, is_path, is_placeholder, is_plain_word, is_random_token,
    is_uuid, is_versionish, Lower,
};
use super::{line_end_near, line_start_near, redact, FindingKind as K, Sink};
use regex::Regex;
use std::collections::HashSet;
use std::sync::LazyLock;

// Roots of secret-ish names, searched in the lowercased text.
super::re!(
    KEYWORD,
    r"pass|pwd|pw\b|secret|token|key|credential|creds|auth"
);

// The fixed syntaxes below are searched in the lowercased text (exact literals make
// fast prefilters; offsets are the same), and values are read from the text itself.

super::re!(NETRC, r"\blogin\s+(\S+)\s+password\s+(\S+)");

super::re!(
    PGPASS,
    r"^[ \t]*(?:[a-z0-9.\-]+|\*|\[[0-9a-f:]+\]):(?:\d{1,5}|\*):[^:\s]+:([^:\s]+):(\S+?)\r?$"
);

super::re!(SHORT_P_QUOTED, r#"(?:^|\s)-p(["'])([^"'\s]{3,})["']"#);

super::re!(
    MYSQL_P,
    r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p([^\s'\x22-][^\s'\x22]{2,})"
);

super::re!(
    LOGIN_P,
    r"\b(?:sshpass|docker\s+login|podman\s+login|helm\s+registry\s+login|buildah\s+login|skopeo\s+login|oras\s+login)\b[^\n]*?\s-p\s+(\S+)"
);

super::re!(REDIS_A, r"\bredis-cli\b[^\n]*?\s-a\s+(\S+)");

super::re!(OPENSSL_PASS, r"\s-pass(?:in|out|word)?\s+pass:(\S+)");

super::re!(
    CURL_USER,
    r#"\b(?:curl|wget|http|httpie|xh)\b[^\n]*?\s(?:-u|--user|--http-user)(?:\s+|=)["']?([^\s:"']+):([^\s"']+?)["']?(?:\s|$)"#
);

// `{"key": "apiKey", "value": "…"}`, `{"name": "API_TOKEN", "value": "…"}` (Postman,
// ECS task definitions) and YAML `- name: DB_PASSWORD` / `value: …` (Kubernetes env).
super::re!(
    JSON_PAIR,
    r#""(?:key|name)"\s*:\s*"([^"\n]{1,64})"\s*,\s*"value"\s*:\s*"([^"\n]*)""#
);

super::re!(
    YAML_PAIR,
    r#"(?m)^[ \t]*-?[ \t]*name:[ \t]*["']?([a-z0-9_.\-]{1,64})["']?[ \t]*\r?\n[ \t]*value:[ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#]+))"#
);

// `echo s3cr3t | docker login -u bot --password-stdin`
super::re!(
    ECHO_STDIN,
    r#"\becho\s+["']?([^\s"'|]{6,})["']?\s*\|\s*[^\n]*?\blogin\b[^\n]*--password-stdin"#
);

// SQL: `IDENTIFIED BY 'x'`, `WITH PASSWORD 'x'`, `ENCRYPTED PASSWORD 'x'`.
super::re!(
    SQL_PASSWORD,
    r"\b(?:identified\s+(?:with\s+\w+\s+)?by|password)\s+'([^'\n]+)'"
);

// `requests.get(url, auth=("bot", "…"))`
super::re!(
    AUTH_TUPLE,
    r#"\bauth\s*=\s*\(\s*["'][^"'\n]+["']\s*,\s*["']([^"'\n]+)["']\s*\)"#
);

// `use hunter42 as the password`
super::re!(
    USE_AS,
    r#"\b(?:use|used|using|enter|entered|type|typed|set|with)\s+["'`]?([^\s"'`]{6,64}?)["'`]?\s+as\s+(?:the\s+|a\s+|an\s+|our\s+|your\s+|my\s+)?(?:[a-z]+\s+){0,2}(?:password|passphrase|passcode|pw|token|secret|api\s+key)\b"#
);

// `user deploy, pass Dq7!…`, `login: bob / password: …` in prose.
super::re!(
    USER_PASS,
    r#"\b(?:user(?:name)?|login)\s*[:=]?\s*[`"']?[^\s`"',;:<>/@]+[`"']?\s*[,;/]?\s*(?:pass(?:word)?|pwd|pw)\s*[:=]?\s*[`"']?([^\s`"',;<>@/]+)"#
);

// `admin/Rt4px7!iAx`: a well-known account name and a password with no spaces.
super::re!(
    ACCOUNT_SLASH,
    r"(?:^|[\s(`'\x22])(?:admin|administrator|root|ubuntu|ec2-user|postgres|sa|guest|pi|deploy|ci)/([^\s/?&=`'\x22]{8,64})"
);

// `admin / Adm1n!2024` on a line about logins.
super::re!(
    SLASH_PAIR,
    r"\b([a-z][a-z0-9._\-]{1,30})\s+/\s+([^\s/]{8,64})(?:\s|$)"
);

super::re!(
    ATTR_PAIR,
    r#"\bkey\s*=\s*"([a-z0-9_.\-:]*(?:password|passwd|secret|token|apikey|api_key)[a-z0-9_.\-:]*)"\s+value\s*=\s*"([^"]*)""#
);

pub(crate) fn scan(sink: &mut Sink<'_>) {
    fixed_syntaxes(sink);
    named_values(sink);
}

/// `.netrc`, `.pgpass`, short CLI flags, `curl -u`, .NET `<add key= value=>`.
fn fixed_syntaxes(sink: &mut Sink<'_>) {
    let text = sink.text;
    let lower = sink.lower.as_str();
    let mut hits: Vec<(usize, usize, String)> = Vec::new();
    for c in gated(&NETRC, lower, &["login"]) {
        let v = Span::of(text, c.get(2).expect("password").range());
        if !is_placeholder(v.as_str()) && !is_env_name(v.as_str()) {
            hits.push((
                v.start(),
                v.end(),
                format!("password {}", redact(v.as_str())),
            ));
        }
    }
    for (line_start, line) in pgpass_candidates(lower) {
        let Some(c) = PGPASS.captures(line) else {
            continue;
        };
        let c = Shifted(line_start, c);
        let v = Span::of(text, c.get(2).expect("password").range());
        if !is_placeholder(v.as_str())
            && !is_env_name(v.as_str())
            && v.as_str() != &text[c.get(1).expect("name").range()]
        {
            hits.push((v.start(), v.end(), format!("pgpass {}", redact(v.as_str()))));
        }
    }
    for c in gated(&SHORT_P_QUOTED, lower, &["-p'", "-p\""]) {
        let v = Span::of(text, c.get(2).expect("password").range());
        if value_ok(v.as_str(), Syntax::Literal, Strength::Password) {
            hits.push((v.start(), v.end(), format!("-p {}", redact(v.as_str()))));
        }
    }
    for (re, lits) in [
        (&MYSQL_P, &["mysql", "mariadb"][..]),
        (&LOGIN_P, &["login", "sshpass"][..]),
        (&REDIS_A, &["redis-cli"][..]),
        (&OPENSSL_PASS, &["pass:"][..]),
    ] {
        for c in gated(re, lower, lits) {
            let v = Span::of(text, c.get(1).expect("password").range());
            if value_ok(v.as_str(), Syntax::Bare, Strength::Password)
                && !v.as_str().bytes().all(|b| b.is_ascii_digit())
            {
                hits.push((v.start(), v.end(), format!("-p {}", redact(v.as_str()))));
            }
        }
    }
    for c in gated(&CURL_USER, lower, &[" -u", "--user", "--http-user"]) {
        let v = Span::of(text, c.get(2).expect("password").range());
        let user = &text[c.get(1).expect("name").range()];
        if !user.eq_ignore_ascii_case(v.as_str())
            && value_ok(v.as_str(), Syntax::Literal, Strength::Password)
        {
            hits.push((
                v.start(),
                v.end(),
                format!("-u {user}:{}", redact(v.as_str())),
            ));
        }
    }
    for c in gated(&ATTR_PAIR, lower, &["value"]) {
        let v = Span::of(text, c.get(2).expect("value").range());
        if value_ok(v.as_str(), Syntax::Literal, Strength::Strong) {
            hits.push((
                v.start(),
                v.end(),
                format!(
                    "{}={}",
                    &text[c.get(1).expect("name").range()],
                    redact(v.as_str())
                ),
            ));
        }
    }
    for c in gated(&JSON_PAIR, lower, &["\"value\""]) {
        let v = Span::of(text, c.get(2).expect("value").range());
        if classify(&text[c.get(1).expect("name").range()])
            .is_some_and(|n| value_ok(v.as_str(), Syntax::Literal, n.strength))
        {
            hits.push((
                v.start(),
                v.end(),
                format!(
                    "{}={}",
                    &text[c.get(1).expect("name").range()],
                    redact(v.as_str())
                ),
            ));
        }
    }
    for c in gated(&YAML_PAIR, lower, &["value:"]) {
        let (v, syntax) = match (c.get(2).or_else(|| c.get(3)), c.get(4)) {
            (Some(q), _) => (Span::of(text, q.range()), Syntax::Literal),
            (None, Some(b)) => (Span::of(text, b.range()), Syntax::Bare),
            _ => continue,
        };
        if classify(&text[c.get(1).expect("name").range()])
            .is_some_and(|n| value_ok(v.as_str(), syntax, n.strength))
        {
            hits.push((
                v.start(),
                v.end(),
                format!(
                    "{}={}",
                    &text[c.get(1).expect("name").range()],
                    redact(v.as_str())
                ),
            ));
        }
    }
    for c in gated(&ECHO_STDIN, lower, &["--password-stdin"]) {
        let v = Span::of(text, c.get(1).expect("password").range());
        if value_ok(v.as_str(), Syntax::Literal, Strength::Password) {
            hits.push((
                v.start(),
                v.end(),
                format!("echo {} | login", redact(v.as_str())),
            ));
        }
    }
    for c in gated(&SQL_PASSWORD, lower, &["identified", "password '"]) {
        let v = Span::of(text, c.get(1).expect("password").range());
        if value_ok(v.as_str(), Syntax::Literal, Strength::Password) {
            hits.push((
                v.start(),
                v.end(),
                format!("password '{}'", redact(v.as_str())),
            ));
        }
    }
    for c in gated(&AUTH_TUPLE, lower, &["auth"]) {
        let v = Span::of(text, c.get(1).expect("password").range());
        if value_ok(v.as_str(), Syntax::Literal, Strength::Password) {
            hits.push((v.start(), v.end(), format!("auth=({})", redact(v.as_str()))));
        }
    }
    for c in gated(&USE_AS, lower, &[" as "]) {
        let v = Span::of(text, c.get(1).expect("value").range());
        if value_ok(v.as_str(), Syntax::Prose, Strength::Password) {
            hits.push((
                v.start(),
                v.end(),
                format!("password {}", redact(v.as_str())),
            ));
        }
    }
    for c in gated(&USER_PASS, lower, &["pass", "pw"]) {
        let v = Span::of(text, c.get(1).expect("password").range());
        if value_ok(v.as_str(), Syntax::Prose, Strength::Password) {
            hits.push((
                v.start(),
                v.end(),
                format!("user … pass {}", redact(v.as_str())),
            ));
        }
    }
    for c in gated(&ACCOUNT_SLASH, lower, &["/"]) {
        let v = Span::of(text, c.get(1).expect("password").range());
        if password_shaped(v.as_str()) && !is_placeholder(v.as_str()) {
            hits.push((
                v.start(),
                v.end(),
                format!("account/{}", redact(v.as_str())),
            ));
        }
    }
    for c in gated(&SLASH_PAIR, lower, &[" / "]) {
        let v = Span::of(text, c.get(2).expect("password").range());
        let line = line_around(text, v.start()).to_ascii_lowercase();
        let about_logins = [
            "login",
            "log in",
            "creds",
            "credential",
            "user",
            "account",
            "console",
            "ssh",
            "admin",
            "password",
            "sign in",
            "signin",
        ]
        .iter()
        .any(|w| line.contains(w));
        let user = text[c.get(1).expect("name").range()].to_ascii_lowercase();
        let method =
            ["get", "post", "put", "delete", "patch", "head", "options"].contains(&user.as_str());
        if about_logins
            && !method
            && password_shaped(v.as_str())
            && !is_placeholder(v.as_str())
            && !is_versionish(v.as_str())
        {
            hits.push((
                v.start(),
                v.end(),
                format!(
                    "{} / {}",
                    &text[c.get(1).expect("name").range()],
                    redact(v.as_str())
                ),
            ));
        }
    }
    for (s, e, r) in hits {
        sink.push(K::PasswordAssignment, s, e, r);
    }
}

/// A matched value, read from the text (the match ran on the lowercased copy).
#[derive(Clone, Copy)]
struct Span<'t> {
    s: &'t str,
    start: usize,
    end: usize,
}

impl<'t> Span<'t> {
    fn of(text: &'t str, r: std::ops::Range<usize>) -> Self {
        Span {
            s: &text[r.clone()],
            start: r.start,
            end: r.end,
        }
    }
    fn as_str(&self) -> &'t str {
        self.s
    }
    fn start(&self) -> usize {
        self.start
    }
    fn end(&self) -> usize {
        self.end
    }
}

/// Lines that could be `.pgpass` entries (four to six colons, no spaces inside), with
/// their offsets.
fn pgpass_candidates(lower: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    lower.split('\n').filter_map(move |line| {
        let start = at;
        at += line.len() + 1;
        let t = line.trim();
        let colons = t.bytes().filter(|&b| b == b':').count();
        ((4..=6).contains(&colons) && !t.contains(' ')).then_some((start, line))
    })
}

/// Captures of a match run on one line, shifted to offsets in the whole text.
struct Shifted<'h>(usize, regex::Captures<'h>);

impl Shifted<'_> {
    fn get(&self, i: usize) -> Option<ShiftedMatch> {
        self.1
            .get(i)
            .map(|m| ShiftedMatch(self.0 + m.start(), self.0 + m.end()))
    }
}

#[derive(Clone, Copy)]
struct ShiftedMatch(usize, usize);

impl ShiftedMatch {
    fn range(&self) -> std::ops::Range<usize> {
        self.0..self.1
    }
}

/// The line holding byte `at`.
fn line_around(text: &str, at: usize) -> &str {
    &text[line_start_near(text, at, 512)..line_end_near(text, at, 512)]
}

/// Run `re` over the lowercased text only when it holds one of `lits` (most notes hold
/// none, and a substring search is cheaper than a regex pass).
fn gated<'t>(
    re: &'static LazyLock<Regex>,
    lower: &'t str,
    lits: &[&str],
) -> regex::CaptureMatches<'static, 't> {
    let hay = if lits.iter().any(|l| lower.contains(l)) {
        lower
    } else {
        ""
    };
    re.captures_iter(hay)
}

/// How strongly a name claims its value is secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strength {
    /// password, passwd, pwd, passphrase: short or numeric values still count.
    Password,
    /// secret, token, api key, credentials: any literal value counts.
    Strong,
    /// auth, bare `pass`/`pw`: only a random-looking value or a `user:pass` blob counts.
    Weak,
}

/// How literal the value's syntax makes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    /// Quoted, an env-file line, an XML element: whatever is there was typed on purpose.
    Literal,
    /// Unquoted config (`key: value`, `--flag value`): a plain word is an enum or prose.
    Bare,
    /// Prose (`the password is …`): only a value shaped like a credential counts.
    Prose,
}

/// A recognised secret-ish name.
#[derive(Debug, Clone, Copy)]
struct Name {
    strength: Strength,
    /// Holds both `secret` and `key` (an AWS secret key if AWS is in the context).
    secret_key: bool,
    aws_secret: bool,
    aws_session: bool,
    heroku: bool,
}

/// Trailing words that make a name about a secret rather than the secret.
const META: &[&str] = &[
    "id",
    "ids",
    "name",
    "names",
    "type",
    "types",
    "url",
    "uri",
    "urls",
    "endpoint",
    "host",
    "file",
    "files",
    "path",
    "paths",
    "dir",
    "location",
    "length",
    "len",
    "size",
    "count",
    "limit",
    "min",
    "max",
    "ttl",
    "expiry",
    "expires",
    "expiration",
    "expire",
    "expired",
    "lifetime",
    "timeout",
    "duration",
    "age",
    "at",
    "in",
    "hash",
    "hashed",
    "digest",
    "checksum",
    "fingerprint",
    "prefix",
    "suffix",
    "header",
    "headers",
    "field",
    "fields",
    "policy",
    "policies",
    "regex",
    "pattern",
    "required",
    "enabled",
    "enable",
    "disabled",
    "reset",
    "hint",
    "label",
    "version",
    "format",
    "env",
    "var",
    "vars",
    "variable",
    "ref",
    "reference",
    "arn",
    "store",
    "manager",
    "provider",
    "backend",
    "rotation",
    "rotated",
    "budget",
    "budgets",
    "usage",
    "used",
    "tokens",
    "keys",
    "secrets",
    "source",
    "kind",
    "mode",
    "method",
    "strategy",
    "scope",
    "scopes",
    "audience",
    "issuer",
    "algorithm",
    "alg",
    "created",
    "updated",
    "description",
    "desc",
    "help",
    "error",
    "errors",
    "message",
    "msg",
    "text",
    "title",
    "placeholder",
    "prompt",
    "column",
    "col",
    "param",
    "parameter",
    "arg",
    "flag",
    "option",
    "setting",
    "settings",
    "config",
    "cfg",
    "script",
    "command",
    "cmd",
    "stdin",
    "helper",
    "authentication",
    "authenticator",
    "less",
    "mgr",
    "ok",
    "valid",
    "invalid",
    "len",
    "chars",
    "characters",
    "rules",
    "strength",
    "complexity",
    "history",
    "changed",
    "change",
    "confirm",
    "confirmation",
    "match",
    "mismatch",
    "storage",
    "service",
    "server",
    "client",
    "request",
    "response",
    "exchange",
    "refresh",
    "revoke",
    "revoked",
    "introspect",
    "validation",
    "verify",
    "check",
    "position",
    "pos",
    "index",
    "idx",
    "offset",
    "kind",
    "class",
    "spec",
    "schema",
    "template",
    "generator",
    "gen",
    "factory",
    "builder",
    "length",
    "bits",
    "bytes",
    "encoding",
    "encoded",
    "mount",
    "volume",
    "dialog",
    "form",
    "input",
    "button",
    "page",
    "view",
    "route",
    "handler",
    "path",
    "filename",
    "getter",
    "setter",
    "callback",
    "hook",
    "event",
    "events",
    "counter",
    "stats",
    "metric",
    "metrics",
    "cache",
    "cached",
    "lookup",
    "map",
    "list",
    "set",
    "table",
    "tree",
    "node",
    "loader",
    "parser",
    "reader",
    "writer",
    "printer",
    "logger",
    "listener",
    "stream",
    "streams",
    "tree",
    "trees",
    "kinds",
    "span",
    "spans",
    "pos",
    "start",
    "end",
];

/// Leading words that make a name about something else (`csrf_token`, `page_token`,
/// `public_key`, `max_tokens`).
const NOT_SECRET_LEAD: &[&str] = &[
    "public",
    "pub",
    "csrf",
    "xsrf",
    "page",
    "next",
    "prev",
    "continuation",
    "cancellation",
    "cancel",
    "sync",
    "max",
    "min",
    "num",
    "total",
    "input",
    "output",
    "prompt",
    "completion",
    "is",
    "has",
    "use",
    "enable",
    "enabled",
    "disable",
    "show",
    "hide",
    "forgot",
    "forget",
    "require",
    "requires",
    "allow",
    "primary",
    "foreign",
    "partition",
    "sort",
    "cache",
    "idempotency",
    "dedup",
    "object",
    "routing",
    "lookup",
    "hot",
    "no",
    "skip",
    "without",
    "reset",
    "bypass",
    "lost",
    "unique",
    "composite",
    "publishable",
];

/// Words before `key` that make it a credential (`api_key`, `signing_key`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "sign",
    "encryption",
    "encrypt",
    "master",
    "auth",
    "app",
    "application",
    "service",
    "account",
    "storage",
    "subscription",
    "shared",
    "hmac",
    "jwt",
    "session",
    "webhook",
    "consumer",
    "admin",
    "client",
    "deploy",
    "write",
    "ingest",
    "root",
    "rsa",
    "x-api",
    "xapi",
    "decryption",
    "cipher",
    "aes",
    "crypt",
    "crypto",
    "vault",
    "sas",
    "bot",
    "mgmt",
    "management",
    "integration",
    "partner",
    "merchant",
    "ingestion",
    "relay",
    "server",
    "user",
];

/// Most words a name is split into; the rest are ignored.
const MAX_WORDS: usize = 16;

/// Split an identifier into words (`_ - . / space` and camelCase boundaries), as slices
/// of its lowercased copy `lower` (same byte offsets: identifiers are ASCII).
fn words<'a>(ident: &str, lower: &'a str, out: &mut [&'a str; MAX_WORDS]) -> usize {
    let b = ident.as_bytes();
    let mut n = 0;
    let mut start = 0;
    let mut push = |from: usize, to: usize, n: &mut usize| {
        if to > from && *n < MAX_WORDS {
            out[*n] = &lower[from..to];
            *n += 1;
        }
    };
    for i in 0..b.len() {
        if matches!(b[i], b'_' | b'-' | b'.' | b'/' | b' ') {
            push(start, i, &mut n);
            start = i + 1;
            continue;
        }
        if i > start {
            let boundary = (b[i].is_ascii_uppercase() && b[i - 1].is_ascii_lowercase())
                || (b[i].is_ascii_uppercase()
                    && b[i - 1].is_ascii_uppercase()
                    && b.get(i + 1).is_some_and(|c| c.is_ascii_lowercase()))
                || (b[i].is_ascii_digit() != b[i - 1].is_ascii_digit());
            if boundary {
                push(start, i, &mut n);
                start = i;
            }
        }
    }
    push(start, b.len(), &mut n);
    n
}

static META_SET: LazyLock<HashSet<&'static str>> = LazyLock::new(|| META.iter().copied().collect());
static LEAD_SET: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| NOT_SECRET_LEAD.iter().copied().collect());

/// Is this identifier a secret-ish name, and how strongly?
fn classify(ident: &str) -> Option<Name> {
    if !ident.is_ascii() {
        return None;
    }
    let lower = Lower::new(ident);
    let mut buf = [""; MAX_WORDS];
    let n = words(ident, lower.as_str(), &mut buf);
    let w = &buf[..n];
    let mut hit: Option<(usize, Strength)> = None;
    for (i, word) in w.iter().enumerate() {
        let s = word_strength(word, i.checked_sub(1).map(|j| w[j]), w.len() > 1);
        if let Some(s) = s {
            // The last secret word decides; a stronger one anywhere wins ties.
            hit = match hit {
                Some((_, prev)) if rank(prev) > rank(s) => Some((i, prev)),
                _ => Some((i, s)),
            };
        }
    }
    let (at, strength) = hit?;
    // `rusoto_credential-0.11.0`: a package and its version, not a setting.
    if ident.contains('.')
        && w.last()
            .is_some_and(|x| x.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    if w[at + 1..].iter().any(|x| META_SET.contains(x)) {
        return None;
    }
    if w[..at].iter().any(|x| LEAD_SET.contains(x)) {
        return None;
    }
    let has = |x: &str| w.contains(&x);
    Some(Name {
        strength,
        secret_key: has("secret") && has("key"),
        aws_secret: has("secret") && has("key") && (has("access") || has("aws")),
        aws_session: has("session") && has("token"),
        heroku: has("heroku"),
    })
}

fn rank(s: Strength) -> u8 {
    match s {
        Strength::Weak => 0,
        Strength::Strong => 1,
        Strength::Password => 2,
    }
}

fn word_strength(word: &str, prev: Option<&str>, compound: bool) -> Option<Strength> {
    const PASSWORDS: &[&str] = &["password", "passwd", "passphrase", "passcode"];
    if PASSWORDS.iter().any(|p| word == *p || word.ends_with(p)) || word == "pwd" {
        return Some(Strength::Password);
    }
    if word == "pass" || word == "pw" {
        // `DB_PASS`, `ansible_become_pass` name a password; `pass: true` alone does not.
        return Some(if compound {
            Strength::Password
        } else {
            Strength::Weak
        });
    }
    const STRONG_TAILS: &[&str] = &[
        "secret",
        "token",
        "apikey",
        "secretkey",
        "accesskey",
        "privatekey",
        "authkey",
        "signingkey",
    ];
    if STRONG_TAILS.iter().any(|t| word == *t || word.ends_with(t)) {
        // `csrftoken`, `pagetoken`, `nonsecret` glued: the lead decides.
        if ["csrf", "xsrf", "page", "next", "non", "max", "public"]
            .iter()
            .any(|l| word.starts_with(l))
        {
            return None;
        }
        return Some(Strength::Strong);
    }
    if matches!(word, "credential" | "credentials" | "creds") {
        return Some(Strength::Strong);
    }
    if word == "key" {
        return prev
            .filter(|p| KEY_QUALIFIERS.contains(p))
            .map(|_| Strength::Strong);
    }
    if word == "auth" || word.ends_with("auth") && word.len() <= 12 {
        return Some(Strength::Weak);
    }
    None
}

/// Identifier bytes, for expanding a keyword hit to its whole name.
fn ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Every keyword hit expanded to its name, then parsed forward for a separator and a
/// value, then judged.
fn named_values(sink: &mut Sink<'_>) {
    let text = sink.text;
    let bytes = text.as_bytes();
    let mut hits: Vec<(K, usize, usize, String)> = Vec::new();
    let mut done_until = 0;
    for m in KEYWORD.find_iter(&sink.lower) {
        if m.start() < done_until {
            continue;
        }
        // Expand to the identifier around the keyword (bounded).
        let mut s = m.start();
        while s > 0 && m.start() - s < 64 && ident_byte(bytes[s - 1]) {
            s -= 1;
        }
        let mut e = m.end();
        while e < bytes.len() && e - m.end() < 64 && ident_byte(bytes[e]) {
            e += 1;
        }
        done_until = e;
        // A trailing dot or dash ends a sentence or a flag, not a name.
        while e > m.end() && matches!(bytes[e - 1], b'.' | b'-') {
            e -= 1;
        }
        let mut ks = s;
        while ks < m.start() && matches!(bytes[ks], b'.' | b'-') {
            ks += 1;
        }
        let cli = s + 1 < bytes.len() && bytes[s] == b'-' && (ks > s);
        let ident = &text[ks..e];
        // `${DB_PASSWORD}` and `$(…)` are references, not names being assigned.
        if s >= 2 && &bytes[s - 2..s] == b"${" {
            continue;
        }
        // A badge URL's `?token=` is a public graph token (`…/badge.svg?token=…`).
        if s >= 1 && matches!(bytes[s - 1], b'?' | b'&') && in_badge_url(text, s) {
            continue;
        }
        let mut name = classify(ident);
        // `API key is …`, `access token: …`: the qualifier is the word before.
        if name.is_none()
            && (ident.eq_ignore_ascii_case("key") || ident.eq_ignore_ascii_case("keys"))
        {
            name = previous_word(text, s).and_then(|p| classify(&format!("{p}_{ident}")));
        }
        let Some(mut name) = name else {
            continue;
        };
        if name.secret_key && !name.aws_secret {
            name.aws_secret = aws_context(&sink.lower, s);
        }
        if let Some(hit) = parse_assignment(text, s, e, ident, cli, name) {
            done_until = done_until.max(hit.2);
            hits.push(hit);
        }
    }
    for (kind, s, e, r) in hits {
        sink.push(kind, s, e, r);
    }
}

/// Is the query parameter at `at` part of a badge image URL?
fn in_badge_url(text: &str, at: usize) -> bool {
    let floor = line_start_near(text, at, 512);
    let start = text.as_bytes()[floor..at]
        .iter()
        .rposition(|b| b.is_ascii_whitespace() || matches!(b, b'(' | b'"' | b'\'' | b'<'))
        .map_or(floor, |i| floor + i + 1);
    let url = text[start..at].to_ascii_lowercase();
    url.contains("://") && (url.contains("badge") || url.contains(".svg"))
}

/// Does a quote open right before the name (`"password"`)?
fn name_quoted(text: &str, name_start: usize) -> bool {
    name_start > 0 && matches!(text.as_bytes()[name_start - 1], b'"' | b'\'')
}

/// The word before a name, across spaces on the same line.
fn previous_word(text: &str, name_start: usize) -> Option<&str> {
    let before = text[..name_start].trim_end_matches([' ', '\t']);
    if before.len() == name_start {
        return None;
    }
    let start = before
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let w = &before[start..];
    (!w.is_empty()).then_some(w)
}

/// AWS named within a few lines of `at` (for a bare `secret_key` of AWS's shape).
fn aws_context(lower: &str, at: usize) -> bool {
    let mut lo = at.saturating_sub(400);
    while !lower.is_char_boundary(lo) {
        lo += 1;
    }
    let mut hi = (at + 400).min(lower.len());
    while !lower.is_char_boundary(hi) {
        hi -= 1;
    }
    let w = &lower[lo..hi];
    w.contains("aws") || w.contains("akia") || w.contains("asia")
}

/// From the end of a name, find a separator and a value; judge it.
fn parse_assignment(
    text: &str,
    name_start: usize,
    name_end: usize,
    ident: &str,
    cli: bool,
    name: Name,
) -> Option<(K, usize, usize, String)> {
    let bytes = text.as_bytes();
    let line_end = line_end_near(text, name_end, 2048);
    let line_start = line_start_near(text, name_start, 512);
    let rest = &text[name_end..line_end];
    let rb = rest.as_bytes();
    let mut i = 0;
    // XML element: <password>value</password>
    let xml_open = name_start > 0 && bytes[name_start - 1] == b'<' && rb.first() == Some(&b'>');
    let (syntax, vstart, vend) = if xml_open {
        let close = format!("</{ident}>");
        let end = rest.find(&close)?;
        (Syntax::Literal, 1, end)
    } else {
        // Closing quotes/brackets of a key: `"password":`, `['token'] =`.
        let mut closers = 0;
        while i < rb.len() && closers < 3 && matches!(rb[i], b'"' | b'\'' | b']' | b' ') {
            if rb[i] != b' ' {
                closers += 1;
            }
            i += 1;
        }
        while i < rb.len() && matches!(rb[i], b' ' | b'\t') {
            i += 1;
        }
        let sep_start = i;
        let mut syntax;
        let tail = &rest[i..];
        if tail.starts_with(":=")
            || tail.starts_with("=>")
            || tail.starts_with("?=")
            || tail.starts_with("+=")
        {
            i += 2;
            syntax = Syntax::Bare;
        } else if tail.starts_with("===") {
            i += 3;
            syntax = Syntax::Bare;
        } else if tail.starts_with("==") {
            i += 2;
            syntax = Syntax::Bare;
        } else if tail.starts_with('=') {
            i += 1;
            syntax = Syntax::Bare;
            // An env-file or properties line: `KEY=value` opening its line.
            let lead = text[line_start..name_start].trim();
            let lead_ok = lead.is_empty()
                || lead == "export"
                || lead == "set"
                || lead == "ENV"
                || lead == "ARG"
                || lead.ends_with('&')
                || lead.ends_with('?')
                || lead.ends_with(';');
            if lead_ok && sep_start == 0 && rb.get(1).is_some_and(|b| !b.is_ascii_whitespace()) {
                syntax = Syntax::Literal;
            }
        } else if tail.starts_with(':') && !tail.starts_with("::") {
            i += 1;
            // `key: value` has a space or a quote after the colon (or a quoted key before
            // it); `arn:aws:…:secret:name`, `host:port`, `scheme://` do not.
            let next = rb.get(i).copied();
            if closers == 0 && !matches!(next, Some(b' ' | b'\t' | b'"' | b'\'' | b'`') | None) {
                return None;
            }
            syntax = Syntax::Bare;
        } else if tail.starts_with(',') && closers > 0 && name_quoted(text, name_start) {
            // `setProperty("…password", "v")`, `env.set('TOKEN', 'v')`
            i += 1;
            syntax = Syntax::Bare;
        } else if tail.starts_with("value") && closers > 0 {
            // <add key="Password" value="…"> handled by ATTR_PAIR.
            return None;
        } else if cli && sep_start > 0 {
            // `--password value`
            syntax = Syntax::Bare;
        } else {
            // Prose: `is`, `was`, `is now`, `to`, optionally after `for/of/on … `.
            let (consumed, ok) = prose_separator(tail);
            if !ok || sep_start == 0 {
                return None;
            }
            i += consumed;
            syntax = Syntax::Prose;
        }
        while i < rb.len() && matches!(rb[i], b' ' | b'\t') {
            i += 1;
        }
        if i >= rb.len() {
            return None;
        }
        // A value prefix: b"…", r'…', f"…", @"…".
        if matches!(rb[i], b'b' | b'r' | b'f' | b'u' | b'@')
            && rb.get(i + 1).is_some_and(|q| matches!(q, b'"' | b'\''))
        {
            i += 1;
        }
        match rb[i] {
            q @ (b'"' | b'\'' | b'`') => {
                let close = rest[i + 1..].find(q as char)?;
                let (vs, ve) = (i + 1, i + 1 + close);
                let s = if syntax == Syntax::Prose {
                    Syntax::Prose
                } else {
                    Syntax::Literal
                };
                (s, vs, ve)
            }
            _ => {
                let vs = i;
                let mut ve = i;
                let opens_angle = rb[vs] == b'<';
                while ve < rb.len()
                    && !rb[ve].is_ascii_whitespace()
                    && !matches!(rb[ve], b'"' | b'\'' | b'`' | b',' | b';')
                    && (rb[ve] != b'<' || opens_angle)
                {
                    ve += 1;
                }
                // Trailing punctuation of a sentence or a structure.
                while ve > vs
                    && matches!(rb[ve - 1], b'.' | b')' | b']' | b'}' | b':' | b'!' | b'?')
                {
                    if syntax != Syntax::Prose && matches!(rb[ve - 1], b'!' | b'?') {
                        break;
                    }
                    ve -= 1;
                }
                (syntax, vs, ve)
            }
        }
    };
    let raw_value = &rest[vstart..vend];
    let value = raw_value.trim();
    let lead_ws = raw_value.len() - raw_value.trim_start().len();
    let abs_start = name_end + vstart + lead_ws;
    let abs_end = abs_start + value.len();
    if value.is_empty() {
        return None;
    }
    // Value equal to its own name (`password=password`, `TOKEN=$TOKEN` handled as $).
    if value.eq_ignore_ascii_case(ident) {
        return None;
    }
    let strength = name.strength;
    if !value_ok(value, syntax, strength) {
        return None;
    }
    // `field: Type,` / `Token: AsChar + Clone` / `x: Colon2>`: an identifier followed by
    // code punctuation is a type or a variable, not a value.
    if syntax == Syntax::Bare && is_identifier(value) {
        let after = text[abs_end..line_end].trim_start();
        if after.bytes().next().is_some_and(|b| {
            matches!(
                b,
                b',' | b';' | b'>' | b')' | b'{' | b'=' | b'+' | b'<' | b'('
            )
        }) {
            return None;
        }
    }
    let kind = if name.aws_secret
        && value.len() == 40
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+')
    {
        K::AwsSecretKey
    } else if name.aws_session
        && value.len() >= 100
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'+' | b'='))
    {
        K::AwsSessionToken
    } else if name.heroku && is_uuid(value) {
        K::HerokuKey
    } else {
        K::PasswordAssignment
    };
    let shown_name: String = ident.chars().take(32).collect();
    Some((
        kind,
        abs_start,
        abs_end,
        format!("{shown_name}={}", redact(value)),
    ))
}

/// Prose separators after a name: `is`, `was`, `is now`, `to`, `are`, possibly after a
/// short `for <who>` / `on <where>` phrase. Returns bytes consumed and success.
fn prose_separator(tail: &str) -> (usize, bool) {
    let mut consumed = 0;
    let mut words_skipped = 0;
    let mut in_phrase = false;
    let mut in_clause = false;
    let mut s = tail;
    loop {
        let trimmed = s.trim_start_matches([' ', '\t']);
        consumed += s.len() - trimmed.len();
        s = trimmed;
        // A word is a run of non-space bytes (ends on ASCII whitespace: a char boundary).
        let run_len = s.bytes().take_while(|b| !b.is_ascii_whitespace()).count();
        if run_len == 0 {
            return (consumed, false);
        }
        let run = &s[..run_len];
        match Lower::new(run).as_str() {
            "is" | "was" | "are" | "were" if words_skipped == 0 || in_phrase => {
                consumed += run_len;
                // `is now`, `is set to`, `was changed to`
                let rest = s[run_len..].trim_start_matches([' ', '\t']);
                let extra_ws = s[run_len..].len() - rest.len();
                for follow in ["now ", "set to ", "changed to ", "still "] {
                    if rest.len() >= follow.len()
                        && rest.as_bytes()[..follow.len()].eq_ignore_ascii_case(follow.as_bytes())
                    {
                        return (consumed + extra_ws + follow.len() - 1, true);
                    }
                }
                return (consumed, true);
            }
            "to" if words_skipped == 0 => return (consumed + run_len, true),
            "for" | "of" | "on" | "in" | "at" | "from" if words_skipped == 0 => {
                in_phrase = true;
            }
            // `password for bob@staging: …`, `API key we use in staging: …`: a short
            // phrase or clause closed by a colon.
            _ if (in_phrase || in_clause)
                && words_skipped < 5
                && run.ends_with(':')
                && run.len() > 1 =>
            {
                return (consumed + run_len, true);
            }
            "we" | "i" | "you" | "they" | "that" | "which" | "our" | "my" | "your" | "used"
                if words_skipped == 0 =>
            {
                in_clause = true;
            }
            _ if (in_phrase || in_clause)
                && words_skipped < 5
                && run
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'@' | b'-' | b'.')) => {}
            _ => return (consumed, false),
        }
        consumed += run_len;
        s = &s[run_len..];
        words_skipped += 1;
    }
}

/// Judge a value by its syntax and its name's strength.
fn value_ok(v: &str, syntax: Syntax, strength: Strength) -> bool {
    if v.len() < 3 || is_placeholder(v) || is_code_token(v) || is_filler(v) {
        return false;
    }
    if base64_of_placeholder(v) {
        return false;
    }
    // `a.b.c.d`, `aaaa1111`: too few different characters to be anyone's secret.
    if distinct_alnum(v) < 5 && !v.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    // A value naming its own kind (`"refresh-token"`, `my-secret`) is a label.
    if is_plain_word(v) {
        let l = Lower::new(v);
        let l = l.as_str();
        if ["token", "secret", "password", "passwd", "key", "cred"]
            .iter()
            .any(|k| l.contains(k))
        {
            return false;
        }
    }
    if v.contains("://") || is_path(v) {
        return false;
    }
    let c = classes(v);
    let numeric = v.bytes().all(|b| b.is_ascii_digit());
    if numeric {
        // Counts, ports, durations; a 6+ digit password or PIN still counts.
        return strength == Strength::Password && v.len() >= 6;
    }
    if strength == Strength::Weak {
        return base64_is_userpass(v) || is_random_token(v) || password_shaped(v);
    }
    match syntax {
        Syntax::Literal => {
            // A quoted plain word is an enum or a label (`"unsupported"`, `"same-origin"`),
            // unless a password name holds it and it is long enough to be a passphrase
            // (`db_password: "correct-horse-battery"`).
            if is_plain_word(v) && !(strength == Strength::Password && v.len() >= 8) {
                return false;
            }
            // A quoted sentence is a message, not a secret (`"must be 8+ characters"`).
            if v.split_whitespace().count() >= 3 {
                return false;
            }
            if v.contains(' ') && is_plain_phrase(v) {
                return false;
            }
            if is_env_name(v) || is_versionish(v) {
                return false;
            }
            v.len() >= 4
        }
        Syntax::Bare => {
            if is_plain_word(v) || is_code_reference(v) || is_versionish(v) || is_dashed_name(v) {
                return false;
            }
            if v.bytes().next().is_some_and(|b| b == b'-') {
                // The next flag, not a value.
                return false;
            }
            v.len() >= 4 && (c.digit || c.symbol || c.upper && c.lower)
        }
        Syntax::Prose => {
            if is_plain_word(v) || is_code_reference(v) || is_versionish(v) {
                return false;
            }
            // Needs a credential's texture: a digit or a symbol, at least 6 long.
            v.len() >= 6
                && (c.digit || c.symbol)
                && (c.lower || c.upper)
                && !(is_hexish(v) && v.len() < 8)
        }
    }
}

/// Letters, a digit and a symbol, 8 or more: how people make passwords.
fn password_shaped(v: &str) -> bool {
    let c = classes(v);
    v.len() >= 8 && (c.lower || c.upper) && c.digit && c.symbol
}

/// `[A-Za-z_][A-Za-z0-9_]*`
fn is_identifier(v: &str) -> bool {
    let b = v.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// How many different letters and digits a value uses.
fn distinct_alnum(v: &str) -> usize {
    let mut seen = [false; 128];
    v.bytes()
        .filter(|b| b.is_ascii_alphanumeric())
        .filter(|&b| !std::mem::replace(&mut seen[b as usize], true))
        .count()
}

/// Lowercase words and numbers joined by dashes: an algorithm or a setting's name
/// (`scram-sha-256`, `aes-256-gcm`, `rsa-4096`), not a password.
fn is_dashed_name(v: &str) -> bool {
    v.contains('-')
        && v.split('-').all(|p| {
            !p.is_empty()
                && (p.bytes().all(|b| b.is_ascii_lowercase())
                    || p.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// Words and spaces only.
fn is_plain_phrase(v: &str) -> bool {
    v.split_whitespace().all(is_plain_word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for secretish in [
            "password",
            "db_password",
            "DB_PASSWORD",
            "signing_secret",
            "WEBHOOK_SECRET",
            "client_secret",
            "apiKey",
            "api_key",
            "GITHUB_TOKEN",
            "SecretAccessKey",
            "aws_secret_access_key",
            "secret_key_base",
            "PGPASSWORD",
            "_authToken",
            "spring.datasource.password",
            "--password",
            "credentials",
        ] {
            assert!(classify(secretish).is_some(), "{secretish}");
        }
        for other in [
            "password_min_length",
            "PASSWORD_MIN_LENGTH",
            "token_url",
            "secretName",
            "max_tokens",
            "tokenizer",
            "csrf_token",
            "csrfToken",
            "nextPageToken",
            "public_key",
            "AccessKeyId",
            "api_key_id",
            "secretKeyRef",
            "passed",
            "bypass",
            "keyboard",
            "monkey",
            "token_budget",
            "PasswordAuthentication",
            "author",
        ] {
            assert!(classify(other).is_none(), "{other}");
        }
    }
}
