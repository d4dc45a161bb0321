//! Field reports and boxes: where a `report` went, a box's letters and counts, the sweep
//! and a distribution pass. Each printer takes the owner's own answer type; a letter's
//! own fields (what, class, agent, ...) stay free-form JSON, as letters are.

use serde_json::Value;

use super::{date, fit, fit_left, out, paint, plural, width, wrap, BOLD, CYAN, DIM, GREEN, YELLOW};
use crate::mailbox::letter::{Counts, Fate};
use crate::mailbox::sweep::Unreachable;
use crate::mailbox::{Filed, LetterRow, PassReport, Sweep};
use crate::service::mailbox::BoxView;
use crate::service::registry::Envelope;
use crate::service::verbs::report::{Filing, ReportAnswer};

/// Where the distributor put a letter, as a sentence.
pub fn report(e: Envelope<ReportAnswer>) {
    let id = paint(BOLD, &e.body.id);
    let w = width().saturating_sub(40);
    match e.body.filed {
        Filing::Filed(Filed::Project { repo }) => out!(
            "letter {id} {} {}'s box",
            paint(GREEN, "filed into"),
            fit_left(&repo.to_string_lossy(), w)
        ),
        Filing::Filed(Filed::Medulla) => out!(
            "letter {id} {} the medulla's box (it names no project)",
            paint(GREEN, "filed into")
        ),
        Filing::Filed(Filed::Pending { repo }) => {
            let repo = fit_left(&repo, w);
            out!("letter {id} {} {repo}", paint(YELLOW, "pending:"));
            out!("  that repository is not on this machine yet: the letter is filed when it is");
        }
        Filing::Filed(Filed::Refused { found }) => {
            out!("letter {id} {}", paint(YELLOW, "refused at the floor:"));
            let why =
                format!("{found}; it stays in the spool only: write the letter again without it");
            for line in wrap(&why, width().saturating_sub(2), 4) {
                out!("  {line}");
            }
        }
        Filing::Spool { to, .. } => out!("letter {id} appended to the spool ({to})"),
    }
}

fn mark(state: Option<Fate>) -> &'static str {
    match state {
        Some(Fate::WetInk) => "●",
        Some(Fate::InFlight) => "◍",
        Some(Fate::FiredClay) => "↳",
        Some(Fate::External) => "◌",
        None => "?",
    }
}

/// A letter's own field, as text.
fn field<'a>(l: &'a LetterRow, k: &str, default: &'a str) -> &'a str {
    l.field(k).and_then(Value::as_str).unwrap_or(default)
}

fn letters(list: &[LetterRow], show_found_in: bool) {
    for l in list {
        let state = l
            .state
            .map(|f| super::spelled(&f))
            .unwrap_or_else(|| "?".into());
        let class = field(l, "class", "?");
        let head = format!("{} {} {class:<18} ", mark(l.state), l.id);
        let room = width().saturating_sub(super::text_width(&head));
        let style = if matches!(l.state, Some(Fate::WetInk | Fate::InFlight)) {
            BOLD
        } else {
            DIM
        };
        out!("{}{}", paint(style, &head), fit(field(l, "what", ""), room));
        let mut meta = vec![
            field(l, "agent", "?").to_string(),
            date(l.field("ts").and_then(Value::as_i64).unwrap_or(0)),
            state.replace('_', " "),
        ];
        if let Some(k) = l.field("kind").and_then(Value::as_str) {
            meta.push(format!("kind {k}"));
        }
        if !l.answered_by.is_empty() {
            meta.push(format!("answered by {}", l.answered_by.join(", ")));
        }
        if show_found_in {
            if let Some(found) = &l.found_in {
                meta.push(format!(
                    "in {}",
                    plural(found.len() as u64, "place", "places")
                ));
            }
        }
        out!(
            "    {}",
            paint(DIM, fit(&meta.join(" · "), width().saturating_sub(4)))
        );
    }
}

/// `3 open (2 wet ink, 1 in flight) · 4 fired clay · 1 external`.
fn counts(c: &Counts) {
    out!(
        "{} ({} wet ink, {} in flight) · {} fired clay · {} external",
        paint(BOLD, format!("{} open", c.open)),
        c.wet_ink,
        c.in_flight,
        c.fired_clay,
        c.external
    );
    let legend = "● wet ink: open · ◍ in flight: answered · ↳ fired clay: closed · ◌ external";
    out!("{}", paint(DIM, fit(legend, width())));
}

fn unreachable(list: &[Unreachable]) {
    for u in list {
        out!(
            "{} {}",
            paint(YELLOW, "unreachable:"),
            fit_left(&u.box_file.to_string_lossy(), width().saturating_sub(13))
        );
        out!("    {}", paint(DIM, fit(&u.why, width().saturating_sub(4))));
    }
}

/// `mailbox show`: one box.
pub fn show(b: BoxView) {
    out!(
        "{} {}",
        paint(
            CYAN,
            format!(
                "box of {}",
                fit_left(&b.served_brain, width().saturating_sub(30))
            )
        ),
        paint(
            DIM,
            format!("({})", plural(b.letters.len() as u64, "letter", "letters"))
        )
    );
    out!(
        "{}",
        paint(DIM, fit_left(&b.box_file.to_string_lossy(), width()))
    );
    if b.letters.is_empty() {
        out!("no letters: `medulla report --class note --repo . --what \"...\"` files one");
    }
    letters(&b.letters, false);
    counts(&b.counts);
}

/// `mailbox sweep`: every letter once, wherever it is.
pub fn sweep(e: Envelope<Sweep>) {
    let s = e.body;
    out!(
        "{} {}",
        paint(CYAN, "every letter, once"),
        paint(
            DIM,
            format!(
                "({}, the spool and every known box)",
                plural(s.letters.len() as u64, "letter", "letters")
            )
        )
    );
    letters(&s.letters, true);
    counts(&s.counts);
    out!(
        "pending: {} · refused at the floor: {} · garbage lines in the spool: {}",
        s.pending_distribution,
        s.refused_at_floor,
        s.spool_garbage_lines
    );
    unreachable(&s.unreachable);
}

/// `mailbox distribute`: one pass of the distributor.
pub fn distribute(p: PassReport) {
    out!(
        "read {}: {} filed, {} pending, {} refused at the floor",
        plural(p.read, "new letter", "new letters"),
        p.filed,
        p.pending,
        p.refused
    );
    if p.garbage_lines > 0 {
        out!(
            "{}",
            paint(
                YELLOW,
                format!(
                    "{} in the spool that are not letters",
                    plural(p.garbage_lines, "line", "lines")
                )
            )
        );
    }
    for e in &p.errors {
        out!(
            "{} {}",
            paint(YELLOW, "error:"),
            fit(e, width().saturating_sub(7))
        );
    }
}
