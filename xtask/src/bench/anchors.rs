//! `cargo xtask bench --anchors [--claims 10000] [--files 100] [--seeks 300] [--no-model]`:
//! what evidence anchors cost recall. Two brains on one release owner hold the same
//! claims, each with ten evidence entries: in one they name files inside the brain's
//! root (anchored, checked on every surfaced row), in the other they are not paths (no
//! anchors). Seek p50 over one kept-alive MCP session, the two brains interleaved; then
//! again after a tenth of the files changed (each changed file hashed once, then cached).

use std::time::Instant;

use anyhow::{bail, Result};
use serde_json::json;

use super::http::{session, start_logged};
use super::runner::{alternate, header, pct};
use crate::mcp::Session;

pub fn run(args: &[String]) -> Result<()> {
    for a in args.iter().filter(|a| a.starts_with("--")) {
        if !["--claims", "--files", "--seeks", "--no-model"].contains(&a.as_str()) {
            bail!("unknown argument {a:?}: usage: cargo xtask bench --anchors [--claims 10000] [--files 100] [--seeks 300] [--no-model]");
        }
    }
    let claims = crate::flag_num(args, "--claims", 10_000)?;
    let files = crate::flag_num(args, "--files", 100)?.max(10);
    let seeks = crate::flag_num(args, "--seeks", 300)?;
    let model = !args.iter().any(|a| a == "--no-model");
    let home = tempfile::tempdir()?;
    let projects = tempfile::tempdir()?;
    let anchored = std::fs::canonicalize(projects.path())?.join("anchored");
    let plain = std::fs::canonicalize(projects.path())?.join("plain");
    std::fs::create_dir_all(anchored.join("src"))?;
    std::fs::create_dir_all(&plain)?;
    for f in 0..files {
        std::fs::write(
            anchored.join(format!("src/f{f}.rs")),
            format!("// module {f}\npub const LIMIT: usize = {f};\n").repeat(20),
        )?;
    }
    let o = start_logged(home.path(), model, None)?;
    let (a_root, p_root) = (
        anchored.to_string_lossy().into_owned(),
        plain.to_string_lossy().into_owned(),
    );
    for r in [&a_root, &p_root] {
        o.call("bootstrap", json!({ "root": r }), r)?;
    }
    let t = Instant::now();
    for i in 0..claims {
        let text = format!(
            "observation {i} about build cache flakes and deploy timeouts {}",
            i % 97
        );
        let files_ev: Vec<String> = (0..10)
            .map(|j| format!("src/f{}.rs", (i * 7 + j) % files))
            .collect();
        let plain_ev: Vec<String> = (0..10).map(|j| format!("ticket-{}", i * 10 + j)).collect();
        o.call(
            "memorize",
            json!({ "label": format!("claim {i}"), "text": text, "evidence": files_ev }),
            &a_root,
        )?;
        o.call(
            "memorize",
            json!({ "label": format!("claim {i}"), "text": text, "evidence": plain_ev }),
            &p_root,
        )?;
    }
    eprintln!(
        "filled 2 × {claims} claims in {:.0} s",
        t.elapsed().as_secs_f64()
    );
    let mut sa = session(&o, &a_root)?;
    let mut sp = session(&o, &p_root)?;
    let mut measure = |label: &str| -> Result<(f64, f64)> {
        let qs: Vec<_> = (0..seeks)
            .map(|i| json!({ "query": format!("deploy timeouts {}", i % 97) }))
            .collect();
        // Not anchored first, then anchored, round by round.
        let (mut tp, mut ta) = alternate(
            seeks,
            |i| {
                sp.call_tool("seek", qs[i].clone())?;
                Ok(())
            },
            |i| {
                let a = sa.call_tool("seek", qs[i].clone())?;
                if i == 0 && label == "changed" && !a.text.contains("evidence_changed") {
                    bail!(
                        "no row says its evidence changed after the files changed: {}",
                        a.text
                    );
                }
                Ok(())
            },
        )?;
        Ok((pct(&mut ta, 0.5), pct(&mut tp, 0.5)))
    };
    let (a, p) = measure("as written")?;
    header("| evidence | seek p50 anchored (ms) | seek p50 not anchored (ms) | ratio |");
    println!("| as written | {a:.3} | {p:.3} | {:.2} |", a / p);
    for f in (0..files).step_by(10) {
        std::fs::write(anchored.join(format!("src/f{f}.rs")), "// rewritten\n")?;
    }
    let (a, p) = measure("changed")?;
    println!(
        "| a tenth of the files changed | {a:.3} | {p:.3} | {:.2} |",
        a / p
    );
    Ok(())
}
