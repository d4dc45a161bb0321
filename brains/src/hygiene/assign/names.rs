//! Is an identifier a secret-ish name, and how strongly? `db_password`,
//! `signing_secret`, `GITHUB_TOKEN` and `apiKey` are; `password_min_length`,
//! `token_url`, `secretName` and `max_tokens` are not. Names are split into words
//! (snake, kebab, dotted, camelCase) and judged by their secret word and its neighbours.

use std::collections::HashSet;
use std::sync::LazyLock;

use super::words::{KEY_QUALIFIERS, META, NOT_SECRET_LEAD};
use crate::hygiene::judge::Lower;

/// How strongly a name claims its value is secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strength {
    /// password, passwd, pwd, passphrase: short or numeric values still count.
    Password,
    /// secret, token, api key, credentials: any literal value counts.
    Strong,
    /// auth, bare `pass`/`pw`: only a random-looking value or a `user:pass` blob counts.
    Weak,
}

/// A recognised secret-ish name.
#[derive(Debug, Clone, Copy)]
pub(super) struct Name {
    pub(super) strength: Strength,
    /// Holds both `secret` and `key` (an AWS secret key if AWS is in the context).
    pub(super) secret_key: bool,
    pub(super) aws_secret: bool,
    pub(super) aws_session: bool,
    pub(super) heroku: bool,
}

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
pub(super) fn classify(ident: &str) -> Option<Name> {
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
