//! Merging medulla's entry into a client's configuration file, and taking it out again,
//! without touching anything else the file holds: JSON through serde_json (re-indented,
//! every other key kept), TOML through toml_edit (comments and layout kept).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::{Map, Value};

use super::clients::{Entry, Syntax};

/// One more file `connect` changes besides the client's MCP entry (its hooks, its
/// permission rules): the file, the change (the text after it, from the text before), and
/// how `disconnect` takes medulla's part out again (`None`: nothing of medulla's there;
/// an empty text: the file is medulla's whole, and goes).
pub struct Edit {
    pub path: PathBuf,
    pub apply: fn(Option<&str>, &Path) -> anyhow::Result<String>,
    pub undo: fn(&str, &Path) -> anyhow::Result<Option<String>>,
}

/// An undo for an edit `disconnect` leaves in place (a feature flag other hooks may
/// need).
pub fn kept(_before: &str, _path: &Path) -> anyhow::Result<Option<String>> {
    Ok(None)
}

/// The file's text now, or `None` when there is no file.
pub fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The text with the entry in place (added, or replacing an older medulla entry).
pub fn with_entry(before: Option<&str>, e: &Entry) -> anyhow::Result<String> {
    match e.syntax {
        Syntax::Json => json_with(before, &e.file, &e.keys, Some(&e.value)),
        Syntax::Toml => toml_with(before, &e.file, &e.keys, Some(&e.value)),
    }
}

/// The text without medulla's entry (`None`: there was nothing to take out).
pub fn without_entry(before: &str, e: &Entry) -> anyhow::Result<Option<String>> {
    let after = match e.syntax {
        Syntax::Json => json_with(Some(before), &e.file, &e.keys, None)?,
        Syntax::Toml => toml_with(Some(before), &e.file, &e.keys, None)?,
    };
    Ok((after != before).then_some(after))
}

fn json_with(
    before: Option<&str>,
    path: &Path,
    keys: &[&str],
    value: Option<&Value>,
) -> anyhow::Result<String> {
    let mut doc = parse_json(before, path)?;
    let (last, parents) = keys.split_last().expect("at least one key");
    let mut node = &mut doc;
    for k in parents {
        let Value::Object(map) = node else {
            bail!(
                "{}: `{k}`'s parent is not an object: fix the file and run connect again; nothing was written",
                path.display()
            );
        };
        if value.is_none() && !map.contains_key(*k) {
            return Ok(before.unwrap_or_default().to_string());
        }
        node = map
            .entry(k.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    let Value::Object(map) = node else {
        bail!(
            "{}: `{}` is not an object: fix the file and run connect again; nothing was written",
            path.display(),
            parents.join(".")
        );
    };
    match value {
        Some(v) => {
            if map.get(*last) == Some(v) {
                return Ok(before.unwrap_or_default().to_string());
            }
            map.insert(last.to_string(), v.clone());
        }
        None => {
            if map.remove(*last).is_none() {
                return Ok(before.unwrap_or_default().to_string());
            }
        }
    }
    json_text(&doc)
}

/// A client's JSON file as a document: an object when there is no file (or it is empty).
pub fn parse_json(before: Option<&str>, path: &Path) -> anyhow::Result<Value> {
    match before.map(str::trim) {
        None | Some("") => Ok(Value::Object(Map::new())),
        Some(t) => serde_json::from_str(t).with_context(|| {
            if path.extension().is_some_and(|e| e == "jsonc") {
                format!(
                    "{} holds comments or trailing commas medulla would not keep: add medulla's entry by hand (`medulla connect … --dry-run` prints it), or make the file plain JSON; nothing was written",
                    path.display()
                )
            } else {
                format!(
                    "{} is not valid JSON: fix it (or move it aside) and run connect again; nothing was written",
                    path.display()
                )
            }
        }),
    }
}

/// A client's TOML file as an editable document (comments and layout kept).
pub fn parse_toml(text: &str, path: &Path) -> anyhow::Result<toml_edit::DocumentMut> {
    text.parse().with_context(|| {
        format!(
            "{} is not valid TOML: fix it (or move it aside) and run connect again; nothing was written",
            path.display()
        )
    })
}

/// A JSON document as a file's text: indented, with a final newline.
pub fn json_text(doc: &Value) -> anyhow::Result<String> {
    Ok(format!("{}\n", serde_json::to_string_pretty(doc)?))
}

fn toml_value(v: &Value) -> anyhow::Result<toml_edit::Value> {
    Ok(match v {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) if n.is_i64() => n.as_i64().unwrap_or_default().into(),
        Value::Number(n) => n.as_f64().unwrap_or_default().into(),
        Value::Array(a) => {
            let mut arr = toml_edit::Array::new();
            for x in a {
                arr.push(toml_value(x)?);
            }
            toml_edit::Value::Array(arr)
        }
        Value::Object(m) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, x) in m {
                t.insert(k, toml_value(x)?);
            }
            toml_edit::Value::InlineTable(t)
        }
        Value::Null => bail!("TOML has no null"),
    })
}

fn toml_with(
    before: Option<&str>,
    path: &Path,
    keys: &[&str],
    value: Option<&Value>,
) -> anyhow::Result<String> {
    let text = before.unwrap_or_default();
    let mut doc = parse_toml(text, path)?;
    let (last, parents) = keys.split_last().expect("at least one key");
    let mut table = doc.as_table_mut();
    for k in parents {
        if value.is_none() && !table.contains_key(k) {
            return Ok(text.to_string());
        }
        let item = table.entry(k).or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            // `[mcp_servers.medulla]` rather than an empty `[mcp_servers]` header.
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        });
        table = item.as_table_mut().with_context(|| {
            format!(
                "{}: `{k}` is not a table: fix the file and run connect again; nothing was written",
                path.display()
            )
        })?;
    }
    match value {
        Some(Value::Object(fields)) => {
            let mut t = toml_edit::Table::new();
            for (k, v) in fields {
                t.insert(k, toml_edit::Item::Value(toml_value(v)?));
            }
            let same = table
                .get(last)
                .and_then(|i| i.as_table())
                .is_some_and(|old| old.to_string() == t.to_string());
            if same {
                return Ok(text.to_string());
            }
            table.insert(last, toml_edit::Item::Table(t));
        }
        Some(_) => bail!("a TOML server entry is a table"),
        None => {
            if table.remove(last).is_none() {
                return Ok(text.to_string());
            }
        }
    }
    Ok(doc.to_string())
}

/// A unified diff of `before` → `after` for `--dry-run`.
pub fn diff(path: &Path, before: Option<&str>, after: &str) -> String {
    let old = before.unwrap_or_default();
    similar::TextDiff::from_lines(old, after)
        .unified_diff()
        .context_radius(3)
        .header(
            &if before.is_some() {
                path.display().to_string()
            } else {
                "/dev/null".to_string()
            },
            &path.display().to_string(),
        )
        .to_string()
}

/// Write `text` to `path` atomically (a temp file beside it, then a rename), creating
/// the directory; an existing file keeps its permissions.
pub fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .with_context(|| format!("{} has no directory", path.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = dir.join(format!(
        ".{}.medulla-tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("config")
    ));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    if let Ok(m) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, m.permissions());
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}
