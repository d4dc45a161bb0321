//! `medulla sync`: durable memory written into the repository's instruction files, so an
//! agent that never calls a tool still reads it.
//!
//! - `AGENTS.md`: one block between `<!-- BEGIN MEDULLA v1 hash:sha256:<12 hex> -->` and
//!   `<!-- END MEDULLA -->` (appended when absent; the rest of the file is the person's);
//!   `CLAUDE.md`, when it exists, gets an `@AGENTS.md` line if it lacks one.
//! - Files medulla owns whole, each with a generated-file banner carrying the same hash:
//!   `.cursor/rules/medulla.mdc`, `.github/instructions/medulla.instructions.md`,
//!   `.windsurf/rules/medulla.md`.
//!
//! A block or file whose body no longer matches its hash was edited by a person: `sync`
//! refuses to overwrite it, writes its proposal beside it (`AGENTS.medulla.md`, or
//! `<file>.proposed`), and says so; `--force` overwrites. An unchanged block is not
//! rewritten. `--check` writes nothing and exits 1 when any file is stale. Every line
//! passes the hygiene floor first: these files are committed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use brains::Strength;
use clap::Args;
use sha2::{Digest, Sha256};

use super::prime::{fetch, strongest};
use super::print::{note, out};
use crate::service::rows::one_line;
use crate::service::rows::Row;

const BEGIN: &str = "<!-- BEGIN MEDULLA v1 hash:sha256:";
const END: &str = "<!-- END MEDULLA -->";

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Write nothing; exit 1 when a file is stale (for pre-commit hooks and CI)
    #[arg(long)]
    pub check: bool,
    /// Overwrite a block or file a person edited (its proposal is otherwise written beside it)
    #[arg(long)]
    pub force: bool,
    /// The weakest project claims written
    #[arg(long, value_enum, default_value = "verified")]
    pub min_strength: Strength,
    /// The most bytes of memory per block
    #[arg(long, default_value_t = 2048, value_name = "BYTES")]
    pub budget: usize,
    /// The owner's URL [default: from $MEDULLA_HOME/owner.json]
    #[arg(long, env = "MEDULLA_URL", value_name = "URL")]
    pub url: Option<String>,
}

fn hash12(body: &str) -> String {
    hex::encode(Sha256::digest(body.as_bytes()))[..12].to_string()
}

/// One claim as one committed line, or `None` when it fails the hygiene floor.
fn line(r: &Row) -> Option<String> {
    let l = format!("- `{}`: {}", r.slug, one_line(&r.text, 240));
    brains::hygiene::scan(&l).is_empty().then_some(l)
}

/// The block's body: the medulla's doctrine, then this brain's claims at or above the
/// strength floor, each part within half the budget; and how many lines the floor held
/// back.
fn body(doctrine: &[Row], project: &[Row], min: Strength, budget: usize) -> (String, usize) {
    let mut held = 0;
    let mut part = |title: &str, rows: Vec<&Row>, room: usize| {
        let mut out = String::new();
        for r in rows {
            match line(r) {
                Some(l) if out.len() + l.len() < room => {
                    out.push_str(&l);
                    out.push('\n');
                }
                Some(_) => break,
                None => held += 1,
            }
        }
        if out.is_empty() {
            String::new()
        } else {
            format!("{title}\n\n{out}")
        }
    };
    let doctrine = part(
        "Doctrine (the medulla: across projects):",
        strongest(doctrine),
        budget / 2,
    );
    let project = part(
        "This project (its brain):",
        strongest(project)
            .into_iter()
            .filter(|r| r.strength >= min)
            .collect(),
        budget - doctrine.len().min(budget / 2),
    );
    let mut b = String::from(
        "Memory kept by medulla (`medulla sync` writes this block; edit claims with medulla, not here).\n",
    );
    for p in [doctrine, project] {
        if !p.is_empty() {
            b.push('\n');
            b.push_str(&p);
        }
    }
    (b, held)
}

/// The block with its markers.
fn block(body: &str) -> String {
    format!("{BEGIN}{} -->\n{body}{END}\n", hash12(body))
}

/// The block in `text`: (start, end, recorded hash, body).
fn find_block(text: &str) -> Option<(usize, usize, String, String)> {
    let start = text.find(BEGIN)?;
    let after = &text[start + BEGIN.len()..];
    let hash_end = after.find(" -->")?;
    let hash = after[..hash_end].to_string();
    let body_start = start + BEGIN.len() + hash_end + " -->\n".len();
    let end_rel = text[body_start..].find(END)?;
    let body = text[body_start..body_start + end_rel].to_string();
    let mut end = body_start + end_rel + END.len();
    if text[end..].starts_with('\n') {
        end += 1;
    }
    Some((start, end, hash, body))
}

/// What sync would do to one file.
enum Plan {
    Unchanged,
    Write(String),
    /// A person edited it: the proposal goes beside it.
    Refused {
        proposal: PathBuf,
        text: String,
    },
}

