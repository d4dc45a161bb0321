//! Claude Code's auto memory: `<config>/projects/<project>/memory/`, where `<project>` is
//! the slug of the project's path (every character not a letter or digit a `-`). Each
//! directory holds `MEMORY.md` (an index of `- [Title](file.md) — hook` lines, or in old
//! installs the memory itself as bullets) and topic files with a YAML front matter
//! (`name`, `description`, `type` at the top or under `metadata`, `modified`,
//! `originSessionId`). A topic file is one entry (split when long); an index line is no
//! entry of its own but gives its file a title; an index bullet without a link is one.
//! `type: user` describes the person: user-wide. The slug is never decoded; a transcript
//! beside `memory/` may say the working directory it was for.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::text::{self, Part};
use super::{markdown_files, read_text, Entry, Read, Scope};

/// `place`: Claude Code's configuration directory (holding `projects/`), its `projects/`
/// directory, one project's directory, or one `memory/` directory.
pub(super) fn read(place: &Path, out: &mut Read) {
    for (slug, project_dir, memory) in memory_dirs(place, out) {
        let scope = match slug {
            Some(slug) => Scope::ClaudeProject {
                cwd: transcript_cwd(&project_dir),
                slug,
            },
            None => Scope::Unknown(format!(
                "{} is Claude Code's autoMemoryDirectory, which names no project",
                memory.display()
            )),
        };
        read_memory_dir(&memory, &scope, out);
    }
}

/// Each memory directory under `place`: its project's slug (`None` for an
/// `autoMemoryDirectory`, which names none), the project's directory and `memory/`.
fn memory_dirs(place: &Path, out: &mut Read) -> Vec<(Option<String>, PathBuf, PathBuf)> {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let projects_of = |projects: &Path| -> Vec<(Option<String>, PathBuf, PathBuf)> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(projects)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("memory").is_dir())
            .collect();
        dirs.sort();
        dirs.into_iter()
            .map(|d| (name(&d), d.clone(), d.join("memory")))
            .collect()
    };
    if place.join("projects").is_dir() {
        let mut dirs = projects_of(&place.join("projects"));
        if let Some(auto) = auto_memory_directory(place) {
            if auto.is_dir() {
                dirs.push((None, auto.clone(), auto));
            } else {
                out.skip(
                    &place.join("settings.json"),
                    format!("its autoMemoryDirectory {} does not exist", auto.display()),
                );
            }
        }
        return dirs;
    }
    if place.join("memory").is_dir() {
        return vec![(name(place), place.to_path_buf(), place.join("memory"))];
    }
    if name(place).as_deref() == Some("memory") {
        let parent = place.parent().unwrap_or(place);
        return vec![(name(parent), parent.to_path_buf(), place.to_path_buf())];
    }
    projects_of(place)
}

