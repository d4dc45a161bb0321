//! What a write did: `bootstrap`, `memorize`, `learn`, `promote`, `purge`, `retire` and
//! boot memory (`kv`), each saying which store it touched. Each printer takes the verb's
//! own answer type, read back from the owner's JSON: a field renamed in the service fails
//! to compile here.

use super::{fit, fit_left, out, paint, plural, say, spelled, width, wrap, DIM, GREEN, YELLOW};
use crate::service::registry::Envelope;
use crate::service::rows::{Row, StoreTier};
use crate::service::similar::Near;
use crate::service::verbs::boot_memory::{BootMemoryAnswer, KvTier, Op};
use crate::service::verbs::bootstrap::BootstrapAnswer;
use crate::service::verbs::learn::LearnAnswer;
use crate::service::verbs::memorize::MemorizeAnswer;
use crate::service::verbs::merge::MergeAnswer;
use crate::service::verbs::promote::PromoteAnswer;
use crate::service::verbs::purge::PurgeAnswer;
use crate::service::verbs::retire::RetireAnswer;
use crate::service::verbs::split::SplitAnswer;
use crate::service::verbs::{Cap, Etiquette, Outcome};

/// The store a write landed in, for a sentence: `the medulla` or `/path`'s brain.
fn store(medulla: bool, served: Option<&str>) -> String {
    if medulla {
        "the medulla".into()
    } else {
        match served {
            Some(root) => format!("{}'s brain", fit_left(root, width() / 2)),
            None => "this project's brain".into(),
        }
    }
}

pub fn bootstrap(e: Envelope<BootstrapAnswer>) {
    let b = &e.body.brain;
    let (root, fp) = (&b.root, &b.fingerprint);
    if let Some(through) = &e.body.through_repository {
        say(
            None,
            &format!("brain {fp} for {root} serves this checkout: {through}"),
        );
    } else if e.body.created {
        let own = if e.body.own {
            " (this checkout's own)"
        } else {
            ""
        };
        say(
            Some((GREEN, "created")),
            &format!("brain {fp} for {root}{own}"),
        );
    } else {
        say(
            None,
            &format!("brain {fp} for {root} already exists: nothing to do"),
        );
    }
    // The fingerprint binds as the root does, and fits on a line.
    out!(
        "{}",
        paint(
            DIM,
            format!("a subagent elsewhere binds to it with `Medulla-Brain: {fp}`")
        )
    );
}

pub fn split(e: Envelope<SplitAnswer>) {
    let a = &e.body;
    let verb = if a.dry_run {
        "would separate"
    } else {
        "separated"
    };
    if a.projects.is_empty() {
        say(
            Some((GREEN, "one project")),
            &format!(
                "{} served no other project's checkout: nothing to separate",
                a.brain.root
            ),
        );
    }
    for p in &a.projects {
        let into = match (&p.brain, p.created) {
            (Some(b), true) => format!("a new brain at {b}"),
            (Some(b), false) => b.clone(),
            (None, _) => "no brain: none of its checkouts is on this machine".into(),
        };
        say(
            Some((GREEN, verb)),
            &format!(
                "{} ({}) into {into}: {} ({})",
                p.label,
                p.checkouts.join(", "),
                plural(p.moved.len() as u64, "label", "labels"),
                plural(p.versions as u64, "version", "versions"),
            ),
        );
        if !p.moved.is_empty() {
            out!("{}", paint(DIM, format!("  {}", p.moved.join(", "))));
        }
    }
    for u in &a.undecided {
        out!(
            "{}",
            paint(
                YELLOW,
                format!("stays (cannot be told apart): {} — {}", u.slug, u.why)
            )
        );
    }
    out!(
        "{}",
        paint(
            DIM,
            format!("{} labels of its own project untouched", a.kept)
        )
    );
}

