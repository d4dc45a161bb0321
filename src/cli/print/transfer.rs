//! `import`, `export` and `backup`: a progress bar on stderr while the owner streams its progress,
//! then a count-conserving report in which duplicates (already imported) are told apart
//! from real refusals.

use std::io::IsTerminal;

use super::{fit, fit_left, out, paint, plural, width, wrap, BOLD, DIM, GREEN, RED, YELLOW};
use crate::cli::client::Progress;
use crate::service::registry::Envelope;
use crate::service::verbs::backup::BackupAnswer;
use crate::service::verbs::export::ExportReport;
use crate::service::verbs::import::{ImportReport, Refusal};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

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
fn real_refusals(r: &ImportReport) -> Vec<&Refusal> {
    r.refusals
        .iter()
        .filter(|f| f.reason != "duplicate")
        .collect()
}

fn duplicates(r: &ImportReport) -> u64 {
    r.refusals
        .iter()
        .filter(|f| f.reason == "duplicate")
        .count() as u64
}

/// An import that found nothing to read, or refused every file it did not already hold,
/// failed: the command exits non-zero.
pub fn import_failed(r: &ImportReport) -> bool {
    let imported = r.imported_live + r.into_history;
    r.files_seen == 0 || (imported == 0 && !real_refusals(r).is_empty())
}

pub fn import(r: &ImportReport, dir: &str) {
    let seen = r.files_seen as u64;
    if r.dry_run {
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
    let target = r.target.as_str();
    let into = match target {
        "medulla" => "the medulla".to_string(),
        "triage" => "the stores the rules chose".to_string(),
        root => fit_left(root, width().saturating_sub(40)),
    };
    let (live, hist) = (r.imported_live, r.into_history);
    let dups = duplicates(r);
    let real = real_refusals(r);
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
        for f in &real {
            let file = short_file(&f.file.to_string_lossy()).to_string();
            let line = format!("{file}: {} ({})", f.reason, f.detail);
            for (i, l) in wrap(&line, width().saturating_sub(10), 3)
                .iter()
                .enumerate()
            {
                out!("{}{l}", if i == 0 { "        " } else { "          " });
            }
        }
    }
    if !r.count_conserved {
        out!(
            "{}",
            paint(
                RED,
                "the counts do not add up: files seen ≠ imported + refused; please report it"
            )
        );
    }
    if target == "triage" {
        for (store, n) in &r.live_by_store {
            out!(
                "  {} → {}",
                plural(*n as u64, "live claim", "live claims"),
                fit_left(store, width().saturating_sub(24))
            );
        }
    }
    for a in &r.ambiguous_kept_in_medulla {
        let line = format!("{} (rules for {})", a.slug, a.candidates.join(", "));
        out!(
            "  {} {}",
            paint(YELLOW, "ambiguous, kept in the medulla:"),
            fit(&line, width().saturating_sub(34))
        );
    }
    if target == "triage" {
        let g = &r.count_gate;
        out!(
            "  count gate: {} of {} placed in exactly one store: {}",
            g.placed,
            plural(g.baseline as u64, "live legacy claim", "live legacy claims"),
            if g.holds {
                paint(GREEN, "holds")
            } else {
                paint(RED, "does not hold")
            }
        );
    }
    let unknown = r.origin_unknown as u64;
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

pub fn export(e: Envelope<ExportReport>) {
    let r = e.body;
    out!(
        "wrote {} and {} into {}",
        plural(r.live_files as u64, "live claim", "live claims"),
        plural(
            r.history_files as u64,
            "history version",
            "history versions"
        ),
        fit_left(&r.dir.to_string_lossy(), width().saturating_sub(50))
    );
    for f in &r.refused {
        let line = format!("{} v{}: {}", f.slug, f.version, f.found);
        out!(
            "  {} {}",
            paint(YELLOW, "not written (hygiene floor):"),
            fit(&line, width().saturating_sub(31))
        );
    }
}

pub fn backup(a: Envelope<BackupAnswer>) {
    let b = a.body;
    let m = &b.manifest;
    let live: u64 = m.stores.iter().map(|s| s.counts.live_claims).sum();
    let bytes: u64 = m.stores.iter().map(|s| s.bytes).sum();
    out!(
        "backed up {} ({}, {} KiB) in {} ms into",
        plural(m.stores.len() as u64, "store", "stores"),
        plural(live, "live claim", "live claims"),
        bytes / 1024,
        b.duration_ms
    );
    out!(
        "  {}",
        fit_left(&b.dir.to_string_lossy(), width().saturating_sub(2))
    );
    for st in &m.stores {
        let c = &st.counts;
        out!(
            "  {}  {} live, {} history, {} acts, {} keys",
            fit(
                st.root.as_deref().unwrap_or(&st.store),
                width().saturating_sub(50)
            ),
            c.live_claims,
            c.history_versions,
            c.acts,
            c.kv_keys
        );
    }
    // The home's own files by name; each brain's manifest and counters only counted.
    let (top, beside): (Vec<_>, Vec<_>) = m.files.iter().partition(|f| !f.file.contains('/'));
    for f in top {
        out!("  {}  {} bytes", f.file, f.bytes);
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
    for f in &m.failed {
        out!(
            "  {} {}: {}",
            paint(YELLOW, "not copied:"),
            f.root.as_deref().unwrap_or(&f.store),
            f.error
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An import report as the owner sends it, with these files seen and refusals.
    fn report(files_seen: usize, reasons: &[&str]) -> ImportReport {
        let refusals: Vec<_> = reasons
            .iter()
            .map(|r| json!({"file": "/d/a.light.md", "reason": r, "detail": ""}))
            .collect();
        serde_json::from_value(json!({
            "dry_run": false, "target": "/p", "live_by_store": {}, "ambiguous_kept_in_medulla": [],
            "count_gate": {"baseline": 0, "placed": 0, "holds": true}, "files_seen": files_seen,
            "imported_live": 0, "into_history": 0, "refused": reasons.len(), "refusals": refusals,
            "origin_unknown": 0, "count_conserved": true
        }))
        .unwrap()
    }

    #[test]
    fn a_rerun_of_duplicates_is_not_a_failure_but_all_refused_is() {
        assert!(!import_failed(&report(2, &["duplicate", "duplicate"])));
        assert!(import_failed(&report(2, &["unparseable", "duplicate"])));
        assert!(import_failed(&report(0, &[])));
    }
}
