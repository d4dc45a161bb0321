//! Values that stand for something other than a secret: placeholders and templates,
//! references to variables and code, tokens of code, and plain words.

use std::sync::LazyLock;

use regex::Regex;

use super::Lower;

/// Words that say a value stands in for a secret rather than being one.
const PLACEHOLDER_MARKS: &[&str] = &[
    "changeme",
    "change_me",
    "change-me",
    "changeit",
    "example",
    "placeholder",
    "redacted",
    "your_",
    "your-",
    "yourpass",
    "yourtoken",
    "yoursecret",
    "yourkey",
    "yourapi",
    "dummy",
    "sample",
    "notreal",
    "not-real",
    "not_real",
    "not-a-real",
    "not my real",
    "notmyreal",
    "not_a_real",
    "fake",
    "replace",
    "insert",
    "fixme",
    "_here",
    "-here",
    "removed",
    "masked",
    "omitted",
    "elided",
    "censored",
    "scrubbed",
    "xxxx",
    "****",
    "...",
    "…",
];

/// All the marks in one search.
static MARKS: LazyLock<Regex> = LazyLock::new(|| {
    let alternation: Vec<String> = PLACEHOLDER_MARKS.iter().map(|m| regex::escape(m)).collect();
    Regex::new(&alternation.join("|")).expect("a valid pattern")
});

/// Whole values that are placeholders, types, or "nothing".
const PLACEHOLDER_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "pass",
    "pwd",
    "key",
    "none",
    "null",
    "nil",
    "true",
    "false",
    "yes",
    "no",
    "on",
    "off",
    "undefined",
    "empty",
    "unset",
    "string",
    "str",
    "bytes",
    "int",
    "integer",
    "text",
    "required",
    "optional",
    "default",
    "test",
    "testing",
    "foo",
    "bar",
    "baz",
    "foobar",
    "demo",
    "local",
    "dev",
    "todo",
    "tbd",
    "xxx",
    "hidden",
    "secretstring",
    "secretstr",
    "sensitive",
    "disabled",
    "enabled",
    "unchanged",
    "invalid",
    "missing",
    "expired",
    "protected",
    "encrypted",
    "inherit",
    "inherited",
    "unsupported",
    "supported",
    "generated",
    "random",
    "provided",
    "prompt",
    "stdin",
    "keychain",
    "keyring",
    "vault",
];

/// A value that stands for a secret without being one: empty, filler, a template or
/// variable reference (`${X}`, `$X`, `%X%`, `{{x}}`, `<x>`), a YAML tag or alias, a
/// type name, a "nothing" literal, a doc placeholder (`changeme`, `your-token-here`).
pub(crate) fn is_placeholder(v: &str) -> bool {
    is_placeholder_shape(v) || PLACEHOLDER_WORDS.contains(&Lower::new(v.trim()).as_str())
}

/// A placeholder by its shape or its marks (not by being a bare word such as `pass`):
/// templates, references, filler, `changeme`-like marks, type names.
pub(crate) fn is_placeholder_shape(v: &str) -> bool {
    let v = v.trim();
    if v.is_empty() {
        return true;
    }
    let first = v.as_bytes()[0];
    let last = v.as_bytes()[v.len() - 1];
    if matches!(first, b'$' | b'%' | b'{' | b'!' | b'*' | b'&' | b'#' | b'@')
        || (first == b'<' && last == b'>')
        || (first == b'[' && last == b']')
        || (first == b'@' && last == b'@')
        || (first == b'(' && last == b')')
    {
        return true;
    }
    if v.contains("${")
        || v.contains("{{")
        || v.contains("$(")
        || v.contains("%(")
        || v.contains("<%")
        || (v.contains('<') && v.contains('>'))
    {
        return true;
    }
    if v.bytes().all(|b| {
        matches!(
            b,
            b'*' | b'x' | b'X' | b'.' | b'-' | b'_' | b'#' | b'0' | b'?' | b'='
        )
    }) {
        return true;
    }
    let lower = Lower::new(v);
    let lower = lower.as_str();
    if MARKS.is_match(lower) {
        return true;
    }
    // `Option<String>`, `&str`, `Secret<String>`: a type, not a value.
    if lower.starts_with("option<") || lower.starts_with("secret<") || lower == "&str" {
        return true;
    }
    false
}

