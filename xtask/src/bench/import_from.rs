//! `cargo xtask bench --import-from [--entries 10000] [--no-model] [--bin PATH]`: an
//! import of another tool's memory, end to end, as a person runs it (issue 66). A
//! synthetic Claude Code auto memory of `--entries` topic files (each with the front
//! matter Claude Code writes: `name`, `description`, `metadata.type`, `originSessionId`,
//! `modified`; a `MEMORY.md` indexing them all; one in fifty about the person) is written
//! under a scratch `CLAUDE_CONFIG_DIR`, named after a freshly bootstrapped brain's root,
//! and `medulla import --from claude` runs against a release owner (the model loaded
//! unless `--no-model`): a dry run, the import, and the same import again (every entry
//! already there). The figure is entries per second over the command's wall time.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Result};
use serde_json::{json, Value};

use super::http::{bin_arg, start_with};
use super::import::{stall, timed_import, word};
use super::runner::header;

const USAGE: &str =
    "usage: cargo xtask bench --import-from [--entries 10000] [--no-model] [--bin PATH]";

/// Claude Code's name for a project directory.
fn slug(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// `n` topic files and their index in `memory`.
fn write_memory(memory: &Path, n: usize) -> Result<()> {
    std::fs::create_dir_all(memory)?;
    let mut index = String::from("# Memory Index\n\n");
    for i in 0..n {
        let kind = if i % 50 == 7 { "user" } else { "project" };
        let name = format!("{}-{}-note-{i}", word(i), word(i / 24));
        let body = format!(
            "{}. The fix is to pin the {} before the {} step.\n\n\
             **Why:** the {} suite failed twice in a row on the {} branch.\n\n\
             **How to apply:** keep the {} warm and check the {} notes first.\n",
            stall(i),
            word(i / 5),
            word(i / 13),
            word(i / 17),
            word(i / 19),
            word(i / 23),
            word(i / 29),
        );
        let file = format!("{kind}_{i}.md");
        std::fs::write(
            memory.join(&file),
            format!(
                "---\nname: {name}\ndescription: \"how the {} {} behaves under load\"\nmetadata:\n  node_type: memory\n  type: {kind}\n  originSessionId: 5b0f4c1e-8a2d-4c3e-9f17-{i:012}\n  modified: 2026-07-14T09:31:02.118Z\n---\n\n{body}",
                word(i),
                word(i / 7)
            ),
        )?;
        index.push_str(&format!("- [{name}]({file}) — {} under load\n", word(i)));
    }
    std::fs::write(memory.join("MEMORY.md"), index)?;
    Ok(())
}

/// `medulla import --from claude [--dry-run] --json` with `CLAUDE_CONFIG_DIR`: the
/// `from` report, wall seconds, and the owner's CPU seconds meanwhile.
fn run_import(
    bin: &Path,
    home: &Path,
    config: &Path,
    root: &str,
    dry: bool,
    owner: u32,
) -> Result<(Value, f64, f64)> {
    let mut cmd = Command::new(bin);
    cmd.args(["import", "--from", "claude"])
        .env("CLAUDE_CONFIG_DIR", config);
    let (v, secs, cpu) = timed_import(cmd, home, root, dry, owner)?;
    let from = v["from"].clone();
    if from["count_conserved"] != json!(true) {
        bail!("import did not conserve counts: {v}");
    }
    Ok((from, secs, cpu))
}

/// A report's totals over its stores: created + superseded, already there.
fn totals(r: &Value) -> (u64, u64) {
    let stores = r["stores"].as_array().cloned().unwrap_or_default();
    let sum = |k: &str| {
        stores
            .iter()
            .map(|s| s[k].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    (sum("created") + sum("superseded"), sum("already"))
}

pub fn run(args: &[String]) -> Result<()> {
    for (i, a) in args.iter().enumerate() {
        let value = i > 0 && ["--entries", "--bin"].contains(&args[i - 1].as_str());
        let known = ["--import-from", "--entries", "--no-model", "--bin"];
        if !value && !known.contains(&a.as_str()) {
            bail!("unknown argument {a:?}: {USAGE}");
        }
    }
    let n = crate::flag_num(args, "--entries", 10_000)?.max(1);
    let model = !args.iter().any(|a| a == "--no-model");
    let bin = bin_arg(args, USAGE)?;
    // The command runs in the project: a relative `--bin` would not be found there.
    let bin = std::fs::canonicalize(&bin).unwrap_or(bin);
    let home = tempfile::tempdir()?;
    let work = tempfile::tempdir()?;
    let base = std::fs::canonicalize(work.path())?;
    let root = base.join("project");
    std::fs::create_dir_all(&root)?;
    let root = root.to_string_lossy().into_owned();
    let config = base.join("claude");
    let t = Instant::now();
    write_memory(&config.join("projects").join(slug(&root)).join("memory"), n)?;
    eprintln!(
        "wrote {n} topic files in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let o = start_with(&bin, home.path(), model, None)?;
    o.call("bootstrap", json!({ "root": root }), &root)?;
    let pid = o.child.id();
    let mut rows = Vec::new();
    for (what, dry) in [("dry run", true), ("import", false), ("again", false)] {
        let (r, secs, cpu) = run_import(&bin, home.path(), &config, &root, dry, pid)?;
        let (written, already) = totals(&r);
        if r["entries"].as_u64() != Some(n as u64) {
            bail!("{what}: read {} entries, not {n}", r["entries"]);
        }
        if what == "import" && written != n as u64 {
            bail!("the import wrote {written} of {n} entries: {r}");
        }
        if what == "again" && (written != 0 || already != n as u64) {
            bail!("the second import wrote {written} (already there: {already}): {r}");
        }
        rows.push(format!(
            "| {what} | {n} | {written} | {already} | {secs:.2} | {:.0} | {cpu:.2} |",
            n as f64 / secs
        ));
    }
    println!(
        "`medulla import --from claude`, {n} topic files, {}",
        if model { "model loaded" } else { "no model" }
    );
    header("| run | entries | written | already there | wall (s) | entries/s | owner CPU (s) |");
    for r in rows {
        println!("{r}");
    }
    Ok(())
}
