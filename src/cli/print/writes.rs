//! What a write did: `bootstrap`, `memorize`, `learn`, `promote`, `purge` and boot memory
//! (`kv`), each saying which store it touched.

use serde_json::Value;

use super::{fit, fit_left, num, out, paint, plural, s, say, width, wrap, DIM, GREEN, YELLOW};

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
        say(Some((GREEN, "created")), &format!("brain {fp} for {root}"));
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

/// The medulla's size after a write into it, and a warning past its soft cap.
fn medulla_cap(body: &Value) {
    let cap = &body["medulla_cap"];
    if cap.is_null() {
        return;
    }
    let live = plural(num(&cap["live"]), "live claim", "live claims");
    let line = format!(
        "the medulla holds {live} (soft cap {})",
        num(&cap["soft_cap"])
    );
    out!("{}", paint(DIM, line));
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
        let text = format!("etiquette: {}", s(&e["message"], "flagged"));
        for line in wrap(&text, width(), 3) {
            out!("{}", paint(YELLOW, line));
        }
    }
}

pub fn memorize(body: &Value) {
    let c = &body["claim"];
    let tier = s(&c["tier"], "project");
    let slug = s(&c["slug"], "?");
    let into = store(tier, &body["served_brain"]);
    match s(&body["outcome"], "?") {
        "created" => say(Some((GREEN, "created")), &format!("{slug} in {into}")),
        "superseded" => say(
            Some((GREEN, "superseded")),
            &format!(
                "{slug} in {into}: v{} replaces v{} (kept in history)",
                num(&c["version"]),
                num(&body["previous"]["version"])
            ),
        ),
        "unchanged" => say(
            None,
            &format!("{slug} is unchanged in {into}: the same claim is already live"),
        ),
        other => say(None, &format!("{other}: {slug} in {into}")),
    }
    if body["hygiene"]["flagged"].as_bool() == Some(true) {
        say(
            Some((YELLOW, "flagged:")),
            "the text carries what looks like a secret (project_secrets = \"flag\")",
        );
    }
    for n in body["similar"].as_array().into_iter().flatten() {
        say(
            Some((YELLOW, "near:")),
            &format!(
                "{} ({}, {}) says nearly the same: supersede one instead of keeping both",
                s(&n["slug"], "?"),
                s(&n["tier"], "?"),
                n["score"]
                    .as_f64()
                    .map(|x| format!("{x:.2}"))
                    .unwrap_or_default()
            ),
        );
    }
    for u in body["unanchored"].as_array().into_iter().flatten() {
        say(
            Some((DIM, "unanchored:")),
            &format!("{}: {}", s(&u["evidence"], "?"), s(&u["why"], "?")),
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
        say(
            Some((YELLOW, "demoted")),
            &format!(
                "{} in the medulla: it moved to history ({})",
                s(&d["slug"], "?"),
                s(&d["outdated_reason"], "demoted")
            ),
        );
        if let Some(w) = body["witness_untouched"].as_str() {
            say(None, &format!("the project witness {w} is untouched"));
        }
        etiquette(body);
        medulla_cap(body);
        return;
    }
    let c = &body["claim"];
    let counts = &c["trust_counts"];
    say(
        None,
        &format!(
            "graded {} {verdict} in {}",
            s(&c["slug"], "?"),
            store(tier, &body["served_brain"])
        ),
    );
    out!(
        "  trust now {:.2} ({} correct, {} partial, {} wrong)",
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
    let slug = s(&body["medulla_claim"]["slug"], "?");
    let style = if outcome == "unchanged" { DIM } else { GREEN };
    say(Some((style, outcome)), &format!("{slug} in the medulla"));
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
    let from = if s(&body["tier"], "project") == "medulla" {
        "the medulla"
    } else {
        "this brain"
    };
    say(
        None,
        &format!(
            "purged {} from {from} ({} scrubbed); the log records {}",
            plural(num(&p["versions_erased"]), "version", "versions"),
            plural(num(&p["acts_scrubbed"]), "act note", "act notes"),
            s(&p["subject"], "?")
        ),
    );
    if let Some(n) = body["note"].as_str() {
        say(Some((YELLOW, "note:")), n);
    }
}

pub fn retire(body: &Value) {
    let r = &body["retired"];
    let from = if s(&body["tier"], "project") == "medulla" {
        "the medulla"
    } else {
        "this brain"
    };
    say(
        None,
        &format!(
            "{}  retired from {from}: out of recall, kept in history ({})",
            s(&r["slug"], "?"),
            s(&r["outdated_reason"], "?")
        ),
    );
    if let Some(w) = body["witness_untouched"].as_str() {
        say(Some((DIM, "witness untouched:")), w);
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
            let room = width().saturating_sub(keyw + 11);
            let value = fit(&value_text(&e["value"]), room);
            out!("{} {key:<keyw$} {value}", paint(DIM, format!("{tag:<9}")));
        }
        return;
    }
    let key = s(&body["key"], "?");
    let into = store(s(&body["tier"], "project"), &body["served_brain"]);
    match body["op"].as_str() {
        Some("set") => say(None, &format!("set {key} in {into}")),
        Some("delete") => say(None, &format!("deleted {key} from {into}")),
        // A bare value, as `git config` prints one: easy to use in a script.
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
