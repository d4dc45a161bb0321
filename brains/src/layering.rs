//! The crate's files form no circle: no two files (nor a longer cycle of them) name each
//! other. Run by `cargo test -p brains --lib layering`.
//!
//! Every `.rs` file under `brains/src` is a node. A file points at another when its code
//! (comments and string literals left out) names a path into it: `crate::a::b`,
//! `super::b`, `self::b`, a `use` group (`use super::{a::X, b}`), or `c::` where `c` is a
//! child module the file declares (`mod c;`). A path is resolved to the file of its
//! longest module prefix that is a file (`crate::index::MetaRef` is `index/mod.rs`,
//! `crate::vector::graph::key_hash` is `vector/graph.rs`); `super::` inside an inline
//! module (`mod tests { use super::*; }`) first leaves the inline module, so it points
//! into the file itself, which is no arrow.
//!
//! The rule for parents and children, the usual source of false circles: a file may
//! use items of its ancestors' module files (`super::Store` in `store/read.rs`,
//! `crate::store::Store` in `store/memorize/plan.rs`, `super::Sink` in `hygiene/web.rs`)
//! whether or not the ancestor names it back. The module file is the module's front:
//! it declares its children and re-exports their API, and they extend it (an
//! `impl Store` in `store/read.rs`) and share its helpers; an arrow up to it is never
//! counted. Every other reference is an arrow, a parent's naming of its child and a
//! `pub use` re-export included (`c.rs` naming `a::X`, which `a/mod.rs` re-exports from
//! `a/inner.rs`, depends on `a/inner.rs`). So siblings (`index/delta.rs` and
//! `index/segment.rs`), cousins and unrelated modules (`index/` and `recall.rs`) never
//! name each other round a circle: what two of them share moves into a file below
//! both. `mod c;` declares a child and is no reference; `lib.rs` only declares the
//! modules and re-exports, so paths that end there (`crate::Store`) are no arrow. A
//! bare name brought in by a glob (`use super::*`) or a re-export is seen only by the
//! path that brought it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A file's module path: `index/mod.rs` is `index`, `index/segment/bytes.rs` is
/// `index::segment::bytes`, `lib.rs` is the empty path.
fn module_of(rel: &str) -> Vec<String> {
    let rel = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `text` with comments and the insides of string and character literals blanked
/// (newlines kept), so a path in a doc comment or a message is no reference.
fn code_only(text: &str) -> Vec<u8> {
    let s = text.as_bytes();
    let mut out = s.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to.min(s.len())] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < s.len() {
        let prev_ident = i > 0 && is_ident(s[i - 1]);
        if s[i..].starts_with(b"//") {
            let end = s[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(s.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if s[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < s.len() && depth > 0 {
                if s[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if s[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !prev_ident && (s[i] == b'r' || s[i..].starts_with(b"br")) && {
            let k = i + if s[i] == b'b' { 2 } else { 1 };
            let hashes = s[k..].iter().take_while(|&&b| b == b'#').count();
            s.get(k + hashes) == Some(&b'"')
        } {
            let k = i + if s[i] == b'b' { 2 } else { 1 };
            let hashes = s[k..].iter().take_while(|&&b| b == b'#').count();
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = k + hashes + 1;
            let end = s[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(s.len(), |p| body + p + close.len());
            blank(&mut out, body, end);
            i = end;
        } else if s[i] == b'"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != b'"' {
                j += if s[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j);
            i = j + 1;
        } else if s[i] == b'\'' && (s.get(i + 1) == Some(&b'\\') || s.get(i + 2) == Some(&b'\'')) {
            // A character literal ('a', '"', '\n', '\u{7f}'); a lifetime has no closing quote.
            let from = if s[i + 1] == b'\\' { i + 3 } else { i + 2 };
            let end = s[from.min(s.len())..]
                .iter()
                .position(|&b| b == b'\'')
                .map_or(s.len(), |p| from + p);
            blank(&mut out, i + 1, end);
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The paths of a `use` tree or an expression path starting at `s[*i]`, each as its
/// segments: `{a::X, b}` gives `[a, X]` and `[b]`; `*` gives the empty path.
fn tree(s: &[u8], i: &mut usize) -> Vec<Vec<String>> {
    while *i < s.len() && s[*i].is_ascii_whitespace() {
        *i += 1;
    }
    if s.get(*i) == Some(&b'{') {
        *i += 1;
        let mut out = Vec::new();
        loop {
            while *i < s.len() && (s[*i].is_ascii_whitespace() || s[*i] == b',') {
                *i += 1;
            }
            if *i >= s.len() || s[*i] == b'}' {
                *i += 1;
                return out;
            }
            let before = *i;
            out.extend(tree(s, i));
            if *i == before {
                *i += 1;
            }
        }
    }
    let start = *i;
    while *i < s.len() && is_ident(s[*i]) {
        *i += 1;
    }
    if start == *i {
        return vec![Vec::new()];
    }
    let name = String::from_utf8_lossy(&s[start..*i]).to_string();
    if s[*i..].starts_with(b"::") {
        *i += 2;
        return tree(s, i)
            .into_iter()
            .map(|mut p| {
                p.insert(0, name.clone());
                p
            })
            .collect();
    }
    vec![vec![name]]
}

/// Per position, how many inline modules (`mod x { … }`) enclose it.
fn inline_depth(s: &[u8]) -> Vec<u8> {
    let mut depth = vec![0u8; s.len() + 1];
    let mut stack: Vec<bool> = Vec::new();
    let mut pending = false;
    let mut i = 0;
    while i < s.len() {
        if s[i..].starts_with(b"mod ") && (i == 0 || !is_ident(s[i - 1])) {
            let mut j = i + 4;
            while j < s.len() && (is_ident(s[j]) || s[j].is_ascii_whitespace()) {
                j += 1;
            }
            pending = s.get(j) == Some(&b'{');
        }
        match s[i] {
            b'{' => {
                stack.push(pending);
                pending = false;
            }
            b'}' => {
                stack.pop();
            }
            _ => {}
        }
        depth[i] = stack.iter().filter(|&&m| m).count() as u8;
        i += 1;
    }
    depth
}

/// The files `text` (the file of module `me`) points at, among `modules` (module path
/// to file), by the rule in this module's doc.
fn references(
    text: &str,
    me: &[String],
    modules: &BTreeMap<Vec<String>, String>,
) -> BTreeSet<String> {
    let s = code_only(text);
    let depth = inline_depth(&s);
    let children: Vec<String> = modules
        .keys()
        .filter(|m| m.len() == me.len() + 1 && m.starts_with(me))
        .map(|m| m[me.len()].clone())
        .collect();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < s.len() {
        if i > 0 && (is_ident(s[i - 1]) || s[i - 1] == b':') || !is_ident(s[i]) {
            i += 1;
            continue;
        }
        let at = i;
        let paths = tree(&s, &mut i);
        if i == at {
            i += 1;
        }
        for path in paths {
            // `pub(super)` and `pub(crate)` are visibilities, not paths.
            let Some(first) = path.first().filter(|_| path.len() > 1) else {
                continue;
            };
            let inline = depth[at] as usize;
            let mut base: Vec<String> = match first.as_str() {
                "crate" => Vec::new(),
                "self" if inline == 0 => me.to_vec(),
                "super" => {
                    let ups = path.iter().take_while(|p| *p == "super").count();
                    if ups <= inline {
                        continue;
                    }
                    let ups = ups - inline;
                    if ups > me.len() {
                        continue;
                    }
                    me[..me.len() - ups].to_vec()
                }
                c if inline == 0 && path.len() > 1 && children.iter().any(|x| x == c) => {
                    me.to_vec()
                }
                _ => continue,
            };
            let rest = path
                .iter()
                .skip_while(|p| matches!(p.as_str(), "crate" | "super"));
            base.extend(rest.filter(|p| *p != "self").cloned());
            let Some(k) = (0..=base.len())
                .rev()
                .find(|k| modules.contains_key(&base[..*k]))
            else {
                continue;
            };
            let target = &base[..k];
            if target.is_empty() || target == me {
                continue;
            }
            if me.starts_with(target) {
                // An ancestor's module file: the module's front, which its files extend.
                continue;
            }
            out.insert(modules[target].clone());
        }
    }
    out
}

/// A cycle in `graph` (file to the files it points at), as its files in order, the
/// first repeated at the end; `None` when there is none.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // 0 unseen, 1 on the current path, 2 done.
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = path.iter().position(|p| p == m).expect("on the path");
                    let mut cycle = path[from..].to_vec();
                    cycle.push(m.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(m, graph, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// The file graph of the crate's sources: every file under `src` to the files it
/// points at.
fn graph_of(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeMap<Vec<String>, String> = files
        .keys()
        .filter(|f| !f.starts_with("bin/"))
        .map(|f| (module_of(f), f.clone()))
        .collect();
    files
        .iter()
        .filter(|(f, _)| !f.starts_with("bin/") && f.as_str() != "lib.rs")
        .map(|(f, text)| (f.clone(), references(text, &module_of(f), &modules)))
        .collect()
}

fn sources(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p
                    .strip_prefix(src)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn no_two_files_name_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph_of(&sources(&src));
    assert!(graph.len() > 50, "read the crate's files");
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "a circle between the crate's files: {}\nmove what they share into a file \
             below them (see the rule in brains/src/layering.rs)",
            cycle.join(" -> ")
        );
    }
}

/// A made-up crate's files, as `graph_of` takes them.
fn made_up(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect()
}

#[test]
fn the_checker_finds_a_made_up_circle() {
    let files = made_up(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub use a::A;\n"),
        (
            "a/mod.rs",
            "mod inner;\npub use inner::Inner;\nuse crate::b::B;\n",
        ),
        (
            "a/inner.rs",
            "use super::super::c::C;\n/// crate::b in a comment\n",
        ),
        (
            "b.rs",
            "pub struct B;\nfn f() { let _ = ('\"', \"crate::a\"); }\n",
        ),
        ("c.rs", "use crate::{a::Inner, b};\n"),
    ]);
    let graph = graph_of(&files);
    assert_eq!(
        graph["b.rs"],
        BTreeSet::new(),
        "comments and strings are no arrows"
    );
    assert_eq!(graph["c.rs"].len(), 2, "a use group names two files");
    assert_eq!(
        graph["a/mod.rs"].len(),
        2,
        "a re-export of a child is an arrow"
    );
    let cycle = find_cycle(&graph).expect("c -> a -> a/inner -> c is a circle");
    assert_eq!(cycle, ["a/inner.rs", "c.rs", "a/mod.rs", "a/inner.rs"]);
}

#[test]
fn a_child_may_use_its_parent_but_siblings_make_a_circle() {
    let mut files = made_up(&[
        ("lib.rs", "mod v;\n"),
        (
            "v/mod.rs",
            "mod g;\nmod h;\nuse g::Graph;\npub const FILE: &str = \"x\";\n",
        ),
        (
            "v/g.rs",
            "use super::FILE;\npub(super) struct Graph;\nmod tests { use super::*; }\n",
        ),
        ("v/h.rs", "fn f() { crate::v::FILE; }\n"),
    ]);
    assert_eq!(
        find_cycle(&graph_of(&files)),
        None,
        "up to the parent is no arrow"
    );
    files.insert("v/h.rs".into(), "use super::g::Graph;\n".into());
    files.insert("v/g.rs".into(), "fn f() { super::h::f() }\n".into());
    let cycle = find_cycle(&graph_of(&files)).expect("v/g.rs and v/h.rs name each other");
    assert_eq!(cycle, ["v/g.rs", "v/h.rs", "v/g.rs"]);
}
