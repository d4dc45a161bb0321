//! Credentials carried by the web's own syntax: `scheme://user:password@host` in a URL
//! of any scheme, and HTTP authorization headers (`Authorization: Basic …`, `Bearer …`,
//! `X-Api-Key: …`, `Private-Token: …`).

use super::judge::{
    base64_is_userpass, classes, entropy, is_env_name, is_placeholder, is_placeholder_shape,
    is_plain_word, is_random_token,
};
use super::{redact, FindingKind as K, Sink};

// scheme://[user]:password@host — the password may hold `@` and `:` (the last `@` before
// the host ends it); whitespace, quotes and `/ ? #` end the authority.
super::re!(
    URL_CREDS,
    r#"\b([A-Za-z][A-Za-z0-9+.\-]{1,30})://([^\s:/?#@"'<>\\]*):([^\s/?#"'\\]+)@([A-Za-z0-9][A-Za-z0-9.\-_]*|\[[0-9A-Fa-f:.]+\])"#
);

super::re!(
    AUTH_HEADER,
    r#"(?i-u)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?\s*(basic|bearer|token|bot|apikey|api-key|key|sso-key|splunk|dsn|otoken)\s+([A-Za-z0-9._~+/=\-:]{6,})"#
);

super::re!(
    KEY_HEADER,
    r#"(?i-u)\b(x-api-key|x-auth-token|x-access-token|private-token|job-token|x-vault-token|x-goog-api-key|x-shopify-access-token|x-figma-token|x-apikey|ocp-apim-subscription-key|x-functions-key|x-sentry-token|circle-token|x-algolia-api-key|x-postmark-server-token|x-pagerduty-token|dd-api-key|dd-application-key)["']?\s*:\s*["']?([A-Za-z0-9._~+/=\-]{12,})"#
);

super::re!(BEARER, r"\bBearer\s+([A-Za-z0-9._~+/\-]{16,}={0,2})");

pub(crate) fn scan(sink: &mut Sink<'_>) {
    url_credentials(sink);
    headers(sink);
}

fn url_credentials(sink: &mut Sink<'_>) {
    let text = sink.text;
    for c in URL_CREDS.captures_iter(text) {
        let (scheme, user, pass, host) = (&c[1], &c[2], c.get(3).expect("password"), &c[4]);
        let p = pass.as_str();
        if url_password_is_placeholder(user, p) {
            continue;
        }
        let shown_user = if user.is_empty() || user.len() > 40 {
            ""
        } else {
            user
        };
        let start = c.get(0).expect("match").start();
        sink.push(
            K::UrlCredentials,
            start,
            c.get(0).expect("match").end(),
            format!("{scheme}://{shown_user}:***@{host}"),
        );
    }
}

/// A URL password that is a stand-in: a template or variable (`${DB_PASS}`, `$PW`,
/// `%s`), an env var's name (`DB_PASSWORD`), filler, a doc placeholder, or the user's
/// own name repeated (`guest:guest`, `postgres:postgres`: a well-known default).
fn url_password_is_placeholder(user: &str, p: &str) -> bool {
    if p.starts_with('%') || is_placeholder_shape(p) || is_env_name(p) {
        return true;
    }
    // One character is a test URL's `a:b`, not a password.
    if p.chars().count() < 2 {
        return true;
    }
    let pl = p.to_ascii_lowercase();
    // Metasyntactic stand-ins: `foo:bar@`, `user:secret@`.
    if matches!(
        pl.as_str(),
        "bar" | "baz" | "foobar" | "qux" | "secret" | "xyz"
    ) {
        return true;
    }
    if matches!(
        pl.as_str(),
        "password" | "passwd" | "yourpassword" | "mypassword" | "pwd" | "token"
    ) && (user.is_empty()
        || matches!(
            user.to_ascii_lowercase().as_str(),
            "user" | "username" | "usr" | "name" | "login" | "me" | "admin" | "root"
        )
        || pl == "password")
    {
        return true;
    }
    // All-caps words (`USER:PASSWORD@HOST`) are a template's slots.
    if p.len() >= 4 && p.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
        return true;
    }
    !user.is_empty() && user.eq_ignore_ascii_case(p)
}

fn headers(sink: &mut Sink<'_>) {
    let text = sink.text;
    let mut hits: Vec<(usize, usize, String)> = Vec::new();
    for c in AUTH_HEADER.captures_iter(text) {
        let scheme = &c[1];
        let v = c.get(2).expect("value");
        let value = v.as_str();
        let ok = if scheme.eq_ignore_ascii_case("basic") {
            value.len() >= 8 && !is_placeholder(value) && !is_env_name(value)
        } else {
            header_value_is_secret(value)
        };
        if ok {
            hits.push((
                c.get(0).expect("match").start(),
                v.end(),
                format!("Authorization: {scheme} {}", redact(value)),
            ));
        }
    }
    for c in KEY_HEADER.captures_iter(text) {
        let v = c.get(2).expect("value");
        if header_value_is_secret(v.as_str()) {
            hits.push((
                c.get(0).expect("match").start(),
                v.end(),
                format!("{}: {}", &c[1], redact(v.as_str())),
            ));
        }
    }
    for c in BEARER.captures_iter(text) {
        let v = c.get(1).expect("value");
        if header_value_is_secret(v.as_str()) {
            hits.push((
                c.get(0).expect("match").start(),
                v.end(),
                format!("Bearer {}", redact(v.as_str())),
            ));
        }
    }
    for (start, end, redacted) in hits {
        sink.push(K::AuthHeader, start, end, redacted);
    }
}

/// A header credential: not a placeholder, an env var's name, or a word; random-looking
/// or at least carrying digits (short opaque tokens such as `abc123def456` count).
fn header_value_is_secret(v: &str) -> bool {
    if v.len() < 8 || is_placeholder(v) || is_env_name(v) || is_plain_word(v) {
        return false;
    }
    if base64_is_userpass(v) || is_random_token(v) {
        return true;
    }
    let c = classes(v);
    c.digit && (c.lower || c.upper) && v.len() >= 12 && entropy(v.as_bytes()) >= 3.0
}
