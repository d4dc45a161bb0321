//! Long random-looking tokens standing alone: a key of a format no rule knows, a session
//! cookie, a seed. Judged by structure, not by name: identifiers (CamelCase, snake_case,
//! glued words), digests (hex, UUIDs, SRI `sha512-…`, `h1:…`), base64 of readable text,
//! paths and URLs, public keys and certificates are not secrets.

use super::judge::{
    base64_decode_text, base64_is_readable, class_switch_rate, classes, entropy, is_hexish,
    wordiness, Lower,
};
use super::{redact, scan_inner, FindingKind as K, Sink};

/// Runs of token characters (`A-Z a-z 0-9 + / _ -`) of 24 or more, with up to two
/// trailing `=`: the candidates, found by one pass over the bytes.
fn candidates(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    const TOKEN: [bool; 256] = {
        let mut t = [false; 256];
        let mut c = 0;
        while c < 256 {
            let b = c as u8;
            t[c] = b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-');
            c += 1;
        }
        t
    };
    let b = text.as_bytes();
    let token = |c: u8| TOKEN[c as usize];
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            if !token(b[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && token(b[i]) {
                i += 1;
            }
            if i - start >= 24 {
                let mut end = i;
                while end < b.len() && end - i < 2 && b[end] == b'=' {
                    end += 1;
                }
                i = end;
                return Some((start, end));
            }
        }
        None
    })
}

/// Words before a value that say it is public or a digest, not a secret.
const PUBLIC_NAMES: &[&str] = &[
    "public",
    "pubkey",
    "hash",
    "digest",
    "checksum",
    "integrity",
    "etag",
    "fingerprint",
    "commit",
    "sha",
    "rev",
    "revision",
    "version",
    "uuid",
    "guid",
    "nonce",
    "signature",
    "cert",
    "certificate",
    "id",
    "ids",
    "request",
    "trace",
    "span",
    "correlation",
    "image",
    "blob",
    "oid",
    "tree",
    "parent",
];

pub(crate) fn scan(sink: &mut Sink<'_>, decode_base64: bool) {
    let text = sink.text;
    let bytes = text.as_bytes();
    let public_blocks = public_block_spans(text);
    let mut hits: Vec<(K, usize, usize, String)> = Vec::new();
    for (start, end) in candidates(text) {
        let tok = &text[start..end];
        if sink.is_taken(start, end) || public_blocks.iter().any(|&(s, e)| start >= s && start < e)
        {
            continue;
        }
        // Part of a path, URL, domain, e-mail, anchor, or a longer dotted token.
        let before = start.checked_sub(1).map(|i| bytes[i]);
        if matches!(
            before,
            Some(b'/' | b'.' | b'#' | b'@' | b'\\' | b'%' | b'&' | b'$' | b'~')
        ) {
            continue;
        }
        if bytes.get(end).is_some_and(|&b| b == b'.' || b == b'@')
            && bytes.get(end + 1).is_some_and(u8::is_ascii_alphanumeric)
        {
            continue;
        }
        if !looks_random(tok) || prefix_says_public(line_prefix(text, start)) {
            continue;
        }
        // Readable base64: a fixture or an encoded document. Look inside it once.
        if base64_is_readable(tok.trim_end_matches('=')) {
            if decode_base64 {
                if let Some(inner) = base64_decode_text(tok) {
                    if let Some(f) = scan_inner(&inner, false).into_iter().next() {
                        hits.push((f.kind, start, end, redact(tok)));
                    }
                }
            }
            continue;
        }
        let kind = if tok.len() == 40
            && tok
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+')
            && aws_nearby(sink, start)
        {
            K::AwsSecretKey
        } else {
            K::HighEntropy
        };
        hits.push((kind, start, end, redact(tok)));
    }
    for (k, s, e, r) in hits {
        sink.push(k, s, e, r);
    }
}

