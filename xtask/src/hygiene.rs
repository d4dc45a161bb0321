//! `cargo xtask hygiene`: the hygiene scanner measured, outside the test suite.
//!
//! - `corpus [--positives FILE] [--negatives FILE]`: recall over the positives (caught as
//!   their kind) and false-positive rate over the negatives, with every miss and false
//!   alarm. Without flags it reads the corpus the tests assert on
//!   (`brains/tests/data/hygiene/*.jsonl`, read at run time); with them, another corpus
//!   in the same format (either side may be left out).
//! - `speed [--rounds 200]`: scan time of a 16 KB note built from the negatives, and of
//!   16 KB hostile inputs (the scan must stay linear). Build with `--release` for
//!   figures worth quoting.
//! - `scan --path PATH`: every finding in a file or a directory tree (text files under
//!   1 MB), with its file and line.
//!
//! Corpus lines are JSON: `{"text": …, "kind": <FindingKind::as_str>, "note": …}` for
//! positives and `{"text": …, "note": …}` for negatives; other fields are ignored.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use brains::hygiene::corpus::{self, Case};
use brains::hygiene::scan;

const USAGE: &str = "usage: cargo xtask hygiene corpus [--positives FILE] [--negatives FILE]
       cargo xtask hygiene speed [--rounds 200]
       cargo xtask hygiene scan --path PATH";

/// The corpus the tests assert on, under the workspace root.
fn builtin(file: &str) -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask
        .parent()
        .unwrap_or(xtask)
        .join("brains/tests/data/hygiene")
        .join(file)
}

fn load(path: &Path) -> Result<Vec<Case>> {
    let raw = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the corpus {}", path.display()))?;
    corpus::parse(&raw).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// The value after `flag` in `args`.
fn flag_value<'a>(args: &'a [String], flag: &str) -> Result<Option<&'a str>> {
    match args.iter().position(|a| a == flag) {
        Some(i) => {
            Ok(Some(args.get(i + 1).with_context(|| {
                format!("{flag} takes a value\n{USAGE}")
            })?))
        }
        None => Ok(None),
    }
}

/// Refuse flags this subcommand does not know (a typo must not pass silently).
fn only_flags(args: &[String], known: &[&str]) -> Result<()> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if !known.contains(&a.as_str()) {
            bail!("unknown argument {a:?}\n{USAGE}");
        }
        it.next();
    }
    Ok(())
}

pub fn run(args: &[String]) -> Result<()> {
    let Some((sub, rest)) = args.split_first() else {
        bail!("{USAGE}");
    };
    match sub.as_str() {
        "corpus" => {
            only_flags(rest, &["--positives", "--negatives"])?;
            let pos = flag_value(rest, "--positives")?;
            let neg = flag_value(rest, "--negatives")?;
            if pos.is_none() && neg.is_none() {
                let (p, n) = (builtin("positives.jsonl"), builtin("negatives.jsonl"));
                println!("built-in corpus ({})", p.parent().unwrap_or(&p).display());
                measure(&load(&p)?, &load(&n)?);
            } else {
                let side = |f: Option<&str>| f.map_or(Ok(Vec::new()), |f| load(Path::new(f)));
                measure(&side(pos)?, &side(neg)?);
            }
            Ok(())
        }
        "speed" => {
            only_flags(rest, &["--rounds"])?;
            speed(crate::flag_num(rest, "--rounds", 200)?.max(1))
        }
        "scan" => {
            only_flags(rest, &["--path"])?;
            let path = flag_value(rest, "--path")?
                .with_context(|| format!("scan needs --path\n{USAGE}"))?;
            scan_path(Path::new(path))
        }
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown hygiene task {other:?}\n{USAGE}"),
    }
}

/// Recall over `positives`, false-positive rate over `negatives`, printed with every
/// miss and false alarm.
fn measure(positives: &[Case], negatives: &[Case]) {
    println!("{}", corpus::measure(positives, negatives));
}

