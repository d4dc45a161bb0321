//! The MCP reference memory server's graph: a JSONL file (`memory.jsonl`, the server's
//! `MEMORY_FILE_PATH`), one object a line, entities (`name`, `entityType`,
//! `observations`) then relations (`from`, `to`, `relationType`). An entity is one entry:
//! labelled `name (entityType)`, its text the observations, one a line, then its
//! relations as `relationType → to`; dated by the file (the graph keeps no times). A
//! person entity (`entityType: person`, or the `default_user` the server's prompt writes
//! to) is the person's; any other is `Unplaced` (the medulla, unless the import names a
//! brain). A relation from no entity, and a line that is not an object, are said, never
//! dropped silently.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::text;
use super::{read_text, Entry, Read, Scope};

/// An entity as read: its line, its type, its observations, its relations.
type Entity = (usize, String, Vec<String>, Vec<String>);

/// `place`: the JSONL file, or a directory holding `memory.jsonl` (or the older
/// `memory.json`).
pub(super) fn read(place: &Path, out: &mut Read) {
    let file = if place.is_dir() {
        let j = place.join("memory.jsonl");
        if j.is_file() {
            j
        } else {
            place.join("memory.json")
        }
    } else {
        place.to_path_buf()
    };
    let t = match read_text(&file) {
        Ok(t) => t,
        Err(why) => return out.skip(&file, why),
    };
    out.files += 1;
    let created = text::mtime_ms(&file);
    let mut entities: BTreeMap<String, Entity> = BTreeMap::new();
    let mut relations: Vec<(usize, String, String, String)> = Vec::new();
    for (i, line) in t.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            out.skip(&file, format!("line {} is not a JSON object", i + 1));
            continue;
        };
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        match v.get("type").and_then(Value::as_str) {
            Some("entity") if !s("name").is_empty() => {
                let obs = v
                    .get("observations")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                entities.insert(s("name"), (i + 1, s("entityType"), obs, Vec::new()));
            }
            Some("relation") => relations.push((i + 1, s("from"), s("relationType"), s("to"))),
            _ => out.skip(
                &file,
                format!("line {} is neither an entity nor a relation", i + 1),
            ),
        }
    }
    for (line, from, kind, to) in relations {
        match entities.get_mut(&from) {
            Some(e) => e.3.push(format!("{kind} → {to}")),
            None => out.skip(
                &file,
                format!("line {line}: a relation from {from:?}, which is no entity"),
            ),
        }
    }
    let mut ordered: Vec<(String, Entity)> = entities.into_iter().collect();
    ordered.sort_by_key(|(_, e)| e.0);
    for (name, (line, kind, obs, rels)) in ordered {
        let person = kind.eq_ignore_ascii_case("person") || name == "default_user";
        let mut label = name.replace('_', " ");
        if !kind.is_empty() {
            label = format!("{label} ({kind})");
        }
        let mut body: Vec<String> = obs.iter().map(|o| format!("- {o}")).collect();
        body.extend(rels.iter().map(|r| format!("- {r}")));
        if body.is_empty() {
            body.push(format!(
                "- a {} with no observations",
                if kind.is_empty() {
                    "thing"
                } else {
                    kind.as_str()
                }
            ));
        }
        let text = body.join("\n");
        // A huge entity is split at its observations, all of the same line.
        let lines: Vec<&str> = text.lines().collect();
        for p in text::parts(&label, &lines, line) {
            out.entries.push(Entry {
                scope: if person {
                    Scope::Person
                } else {
                    Scope::Unplaced
                },
                label: p.label,
                text: p.text,
                file: file.clone(),
                lines: (line, line),
                refs: Vec::new(),
                created,
            });
        }
    }
}

/// The newest `memory.jsonl` of the server in npx's cache under `home`
/// (`.npm/_npx/<hash>/node_modules/@modelcontextprotocol/server-memory/dist/`), where the
/// server keeps it when nothing else is said.
pub(super) fn in_npx_cache(home: &Path) -> Option<PathBuf> {
    std::fs::read_dir(home.join(".npm/_npx"))
        .ok()?
        .flatten()
        .map(|e| {
            e.path()
                .join("node_modules/@modelcontextprotocol/server-memory/dist/memory.jsonl")
        })
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_reads_one_entry_an_entity_with_its_relations() {
        let file = super::super::fixture("mcp-memory").join("memory.jsonl");
        let r = super::super::read(super::super::Source::McpMemory, &file, &[]);
        assert!(r.skipped.is_empty(), "{:?}", r.skipped);
        let labels: Vec<&str> = r.entries.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "default user (person)",
                "shop (project)",
                "shop billing (module)",
                "shop migrations (convention)",
                "shop staging (environment)"
            ]
        );
        assert_eq!(r.entries[0].scope, Scope::Person);
        assert!(r.entries[1..].iter().all(|e| e.scope == Scope::Unplaced));
        assert_eq!(r.entries[1].lines, (2, 2));
        assert!(
            r.entries[1]
                .text
                .ends_with("- contains → shop_billing\n- follows → shop_migrations"),
            "{}",
            r.entries[1].text
        );
        assert!(r.entries[0].text.contains("- maintains → shop"));
    }

    #[test]
    fn a_bad_line_and_a_dangling_relation_are_said() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("memory.jsonl");
        std::fs::write(&f, "{\"type\":\"entity\",\"name\":\"a\",\"entityType\":\"x\",\"observations\":[\"o\"]}\nnot json\n{\"type\":\"relation\",\"from\":\"ghost\",\"to\":\"a\",\"relationType\":\"haunts\"}").unwrap();
        let mut r = Read::default();
        read(dir.path(), &mut r);
        assert_eq!(r.entries.len(), 1);
        let why: Vec<&str> = r.skipped.iter().map(|s| s.why.as_str()).collect();
        assert_eq!(
            why,
            [
                "line 2 is not a JSON object",
                "line 3: a relation from \"ghost\", which is no entity"
            ]
        );
    }
}
