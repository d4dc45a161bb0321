//! The roster: which brains exist. Disk is the truth: every directory under
//! `$MEDULLA_HOME/brains/` is listed, warm or dormant, readable or not.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::store_id::Fingerprint;

/// `hex(sha256(root))[0..16]`.
pub fn fingerprint(root: &str) -> Fingerprint {
    Fingerprint::of_root(root)
}

/// Normalise a path without touching the disk: absolute, `.` and `..` folded.
pub fn lexical_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Longest accepted path (caller root, bootstrap root, import or export directory).
pub const MAX_PATH_BYTES: usize = 4096;

/// Why a path a caller sent cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("{raw:?} is not an absolute path: send the absolute path of your working directory")]
    NotAbsolute { raw: String },
    /// A committed project file's variable that reached the owner as written.
    #[error("{raw:?} is a variable the client did not expand: a project file `medulla connect` wrote names the caller root as a variable the client expands to the directory it runs in (`${{PWD}}` for Claude Code and Gemini CLI, `${{workspaceFolder}}` for VS Code and Cursor); start the client from a shell in the project, so PWD is set, or register the stdio bridge instead with `medulla connect CLIENT --scope user`")]
    Unexpanded { raw: String },
    #[error("a path is {len} bytes, over the limit of {max}: shorten it")]
    TooLong { len: usize, max: usize },
    #[error("a path carries a control character: send a plain path")]
    ControlCharacters,
    #[error("refusing to bootstrap {root}: {why}")]
    Refused { root: String, why: RootRefusal },
}

impl PathError {
    pub fn code(&self) -> &'static str {
        match self {
            PathError::NotAbsolute { .. } => "invalid_input",
            PathError::Unexpanded { .. } => "caller_root_unexpanded",
            PathError::TooLong { .. } => "too_long",
            PathError::ControlCharacters => "control_characters",
            PathError::Refused { why, .. } => why.code(),
        }
    }
}

type Result<T, E = PathError> = std::result::Result<T, E>;

/// A caller's root as routing sees it: absolute, canonical when it exists on disk,
/// lexically normalised when it does not (a caller may name a path this machine lacks).
pub fn normalize_caller_root(raw: &str) -> Result<PathBuf> {
    let raw = raw.trim();
    if raw.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong {
            len: raw.len(),
            max: MAX_PATH_BYTES,
        });
    }
    if raw.chars().any(char::is_control) {
        return Err(PathError::ControlCharacters);
    }
    if raw.starts_with("${") {
        return Err(PathError::Unexpanded {
            raw: raw.to_string(),
        });
    }
    let p = Path::new(raw);
    if raw.is_empty() || !p.is_absolute() {
        return Err(PathError::NotAbsolute {
            raw: raw.to_string(),
        });
    }
    Ok(std::fs::canonicalize(p).unwrap_or_else(|_| lexical_normal(p)))
}

/// The path with `.` and `..` folded lexically, then canonicalised through the longest
/// existing ancestor (so a symlink on the way is resolved even when the tail is missing).
pub fn resolve_path(p: &Path) -> PathBuf {
    let p = lexical_normal(p);
    for anc in p.ancestors() {
        if let Ok(c) = std::fs::canonicalize(anc) {
            return match p.strip_prefix(anc) {
                Ok(rest) if !rest.as_os_str().is_empty() => c.join(rest),
                _ => c,
            };
        }
    }
    p
}

/// Why a directory can never be a brain's root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RootRefusal {
    /// `/`: a brain there would cover every directory, a catch-all default brain.
    FilesystemRoot,
    /// `/etc`, `/usr`, `/tmp`, `/home`, ...: not a project.
    SystemDirectory,
    /// `$MEDULLA_HOME` or anything inside it: the owner's own data.
    MedullaHome,
    /// The user's home directory itself: it would cover every project under it.
    HomeDirectory,
    /// Missing, or a file.
    NotADirectory,
}

