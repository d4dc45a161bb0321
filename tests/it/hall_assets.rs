//! The Hall's script modules as a browser reaches them: from the page's entry, following
//! every `import … from './x.js'` transitively, each module is served as JavaScript, by
//! version and cached for good. A module the owner does not serve fails here.

use std::collections::BTreeSet;

use crate::common::Owner;

/// The relative specifiers a module imports (`./x.js?v=…`), as the browser reads them.
fn imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let from = if line.starts_with("import ") || line.starts_with('}') {
            line.split_once(" from ").map(|(_, f)| f)
        } else {
            None
        };
        let spec = from.or_else(|| line.strip_prefix("import ")).map(str::trim);
        if let Some(spec) = spec {
            let q = spec.chars().next().unwrap_or(' ');
            if q == '\'' || q == '"' {
                let inner = &spec[1..];
                if let Some(end) = inner.find(q) {
                    if let Some(rel) = inner[..end].strip_prefix("./") {
                        out.push(rel.to_string());
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_module_the_entry_imports_is_served_as_javascript() {
    let o = Owner::start();
    let page = o
        .http
        .get(format!("{}/", o.url))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let entry = page
        .split('"')
        .find(|s| s.starts_with("/hall/hall.js?v="))
        .expect("the page loads its entry module by version")
        .trim_start_matches("/hall/")
        .to_string();
    let preloaded: BTreeSet<&str> = page
        .split("rel=\"modulepreload\" href=\"/hall/")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect();

    let mut seen = BTreeSet::new();
    let mut next = vec![entry.clone()];
    while let Some(m) = next.pop() {
        if !seen.insert(m.clone()) {
            continue;
        }
        let r = o.http.get(format!("{}/hall/{m}", o.url)).send().unwrap();
        assert_eq!(r.status(), 200, "{m} is served");
        let header = |k: &str| {
            r.headers()
                .get(k)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string()
        };
        assert!(
            header("content-type").starts_with("text/javascript"),
            "{m} is served as JavaScript, not {}",
            header("content-type")
        );
        assert!(
            header("cache-control").contains("immutable"),
            "{m} is asked for by version and cached for good"
        );
        assert!(header("content-security-policy").contains("script-src 'self'"));
        let text = r.text().unwrap();
        if m != entry {
            assert!(preloaded.contains(m.as_str()), "the page preloads {m}");
        }
        next.extend(imports(&text));
    }
    // One module per page, and what they share.
    for page_module in [
        "roster.js",
        "brain.js",
        "medulla.js",
        "audit.js",
        "mailbox.js",
        "doctor.js",
    ] {
        assert!(
            seen.iter()
                .any(|m| m.starts_with(&format!("{page_module}?v="))),
            "the entry reaches {page_module}: {seen:?}"
        );
    }
    // An unknown module is the usual 404.
    let missing = o
        .http
        .get(format!("{}/hall/nowhere.js?v=0", o.url))
        .send()
        .unwrap();
    assert_eq!(missing.status(), 404);
}
