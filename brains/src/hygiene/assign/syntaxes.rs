//! The fixed syntaxes of an assigned secret, each read by its own pattern: `.netrc` and
//! `.pgpass` lines, short CLI flags (`-p'v'`, `mysql -pv`, `redis-cli -a v`), `curl -u
//! user:pass`, .NET `<add key= value=>`, name/value pairs (Postman, ECS, Kubernetes),
//! `echo v | … login --password-stdin`, SQL `IDENTIFIED BY`, `auth=(user, pass)` and
//! a few prose forms (`use v as the password`, `admin / v`).

use std::sync::LazyLock;

use regex::Regex;

use super::names::{classify, Strength};
use super::value::{password_shaped, value_ok, Syntax};
use crate::hygiene::judge::{is_env_name, is_placeholder, is_versionish};
use crate::hygiene::{line_end_near, line_start_near, redact, FindingKind as K, Sink};

// The fixed syntaxes below are searched in the lowercased text (exact literals make
// fast prefilters; offsets are the same), and values are read from the text itself.

crate::hygiene::re!(NETRC, r"\blogin\s+(\S+)\s+password\s+(\S+)");

crate::hygiene::re!(
    PGPASS,
    r"^[ \t]*(?:[a-z0-9.\-]+|\*|\[[0-9a-f:]+\]):(?:\d{1,5}|\*):[^:\s]+:([^:\s]+):(\S+?)\r?$"
);

crate::hygiene::re!(SHORT_P_QUOTED, r#"(?:^|\s)-p(["'])([^"'\s]{3,})["']"#);

crate::hygiene::re!(
    MYSQL_P,
    r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p([^\s'\x22-][^\s'\x22]{2,})"
);

crate::hygiene::re!(
    LOGIN_P,
    r"\b(?:sshpass|docker\s+login|podman\s+login|helm\s+registry\s+login|buildah\s+login|skopeo\s+login|oras\s+login)\b[^\n]*?\s-p\s+(\S+)"
);

crate::hygiene::re!(REDIS_A, r"\bredis-cli\b[^\n]*?\s-a\s+(\S+)");

crate::hygiene::re!(OPENSSL_PASS, r"\s-pass(?:in|out|word)?\s+pass:(\S+)");

crate::hygiene::re!(
    CURL_USER,
    r#"\b(?:curl|wget|http|httpie|xh)\b[^\n]*?\s(?:-u|--user|--http-user)(?:\s+|=)["']?([^\s:"']+):([^\s"']+?)["']?(?:\s|$)"#
);

// `{"key": "apiKey", "value": "…"}`, `{"name": "API_TOKEN", "value": "…"}` (Postman,
// ECS task definitions) and YAML `- name: DB_PASSWORD` / `value: …` (Kubernetes env).
crate::hygiene::re!(
    JSON_PAIR,
    r#""(?:key|name)"\s*:\s*"([^"\n]{1,64})"\s*,\s*"value"\s*:\s*"([^"\n]*)""#
);

crate::hygiene::re!(
    YAML_PAIR,
    r#"(?m)^[ \t]*-?[ \t]*name:[ \t]*["']?([a-z0-9_.\-]{1,64})["']?[ \t]*\r?\n[ \t]*value:[ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#]+))"#
);

// `echo s3cr3t | docker login -u bot --password-stdin`
crate::hygiene::re!(
    ECHO_STDIN,
    r#"\becho\s+["']?([^\s"'|]{6,})["']?\s*\|\s*[^\n]*?\blogin\b[^\n]*--password-stdin"#
);

// SQL: `IDENTIFIED BY 'x'`, `WITH PASSWORD 'x'`, `ENCRYPTED PASSWORD 'x'`.
crate::hygiene::re!(
    SQL_PASSWORD,
    r"\b(?:identified\s+(?:with\s+\w+\s+)?by|password)\s+'([^'\n]+)'"
);

// `requests.get(url, auth=("bot", "…"))`
crate::hygiene::re!(
    AUTH_TUPLE,
    r#"\bauth\s*=\s*\(\s*["'][^"'\n]+["']\s*,\s*["']([^"'\n]+)["']\s*\)"#
);

// `use hunter42 as the password`
crate::hygiene::re!(
    USE_AS,
    r#"\b(?:use|used|using|enter|entered|type|typed|set|with)\s+["'`]?([^\s"'`]{6,64}?)["'`]?\s+as\s+(?:the\s+|a\s+|an\s+|our\s+|your\s+|my\s+)?(?:[a-z]+\s+){0,2}(?:password|passphrase|passcode|pw|token|secret|api\s+key)\b"#
);

// `user deploy, pass Dq7!…`, `login: bob / password: …` in prose.
crate::hygiene::re!(
    USER_PASS,
    r#"\b(?:user(?:name)?|login)\s*[:=]?\s*[`"']?[^\s`"',;:<>/@]+[`"']?\s*[,;/]?\s*(?:pass(?:word)?|pwd|pw)\s*[:=]?\s*[`"']?([^\s`"',;<>@/]+)"#
);

// `admin/Rt4px7!iAx`: a well-known account name and a password with no spaces.
crate::hygiene::re!(
    ACCOUNT_SLASH,
    r"(?:^|[\s(`'\x22])(?:admin|administrator|root|ubuntu|ec2-user|postgres|sa|guest|pi|deploy|ci)/([^\s/?&=`'\x22]{8,64})"
);

// `admin / Adm1n!2024` on a line about logins.
crate::hygiene::re!(
    SLASH_PAIR,
    r"\b([a-z][a-z0-9._\-]{1,30})\s+/\s+([^\s/]{8,64})(?:\s|$)"
);

crate::hygiene::re!(
    ATTR_PAIR,
    r#"\bkey\s*=\s*"([a-z0-9_.\-:]*(?:password|passwd|secret|token|apikey|api_key)[a-z0-9_.\-:]*)"\s+value\s*=\s*"([^"]*)""#
);

/// `.netrc`, `.pgpass`, short CLI flags, `curl -u`, .NET `<add key= value=>`.
pub(super) fn fixed_syntaxes(sink: &mut Sink<'_>) {
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
/// none, and a substring search is cheaper than a regex pass, or than the capture
/// slots a pass over nothing still allocates).
fn gated<'t>(
    re: &'static LazyLock<Regex>,
    lower: &'t str,
    lits: &[&str],
) -> impl Iterator<Item = regex::Captures<'t>> {
    lits.iter()
        .any(|l| lower.contains(l))
        .then(|| re.captures_iter(lower))
        .into_iter()
        .flatten()
}
