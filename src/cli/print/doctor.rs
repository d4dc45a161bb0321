//! `medulla doctor`: misdelivery per week, letters, the medulla's cap, stores and their
//! faults, drift, near-duplicates, the team, refused callers, the hooks, brains of one
//! repository.

use super::{fit, fit_left, out, paint, plural, width, BOLD, CYAN, DIM, GREEN, RED, YELLOW};
use crate::service::mailbox::{Doctor, SameRepository};

/// The misdelivery kinds, in the doctor's columns.
const KINDS: [&str; 5] = crate::mailbox::letter::MISDELIVERY_KINDS;

pub fn doctor(d: Doctor) {
    out!(
        "{} {}",
        paint(BOLD, "medulla doctor"),
        paint(DIM, format!("({})", d.caption))
    );
    out!();
    out!("{}", paint(CYAN, "misdelivery reported, per ISO week"));
    let weeks = &d.misdelivery_by_week;
    if weeks.is_empty() {
        out!("  none reported");
    } else {
        let mut kinds: Vec<String> = KINDS.iter().map(|k| k.to_string()).collect();
        for per in weeks.values() {
            for k in per.keys() {
                if !kinds.contains(k) {
                    kinds.push(k.clone());
                }
            }
        }
        if width() >= 76 && kinds.len() == KINDS.len() {
            out!("  {:<8}  {}", "week", paint(DIM, kinds.join("  ")));
            for (week, per) in weeks {
                let cells: Vec<String> = kinds
                    .iter()
                    .map(|k| format!("{:>w$}", per.get(k).copied().unwrap_or(0), w = k.len()))
                    .collect();
                out!("  {week:<8}  {}", cells.join("  "));
            }
        } else {
            for (week, per) in weeks {
                let cells: Vec<String> = per.iter().map(|(k, n)| format!("{n} {k}")).collect();
                out!(
                    "  {week:<8}  {}",
                    fit(&cells.join(", "), width().saturating_sub(12))
                );
            }
        }
    }
    let l = &d.letters;
    out!();
    out!("{}", paint(CYAN, "letters"));
    out!(
        "  {} waiting for their repository",
        plural(l.pending_distribution as u64, "letter", "letters")
    );
    out!(
        "  {} at the hygiene floor (kept in the spool only)",
        plural(
            l.refused_at_floor as u64,
            "letter refused",
            "letters refused"
        )
    );
    if l.spool_garbage_lines > 0 {
        out!(
            "  {}",
            paint(
                YELLOW,
                format!(
                    "{} in the spool that are not letters",
                    plural(l.spool_garbage_lines as u64, "line", "lines")
                )
            )
        );
    }
    for u in &l.unreachable_boxes {
        out!(
            "  {} {}",
            paint(YELLOW, "unreachable:"),
            fit_left(&u.box_file.to_string_lossy(), width().saturating_sub(16))
        );
        out!("    {}", paint(DIM, fit(&u.why, width().saturating_sub(4))));
    }
    let m = &d.medulla;
    out!();
    out!("{}", paint(CYAN, "stores"));
    out!(
        "  brains: {} on disk, {} warm",
        d.brains.on_disk,
        d.brains.warm
    );
    let (live, cap, warn) = (m.live, m.soft_cap, m.warn_from);
    let state = if live >= warn {
        paint(RED, "past the warning line")
    } else if live > cap {
        paint(YELLOW, "over the soft cap")
    } else {
        paint(GREEN, "within the cap")
    };
    out!(
        "  medulla: {} of a soft cap of {cap} (warn from {warn}): {state}",
        plural(live, "live claim", "live claims")
    );
    out!(
        "  {} live in all stores; {} served since the owner started",
        plural(d.live_claims_all_stores, "claim", "claims"),
        plural(d.memory_beats_served, "memory beat", "memory beats")
    );
    if d.broken.is_empty() {
        out!("  broken stores: {}", paint(GREEN, "none"));
    } else {
        out!(
            "  {}",
            paint(
                RED,
                format!(
                    "{}:",
                    plural(d.broken.len() as u64, "broken store", "broken stores")
                )
            )
        );
        for x in &d.broken {
            out!("    {}", fit_left(&x.brain, width().saturating_sub(4)));
            out!("      {}", fit(&x.problem, width().saturating_sub(6)));
        }
    }
    if let Some(deep) = &d.deep {
        out!("  integrity check of every store (--deep):");
        for c in deep {
            let shown = match c.verdict.as_str() {
                "clean" => paint(GREEN, "clean"),
                "repaired" | "index_out_of_step" => paint(YELLOW, c.verdict.as_str()),
                v => paint(RED, v),
            };
            out!(
                "    {shown} {}  {}",
                fit_left(&c.store, width().saturating_sub(30)),
                paint(DIM, plural(c.records, "record", "records"))
            );
            let error = c.error.as_ref().and_then(|e| e["message"].as_str());
            for why in [c.claim_index.as_deref(), c.vector_index.as_deref(), error]
                .into_iter()
                .flatten()
            {
                out!("      {}", fit(why, width().saturating_sub(6)));
            }
        }
    }
    for dr in &d.evidence_drift {
        let line = format!(
            "{} of {} anchored: evidence changed since written",
            plural(dr.drifted, "claim", "claims"),
            dr.anchored
        );
        out!(
            "  {} {}",
            if dr.drifted > 0 {
                paint(YELLOW, "drift:")
            } else {
                paint(DIM, "drift:")
            },
            fit_left(&dr.brain, width().saturating_sub(10))
        );
        out!("    {}", fit(&line, width().saturating_sub(4)));
    }
    for i in &d.imported {
        let by: Vec<String> = i
            .by_source
            .iter()
            .map(|(source, n)| format!("{n} from {source}"))
            .collect();
        out!(
            "  {} {}",
            paint(DIM, "imported:"),
            fit_left(&i.store, width().saturating_sub(12))
        );
        out!(
            "    {}",
            fit(
                &format!("live claims {}", by.join(", ")),
                width().saturating_sub(4)
            )
        );
    }
    if let Some(t) = &d.team {
        let v = &t.view;
        let state = if v.status == "connected" {
            paint(GREEN, "connected")
        } else {
            paint(RED, v.status.as_str())
        };
        out!(
            "  team {} as {}: {state}{}",
            v.url,
            v.member,
            v.error
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        );
        out!(
            "    {} queued, {} kept here by the floor, {} of the log not yet applied",
            v.queued,
            v.refused,
            v.lag
        );
        for r in &t.purge_requests {
            out!(
                "    {} {} in {} by {}: {}",
                paint(YELLOW, "purge requested:"),
                r.slug,
                r.store,
                r.member,
                r.fix
            );
        }
        for r in &t.conflicts {
            if let Some(c) = &r.conflict {
                out!(
                    "    {} {} by {}: {} by {} was superseded at the same time",
                    paint(YELLOW, "conflict:"),
                    r.slug,
                    r.member.as_deref().unwrap_or("?"),
                    c.with,
                    c.member
                );
            }
            for x in &r.races {
                out!(
                    "    {} {}: {} ({}) meant {}, superseded meanwhile",
                    paint(YELLOW, "conflict:"),
                    r.slug,
                    x.member,
                    x.act,
                    x.version
                );
            }
        }
    }
    for n in &d.near_duplicates {
        for c in &n.clusters {
            let slugs: Vec<&str> = c.iter().map(|m| m.slug.as_str()).collect();
            out!(
                "  {} {}",
                paint(YELLOW, "near-duplicates:"),
                fit_left(&n.store, width().saturating_sub(20))
            );
            out!("    {}", fit(&slugs.join(", "), width().saturating_sub(4)));
        }
    }
    let r = &d.refused_callers;
    out!();
    out!("{}", paint(CYAN, "callers refused since the owner started"));
    let line = format!(
        "{} from another OS user, {} whose user the kernel did not name, {} without the client token",
        r.foreign_user, r.peer_unknown, r.token_required
    );
    let shown = fit(&line, width().saturating_sub(2));
    if r.foreign_user + r.peer_unknown + r.token_required > 0 {
        out!("  {}", paint(YELLOW, shown));
    } else {
        out!("  {shown}");
    }
    same_repository(&d.same_repository);
    mixed_projects(&d.mixed_projects);
    unreviewed(&d.unreviewed);
    hints(&d.hints);
    if !d.nudges.is_empty() {
        out!();
        out!(
            "{}",
            paint(
                CYAN,
                "agent sessions the hooks saw (does the end-of-turn nudge pay?)"
            )
        );
        for n in &d.nudges {
            let line = format!(
                "{} sessions, {} asked for a debrief, {} claims written within 30 min of an ask",
                n.sessions_seen, n.sessions_nudged, n.claims_after_nudge
            );
            out!(
                "  {}  {}",
                fit_left(&n.brain, width().saturating_sub(4) / 2),
                fit(&line, width().saturating_sub(4) / 2)
            );
        }
    }
}

