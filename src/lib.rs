//! medulla: a local memory owner for AI coding agents.
//!
//! # Layout
//!
//! - [`config`]: `$MEDULLA_HOME`, `config.toml`, listen address and timeouts.
//! - [`floor`]: the hygiene floor over every field of shared, committable or project text.
//! - [`founder`]: the founder token, which marks the founder surface (CLI, the Hall).
//! - [`client_token`]: the client token, proof of the owner's own user where the kernel
//!   cannot tell who calls.
//! - [`store_id`]: [`store_id::StoreId`], which store a request is about, and brain
//!   fingerprints.
//! - [`roster`]: which brains exist; disk is the truth; root matching.
//! - [`git`]: a path's checkout (worktrees, common directory), HEAD, root commits.
//! - [`repo`]: a project's identity, its repository's root commit, cached by repository.
//! - [`brain`]: the brain actor, one per warm brain plus the medulla's, each owning one
//!   [`brains::Store`].
//! - [`owner`]: the supervisor actor: loads, restarts and unloads brain actors; the
//!   shared registry request handlers read.
//! - [`audit`]: the audit actor, the only writer of the medulla: promotion, doctrine
//!   birth, demotion.
//! - [`mailbox`]: the field-report spool, the distributor actor, boxes, fate, sweep.
//! - [`backup`]: backups on disk: the manifest, names, rotation, and restoring one into a
//!   stopped home.
//! - [`service`]: every tool and REST read, with routing by caller root and rendering of
//!   rows; shared by MCP, REST and the CLI.
//! - [`http`]: hyper server, MCP Streamable HTTP via `rmcp`, the REST routes, the
//!   loopback guard, the Hall's files.
//! - [`hall`]: the Hall, the founder's page: HTML, CSS and JavaScript compiled in.
//! - [`bridge`]: `medulla bridge`, stdio MCP forwarded to the owner over HTTP.
//! - [`launch`]: where a home's owner is, and starting one when none answers.
//! - [`logfile`]: the owner's log on disk, rotated by size.
//! - [`cli`]: the `medulla` command line, a client of the running owner.
//! - [`model`]: the embedding model's files: locating, fetching (pip), loading.
//! - [`serve`]: wiring it all together for `medulla serve`.
//!
//! The store engine itself lives in the `brains` crate and knows nothing of this one.

mod audit;
mod backup;
mod brain;
mod bridge;
mod call;
pub mod cli;
mod client_token;
mod clock;
mod config;
mod error;
mod events;
mod floor;
mod founder;
mod git;
mod hall;
mod hook_sessions;
mod http;
mod launch;
mod logfile;
mod mailbox;
pub mod model;
mod owner;
mod repo;
mod roster;
mod serve;
mod service;
mod store_id;
mod team;

/// No two files of this crate name each other round a circle (a file may use its
/// ancestors' module files): the brains crate's checker (`brains/src/layering.rs`), run
/// over this crate's `src/` by `cargo test -p medulla-memory --lib file_circles`.
#[cfg(test)]
#[path = "../brains/src/layering.rs"]
mod file_circles;

/// The layering the code keeps: each top-level module may reference only modules of a
/// lower rank, so the arrows run one way (entry points → http → service → owner →
/// audit, mailbox → brain → shared leaves) and no circle of imports can form. Checked by
/// `cargo test -p medulla-memory --lib layering`, which reads every `crate::` reference.
#[cfg(test)]
mod layering {
    const RANKS: &[(&str, u8)] = &[
        ("main", 12),
        ("cli", 11),
        ("bridge", 10),
        ("serve", 10),
        ("http", 9),
        ("service", 8),
        ("owner", 7),
        ("audit", 6),
        ("team", 6),
        ("mailbox", 6),
        ("brain", 5),
        ("floor", 4),
        ("call", 4),
        ("error", 3),
        ("client_token", 2),
        ("model", 2),
        ("launch", 3),
        ("backup", 2),
        ("clock", 1),
        ("config", 1),
        ("events", 1),
        ("founder", 1),
        ("git", 2),
        ("repo", 3),
        ("hall", 1),
        ("hook_sessions", 1),
        ("logfile", 1),
        ("roster", 1),
        ("store_id", 0),
    ];

    fn rank(m: &str) -> u8 {
        RANKS
            .iter()
            .find(|(n, _)| *n == m)
            .map(|(_, r)| *r)
            .unwrap_or_else(|| panic!("module {m} has no rank: add it to RANKS in src/lib.rs"))
    }

    /// Every `crate::x` a file names, `use crate::{a, b}` groups included.
    fn references(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = text;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for part in group[..end].split(',') {
                    let name: String = part
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    out.push(name);
                }
            } else {
                out.push(
                    rest.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect(),
                );
            }
        }
        out
    }

    #[test]
    fn arrows_run_one_way() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src.clone()];
        let mut bad = Vec::new();
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                if p.extension().is_none_or(|x| x != "rs") || p.ends_with("lib.rs") {
                    continue;
                }
                let rel = p.strip_prefix(&src).unwrap();
                let top = rel
                    .components()
                    .next()
                    .unwrap()
                    .as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string();
                let text = std::fs::read_to_string(&p).unwrap();
                for r in references(&text) {
                    if r.is_empty() || r == top {
                        continue;
                    }
                    if rank(&r) >= rank(&top) {
                        bad.push(format!("{} names crate::{r}", rel.display()));
                    }
                }
            }
        }
        assert!(
            bad.is_empty(),
            "arrows that run the wrong way:\n{}",
            bad.join("\n")
        );
    }
}
