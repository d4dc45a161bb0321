//! Letters: one JSON object per line of the spool. Their id, where each belongs, and
//! their fate, which is derived from the reply graph and never stored.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The misdelivery kinds a `memory_misdelivery` letter may carry.
pub const MISDELIVERY_KINDS: [&str; 5] = [
    "leak",
    "false_absence",
    "wrong_store_write",
    "misattribution",
    "vanished",
];

/// `hex(sha256(raw line bytes))[0..12]`.
pub fn letter_id(raw: &[u8]) -> String {
    hex::encode(Sha256::digest(raw))[..12].to_string()
}

/// A parsed spool or box line.
#[derive(Debug, Clone)]
pub struct Letter {
    pub id: String,
    pub raw: String,
    pub body: Value,
}

impl Letter {
    pub fn parse(raw: &str) -> Option<Letter> {
        let body: Value = serde_json::from_str(raw).ok()?;
        body.is_object().then(|| Letter {
            id: letter_id(raw.as_bytes()),
            raw: raw.to_string(),
            body,
        })
    }
    pub fn field(&self, k: &str) -> Option<&str> {
        self.body
            .get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
    pub fn answers(&self) -> Vec<String> {
        self.body
            .get("answers")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Check a letter before it is appended: a JSON object; a misdelivery names its kind.
pub fn validate(body: &Value) -> Result<(), String> {
    let Some(obj) = body.as_object() else {
        return Err("a letter is a JSON object: send {\"class\": ..., \"what\": ...}".into());
    };
    if obj.get("class").and_then(Value::as_str) == Some("memory_misdelivery") {
        match obj.get("kind").and_then(Value::as_str) {
            Some(k) if MISDELIVERY_KINDS.contains(&k) => {}
            other => {
                return Err(format!(
                    "a memory_misdelivery letter needs kind one of {}: got {other:?}",
                    MISDELIVERY_KINDS.join(", ")
                ))
            }
        }
    }
    if let Some(a) = obj.get("answers") {
        if !a.as_array().is_some_and(|a| a.iter().all(Value::is_string)) {
            return Err("answers must be a list of letter ids (12 hex characters each)".into());
        }
    }
    Ok(())
}

/// Where a letter goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "to", rename_all = "snake_case")]
pub enum Destination {
    /// `<repo>/.medulla/inbox.jsonl`.
    Project { repo: PathBuf },
    /// `$MEDULLA_HOME/inbox.jsonl`: genuinely projectless letters only.
    Medulla,
    /// The repository is not on this machine (yet), or is no repository: stays in the
    /// spool until it is.
    #[serde(rename = "pending_distribution")]
    Pending { repo: String },
}

/// What the distributor knows when it files letters.
pub struct Context<'a> {
    pub home_dir: Option<&'a Path>,
    pub medulla_home: &'a Path,
    /// Registered brain roots.
    pub roots: &'a [PathBuf],
}

fn expand_home(s: &str, home: Option<&Path>) -> String {
    match (s.strip_prefix('~'), home) {
        (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{}{rest}", h.display())
        }
        _ => s.to_string(),
    }
}

/// Remove parenthetical notes: `m1nd (worktree fix-x)` → `m1nd`.
fn strip_notes(s: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.trim().trim_end_matches('/').to_string()
}

/// A `<name>-<suffix>` folder whose sibling `<name>` is a repository.
fn suffixed_sibling(dir: &Path) -> Option<PathBuf> {
    let name = dir.file_name()?.to_str()?;
    let parent = dir.parent()?;
    let mut cut = name.len();
    while let Some(i) = name[..cut].rfind('-') {
        let candidate = parent.join(&name[..i]);
        if candidate.join(".git").exists() {
            return Some(candidate);
        }
        cut = i;
    }
    None
}

fn is_projectless(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    l.is_empty() || l == "all" || l == "none" || l == "-" || l == "n/a"
}

/// Decide a letter's box. Never the medulla box for a letter that names a project.
pub fn destination(letter: &Letter, cx: &Context) -> Destination {
    if let Some(b) = letter.field("brain") {
        if b == "medulla" {
            return Destination::Medulla;
        }
        if let Some(root) = cx
            .roots
            .iter()
            .find(|r| r.as_os_str() == b || crate::roster::fingerprint(&r.to_string_lossy()) == b)
        {
            return Destination::Project { repo: root.clone() };
        }
    }
    // A `brain` naming a path names a project even when no registered root matches it
    // (yet): that path decides, never a projectless `repo` beside it (INV-10).
    let raw = letter
        .field("brain")
        .filter(|b| b.contains('/'))
        .or_else(|| letter.field("repo"))
        .unwrap_or("");
    let stripped = strip_notes(raw);
    if is_projectless(&stripped) {
        return Destination::Medulla;
    }
    let expanded = expand_home(&stripped, cx.home_dir);
    let path = Path::new(&expanded);
    if path.is_absolute() {
        // `..` folded before anything is matched: `proj3/../victim/../x` is `x`, never
        // proj3's box.
        let path = crate::roster::resolve_path(path);
        if path.starts_with(cx.medulla_home) {
            return Destination::Medulla;
        }
        let inside_root = |p: &Path| {
            cx.roots
                .iter()
                .filter(|r| p.starts_with(r))
                .max_by_key(|r| r.components().count())
                .cloned()
        };
        if path.is_dir() {
            if let Some(main) = crate::git::worktree_main(&path) {
                return Destination::Project {
                    repo: inside_root(&main).unwrap_or(main),
                };
            }
        }
        if let Some(root) = inside_root(&path) {
            return Destination::Project { repo: root };
        }
        // The git repository holding the path (existing or not): boxes live only in
        // repositories, never in an arbitrary directory, the home directory or `/`.
        let repo = path
            .ancestors()
            .take_while(|a| a.parent().is_some() && Some(*a) != cx.home_dir)
            .find(|a| a.join(".git").exists());
        if let Some(repo) = repo {
            return Destination::Project {
                repo: repo.to_path_buf(),
            };
        }
        if let Some(main) = suffixed_sibling(&path) {
            return Destination::Project { repo: main };
        }
        // Absent, or present but no repository (yet): it waits in the spool.
        return Destination::Pending {
            repo: path.to_string_lossy().into_owned(),
        };
    }
    // A bare name: a registered root of that name, else a worktree-style name of one.
    let name = expanded.to_ascii_lowercase();
    let by_name = |n: &str| {
        cx.roots
            .iter()
            .find(|r| {
                r.file_name()
                    .is_some_and(|f| f.to_string_lossy().to_ascii_lowercase() == n)
            })
            .cloned()
    };
    if let Some(r) = by_name(&name) {
        return Destination::Project { repo: r };
    }
    let mut cut = name.len();
    while let Some(i) = name[..cut].rfind('-') {
        if let Some(r) = by_name(&name[..i]) {
            return Destination::Project { repo: r };
        }
        cut = i;
    }
    Destination::Pending { repo: expanded }
}

/// A letter's fate, derived from every letter that answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    FiredClay,
    InFlight,
    WetInk,
    External,
}

fn is_closing(l: &Letter) -> bool {
    matches!(l.field("class"), Some("triage" | "receipt"))
}

fn is_external(l: &Letter) -> bool {
    l.field("class") == Some("external")
        || l.field("tool")
            .is_some_and(|t| !t.eq_ignore_ascii_case("medulla"))
}

/// The fate of every letter in `letters`, given every letter that may answer them.
pub fn fates(letters: &[Letter], all: &[Letter]) -> HashMap<String, Fate> {
    let mut closed: HashSet<&str> = HashSet::new();
    let mut touched: HashSet<&str> = HashSet::new();
    for l in all {
        let answers = l.body.get("answers").and_then(Value::as_array);
        for a in answers.into_iter().flatten().filter_map(Value::as_str) {
            if is_closing(l) {
                closed.insert(a);
            } else {
                touched.insert(a);
            }
        }
    }
    letters
        .iter()
        .map(|l| {
            // A closing letter is itself settled: counting receipts as open would make a
            // counter that can never reach zero.
            let f = if closed.contains(l.id.as_str()) || is_closing(l) {
                Fate::FiredClay
            } else if is_external(l) {
                Fate::External
            } else if touched.contains(l.id.as_str()) {
                Fate::InFlight
            } else {
                Fate::WetInk
            };
            (l.id.clone(), f)
        })
        .collect()
}

/// `{wet_ink, in_flight, fired_clay, external, open}`; open never counts external.
pub fn counts(f: &HashMap<String, Fate>) -> Counts {
    let n = |x: Fate| f.values().filter(|v| **v == x).count();
    Counts {
        wet_ink: n(Fate::WetInk),
        in_flight: n(Fate::InFlight),
        fired_clay: n(Fate::FiredClay),
        external: n(Fate::External),
        open: n(Fate::WetInk) + n(Fate::InFlight),
    }
}

/// Letters by fate; `open = wet_ink + in_flight`, never counting external ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    pub wet_ink: usize,
    pub in_flight: usize,
    pub fired_clay: usize,
    pub external: usize,
    pub open: usize,
}

