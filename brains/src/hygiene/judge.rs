//! Judging a candidate value: is it a placeholder, a reference to something else, a
//! plain word, an identifier, a digest, readable base64, or random enough to be a key?
//! Every check is bounded by the value's length; most allocate nothing.

use std::sync::LazyLock;

use regex::Regex;

/// An ASCII-lowercased copy of a short string, on the stack when it fits.
pub(crate) struct Lower {
    buf: [u8; 128],
    len: usize,
    heap: Option<String>,
}

impl Lower {
    pub(crate) fn new(s: &str) -> Self {
        let mut buf = [0u8; 128];
        if s.len() <= buf.len() {
            for (d, c) in buf.iter_mut().zip(s.bytes()) {
                *d = c.to_ascii_lowercase();
            }
            Lower {
                buf,
                len: s.len(),
                heap: None,
            }
        } else {
            Lower {
                buf,
                len: 0,
                heap: Some(s.to_ascii_lowercase()),
            }
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match &self.heap {
            Some(h) => h,
            // Lowercasing ASCII bytes of valid UTF-8 keeps it valid.
            None => std::str::from_utf8(&self.buf[..self.len]).unwrap_or(""),
        }
    }
}

/// Shannon entropy in bits per character over the bytes of `s`.
pub(crate) fn entropy(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u16; 256];
    for &b in s {
        counts[b as usize] = counts[b as usize].saturating_add(1);
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Which character classes a value uses.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Classes {
    pub upper: bool,
    pub lower: bool,
    pub digit: bool,
    /// Anything that is not an ASCII letter or digit.
    pub other: bool,
    /// Punctuation other than the separators identifiers and words use (`_ - . '`).
    pub symbol: bool,
}

pub(crate) fn classes(s: &str) -> Classes {
    let mut c = Classes::default();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' => c.upper = true,
            b'a'..=b'z' => c.lower = true,
            b'0'..=b'9' => c.digit = true,
            b'_' | b'-' | b'.' | b'\'' => c.other = true,
            _ => {
                c.other = true;
                c.symbol = true;
            }
        }
    }
    c
}

/// The longest run of one repeated byte.
fn longest_run(s: &[u8]) -> usize {
    let (mut best, mut run) = (0, 0);
    let mut prev = None;
    for &b in s {
        if Some(b) == prev {
            run += 1;
        } else {
            run = 1;
            prev = Some(b);
        }
        best = best.max(run);
    }
    best
}

fn distinct(s: &[u8]) -> usize {
    let mut seen = [false; 256];
    let mut n = 0;
    for &b in s {
        if !seen[b as usize] {
            seen[b as usize] = true;
            n += 1;
        }
    }
    n
}

/// The body of a token that is filler, not a secret: `xxxx`, `0000`, `****`, a run of
/// six identical characters, or four distinct characters or fewer.
pub(crate) fn is_filler(body: &str) -> bool {
    let b = body.as_bytes();
    if b.is_empty() {
        return true;
    }
    let lower = Lower::new(body);
    let lower = lower.as_str();
    // A run of one character: filler unless real randomness surrounds it (Twitter's
    // bearer tokens open with twenty-odd `A`s).
    let run = longest_run(b);
    if run >= 6 && (b.len() - run < 12 || wordiness(b) >= 0.5) {
        return true;
    }
    distinct(b) <= 4
        || lower.contains("xxxx")
        || lower.contains("****")
        || lower.contains("....")
        || body.contains('…')
        || body.contains('<')
        || body.contains("${")
        || body.contains("{{")
}

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

/// Hex digits only (with optional `-` separators, as in UUIDs).
pub(crate) fn is_hexish(v: &str) -> bool {
    v.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') && v.bytes().any(|b| b != b'-')
}

