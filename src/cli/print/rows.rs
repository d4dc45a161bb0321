//! Claim rows as `seek`, `north`, `delegate` and `history` print them: each row leads with
//! the slug that `history`, `learn`, `promote` and `purge` take. Each printer takes the
//! verb's own answer type, read back from the owner's JSON.

use super::{
    date, datetime, fit, fit_left, out, paint, plural, spelled, width, wrap, BOLD, CYAN, DIM,
    YELLOW,
};
use crate::service::registry::Envelope;
use crate::service::rows::Row;
use crate::service::verbs::beat::NorthAnswer;
use crate::service::verbs::delegate::Packet;
use crate::service::verbs::history::HistoryAnswer;
use crate::service::verbs::seek::SeekAnswer;

/// How many lines of a claim's text a row shows before `…`.
const TEXT_LINES: usize = 4;
const INDENT: &str = "    ";

/// Whether a label says nothing its slug does not (`release build` → `release-build`).
fn label_is_slug(label: &str, slug: &str) -> bool {
    let derived: String = label
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect();
    let derived: Vec<&str> = derived.split('-').filter(|p| !p.is_empty()).collect();
    derived.join("-") == slug
}

/// The first line of a row: the slug in bold, then the label when it says more.
fn head(r: &Row, lead: &str) -> String {
    let w = width();
    let (slug, label) = (&r.slug, &r.label);
    let slug_fit = fit(slug, w.saturating_sub(lead.len()));
    let mut line = format!("{lead}{}", paint(BOLD, &slug_fit));
    let used = lead.len() + super::text_width(&slug_fit);
    if !label.is_empty() && !label_is_slug(label, slug) && used + 6 < w {
        line.push_str(&paint(DIM, "  · "));
        line.push_str(&fit(label, w - used - 4));
    }
    line
}

/// The provenance line: tier, origin, agent, strength, date, trust and flags, fitted to
/// the width by shortening the origin path from the left.
fn provenance(r: &Row) -> String {
    let w = width().saturating_sub(INDENT.len());
    let mut tail = vec![
        r.source_agent.clone(),
        spelled(&r.strength),
        date(r.created),
    ];
    // Trust says something only once the claim has been graded.
    let graded = r
        .trust_counts
        .is_some_and(|t| t.correct + t.partial + t.wrong > 0);
    if graded {
        tail.push(format!("trust {:.2}", r.trust));
    }
    if r.stale {
        tail.push("stale".into());
    }
    if r.aged_out {
        tail.push("aged out".into());
    }
    let tier = format!("[{}]", spelled(&r.tier));
    let tail = tail.join(" · ");
    // The origin gives way first, down to its last 12 columns; then the tail is cut.
    let room = w.saturating_sub(tier.len() + super::text_width(&tail) + 4);
    let origin = fit_left(&r.origin_brain, room.max(12));
    fit(&format!("{tier} {origin} · {tail}"), w)
}

/// One claim row: head, text (wrapped), provenance, and a medulla copy's chain.
pub fn row(r: &Row) {
    out!("{}", head(r, ""));
    let w = width().saturating_sub(INDENT.len());
    for line in wrap(&r.text, w, TEXT_LINES) {
        out!("{INDENT}{line}");
    }
    out!("{INDENT}{}", paint(DIM, provenance(r)));
    if let Some(chain) = r.promotion.as_ref().and_then(|p| p.chain.as_deref()) {
        for line in wrap(chain, w, 2) {
            out!("{INDENT}{}", paint(DIM, line));
        }
    }
    if let Some(changed) = &r.witness_superseded {
        let line = format!(
            "witness changed: {} is at version {} since {}; promote it again or demote this copy",
            changed.witness,
            changed.by_version,
            date(changed.at)
        );
        for line in wrap(&line, w, 2) {
            out!("{INDENT}{}", paint(YELLOW, line));
        }
    }
}

fn print_rows(list: &[Row]) {
    for r in list {
        row(r);
    }
}

