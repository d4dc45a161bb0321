//! `import --from`: per store, what was created, superseded, already there, near a claim
//! already there, and refused; the projects with no brain and the bootstrap that would
//! take them; what the source holds that is not memory. A dry run says the same of what
//! it would do.

use super::{fit_left, out, paint, plural, width, wrap, BOLD, DIM, GREEN, RED, YELLOW};
use crate::service::verbs::import::from_report::{FromReport, StoreTally};

/// Labels shown per list before "and N more".
const SHOWN: usize = 12;

/// Nothing read, or nothing written, already there or near while something was refused
/// or had no brain: the command exits 1.
pub fn failed(r: &FromReport) -> bool {
    let landed: usize = r
        .stores
        .iter()
        .map(|s| s.created + s.superseded + s.already + s.near_duplicates.len())
        .sum();
    r.entries == 0
        || (landed == 0
            && (r.stores.iter().any(|s| !s.refused.is_empty()) || !r.unrouted.is_empty()))
}

pub fn report(r: &FromReport, dry_run: bool) {
    if dry_run {
        out!(
            "{}",
            paint(
                YELLOW,
                "dry run: nothing was written; without --dry-run this import would do:"
            )
        );
    }
    let w = width();
    out!(
        "{} from {} ({})",
        paint(
            BOLD,
            format!("{} read", plural(r.entries as u64, "entry", "entries"))
        ),
        r.source.title(),
        fit_left(&r.place, w.saturating_sub(40))
    );
    if r.entries == 0 {
        out!(
            "  {} no memory found there",
            paint(RED, "nothing to import:")
        );
    }
    for s in &r.stores {
        store(s, dry_run);
    }
    for u in &r.unrouted {
        out!(
            "  {} ({}):",
            paint(YELLOW, "no brain for"),
            plural(u.entries as u64, "entry", "entries")
        );
        line(&u.project);
        list(&u.labels, u.entries);
        for (i, l) in wrap(&format!("to take them: {}", u.fix), w.saturating_sub(8), 4)
            .iter()
            .enumerate()
        {
            out!("{}{l}", if i == 0 { "      " } else { "        " });
        }
    }
    if !r.skipped.is_empty() {
        out!(
            "  {} left alone (not memory):",
            paint(DIM, plural(r.skipped.len() as u64, "thing", "things"))
        );
        for s in r.skipped.iter().take(SHOWN) {
            let name = s
                .file
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            out!("      {name}: {}", s.why);
        }
        if r.skipped.len() > SHOWN {
            out!("      and {} more", r.skipped.len() - SHOWN);
        }
    }
    if !r.count_conserved {
        out!(
            "{}",
            paint(
                RED,
                "the counts do not add up: entries read ≠ every entry accounted for; please report it"
            )
        );
    }
}

fn store(s: &StoreTally, dry_run: bool) {
    let into = if s.store == "medulla" {
        "the medulla (the person's, every project's)".to_string()
    } else {
        fit_left(&s.store, width().saturating_sub(10))
    };
    out!("  {into}");
    let (created, superseded) = if dry_run {
        (
            "would be created",
            "would supersede their earlier import (changed since)",
        )
    } else {
        ("created", "superseded their earlier import (changed since)")
    };
    out!(
        "    {} {created}",
        paint(GREEN, format!("{:>5}", s.created))
    );
    if dry_run {
        list(&s.created_labels, s.created);
    }
    if s.superseded > 0 {
        out!(
            "    {} {superseded}",
            paint(GREEN, format!("{:>5}", s.superseded))
        );
        list(&s.superseded_labels, s.superseded);
    }
    if s.already > 0 {
        out!(
            "    {} already there (imported before; nothing to do)",
            paint(DIM, format!("{:>5}", s.already))
        );
    }
    if !s.near_duplicates.is_empty() {
        out!(
            "    {} not written: a claim already there says nearly the same",
            paint(YELLOW, format!("{:>5}", s.near_duplicates.len()))
        );
        for n in &s.near_duplicates {
            line(&format!(
                "{} ≈ {} \"{}\" ({:.2})",
                n.label, n.existing_slug, n.existing_label, n.score
            ));
            at(&n.evidence);
        }
    }
    if !s.refused.is_empty() {
        out!(
            "    {} refused:",
            paint(RED, format!("{:>5}", s.refused.len()))
        );
        for f in &s.refused {
            line(&format!("{}: {} ({})", f.label, f.reason, f.detail));
            at(&f.evidence);
        }
    }
}

/// Where an entry was read, its end kept when it must be cut.
fn at(evidence: &str) {
    out!(
        "            {}",
        paint(DIM, fit_left(evidence, width().saturating_sub(12)))
    );
}

fn line(text: &str) {
    for (i, l) in wrap(text, width().saturating_sub(12), 3).iter().enumerate() {
        out!("{}{l}", if i == 0 { "          " } else { "            " });
    }
}

/// The first labels of a list, and how many more there are.
fn list(labels: &[String], total: usize) {
    for l in labels.iter().take(SHOWN) {
        line(l);
    }
    if total > SHOWN.min(labels.len()) {
        out!("          and {} more", total - SHOWN.min(labels.len()));
    }
}
