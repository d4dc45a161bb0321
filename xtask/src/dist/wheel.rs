//! The wheel, and the binary in it: maturin builds the `medulla` binary (`bindings =
//! "bin"`, the `dist` profile: stripped, no debug info) and packs it. On Linux it links
//! through zig against glibc 2.28 (`manylinux_2_28`); usearch's SIMD code needs
//! `-mpopcnt` there. The project file maturin reads is written under `target/dist/`,
//! so the workspace's top level holds nothing but the workspace.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::tools::Tools;
use super::{run, version, Platform, GLIBC, PACKAGE_NAME};

/// The `pyproject.toml` maturin packs from: the distribution's name and metadata, the
/// workspace's `Cargo.toml` for the build.
fn pyproject(root: &Path) -> String {
    let manifest = root.join("Cargo.toml");
    format!(
        r#"[build-system]
requires = ["maturin>=1.16,<2"]
build-backend = "maturin"

[project]
name = "{PACKAGE_NAME}"
version = "{version}"
description = "medulla: a local memory owner for AI coding agents (one brain per project, one shared medulla), as one prebuilt binary"
requires-python = ">=3.8"
license = {{ text = "MIT OR Apache-2.0" }}
keywords = ["mcp", "memory", "agents", "claude", "codex"]
classifiers = [
  "Programming Language :: Rust",
  "Environment :: Console",
  "Operating System :: POSIX :: Linux",
  "Operating System :: MacOS",
]

[tool.maturin]
bindings = "bin"
manifest-path = "{manifest}"
profile = "dist"
strip = true
"#,
        version = version(),
        manifest = manifest.display()
    )
}

/// Build the wheel into `out`: its path, and the binary it carries.
pub fn build(tools: &Tools, root: &Path, p: &Platform, out: &Path) -> Result<(PathBuf, PathBuf)> {
    let project = out.join("python");
    std::fs::create_dir_all(&project)?;
    std::fs::write(project.join("pyproject.toml"), pyproject(root))?;
    let before: Vec<PathBuf> = wheels(out)?;
    for w in &before {
        std::fs::remove_file(w)?;
    }
    let mut cmd = Command::new(tools.bin("maturin"));
    cmd.current_dir(&project)
        .args(["build", "--target", p.triple, "--out"])
        .arg(out)
        // The zig maturin runs is the tools' own.
        .env("PATH", prepend_path(&tools.venv.join("bin")));
    if p.os == "linux" {
        cmd.args(["--zig", "--compatibility"])
            .arg(format!("manylinux_{}_{}", GLIBC.0, GLIBC.1));
    }
    if p.triple == "x86_64-unknown-linux-gnu" {
        // usearch's SIMD library uses the population count instruction.
        let var = format!("CFLAGS_{}", p.triple.replace('-', "_"));
        cmd.env(var, "-mpopcnt");
    }
    run(&mut cmd, "maturin build")?;
    let made = wheels(out)?;
    let wheel = match made.as_slice() {
        [w] => w.clone(),
        other => bail!(
            "maturin left {} wheels in {}: {other:?}",
            other.len(),
            out.display()
        ),
    };
    let binary = root
        .join("target")
        .join(p.triple)
        .join("dist")
        .join("medulla");
    if !binary.is_file() {
        bail!("the built binary is not at {}", binary.display());
    }
    Ok((wheel, binary))
}

fn wheels(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect())
}

/// `PATH` with `dir` first.
pub fn prepend_path(dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    if let Some(p) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(paths).unwrap_or_default()
}

/// A Linux binary that runs anywhere glibc 2.28 does: it loads no C++ runtime, and no
/// symbol it takes from glibc is newer than [`GLIBC`].
pub fn check_portable(binary: &Path) -> Result<()> {
    let out = Command::new("readelf")
        .args(["--wide", "--dynamic", "--dyn-syms"])
        .arg(binary)
        .output()
        .context("readelf (binutils) reads the binary's dynamic section")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let needed: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect();
    if let Some(cxx) = needed
        .iter()
        .find(|l| l.contains("stdc++") || l.contains("c++"))
    {
        bail!(
            "{} needs {cxx} at run time: the C++ runtime must be linked in",
            binary.display()
        );
    }
    let newest = glibc_versions(&text).into_iter().max();
    if let Some(v) = newest.filter(|v| *v > GLIBC) {
        bail!(
            "{} needs glibc {}.{}, newer than {}.{}",
            binary.display(),
            v.0,
            v.1,
            GLIBC.0,
            GLIBC.1
        );
    }
    eprintln!(
        "dist: {} needs {} and glibc {}",
        binary.display(),
        needed.join(", "),
        newest.map_or("(none)".into(), |v| format!("{}.{}", v.0, v.1))
    );
    Ok(())
}

/// Every `GLIBC_x.y` version the symbol table names.
pub fn glibc_versions(readelf: &str) -> Vec<(u32, u32)> {
    readelf
        .split("GLIBC_")
        .skip(1)
        .filter_map(|s| {
            let v: String = s
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let mut it = v.split('.');
            Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
        })
        .collect()
}
