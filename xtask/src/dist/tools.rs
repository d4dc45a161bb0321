//! The tools `dist` builds and checks with, pinned, installed from the Python package
//! registry into a virtualenv of their own (`target/dist-tools/`), never onto the system:
//! maturin (packs the wheel and drives the build), zig (Linux: links against an old glibc
//! with its own C++ runtime built in) and uv (the checks' `uvx`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;

use super::{run, Platform};

/// What the virtualenv holds, pinned.
const PINS: &[&str] = &["maturin==1.16.0", "ziglang==0.17.1", "uv==0.13.9"];

/// The tools' virtualenv and the programs in it.
pub struct Tools {
    pub venv: PathBuf,
}

impl Tools {
    pub fn bin(&self, name: &str) -> PathBuf {
        self.venv.join("bin").join(name)
    }
}

/// The virtualenv, made (and its pins installed) once; again when the pins change.
pub fn ensure(root: &Path, _platform: &Platform) -> Result<Tools> {
    let venv = root.join("target/dist-tools");
    let stamp = venv.join("pins.txt");
    let want = PINS.join("\n");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(want.as_str()) {
        eprintln!(
            "dist: installing {} into {}",
            PINS.join(", "),
            venv.display()
        );
        run(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "python3 -m venv (install python3 with its venv module)",
        )?;
        run(
            Command::new(venv.join("bin/python"))
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args(PINS),
            "pip install of the build tools",
        )?;
        std::fs::write(&stamp, want)?;
    }
    Ok(Tools { venv })
}