/// `8-4-4-4-12` hex.
pub(crate) fn is_uuid(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// A path on disk (`/etc/x`, `./x`, `~/x`, `C:\x`), not a value.
pub(crate) fn is_path(v: &str) -> bool {
    let b = v.as_bytes();
    v.starts_with('/') && v[1..].contains('/')
        || v.starts_with("./")
        || v.starts_with("../")
        || v.starts_with("~/")
        || (b.len() > 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\')
        || v.starts_with("/run/")
        || v.starts_with("/var/")
        || v.starts_with("/etc/")
}

/// A version, a date, a time, a number with a unit: `v1.2.3`, `2024-05-01`, `12:30`,
/// `30s`, `8h`, `1.5GB`.
pub(crate) fn is_versionish(v: &str) -> bool {
    let s = v.strip_prefix('v').unwrap_or(v);
    let b = s.as_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() {
        return false;
    }
    let digits_and_seps = b
        .iter()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b':' | b'/' | b'+'));
    if digits_and_seps && b.iter().any(|c| matches!(c, b'.' | b'-' | b':' | b'/')) {
        return true;
    }
    // A number with a short alphabetic unit.
    let split = b
        .iter()
        .position(|c| !(c.is_ascii_digit() || *c == b'.'))
        .unwrap_or(b.len());
    split > 0
        && split < b.len()
        && b.len() - split <= 3
        && b[split..]
            .iter()
            .all(|c| c.is_ascii_alphabetic() || *c == b'%')
}

/// Transitions between character classes (lower, upper, digit, other) per character:
/// high for random strings, low for words and identifiers.
pub(crate) fn class_switch_rate(s: &[u8]) -> f64 {
    if s.len() < 2 {
        return 0.0;
    }
    let class = |b: u8| match b {
        b'a'..=b'z' => 0u8,
        b'A'..=b'Z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    };
    let switches = s
        .windows(2)
        .filter(|w| {
            let (a, b) = (class(w[0]), class(w[1]));
            // Capitalised words (`Ab`) are one unit, not a switch.
            a != b && !(a == 1 && b == 0)
        })
        .count();
    switches as f64 / (s.len() - 1) as f64
}

/// The share of letters that sit in word-like segments: a lowercase run of 3+ letters
/// (with an optional leading capital) holding a vowel. CamelCase, snake_case and glued
/// words score near 1; random strings score low.
pub(crate) fn wordiness(s: &[u8]) -> f64 {
    wordiness_with(s, true)
}

/// [`wordiness`] counting only lowercase-led words (`Personal`, `token`), not all-caps
/// runs, which base32 keys are full of.
pub(crate) fn camel_wordiness(s: &[u8]) -> f64 {
    wordiness_with(s, false)
}

fn wordiness_with(s: &[u8], caps_words: bool) -> f64 {
    let letters = s.iter().filter(|b| b.is_ascii_alphabetic()).count();
    if letters == 0 {
        return 0.0;
    }
    let mut in_words = 0;
    let mut i = 0;
    while i < s.len() {
        if !s[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let start = i;
        // A capital may lead a lowercase run; an uppercase run is an acronym segment.
        if s[i].is_ascii_uppercase() {
            let mut j = i;
            while j < s.len() && s[j].is_ascii_uppercase() {
                j += 1;
            }
            if j < s.len() && s[j].is_ascii_lowercase() && j - i > 1 {
                // `HTTPServer`: the acronym is `HTTP`, `Server` starts at j - 1.
                let acronym = j - 1 - i;
                if caps_words
                    && (2..=8).contains(&acronym)
                    && has_vowel(&s[i..j - 1])
                    && longest_run(&s[i..j - 1]) < 3
                {
                    in_words += acronym;
                }
                i = j - 1;
                continue;
            }
            if j - i >= 2 {
                // An all-caps run: a word if it is short-ish and pronounceable.
                if caps_words
                    && j - i >= 3
                    && has_vowel(&s[i..j])
                    && j - i <= 12
                    && not_sequence(&s[i..j])
                {
                    in_words += j - i;
                }
                i = j;
                continue;
            }
            i += 1;
        }
        let mut j = i;
        while j < s.len() && s[j].is_ascii_lowercase() {
            j += 1;
        }
        if j - start >= 3 && has_vowel(&s[start..j]) && not_sequence(&s[start..j]) {
            in_words += j - start;
        }
        i = j.max(start + 1);
    }
    in_words as f64 / letters as f64
}

/// Letters counted as a word must not be an alphabet run (`abcdefgh`, `MNOPQ`).
fn not_sequence(s: &[u8]) -> bool {
    if s.len() < 4 {
        return true;
    }
    let steps = s
        .windows(2)
        .filter(|w| w[1].to_ascii_lowercase() == w[0].to_ascii_lowercase().wrapping_add(1))
        .count();
    steps * 2 < s.len() - 1
}

fn has_vowel(s: &[u8]) -> bool {
    s.iter().any(|b| {
        matches!(
            b.to_ascii_lowercase(),
            b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
        )
    })
}

/// Decode base64 (standard or URL-safe, padding optional) and report whether the bytes
/// read as text: at least 12 bytes, 95 % printable ASCII, a third letters, digits or
/// spaces (random bytes are printable 37 % of the time, so twelve in a row by chance is
/// one in millions). Decoding is streamed; nothing is allocated.
pub(crate) fn base64_is_readable(s: &str) -> bool {
    let (total, printable, letters) = base64_stats(s);
    total >= 12 && printable * 100 >= total * 95 && letters * 100 >= total * 33
}

fn base64_stats(s: &str) -> (usize, usize, usize) {
    let mut acc: u32 = 0;
    let mut bits = 0;
    let (mut total, mut printable, mut letters) = (0, 0, 0);
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => return (0, 0, 0),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            let byte = ((acc >> bits) & 0xff) as u8;
            total += 1;
            if (0x20..0x7f).contains(&byte) || matches!(byte, b'\n' | b'\r' | b'\t') {
                printable += 1;
            }
            if byte.is_ascii_alphanumeric() || byte == b' ' {
                letters += 1;
            }
        }
    }
    (total, printable, letters)
}

