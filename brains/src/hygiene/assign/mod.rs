//! A value assigned to a secret-ish name. The name decides whether the value matters
//! (`db_password`, `signing_secret`, `GITHUB_TOKEN`, `apiKey` do; `password_min_length`,
//! `token_url`, `secretName`, `max_tokens` do not); the syntax decides how literal the
//! value is; the value itself decides the rest.
//!
//! Syntaxes: env files and shell (`KEY=value`, `export KEY=…`), YAML and INI
//! (`key: value`, `key = value`), JSON and TOML (`"key": "value"`), code (`key := "v"`,
//! `key => 'v'`, `key == "v"`), XML (`<password>v</password>`, `<add key="Password"
//! value="v"/>`), CLI flags (`--password v`, `-p'v'`, `curl -u user:pass`), prose
//! (`the password is v`, `changed the root password to v`), `.netrc` and `.pgpass`
//! lines.
//!
//! Layout: `syntaxes` reads the fixed syntaxes (`.netrc`, `.pgpass`, CLI flags, SQL,
//! key/value pairs); `names` decides whether an identifier is secret-ish, with its word
//! lists in `words`; `value` judges a value by its syntax and its name's strength. This
//! file expands keyword hits to names and parses forward to their values.

mod names;
mod syntaxes;
mod value;
mod words;

use super::judge::{is_uuid, Lower};
use super::{line_end_near, line_start_near, redact, FindingKind as K, Sink};
use names::{classify, Name};
use value::{is_identifier, value_ok, Syntax};

// Roots of secret-ish names, searched in the lowercased text.
super::re!(
    KEYWORD,
    r"pass|pwd|pw\b|secret|token|key|credential|creds|auth"
);

pub(crate) fn scan(sink: &mut Sink<'_>) {
    syntaxes::fixed_syntaxes(sink);
    named_values(sink);
}

/// Identifier bytes, for expanding a keyword hit to its whole name.
fn ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Every keyword hit expanded to its name, then parsed forward for a separator and a
/// value, then judged.
fn named_values(sink: &mut Sink<'_>) {
    let text = sink.text;
    let bytes = text.as_bytes();
    let mut hits: Vec<(K, usize, usize, String)> = Vec::new();
    let mut done_until = 0;
    for m in KEYWORD.find_iter(&sink.lower) {
        if m.start() < done_until {
            continue;
        }
        // Expand to the identifier around the keyword (bounded).
        let mut s = m.start();
        while s > 0 && m.start() - s < 64 && ident_byte(bytes[s - 1]) {
            s -= 1;
        }
        let mut e = m.end();
        while e < bytes.len() && e - m.end() < 64 && ident_byte(bytes[e]) {
            e += 1;
        }
        done_until = e;
        // A trailing dot or dash ends a sentence or a flag, not a name.
        while e > m.end() && matches!(bytes[e - 1], b'.' | b'-') {
            e -= 1;
        }
        let mut ks = s;
        while ks < m.start() && matches!(bytes[ks], b'.' | b'-') {
            ks += 1;
        }
        let cli = s + 1 < bytes.len() && bytes[s] == b'-' && (ks > s);
        let ident = &text[ks..e];
        // `${DB_PASSWORD}` and `$(…)` are references, not names being assigned.
        if s >= 2 && &bytes[s - 2..s] == b"${" {
            continue;
        }
        // A badge URL's `?token=` is a public graph token (`…/badge.svg?token=…`).
        if s >= 1 && matches!(bytes[s - 1], b'?' | b'&') && in_badge_url(text, s) {
            continue;
        }
        let mut name = classify(ident);
        // `API key is …`, `access token: …`: the qualifier is the word before.
        if name.is_none()
            && (ident.eq_ignore_ascii_case("key") || ident.eq_ignore_ascii_case("keys"))
        {
            name = previous_word(text, s).and_then(|p| classify(&format!("{p}_{ident}")));
        }
        let Some(mut name) = name else {
            continue;
        };
        if name.secret_key && !name.aws_secret {
            name.aws_secret = aws_context(&sink.lower, s);
        }
        if let Some(hit) = parse_assignment(text, s, e, ident, cli, name) {
            done_until = done_until.max(hit.2);
            hits.push(hit);
        }
    }
    for (kind, s, e, r) in hits {
        sink.push(kind, s, e, r);
    }
}

/// Is the query parameter at `at` part of a badge image URL?
fn in_badge_url(text: &str, at: usize) -> bool {
    let floor = line_start_near(text, at, 512);
    let start = text.as_bytes()[floor..at]
        .iter()
        .rposition(|b| b.is_ascii_whitespace() || matches!(b, b'(' | b'"' | b'\'' | b'<'))
        .map_or(floor, |i| floor + i + 1);
    let url = text[start..at].to_ascii_lowercase();
    url.contains("://") && (url.contains("badge") || url.contains(".svg"))
}

/// Does a quote open right before the name (`"password"`)?
fn name_quoted(text: &str, name_start: usize) -> bool {
    name_start > 0 && matches!(text.as_bytes()[name_start - 1], b'"' | b'\'')
}

