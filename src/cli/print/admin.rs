//! The owner and its stores at a glance: `status`, `brains`, `audit`, `acts`.

use super::{
    date, datetime, fit, fit_left, out, paint, plural, spelled, width, BOLD, CYAN, DIM, GREEN, RED,
    YELLOW,
};
use crate::brain::cell::FaultKind;
use crate::brain::Fault;
use crate::service::registry::Envelope;
use crate::service::verbs::acts::ActsPage;
use crate::service::verbs::audit_log::AuditLog;
use crate::service::verbs::instances::{Instance, Instances};
use crate::service::Health;

/// A store fault in seven columns, where `warm`/`dormant` stand.
pub(super) fn fault_word(kind: FaultKind) -> &'static str {
    match kind {
        FaultKind::Damaged => "damaged",
        FaultKind::DiskFull => "no room",
        FaultKind::Io => "io fail",
    }
}

/// A store fault's detail and fix, indented under its row.
pub(super) fn fault_line(fault: &Fault) {
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

/// `medulla status`'s last lines: the brain that serves the working directory, how, and
/// its checkouts.
pub fn served_here(r: crate::service::route_view::RouteView) {
    use crate::service::route::Via;
    let Some(root) = &r.served_brain else {
        out!(
            "{}",
            paint(
                DIM,
                fit(
                    "no brain covers this directory: `medulla bootstrap` creates one",
                    width()
                )
            )
        );
        return;
    };
    let how = match r.via {
        Via::Repository => format!(
            ", through its repository ({})",
            r.repository.as_ref().map_or("?", |x| x.label.as_str())
        ),
        Via::Binding => " (MEDULLA_BRAIN)".to_string(),
        _ => String::new(),
    };
    let room = width().saturating_sub("this directory: brain ".len() + super::text_width(&how));
    out!(
        "this directory: brain {}{how}",
        fit_left(root, room.max(10))
    );
    if let Some(n) = r.unreviewed.filter(|n| *n > 0) {
        out!(
            "  {}",
            paint(
                YELLOW,
                format!(
                    "{} agents wrote that no person has looked at: medulla review",
                    super::plural(n, "claim", "claims")
                )
            )
        );
    }
    if r.checkouts.len() > 1 || r.checkouts.iter().any(|c| !c.exists) {
        for c in &r.checkouts {
            let mut notes = Vec::new();
            if c.bootstrapped {
                notes.push("bootstrapped here");
            }
            if Some(&c.path) == r.checkout.as_ref() {
                notes.push("this one");
            }
            if !c.exists {
                notes.push("no longer exists");
            }
            let line = if notes.is_empty() {
                c.path.clone()
            } else {
                format!("{} ({})", c.path, notes.join(", "))
            };
            out!(
                "  {} {}",
                paint(DIM, "checkout"),
                fit(&line, width().saturating_sub(11))
            );
        }
    }
}

/// A brain's repository and the checkouts it served, when there is more to say than its
/// root: a worktree, a clone, a root moved or gone, a brain of a checkout's own.
fn checkout_lines(b: &crate::service::verbs::instances::InstanceRow) {
    let more = b.checkouts.len() > 1 || b.checkouts.iter().any(|c| !c.exists) || b.own;
    if !more {
        return;
    }
    if let Some(r) = &b.repository {
        let own = if b.own {
            ", this checkout's own brain"
        } else {
            ""
        };
        out!(
            "    {}",
            paint(
                DIM,
                fit(
                    &format!("repository {} ({}){own}", r.label, r.key),
                    width().saturating_sub(4)
                )
            )
        );
    }
    for c in &b.checkouts {
        let mut notes = Vec::new();
        if c.bootstrapped {
            notes.push("bootstrapped here");
        }
        if !c.exists {
            notes.push("no longer exists");
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("  ({})", notes.join(", "))
        };
        let line = format!("{}{notes}", c.path);
        out!(
            "    {} {}",
            paint(DIM, "checkout"),
            if c.exists {
                fit(&line, width().saturating_sub(13))
            } else {
                paint(YELLOW, fit(&line, width().saturating_sub(13)))
            }
        );
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
                let review = if b.unreviewed > 0 {
                    format!(", {} unreviewed", b.unreviewed)
                } else {
                    String::new()
                };
                let counts = format!("{claims:>11}{letters}{review}");
                let room = width().saturating_sub(16 + 1 + 7 + 1 + super::text_width(&counts) + 2);
                out!(
                    "{} {state} {counts}  {}",
                    b.fingerprint,
                    fit_left(&b.root, room.max(10))
                );
                if let Some(f) = &b.fault {
                    fault_line(f);
                }
                checkout_lines(b);
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
            cmd.push_str(&format!(
                " --brain {}",
                crate::service::route::shell_quote(b)
            ));
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

#[cfg(test)]
mod tests {
    use crate::service::route::shell_quote as shell_word;

    #[test]
    fn a_path_with_spaces_is_quoted_for_the_next_page_hint() {
        assert_eq!(shell_word("/w/proj"), "/w/proj");
        assert_eq!(shell_word("/w/my proj"), "'/w/my proj'");
        assert_eq!(shell_word("/w/it's"), r"'/w/it'\''s'");
    }
}
