//! `medulla review` and `medulla tend`: what agents wrote that no person has looked at,
//! and what a tending pass joined, found disagreeing, or proposes to retire.

use super::{
    date, fit, out, paint, plural, say, spelled, width, wrap, BOLD, CYAN, DIM, GREEN, YELLOW,
};
use crate::service::registry::Envelope;
use crate::service::tending::{Disagreement, Join, Stale};
use crate::service::verbs::review::{ReviewAnswer, ReviewOp};
use crate::service::verbs::tend::TendAnswer;

fn quoted(text: &str) -> String {
    format!("\"{}\"", fit(text, width().saturating_sub(8)))
}

/// A line after a blank one, in `style`: a section's heading, or a closing hint.
fn section(style: anstyle::Style, text: impl std::fmt::Display) {
    out!("");
    out!("{}", paint(style, text));
}

fn disagreements(ds: &[Disagreement]) {
    if ds.is_empty() {
        return;
    }
    section(
        BOLD,
        format!(
            "{} (never joined: settle them)",
            plural(ds.len() as u64, "disagreement", "disagreements")
        ),
    );
    for d in ds {
        let what: Vec<String> = d
            .differences
            .iter()
            .map(|x| format!("{} {} / {}", x.kind, x.a, x.b))
            .collect();
        say(
            Some((YELLOW, "differ")),
            &format!("{} and {}: {}", d.a.slug, d.b.slug, what.join("; ")),
        );
        out!("  {}", paint(DIM, quoted(&d.a.text)));
        out!("  {}", paint(DIM, quoted(&d.b.text)));
    }
}

fn stale(rs: &[Stale], flag: &str) {
    if rs.is_empty() {
        return;
    }
    section(
        BOLD,
        format!(
            "{} aged out and unused (proposed for retirement)",
            plural(rs.len() as u64, "claim", "claims")
        ),
    );
    for r in rs {
        let used = r
            .last_used
            .map(|u| format!("last used {}", date(u)))
            .unwrap_or_else(|| "no use recorded".into());
        say(
            None,
            &format!("{} (written {}, {used})", r.claim.slug, date(r.created)),
        );
        out!(
            "  {}",
            paint(
                DIM,
                format!(
                    "medulla review retire {}{flag} --reason \"...\"",
                    r.claim.slug
                )
            )
        );
    }
}

fn joins(js: &[Join]) {
    for j in js {
        let (lead, verb) = if j.done {
            (GREEN, "joined")
        } else {
            (CYAN, "would join")
        };
        let names: Vec<&str> = j.joined.iter().map(|n| n.slug.as_str()).collect();
        say(
            Some((lead, verb)),
            &format!("{} into {}", names.join(", "), j.survivor.slug),
        );
        out!("  {}", paint(DIM, quoted(&j.survivor.text)));
        for d in &j.dropped {
            out!(
                "  {}",
                paint(
                    YELLOW,
                    format!(
                        "{} also says {} (kept in history)",
                        d.slug,
                        d.values.join(", ")
                    )
                )
            );
        }
        if j.done {
            out!("  {}", paint(DIM, format!("undo: {}", j.undo)));
        }
    }
}

/// The `--brain` a follow-up command needs.
fn flag(store: &str) -> String {
    format!(" --brain {}", crate::service::route::shell_quote(store))
}

pub fn review(e: Envelope<ReviewAnswer>) {
    let a = &e.body;
    if let Some(d) = &a.done {
        let what = match a.op {
            ReviewOp::Keep if d.act == "memorize" => "kept and verified",
            ReviewOp::Keep => "kept",
            ReviewOp::Retire => "retired",
            ReviewOp::Edit => "edited",
            ReviewOp::Merge => "merged",
            ReviewOp::List => "",
        };
        let joined = if d.joined.is_empty() {
            String::new()
        } else {
            format!(" ({} joined into it)", d.joined.join(", "))
        };
        say(
            Some((GREEN, what)),
            &format!("{}{joined}, by {}", d.claim.slug, d.by),
        );
        out!(
            "{}",
            paint(
                DIM,
                format!("{} unreviewed left in {}", a.unreviewed, a.store)
            )
        );
        return;
    }
    let f = flag(&a.store);
    if a.unreviewed == 0 {
        say(
            Some((GREEN, "reviewed")),
            &format!("every claim agents wrote in {} has been looked at", a.store),
        );
    } else {
        out!(
            "{}",
            paint(
                BOLD,
                format!(
                    "{} unreviewed in {} (newest first)",
                    plural(a.unreviewed as u64, "claim", "claims"),
                    a.store
                )
            )
        );
    }
    for u in &a.claims {
        let c = &u.claim;
        out!("");
        say(
            Some((CYAN, c.slug.as_str())),
            &format!(
                "{} · {} · {}",
                c.source_agent,
                spelled(&c.strength),
                date(c.created)
            ),
        );
        for line in wrap(&c.text, width().saturating_sub(4), 6) {
            out!("  {line}");
        }
        let mut from = Vec::new();
        if let Some(w) = &u.written_from {
            from.push(format!("from {w}"));
        }
        if let Some(s) = &u.session {
            from.push(format!("session {}", fit(s, 16)));
        }
        if !c.evidence.is_empty() {
            from.push(format!("evidence {}", c.evidence.join(", ")));
        }
        if !from.is_empty() {
            out!("  {}", paint(DIM, from.join(" · ")));
        }
        for n in &u.near {
            out!(
                "  {}",
                paint(
                    YELLOW,
                    format!(
                        "near {} ({:.2}): medulla review merge {} --with {}{f}",
                        n.slug, n.score, c.slug, n.slug
                    )
                )
            );
        }
    }
    if let Some(next) = a.next_offset {
        section(DIM, format!("more: medulla review{f} --offset {next}"));
    }
    disagreements(&a.disagreements);
    stale(&a.retire, &f);
    let made: Vec<Join> = a.joins.iter().filter(|j| j.done).cloned().collect();
    if !made.is_empty() {
        section(BOLD, "joined by the last tending");
        joins(&made);
    }
    if !a.claims.is_empty() {
        section(DIM, format!("medulla review keep|retire|edit|merge SLUG{f} (keep --verify; retire --reason; edit --text; merge --with)"));
    }
    match a.tended_at {
        Some(at) => out!("{}", paint(DIM, format!("last tended {}", date(at)))),
        None => out!("{}", paint(DIM, format!("never tended: medulla tend{f}"))),
    }
}

pub fn tend(e: Envelope<TendAnswer>) {
    let a = &e.body;
    if !a.revived.is_empty() {
        for n in &a.revived {
            say(Some((GREEN, "revived")), &n.slug);
        }
        return;
    }
    let Some(p) = &a.pass else { return };
    let f = flag(&p.store);
    say(
        None,
        &format!(
            "tended {}: {} gone over, {} judged ({}, {} ms)",
            p.store,
            plural(p.claims as u64, "claim", "claims"),
            plural(p.pairs_judged as u64, "pair", "pairs"),
            p.mode,
            p.ms
        ),
    );
    if p.joins.is_empty() {
        say(
            Some((GREEN, "lean:")),
            "nothing says the same thing under two labels",
        );
    }
    joins(&p.joins);
    disagreements(&p.disagreements);
    stale(&p.retire, &f);
    if !p.applied && !p.joins.is_empty() {
        section(
            DIM,
            format!("nothing written: medulla tend{f} --apply to join"),
        );
    }
}
