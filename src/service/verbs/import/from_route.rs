//! Where an entry of another tool's memory goes, from its [`Scope`]: a project path to
//! the brain a request from there reaches (a registered root containing it, else its
//! repository's brain: a moved checkout, a worktree, a clone); a Claude Code project
//! directory to the brain one of whose root or checkouts has its slug (the slug is never
//! decoded), else through the working directory a transcript recorded; the person's to
//! the medulla; a knowledge base's note to the brain the import names, else the medulla.
//! A project with no brain is named with the exact bootstrap that would take it.

use std::collections::HashMap;
use std::path::Path;

use super::sources::Scope;
use super::Target;
use crate::roster::Manifest;
use crate::service::route::{route, shell_quote, suggested_root, RouteInput};
use crate::service::Service;

/// An entry's store, or the project that has no brain yet and how to give it one.
#[derive(Debug, Clone)]
pub(super) enum Dest {
    Store(Target),
    Unrouted { project: String, fix: String },
}

/// How many leading characters of a long Claude Code project name are the slug (a longer
/// one is cut there and given a hash Claude Code does not document).
const SLUG_CUT: usize = 200;

/// Claude Code's name for a project directory: every character that is not an ASCII
/// letter or digit becomes `-`, one for one.
pub fn claude_slug(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The names older Claude Code builds gave the same path (only `/` replaced; `/`, `.`
/// and spaces replaced), besides today's.
fn slugs_of(path: &str) -> [String; 3] {
    [
        claude_slug(path),
        path.replace('/', "-"),
        path.replace(['/', '.', ' '], "-"),
    ]
}

/// Is `name` (a project directory's) the slug `slug`, a long one by its first
/// [`SLUG_CUT`] characters?
fn names(slug: &str, name: &str) -> bool {
    slug == name
        || (slug.len() > SLUG_CUT
            && name.len() > SLUG_CUT
            && slug.get(..SLUG_CUT) == name.get(..SLUG_CUT))
}

/// The brains whose root or a recorded checkout of their own project (never another
/// project's, served before projects sharing history were told apart) a Claude Code
/// project directory is named after; a brain whose own root matches first.
pub(super) fn claude_brains<'a>(manifests: &'a [Manifest], name: &str) -> Vec<&'a Manifest> {
    let mut hits: Vec<(bool, &Manifest)> = manifests
        .iter()
        .filter(|m| m.merged_into.is_none())
        .filter_map(|m| {
            let by_root = slugs_of(&m.root).iter().any(|s| names(s, name));
            let by_checkout = m
                .project_paths()
                .any(|p| slugs_of(p).iter().any(|s| names(s, name)));
            (by_root || by_checkout).then_some((!by_root, m))
        })
        .collect();
    hits.sort_by_key(|(by_checkout, m)| (*by_checkout, m.created));
    hits.into_iter().map(|(_, m)| m).collect()
}

/// Decides each scope's store once.
pub(super) struct Router<'a> {
    svc: &'a Service,
    /// The brain the import names (`--brain`): every entry not the person's goes there.
    brain: Option<Target>,
    manifests: Vec<Manifest>,
    seen: HashMap<Scope, Dest>,
}