/// The word before a name, across spaces on the same line.
fn previous_word(text: &str, name_start: usize) -> Option<&str> {
    let before = text[..name_start].trim_end_matches([' ', '\t']);
    if before.len() == name_start {
        return None;
    }
    let start = before
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let w = &before[start..];
    (!w.is_empty()).then_some(w)
}

/// AWS named within a few lines of `at` (for a bare `secret_key` of AWS's shape).
fn aws_context(lower: &str, at: usize) -> bool {
    let mut lo = at.saturating_sub(400);
    while !lower.is_char_boundary(lo) {
        lo += 1;
    }
    let mut hi = (at + 400).min(lower.len());
    while !lower.is_char_boundary(hi) {
        hi -= 1;
    }
    let w = &lower[lo..hi];
    w.contains("aws") || w.contains("akia") || w.contains("asia")
}

/// From the end of a name, find a separator and a value; judge it.
fn parse_assignment(
    text: &str,
    name_start: usize,
    name_end: usize,
    ident: &str,
    cli: bool,
    name: Name,
) -> Option<(K, usize, usize, String)> {
    let bytes = text.as_bytes();
    let line_end = line_end_near(text, name_end, 2048);
    let line_start = line_start_near(text, name_start, 512);
    let rest = &text[name_end..line_end];
    let rb = rest.as_bytes();
    let mut i = 0;
    // XML element: <password>value</password>
    let xml_open = name_start > 0 && bytes[name_start - 1] == b'<' && rb.first() == Some(&b'>');
    let (syntax, vstart, vend) = if xml_open {
        let close = format!("</{ident}>");
        let end = rest.find(&close)?;
        (Syntax::Literal, 1, end)
    } else {
        // Closing quotes/brackets of a key: `"password":`, `['token'] =`.
        let mut closers = 0;
        while i < rb.len() && closers < 3 && matches!(rb[i], b'"' | b'\'' | b']' | b' ') {
            if rb[i] != b' ' {
                closers += 1;
            }
            i += 1;
        }
        while i < rb.len() && matches!(rb[i], b' ' | b'\t') {
            i += 1;
        }
        let sep_start = i;
        let mut syntax;
        let tail = &rest[i..];
        if tail.starts_with(":=")
            || tail.starts_with("=>")
            || tail.starts_with("?=")
            || tail.starts_with("+=")
        {
            i += 2;
            syntax = Syntax::Bare;
        } else if tail.starts_with("===") {
            i += 3;
            syntax = Syntax::Bare;
        } else if tail.starts_with("==") {
            i += 2;
            syntax = Syntax::Bare;
        } else if tail.starts_with('=') {
            i += 1;
            syntax = Syntax::Bare;
            // An env-file or properties line: `KEY=value` opening its line.
            let lead = text[line_start..name_start].trim();
            let lead_ok = lead.is_empty()
                || lead == "export"
                || lead == "set"
                || lead == "ENV"
                || lead == "ARG"
                || lead.ends_with('&')
                || lead.ends_with('?')
                || lead.ends_with(';');
            if lead_ok && sep_start == 0 && rb.get(1).is_some_and(|b| !b.is_ascii_whitespace()) {
                syntax = Syntax::Literal;
            }
        } else if tail.starts_with(':') && !tail.starts_with("::") {
            i += 1;
            // `key: value` has a space or a quote after the colon (or a quoted key before
            // it); `arn:aws:…:secret:name`, `host:port`, `scheme://` do not.
            let next = rb.get(i).copied();
            if closers == 0 && !matches!(next, Some(b' ' | b'\t' | b'"' | b'\'' | b'`') | None) {
                return None;
            }
            syntax = Syntax::Bare;
        } else if tail.starts_with(',') && closers > 0 && name_quoted(text, name_start) {
            // `setProperty("…password", "v")`, `env.set('TOKEN', 'v')`
            i += 1;
            syntax = Syntax::Bare;
        } else if tail.starts_with("value") && closers > 0 {
            // <add key="Password" value="…"> handled by ATTR_PAIR.
            return None;
        } else if cli && sep_start > 0 {
            // `--password value`
            syntax = Syntax::Bare;
        } else {
            // Prose: `is`, `was`, `is now`, `to`, optionally after `for/of/on … `.
            let (consumed, ok) = prose_separator(tail);
            if !ok || sep_start == 0 {
                return None;
            }
            i += consumed;
            syntax = Syntax::Prose;
        }
        while i < rb.len() && matches!(rb[i], b' ' | b'\t') {
            i += 1;
        }
        if i >= rb.len() {
            return None;
        }
        // A value prefix: b"…", r'…', f"…", @"…".
        if matches!(rb[i], b'b' | b'r' | b'f' | b'u' | b'@')
            && rb.get(i + 1).is_some_and(|q| matches!(q, b'"' | b'\''))
        {
            i += 1;
        }
        match rb[i] {
            q @ (b'"' | b'\'' | b'`') => {
                let close = rest[i + 1..].find(q as char)?;
                let (vs, ve) = (i + 1, i + 1 + close);
                let s = if syntax == Syntax::Prose {
                    Syntax::Prose
                } else {
                    Syntax::Literal
                };
                (s, vs, ve)
            }
            _ => {
                let vs = i;
                let mut ve = i;
                let opens_angle = rb[vs] == b'<';
                while ve < rb.len()
                    && !rb[ve].is_ascii_whitespace()
                    && !matches!(rb[ve], b'"' | b'\'' | b'`' | b',' | b';')
                    && (rb[ve] != b'<' || opens_angle)
                {
                    ve += 1;
                }
                // Trailing punctuation of a sentence or a structure.
                while ve > vs
                    && matches!(rb[ve - 1], b'.' | b')' | b']' | b'}' | b':' | b'!' | b'?')
                {
                    if syntax != Syntax::Prose && matches!(rb[ve - 1], b'!' | b'?') {
                        break;
                    }
                    ve -= 1;
                }
                (syntax, vs, ve)
            }
        }
    };
    let raw_value = &rest[vstart..vend];
    let value = raw_value.trim();
    let lead_ws = raw_value.len() - raw_value.trim_start().len();
    let abs_start = name_end + vstart + lead_ws;
    let abs_end = abs_start + value.len();
    if value.is_empty() {
        return None;
    }
    // Value equal to its own name (`password=password`, `TOKEN=$TOKEN` handled as $).
    if value.eq_ignore_ascii_case(ident) {
        return None;
    }
    let strength = name.strength;
    if !value_ok(value, syntax, strength) {
        return None;
    }
    // `field: Type,` / `Token: AsChar + Clone` / `x: Colon2>`: an identifier followed by
    // code punctuation is a type or a variable, not a value.
    if syntax == Syntax::Bare && is_identifier(value) {
        let after = text[abs_end..line_end].trim_start();
        if after.bytes().next().is_some_and(|b| {
            matches!(
                b,
                b',' | b';' | b'>' | b')' | b'{' | b'=' | b'+' | b'<' | b'('
            )
        }) {
            return None;
        }
    }
    let kind = if name.aws_secret
        && value.len() == 40
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+')
    {
        K::AwsSecretKey
    } else if name.aws_session
        && value.len() >= 100
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'+' | b'='))
    {
        K::AwsSessionToken
    } else if name.heroku && is_uuid(value) {
        K::HerokuKey
    } else {
        K::PasswordAssignment
    };
    let shown_name: String = ident.chars().take(32).collect();
    Some((
        kind,
        abs_start,
        abs_end,
        format!("{shown_name}={}", redact(value)),
    ))
}

