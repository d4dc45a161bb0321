//! The npm packages, in the esbuild and biome pattern: one package per platform carrying
//! the binary (its `os`, `cpu` and `libc` fields let npm install only the one that fits),
//! and the launcher `medulla`, whose `optionalDependencies` name every platform's and
//! whose bin shim runs the one installed (or `MEDULLA_BINARY`). Nothing downloads at
//! install time: no install script.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Result};
use serde_json::json;

use super::{version, Platform, NPM_NAME, PLATFORMS};

/// The launcher's bin shim: which platform package fits this machine, and its binary run
/// with this process's arguments, standard streams and exit code.
const SHIM: &str = r#"#!/usr/bin/env node
// medulla's launcher: runs the prebuilt binary of the platform package npm installed
// beside it (one of the optional dependencies), or the one MEDULLA_BINARY names.
"use strict";
const { spawnSync } = require("child_process");

const PACKAGES = __PACKAGES__;

function libc() {
  if (process.platform !== "linux") return null;
  const report = process.report && process.report.getReport && process.report.getReport();
  return report && report.header && report.header.glibcVersionRuntime ? "glibc" : "musl";
}

function binary() {
  if (process.env.MEDULLA_BINARY) return process.env.MEDULLA_BINARY;
  const key = [process.platform, process.arch, libc()].filter(Boolean).join("-");
  const pkg = PACKAGES[key];
  if (!pkg) {
    console.error(`medulla: no prebuilt binary for ${key} (built: ${Object.keys(PACKAGES).join(", ")}); build it from source with cargo, then set MEDULLA_BINARY to its path`);
    process.exit(1);
  }
  try {
    return require.resolve(`${pkg}/bin/medulla`);
  } catch (e) {
    console.error(`medulla: the package ${pkg} is not installed (npm skips optional dependencies with --no-optional or --omit=optional): install it, or set MEDULLA_BINARY`);
    process.exit(1);
  }
}

const r = spawnSync(binary(), process.argv.slice(2), { stdio: "inherit" });
if (r.error) {
  console.error(`medulla: ${r.error.message}`);
  process.exit(1);
}
if (r.signal) process.kill(process.pid, r.signal);
process.exit(r.status === null ? 1 : r.status);
"#;

/// The key the shim computes for a platform.
fn key(p: &Platform) -> String {
    let mut k = format!("{}-{}", p.os, p.cpu);
    if let Some(l) = p.libc {
        k.push('-');
        k.push_str(l);
    }
    k
}

/// `npm pack` a package directory into `out`: the tarball's path.
fn npm_pack(dir: &Path, out: &Path) -> Result<PathBuf> {
    let o = Command::new("npm")
        .arg("pack")
        .arg("--pack-destination")
        .arg(out)
        .current_dir(dir)
        .output()?;
    if !o.status.success() {
        bail!(
            "npm pack in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let name = String::from_utf8_lossy(&o.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_string();
    let tgz = out.join(&name);
    if !tgz.is_file() {
        bail!("npm pack said {name:?}, which is not in {}", out.display());
    }
    Ok(tgz)
}

/// This platform's package and the launcher, packed into `out`.
pub fn pack(binary: &Path, p: &Platform, out: &Path) -> Result<(PathBuf, PathBuf)> {
    let stage = out.join("npm");
    let _ = std::fs::remove_dir_all(&stage);
    let plat = stage.join(p.npm);
    std::fs::create_dir_all(plat.join("bin"))?;
    let bin = plat.join("bin/medulla");
    std::fs::copy(binary, &bin)?;
    let mut manifest = json!({
        "name": p.npm,
        "version": version(),
        "description": format!("The medulla binary for {} {}", p.os, p.cpu),
        "license": "MIT OR Apache-2.0",
        "os": [p.os],
        "cpu": [p.cpu],
        "files": ["bin/medulla"],
        "preferUnplugged": true,
    });
    if let Some(l) = p.libc {
        manifest["libc"] = json!([l]);
    }
    std::fs::write(
        plat.join("package.json"),
        serde_json::to_vec_pretty(&manifest)?,
    )?;
    std::fs::write(plat.join("README.md"), format!("The prebuilt `medulla` binary for {}: install the `{NPM_NAME}` package, which depends on this one.\n", p.triple))?;

    let launcher = stage.join(NPM_NAME);
    std::fs::create_dir_all(launcher.join("bin"))?;
    let packages: serde_json::Map<String, serde_json::Value> =
        PLATFORMS.iter().map(|q| (key(q), json!(q.npm))).collect();
    let shim = SHIM.replace("__PACKAGES__", &serde_json::to_string(&packages)?);
    std::fs::write(launcher.join("bin/medulla.js"), shim)?;
    let optional: serde_json::Map<String, serde_json::Value> = PLATFORMS
        .iter()
        .map(|q| (q.npm.to_string(), json!(version())))
        .collect();
    std::fs::write(
        launcher.join("package.json"),
        serde_json::to_vec_pretty(&json!({
            "name": NPM_NAME,
            "version": version(),
            "description": "medulla: a local memory owner for AI coding agents (one brain per project, one shared medulla)",
            "license": "MIT OR Apache-2.0",
            "bin": { "medulla": "bin/medulla.js" },
            "files": ["bin/medulla.js"],
            "engines": { "node": ">=16" },
            "optionalDependencies": optional,
        }))?,
    )?;
    std::fs::copy(super::root().join("README.md"), launcher.join("README.md"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in [&bin, &launcher.join("bin/medulla.js")] {
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    let plat_tgz = npm_pack(&plat, out)?;
    let launcher_tgz = npm_pack(&launcher, out)?;
    Ok((plat_tgz, launcher_tgz))
}