impl RootRefusal {
    pub fn code(self) -> &'static str {
        match self {
            RootRefusal::FilesystemRoot => "root_is_filesystem_root",
            RootRefusal::SystemDirectory => "root_is_system_directory",
            RootRefusal::MedullaHome => "root_inside_medulla_home",
            RootRefusal::HomeDirectory => "root_is_home_directory",
            RootRefusal::NotADirectory => "root_not_a_directory",
        }
    }
}

impl std::fmt::Display for RootRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RootRefusal::FilesystemRoot => "it is the filesystem root, and a brain there would catch every directory on the machine: bootstrap a project's own directory",
            RootRefusal::SystemDirectory => "it is a system directory, not a project: bootstrap a project's own directory",
            RootRefusal::MedullaHome => "it is the medulla home or inside it, the owner's own data: bootstrap a project's directory",
            RootRefusal::HomeDirectory => "it is your home directory, and a brain there would catch every project under it: bootstrap each project's directory",
            RootRefusal::NotADirectory => "it is not an existing directory: bootstrap the root of a project that exists on this machine",
        })
    }
}

/// Directories that are never a project, nor is anything inside them.
const SYSTEM_TREES: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/run",
    "/sbin",
    "/sys",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libexec",
    "/usr/include",
    "/usr/share",
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/var/spool",
    "/var/run",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var",
];
/// Directories that are not a project themselves, though projects may live inside.
const SYSTEM_DIRS: &[&str] = &[
    "/home",
    "/root",
    "/tmp",
    "/usr",
    "/usr/local",
    "/usr/src",
    "/var",
    "/var/tmp",
    "/opt",
    "/srv",
    "/mnt",
    "/media",
    "/Users",
    "/Volumes",
    "/private",
    "/private/tmp",
    "/Applications",
];

/// Why `root` (absolute and canonical) can never be a brain's root, judged from the path
/// alone; `None` when it can.
pub fn root_refusal(
    root: &Path,
    medulla_home: &Path,
    user_home: Option<&Path>,
) -> Option<RootRefusal> {
    if root.parent().is_none() {
        return Some(RootRefusal::FilesystemRoot);
    }
    if root.starts_with(medulla_home) {
        return Some(RootRefusal::MedullaHome);
    }
    if user_home.is_some_and(|h| h == root) {
        return Some(RootRefusal::HomeDirectory);
    }
    if SYSTEM_DIRS.iter().any(|d| root == Path::new(d))
        || SYSTEM_TREES.iter().any(|d| root.starts_with(d))
    {
        return Some(RootRefusal::SystemDirectory);
    }
    None
}

/// A root for bootstrap: an existing directory, canonicalised (symlinks resolved), that
/// may be a project's root.
pub fn canonical_root(raw: &str, medulla_home: &Path, user_home: Option<&Path>) -> Result<PathBuf> {
    let p = normalize_caller_root(raw)?;
    let refused = |why| PathError::Refused {
        root: p.display().to_string(),
        why,
    };
    if !p.is_dir() {
        return Err(refused(RootRefusal::NotADirectory));
    }
    if let Some(why) = root_refusal(&p, medulla_home, user_home) {
        return Err(refused(why));
    }
    Ok(p)
}

/// A brain's identity file, `brains/<fp>/brain.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub root: String,
    pub fingerprint: Fingerprint,
    pub created: i64,
    /// Counts as of the last time the brain was unloaded or flushed.
    #[serde(default)]
    pub counts: ManifestCounts,
    /// The repository the brain belongs to (SPEC §3), once known: recorded at bootstrap,
    /// or when its repository's first commit appears.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<RepoBinding>,
    /// Checkouts of that repository the brain has served besides its root (worktrees,
    /// clones, the places it was moved to), in the order they first asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkouts: Vec<CheckoutSeen>,
    /// Bootstrapped with `--own`: a checkout's brain of its own, reached only through its
    /// root, never as its repository's brain.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own: bool,
    /// Merged into this brain (its root) by `brains merge`: kept on disk, listed, never
    /// routed to again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_into: Option<String>,
}

