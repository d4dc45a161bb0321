//! What a write did: `bootstrap`, `memorize`, `learn`, `promote`, `purge` and boot memory
//! (`kv`), each saying which store it touched.

use serde_json::Value;

use super::{fit, fit_left, num, out, paint, plural, s, width, wrap, BOLD, DIM, GREEN, YELLOW};

/// The store a write landed in, for a sentence: `the medulla` or `/path`'s brain.
fn store(tier: &str, served: &Value) -> String {
    if tier == "medulla" {
        "the medulla".into()
    } else {
        match served.as_str() {
            Some(root) => format!("{}'s brain", fit_left(root, width() / 2)),
            None => "this project's brain".into(),
        }
    }
}

pub fn bootstrap(body: &Value) {
    let b = &body["brain"];
    let root = s(&b["root"], "?");
    let fp = s(&b["fingerprint"], "?");
    if body["created"].as_bool() == Some(true) {
        out!("{} brain {fp} for {root}", paint(GREEN, "created"));
    } else {
        out!("brain {fp} for {root} already exists: nothing to do");
    }
    if let Some(h) = body["binding_header"].as_str() {
        out!(
            "{}",
            paint(
                DIM,
                fit(
                    &format!("a subagent elsewhere binds to it with `{h}`"),
                    width()
                )
            )
        );
    }
}

/// The medulla's size after a write into it, and a warning past its soft cap.
fn medulla_cap(body: &Value) {
    let cap = &body["medulla_cap"];
    if cap.is_null() {
        return;
    }
    out!(
        "{}",
        paint(
            DIM,
            format!(
                "the medulla holds {} (soft cap {})",
                plural(num(&cap["live"]), "live claim", "live claims"),
                num(&cap["soft_cap"])
            )
        )
    );
    if let Some(m) = cap["message"].as_str() {
        for line in wrap(m, width(), 3) {
            out!("{}", paint(YELLOW, line));
        }
    }
}

/// The etiquette verdict of a medulla write, when it was not the expected one.
fn etiquette(body: &Value) {
    let e = &body["etiquette"];
    if e["expected"].as_bool() == Some(false) {
        for line in wrap(
            &format!("etiquette: {}", s(&e["message"], "flagged")),
            width(),
            3,
        ) {
            out!("{}", paint(YELLOW, line));
        }
    }
}

pub fn memorize(body: &Value) {
    let c = &body["claim"];
    let tier = s(&c["tier"], "project");
    let slug = paint(BOLD, s(&c["slug"], "?"));
    let into = store(tier, &body["served_brain"]);
    match s(&body["outcome"], "?") {
        "created" => out!("{} {slug} in {into}", paint(GREEN, "created")),
        "superseded" => out!(
            "{} {slug} in {into}: v{} replaces v{} (kept in history)",
            paint(GREEN, "superseded"),
            num(&c["version"]),
            num(&body["previous"]["version"])
        ),
        "unchanged" => out!("{slug} is unchanged in {into}: the same claim is already live"),
        other => out!("{other}: {slug} in {into}"),
    }
    if body["hygiene"]["flagged"].as_bool() == Some(true) {
        out!(
            "{}",
            paint(
                YELLOW,
                "flagged: the text carries what looks like a secret (project_secrets = \"flag\")"
            )
        );
    }
    if tier == "medulla" {
        etiquette(body);
        medulla_cap(body);
    }
}

/// `learn`: the verdict, the store it graded, and what changed there.
pub fn learn(body: &Value, tier: &str) {
    let verdict = s(&body["verdict"], "?");
    if let Some(d) = body.get("demoted") {
        out!(
            "{} {} in the medulla: it moved to history ({})",
            paint(YELLOW, "demoted"),
            paint(BOLD, s(&d["slug"], "?")),
            s(&d["outdated_reason"], "demoted")
        );
        if let Some(w) = body["witness_untouched"].as_str() {
            out!(
                "the project witness {} is untouched",
                fit_left(w, width() - 40)
            );
        }
        etiquette(body);
        medulla_cap(body);
        return;
    }
    let c = &body["claim"];
    let counts = &c["trust_counts"];
    out!(
        "graded {} {verdict} in {}: trust now {:.2} ({} correct, {} partial, {} wrong)",
        paint(BOLD, s(&c["slug"], "?")),
        store(tier, &body["served_brain"]),
        c["trust"].as_f64().unwrap_or(0.0),
        num(&counts["correct"]),
        num(&counts["partial"]),
        num(&counts["wrong"])
    );
    if tier == "medulla" {
        etiquette(body);
        medulla_cap(body);
    }
}

pub fn promote(body: &Value) {
    let ids = &body["identities"];
    let outcome = s(&body["outcome"], "?");
    let head = format!("{outcome}: {} in the medulla", s(&ids["medulla"], "?"));
    let style = if outcome == "unchanged" { DIM } else { GREEN };
    out!("{}", paint(style, fit(&head, width())));
    let witness = fit_left(s(&ids["witness"], "?"), width().saturating_sub(16));
    out!("  promoted from {witness}");
    if let Some(chain) = body["medulla_claim"]["promotion"]["chain"].as_str() {
        for line in wrap(chain, width().saturating_sub(2), 3) {
            out!("  {}", paint(DIM, line));
        }
    }
    etiquette(body);
    medulla_cap(body);
}

pub fn purge(body: &Value) {
    let p = &body["purged"];
    out!(
        "purged {} from {} ({} scrubbed); the log records {}",
        plural(num(&p["versions_erased"]), "version", "versions"),
        if s(&body["tier"], "project") == "medulla" {
            "the medulla"
        } else {
            "this brain"
        },
        plural(num(&p["acts_scrubbed"]), "act note", "act notes"),
        s(&p["subject"], "?")
    );
    if let Some(n) = body["note"].as_str() {
        for line in wrap(&format!("note: {n}"), width(), 4) {
            out!("{line}");
        }
    }
}

/// Boot memory: one value, a listing of both tiers, or what a set/delete did.
pub fn kv(body: &Value) {
    if let Some(entries) = body["entries"].as_array() {
        if entries.is_empty() {
            out!("no boot-memory keys yet: set one with `medulla kv set KEY VALUE`");
            return;
        }
        let keyw = entries
            .iter()
            .map(|e| super::text_width(s(&e["key"], "")))
            .max()
            .unwrap_or(0)
            .min(24);
        for e in entries {
            let tag = format!("[{}]", s(&e["tier"], "?"));
            let key = fit(s(&e["key"], ""), keyw);
            let room = width().saturating_sub(keyw + tag.len() + 3);
            out!(
                "{} {:<keyw$} {}",
                paint(DIM, format!("{tag:<9}")),
                key,
                fit(&value_text(&e["value"]), room)
            );
        }
        return;
    }
    let key = paint(BOLD, s(&body["key"], "?"));
    let tier = s(&body["tier"], "project");
    let into = store(tier, &body["served_brain"]);
    match body["op"].as_str() {
        Some("set") => out!("set {key} in {into}"),
        Some("delete") => out!("deleted {key} from {into}"),
        _ => out!("{}", value_text(&body["value"])),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
