//! The Hall: the page a person opens (`medulla hall`) to see and tend every brain. Its
//! HTML, CSS and JavaScript (ES modules: `hall.js` the entry, one module per page, a few
//! shared ones) are files beside this module, compiled into the binary: no CDN, no build
//! step, nothing fetched from outside. This module only knows the files (`modules.rs`
//! versions the modules' imports); `src/http/hall.rs` serves them.
//!
//! The page is a client of the REST surface like any other: it holds no privilege of its
//! own. It becomes the founder surface only by trading the one-time ticket `medulla hall`
//! put in its address for a session (`src/http/hall_auth.rs`).

mod modules;

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

pub use modules::Served;

/// One file of the page.
#[derive(Debug)]
pub struct Asset {
    /// Its name under `/hall/` (the page itself is `index.html`, served at `/`).
    pub name: &'static str,
    pub media_type: &'static str,
    pub bytes: &'static [u8],
}

const INDEX: &str = include_str!("index.html");

const JS: &str = "text/javascript; charset=utf-8";

/// The module the page loads; it imports the others.
const ENTRY: &str = "hall.js";

/// Every file but the page itself, which [`index`] renders with versioned links. A
/// module added here is served at `/hall/<name>`; one left out is a 404 the browser
/// test and `tests/it/hall_assets.rs` meet.
pub const ASSETS: &[Asset] = &[
    Asset {
        name: "hall.js",
        media_type: JS,
        bytes: include_bytes!("hall.js"),
    },
    Asset {
        name: "dom.js",
        media_type: JS,
        bytes: include_bytes!("dom.js"),
    },
    Asset {
        name: "format.js",
        media_type: JS,
        bytes: include_bytes!("format.js"),
    },
    Asset {
        name: "shell.js",
        media_type: JS,
        bytes: include_bytes!("shell.js"),
    },
    Asset {
        name: "api.js",
        media_type: JS,
        bytes: include_bytes!("api.js"),
    },
    Asset {
        name: "actions.js",
        media_type: JS,
        bytes: include_bytes!("actions.js"),
    },
    Asset {
        name: "claims.js",
        media_type: JS,
        bytes: include_bytes!("claims.js"),
    },
    Asset {
        name: "roster.js",
        media_type: JS,
        bytes: include_bytes!("roster.js"),
    },
    Asset {
        name: "brain.js",
        media_type: JS,
        bytes: include_bytes!("brain.js"),
    },
    Asset {
        name: "review.js",
        media_type: JS,
        bytes: include_bytes!("review.js"),
    },
    Asset {
        name: "medulla.js",
        media_type: JS,
        bytes: include_bytes!("medulla.js"),
    },
    Asset {
        name: "audit.js",
        media_type: JS,
        bytes: include_bytes!("audit.js"),
    },
    Asset {
        name: "mailbox.js",
        media_type: JS,
        bytes: include_bytes!("mailbox.js"),
    },
    Asset {
        name: "team.js",
        media_type: JS,
        bytes: include_bytes!("team.js"),
    },
    Asset {
        name: "doctor.js",
        media_type: JS,
        bytes: include_bytes!("doctor.js"),
    },
    Asset {
        name: "live.js",
        media_type: JS,
        bytes: include_bytes!("live.js"),
    },
    Asset {
        name: "hall.css",
        media_type: "text/css; charset=utf-8",
        bytes: include_bytes!("hall.css"),
    },
    Asset {
        name: "icon.svg",
        media_type: "image/svg+xml",
        bytes: include_bytes!("icon.svg"),
    },
];

/// The first 16 hex characters of the sha256 of some bytes: a version for a URL or an
/// entity tag, changing whenever the file does.
pub fn version_of(bytes: &[u8]) -> String {
    hex::encode(&Sha256::digest(bytes)[..8])
}

/// Every asset as served (modules with their imports versioned), computed once.
fn served() -> &'static [Served] {
    static SERVED: OnceLock<Vec<Served>> = OnceLock::new();
    SERVED.get_or_init(|| modules::serve_all(ASSETS))
}

/// An asset by name, as served: its bytes, media type and version.
pub fn asset(name: &str) -> Option<&'static Served> {
    served().iter().find(|a| a.name == name)
}

/// An asset's version.
pub fn version(name: &str) -> Option<&'static str> {
    asset(name).map(|a| a.version.as_str())
}

