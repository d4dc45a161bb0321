//! Codex's memories: one user-wide folder (`$CODEX_HOME/memories/`). `MEMORY.md` is the
//! consolidated handbook, in blocks `# Task Group: <title>` whose `applies_to: cwd=<path>`
//! says the project; each bullet of a block's `## User preferences`, `## Reusable
//! knowledge` and `## Failures and how to do differently` is one entry of that project,
//! dated by its tasks' `updated_at=`. `memory_summary.md`'s `## User Profile`, `## User
//! preferences` and `## General Tips` are the person's. `raw_memories.md` (phase one's
//! notes, per thread with its `cwd:`) is read only when there is no `MEMORY.md` yet;
//! rollout summaries, skills and extensions are evidence and instructions, not memory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::text;
use super::{read_text, Entry, Read, Scope};

/// `place`: Codex's home (holding `memories/`) or the `memories/` folder itself.
pub(super) fn read(place: &Path, out: &mut Read) {
    let dir = if place.join("memories").is_dir() {
        place.join("memories")
    } else {
        place.to_path_buf()
    };
    let handbook = dir.join("MEMORY.md");
    let file = |name: &str, out: &mut Read| -> Option<(PathBuf, String)> {
        let p = dir.join(name);
        if !p.is_file() {
            return None;
        }
        match read_text(&p) {
            Ok(t) => {
                out.files += 1;
                Some((p, t))
            }
            Err(why) => {
                out.skip(&p, why);
                None
            }
        }
    };
    if let Some((p, t)) = file("MEMORY.md", out) {
        read_handbook(&p, &t, out);
    }
    if let Some((p, t)) = file("memory_summary.md", out) {
        read_summary(&p, &t, out);
    }
    if handbook.is_file() {
        if dir.join("raw_memories.md").is_file() {
            out.skip(
                &dir.join("raw_memories.md"),
                "phase one's notes, already consolidated into MEMORY.md",
            );
        }
    } else if let Some((p, t)) = file("raw_memories.md", out) {
        read_raw(&p, &t, out);
    }
}

/// The sections whose bullets are memory.
const KEPT: [&str; 3] = [
    "User preferences",
    "Reusable knowledge",
    "Failures and how to do differently",
];

/// A bullet without its `[Task n]` references, and the task numbers it names.
fn strip_refs(bullet: &str) -> (String, Vec<String>) {
    let mut s = bullet.trim_end();
    let mut tasks = Vec::new();
    while let Some(open) = s.rfind("[Task ") {
        let tail = &s[open..];
        let Some(n) = tail
            .strip_prefix("[Task ")
            .and_then(|t| t.strip_suffix(']'))
        else {
            break;
        };
        tasks.push(n.trim().to_string());
        s = s[..open].trim_end();
    }
    (s.to_string(), tasks)
}

/// A `key=value` of a rollout annotation (`updated_at=…`, `thread_id=…`).
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(&format!("{key}="))? + key.len() + 1;
    let v = &line[at..];
    let end = v.find([',', ')', ';', ' ']).unwrap_or(v.len());
    Some(v[..end].trim()).filter(|v| !v.is_empty())
}

/// Bullets of the kept sections, with their lines (1-based); an indented line continues
/// the bullet before it.
fn bullets<'a>(lines: &[&'a str], from: usize, to: usize) -> Vec<(usize, usize, String, &'a str)> {
    let mut out: Vec<(usize, usize, String, &str)> = Vec::new();
    let mut section: Option<&str> = None;
    for (i, l) in lines.iter().enumerate().take(to).skip(from) {
        if let Some((_, h)) = text::heading(l) {
            section = KEPT.iter().copied().find(|k| h.eq_ignore_ascii_case(k));
            continue;
        }
        let Some(sec) = section else { continue };
        if l.starts_with([' ', '\t']) && !l.trim().is_empty() {
            if let Some(last) = out.last_mut() {
                last.2.push(' ');
                last.2.push_str(l.trim());
                last.1 = i + 1;
            }
            continue;
        }
        if let Some(b) = text::item(l) {
            out.push((i + 1, i + 1, b.to_string(), sec));
        }
    }
    out
}

