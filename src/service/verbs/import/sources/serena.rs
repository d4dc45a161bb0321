//! Serena's memories: free Markdown files, a project's under `<project>/.serena/memories/`
//! (a subfolder is a topic: `billing/money.md` is the memory `billing/money`) and the
//! person's under `<serena home>/memories/global/`. A file is one entry (split at its
//! headings when long), labelled by its first heading, else its name. Memories the
//! project's `project.yml` hides (`ignored_memory_patterns`) are skipped and said, as is
//! `memory_maintenance`, the template Serena seeds in every project.

use std::path::{Path, PathBuf};

use super::text;
use super::{markdown_files, read_text, Read, Scope};

/// `place`: a project (holding `.serena/`), its `.serena/` or `.serena/memories/`, or
/// Serena's home (`~/.serena`: its global memories, every project its
/// `serena_config.yml` lists, and every known project that has memories).
pub(super) fn read(place: &Path, projects: &[PathBuf], out: &mut Read) {
    if let Some(project) = project_of(place) {
        read_project(&project, out);
        return;
    }
    let global = place.join("memories/global");
    if global.is_dir() {
        for file in markdown_files(&global) {
            let name = format!("global/{}", name_of(&global, &file));
            memory(&file, &name, Scope::Person, out);
        }
    }
    let mut listed = listed_projects(place);
    listed.extend(projects.iter().cloned());
    listed.sort();
    listed.dedup();
    for p in listed {
        if p.join(".serena/memories").is_dir() {
            read_project(&p, out);
        }
    }
}

/// The project `place` names, when it names one rather than Serena's home.
fn project_of(place: &Path) -> Option<PathBuf> {
    if place.join(".serena/memories").is_dir() {
        return Some(place.to_path_buf());
    }
    let is_serena = |p: &Path| p.file_name().is_some_and(|n| n == ".serena");
    if is_serena(place) && place.join("project.yml").is_file() {
        return place.parent().map(Path::to_path_buf);
    }
    if place.file_name().is_some_and(|n| n == "memories") {
        let up = place.parent()?;
        if is_serena(up) && !place.join("global").is_dir() {
            return up.parent().map(Path::to_path_buf);
        }
    }
    None
}

/// The projects `serena_config.yml` lists (`projects:`, a list of paths).
fn listed_projects(home: &Path) -> Vec<PathBuf> {
    let Ok(t) = std::fs::read_to_string(home.join("serena_config.yml")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut inside = false;
    for l in t.lines() {
        if !l.starts_with([' ', '\t', '-']) {
            inside = l.trim_end() == "projects:";
            continue;
        }
        if let (true, Some(p)) = (inside, l.trim().strip_prefix("- ")) {
            let p = PathBuf::from(p.trim().trim_matches(['"', '\'']));
            if p.is_absolute() {
                out.push(p);
            }
        }
    }
    out
}

/// A memory's name: its path under the memories folder, without `.md`.
fn name_of(dir: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(dir).unwrap_or(file).with_extension("");
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// `ignored_memory_patterns` of the project's `project.yml` (regexes over names).
fn ignored(project: &Path) -> Vec<regex::Regex> {
    let Ok(t) = std::fs::read_to_string(project.join(".serena/project.yml")) else {
        return Vec::new();
    };
    let lines: Vec<&str> = t.lines().collect();
    let (front, _) = text::front_matter(
        &std::iter::once("---")
            .chain(lines.iter().copied())
            .chain(std::iter::once("---"))
            .collect::<Vec<_>>(),
    );
    front
        .get("ignored_memory_patterns")
        .map(|v| {
            v.split(", ")
                .filter(|p| !p.is_empty())
                .filter_map(|p| regex::Regex::new(&format!("^(?:{p})")).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn read_project(project: &Path, out: &mut Read) {
    let dir = project.join(".serena/memories");
    let ignore = ignored(project);
    for file in markdown_files(&dir) {
        let name = name_of(&dir, &file);
        if ignore.iter().any(|r| r.is_match(&name)) {
            out.skip(&file, "hidden by the project's ignored_memory_patterns");
            continue;
        }
        if name == "memory_maintenance" {
            out.skip(&file, "Serena's own template of how to keep memories");
            continue;
        }
        memory(&file, &name, Scope::Project(project.to_path_buf()), out);
    }
}

/// One memory file: its entry, or its parts when long.
fn memory(file: &Path, name: &str, scope: Scope, out: &mut Read) {
    let t = match read_text(file) {
        Ok(t) => t,
        Err(why) => return out.skip(file, why),
    };
    out.files += 1;
    let lines: Vec<&str> = t.lines().collect();
    let (label, body) = match text::first_heading(&lines, 0) {
        Some((k, h)) => (h.to_string(), k + 1),
        None => (text::phrase(name.rsplit('/').next().unwrap_or(name)), 0),
    };
    let created = text::mtime_ms(file);
    let parts = text::parts(&label, &lines[body..], body + 1);
    out.push_parts(parts, &scope, file, &[], created);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        super::super::fixture("serena")
    }

    #[test]
    fn a_project_reads_its_memories_and_skips_the_ignored() {
        let project = fixture().join("project");
        let r = super::super::read(super::super::Source::Serena, &project, &[]);
        let labels: Vec<&str> = r.entries.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Money representation",
                "shop core",
                "Staging deploy",
                "Suggested commands",
                "Task completion"
            ]
        );
        assert!(r
            .entries
            .iter()
            .all(|e| e.scope == Scope::Project(project.clone())));
        assert_eq!(r.entries[0].lines, (3, 6));
        assert_eq!(r.skipped.len(), 1);
        assert!(r.skipped[0]
            .file
            .ends_with("_archive/2026-05-payments-spike.md"));
        // The same project named by its .serena/ and memories/ folders.
        for p in [project.join(".serena"), project.join(".serena/memories")] {
            assert_eq!(
                super::super::read(super::super::Source::Serena, &p, &[])
                    .entries
                    .len(),
                5
            );
        }
    }

    #[test]
    fn the_home_reads_global_memories_and_known_projects() {
        let home = fixture().join("home/.serena");
        let r = super::super::read(super::super::Source::Serena, &home, &[]);
        assert_eq!(r.entries.len(), 1);
        assert_eq!(r.entries[0].scope, Scope::Person);
        assert_eq!(r.entries[0].label, "Commit style (all projects)");
        let r = super::super::read(
            super::super::Source::Serena,
            &home,
            &[fixture().join("project")],
        );
        assert_eq!(r.entries.len(), 6);
    }
}