pub fn merge(e: Envelope<MergeAnswer>) {
    let a = &e.body;
    say(
        Some((GREEN, "merged")),
        &format!(
            "{} into {}: {} in {}, {} live from it, {} already held",
            a.from.root,
            a.into.root,
            plural(a.versions as u64, "version", "versions"),
            plural(a.labels as u64, "label", "labels"),
            a.live_from_other,
            a.already_held
        ),
    );
    if !a.met.is_empty() {
        out!(
            "{}",
            paint(
                DIM,
                format!(
                    "held live by both (the later, when as strong, is live; the other is in history): {}",
                    a.met.join(", ")
                )
            )
        );
    }
    out!(
        "{}",
        paint(
            DIM,
            format!("{} serves {}", a.into.root, a.checkouts.join(", "))
        )
    );
}

/// The written medulla's size (the personal or the team's), and a warning past its
/// soft cap.
fn medulla_cap(cap: &Cap) {
    let live = plural(cap.live, "live claim", "live claims");
    let name = match cap.tier {
        crate::service::rows::StoreTier::Team => "the team medulla",
        _ => "the medulla",
    };
    let line = format!("{name} holds {live} (soft cap {})", cap.soft_cap);
    out!("{}", paint(DIM, line));
    if let Some(m) = &cap.message {
        for line in wrap(m, width(), 3) {
            out!("{}", paint(YELLOW, line));
        }
    }
}

/// The etiquette verdict of a medulla write, when it was not the expected one.
fn etiquette(e: &Etiquette) {
    if !e.expected {
        let text = format!("etiquette: {}", e.message.as_deref().unwrap_or("flagged"));
        for line in wrap(&text, width(), 3) {
            out!("{}", paint(YELLOW, line));
        }
    }
}

/// What a write did to its claim, in one sentence.
fn wrote(outcome: Outcome, claim: &Row, previous: Option<&Row>, served: Option<&str>) {
    let slug = &claim.slug;
    let into = store(claim.tier == StoreTier::Medulla, served);
    match outcome {
        Outcome::Created => say(Some((GREEN, "created")), &format!("{slug} in {into}")),
        Outcome::Superseded => say(
            Some((GREEN, "superseded")),
            &format!(
                "{slug} in {into}: v{} replaces v{} (kept in history)",
                claim.version.unwrap_or(0),
                previous.and_then(|p| p.version).unwrap_or(0)
            ),
        ),
        Outcome::Unchanged => say(
            None,
            &format!("{slug} is unchanged in {into}: the same claim is already live"),
        ),
    }
}

/// Live claims that say nearly what was just written.
fn similar(near: &[Near]) {
    for n in near {
        say(
            Some((YELLOW, "near:")),
            &format!(
                "{} ({}, {:.2}) says nearly the same: supersede one instead of keeping both",
                n.slug,
                spelled(&n.tier),
                n.score
            ),
        );
    }
}

pub fn memorize(e: Envelope<MemorizeAnswer>) {
    let served = e.served_brain.as_deref();
    match e.body {
        MemorizeAnswer::Project(p) => {
            wrote(p.outcome, &p.claim, p.previous.as_ref(), served);
            if p.hygiene.is_some_and(|h| h.flagged) {
                say(
                    Some((YELLOW, "flagged:")),
                    "the text carries what looks like a secret (project_secrets = \"flag\")",
                );
            }
            similar(&p.similar);
            for u in &p.unanchored {
                say(
                    Some((DIM, "unanchored:")),
                    &format!("{}: {}", u.evidence, u.why),
                );
            }
        }
        MemorizeAnswer::Doctrine(d) => {
            wrote(d.outcome, &d.claim, None, served);
            similar(&d.similar);
            etiquette(&d.etiquette);
            medulla_cap(&d.medulla_cap);
        }
    }
}

