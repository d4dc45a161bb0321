//! Values of a public format: hex digests, UUIDs, paths on disk, versions and dates.

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