/// `MEMORY.md`: each task group's bullets, the group's project from `applies_to`.
fn read_handbook(file: &Path, t: &str, out: &mut Read) {
    let lines: Vec<&str> = t.lines().collect();
    let starts: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("# Task Group:"))
        .map(|(i, _)| i)
        .collect();
    for (k, &from) in starts.iter().enumerate() {
        let to = starts.get(k + 1).copied().unwrap_or(lines.len());
        let block = &lines[from..to];
        let cwd = block
            .iter()
            .find_map(|l| l.trim().strip_prefix("applies_to:"))
            .and_then(|a| field(a, "cwd"))
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        let title = lines[from]["# Task Group:".len()..].trim();
        let scope = match cwd {
            Some(p) => Scope::Project(p),
            None => Scope::Unknown(format!(
                "the task group {title:?} names no working directory"
            )),
        };
        // Each task's rollout: its date and thread.
        let mut tasks: HashMap<String, (Option<i64>, Option<String>)> = HashMap::new();
        let mut task: Option<String> = None;
        for l in block {
            if let Some(rest) = l.strip_prefix("## Task ") {
                task = rest.split(':').next().map(|n| n.trim().to_string());
            }
            if let (Some(n), true) = (&task, l.contains("rollout_summaries/")) {
                let e = tasks.entry(n.clone()).or_default();
                e.0 = field(l, "updated_at").and_then(text::time).max(e.0);
                e.1 = field(l, "thread_id").map(str::to_string).or(e.1.take());
            }
        }
        let newest = tasks.values().filter_map(|t| t.0).max();
        for (start, end, bullet, _) in bullets(&lines, from, to) {
            let (body, refs) = strip_refs(&bullet);
            let named: Vec<&(Option<i64>, Option<String>)> =
                refs.iter().filter_map(|n| tasks.get(n)).collect();
            out.entries.push(Entry {
                scope: scope.clone(),
                label: text::first_words(&body),
                text: body,
                file: file.to_path_buf(),
                lines: (start, end),
                refs: named
                    .iter()
                    .filter_map(|t| t.1.as_ref())
                    .map(|id| format!("codex-thread:{id}"))
                    .collect(),
                created: named
                    .iter()
                    .filter_map(|t| t.0)
                    .max()
                    .or(newest)
                    .or_else(|| text::mtime_ms(file)),
            });
        }
    }
}

/// `memory_summary.md`: the profile (one entry) and the preference and tip bullets, all
/// the person's; the index of what is in memory is skipped.
fn read_summary(file: &Path, t: &str, out: &mut Read) {
    let lines: Vec<&str> = t.lines().collect();
    let created = text::mtime_ms(file);
    let mut section: Option<String> = None;
    let mut profile: Vec<(usize, &str)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some((2, h)) = text::heading(l) {
            section = Some(h.to_string());
            continue;
        }
        match section.as_deref() {
            Some("User Profile") => profile.push((i + 1, *l)),
            Some("User preferences") | Some("General Tips") => {
                if let Some(b) = text::item(l) {
                    out.entries.push(Entry {
                        scope: Scope::Person,
                        label: text::first_words(b),
                        text: b.to_string(),
                        file: file.to_path_buf(),
                        lines: (i + 1, i + 1),
                        refs: Vec::new(),
                        created,
                    });
                }
            }
            _ => {}
        }
    }
    let body: Vec<&str> = profile.iter().map(|(_, l)| *l).collect();
    if let Some(&(first, _)) = profile.first() {
        let parts = text::parts("User profile", &body, first);
        out.push_parts(parts, &Scope::Person, file, &[], created);
    }
}