/// `learn`: the verdict, the store it graded, and what changed there.
pub fn learn(e: Envelope<LearnAnswer>) {
    match e.body {
        LearnAnswer::Demoted(d) => {
            say(
                Some((YELLOW, "demoted")),
                &format!(
                    "{} in the medulla: it moved to history ({})",
                    d.demoted.slug,
                    d.demoted.outdated_reason.as_deref().unwrap_or("demoted")
                ),
            );
            if let Some(w) = &d.witness_untouched {
                say(None, &format!("the project witness {w} is untouched"));
            }
            etiquette(&d.etiquette);
            medulla_cap(&d.medulla_cap);
        }
        LearnAnswer::Graded(g) => {
            let c = &g.claim;
            let medulla = c.tier == StoreTier::Medulla;
            say(
                None,
                &format!(
                    "graded {} {} in {}",
                    c.slug,
                    spelled(&g.verdict),
                    store(medulla, e.served_brain.as_deref())
                ),
            );
            let counts = c.trust_counts.unwrap_or_default();
            out!(
                "  trust now {:.2} ({} correct, {} partial, {} wrong)",
                c.trust,
                counts.correct,
                counts.partial,
                counts.wrong
            );
            if let Some(et) = &g.etiquette {
                etiquette(et);
            }
            if let Some(cap) = &g.medulla_cap {
                medulla_cap(cap);
            }
        }
    }
}

pub fn promote(e: Envelope<PromoteAnswer>) {
    let p = e.body;
    let outcome = spelled(&p.outcome);
    let style = if p.outcome == Outcome::Unchanged {
        DIM
    } else {
        GREEN
    };
    say(
        Some((style, &outcome)),
        &format!("{} in the medulla", p.medulla_claim.slug),
    );
    let witness = fit_left(&p.identities.witness, width().saturating_sub(16));
    out!("  promoted from {witness}");
    if let Some(chain) = p.medulla_claim.promotion.and_then(|pr| pr.chain) {
        for line in wrap(&chain, width().saturating_sub(2), 3) {
            out!("  {}", paint(DIM, line));
        }
    }
    etiquette(&p.etiquette);
    medulla_cap(&p.medulla_cap);
}

/// `the medulla` or `this brain`, for what left a store.
fn from(tier: StoreTier) -> &'static str {
    match tier {
        StoreTier::Medulla => "the medulla",
        StoreTier::Team => "the team medulla",
        StoreTier::Project => "this brain",
    }
}

pub fn purge(e: Envelope<PurgeAnswer>) {
    let p = &e.body.purged;
    say(
        None,
        &format!(
            "purged {} from {} ({} scrubbed); the log records {}",
            plural(p.versions_erased, "version", "versions"),
            from(e.body.tier),
            plural(p.acts_scrubbed, "act note", "act notes"),
            p.subject
        ),
    );
    if let Some(n) = &e.body.note {
        say(Some((YELLOW, "note:")), n);
    }
}

pub fn retire(e: Envelope<RetireAnswer>) {
    let r = &e.body.retired;
    say(
        None,
        &format!(
            "{}  retired from {}: out of recall, kept in history ({})",
            r.slug,
            from(e.body.tier),
            r.outdated_reason.as_deref().unwrap_or("?")
        ),
    );
    if let Some(w) = &e.body.witness_untouched {
        say(Some((DIM, "witness untouched:")), w);
    }
}

/// Boot memory: one value, a listing of both tiers, or what a set/delete did.
pub fn kv(e: Envelope<BootMemoryAnswer>) {
    match e.body {
        BootMemoryAnswer::List(l) => {
            if l.entries.is_empty() {
                out!("no boot-memory keys yet: set one with `medulla kv set KEY VALUE`");
                return;
            }
            let keyw = l
                .entries
                .iter()
                .map(|e| super::text_width(&e.key))
                .max()
                .unwrap_or(0)
                .min(24);
            for e in &l.entries {
                let tag = format!("[{}]", spelled(&e.tier));
                let key = fit(&e.key, keyw);
                let room = width().saturating_sub(keyw + 11);
                let value = fit(&e.value, room);
                out!("{} {key:<keyw$} {value}", paint(DIM, format!("{tag:<9}")));
            }
        }
        // A bare value, as `git config` prints one: easy to use in a script.
        BootMemoryAnswer::Value(v) => out!("{}", v.value),
        BootMemoryAnswer::Changed(c) => {
            let into = store(c.tier == KvTier::Medulla, e.served_brain.as_deref());
            match c.op {
                Op::Set => say(None, &format!("set {} in {into}", c.key)),
                Op::Delete => say(None, &format!("deleted {} from {into}", c.key)),
                Op::Get | Op::List => out!("{}", c.value.unwrap_or_default()),
            }
        }
    }
}
