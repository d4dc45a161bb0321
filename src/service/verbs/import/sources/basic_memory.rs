//! basic-memory's notes: Markdown files of named projects (knowledge bases, not
//! repositories) listed in its `config.json` (`"projects": {"main": {"path": …}}`, or the
//! older `{"main": "/path"}`). A note is one entry (split at its headings when long):
//! labelled by its `title`, its text the body as written (observations `- [category]
//! fact #tag (context)` and relations `- relation [[Target]]` read well as they are),
//! dated by `modified`, else `created`, else the file. Schema notes (`type: schema`)
//! describe other notes and are skipped. A note names no project of code: an entry is
//! `Unplaced` (the medulla, unless the import names a brain).

use std::path::{Path, PathBuf};

use super::text;
use super::{markdown_files, read_text, Read, Scope};

/// `place`: basic-memory's configuration directory (holding `config.json`), or one
/// project's directory of notes.
pub(super) fn read(place: &Path, out: &mut Read) {
    let config = place.join("config.json");
    if !config.is_file() {
        read_project(place, out);
        return;
    }
    for (name, dir) in projects(&config, out) {
        if dir.is_dir() {
            read_project(&dir, out);
        } else {
            out.skip(
                &config,
                format!(
                    "project {name:?} has no local directory ({})",
                    dir.display()
                ),
            );
        }
    }
}

/// The projects `config.json` lists, by name, either shape.
fn projects(config: &Path, out: &mut Read) -> Vec<(String, PathBuf)> {
    let parsed = std::fs::read_to_string(config)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let Some(v) = parsed else {
        out.skip(config, "not a JSON configuration");
        return Vec::new();
    };
    let Some(map) = v.get("projects").and_then(|p| p.as_object()) else {
        return Vec::new();
    };
    map.iter()
        .filter_map(|(name, p)| {
            let path = p.as_str().or_else(|| p.get("path")?.as_str())?;
            Some((name.clone(), PathBuf::from(path)))
        })
        .collect()
}

fn read_project(dir: &Path, out: &mut Read) {
    for file in markdown_files(dir) {
        match read_text(&file) {
            Ok(t) => {
                out.files += 1;
                note(&file, &t, out);
            }
            Err(why) => out.skip(&file, why),
        }
    }
}

fn note(file: &Path, t: &str, out: &mut Read) {
    let lines: Vec<&str> = t.lines().collect();
    let (front, mut body) = text::front_matter(&lines);
    if text::key(&front, "type") == Some("schema") {
        return out.skip(file, "a schema note (it describes other notes)");
    }
    let label = text::key(&front, "title")
        .map(str::to_string)
        .unwrap_or_else(|| text::phrase(&text::stem(file)));
    // The `# Title` basic-memory writes under the front matter is the label already.
    if let Some((k, h)) = text::first_heading(&lines, body) {
        if text::same_words(h, &label) {
            body = k + 1;
        }
    }
    let created = text::key(&front, "modified")
        .or_else(|| text::key(&front, "created"))
        .and_then(text::time)
        .or_else(|| text::mtime_ms(file));
    let parts = text::parts(&label, &lines[body..], body + 1);
    out.push_parts(parts, &Scope::Unplaced, file, &[], created);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture copied with its configuration's placeholder rewritten; both shapes of
    /// `config.json` list the same two projects.
    #[test]
    fn both_config_shapes_read_every_note_of_every_project() {
        let src = super::super::fixture("basic-memory");
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("basic-memory");
        for sub in [
            "main/preferences",
            "shop-notes/decisions",
            "shop-notes/ops",
            "shop-notes/process",
        ] {
            std::fs::create_dir_all(copy.join(sub)).unwrap();
            for e in std::fs::read_dir(src.join(sub)).unwrap().flatten() {
                std::fs::copy(e.path(), copy.join(sub).join(e.file_name())).unwrap();
            }
        }
        for (from, to) in [("config.json", "new"), ("config.legacy.json", "legacy")] {
            let t = std::fs::read_to_string(src.join("config").join(from)).unwrap();
            std::fs::create_dir_all(dir.path().join(to)).unwrap();
            std::fs::write(
                dir.path().join(to).join("config.json"),
                t.replace("__FIXTURE__", &dir.path().to_string_lossy()),
            )
            .unwrap();
            let r =
                super::super::read(super::super::Source::BasicMemory, &dir.path().join(to), &[]);
            let labels: Vec<&str> = r.entries.iter().map(|e| e.label.as_str()).collect();
            assert_eq!(
                labels,
                [
                    "Commit Style",
                    "Billing Integer Cents",
                    "sqlx migrations",
                    "Staging Deploy",
                    "Release Process"
                ],
                "{to}"
            );
            assert!(r.entries.iter().all(|e| e.scope == Scope::Unplaced));
            let billing = &r.entries[1];
            assert_eq!(billing.lines, (14, 21));
            assert_eq!(billing.created, text::time("2026-07-14T10:02:00+00:00"));
            assert!(
                billing.text.starts_with("## Observations\n- [decision]"),
                "{}",
                billing.text
            );
            assert_eq!(r.entries[4].created, text::time("2026-07-21"));
        }
    }
}
