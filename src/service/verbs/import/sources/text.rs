//! What the readers share about Markdown memory files: a front matter's small YAML, a
//! body's headings and list items, a long body split into parts at those (never inside a
//! sentence), labels made from names and first words, and a file's time.

use std::collections::BTreeMap;
use std::path::Path;

/// A body longer than this is split at its headings, then at its list items and
/// paragraphs: one claim says one thing, and recall ranks a short claim better.
pub const LONG: usize = 4000;
/// The hard bound a part never passes (the store's text limit, with room to spare).
const MAX_PART: usize = 15 * 1024;
/// A label made from a text's first words stops at a word before this many characters
/// (a slug keeps 80).
pub const LABEL_CHARS: usize = 72;

/// A front matter's keys, nested keys joined with `.` (`metadata.type`); values unquoted,
/// lists joined with `, `.
pub type Front = BTreeMap<String, String>;

/// The front matter of `text` (between a first `---` line and the next), and the index
/// of the body's first line (0 when there is none). Only the YAML that memory tools
/// write is read: `key: value`, one level of nesting, and lists (flow or block).
pub fn front_matter(lines: &[&str]) -> (Front, usize) {
    let mut front = Front::new();
    if lines.first().map(|l| l.trim_end()) != Some("---") {
        return (front, 0);
    }
    let Some(end) = lines.iter().skip(1).position(|l| l.trim_end() == "---") else {
        return (front, 0);
    };
    let mut parent: Option<String> = None;
    let mut last_key: Option<String> = None;
    for line in &lines[1..=end] {
        let indented = line.starts_with([' ', '\t']);
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(item) = t.strip_prefix("- ") {
            if let Some(k) = &last_key {
                let v = front.entry(k.clone()).or_default();
                if !v.is_empty() {
                    v.push_str(", ");
                }
                v.push_str(unquote(item));
            }
            continue;
        }
        let Some((k, v)) = t.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        if !indented {
            parent = None;
        }
        let key = match (&parent, indented) {
            (Some(p), true) => format!("{p}.{k}"),
            _ => k.to_string(),
        };
        if v.is_empty() && !indented {
            parent = Some(k.to_string());
        }
        let v = match v.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            Some(list) => list
                .split(',')
                .map(|s| unquote(s.trim()))
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(", "),
            None => unquote(v).to_string(),
        };
        front.insert(key.clone(), v);
        last_key = Some(key);
    }
    (front, end + 2)
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

/// A key of the front matter, at the top level or under `metadata`.
pub fn key<'a>(front: &'a Front, k: &str) -> Option<&'a str> {
    front
        .get(k)
        .or_else(|| front.get(&format!("metadata.{k}")))
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

/// The first line from `from` on that is not blank, when it is a heading: its index and
/// title.
pub fn first_heading<'a>(lines: &[&'a str], from: usize) -> Option<(usize, &'a str)> {
    let k = from
        + lines
            .get(from..)?
            .iter()
            .position(|l| !l.trim().is_empty())?;
    heading(lines[k]).map(|(_, h)| (k, h))
}

/// A file's name without its extension (empty when it has none).
pub fn stem(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A heading line's level and title (`## Money` → 2, `Money`).
pub fn heading(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_end();
    let level = t.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&level).then_some(())?;
    let title = t[level..].strip_prefix(' ')?.trim();
    (!title.is_empty()).then_some((level, title))
}

/// A list item's text (`- x`, `* x`, `1. x`), when the line starts one.
pub fn item(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if let Some(rest) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
        return Some(rest.trim());
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    (digits > 0)
        .then(|| t[digits..].strip_prefix(". "))
        .flatten()
        .map(str::trim)
}

/// One part of a body: its label, its text, its lines (1-based, inclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub label: String,
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// `body` (its lines, the first numbered `first`) as one part, or, when longer than
/// [`LONG`], split at its headings, then at its list items and paragraphs; each part
/// labelled `label — heading` (or numbered), never cut inside a line unless a single line
/// passes the store's bound, and then at a sentence's end.
pub fn parts(label: &str, body: &[&str], first: usize) -> Vec<Part> {
    let lines: Vec<(usize, &str)> = body
        .iter()
        .enumerate()
        .map(|(i, l)| (first + i, *l))
        .collect();
    let Some(whole) = piece(label, &lines) else {
        return Vec::new();
    };
    if whole.text.len() <= LONG {
        return vec![whole];
    }
    let mut out = Vec::new();
    for (title, section) in split_at(&lines, |l| heading(l).is_some()) {
        let name = match title.and_then(heading) {
            Some((_, h)) if !same_words(h, label) => format!("{label} — {h}"),
            _ => label.to_string(),
        };
        out.extend(small(&name, &section));
    }
    number_repeats(&mut out);
    out
}

