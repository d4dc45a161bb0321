//! The Hall: the page a person opens (`medulla hall`) to see and tend every brain. Its
//! HTML, CSS and JavaScript are files beside this module, compiled into the binary: no
//! CDN, no build step, nothing fetched from outside. This module only knows the files;
//! `src/http/hall.rs` serves them.
//!
//! The page is a client of the REST surface like any other: it holds no privilege of its
//! own. It becomes the founder surface only by trading the one-time ticket `medulla hall`
//! put in its address for a session (`src/http/hall_auth.rs`).

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// One file of the page.
#[derive(Debug)]
pub struct Asset {
    /// Its name under `/hall/` (the page itself is `index.html`, served at `/`).
    pub name: &'static str,
    pub media_type: &'static str,
    pub bytes: &'static [u8],
}

const INDEX: &str = include_str!("index.html");

/// Every file but the page itself, which [`index`] renders with versioned links.
pub const ASSETS: &[Asset] = &[
    Asset {
        name: "hall.js",
        media_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("hall.js"),
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

/// An asset by name.
pub fn asset(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// Each asset's version, computed once.
pub fn version(name: &str) -> Option<&'static str> {
    static VERSIONS: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();
    VERSIONS
        .get_or_init(|| {
            ASSETS
                .iter()
                .map(|a| (a.name, version_of(a.bytes)))
                .collect()
        })
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
}

/// The page, its links carrying each asset's version (`/hall/hall.js?v=<version>`) so
/// an asset can be cached for good and a new binary's page still loads its own files.
pub fn index() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        let mut page = INDEX.to_string();
        for a in ASSETS {
            let v = version(a.name).unwrap_or_default();
            page = page.replace(
                &format!("/hall/{}\"", a.name),
                &format!("/hall/{}?v={v}\"", a.name),
            );
        }
        page
    })
}

/// The bytes of every file of the page, the page itself included: its weight.
#[cfg(test)]
fn weight() -> usize {
    index().len() + ASSETS.iter().map(|a| a.bytes.len()).sum::<usize>()
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