/// The repository a brain belongs to, and where its root stands in a checkout of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RepoBinding {
    /// `repo:<root commit>@<remote>` (or `repo:<root commit>` with no remote): the
    /// project's identity, as the team names it.
    pub key: String,
    /// The normalized remote URL, or the checkout's directory name.
    pub label: String,
    /// The root relative to its checkout's top directory (empty at the top): a brain of a
    /// sub-project is that sub-project in every checkout.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subdir: String,
}

/// A checkout a brain served besides its root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckoutSeen {
    /// The brain's root as it stands in that checkout.
    pub path: String,
    /// When it first asked, ms since the epoch.
    pub first_seen: i64,
    /// Its project's identity (`repo:<root commit>@<remote>`) as last recorded; absent
    /// for a checkout recorded before a project was its history and its remote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Another project's checkout, served before projects that share history were told
    /// apart (a template's child, a fork): never routed to the brain by its path again;
    /// `brains split` gives it a brain of its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub foreign: bool,
}

impl CheckoutSeen {
    /// A checkout first seen now, of the project `key`.
    pub fn new(path: String, first_seen: i64, key: Option<String>) -> CheckoutSeen {
        CheckoutSeen {
            path,
            first_seen,
            key,
            foreign: false,
        }
    }
}

impl Manifest {
    /// A new brain's manifest: its root, bootstrapped now.
    pub fn new(root: String, created: i64) -> Manifest {
        Manifest {
            fingerprint: fingerprint(&root),
            root,
            created,
            counts: Default::default(),
            repo: None,
            checkouts: Vec::new(),
            own: false,
            merged_into: None,
        }
    }

    /// Every checkout the brain has served, its root (where it was bootstrapped) first.
    pub fn checkout_paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.root.as_str()).chain(self.checkouts.iter().map(|c| c.path.as_str()))
    }

    /// Its root and the checkouts of its own project it served: where it is this
    /// project's brain (another project's checkouts, served before projects sharing
    /// history were told apart, are left out).
    pub fn project_paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.root.as_str()).chain(
            self.checkouts
                .iter()
                .filter(|c| !c.foreign)
                .map(|c| c.path.as_str()),
        )
    }

    /// Has it served this checkout (its root included)?
    pub fn knows_checkout(&self, path: &str) -> bool {
        self.checkout_paths().any(|p| p == path)
    }

    /// Where the brain's files stand now: its root, else the first checkout it served
    /// that still exists (a moved root), else the root.
    pub fn live_checkout(&self) -> PathBuf {
        self.checkout_paths()
            .map(PathBuf::from)
            .find(|p| p.is_dir())
            .unwrap_or_else(|| PathBuf::from(&self.root))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ManifestCounts {
    pub live_claims: u64,
    pub history_versions: u64,
    pub acts: u64,
    pub as_of: i64,
    /// Live claims agents wrote that no person had looked at.
    #[serde(default)]
    pub unreviewed: u64,
}

/// One row of the roster: a directory on disk and what could be read of it.
#[derive(Debug, Clone, Serialize)]
pub struct RosterEntry {
    pub dir: PathBuf,
    pub manifest: Option<Manifest>,
    /// Why the manifest could not be read, when it could not.
    pub problem: Option<String>,
}

impl RosterEntry {
    pub fn fingerprint(&self) -> Fingerprint {
        match &self.manifest {
            Some(m) => m.fingerprint.clone(),
            None => Fingerprint::from_manifest(
                self.dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ),
        }
    }
}

pub const MANIFEST_FILE: &str = "brain.json";

/// Read every brain directory under `brains_dir`.
pub fn scan(brains_dir: &Path) -> Vec<RosterEntry> {
    let Ok(read) = std::fs::read_dir(brains_dir) else {
        return Vec::new();
    };
    let mut out: Vec<RosterEntry> = read
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let dir = e.path();
            match read_manifest(&dir) {
                Ok(m) => RosterEntry {
                    dir,
                    manifest: Some(m),
                    problem: None,
                },
                Err(problem) => RosterEntry {
                    dir,
                    manifest: None,
                    problem: Some(problem),
                },
            }
        })
        .collect();
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    out
}

pub fn read_manifest(dir: &Path) -> std::result::Result<Manifest, String> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a valid manifest: {e}", path.display()))
}