fn plan_agents(path: &Path, body: &str, force: bool) -> anyhow::Result<Plan> {
    let now = std::fs::read_to_string(path).unwrap_or_default();
    let fresh = block(body);
    Ok(match find_block(&now) {
        None => {
            let sep = if now.is_empty() || now.ends_with("\n\n") {
                ""
            } else if now.ends_with('\n') {
                "\n"
            } else {
                "\n\n"
            };
            Plan::Write(format!("{now}{sep}{fresh}"))
        }
        Some((s, e, hash, old)) => {
            if old == body && hash == hash12(body) {
                Plan::Unchanged
            } else if hash != hash12(&old) && !force {
                Plan::Refused {
                    proposal: path.with_file_name("AGENTS.medulla.md"),
                    text: fresh,
                }
            } else {
                Plan::Write(format!("{}{fresh}{}", &now[..s], &now[e..]))
            }
        }
    })
}

/// A file medulla owns whole: `head` (its front matter), then the banner and the body.
fn plan_owned(path: &Path, head: &str, body: &str, force: bool) -> anyhow::Result<Plan> {
    let fresh = format!(
        "{head}<!-- Generated by `medulla sync`; edits are overwritten by the next sync. -->\n{}",
        block(body)
    );
    let now = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(_) => return Ok(Plan::Write(fresh)),
    };
    if now == fresh {
        return Ok(Plan::Unchanged);
    }
    let edited = match find_block(&now) {
        Some((_, _, hash, old)) => hash != hash12(&old),
        None => true,
    };
    Ok(if edited && !force {
        let mut p = path.as_os_str().to_owned();
        p.push(".proposed");
        Plan::Refused {
            proposal: PathBuf::from(p),
            text: fresh,
        }
    } else {
        Plan::Write(fresh)
    })
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// `medulla sync`: 0 done (or, with `--check`, every file current), 1 a file stale or
/// refused, 2 no owner or no brain here.
pub fn sync(a: SyncArgs) -> anyhow::Result<i32> {
    let Some(m) = fetch(
        a.url.as_deref(),
        std::time::Instant::now() + Duration::from_secs(30),
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "cannot read memory from the owner: {e}: is it running? start it with `medulla serve`"
        )
    })?
    else {
        note!("medulla: no brain covers this directory: create one with `medulla bootstrap` here");
        return Ok(2);
    };
    let root = PathBuf::from(&m.root);
    let (body, held) = body(
        &m.medulla.claims,
        &m.project.claims,
        a.min_strength,
        a.budget.max(256),
    );
    let mut plans = vec![(
        root.join("AGENTS.md"),
        plan_agents(&root.join("AGENTS.md"), &body, a.force)?,
    )];
    for (rel, head) in [
        (
            ".cursor/rules/medulla.mdc",
            "---\ndescription: Memory kept by medulla\nalwaysApply: true\n---\n",
        ),
        (
            ".github/instructions/medulla.instructions.md",
            "---\napplyTo: \"**\"\n---\n",
        ),
        (
            ".windsurf/rules/medulla.md",
            "---\ntrigger: always_on\n---\n",
        ),
    ] {
        let p = root.join(rel);
        plans.push((p.clone(), plan_owned(&p, head, &body, a.force)?));
    }
    let claude = root.join("CLAUDE.md");
    if let Ok(t) = std::fs::read_to_string(&claude) {
        if !t.lines().any(|l| l.trim() == "@AGENTS.md") {
            let sep = if t.is_empty() || t.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            plans.push((claude, Plan::Write(format!("{t}{sep}@AGENTS.md\n"))));
        }
    }
    let mut stale = false;
    let mut refused = false;
    for (path, plan) in plans {
        let shown = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        match plan {
            Plan::Unchanged => out!("{shown}: current"),
            Plan::Write(text) if a.check => {
                stale = true;
                let _ = text;
                out!("{shown}: stale (run `medulla sync`)");
            }
            Plan::Write(text) => {
                write(&path, &text)?;
                out!("{shown}: written");
            }
            Plan::Refused { proposal, text } => {
                refused = true;
                if !a.check {
                    write(&proposal, &text)?;
                }
                let p = proposal
                    .strip_prefix(&root)
                    .unwrap_or(&proposal)
                    .display()
                    .to_string();
                note!("{shown}: edited by hand since the last sync, left as it is; the new version is in {p} (merge it, or run `medulla sync --force`)");
            }
        }
    }
    if held > 0 {
        note!("{held} claims were held back by the hygiene floor (these files are committed)");
    }
    Ok(i32::from(stale || refused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_found_with_its_hash_and_body() {
        let body = "Memory\n- `a`: b\n";
        let text = format!("# Agents\n\nmine\n\n{}after\n", block(body));
        let (s, e, hash, found) = find_block(&text).unwrap();
        assert_eq!(found, body);
        assert_eq!(hash, hash12(body));
        assert_eq!(&text[..s], "# Agents\n\nmine\n\n");
        assert_eq!(&text[e..], "after\n");
    }
}