/// `seek`: flat rows, or groups by origin for `--tier all-brains`.
pub fn seek(e: Envelope<SeekAnswer>) {
    let retrieval = spelled(&e.retrieval);
    let flat = match e.body {
        SeekAnswer::Flat(f) => f,
        SeekAnswer::Grouped(g) => {
            for grp in &g.groups {
                out!(
                    "{} {}",
                    paint(
                        CYAN,
                        format!("== {}", fit_left(&grp.origin_brain, width() - 20))
                    ),
                    paint(
                        DIM,
                        format!("({})", plural(grp.results.len() as u64, "claim", "claims"))
                    )
                );
                print_rows(&grp.results);
            }
            out!(
                "{}",
                paint(
                    DIM,
                    format!(
                        "{} searched (retrieval: {retrieval})",
                        plural(g.brains_searched as u64, "store", "stores")
                    )
                )
            );
            for f in &g.failed {
                let err = &f.error.0;
                let what = format!(
                    "{}: {} [{}]",
                    f.brain,
                    err["message"].as_str().unwrap_or("failed"),
                    err["code"].as_str().unwrap_or("error")
                );
                out!(
                    "{} {}",
                    paint(YELLOW, "could not search:"),
                    fit(&what, width() - 18)
                );
            }
            return;
        }
    };
    if let (Some(n), Some(note)) = (flat.vectors_loading, &flat.vectors_loading_note) {
        out!(
            "{}",
            paint(YELLOW, fit(&format!("{n} vectors unread: {note}"), width()))
        );
    }
    if flat.results.is_empty() {
        match &flat.note {
            Some(note) => out!("{note} (retrieval: {retrieval})"),
            None => out!("no claim matched (retrieval: {retrieval})"),
        }
        weak_rows(&flat.weak);
        return;
    }
    print_rows(&flat.results);
    weak_rows(&flat.weak);
    out!(
        "{}",
        paint(
            DIM,
            format!(
                "{} (retrieval: {retrieval}); `medulla history SLUG` shows every version",
                plural(flat.results.len() as u64, "claim", "claims")
            )
        )
    );
}

/// `seek`'s weak rows, dimmed, under a heading that says what they are.
fn weak_rows(weak: &[Row]) {
    if weak.is_empty() {
        return;
    }
    let w = width();
    out!(
        "{}",
        paint(
            YELLOW,
            fit(
                "below the relevance floor, may be unrelated (judge before use):",
                w
            )
        )
    );
    let inner = w.saturating_sub(INDENT.len());
    for r in weak {
        out!("{}", paint(DIM, fit(&r.slug, w)));
        for line in wrap(&r.text, inner, TEXT_LINES) {
            out!("{INDENT}{}", paint(DIM, line));
        }
        let mut scores = format!("weak · score {:.2}", r.score.unwrap_or(0.0));
        if let Some(l) = r.lexical {
            scores.push_str(&format!(" · words {l:.2}"));
        }
        if let Some(c) = r.cosine {
            scores.push_str(&format!(" · cosine {c:.2}"));
        }
        out!(
            "{INDENT}{}",
            paint(DIM, fit(&format!("{} · {scores}", provenance(r)), inner))
        );
    }
}

/// `history`: every version, oldest first.
pub fn history(e: Envelope<HistoryAnswer>) {
    let versions = &e.body.versions;
    let count = format!(
        " ({}, oldest first)",
        plural(versions.len() as u64, "version", "versions")
    );
    let slug = fit(&e.body.slug, width().saturating_sub(count.len()));
    out!("{}{}", paint(BOLD, slug), paint(DIM, count));
    let w = width().saturating_sub(INDENT.len());
    for v in versions {
        let state = v.state.as_ref().map(spelled).unwrap_or_else(|| "?".into());
        let state = match v.outdated_reason.as_deref() {
            Some(why) if state == "outdated" => format!("outdated ({why})"),
            _ => state,
        };
        let head = format!(
            "v{} · {} · {} · {} · {}",
            v.version.unwrap_or(0),
            state,
            spelled(&v.strength),
            date(v.created),
            v.source_agent
        );
        out!("{}", fit(&head, width()));
        for line in wrap(&v.text, w, TEXT_LINES) {
            out!("{INDENT}{line}");
        }
    }
}

