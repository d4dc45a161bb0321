//! Human output: styles that only reach a terminal, text fitted to the width (wrapped or
//! cut with an ellipsis, never breaking the layout), plurals, dates, and the owner's
//! errors and receptions. Each submodule prints one family of answers.

pub mod admin;
pub mod doctor;
pub mod import_from;
pub mod mailbox;
pub mod rows;
pub mod tending;
pub mod transfer;
pub mod writes;

use std::io::Write;

use anstyle::{AnsiColor, Style};
use serde_json::Value;

use crate::service::route::Reception;
use unicode_width::UnicodeWidthChar;

pub const BOLD: Style = Style::new().bold();
pub const DIM: Style = Style::new().dimmed();
pub const GREEN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
pub const YELLOW: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
pub const RED: Style = Style::new()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)))
    .bold();
pub const CYAN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));

/// Print a line on stdout; ANSI styles are stripped unless stdout is a terminal (and
/// `NO_COLOR` is unset). A closed pipe (`medulla seek x | head`) ends the process quietly.
macro_rules! out {
    () => { $crate::cli::print::emit(false, format_args!("")) };
    ($($t:tt)*) => { $crate::cli::print::emit(false, format_args!($($t)*)) };
}
/// As [`out!`], on stderr.
macro_rules! note {
    ($($t:tt)*) => { $crate::cli::print::emit(true, format_args!($($t)*)) };
}
pub(crate) use {note, out};

pub fn emit(to_stderr: bool, args: std::fmt::Arguments<'_>) {
    let r = if to_stderr {
        writeln!(anstream::stderr(), "{args}")
    } else {
        writeln!(anstream::stdout(), "{args}")
    };
    if let Err(e) = r {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

/// `text` in `style` (the codes are stripped on the way out when not on a terminal).
pub fn paint(style: Style, text: impl std::fmt::Display) -> String {
    format!("{style}{text}{style:#}")
}

/// The width human output is laid out for: `$COLUMNS` when set, else 80.
pub fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .filter(|&c| c >= 40)
        .unwrap_or(80)
}

/// Control characters (an escape sequence in a letter, a tab) must not reach the
/// terminal or break a column: each becomes a space.
fn clean(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars().map(|c| if c.is_control() { ' ' } else { c })
}

fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// The display width of `s`.
pub fn text_width(s: &str) -> usize {
    clean(s).map(char_width).sum()
}

/// `s` on one line in at most `max` columns, ending in `…` when cut.
pub fn fit(s: &str, max: usize) -> String {
    let s: String = clean(s).collect();
    if text_width(&s) <= max {
        return s;
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        if w + char_width(c) + 1 > max {
            break;
        }
        w += char_width(c);
        out.push(c);
    }
    out.push('…');
    out
}

/// A path in at most `max` columns, keeping its tail (`…/code/myproject`).
pub fn fit_left(s: &str, max: usize) -> String {
    let s: String = clean(s).collect();
    if text_width(&s) <= max {
        return s;
    }
    let mut tail: Vec<char> = Vec::new();
    let mut w = 1;
    for c in s.chars().rev() {
        if w + char_width(c) > max {
            break;
        }
        w += char_width(c);
        tail.push(c);
    }
    std::iter::once('…').chain(tail.into_iter().rev()).collect()
}

/// Word-wrap `s` (its own newlines kept) into lines of at most `max` columns, at most
/// `max_lines` of them, the last ending in `…` when text was left out.
pub fn wrap(s: &str, max: usize, max_lines: usize) -> Vec<String> {
    let max = max.max(10);
    let mut lines: Vec<String> = Vec::new();
    let mut truncated = false;
    'para: for para in s.split('\n') {
        let mut line = String::new();
        let mut w = 0;
        for word in para.split(' ').filter(|w| !w.is_empty()) {
            let word: String = clean(word).collect();
            let ww = text_width(&word);
            if w > 0 && w + 1 + ww > max {
                lines.push(std::mem::take(&mut line));
                w = 0;
                if lines.len() == max_lines {
                    truncated = true;
                    break 'para;
                }
            }
            if ww > max {
                // A word longer than the line (a path, a hash) is cut, not overflowed.
                let cut = fit(&word, max.saturating_sub(w + usize::from(w > 0)).max(2));
                if w > 0 {
                    line.push(' ');
                }
                w += text_width(&cut) + usize::from(w > 0);
                line.push_str(&cut);
                continue;
            }
            if w > 0 {
                line.push(' ');
                w += 1;
            }
            line.push_str(&word);
            w += ww;
        }
        if lines.len() == max_lines {
            truncated = true;
            break;
        }
        lines.push(line);
    }
    while lines.len() > 1 && lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    if truncated {
        if let Some(last) = lines.last_mut() {
            let cut = fit(last, max.saturating_sub(1));
            *last = if cut.ends_with('…') {
                cut
            } else {
                format!("{cut}…")
            };
        }
    }
    lines
}

