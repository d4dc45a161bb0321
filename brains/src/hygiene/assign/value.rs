//! Judging an assigned value by how literal its syntax makes it and how strongly its
//! name claims it is secret: placeholders, references, plain words, versions, paths
//! and labels are not secrets.

use super::names::Strength;
use crate::hygiene::judge::{
    base64_is_userpass, base64_of_placeholder, classes, is_code_reference, is_code_token,
    is_env_name, is_filler, is_hexish, is_path, is_placeholder, is_plain_word, is_random_token,
    is_versionish, Lower,
};

/// How literal the value's syntax makes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Syntax {
    /// Quoted, an env-file line, an XML element: whatever is there was typed on purpose.
    Literal,
    /// Unquoted config (`key: value`, `--flag value`): a plain word is an enum or prose.
    Bare,
    /// Prose (`the password is …`): only a value shaped like a credential counts.
    Prose,
}

/// Judge a value by its syntax and its name's strength.
pub(super) fn value_ok(v: &str, syntax: Syntax, strength: Strength) -> bool {
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
pub(super) fn password_shaped(v: &str) -> bool {
    let c = classes(v);
    v.len() >= 8 && (c.lower || c.upper) && c.digit && c.symbol
}

/// `[A-Za-z_][A-Za-z0-9_]*`
pub(super) fn is_identifier(v: &str) -> bool {
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
