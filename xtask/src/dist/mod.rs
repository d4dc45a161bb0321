//! `cargo xtask dist [--target TRIPLE] [--check]`: the release artifacts of one platform
//! (issue 65), built the way ruff and uv build theirs and packed the way esbuild and biome
//! pack theirs, into `target/dist/`:
//!
//! - a **wheel** (maturin, `bindings = "bin"`): on Linux linked through zig against glibc
//!   2.28 and tagged `manylinux_2_28`, so `uv tool install`, `uvx` and `pipx` put `medulla`
//!   on the PATH with no compiler;
//! - **npm packages**: this platform's (`os`, `cpu`, `libc`, the binary) and the launcher
//!   (`optionalDependencies` on every platform's, a bin shim that runs the one installed,
//!   or `MEDULLA_BINARY`); no download at install time;
//! - a **release archive** `medulla-VERSION-TARGET.tar.gz` and its `.sha256`.
//!
//! The binary is built once (maturin builds it), stripped, and checked portable (no C++
//! runtime to load; glibc symbols no newer than 2.28). `--check` then installs each
//! artifact offline in a fresh place and runs it (`check.rs`). The release workflow runs
//! these same commands on each platform.
//!
//! - `tools.rs`: the build tools, pinned, in a virtualenv of their own under `target/`.
//! - `wheel.rs`: the wheel and the binary in it.
//! - `npm.rs`: the two npm packages.
//! - `archive.rs`: the archive and its checksum.
//! - `check.rs`: the artifacts installed and run.

mod archive;
mod check;
mod npm;
mod tools;
mod wheel;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

pub use medulla::cli::launcher::{NPM_NAME, PACKAGE_NAME};

const USAGE: &str = "usage: cargo xtask dist [--target TRIPLE] [--check]";

/// A platform the project ships, by its Rust target triple.
pub struct Platform {
    pub triple: &'static str,
    /// The npm package that carries its binary, and its `os`, `cpu`, `libc` fields.
    pub npm: &'static str,
    pub os: &'static str,
    pub cpu: &'static str,
    pub libc: Option<&'static str>,
}

/// Every platform the release builds (Windows is not built yet).
pub const PLATFORMS: &[Platform] = &[
    Platform {
        triple: "x86_64-unknown-linux-gnu",
        npm: "medulla-linux-x64-gnu",
        os: "linux",
        cpu: "x64",
        libc: Some("glibc"),
    },
    Platform {
        triple: "aarch64-unknown-linux-gnu",
        npm: "medulla-linux-arm64-gnu",
        os: "linux",
        cpu: "arm64",
        libc: Some("glibc"),
    },
    Platform {
        triple: "x86_64-apple-darwin",
        npm: "medulla-darwin-x64",
        os: "darwin",
        cpu: "x64",
        libc: None,
    },
    Platform {
        triple: "aarch64-apple-darwin",
        npm: "medulla-darwin-arm64",
        os: "darwin",
        cpu: "arm64",
        libc: None,
    },
];

/// The newest glibc a Linux binary may need.
pub const GLIBC: (u32, u32) = (2, 28);

/// The workspace's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// The version every artifact carries: the workspace's.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// This machine's target triple, as rustc says.
fn host() -> Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .context("run rustc -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .context("rustc -vV named no host")
}

/// Run a command and return its stdout, failing with its output when it fails.
pub fn output(cmd: &mut Command, what: &str) -> Result<String> {
    let out = cmd.output().with_context(|| format!("cannot run {what}"))?;
    if !out.status.success() {
        bail!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Run a command, failing with its output when it fails.
pub fn run(cmd: &mut Command, what: &str) -> Result<()> {
    output(cmd, what).map(drop)
}

/// What one `dist` made.
pub struct Made {
    pub binary: PathBuf,
    pub wheel: PathBuf,
    pub npm_platform: PathBuf,
    pub npm_launcher: PathBuf,
    pub archive: PathBuf,
}

pub fn main(args: &[String]) -> Result<()> {
    for (i, a) in args.iter().enumerate() {
        let value = i > 0 && args[i - 1] == "--target";
        if !value && !["--target", "--check"].contains(&a.as_str()) {
            bail!("unknown argument {a:?}: {USAGE}");
        }
    }
    let triple = match args.iter().position(|a| a == "--target") {
        Some(i) => args.get(i + 1).cloned().context(USAGE)?,
        None => host()?,
    };
    let platform = PLATFORMS
        .iter()
        .find(|p| p.triple == triple)
        .with_context(|| format!("{triple} is not a platform the release builds (Windows is not built yet): one of {}", PLATFORMS.iter().map(|p| p.triple).collect::<Vec<_>>().join(", ")))?;
    let root = root();
    let out = root.join("target/dist");
    std::fs::create_dir_all(&out)?;
    let t = Instant::now();
    let tools = tools::ensure(&root, platform)?;
    let (wheel, binary) = wheel::build(&tools, &root, platform, &out)?;
    if platform.os == "linux" {
        wheel::check_portable(&binary)?;
    }
    let archive = archive::pack(&binary, platform, &out)?;
    let (npm_platform, npm_launcher) = npm::pack(&binary, platform, &out)?;
    let made = Made {
        binary,
        wheel,
        npm_platform,
        npm_launcher,
        archive,
    };
    let built = t.elapsed().as_secs_f64();
    println!("\ncargo xtask dist, {triple}, {built:.0} s:\n");
    for p in [
        &made.binary,
        &made.wheel,
        &made.npm_platform,
        &made.npm_launcher,
        &made.archive,
    ] {
        let bytes = std::fs::metadata(p)?.len();
        println!("  {:>7.1} MB  {}", bytes as f64 / 1e6, p.display());
    }
    if args.iter().any(|a| a == "--check") {
        let t = Instant::now();
        check::all(&tools, platform, &made)?;
        println!(
            "\nchecked: every artifact installed offline and run, {:.0} s",
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