/// Every letter of a JSONL file, with the lines that were not letters counted.
pub fn read_letters(path: &Path) -> std::io::Result<(Vec<Letter>, usize)> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((vec![], 0)),
        Err(e) => return Err(e),
    };
    let mut bad = 0;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match Letter::parse(line) {
            Some(l) => out.push(l),
            None => bad += 1,
        }
    }
    Ok((out, bad))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn letter(v: Value) -> Letter {
        Letter::parse(&v.to_string()).unwrap()
    }

    #[test]
    fn ids_are_the_first_12_hex_of_the_raw_line_hash() {
        let raw = r#"{"class":"bug","what":"x"}"#;
        assert_eq!(
            letter_id(raw.as_bytes()),
            hex::encode(Sha256::digest(raw.as_bytes()))[..12]
        );
        assert_ne!(
            letter_id(b"{\"a\":1}"),
            letter_id(b"{\"a\": 1}"),
            "raw bytes, not the parsed value"
        );
    }

    #[test]
    fn misdelivery_letters_must_name_a_known_kind() {
        assert!(validate(&json!({"class": "memory_misdelivery", "kind": "leak"})).is_ok());
        assert!(validate(&json!({"class": "memory_misdelivery", "kind": "oops"})).is_err());
        assert!(validate(&json!({"class": "memory_misdelivery"})).is_err());
        assert!(validate(&json!([1, 2])).is_err());
        assert!(validate(&json!({"answers": [1]})).is_err());
    }

    #[test]
    fn notes_are_stripped_and_projectless_letters_go_to_the_medulla() {
        assert_eq!(strip_notes("m1nd (worktree fix-x) "), "m1nd");
        let home = tempfile::tempdir().unwrap();
        let cx = Context {
            home_dir: None,
            medulla_home: home.path(),
            roots: &[],
        };
        for repo in ["all", "", "(research task, no repo)"] {
            assert_eq!(
                destination(&letter(json!({"repo": repo})), &cx),
                Destination::Medulla,
                "{repo:?}"
            );
        }
        assert_eq!(
            destination(&letter(json!({"what": "no repo field"})), &cx),
            Destination::Medulla
        );
        let own = home.path().join("runtimes/claude");
        std::fs::create_dir_all(&own).unwrap();
        assert_eq!(
            destination(&letter(json!({"repo": own})), &cx),
            Destination::Medulla
        );
    }

    #[test]
    fn a_missing_repository_is_pending_never_the_medulla() {
        let home = tempfile::tempdir().unwrap();
        let cx = Context {
            home_dir: Some(Path::new("/nonexistent-home")),
            medulla_home: home.path(),
            roots: &[],
        };
        let d = destination(&letter(json!({"repo": "~/almus"})), &cx);
        assert_eq!(
            d,
            Destination::Pending {
                repo: "/nonexistent-home/almus".into()
            }
        );
        assert!(matches!(
            destination(&letter(json!({"repo": "someproject"})), &cx),
            Destination::Pending { .. }
        ));
    }

    /// Regression (issue 10, finding 8): a letter naming any existing directory created
    /// `<dir>/.medulla/inbox.jsonl`, and `proj3/../victim/../x` was filed into proj3's box.
    #[test]
    fn boxes_live_only_in_repositories_and_dot_dot_is_folded_first() {
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        let plain = base.join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        let repo = base.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        let proj3 = base.join("proj3");
        std::fs::create_dir_all(&proj3).unwrap();
        let home = tempfile::tempdir().unwrap();
        let roots = vec![proj3.clone()];
        let cx = Context {
            home_dir: Some(&base),
            medulla_home: home.path(),
            roots: &roots,
        };
        assert!(
            matches!(
                destination(&letter(json!({"repo": plain})), &cx),
                Destination::Pending { .. }
            ),
            "a directory that is no repository gets no box"
        );
        assert_eq!(
            destination(&letter(json!({"repo": repo.join("src/deep")})), &cx),
            Destination::Project { repo: repo.clone() },
            "a path inside a repository files into the repository's box"
        );
        let sneaky = format!("{}/../victim/../x", proj3.display());
        match destination(&letter(json!({ "repo": sneaky })), &cx) {
            Destination::Pending { repo } => assert_eq!(repo, base.join("x").to_string_lossy()),
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(
                destination(&letter(json!({"repo": base})), &cx),
                Destination::Pending { .. }
            ),
            "the home directory is never a box"
        );
    }

    #[test]
    fn worktrees_resolve_to_their_main_repository() {
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        let main = base.join("m1nd");
        std::fs::create_dir_all(main.join(".git/worktrees/fix")).unwrap();
        let wt = base.join("elsewhere/fix");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", main.join(".git/worktrees/fix").display()),
        )
        .unwrap();
        let suffixed = base.join("m1nd-hotfix-2");
        std::fs::create_dir_all(&suffixed).unwrap();
        let home = tempfile::tempdir().unwrap();
        let roots = vec![main.clone()];
        let cx = Context {
            home_dir: Some(&base),
            medulla_home: home.path(),
            roots: &roots,
        };
        let to_main = Destination::Project { repo: main.clone() };
        assert_eq!(destination(&letter(json!({"repo": wt})), &cx), to_main);
        assert_eq!(
            destination(&letter(json!({"repo": suffixed})), &cx),
            to_main
        );
        assert_eq!(
            destination(&letter(json!({"repo": "~/m1nd (worktree fix)"})), &cx),
            to_main
        );
        assert_eq!(
            destination(&letter(json!({"repo": "m1nd-feature-x"})), &cx),
            to_main,
            "a worktree-style bare name"
        );
        assert_eq!(
            destination(&letter(json!({"repo": "M1ND"})), &cx),
            to_main,
            "a bare name of a registered root"
        );
        assert_eq!(
            destination(
                &letter(json!({"brain": main.to_string_lossy(), "repo": "all"})),
                &cx
            ),
            to_main
        );
        // A brain path no registered root matches still names a project: never the
        // medulla box because `repo` says `all`.
        let unregistered = main.parent().unwrap().join("not-registered-yet");
        assert!(!matches!(
            destination(
                &letter(json!({"brain": unregistered.to_string_lossy(), "repo": "all"})),
                &cx
            ),
            Destination::Medulla
        ));
    }

    #[test]
    fn fate_follows_the_reply_graph() {
        let a = letter(json!({"class": "bug", "what": "a"}));
        let b = letter(json!({"class": "bug", "what": "b"}));
        let ext = letter(json!({"class": "friction", "tool": "context7", "what": "c"}));
        let note = letter(json!({"class": "note", "answers": [a.id.clone()]}));
        let all = vec![a.clone(), b.clone(), ext.clone(), note.clone()];
        let f = fates(&all, &all);
        assert_eq!(f[&a.id], Fate::InFlight);
        assert_eq!(f[&b.id], Fate::WetInk);
        assert_eq!(f[&ext.id], Fate::External);
        let receipt =
            letter(json!({"class": "receipt", "answers": [a.id.clone(), ext.id.clone()]}));
        let all = vec![a.clone(), b, ext.clone(), note, receipt];
        let f = fates(&all, &all);
        assert_eq!(f[&a.id], Fate::FiredClay);
        assert_eq!(f[&ext.id], Fate::FiredClay);
        let c = counts(&f);
        assert_eq!(
            c.open, 2,
            "b and the note are open; the receipt is settled; external never counts: {c:?}"
        );
    }
}
