//! Judging a candidate value: is it a placeholder, a reference to something else, a
//! plain word, an identifier, a digest, readable base64, or random enough to be a key?
//! Every check is bounded by the value's length; most allocate nothing.
//!
//! Layout: this file holds the measures every check shares (character classes,
//! entropy, filler); `placeholder` knows values that stand for something else
//! (placeholders, references, code tokens, plain words); `formats` knows public
//! formats (hex, UUIDs, paths, versions); `random` judges word structure and
//! randomness; `base64` looks through base64 at the text it hides.

mod base64;
mod formats;
mod placeholder;
mod random;

pub(crate) use self::base64::{
    base64_decode_text, base64_is_readable, base64_is_userpass, base64_of_placeholder,
};
pub(crate) use self::formats::{is_hexish, is_path, is_uuid, is_versionish};
pub(crate) use self::placeholder::{
    is_code_reference, is_code_token, is_env_name, is_placeholder, is_placeholder_shape,
    is_plain_word,
};
pub(crate) use self::random::{camel_wordiness, class_switch_rate, is_random_token, wordiness};

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
pub(super) fn longest_run(s: &[u8]) -> usize {
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
