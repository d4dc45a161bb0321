//! The owner and its stores at a glance: `status`, `brains`, `doctor`, `audit`, `acts`.

use super::{
    date, datetime, fit, fit_left, out, paint, plural, spelled, width, BOLD, CYAN, DIM, GREEN, RED,
    YELLOW,
};
use crate::brain::cell::FaultKind;
use crate::brain::Fault;
use crate::service::mailbox::Doctor;
use crate::service::registry::Envelope;
use crate::service::verbs::acts::ActsPage;
use crate::service::verbs::audit_log::AuditLog;
use crate::service::verbs::instances::{Instance, Instances};
use crate::service::Health;

/// The misdelivery kinds, in the doctor's columns.
const KINDS: [&str; 5] = crate::mailbox::letter::MISDELIVERY_KINDS;

/// A store fault in seven columns, where `warm`/`dormant` stand.
fn fault_word(kind: FaultKind) -> &'static str {
    match kind {
        FaultKind::Damaged => "damaged",
        FaultKind::DiskFull => "no room",
        FaultKind::Io => "io fail",
    }
}

/// A store fault's detail and fix, indented under its row.
fn fault_line(fault: &Fault) {
    let what = match fault.kind {
        FaultKind::Damaged => "quarantined: nothing reads or writes it",
        FaultKind::DiskFull => "the disk is full: it recovers by itself once there is room",
        FaultKind::Io => "a file operation failed: it recovers by itself once the cause is gone",
    };
    out!("    {}", paint(RED, what));
    out!(
        "    {}",
        paint(DIM, fit(&fault.detail, width().saturating_sub(4)))
    );
}

pub fn status(h: Health) {
    use crate::service::life::{Keeper, VERSION};
    out!(
        "medulla {} is {} (pid {}) at home {}",
        h.version,
        paint(GREEN, "running"),
        h.pid,
        h.home
    );
    let keeper = match h.keeper {
        Keeper::Person => "by hand",
        Keeper::Client => "by a client (autostart)",
        Keeper::Systemd => "by systemd (medulla service)",
        Keeper::Launchd => "by launchd (medulla service)",
    };
    out!("started {} {keeper}", datetime(h.started_at));
    if h.version != VERSION {
        out!(
            "{}",
            paint(
                YELLOW,
                fit(
                    &format!("this command line is {VERSION}: `medulla restart` runs it"),
                    width()
                )
            )
        );
    } else if h.binary_changed {
        out!(
            "{}",
            paint(
                YELLOW,
                fit(
                    "its binary was rebuilt since it started: `medulla restart` runs the new one",
                    width()
                )
            )
        );
    }
    out!(
        "{}, {} warm; retrieval {}",
        plural(h.brains_registered as u64, "brain", "brains"),
        h.brains_warm,
        spelled(&h.retrieval)
    );
    if let Some(n) = &h.model_note {
        out!("{}", paint(DIM, fit(n, width())));
    }
}