/// A section that is still long, in pieces of list items and paragraphs up to [`LONG`].
fn small(label: &str, lines: &[(usize, &str)]) -> Vec<Part> {
    let Some(whole) = piece(label, lines) else {
        return Vec::new();
    };
    if whole.text.len() <= LONG {
        return vec![whole];
    }
    let starts = |i: usize| {
        let l = lines[i].1;
        (item(l).is_some() && !l.starts_with([' ', '\t']))
            || (i > 0 && lines[i - 1].1.trim().is_empty() && !l.trim().is_empty())
    };
    let mut blocks: Vec<&[(usize, &str)]> = Vec::new();
    let mut from = 0;
    for i in 1..lines.len() {
        if starts(i) {
            blocks.push(&lines[from..i]);
            from = i;
        }
    }
    blocks.push(&lines[from..]);
    let mut out = Vec::new();
    let mut run: Vec<(usize, &str)> = Vec::new();
    let mut len = 0;
    for b in blocks {
        let blen: usize = b.iter().map(|(_, l)| l.len() + 1).sum();
        if !run.is_empty() && len + blen > LONG {
            out.extend(piece(label, &run));
            run.clear();
            len = 0;
        }
        run.extend_from_slice(b);
        len += blen;
    }
    out.extend(piece(label, &run));
    out.into_iter().flat_map(sentences).collect()
}

/// A part past the store's bound (one very long line), cut at sentence ends.
fn sentences(p: Part) -> Vec<Part> {
    if p.text.len() <= MAX_PART {
        return vec![p];
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    for s in p.text.split_inclusive(". ") {
        if !cur.is_empty() && cur.len() + s.len() > LONG {
            out.push(std::mem::take(&mut cur));
        }
        cur.push_str(s);
    }
    out.push(cur);
    out.into_iter()
        .map(|text| Part {
            text: text.trim().to_string(),
            ..p.clone()
        })
        .collect()
}

/// A run of numbered lines and the line that opened it (none for the first run).
type Run<'a> = (Option<&'a str>, Vec<(usize, &'a str)>);

/// Runs of lines, each starting at a line `is_head` picks (with that line), the first run
/// starting at the top.
fn split_at<'a>(lines: &[(usize, &'a str)], is_head: impl Fn(&str) -> bool) -> Vec<Run<'a>> {
    let mut out: Vec<Run<'a>> = vec![(None, Vec::new())];
    for &(n, l) in lines {
        if is_head(l) {
            out.push((Some(l), vec![(n, l)]));
        } else {
            out.last_mut().expect("a run").1.push((n, l));
        }
    }
    out
}

