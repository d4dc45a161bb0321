//! `import`, `export` and `backup`: a progress bar on stderr while the owner streams its progress,
//! then a count-conserving report in which duplicates (already imported) are told apart
//! from real refusals.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;

use super::{
    fit, fit_left, num, out, paint, plural, s, width, wrap, BOLD, DIM, GREEN, RED, YELLOW,
};
use crate::cli::client::Progress;

/// A progress bar driven by the owner's progress lines; drawn only on a terminal.
pub struct Bar(Option<ProgressBar>);

impl Bar {
    pub fn new(show: bool) -> Bar {
        if !show || !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{msg:>8} [{bar:40}] {pos}/{len} {elapsed}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        Bar(Some(bar))
    }

    pub fn update(&self, p: Progress<'_>) {
        if let Some(b) = &self.0 {
            b.set_length(p.total);
            b.set_position(p.done);
            b.set_message(p.what.to_string());
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

/// Refusals that are not duplicates: what the user must look at.
fn real_refusals(body: &Value) -> Vec<&Value> {
    body["refusals"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["reason"].as_str() != Some("duplicate"))
        .collect()
}

fn duplicates(body: &Value) -> u64 {
    body["refusals"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["reason"].as_str() == Some("duplicate"))
        .count() as u64
}

/// An import that found nothing to read, or refused every file it did not already hold,
/// failed: the command exits non-zero.
pub fn import_failed(body: &Value) -> bool {
    let imported = num(&body["imported_live"]) + num(&body["into_history"]);
    num(&body["files_seen"]) == 0 || (imported == 0 && !real_refusals(body).is_empty())
}

pub fn import(body: &Value, dir: &str) {
    let dry = body["dry_run"].as_bool() == Some(true);
    let seen = num(&body["files_seen"]);
    if dry {
        out!(
            "{}",
            paint(
                YELLOW,
                "dry run: nothing was written; without --dry-run this import would do:"
            )
        );
    }
    if seen == 0 {
        out!(
            "{} no .light.md file in {}",
            paint(RED, "nothing to import:"),
            fit_left(dir, width().saturating_sub(30))
        );
        return;
    }
    let target = s(&body["target"], "?");
    let into = match target {
        "medulla" => "the medulla".to_string(),
        "triage" => "the stores the rules chose".to_string(),
        root => fit_left(root, width().saturating_sub(40)),
    };
    let live = num(&body["imported_live"]);
    let hist = num(&body["into_history"]);
    let dups = duplicates(body);
    let real = real_refusals(body);
    out!(
        "{} into {into}",
        paint(BOLD, format!("{} read", plural(seen, "file", "files")))
    );
    out!(
        "  {} {}",
        paint(GREEN, format!("{live:>5}")),
        "imported live"
    );
    out!(
        "  {} {}",
        paint(GREEN, format!("{hist:>5}")),
        "imported into history (older versions)"
    );
    if dups > 0 {
        out!(
            "  {} already imported (the store holds them; re-running imports nothing new)",
            paint(DIM, format!("{dups:>5}"))
        );
    }
    if !real.is_empty() {
        out!("  {} refused:", paint(RED, format!("{:>5}", real.len())));
        for r in &real {
            let file = r["file"].as_str().map(short_file).unwrap_or("?");
            let line = format!("{file}: {} ({})", s(&r["reason"], "?"), s(&r["detail"], ""));
            for (i, l) in wrap(&line, width().saturating_sub(10), 3)
                .iter()
                .enumerate()
            {
                out!("{}{l}", if i == 0 { "        " } else { "          " });
            }
        }
    }
    if body["count_conserved"].as_bool() == Some(false) {
        out!(
            "{}",
            paint(
                RED,
                "the counts do not add up: files seen ≠ imported + refused; please report it"
            )
        );
    }
    if let Some(by) = body["live_by_store"]
        .as_object()
        .filter(|m| target == "triage" && !m.is_empty())
    {
        for (store, n) in by {
            out!(
                "  {} → {}",
                plural(num(n), "live claim", "live claims"),
                fit_left(store, width().saturating_sub(24))
            );
        }
    }
    for a in body["ambiguous_kept_in_medulla"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let candidates: Vec<String> = a["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                c.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| c.to_string())
            })
            .collect();
        let line = format!(
            "{} (rules for {})",
            s(&a["slug"], "?"),
            candidates.join(", ")
        );
        out!(
            "  {} {}",
            paint(YELLOW, "ambiguous, kept in the medulla:"),
            fit(&line, width().saturating_sub(34))
        );
    }
    if target == "triage" {
        let g = &body["count_gate"];
        let holds = g["holds"].as_bool() == Some(true);
        out!(
            "  count gate: {} of {} placed in exactly one store: {}",
            num(&g["placed"]),
            plural(
                num(&g["baseline"]),
                "live legacy claim",
                "live legacy claims"
            ),
            if holds {
                paint(GREEN, "holds")
            } else {
                paint(RED, "does not hold")
            }
        );
    }
    let unknown = num(&body["origin_unknown"]);
    if unknown > 0 {
        out!(
            "  {} had no Origin-Brain and {} recorded as unknown",
            plural(unknown, "version", "versions"),
            if unknown == 1 { "is" } else { "are" }
        );
    }
}

/// A refused file's name relative to the imported directory when it is inside it.
fn short_file(path: &str) -> &str {
    match path.rfind("/.history/") {
        Some(i) => &path[i + 1..],
        None => path.rsplit('/').next().unwrap_or(path),
    }
}

pub fn export(body: &Value) {
    out!(
        "wrote {} and {} into {}",
        plural(num(&body["live_files"]), "live claim", "live claims"),
        plural(
            num(&body["history_files"]),
            "history version",
            "history versions"
        ),
        fit_left(s(&body["dir"], "?"), width().saturating_sub(50))
    );
    for r in body["refused"].as_array().into_iter().flatten() {
        let line = format!(
            "{} v{}: {}",
            s(&r["slug"], "?"),
            num(&r["version"]),
            s(&r["found"], "?")
        );
        out!(
            "  {} {}",
            paint(YELLOW, "not written (hygiene floor):"),
            fit(&line, width().saturating_sub(31))
        );
    }
}

pub fn backup(body: &Value) {
    let m = &body["manifest"];
    let stores = m["stores"].as_array().cloned().unwrap_or_default();
    let live: u64 = stores
        .iter()
        .map(|s| num(&s["counts"]["live_claims"]))
        .sum();
    let bytes: u64 = stores.iter().map(|s| num(&s["bytes"])).sum();
    out!(
        "backed up {} ({}, {} KiB) in {} ms into",
        plural(stores.len() as u64, "store", "stores"),
        plural(live, "live claim", "live claims"),
        bytes / 1024,
        num(&body["duration_ms"])
    );
    out!(
        "  {}",
        fit_left(s(&body["dir"], "?"), width().saturating_sub(2))
    );
    for st in &stores {
        let c = &st["counts"];
        out!(
            "  {}  {} live, {} history, {} acts, {} keys",
            fit(
                s(&st["root"], s(&st["store"], "?")),
                width().saturating_sub(50)
            ),
            num(&c["live_claims"]),
            num(&c["history_versions"]),
            num(&c["acts"]),
            num(&c["kv_keys"])
        );
    }
    // The home's own files by name; each brain's manifest and counters only counted.
    let files = m["files"].as_array().cloned().unwrap_or_default();
    let (top, beside): (Vec<&Value>, Vec<&Value>) =
        files.iter().partition(|f| !s(&f["file"], "").contains('/'));
    for f in top {
        out!("  {}  {} bytes", s(&f["file"], "?"), num(&f["bytes"]));
    }
    if !beside.is_empty() {
        out!(
            "  {}",
            paint(
                DIM,
                format!(
                    "and {} beside the stores",
                    plural(beside.len() as u64, "file", "files")
                )
            )
        );
    }
    for f in m["failed"].as_array().into_iter().flatten() {
        out!(
            "  {} {}: {}",
            paint(YELLOW, "not copied:"),
            s(&f["root"], s(&f["store"], "?")),
            s(&f["error"], "?")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_rerun_of_duplicates_is_not_a_failure_but_all_refused_is() {
        let rerun = json!({"files_seen": 2, "imported_live": 0, "into_history": 0, "refused": 2,
            "refusals": [{"reason": "duplicate"}, {"reason": "duplicate"}]});
        assert!(!import_failed(&rerun));
        let bad = json!({"files_seen": 2, "imported_live": 0, "into_history": 0, "refused": 2,
            "refusals": [{"reason": "unparseable"}, {"reason": "duplicate"}]});
        assert!(import_failed(&bad));
        assert!(import_failed(&json!({"files_seen": 0})));
    }
}