pub fn brains(e: Envelope<Instances>) {
    let list = &e.body.instances;
    let m = &e.body.medulla;
    if list.is_empty() {
        out!("no brain yet: create one for a project with `medulla bootstrap` in its directory (or `medulla bootstrap PATH`)");
    }
    for b in list {
        match b {
            Instance::Brain(b) => {
                let state = if let Some(f) = &b.fault {
                    paint(RED, fault_word(f.kind))
                } else if b.warm {
                    paint(GREEN, "warm   ")
                } else {
                    paint(DIM, "dormant")
                };
                let claims = plural(b.claims, "claim", "claims");
                let open = b.mailbox_open_count as u64;
                let letters = if open > 0 {
                    format!(", {} open", plural(open, "letter", "letters"))
                } else {
                    String::new()
                };
                let counts = format!("{claims:>11}{letters}");
                let room = width().saturating_sub(16 + 1 + 7 + 1 + super::text_width(&counts) + 2);
                out!(
                    "{} {state} {counts}  {}",
                    b.fingerprint,
                    fit_left(&b.root, room.max(10))
                );
                if let Some(f) = &b.fault {
                    fault_line(f);
                }
            }
            Instance::Unreadable(u) => out!(
                "{} {} {}",
                u.fingerprint,
                paint(RED, "unreadable"),
                fit(
                    u.problem.as_deref().unwrap_or("?"),
                    width().saturating_sub(28)
                )
            ),
        }
    }
    if let Some(f) = &m.fault {
        out!(
            "{} {}",
            paint(CYAN, "medulla:"),
            paint(RED, fault_word(f.kind))
        );
        fault_line(f);
    } else {
        out!(
            "{} {}, {} in history",
            paint(CYAN, "medulla:"),
            plural(m.claims, "live claim", "live claims"),
            plural(m.history_versions, "version", "versions")
        );
    }
    if !list.is_empty() {
        out!(
            "{}",
            paint(
                DIM,
                format!("{} on disk", plural(list.len() as u64, "brain", "brains"))
            )
        );
    }
}

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

pub fn audit(e: Envelope<AuditLog>) {
    let entries = &e.body.entries;
    if entries.is_empty() {
        out!("the audit log is empty: nothing was promoted, born as doctrine or demoted yet");
        return;
    }
    for e in entries {
        let flag = if e.flag.is_some() {
            paint(YELLOW, " [etiquette breach]")
        } else {
            String::new()
        };
        out!(
            "{} {} {} by {}{flag}",
            date(e.at),
            paint(CYAN, spelled(&e.kind)),
            paint(BOLD, &e.slug),
            e.agent
        );
        let mut detail = format!("from {}", e.origin_brain);
        if let Some(r) = &e.reason {
            detail.push_str(&format!(": {r}"));
        }
        out!(
            "    {}",
            paint(DIM, fit(&detail, width().saturating_sub(4)))
        );
    }
}

/// `acts`: one page of a store's act log, and how to ask for the next.
pub fn acts(e: Envelope<ActsPage>, brain_flag: Option<&str>, limit: Option<usize>) {
    let page = e.body;
    out!(
        "{} {}",
        paint(
            BOLD,
            format!(
                "acts of {}",
                fit_left(&page.store, width().saturating_sub(30))
            )
        ),
        paint(
            DIM,
            format!(
                "({}, newest first)",
                plural(page.acts.len() as u64, "act", "acts")
            )
        )
    );
    if page.acts.is_empty() {
        out!("  no act recorded yet");
    }
    for a in &page.acts {
        let note = a
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let line = format!(
            "{:>5}  {}  {:<14} {} by {}{note}",
            a.seq,
            datetime(a.at).trim_end_matches(" UTC"),
            spelled(&a.kind),
            a.subject,
            a.actor
        );
        out!("{}", fit(&line, width()));
    }
    if let Some(next) = page.next_before {
        let mut cmd = String::from("medulla acts");
        if let Some(b) = brain_flag {
            cmd.push_str(&format!(" --brain {}", shell_word(b)));
        }
        if let Some(l) = limit {
            cmd.push_str(&format!(" --limit {l}"));
        }
        out!(
            "{}",
            paint(
                DIM,
                fit(&format!("older acts: {cmd} --before {next}"), width())
            )
        );
    }
}

/// `s` as one shell word: as it is when it is safe, else single-quoted.
fn shell_word(s: &str) -> String {
    let safe = s
        .chars()
        .all(|c| c.is_alphanumeric() || "/._-+:@%".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn a_path_with_spaces_is_quoted_for_the_next_page_hint() {
        assert_eq!(shell_word("/w/proj"), "/w/proj");
        assert_eq!(shell_word("/w/my proj"), "'/w/my proj'");
        assert_eq!(shell_word("/w/it's"), r"'/w/it'\''s'");
    }
}