/// The lines as one part, blank lines at either end left out; `None` when all are blank.
fn piece(label: &str, lines: &[(usize, &str)]) -> Option<Part> {
    let a = lines.iter().position(|(_, l)| !l.trim().is_empty())?;
    let b = lines.iter().rposition(|(_, l)| !l.trim().is_empty())?;
    let text = lines[a..=b]
        .iter()
        .map(|(_, l)| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    Some(Part {
        label: label.to_string(),
        text,
        start: lines[a].0,
        end: lines[b].0,
    })
}

/// Parts sharing a label are numbered: `label (2)`, `label (3)`.
fn number_repeats(parts: &mut [Part]) {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for p in parts.iter_mut() {
        let n = seen.entry(p.label.clone()).or_default();
        *n += 1;
        if *n > 1 {
            p.label = format!("{} ({n})", p.label);
        }
    }
}

/// Two titles that say the same words (a heading that only repeats a label).
pub fn same_words(a: &str, b: &str) -> bool {
    brains::slugify(a) == brains::slugify(b)
}

/// A name written as a slug (`billing-integer-cents`, `user_role`) as a phrase
/// (`Billing integer cents`); a name that is a phrase already is kept.
pub fn phrase(name: &str) -> String {
    let name = name.trim();
    if name.contains(' ') {
        return name.to_string();
    }
    let words = name.replace(['-', '_'], " ");
    let mut c = words.trim().chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The first words of `text` as a label: up to [`LABEL_CHARS`], cut after a whole word,
/// Markdown emphasis and trailing punctuation left out.
pub fn first_words(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").replace("**", "");
    let line = line.trim();
    let mut out = String::new();
    for w in line.split_whitespace() {
        if !out.is_empty() && out.chars().count() + 1 + w.chars().count() > LABEL_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.is_empty() {
        out = line.chars().take(LABEL_CHARS).collect();
    }
    out.trim_end_matches([',', ';', ':', '.', '-', '—', '(', '['])
        .trim()
        .to_string()
}

/// A file's modification time, ms since the epoch.
pub fn mtime_ms(path: &Path) -> Option<i64> {
    let t = std::fs::metadata(path).ok()?.modified().ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_millis()).ok()
}

/// An ISO 8601 date or date-time (or ms since the epoch) as ms since the epoch.
pub fn time(v: &str) -> Option<i64> {
    brains::legacy::parse_created(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_reads_nested_keys_lists_and_quotes() {
        let text = "---\nname: release-process\ndescription: \"How: shop\"\nmetadata: \n  type: feedback\n  modified: 2026-07-21T16:20:44.907Z\ntags:\n- shop\n- billing\nkw: [a, 'b']\n---\n\nbody\n";
        let lines: Vec<&str> = text.lines().collect();
        let (f, body) = front_matter(&lines);
        assert_eq!(key(&f, "type"), Some("feedback"));
        assert_eq!(key(&f, "description"), Some("How: shop"));
        assert_eq!(key(&f, "modified"), Some("2026-07-21T16:20:44.907Z"));
        assert_eq!(key(&f, "tags"), Some("shop, billing"));
        assert_eq!(key(&f, "kw"), Some("a, b"));
        assert_eq!(lines[body..].join("\n").trim(), "body");
        let (f, body) = front_matter(&["# no front matter"]);
        assert!(f.is_empty());
        assert_eq!(body, 0);
    }

    #[test]
    fn a_short_body_is_one_part_with_its_lines() {
        let body = ["", "first line", "second line", ""];
        let p = parts("Label", &body, 10);
        assert_eq!(
            p,
            vec![Part {
                label: "Label".into(),
                text: "first line\nsecond line".into(),
                start: 11,
                end: 12
            }]
        );
        assert!(parts("Label", &["", "  "], 1).is_empty());
    }

    /// A long body is split at its headings, then at list items, never inside a line:
    /// every line of the body is in exactly one part, and no part passes the bound.
    #[test]
    fn a_long_body_splits_at_headings_then_items_never_mid_sentence() {
        let sentence = "This sentence stays whole because parts end only between lines.";
        let mut body = vec!["Intro line.".to_string(), String::new()];
        for s in 0..3 {
            body.push(format!("## Section {s}"));
            for i in 0..60 {
                body.push(format!("- item {i} of section {s}: {sentence}"));
            }
        }
        let refs: Vec<&str> = body.iter().map(String::as_str).collect();
        let p = parts("Notes", &refs, 1);
        assert!(p.len() > 3, "{}", p.len());
        assert!(p.iter().all(|x| x.text.len() <= LONG), "bounded");
        assert!(p
            .iter()
            .all(|x| x.text.lines().all(|l| l.is_empty() || refs.contains(&l))));
        let lines: usize = p.iter().map(|x| x.text.lines().count()).sum();
        assert_eq!(lines, refs.iter().filter(|l| !l.is_empty()).count());
        assert_eq!(p[0].label, "Notes");
        assert!(
            p[1].label.starts_with("Notes — Section 0"),
            "{}",
            p[1].label
        );
        let labels: std::collections::BTreeSet<&str> = p.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(labels.len(), p.len(), "labels are distinct");
    }

    #[test]
    fn labels_from_names_and_first_words() {
        assert_eq!(phrase("billing-integer-cents"), "Billing integer cents");
        assert_eq!(phrase("user_role"), "User role");
        assert_eq!(
            phrase("sqlx migrations are append-only"),
            "sqlx migrations are append-only"
        );
        let long = "Applied migrations are never edited; add a new one with `sqlx migrate add -r <name>` and more words here";
        let l = first_words(long);
        assert!(l.len() <= LABEL_CHARS && long.starts_with(&l), "{l}");
        assert_eq!(first_words("**Why:** because"), "Why: because");
    }
}