/// A 16 KB engineering note built from the negative corpus (prose, config, code, logs,
/// hashes), as the floor sees on a large write.
fn sixteen_kb_note(negatives: &[Case]) -> String {
    let mut note = String::new();
    for c in negatives.iter().cycle() {
        if note.len() + c.text.len() + 2 > 16 * 1024 {
            break;
        }
        note.push_str(&c.text);
        note.push_str("\n\n");
    }
    note
}

/// Scan time of a 16 KB note, and of 16 KB hostile inputs: p50, p90 and p99 of
/// `rounds` scans each.
fn speed(rounds: usize) -> Result<()> {
    let negatives = load(&builtin("negatives.jsonl"))?;
    if negatives.is_empty() {
        bail!("the negative corpus is empty");
    }
    if cfg!(debug_assertions) {
        println!("(a debug build: run `cargo run --release -p xtask -- hygiene speed` for figures worth quoting)");
    }
    let note = sixteen_kb_note(&negatives);
    let with_secrets = format!(
        "{note}\npassword: Qwerty!2345\npostgres://app:Zq8mR2pL4x@db/app\nghp_Q7xK3m2P9lW4zB6nR8tY1uI5oA0sD3fG7hJk\n"
    );
    let k = 16 * 1024;
    let hostile: Vec<(&str, String)> = vec![
        (
            "password=… repeated on one line",
            "password=Zq8!x2Lp ".repeat(k / 18),
        ),
        (
            "one 16 KB base64 token",
            "Zx9qL2mN8vB4cX7wR5tY3uI1oP6aS0dF".repeat(k / 32),
        ),
        ("'token ' repeated", "token ".repeat(k / 6)),
        (
            "URL credentials repeated",
            "postgres://app:Zq8mR2pL4x@db/app ".repeat(k / 33),
        ),
        (
            "escaped JSON assignments",
            r#"\n\"password\": \"Zq8!x2Lp\""#.repeat(k / 30),
        ),
        ("conflict markers", "<<<<<<< HEAD\n".repeat(k / 13)),
    ];
    let mut cases: Vec<(&str, &String)> = vec![
        ("clean 16 KB note", &note),
        ("same with 3 secrets", &with_secrets),
    ];
    cases.extend(hostile.iter().map(|(n, t)| (*n, t)));
    for (name, text) in cases {
        let _ = scan(text); // compile the patterns, warm the caches
        let mut times: Vec<Duration> = (0..rounds)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(scan(std::hint::black_box(text)));
                t.elapsed()
            })
            .collect();
        times.sort();
        let at = |p: usize| times[(times.len() * p / 100).min(times.len() - 1)];
        println!(
            "{name} ({} bytes, {} findings): p50 {:?}, p90 {:?}, p99 {:?}",
            text.len(),
            scan(text).len(),
            at(50),
            at(90),
            at(99),
        );
    }
    Ok(())
}

/// Every finding in a file or a directory tree (text files under 1 MB), walked in
/// name order.
fn scan_path(root: &Path) -> Result<()> {
    if !root.exists() {
        bail!("no such file or directory: {}", root.display());
    }
    let mut stack = vec![root.to_path_buf()];
    let (mut files, mut bytes, mut findings) = (0usize, 0usize, 0usize);
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                let mut entries: Vec<PathBuf> =
                    rd.filter_map(Result::ok).map(|e| e.path()).collect();
                // Popped from the end: reverse name order pushes, name order comes out.
                entries.sort_by(|a, b| b.cmp(a));
                stack.extend(entries);
            }
            continue;
        }
        let Ok(meta) = p.metadata() else { continue };
        if meta.len() > 1 << 20 {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        files += 1;
        bytes += text.len();
        for f in scan(&text) {
            findings += 1;
            println!(
                "{}:{}: {} {}",
                p.display(),
                f.line,
                f.kind.as_str(),
                f.redacted
            );
        }
    }
    println!("scanned {files} files, {bytes} bytes: {findings} findings");
    Ok(())
}