/// An ALL_CAPS_NAME with at least one underscore (or an all-caps key word): an
/// environment variable's name standing for its value.
pub(crate) fn is_env_name(v: &str) -> bool {
    v.len() >= 3
        && v.contains('_')
        && v.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && v.as_bytes()[0].is_ascii_uppercase()
}

/// Code that yields a value rather than a value: a call, an index, a path, a dotted
/// field access (`os.environ["X"]`, `getenv("X")`, `process.env.X`, `config.password`,
/// `env::var`, `self.token`).
pub(crate) fn is_code_reference(v: &str) -> bool {
    if v.contains('(') || v.contains('[') || v.contains("::") || v.contains("->") {
        return true;
    }
    // Dotted identifiers led by a word: `settings.SECRET_KEY`, `args.token`,
    // `node.colon2_token`, `self.password`.
    if v.contains('.') {
        let mut parts = v.split('.');
        let lead_is_word = parts
            .next()
            .is_some_and(|p| p.len() >= 2 && p.bytes().all(|b| b.is_ascii_alphabetic()));
        let rest_are_idents = parts.all(|p| {
            !p.is_empty()
                && (p.as_bytes()[0].is_ascii_alphabetic() || p.as_bytes()[0] == b'_')
                && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
        if lead_is_word && rest_are_idents {
            return true;
        }
    }
    is_env_name(v)
}

/// A token of code rather than a value: a primitive type (`u32`, `__u32`, `i64`,
/// `usize`, `c_int`, `uint8_t`), a number literal (`0x100`, `1_000`), a name with a
/// leading underscore (`_bindgen_ty_7`), a regex or format pattern (`\w{20}`).
pub(crate) fn is_code_token(v: &str) -> bool {
    let b = v.as_bytes();
    if b.is_empty() {
        return false;
    }
    if b[0] == b'_' || v.contains('\\') || (v.contains('{') && v.contains('}')) {
        return true;
    }
    // A macro: `quote!`, `vec!`.
    if let Some(name) = v.strip_suffix('!') {
        if !name.is_empty() && name.bytes().all(|c| c.is_ascii_lowercase() || c == b'_') {
            return true;
        }
    }
    let lower = Lower::new(v);
    let lower = lower.as_str();
    if lower.starts_with("0x") || lower.starts_with("0b") || lower.starts_with("0o") {
        return lower[2..]
            .bytes()
            .all(|c| c.is_ascii_hexdigit() || c == b'_');
    }
    let t = lower.trim_start_matches('_');
    let prim = |p: &str| {
        t.strip_prefix(p)
            .is_some_and(|r| matches!(r, "8" | "16" | "32" | "64" | "128" | "size"))
    };
    prim("u")
        || prim("i")
        || prim("f")
        || prim("uint")
        || prim("int")
        || (t.starts_with("uint") || t.starts_with("int")) && t.ends_with("_t")
        || t.starts_with("c_")
}

/// Letters only, with `-`, `_` or `'` between groups, in one case shape per group
/// (lower, Capitalized or UPPER): a word or words glued the way identifiers and prose
/// glue them, not a password with a digit or symbol in it.
pub(crate) fn is_plain_word(v: &str) -> bool {
    if v.is_empty() {
        return false;
    }
    v.split(['-', '_', '\''])
        .all(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_alphabetic()) && case_shaped(g))
}

/// `word`, `Word`, `WORD` or CamelCase (`WordWord`) but not `wOrD`.
fn case_shaped(g: &str) -> bool {
    let b = g.as_bytes();
    if b.iter().all(|c| c.is_ascii_lowercase()) || b.iter().all(|c| c.is_ascii_uppercase()) {
        return true;
    }
    // Camel/Pascal: every uppercase letter (but a last one) starts a lowercase run.
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_uppercase() {
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_lowercase() {
                j += 1;
            }
            if j - i < 2 && j < b.len() {
                return false;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_words() {
        for p in [
            "${DB_PASSWORD}",
            "<password>",
            "changeme",
            "your-token-here",
            "***",
            "xxxx",
            "REDACTED",
            "$(cat /run/secrets/db)",
            "{{ .Values.password }}",
            "%DB_PASS%",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        for s in ["hunter2x", "s3cr3tpw", "Tr0ub4dor&3"] {
            assert!(!is_placeholder(s), "{s}");
            assert!(!is_plain_word(s), "{s}");
        }
        for w in [
            "refreshed",
            "correct-horse-battery",
            "Required",
            "SecretStr",
        ] {
            assert!(is_plain_word(w), "{w}");
        }
    }
}
