//! Looking through base64: does it decode to readable text, to `user:password`, or
//! to a placeholder?

use super::is_placeholder;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