/// `north`: this brain's part, the medulla's, and what exists but did not match.
pub fn north(e: Envelope<NorthAnswer>) {
    let n = e.body;
    for line in wrap(&n.note, width(), 4) {
        out!("{line}");
    }
    if !n.project.is_empty() {
        out!(
            "{}",
            paint(
                CYAN,
                format!(
                    "this brain: {} of {}",
                    matched(n.project.len()),
                    n.memory_exists.project
                )
            )
        );
        print_rows(&n.project);
    }
    if !n.medulla.is_empty() {
        out!(
            "{}",
            paint(
                CYAN,
                format!(
                    "the medulla: {} of {}",
                    matched(n.medulla.len()),
                    n.memory_exists.medulla.unwrap_or(0)
                )
            )
        );
        print_rows(&n.medulla);
    }
    if !n.recent_unmatched.is_empty() {
        out!("{}", paint(CYAN, "not matched, most recent:"));
        print_rows(&n.recent_unmatched);
    }
    if let Some(err) = &n.medulla_error {
        out!(
            "{} {}",
            paint(YELLOW, "the medulla part failed:"),
            fit(
                err.0["message"].as_str().unwrap_or(""),
                width().saturating_sub(25)
            )
        );
    }
}

fn matched(n: usize) -> String {
    format!("{} matched", plural(n as u64, "claim", "claims"))
}

/// `delegate`: the packet to paste into a subagent's brief, composed from the answer so
/// that its time is a date and each memory line names its slug.
pub fn delegate(e: Envelope<Packet>) {
    let p = e.body;
    out!("## medulla delegation packet");
    let task = format!("task: {}", p.task);
    for (i, l) in wrap(&task, width().saturating_sub(2), usize::MAX)
        .iter()
        .enumerate()
    {
        out!("{}{l}", if i == 0 { "" } else { "  " });
    }
    // The fingerprint binds as well as the root does, and always fits on a line.
    out!("binding: send this header on every medulla call");
    out!("  Medulla-Brain: {}", p.binding.fingerprint);
    out!(
        "sources: project {}",
        fit_left(&p.sources.project, width().saturating_sub(17))
    );
    out!(
        "  medulla {}, composed {}",
        p.sources.medulla,
        datetime(p.sources.composed_ts)
    );
    if p.memory.is_empty() {
        out!("memory: {}", p.note);
    } else {
        out!("memory:");
    }
    let w = width().saturating_sub(2);
    for r in &p.memory {
        let line = format!(
            "[{}] {} ({}): {} ({}, by {}, {})",
            spelled(&r.tier),
            r.slug,
            r.label,
            r.text,
            r.origin_brain,
            r.source_agent,
            date(r.created)
        );
        // A packet is pasted whole: its memory is wrapped, never cut.
        for (i, l) in wrap(&line, w, usize::MAX).iter().enumerate() {
            out!("{}{l}", if i == 0 { "- " } else { "  " });
        }
    }
    let etiquette = format!("etiquette: {}", p.etiquette);
    for (i, l) in wrap(&etiquette, w, 6).iter().enumerate() {
        out!("{}{l}", if i == 0 { "" } else { "  " });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_that_is_its_slug_is_not_repeated() {
        assert!(label_is_slug("release build", "release-build"));
        assert!(label_is_slug("C++ build", "c-build"));
        assert!(!label_is_slug("how we deploy", "deploy"));
    }

    #[test]
    fn provenance_fits_the_width_with_a_long_origin() {
        let r: Row = serde_json::from_value(serde_json::json!({
            "label": "x", "slug": "x", "text": "x", "age_ms": 0, "aged_out": false,
            "tier": "project", "origin_brain": format!("/home/you/{}", "deep/".repeat(30)),
            "source_agent": "claude:maker", "strength": "verified", "created": 0,
            "trust": 0.5, "stale": true
        }))
        .unwrap();
        let p = provenance(&r);
        assert!(
            super::super::text_width(&p) <= width() - INDENT.len(),
            "{p}"
        );
        assert!(p.contains("stale"), "{p}");
    }
}
