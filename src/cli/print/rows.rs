//! Claim rows as `seek`, `north`, `delegate` and `history` print them: each row leads with
//! the slug that `history`, `learn`, `promote` and `purge` take.

use serde_json::Value;

use super::{
    date, datetime, fit, fit_left, num, out, paint, plural, s, width, wrap, BOLD, CYAN, DIM, YELLOW,
};

/// How many lines of a claim's text a row shows before `…`.
const TEXT_LINES: usize = 4;
const INDENT: &str = "    ";

fn rows(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

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
fn head(r: &Value, lead: &str) -> String {
    let w = width();
    let slug = s(&r["slug"], "?");
    let label = s(&r["label"], "");
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
fn provenance(r: &Value) -> String {
    let w = width().saturating_sub(INDENT.len());
    let mut tail = vec![
        s(&r["source_agent"], "?").to_string(),
        s(&r["strength"], "?").to_string(),
        date(r["created"].as_i64().unwrap_or(0)),
    ];
    // Trust says something only once the claim has been graded.
    let graded = ["correct", "partial", "wrong"]
        .iter()
        .any(|k| num(&r["trust_counts"][*k]) > 0);
    if let (true, Some(t)) = (graded, r["trust"].as_f64()) {
        tail.push(format!("trust {t:.2}"));
    }
    if r["stale"].as_bool() == Some(true) {
        tail.push("stale".into());
    }
    if r["aged_out"].as_bool() == Some(true) {
        tail.push("aged out".into());
    }
    let tier = format!("[{}]", s(&r["tier"], "?"));
    let tail = tail.join(" · ");
    // The origin gives way first, down to its last 12 columns; then the tail is cut.
    let room = w.saturating_sub(tier.len() + super::text_width(&tail) + 4);
    let origin = fit_left(s(&r["origin_brain"], "unknown"), room.max(12));
    fit(&format!("{tier} {origin} · {tail}"), w)
}

/// One claim row: head, text (wrapped), provenance, and a medulla copy's chain.
pub fn row(r: &Value) {
    out!("{}", head(r, ""));
    let w = width().saturating_sub(INDENT.len());
    for line in wrap(s(&r["text"], ""), w, TEXT_LINES) {
        out!("{INDENT}{line}");
    }
    out!("{INDENT}{}", paint(DIM, provenance(r)));
    if let Some(chain) = r["promotion"]["chain"].as_str() {
        for line in wrap(chain, w, 2) {
            out!("{INDENT}{}", paint(DIM, line));
        }
    }
    let changed = &r["witness_superseded"];
    if let Some(witness) = changed["witness"].as_str() {
        let line = format!(
            "witness changed: {witness} is at version {} since {}; promote it again or demote this copy",
            num(&changed["by_version"]),
            date(changed["at"].as_i64().unwrap_or(0))
        );
        for line in wrap(&line, w, 2) {
            out!("{INDENT}{}", paint(YELLOW, line));
        }
    }
}

fn print_rows(list: &[Value]) {
    for r in list {
        row(r);
    }
}

/// `seek`: flat rows, or groups by origin for `--tier all-brains`.
pub fn seek(body: &Value) {
    let retrieval = s(&body["retrieval"], "?");
    if let Some(groups) = body["groups"].as_array() {
        for g in groups {
            let list = rows(&g["results"]);
            out!(
                "{} {}",
                paint(
                    CYAN,
                    format!(
                        "== {}",
                        fit_left(s(&g["origin_brain"], "unknown"), width() - 20)
                    )
                ),
                paint(
                    DIM,
                    format!("({})", plural(list.len() as u64, "claim", "claims"))
                )
            );
            print_rows(list);
        }
        let searched = num(&body["brains_searched"]);
        out!(
            "{}",
            paint(
                DIM,
                format!(
                    "{} searched (retrieval: {retrieval})",
                    plural(searched, "store", "stores")
                )
            )
        );
        for f in rows(&body["failed"]) {
            let what = format!(
                "{}: {} [{}]",
                s(&f["brain"], "?"),
                s(&f["error"]["message"], "failed"),
                s(&f["error"]["code"], "error")
            );
            out!(
                "{} {}",
                paint(YELLOW, "could not search:"),
                fit(&what, width() - 18)
            );
        }
        return;
    }
    let list = rows(&body["results"]);
    if list.is_empty() {
        match body["note"].as_str() {
            Some(note) => out!("{note} (retrieval: {retrieval})"),
            None => out!("no claim matched (retrieval: {retrieval})"),
        }
        return;
    }
    print_rows(list);
    out!(
        "{}",
        paint(
            DIM,
            format!(
                "{} (retrieval: {retrieval}); `medulla history SLUG` shows every version",
                plural(list.len() as u64, "claim", "claims")
            )
        )
    );
}

/// `history`: every version, oldest first.
pub fn history(body: &Value) {
    let versions = rows(&body["versions"]);
    let count = format!(
        " ({}, oldest first)",
        plural(versions.len() as u64, "version", "versions")
    );
    let slug = fit(s(&body["slug"], "?"), width().saturating_sub(count.len()));
    out!("{}{}", paint(BOLD, slug), paint(DIM, count));
    let w = width().saturating_sub(INDENT.len());
    for v in versions {
        let state = match (s(&v["state"], "?"), v["outdated_reason"].as_str()) {
            ("outdated", Some(why)) => format!("outdated ({why})"),
            (st, _) => st.to_string(),
        };
        let head = format!(
            "v{} · {} · {} · {} · {}",
            num(&v["version"]),
            state,
            s(&v["strength"], "?"),
            date(v["created"].as_i64().unwrap_or(0)),
            s(&v["source_agent"], "?")
        );
        out!("{}", fit(&head, width()));
        for line in wrap(s(&v["text"], ""), w, TEXT_LINES) {
            out!("{INDENT}{line}");
        }
    }
}

/// `north`: this brain's part, the medulla's, and what exists but did not match.
pub fn north(body: &Value) {
    for line in wrap(s(&body["note"], ""), width(), 4) {
        out!("{line}");
    }
    let exists = &body["memory_exists"];
    let project = rows(&body["project"]);
    let medulla = rows(&body["medulla"]);
    if !project.is_empty() {
        out!(
            "{}",
            paint(
                CYAN,
                format!(
                    "this brain: {} of {}",
                    matched(project.len()),
                    num(&exists["project"])
                )
            )
        );
        print_rows(project);
    }
    if !medulla.is_empty() {
        out!(
            "{}",
            paint(
                CYAN,
                format!(
                    "the medulla: {} of {}",
                    matched(medulla.len()),
                    num(&exists["medulla"])
                )
            )
        );
        print_rows(medulla);
    }
    let unmatched = rows(&body["recent_unmatched"]);
    if !unmatched.is_empty() {
        out!("{}", paint(CYAN, "not matched, most recent:"));
        print_rows(unmatched);
    }
    if let Some(e) = body.get("medulla_error") {
        out!(
            "{} {}",
            paint(YELLOW, "the medulla part failed:"),
            fit(s(&e["message"], ""), width().saturating_sub(25))
        );
    }
}

fn matched(n: usize) -> String {
    format!("{} matched", plural(n as u64, "claim", "claims"))
}

/// `delegate`: the packet to paste into a subagent's brief, composed from the answer so
/// that its time is a date and each memory line names its slug.
pub fn delegate(body: &Value) {
    let b = &body["binding"];
    let src = &body["sources"];
    out!("## medulla delegation packet");
    let task = format!("task: {}", s(&body["task"], ""));
    for (i, l) in wrap(&task, width().saturating_sub(2), usize::MAX)
        .iter()
        .enumerate()
    {
        out!("{}{l}", if i == 0 { "" } else { "  " });
    }
    // The fingerprint binds as well as the root does, and always fits on a line.
    out!("binding: send this header on every medulla call");
    out!("  Medulla-Brain: {}", s(&b["fingerprint"], "?"));
    out!(
        "sources: project {}",
        fit_left(s(&src["project"], "?"), width().saturating_sub(17))
    );
    out!(
        "  medulla {}, composed {}",
        s(&src["medulla"], "?"),
        datetime(src["composed_ts"].as_i64().unwrap_or(0))
    );
    let memory = rows(&body["memory"]);
    if memory.is_empty() {
        out!("memory: {}", s(&body["note"], "none"));
    } else {
        out!("memory:");
    }
    let w = width().saturating_sub(2);
    for r in memory {
        let line = format!(
            "[{}] {} ({}): {} ({}, by {}, {})",
            s(&r["tier"], "?"),
            s(&r["slug"], "?"),
            s(&r["label"], ""),
            s(&r["text"], ""),
            s(&r["origin_brain"], "unknown"),
            s(&r["source_agent"], "?"),
            date(r["created"].as_i64().unwrap_or(0))
        );
        // A packet is pasted whole: its memory is wrapped, never cut.
        for (i, l) in wrap(&line, w, usize::MAX).iter().enumerate() {
            out!("{}{l}", if i == 0 { "- " } else { "  " });
        }
    }
    let etiquette = format!("etiquette: {}", s(&body["etiquette"], ""));
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
        let r = serde_json::json!({
            "tier": "project", "origin_brain": format!("/home/you/{}", "deep/".repeat(30)),
            "source_agent": "claude:maker", "strength": "verified", "created": 0,
            "trust": 0.5, "stale": true
        });
        let p = provenance(&r);
        assert!(
            super::super::text_width(&p) <= width() - INDENT.len(),
            "{p}"
        );
        assert!(p.contains("stale"), "{p}");
    }
}