/// Is this token random-looking enough to be a key on its own?
fn looks_random(tok: &str) -> bool {
    let t = tok.trim_end_matches('=');
    let b = t.as_bytes();
    if b.len() < 24 {
        return false;
    }
    let c = classes(t);
    if !(c.upper && c.lower && c.digit) {
        return false;
    }
    // Gerrit's `Change-Id: I<sha>`.
    if b[0] == b'I' && is_hexish(&t[1..]) {
        return false;
    }
    // Object ids with a short type prefix (`pi_3Mtw…`, `cus_Nffr…`, `evt_…`).
    if let Some((p, rest)) = t.split_once('_') {
        if (2..=6).contains(&p.len())
            && p.bytes().all(|c| c.is_ascii_lowercase())
            && rest.len() <= 28
            && rest.bytes().all(|c| c.is_ascii_alphanumeric())
        {
            return false;
        }
    }
    // Integrity (`sha512-…`), Go sums (`h1:` is split off by `:`), digests.
    if ["sha1-", "sha256-", "sha384-", "sha512-", "md5-"]
        .iter()
        .any(|p| b.len() > p.len() && b[..p.len()].eq_ignore_ascii_case(p.as_bytes()))
    {
        return false;
    }
    // OpenSSH public key blobs.
    if t.starts_with("AAAAB3NzaC1") || t.starts_with("AAAAC3NzaC1") || t.starts_with("AAAAE2VjZHNh")
    {
        return false;
    }
    if is_hexish(t) {
        return false;
    }
    // A path: segments separated by `/` that are words.
    if t.contains('/') {
        let wordy_segments = t
            .split('/')
            .filter(|s| !s.is_empty())
            .all(|s| wordiness(s.as_bytes()) >= 0.5 || s.len() < 4);
        if wordy_segments {
            return false;
        }
    }
    // Structured names: three or more separated segments, most of them all letters or
    // all digits (`en-US-u-foobar-hc-h12`, `__NR_atomic_cmpxchg_32`).
    let segments = || t.split(['_', '-']).filter(|s| !s.is_empty());
    let count = segments().count();
    if count >= 3 {
        let pure = segments()
            .filter(|s| {
                s.bytes().all(|b| b.is_ascii_alphabetic()) || s.bytes().all(|b| b.is_ascii_digit())
            })
            .count();
        if pure * 3 >= count * 2 {
            return false;
        }
    }
    // Identifiers: words glued by case or separators.
    if wordiness(b) >= 0.55 {
        return false;
    }
    let h = entropy(b);
    let need = ((b.len() as f64).log2() - 0.9).min(4.0);
    h >= need && class_switch_rate(b) >= 0.3
}

/// The text on this line before `start`, at most 60 bytes.
fn line_prefix(text: &str, start: usize) -> &str {
    &text[super::line_start_near(text, start, 60)..start]
}

/// The name this token is assigned to (or follows) says it is public: `"integrity":`,
/// `sha256:`, `commit `, `PublicKey = `, `ssh-ed25519 `, `base64,` (a data URI), `h1:`.
fn prefix_says_public(prefix: &str) -> bool {
    let p = prefix.trim_end();
    let pl = Lower::new(p);
    let pl = pl.as_str();
    if pl.ends_with("base64,")
        || pl.ends_with("h1:")
        || pl.ends_with("sha256:")
        || pl.ends_with("sha512:")
        || pl.ends_with("sha1:")
        || pl.ends_with("md5:")
        || pl.ends_with("ssh-rsa")
        || pl.ends_with("ssh-ed25519")
        || pl.ends_with("ssh-dss")
        || pl.contains("ecdsa-sha2-")
    {
        return true;
    }
    // An id or a digest named a few words back: `request id X`, `ids look like X`.
    if pl
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .rev()
        .take(3)
        .any(|w| {
            matches!(
                w,
                "id" | "ids"
                    | "identifier"
                    | "uuid"
                    | "digest"
                    | "checksum"
                    | "commit"
                    | "nanoid"
                    | "ulid"
                    | "cid"
                    | "playlist"
                    | "video"
                    | "channel"
                    | "sha"
                    | "hash"
            )
        })
    {
        return true;
    }
    // The last name-like word before the separator.
    let name_end = pl
        .trim_end_matches(|c: char| {
            c.is_whitespace() || matches!(c, '"' | '\'' | ':' | '=' | '`' | '(' | ',')
        })
        .len();
    let name = &pl[..name_end];
    let name_start = name
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = &name[name_start..];
    if word.is_empty() {
        return false;
    }
    word.split(['_', '-', '.'])
        .chain(std::iter::once(word))
        .any(|w| PUBLIC_NAMES.contains(&w) || w.ends_with("hash") || w.ends_with("sum"))
        || [
            "publickey",
            "pubkey",
            "sha256",
            "sha512",
            "sha1",
            "integrity",
        ]
        .iter()
        .any(|x| word.contains(x))
}

/// Spans of PEM blocks that are public (certificates, public keys, signatures).
fn public_block_spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("-----BEGIN ") {
        let s = from + i;
        let header_end = text[s + 11..]
            .find("-----")
            .map_or(text.len(), |j| s + 11 + j);
        let header = &text[s..header_end];
        let end = text[header_end..]
            .find("-----END")
            .map_or(text.len(), |j| header_end + j + 8);
        if !header.contains("PRIVATE") {
            out.push((s, end));
        }
        from = end.max(s + 11);
        if from >= text.len() {
            break;
        }
    }
    out
}

/// An AWS access key or the word `aws` within a few lines of `at`.
fn aws_nearby(sink: &Sink<'_>, at: usize) -> bool {
    let lo = at.saturating_sub(400);
    let hi = (at + 400).min(sink.lower.len());
    if sink.has_kind_near(&[K::AwsAccessKey], lo, hi) {
        return true;
    }
    let mut lo = lo;
    while !sink.lower.is_char_boundary(lo) {
        lo += 1;
    }
    let mut hi = hi;
    while !sink.lower.is_char_boundary(hi) {
        hi -= 1;
    }
    sink.lower[lo..hi].contains("aws")
}