/// Decode base64 into text when it reads as text (for a second look at what it hides).
pub(crate) fn base64_decode_text(s: &str) -> Option<String> {
    if !base64_is_readable(s) {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => break,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    String::from_utf8(out).ok()
}

/// Does the base64 value decode to `user:password` (a Basic or docker `auth` blob)?
pub(crate) fn base64_is_userpass(s: &str) -> bool {
    base64_decode_text(s).is_some_and(|t| {
        let t = t.trim();
        t.split_once(':').is_some_and(|(u, p)| {
            !u.is_empty() && !p.is_empty() && !u.contains(char::is_whitespace) && !is_placeholder(p)
        })
    })
}

/// Base64 whose decoded text is itself a placeholder (`bm90IG15IHJlYWwgcGFzc3dvcmQ=`
/// is "not my real password").
pub(crate) fn base64_of_placeholder(s: &str) -> bool {
    base64_decode_text(s).is_some_and(|t| is_placeholder(&t))
}

/// A value random enough to be a machine-made key: long, no word structure, dense.
/// This is the bar for values whose name alone does not make them secret.
pub(crate) fn is_random_token(v: &str) -> bool {
    let b = v.as_bytes();
    if b.len() < 16 {
        return false;
    }
    let c = classes(v);
    if !(c.digit && (c.lower || c.upper)) {
        return false;
    }
    if is_hexish(v) {
        return b.len() >= 32 && entropy(b) > 3.0;
    }
    let h = entropy(b);
    let need = ((b.len() as f64).log2() - 1.0).min(3.8);
    h >= need && wordiness(b) < 0.6 && class_switch_rate(b) >= 0.25
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_wordy_and_random_strings_are_not() {
        for id in [
            "AbstractSingletonProxyFactoryBeanConfigurationHolder2",
            "snake_case_identifier_names_are_not_secrets",
            "HTTPServerConfigBuilder",
            "test_parse_ok_2024_regression_case",
        ] {
            assert!(wordiness(id.as_bytes()) > 0.7, "{id}");
        }
        for r in [
            "Zx9qL2mN8vB4cX7wR5tY3uI1oP6aS0dF",
            "7hG2kP9xQ4mW8zR3vN6tB1yL5cJ0dF2s",
        ] {
            assert!(wordiness(r.as_bytes()) < 0.4, "{r}");
            assert!(is_random_token(r), "{r}");
        }
    }

    #[test]
    fn readable_base64_is_seen_through() {
        assert!(base64_is_readable(
            "SGVsbG8gV29ybGQhIFRoaXMgaXMgYSB0ZXN0IGZpeHR1cmUu"
        ));
        assert!(!base64_is_readable("Zx9qL2mN8vB4cX7wR5tY3uI1oP6aS0dF"));
        assert!(base64_is_userpass("Y2k6WnE4bVIycEw0eA=="));
        assert!(
            !base64_is_userpass("dXNlcjpwYXNzd29yZA=="),
            "user:password is a placeholder"
        );
    }

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