/// `raw_memories.md` (no `MEMORY.md` yet): per thread, the bullets of its `Preference
/// signals:`, `Reusable knowledge:` and `Failures…:` lists, its project from `cwd:`.
fn read_raw(file: &Path, t: &str, out: &mut Read) {
    let lines: Vec<&str> = t.lines().collect();
    let mut scope = Scope::Unknown("the thread names no working directory".into());
    let (mut created, mut thread) = (None, None);
    let mut kept = false;
    for (i, l) in lines.iter().enumerate() {
        if let Some(id) = l.strip_prefix("## Thread ") {
            thread = Some(id.trim().trim_matches('`').to_string());
            scope = Scope::Unknown("the thread names no working directory".into());
            created = None;
            kept = false;
            continue;
        }
        if let Some(cwd) = l.strip_prefix("cwd:").map(str::trim) {
            if Path::new(cwd).is_absolute() {
                scope = Scope::Project(PathBuf::from(cwd));
            }
        }
        if let Some(at) = l.strip_prefix("updated_at:") {
            created = text::time(at.trim());
        }
        if l.ends_with(':') && !l.starts_with([' ', '-']) {
            let h = l.trim_end_matches(':');
            kept = h == "Preference signals" || KEPT.contains(&h);
            continue;
        }
        match text::item(l) {
            Some(b) if kept && !l.starts_with([' ', '\t']) => out.entries.push(Entry {
                scope: scope.clone(),
                label: text::first_words(b),
                text: b.to_string(),
                file: file.to_path_buf(),
                lines: (i + 1, i + 1),
                refs: thread.iter().map(|t| format!("codex-thread:{t}")).collect(),
                created: created.or_else(|| text::mtime_ms(file)),
            }),
            _ if l.trim().is_empty() => {}
            _ => kept = kept && text::item(l).is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        super::super::fixture("codex")
    }

    /// The handbook's six bullets belong to `/tmp/shop` (line 47 holds the token the
    /// floor refuses later); the summary gives the profile, three preferences and two
    /// tips, the person's; the extension's instructions and rollouts give nothing.
    #[test]
    fn the_fixture_reads_as_project_bullets_and_the_persons() {
        let r = super::super::read(super::super::Source::Codex, &fixture(), &[]);
        let project: Vec<&Entry> = r
            .entries
            .iter()
            .filter(|e| e.scope == Scope::Project("/tmp/shop".into()))
            .collect();
        let lines: Vec<usize> = project.iter().map(|e| e.lines.0).collect();
        assert_eq!(lines, [18, 22, 23, 27, 46, 47]);
        assert!(!project[1].text.contains("[Task"), "{}", project[1].text);
        assert_eq!(
            project[1].refs,
            ["codex-thread:019f5fe6-5b40-7064-9c80-317fa3b1799d"]
        );
        assert_eq!(project[1].created, text::time("2026-07-14T09:40:11+00:00"));
        assert_eq!(project[4].created, text::time("2026-07-21T16:25:37+00:00"));
        let person: Vec<&Entry> = r
            .entries
            .iter()
            .filter(|e| e.scope == Scope::Person)
            .collect();
        let lines: Vec<usize> = person.iter().map(|e| e.lines.0).collect();
        assert_eq!(lines, [10, 11, 12, 16, 17, 5]);
        assert_eq!(person[5].label, "User profile");
        assert_eq!(r.entries.len(), 12);
        assert_eq!(r.skipped.len(), 1, "{:?}", r.skipped);
    }

    #[test]
    fn without_a_handbook_the_raw_notes_are_read_per_thread() {
        let dir = tempfile::tempdir().unwrap();
        let raw = std::fs::read_to_string(fixture().join("memories/raw_memories.md")).unwrap();
        std::fs::write(dir.path().join("raw_memories.md"), raw).unwrap();
        let mut r = Read::default();
        read(dir.path(), &mut r);
        let lines: Vec<usize> = r.entries.iter().map(|e| e.lines.0).collect();
        assert_eq!(lines, [27, 30, 31, 34, 54], "{:#?}", r.entries);
        assert!(r
            .entries
            .iter()
            .all(|e| e.scope == Scope::Project("/tmp/shop".into())));
        assert_eq!(
            r.entries[4].refs,
            ["codex-thread:019f856a-9ea8-73e9-8668-5257bdd640fb"]
        );
    }
}
