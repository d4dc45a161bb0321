//! The Hall's script as ES modules, as the owner serves them: each relative import names
//! the version of the module it loads (`from './dom.js?v=<hash>'`), so every module can be
//! cached for good and a new binary's page still loads its own. A module's version is the
//! hash of its served text, which holds its imports' versions: a change anywhere below a
//! module changes the module's own version too. The source files stay plain modules a
//! browser could load as they are; no build step.

use std::collections::HashMap;

use super::{version_of, Asset};

/// A file of the page as it goes out: a module with its imports versioned, any other
/// file as it is.
#[derive(Debug)]
pub struct Served {
    pub name: &'static str,
    pub media_type: &'static str,
    pub bytes: Vec<u8>,
    /// The first 16 hex characters of the sha256 of `bytes`.
    pub version: String,
}

/// Is this file a JavaScript module?
pub fn is_module(a: &Asset) -> bool {
    a.media_type.starts_with("text/javascript")
}

/// The file names a module imports from beside itself (`import … from './x.js'`,
/// `import './x.js'`), in the order written.
pub fn imports(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("./") {
        let before = text[..at].trim_end();
        let Some(quote) = before.chars().last().filter(|c| *c == '\'' || *c == '"') else {
            continue;
        };
        let keyword = before[..before.len() - 1].trim_end();
        if !(keyword.ends_with("from") || keyword.ends_with("import")) {
            continue;
        }
        let rest = &text[at + 2..];
        if let Some(end) = rest.find(quote) {
            out.push(&rest[..end]);
        }
    }
    out
}

/// Every file as served. Panics if two modules import each other, directly or through
/// others (a version could not be computed; the unit tests meet it first).
pub fn serve_all(assets: &'static [Asset]) -> Vec<Served> {
    let mut done: HashMap<&'static str, Served> = HashMap::new();
    for a in assets {
        settle(a, assets, &mut done, &mut Vec::new());
    }
    assets
        .iter()
        .map(|a| done.remove(a.name).expect("every asset settled"))
        .collect()
}

/// Serve one file, its imports first.
fn settle(
    a: &'static Asset,
    assets: &'static [Asset],
    done: &mut HashMap<&'static str, Served>,
    path: &mut Vec<&'static str>,
) {
    if done.contains_key(a.name) {
        return;
    }
    assert!(
        !path.contains(&a.name),
        "the Hall's modules import each other in a circle: {} -> {}",
        path.join(" -> "),
        a.name
    );
    let bytes = if is_module(a) {
        let text = std::str::from_utf8(a.bytes).expect("a module is UTF-8");
        path.push(a.name);
        let mut versions = HashMap::new();
        for name in imports(text) {
            if let Some(dep) = assets.iter().find(|d| d.name == name) {
                settle(dep, assets, done, path);
                versions.insert(name, done[dep.name].version.clone());
            }
        }
        path.pop();
        versioned(text, &versions).into_bytes()
    } else {
        a.bytes.to_vec()
    };
    let version = version_of(&bytes);
    done.insert(
        a.name,
        Served {
            name: a.name,
            media_type: a.media_type,
            bytes,
            version,
        },
    );
}

/// A module's text with each import of a known file carrying that file's version. An
/// import of an unknown file stays as written (and is answered 404).
fn versioned(text: &str, versions: &HashMap<&str, String>) -> String {
    let mut out = text.to_string();
    for (name, v) in versions {
        for quote in ['\'', '"'] {
            for keyword in ["from ", "import "] {
                out = out.replace(
                    &format!("{keyword}{quote}./{name}{quote}"),
                    &format!("{keyword}{quote}./{name}?v={v}{quote}"),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_found_in_every_form_and_nothing_else() {
        let text = "import { h, $ } from './dom.js';\nimport {\n  a,\n} from \"./api.js\";\nimport './side.js';\nconst s = 'from here ./not.js';\nh('a', { href: './x.js' });\n";
        assert_eq!(imports(text), vec!["dom.js", "api.js", "side.js"]);
    }

    #[test]
    fn a_module_names_its_imports_by_version_and_changes_with_them() {
        static A: &[Asset] = &[
            Asset {
                name: "a.js",
                media_type: "text/javascript",
                bytes: b"import { b } from './b.js';\nb();\n",
            },
            Asset {
                name: "b.js",
                media_type: "text/javascript",
                bytes: b"export function b() {}\n",
            },
        ];
        static B: &[Asset] = &[
            Asset {
                name: "a.js",
                media_type: "text/javascript",
                bytes: b"import { b } from './b.js';\nb();\n",
            },
            Asset {
                name: "b.js",
                media_type: "text/javascript",
                bytes: b"export function b() { return 1; }\n",
            },
        ];
        let one = serve_all(A);
        let text = String::from_utf8(one[0].bytes.clone()).unwrap();
        assert_eq!(
            text,
            format!("import {{ b }} from './b.js?v={}';\nb();\n", one[1].version)
        );
        let two = serve_all(B);
        assert_ne!(one[1].version, two[1].version, "b changed");
        assert_ne!(
            one[0].version, two[0].version,
            "so a, which imports it, did too"
        );
    }

    #[test]
    #[should_panic(expected = "in a circle: a.js -> b.js -> a.js")]
    fn modules_importing_each_other_are_refused() {
        static C: &[Asset] = &[
            Asset {
                name: "a.js",
                media_type: "text/javascript",
                bytes: b"import './b.js';\n",
            },
            Asset {
                name: "b.js",
                media_type: "text/javascript",
                bytes: b"import './a.js';\n",
            },
        ];
        serve_all(C);
    }
}
