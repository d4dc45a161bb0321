//! opencode's hooks: opencode has no hook entries in its configuration, it loads plugins
//! from `.opencode/plugins/` (the project's) and `~/.config/opencode/plugins/` (the
//! user's). `connect opencode --hooks` writes medulla's plugin there (`opencode.js`, this
//! binary's command filled in), which runs `prime`, `hint` and `nudge` as the other
//! clients' hooks run them; `disconnect` removes the file. medulla owns the file whole.

use std::path::{Path, PathBuf};

use super::clients::{Places, Scope};
use super::files::Edit;

/// The plugin's source, before this binary's command is filled in.
const PLUGIN: &str = include_str!("opencode.js");

/// Where the plugin goes for `scope`.
fn plugin_path(scope: Scope, root: &Path) -> anyhow::Result<PathBuf> {
    let dir = match scope {
        Scope::Project => root.join(".opencode"),
        Scope::User => Places::from_env()?.config.join("opencode"),
    };
    Ok(dir.join("plugins").join("medulla.js"))
}

pub fn hook_edits(scope: Scope, root: &Path) -> anyhow::Result<Vec<Edit>> {
    Ok(vec![Edit {
        path: plugin_path(scope, root)?,
        apply: plugin,
        undo: removed,
    }])
}

/// The plugin with this binary's command in it.
fn plugin(_before: Option<&str>, _path: &Path) -> anyhow::Result<String> {
    let (program, args) = super::launcher()?.argv(&[]);
    let argv: Vec<String> = std::iter::once(program).chain(args).collect();
    Ok(PLUGIN
        .replace("__MEDULLA__", &serde_json::to_string(&argv)?)
        .replace(
            "__MIN_TOOL_CALLS__",
            &crate::cli::nudge::MIN_TOOL_CALLS.to_string(),
        ))
}

/// `disconnect`: the file goes (an empty text removes it).
fn removed(_before: &str, _path: &Path) -> anyhow::Result<Option<String>> {
    Ok(Some(String::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_names_this_binary_and_is_whole() {
        let text = plugin(None, Path::new("/p/.opencode/plugins/medulla.js")).unwrap();
        assert!(!text.contains("__"), "every placeholder filled");
        assert!(text.contains("export const Medulla = async"));
        let line = text
            .lines()
            .find(|l| l.starts_with("const MEDULLA = "))
            .unwrap();
        let argv: Vec<String> =
            serde_json::from_str(line.trim_start_matches("const MEDULLA = ")).unwrap();
        assert!(!argv.is_empty());
    }
}