/// The modules the entry imports, directly or through others, each once, nearest first.
fn imported_by_entry() -> Vec<&'static Served> {
    let mut out: Vec<&'static Served> = Vec::new();
    let mut next = vec![ENTRY];
    while let Some(name) = next.pop() {
        let Some(a) = ASSETS.iter().find(|a| a.name == name) else {
            continue;
        };
        let text = std::str::from_utf8(a.bytes).expect("a module is UTF-8");
        for dep in modules::imports(text).into_iter().rev() {
            if let Some(s) = asset(dep).filter(|s| !out.iter().any(|o| o.name == s.name)) {
                out.push(s);
                next.insert(0, s.name);
            }
        }
    }
    out
}

/// The page, its links carrying each asset's version (`/hall/hall.js?v=<version>`) so
/// an asset can be cached for good and a new binary's page still loads its own files.
/// Every module the entry imports is preloaded beside it (`rel=modulepreload`), so the
/// browser fetches them together instead of one import level after another.
pub fn index() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        let mut page = INDEX.to_string();
        for a in served() {
            page = page.replace(
                &format!("/hall/{}\"", a.name),
                &format!("/hall/{}?v={}\"", a.name, a.version),
            );
        }
        let entry = format!(
            "<script type=\"module\" src=\"/hall/{ENTRY}?v={}\"></script>",
            version(ENTRY).unwrap_or_default()
        );
        let preload: String = imported_by_entry()
            .iter()
            .map(|m| {
                format!(
                    "<link rel=\"modulepreload\" href=\"/hall/{}?v={}\">\n",
                    m.name, m.version
                )
            })
            .collect();
        page.replacen(&entry, &format!("{preload}{entry}"), 1)
    })
}

/// The bytes of every file of the page, the page itself included: its weight.
#[cfg(test)]
fn weight() -> usize {
    index().len() + served().iter().map(|a| a.bytes.len()).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_links_every_asset_by_version_and_weighs_under_budget() {
        let page = index();
        for a in ASSETS {
            let v = version(a.name).unwrap();
            assert!(
                page.contains(&format!("/hall/{}?v={v}\"", a.name)),
                "{} is linked with its version",
                a.name
            );
        }
        assert!(weight() <= 250 * 1024, "the Hall weighs {} bytes", weight());
    }

    #[test]
    fn every_module_is_served_imported_and_preloaded() {
        // Every script file beside this module is an asset: a module written but not
        // listed would be a 404 in the browser.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/hall");
        for f in std::fs::read_dir(&dir).unwrap() {
            let name = f.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".js") {
                assert!(asset(&name).is_some(), "{name} is listed in ASSETS");
            }
        }
        let page = index();
        let reached = imported_by_entry();
        for a in ASSETS.iter().filter(|a| modules::is_module(a)) {
            let text = std::str::from_utf8(a.bytes).unwrap();
            assert!(
                text.starts_with("// "),
                "{} opens with a line saying what it owns",
                a.name
            );
            assert!(text.lines().count() <= 600, "{} is over 600 lines", a.name);
            for dep in modules::imports(text) {
                let v = version(dep).unwrap_or_else(|| panic!("{} imports {dep}", a.name));
                let served = std::str::from_utf8(&asset(a.name).unwrap().bytes).unwrap();
                assert!(
                    served.contains(&format!("./{dep}?v={v}'")),
                    "{dep} by version"
                );
            }
            if a.name != ENTRY {
                assert!(
                    reached.iter().any(|m| m.name == a.name),
                    "the entry imports {}",
                    a.name
                );
                let v = version(a.name).unwrap();
                assert!(
                    page.contains(&format!(
                        "rel=\"modulepreload\" href=\"/hall/{}?v={v}\"",
                        a.name
                    )),
                    "the page preloads {}",
                    a.name
                );
            }
        }
    }

    #[test]
    fn the_page_has_no_inline_script_or_style() {
        let page = index();
        assert!(!page.contains("<script>"), "no inline script");
        assert!(!page.contains("style="), "no inline style");
        assert!(!page.contains("<style"), "no style element");
        for outside in ["src=\"http", "href=\"http", "src=\"//", "href=\"//"] {
            assert!(!page.contains(outside), "nothing from outside: {outside}");
        }
    }
}