/// A sentence on stdout, wrapped to the width (continuation lines indented by two), its
/// first word in `style` when one is given.
pub fn say(lead: Option<(Style, &str)>, text: &str) {
    let full = match lead {
        Some((_, word)) => format!("{word} {text}"),
        None => text.to_string(),
    };
    for (i, line) in wrap(&full, width().saturating_sub(2), usize::MAX)
        .iter()
        .enumerate()
    {
        match (i, lead) {
            (0, Some((style, word))) => {
                let rest = line.strip_prefix(word).unwrap_or(line);
                out!("{}{rest}", paint(style, word));
            }
            (0, None) => out!("{line}"),
            _ => out!("  {line}"),
        }
    }
}

/// `1 version`, `2 versions`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A JSON string field, or `default`.
pub fn s<'a>(v: &'a Value, default: &'a str) -> &'a str {
    v.as_str().unwrap_or(default)
}

/// A value as the owner spells it on the wire (`all-brains`, `superseded`).
pub fn spelled<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// `2026-07-04` for milliseconds since the epoch.
pub fn date(ms: i64) -> String {
    crate::service::rows::date(ms)
}

/// `2026-07-04 10:00 UTC` for milliseconds since the epoch.
pub fn datetime(ms: i64) -> String {
    let secs = ms.div_euclid(1000).rem_euclid(86_400);
    format!(
        "{} {:02}:{:02} UTC",
        date(ms),
        secs / 3600,
        (secs % 3600) / 60
    )
}

/// The owner's refusal on stderr: its message (which names the fix) and its code.
pub fn error(body: &Value) {
    let err = &body["error"];
    let message = s(&err["message"], "the owner refused");
    let code = s(&err["code"], "error");
    let lines = wrap(message, width().saturating_sub(8), 12);
    for (i, line) in lines.iter().enumerate() {
        if i == 0 {
            note!("{} {line}", paint(RED, "error:"));
        } else {
            note!("       {line}");
        }
    }
    note!("       {}", paint(DIM, format!("[{code}]")));
}

/// A reception block (the request landed somewhere other than the caller root's brain,
/// or nowhere) on stderr, with the fix the owner offers.
pub fn reception(r: Option<&Reception>) {
    let Some(r) = r else {
        return;
    };
    let w = width().saturating_sub(8);
    for (i, line) in wrap(&r.message, w, 6).iter().enumerate() {
        let head = if i == 0 { "note:" } else { "" };
        note!("{} {line}", paint(YELLOW, format!("{head:<5}")));
    }
    for o in &r.options {
        for (i, line) in wrap(o, w, 4).iter().enumerate() {
            let head = if i == 0 { "fix:" } else { "" };
            note!("{} {line}", paint(YELLOW, format!("{head:<5}")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitted_text_never_passes_its_width() {
        assert_eq!(fit("short", 10), "short");
        let cut = fit("a rather long sentence that goes on", 12);
        assert_eq!(text_width(&cut), 12);
        assert!(cut.ends_with('…'));
        assert_eq!(fit_left("/home/you/code/myproject", 12), "…e/myproject");
        assert_eq!(fit("tab\tand\u{1b}[31mescape", 40), "tab and [31mescape");
    }

    #[test]
    fn wrapping_keeps_lines_and_marks_what_was_left_out() {
        let text = "one two three four five six seven eight nine ten";
        let lines = wrap(text, 14, 2);
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|l| text_width(l) <= 14), "{lines:?}");
        assert!(lines[1].ends_with('…'));
        assert_eq!(wrap("a\nb", 10, 5), vec!["a", "b"]);
        let long = wrap(&"x".repeat(100), 20, 3);
        assert!(long.iter().all(|l| text_width(l) <= 20), "{long:?}");
    }

    #[test]
    fn plurals_and_dates() {
        assert_eq!(plural(1, "version", "versions"), "1 version");
        assert_eq!(plural(2, "version", "versions"), "2 versions");
        assert_eq!(plural(0, "brain", "brains"), "0 brains");
        assert_eq!(datetime(1_783_159_200_000), "2026-07-04 10:00 UTC");
    }
}