/// `autoMemoryDirectory` of the user's settings (`~` for the home directory).
fn auto_memory_directory(config: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(config.join("settings.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let dir = v.get("autoMemoryDirectory")?.as_str()?;
    match dir.strip_prefix("~/") {
        Some(rest) => Some(PathBuf::from(std::env::var_os("HOME")?).join(rest)),
        None => Some(PathBuf::from(dir)).filter(|p| p.is_absolute()),
    }
}

/// The working directory the newest transcript of a project directory recorded (a
/// `"cwd"` field of its first lines), if any.
fn transcript_cwd(project_dir: &Path) -> Option<PathBuf> {
    use std::io::{BufRead, BufReader};
    let mut transcripts: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(project_dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    transcripts.sort();
    for (_, t) in transcripts.iter().rev().take(3) {
        let Ok(f) = std::fs::File::open(t) else {
            continue;
        };
        for line in BufReader::new(f).lines().take(50).map_while(Result::ok) {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if let Some(cwd) = v.get("cwd").and_then(|c| c.as_str()) {
                let p = PathBuf::from(cwd);
                if p.is_absolute() {
                    return Some(p);
                }
            }
        }
    }
    None
}

/// One `memory/` directory: its index's content lines and each topic file.
fn read_memory_dir(memory: &Path, scope: &Scope, out: &mut Read) {
    let index = memory.join("MEMORY.md");
    let mut titles: HashMap<PathBuf, String> = HashMap::new();
    if index.is_file() {
        match read_text(&index) {
            Ok(t) => {
                out.files += 1;
                read_index(&index, &t, scope, &mut titles, out);
            }
            Err(why) => out.skip(&index, why),
        }
    }
    for file in markdown_files(memory) {
        if file == index || file.file_name().is_some_and(|n| n == "MEMORY.md") {
            continue;
        }
        match read_text(&file) {
            Ok(t) => {
                out.files += 1;
                topic_file(&file, &t, scope, titles.get(&file).map(String::as_str), out);
            }
            Err(why) => out.skip(&file, why),
        }
    }
}

/// `MEMORY.md`: a link line gives its file a title (and is no entry); any other bullet or
/// paragraph is an entry of its own (old installs kept the memory itself here).
fn read_index(
    index: &Path,
    t: &str,
    scope: &Scope,
    titles: &mut HashMap<PathBuf, String>,
    out: &mut Read,
) {
    let dir = index.parent().unwrap_or(Path::new("."));
    let lines: Vec<&str> = t.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.trim().is_empty() || text::heading(l).is_some() {
            i += 1;
            continue;
        }
        // The entry runs to the next bullet, heading or blank line.
        let mut j = i + 1;
        while j < lines.len()
            && !lines[j].trim().is_empty()
            && text::heading(lines[j]).is_none()
            && (text::item(lines[j]).is_none() || lines[j].starts_with([' ', '\t']))
        {
            j += 1;
        }
        let body = lines[i..j]
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        let body = text::item(&body).unwrap_or(&body).to_string();
        match link(&body) {
            Some((title, target)) => {
                let file = dir.join(target);
                if file.is_file() {
                    titles.insert(file, title.to_string());
                } else {
                    out.skip(
                        index,
                        format!("line {} points to {target}, which does not exist", i + 1),
                    );
                }
            }
            None => out.entries.push(Entry {
                scope: scope.clone(),
                label: text::first_words(&body),
                text: body.clone(),
                file: index.to_path_buf(),
                lines: (i + 1, j),
                refs: Vec::new(),
                created: text::mtime_ms(index),
            }),
        }
        i = j;
    }
}

/// `[Title](file.md)` at the start of an index line: the title and the file.
fn link(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix('[')?;
    let (title, rest) = rest.split_once("](")?;
    let (target, _) = rest.split_once(')')?;
    (target.ends_with(".md") && !target.contains("://")).then_some((title.trim(), target.trim()))
}

/// One topic file: one entry, or one a part when it is long.
fn topic_file(file: &Path, t: &str, scope: &Scope, title: Option<&str>, out: &mut Read) {
    let lines: Vec<&str> = t.lines().collect();
    let (front, mut body) = text::front_matter(&lines);
    let heading = text::first_heading(&lines, body);
    let label = text::key(&front, "name")
        .map(text::phrase)
        .or_else(|| heading.map(|(_, h)| h.to_string()))
        .or_else(|| title.map(str::to_string))
        .unwrap_or_else(|| text::phrase(&text::stem(file)));
    // A first heading that only repeats the label is not said twice.
    if let Some((k, h)) = heading {
        if text::same_words(h, &label) {
            body = k + 1;
        }
    }
    let scope = match text::key(&front, "type") {
        Some("user") => Scope::Person,
        _ => scope.clone(),
    };
    let created = text::key(&front, "modified")
        .and_then(text::time)
        .or_else(|| text::mtime_ms(file));
    let refs: Vec<String> = text::key(&front, "originSessionId")
        .map(|id| format!("claude-session:{id}"))
        .into_iter()
        .collect();
    let mut parts = text::parts(&label, &lines[body..], body + 1);
    // The description leads when the body does not already say it.
    if let (Some(d), Some(first)) = (text::key(&front, "description"), parts.first_mut()) {
        if !first.text.contains(d) {
            first.text = format!("{d}\n\n{}", first.text);
        }
    }
    if parts.is_empty() {
        if let Some(d) = text::key(&front, "description") {
            parts.push(Part {
                label,
                text: d.to_string(),
                start: 1,
                end: body.max(1),
            });
        }
    }
    out.push_parts(parts, &scope, file, &refs, created);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        super::super::fixture("claude")
    }

    /// The fixture's `-tmp-shop`: six topic files, six index lines that are no entries;
    /// `type: user` is the person's, the rest the project's; `modified` dates the newer
    /// files; `-tmp-shop-admin` holds two bullets of an old-style index.
    #[test]
    fn the_fixture_reads_as_topic_entries_and_index_bullets() {
        let r = super::super::read(super::super::Source::Claude, &fixture(), &[]);
        assert!(r.skipped.is_empty(), "{:?}", r.skipped);
        let shop: Vec<&Entry> = r
            .entries
            .iter()
            .filter(|e| e.file.to_string_lossy().contains("-tmp-shop/"))
            .collect();
        assert_eq!(shop.len(), 6, "{shop:#?}");
        let by_label = |l: &str| {
            shop.iter()
                .find(|e| e.label == l)
                .unwrap_or_else(|| panic!("no {l}: {shop:#?}"))
        };
        let billing = by_label("Billing integer cents");
        assert_eq!(billing.lines, (11, 17));
        assert!(
            billing.text.starts_with("shop billing stores"),
            "{}",
            billing.text
        );
        assert!(billing.text.contains("**How to apply:**"));
        assert_eq!(billing.created, text::time("2026-07-14T09:31:02.118Z"));
        assert_eq!(
            billing.refs,
            ["claude-session:5b0f4c1e-8a2d-4c3e-9f17-2d6a0b9e4c71"]
        );
        assert!(
            matches!(&billing.scope, Scope::ClaudeProject { slug, cwd: None } if slug == "-tmp-shop")
        );
        assert_eq!(by_label("Commit message style").scope, Scope::Person);
        assert_eq!(
            by_label("sqlx migrations are append-only").created,
            text::mtime_ms(&fixture().join("projects/-tmp-shop/memory/project_sqlx_migrations.md"))
        );
        let debugging = by_label("Debugging notes");
        assert!(
            debugging.text.starts_with("- `tests/webhooks.rs"),
            "{}",
            debugging.text
        );
        assert_eq!(debugging.lines, (3, 5));
        let admin: Vec<&Entry> = r
            .entries
            .iter()
            .filter(|e| e.file.to_string_lossy().contains("-tmp-shop-admin/"))
            .collect();
        assert_eq!(admin.len(), 2);
        assert_eq!(admin[0].lines, (3, 3));
        assert!(admin[0]
            .text
            .starts_with("The admin UI is a separate Vite app"));
        assert_eq!(r.files, 8);
    }

    #[test]
    fn an_index_link_is_a_title_and_a_dangling_one_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let mem = dir.path().join("-p/memory");
        std::fs::create_dir_all(&mem).unwrap();
        std::fs::write(
            mem.join("MEMORY.md"),
            "- [Cache rule](cache.md) — hook\n- [Gone](gone.md) — hook\n",
        )
        .unwrap();
        std::fs::write(mem.join("cache.md"), "The cache is warmed at start.\n").unwrap();
        let mut r = Read::default();
        read(&dir.path().join("-p"), &mut r);
        assert_eq!(r.entries.len(), 1);
        assert_eq!(r.entries[0].label, "Cache rule");
        assert_eq!(r.skipped.len(), 1);
        assert!(r.skipped[0].why.contains("gone.md"));
    }
}
