//! The README is a test: its `sh` blocks, in order, are one shell script, run against a
//! real owner in a scratch home, so the README cannot drift from the binary.
//!
//! What runs: every line of every fenced block tagged `sh` (blocks tagged `text`, `json`,
//! `toml` or nothing are illustrations). What is skipped, by one rule: a command line
//! that starts with `cargo` belongs to the toolchain (it builds and serves medulla
//! forever, runs these very tests, or downloads the embedding model); the owner such a
//! line would start is the one this test starts. Everything else must succeed.
//!
//! The scratch home stands in for the reader's: `HOME` is a temporary directory holding
//! `code/myproject` (the project the README works in), `MEDULLA_HOME` is the owner's
//! home, and `medulla` is first on `PATH`.

use std::path::Path;
use std::process::Command;

use crate::common::{Owner, BIN};

/// One fenced block: the line its fence opens on, its tag, its lines.
struct Block {
    line: usize,
    tag: String,
    body: Vec<String>,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in markdown.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (fence, open.take()) {
            (Some(_), Some(b)) => out.push(b),
            (Some(tag), None) => {
                open = Some(Block {
                    line: i + 1,
                    tag: tag.trim().to_string(),
                    body: Vec::new(),
                })
            }
            (None, Some(mut b)) => {
                b.body.push(line.to_string());
                open = Some(b);
            }
            (None, None) => {}
        }
    }
    out
}

/// The skip rule: the toolchain's own commands.
fn is_toolchain(line: &str) -> bool {
    line.trim_start().starts_with("cargo ")
}

/// The README's `sh` blocks as one script (each command echoed as it runs), and the
/// lines the rule skipped.
fn script(markdown: &str) -> (String, Vec<String>, usize) {
    let mut s = String::from("set -e\nset -o pipefail\n");
    let mut skipped = Vec::new();
    let mut ran = 0;
    for b in blocks(markdown).into_iter().filter(|b| b.tag == "sh") {
        s.push_str(&format!("echo '### README.md line {}' >&2\n", b.line));
        for line in b.body {
            if is_toolchain(&line) {
                skipped.push(line);
                continue;
            }
            if !line.trim().is_empty() && !line.trim_start().starts_with('#') {
                ran += 1;
                let shown = line.replace('\'', "'\\''");
                s.push_str(&format!("echo '$ {shown}' >&2\n"));
            }
            s.push_str(&line);
            s.push('\n');
        }
    }
    (s, skipped, ran)
}

#[test]
fn the_readme_runs() {
    let readme_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&readme_path).expect("README.md");
    let (script, skipped, ran) = script(&readme);
    // The two commands that must stay exactly as they are.
    assert!(skipped
        .iter()
        .any(|l| l.trim() == "cargo run --release -- serve"));
    assert!(skipped.iter().any(|l| l.trim() == "cargo test --workspace"));
    assert!(ran >= 10, "the README runs only {ran} commands:\n{script}");

    let mut o = Owner::start();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("code/myproject")).unwrap();
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("PATH", path)
        .env("MEDULLA_HOME", o.home.path())
        .env("MEDULLA_NO_AUTOSTART", "1")
        // The model the tests already fetched: `medulla model fetch` finds it complete.
        .env("MEDULLA_MODEL_DIR", crate::common::model_dir())
        .env_remove("MEDULLA_URL")
        .env_remove("MEDULLA_BRAIN")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("COLUMNS")
        .output()
        .expect("bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "a README command failed (the last `$` line below):\n{stderr}\n--- stdout\n{stdout}"
    );
    assert!(
        !stdout.contains('\u{1b}'),
        "colour off a terminal:\n{stdout}"
    );
    // What the README promises the reader sees.
    assert!(stdout.contains("release-build"), "{stdout}");
    assert!(stdout.contains("2 versions"), "{stdout}");
    assert!(stdout.contains("filed into"), "{stdout}");
    // The day ends with `medulla stop`: the owner is gone.
    let status = o.child.wait().expect("the owner exits");
    assert!(status.success(), "{status:?}");
}

#[test]
fn the_skip_rule_takes_only_the_toolchain() {
    let md = "```sh\ncargo test --workspace\nmedulla status\n```\n```text\nmedulla nope\n```\n";
    let (script, skipped, ran) = script(md);
    assert_eq!(skipped, vec!["cargo test --workspace"]);
    assert_eq!(ran, 1);
    assert!(script.contains("\nmedulla status\n"));
    assert!(!script.contains("medulla nope"));
}
