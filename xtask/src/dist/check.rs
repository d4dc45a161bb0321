//! `dist --check`: every artifact installed offline in a fresh place and run, as a
//! person would (issue 65's "must show"):
//!
//! - the wheel into a fresh virtualenv with `pip install --no-index`: `medulla --version`
//!   is the crate's version, and it serves `/api/health`;
//! - the wheel through `uvx --offline --from WHEEL`: `--version`, and `connect` run that
//!   way names the package launcher, never a path inside uv's cache;
//! - the two npm tarballs with `npm install --offline` into a fresh prefix, then `npx
//!   --offline medulla --version`;
//! - the archive's checksum and its binary's `--version`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::tools::Tools;
use super::{output, run, version, Made, Platform, PACKAGE_NAME};

/// `medulla --version` names this version.
fn says_version(text: &str, what: &str) -> Result<()> {
    if !text.contains(version()) {
        bail!("{what} --version said {text:?}, not {}", version());
    }
    eprintln!("dist --check: {what}: {}", text.trim());
    Ok(())
}

/// A home of its own, an owner on a free port: it answers `/api/health`.
fn serves(medulla: &Path, scratch: &Path) -> Result<()> {
    let home = scratch.join("home");
    std::fs::create_dir_all(&home)?;
    let mut child = Command::new(medulla)
        .args(["serve", "--listen", "127.0.0.1:0", "--no-model", "--home"])
        .arg(&home)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("medulla serve")?;
    let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let first = lines.next().context("the owner printed nothing")??;
    // Keep reading: an owner whose stdout is closed fails its next line.
    std::thread::spawn(move || for _ in lines {});
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .with_context(|| format!("no URL in {first:?}"))?
        .to_string();
    let health: Option<serde_json::Value> = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()?
        .get(format!("{url}/api/health"))
        .send()
        .ok()
        .and_then(|r| r.json().ok());
    let _ = child.kill();
    let _ = child.wait();
    match health {
        Some(h) if h["status"] == "ok" => {
            eprintln!(
                "dist --check: the installed binary served /api/health ({})",
                h["version"]
            );
            Ok(())
        }
        _ => bail!("the installed binary's owner did not answer /api/health at {url}"),
    }
}

pub fn all(tools: &Tools, p: &Platform, made: &Made) -> Result<()> {
    let scratch = tempfile::tempdir()?;
    let s = scratch.path();

    // The wheel, into a fresh virtualenv, offline.
    let venv = s.join("venv");
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    )?;
    run(
        Command::new(venv.join("bin/pip"))
            .args([
                "install",
                "--no-index",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(&made.wheel),
        "pip install --no-index of the wheel",
    )?;
    let medulla = venv.join("bin/medulla");
    says_version(
        &output(Command::new(&medulla).arg("--version"), "medulla")?,
        "pip's medulla",
    )?;
    if p.os == "linux" {
        let ldd = output(Command::new("ldd").arg(&medulla), "ldd")?;
        if ldd.contains("libstdc++") {
            bail!("the installed medulla loads libstdc++:\n{ldd}");
        }
        super::wheel::check_portable(&medulla)?;
    }
    serves(&medulla, s)?;

    // The wheel through uvx, offline, with a cache of its own.
    let cache = s.join("uv-cache");
    let uvx = |args: &[&str]| {
        let mut c = Command::new(tools.bin("uv"));
        c.args(["tool", "run", "--offline", "--from"])
            .arg(&made.wheel)
            .arg("medulla")
            .args(args)
            .env("UV_CACHE_DIR", &cache)
            .env("UV_TOOL_DIR", s.join("uv-tools"))
            .env("HOME", s.join("user"))
            .env("MEDULLA_HOME", s.join("user/.medulla"))
            .env("MEDULLA_NO_AUTOSTART", "1");
        c
    };
    std::fs::create_dir_all(s.join("user"))?;
    says_version(
        &output(&mut uvx(&["--version"]), "uvx medulla")?,
        "uvx's medulla",
    )?;
    let project = s.join("project");
    std::fs::create_dir_all(&project)?;
    for args in [
        &["connect", "claude-code", "--scope", "user", "--dry-run"][..],
        &["connect", "claude-code", "--hooks", "--dry-run"][..],
    ] {
        let out = output(
            uvx(args).current_dir(&project),
            "uvx medulla connect --dry-run",
        )?;
        let cache_s = std::fs::canonicalize(&cache)?
            .to_string_lossy()
            .into_owned();
        if out.contains(&cache_s) || out.contains(&*cache.to_string_lossy()) {
            bail!("connect run through uvx wrote a path inside uv's cache:\n{out}");
        }
        let launcher = format!("{PACKAGE_NAME}=={}", version());
        if !out.contains(&launcher) {
            bail!("connect run through uvx does not name the launcher ({launcher}):\n{out}");
        }
    }
    eprintln!(
        "dist --check: connect through uvx names `uvx --from {PACKAGE_NAME}=={}`, no cache path",
        version()
    );

    // The npm tarballs into a fresh prefix, offline; then npx.
    let prefix = s.join("npm");
    std::fs::create_dir_all(&prefix)?;
    std::fs::write(
        prefix.join("package.json"),
        "{\"name\": \"dist-check\", \"private\": true}",
    )?;
    run(
        Command::new("npm")
            .args(["install", "--offline", "--no-audit", "--no-fund", "--cache"])
            .arg(s.join("npm-cache"))
            .arg(&made.npm_platform)
            .arg(&made.npm_launcher)
            .current_dir(&prefix),
        "npm install --offline of the two tarballs",
    )?;
    let out = output(
        Command::new("npx")
            .args(["--offline", "--cache"])
            .arg(s.join("npm-cache"))
            .args(["medulla", "--version"])
            .current_dir(&prefix),
        "npx --offline medulla --version",
    )?;
    says_version(&out, "npx's medulla")?;

    // The archive: its checksum, and the binary in it.
    let sum = std::fs::read_to_string(format!("{}.sha256", made.archive.display()))?;
    if !sum.starts_with(&super::archive::sha256_file(&made.archive)?) {
        bail!(
            "{}.sha256 does not match the archive",
            made.archive.display()
        );
    }
    let unpacked = s.join("archive");
    std::fs::create_dir_all(&unpacked)?;
    run(
        Command::new("tar")
            .arg("-xzf")
            .arg(&made.archive)
            .arg("-C")
            .arg(&unpacked),
        "tar -x",
    )?;
    let inner = unpacked
        .join(format!("medulla-{}-{}", version(), p.triple))
        .join("medulla");
    says_version(
        &output(
            Command::new(inner).arg("--version"),
            "the archive's medulla",
        )?,
        "the archive's medulla",
    )?;
    Ok(())
}
