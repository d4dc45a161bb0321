//! What a client's file or a service unit names to run medulla (SPEC §16): this binary by
//! its path when it is installed somewhere that lasts (cargo, `uv tool install`, `pipx
//! install`, an npm install), else, when it runs from a package cache that is cleaned
//! (`uvx`, `npx`, `pipx run`), the package launcher that fetches this version again.
//! Never a path inside a cache.

use std::path::{Component, Path};

/// The distribution's name in the Python package registry and the Rust crate registry
/// (`medulla` was taken in both); the binary is always `medulla`.
pub const PACKAGE_NAME: &str = "medulla-memory";
/// The npm launcher package.
pub const NPM_NAME: &str = "medulla";

/// How medulla is run from a file that outlives this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launcher {
    /// This binary's path: it is installed somewhere that lasts.
    Installed(String),
    /// From uv's cache (`uvx`): `uvx --from medulla-memory==VERSION medulla`.
    Uvx,
    /// From npm's npx cache: `npx -y medulla@VERSION`.
    Npx,
    /// From pipx's cache (`pipx run`): `pipx run --spec medulla-memory==VERSION medulla`.
    PipxRun,
}

impl Launcher {
    /// The launcher for this process's binary.
    pub fn this() -> anyhow::Result<Launcher> {
        use anyhow::Context;
        let exe = std::env::current_exe().context("cannot tell where this medulla binary is")?;
        Ok(Launcher::of(&exe))
    }

    /// The launcher for a binary at `exe`, judged from its path.
    pub fn of(exe: &Path) -> Launcher {
        let parts: Vec<String> = exe
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        let has = |name: &str| parts.iter().any(|p| p == name);
        let uv_cache = std::env::var_os("UV_CACHE_DIR")
            .filter(|d| !d.is_empty())
            .is_some_and(|d| exe.starts_with(d));
        if has("_npx") {
            Launcher::Npx
        } else if uv_cache
            || parts
                .windows(2)
                .any(|w| w[0] == "uv" && w[1].starts_with("archive-v"))
        {
            Launcher::Uvx
        } else if parts.windows(2).any(|w| w[0] == "pipx" && w[1] == ".cache")
            || parts
                .windows(2)
                .any(|w| w[0] == ".pipx" && w[1] == ".cache")
        {
            Launcher::PipxRun
        } else {
            Launcher::Installed(exe.to_string_lossy().into_owned())
        }
    }

    /// The program and the arguments before medulla's own.
    pub fn program(&self) -> (String, Vec<String>) {
        let v = env!("CARGO_PKG_VERSION");
        match self {
            Launcher::Installed(p) => (p.clone(), Vec::new()),
            Launcher::Uvx => (
                "uvx".into(),
                vec![
                    "--from".into(),
                    format!("{PACKAGE_NAME}=={v}"),
                    "medulla".into(),
                ],
            ),
            Launcher::Npx => ("npx".into(), vec!["-y".into(), format!("{NPM_NAME}@{v}")]),
            Launcher::PipxRun => (
                "pipx".into(),
                vec![
                    "run".into(),
                    "--spec".into(),
                    format!("{PACKAGE_NAME}=={v}"),
                    "medulla".into(),
                ],
            ),
        }
    }

    /// The program and every argument, `args` last.
    pub fn argv(&self, args: &[&str]) -> (String, Vec<String>) {
        let (p, mut a) = self.program();
        a.extend(args.iter().map(|s| s.to_string()));
        (p, a)
    }

    /// One shell command line (a hook's `command`).
    pub fn command_line(&self, args: &[&str]) -> String {
        let (p, a) = self.argv(args);
        std::iter::once(p)
            .chain(a)
            .map(|w| crate::service::route::shell_quote(&w))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What `connect` and `service install` say about it: `None` for an installed binary.
    pub fn note(&self) -> Option<String> {
        let (p, a) = self.program();
        let cache = match self {
            Launcher::Installed(_) => return None,
            Launcher::Uvx => "uv's cache (uvx)",
            Launcher::Npx => "npm's npx cache",
            Launcher::PipxRun => "pipx's cache (pipx run)",
        };
        Some(format!(
            "this medulla runs from {cache}, which is cleaned: the files name `{} {}` instead, which fetches this version again when it is gone (install it to name its path: `uv tool install {PACKAGE_NAME}`, `pipx install {PACKAGE_NAME}` or `npm install -g {NPM_NAME}`)",
            p,
            a.join(" ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_in_a_package_cache_is_named_by_its_launcher_never_its_path() {
        let v = env!("CARGO_PKG_VERSION");
        let uvx = Launcher::of(Path::new("/home/a/.cache/uv/archive-v0/AbC123/bin/medulla"));
        assert_eq!(uvx, Launcher::Uvx);
        assert_eq!(
            uvx.command_line(&["prime", "--client", "claude"]),
            format!("uvx --from {PACKAGE_NAME}=={v} medulla prime --client claude")
        );
        let npx = Launcher::of(Path::new(
            "/home/a/.npm/_npx/1f2e/node_modules/medulla-linux-x64-gnu/bin/medulla",
        ));
        assert_eq!(
            npx.argv(&["bridge"]),
            (
                "npx".into(),
                vec!["-y".into(), format!("medulla@{v}"), "bridge".into()]
            )
        );
        assert_eq!(
            Launcher::of(Path::new("/home/a/.local/pipx/.cache/9a/bin/medulla")),
            Launcher::PipxRun
        );
        for stays in [
            "/home/a/.cargo/bin/medulla",
            "/home/a/.local/share/uv/tools/medulla-memory/bin/medulla",
            "/home/a/.local/pipx/venvs/medulla-memory/bin/medulla",
            "/usr/lib/node_modules/medulla-linux-x64-gnu/bin/medulla",
            "/home/a/my dir/medulla",
        ] {
            let l = Launcher::of(Path::new(stays));
            assert_eq!(l, Launcher::Installed(stays.into()), "{stays}");
            assert!(l.note().is_none());
        }
        assert_eq!(
            Launcher::Installed("/home/a/my dir/medulla".into()).command_line(&["bridge"]),
            "'/home/a/my dir/medulla' bridge"
        );
    }
}