/// Stores holding claims agents wrote that no person has looked at.
fn unreviewed(stores: &[crate::service::mailbox::Unreviewed]) {
    if stores.is_empty() {
        return;
    }
    out!();
    out!(
        "{}",
        paint(CYAN, "claims agents wrote that no person has looked at:")
    );
    for u in stores {
        out!(
            "  {}  {}",
            super::plural(u.count, "claim", "claims"),
            fit_left(&u.store, width().saturating_sub(20))
        );
        out!("    {}", paint(DIM, &u.fix));
    }
}

/// Brains of one repository, and the merge that joins them.
fn mixed_projects(brains: &[crate::service::verbs::split::Mixed]) {
    if brains.is_empty() {
        return;
    }
    out!();
    out!(
        "{}",
        paint(
            YELLOW,
            "brains that served other projects sharing their history (separate them):"
        )
    );
    for m in brains {
        out!("  {}", m.brain);
        for o in &m.others {
            out!("    {}: {}", o.project, o.checkouts.join(", "));
        }
        out!("    {}", paint(DIM, &m.fix));
    }
}

fn same_repository(groups: &[SameRepository]) {
    if groups.is_empty() {
        return;
    }
    out!();
    out!(
        "{}",
        paint(
            CYAN,
            "brains of one repository (join them with `medulla brains merge`)"
        )
    );
    for g in groups {
        out!(
            "  {}",
            fit(
                &format!("{} ({})", g.label, g.repository),
                width().saturating_sub(2)
            )
        );
        for b in &g.brains {
            out!("    {}", fit_left(b, width().saturating_sub(4)));
        }
        out!(
            "    {}",
            paint(YELLOW, fit(&g.fix, width().saturating_sub(4)))
        );
    }
}

/// Whether the prompt and file hooks pay, per brain.
fn hints(rows: &[crate::service::hints::HintCount]) {
    if rows.is_empty() {
        return;
    }
    out!();
    out!(
        "{}",
        paint(
            CYAN,
            "hints at the point of use (do the prompt and file hooks pay, and what do they cost?)"
        )
    );
    for h in rows {
        let line = format!(
            "{} prompts, {} files, {} claims added, {} then cited, {} acted on",
            h.prompts, h.files, h.claims_added, h.claims_cited, h.claims_used
        );
        out!(
            "  {}  {}",
            fit_left(&h.brain, width().saturating_sub(4) / 2),
            fit(&line, width().saturating_sub(4) / 2)
        );
        let cost = format!(
            "{} sessions, ~{} tokens a session (digests {}, hints {}), {} hints capped",
            h.sessions, h.tokens_per_session, h.digest_tokens, h.hint_tokens, h.capped
        );
        out!(
            "  {}  {}",
            fit_left("", width().saturating_sub(4) / 2),
            fit(&cost, width().saturating_sub(4) / 2)
        );
    }
}