impl<'a> Router<'a> {
    pub(super) fn new(svc: &'a Service, brain: Option<Target>) -> Router<'a> {
        Router {
            svc,
            brain,
            manifests: svc.owner.registry.all_manifests(),
            seen: HashMap::new(),
        }
    }

    pub(super) async fn dest(&mut self, scope: &Scope) -> Dest {
        if let Some(d) = self.seen.get(scope) {
            return d.clone();
        }
        let d = self.decide(scope).await;
        self.seen.insert(scope.clone(), d.clone());
        d
    }

    async fn decide(&self, scope: &Scope) -> Dest {
        if *scope == Scope::Person {
            return Dest::Store(Target::Medulla);
        }
        if let Some(b) = &self.brain {
            return Dest::Store(b.clone());
        }
        match scope {
            Scope::Person | Scope::Unplaced => Dest::Store(Target::Medulla),
            Scope::Project(p) => self.by_path(p).await,
            Scope::ClaudeProject { slug, cwd } => {
                if let Some(m) = claude_brains(&self.manifests, slug).first() {
                    return Dest::Store(Target::Brain(m.fingerprint.clone(), m.root.clone()));
                }
                match cwd {
                    Some(c) => self.by_path(c).await,
                    None => Dest::Unrouted {
                        project: format!("the Claude Code project {slug}"),
                        fix: "no brain's root or checkout is the path this directory is named after: bootstrap that project (`medulla bootstrap <its path>`) and import again, or import the directory into a brain with `medulla import --from claude <its memory directory> --brain ROOT`".into(),
                    },
                }
            }
            Scope::Unknown(why) => Dest::Unrouted {
                project: why.clone(),
                fix: "name the brain it belongs to: `--brain ROOT`".into(),
            },
        }
    }

    /// The brain a request from `path` would reach.
    async fn by_path(&self, path: &Path) -> Dest {
        let reg = &self.svc.owner.registry;
        let cfg = &self.svc.owner.config;
        let input = RouteInput {
            caller_root: Some(path.to_string_lossy().into_owned()),
            ..Default::default()
        };
        let project = path.display().to_string();
        match route(reg, cfg, &input).await {
            Ok(r) => match r.brain {
                Some(m) => Dest::Store(Target::Brain(m.fingerprint, m.root)),
                None => Dest::Unrouted {
                    fix: bootstrap(path, cfg),
                    project,
                },
            },
            Err(e) => Dest::Unrouted {
                project,
                fix: e.to_string(),
            },
        }
    }
}

/// The exact bootstrap that would give `path` a brain, or why none can.
fn bootstrap(path: &Path, cfg: &crate::config::Config) -> String {
    if !path.is_dir() {
        return format!(
            "{} is not a directory here: bootstrap the project where it is now (`medulla bootstrap <its path>`), or import with `--brain ROOT`",
            path.display()
        );
    }
    match suggested_root(path, cfg) {
        Some(root) => format!("medulla bootstrap {}", shell_quote(&root.to_string_lossy())),
        None => format!(
            "{} can never be a brain's root (a system, home or medulla directory): import with `--brain ROOT`",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_slugs_replace_every_character_not_a_letter_or_digit() {
        assert_eq!(claude_slug("/home/u/code/shop"), "-home-u-code-shop");
        assert_eq!(claude_slug("/home/u/my_app.v2"), "-home-u-my-app-v2");
        assert_eq!(claude_slug("/home/u/.config/x"), "-home-u--config-x");
        assert_eq!(claude_slug("/tmp/caf\u{e9}"), "-tmp-caf-");
        assert_eq!(claude_slug("C:\\Users\\u\\shop"), "C--Users-u-shop");
    }

    fn manifest(root: &str, checkouts: &[&str], created: i64) -> Manifest {
        let mut m = Manifest::new(root.into(), created);
        m.checkouts = checkouts
            .iter()
            .map(|p| crate::roster::CheckoutSeen::new((*p).into(), created, None))
            .collect();
        m
    }

    /// A name matches a brain's root or a checkout it recorded (its root first), an old
    /// build's encoding too, a long name by its first 200 characters; never a prefix.
    #[test]
    fn a_project_directory_finds_its_brain_by_root_or_checkout() {
        let ms = [
            manifest("/w/shop", &["/w/shop-moved"], 1),
            manifest("/w/admin", &[], 2),
            manifest("/w/my_app", &[], 3),
        ];
        let roots = |name: &str| -> Vec<String> {
            claude_brains(&ms, name)
                .iter()
                .map(|m| m.root.clone())
                .collect()
        };
        assert_eq!(roots("-w-shop"), ["/w/shop"]);
        assert_eq!(roots("-w-shop-moved"), ["/w/shop"]);
        assert_eq!(roots("-w-my-app"), ["/w/my_app"]);
        assert_eq!(roots("-w-my_app"), ["/w/my_app"], "an old build kept `_`");
        assert!(roots("-w-shop-admin").is_empty(), "a prefix is no match");
        assert!(roots("-w").is_empty());
        let long = format!("/w/{}", "x".repeat(250));
        let ms = [manifest(&long, &[], 1)];
        let name = format!("{}-3f2a9c", &claude_slug(&long)[..200]);
        assert_eq!(claude_brains(&ms, &name).len(), 1);
    }
}