/// Prose separators after a name: `is`, `was`, `is now`, `to`, `are`, possibly after a
/// short `for <who>` / `on <where>` phrase. Returns bytes consumed and success.
fn prose_separator(tail: &str) -> (usize, bool) {
    let mut consumed = 0;
    let mut words_skipped = 0;
    let mut in_phrase = false;
    let mut in_clause = false;
    let mut s = tail;
    loop {
        let trimmed = s.trim_start_matches([' ', '\t']);
        consumed += s.len() - trimmed.len();
        s = trimmed;
        // A word is a run of non-space bytes (ends on ASCII whitespace: a char boundary).
        let run_len = s.bytes().take_while(|b| !b.is_ascii_whitespace()).count();
        if run_len == 0 {
            return (consumed, false);
        }
        let run = &s[..run_len];
        match Lower::new(run).as_str() {
            "is" | "was" | "are" | "were" if words_skipped == 0 || in_phrase => {
                consumed += run_len;
                // `is now`, `is set to`, `was changed to`
                let rest = s[run_len..].trim_start_matches([' ', '\t']);
                let extra_ws = s[run_len..].len() - rest.len();
                for follow in ["now ", "set to ", "changed to ", "still "] {
                    if rest.len() >= follow.len()
                        && rest.as_bytes()[..follow.len()].eq_ignore_ascii_case(follow.as_bytes())
                    {
                        return (consumed + extra_ws + follow.len() - 1, true);
                    }
                }
                return (consumed, true);
            }
            "to" if words_skipped == 0 => return (consumed + run_len, true),
            "for" | "of" | "on" | "in" | "at" | "from" if words_skipped == 0 => {
                in_phrase = true;
            }
            // `password for bob@staging: …`, `API key we use in staging: …`: a short
            // phrase or clause closed by a colon.
            _ if (in_phrase || in_clause)
                && words_skipped < 5
                && run.ends_with(':')
                && run.len() > 1 =>
            {
                return (consumed + run_len, true);
            }
            "we" | "i" | "you" | "they" | "that" | "which" | "our" | "my" | "your" | "used"
                if words_skipped == 0 =>
            {
                in_clause = true;
            }
            _ if (in_phrase || in_clause)
                && words_skipped < 5
                && run
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'@' | b'-' | b'.')) => {}
            _ => return (consumed, false),
        }
        consumed += run_len;
        s = &s[run_len..];
        words_skipped += 1;
    }
}