/// Write a manifest atomically (temp file, then rename).
pub fn write_manifest(dir: &Path, m: &Manifest) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!("{MANIFEST_FILE}.tmp"));
    std::fs::write(
        &tmp,
        serde_json::to_vec_pretty(m).expect("manifest serializes"),
    )?;
    std::fs::rename(tmp, dir.join(MANIFEST_FILE))
}

/// The registered brain whose root is the longest path-component prefix of `caller`.
pub fn longest_prefix<'a>(
    manifests: impl IntoIterator<Item = &'a Manifest>,
    caller: &Path,
) -> Option<&'a Manifest> {
    manifests
        .into_iter()
        .filter(|m| caller.starts_with(Path::new(&m.root)))
        .max_by_key(|m| Path::new(&m.root).components().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(root: &str) -> Manifest {
        Manifest::new(root.into(), 0)
    }

    #[test]
    fn fingerprint_is_16_hex_of_sha256() {
        let fp = fingerprint("/home/a/project");
        assert_eq!(fp.len(), 16);
        assert!(fp.chars().all(|c| c.is_ascii_hexdigit()));
        use sha2::{Digest, Sha256};
        assert_eq!(fp, hex::encode(Sha256::digest(b"/home/a/project"))[..16]);
    }

    #[test]
    fn longest_prefix_is_component_wise_and_innermost() {
        let all = [m("/w/outer"), m("/w/outer/inner"), m("/w/out")];
        let hit = |p: &str| longest_prefix(all.iter(), Path::new(p)).map(|m| m.root.clone());
        assert_eq!(hit("/w/outer/inner/src/x"), Some("/w/outer/inner".into()));
        assert_eq!(hit("/w/outer/src"), Some("/w/outer".into()));
        // "/w/outerx" shares characters but not a component with "/w/outer".
        assert_eq!(hit("/w/outerx/src"), None);
        assert_eq!(hit("/w/out"), Some("/w/out".into()));
        assert_eq!(hit("/elsewhere"), None);
    }

    /// Regression (issue 10, finding 2): `bootstrap {"root": "/"}` made a catch-all brain.
    #[test]
    fn roots_that_are_not_projects_are_refused_with_why() {
        let home = Path::new("/srv/me/.medulla");
        let user = Some(Path::new("/home/me"));
        let r = |p: &str| root_refusal(Path::new(p), home, user);
        assert_eq!(r("/"), Some(RootRefusal::FilesystemRoot));
        assert_eq!(r("/etc"), Some(RootRefusal::SystemDirectory));
        assert_eq!(r("/etc/nginx"), Some(RootRefusal::SystemDirectory));
        assert_eq!(r("/usr"), Some(RootRefusal::SystemDirectory));
        assert_eq!(r("/tmp"), Some(RootRefusal::SystemDirectory));
        assert_eq!(r("/srv/me/.medulla"), Some(RootRefusal::MedullaHome));
        assert_eq!(
            r("/srv/me/.medulla/brains/x"),
            Some(RootRefusal::MedullaHome)
        );
        assert_eq!(r("/home/me"), Some(RootRefusal::HomeDirectory));
        assert_eq!(r("/home"), Some(RootRefusal::SystemDirectory));
        assert_eq!(r("/home/me/code/app"), None);
        assert_eq!(r("/tmp/scratch-project"), None);
        assert_eq!(r("/usr/local/src/app"), None);
        assert_eq!(r("/srv/me/app"), None);
    }

    #[test]
    fn resolve_path_folds_dot_dot_before_anything_else() {
        let p = resolve_path(Path::new("/definitely/not/proj3/../victim/../x"));
        assert_eq!(p, PathBuf::from("/definitely/not/x"));
    }

    #[test]
    fn caller_roots_must_be_absolute_and_are_normalised() {
        assert!(normalize_caller_root("relative/path").is_err());
        assert!(normalize_caller_root("").is_err());
        let p = normalize_caller_root("/definitely/not/here/../there/./x").unwrap();
        assert_eq!(p, PathBuf::from("/definitely/not/there/x"));
    }
}
