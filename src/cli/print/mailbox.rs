//! Field reports and boxes: where a `report` went, a box's letters and counts, the sweep
//! and a distribution pass.

use serde_json::Value;

use super::{
    date, fit, fit_left, num, out, paint, plural, s, width, wrap, BOLD, CYAN, DIM, GREEN, YELLOW,
};

/// Where the distributor put a letter, as a sentence.
pub fn report(body: &Value) {
    let id = paint(BOLD, s(&body["id"], "?"));
    let f = &body["filed"];
    let w = width().saturating_sub(40);
    match s(&f["to"], "?") {
        "project" => out!(
            "letter {id} {} {}'s box",
            paint(GREEN, "filed into"),
            fit_left(s(&f["repo"], "?"), w)
        ),
        "medulla" => out!(
            "letter {id} {} the medulla's box (it names no project)",
            paint(GREEN, "filed into")
        ),
        "pending_distribution" => {
            let repo = fit_left(s(&f["repo"], "?"), w);
            out!("letter {id} {} {repo}", paint(YELLOW, "pending:"));
            out!("  that repository is not on this machine yet: the letter is filed when it is");
        }
        "refused" => {
            out!("letter {id} {}", paint(YELLOW, "refused at the floor:"));
            let why = format!(
                "{}; it stays in the spool only: write the letter again without it",
                s(&f["found"], "?")
            );
            for line in wrap(&why, width().saturating_sub(2), 4) {
                out!("  {line}");
            }
        }
        other => out!("letter {id} appended to the spool ({other})"),
    }
}

fn mark(state: &str) -> &'static str {
    match state {
        "wet_ink" => "●",
        "in_flight" => "◍",
        "fired_clay" => "↳",
        "external" => "◌",
        _ => "?",
    }
}

fn letters(list: &[Value], show_found_in: bool) {
    for l in list {
        let state = s(&l["state"], "?");
        let class = s(&l["class"], "?");
        let head = format!("{} {} {class:<18} ", mark(state), s(&l["id"], "?"));
        let room = width().saturating_sub(super::text_width(&head));
        let style = if matches!(state, "wet_ink" | "in_flight") {
            BOLD
        } else {
            DIM
        };
        out!("{}{}", paint(style, &head), fit(s(&l["what"], ""), room));
        let mut meta = vec![
            s(&l["agent"], "?").to_string(),
            date(l["ts"].as_i64().unwrap_or(0)),
            state.replace('_', " "),
        ];
        if let Some(k) = l["kind"].as_str() {
            meta.push(format!("kind {k}"));
        }
        if let Some(by) = l["answered_by"].as_array().filter(|a| !a.is_empty()) {
            let ids: Vec<&str> = by.iter().filter_map(Value::as_str).collect();
            meta.push(format!("answered by {}", ids.join(", ")));
        }
        if show_found_in {
            if let Some(found) = l["found_in"].as_array() {
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
fn counts(c: &Value) {
    out!(
        "{} ({} wet ink, {} in flight) · {} fired clay · {} external",
        paint(BOLD, format!("{} open", num(&c["open"]))),
        num(&c["wet_ink"]),
        num(&c["in_flight"]),
        num(&c["fired_clay"]),
        num(&c["external"])
    );
    let legend = "● wet ink: open · ◍ in flight: answered · ↳ fired clay: closed · ◌ external";
    out!("{}", paint(DIM, fit(legend, width())));
}

fn unreachable(body: &Value) {
    for u in body["unreachable"].as_array().into_iter().flatten() {
        out!(
            "{} {}",
            paint(YELLOW, "unreachable:"),
            fit_left(s(&u["box"], "?"), width().saturating_sub(13))
        );
        out!(
            "    {}",
            paint(DIM, fit(s(&u["why"], ""), width().saturating_sub(4)))
        );
    }
}

/// `mailbox show`: one box.
pub fn show(body: &Value) {
    let list = body["letters"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let owner = s(&body["served_brain"], "?");
    out!(
        "{} {}",
        paint(
            CYAN,
            format!("box of {}", fit_left(owner, width().saturating_sub(30)))
        ),
        paint(
            DIM,
            format!("({})", plural(list.len() as u64, "letter", "letters"))
        )
    );
    if let Some(b) = body["box"].as_str() {
        out!("{}", paint(DIM, fit_left(b, width())));
    }
    if list.is_empty() {
        out!("no letters: `medulla report --class note --repo . --what \"...\"` files one");
    }
    letters(list, false);
    counts(&body["counts"]);
}

/// `mailbox sweep`: every letter once, wherever it is.
pub fn sweep(body: &Value) {
    let list = body["letters"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    out!(
        "{} {}",
        paint(CYAN, "every letter, once"),
        paint(
            DIM,
            format!(
                "({}, the spool and every known box)",
                plural(list.len() as u64, "letter", "letters")
            )
        )
    );
    letters(list, true);
    counts(&body["counts"]);
    let pending = num(&body["pending_distribution"]);
    let refused = num(&body["refused_at_floor"]);
    let garbage = num(&body["spool_garbage_lines"]);
    out!(
        "pending: {pending} · refused at the floor: {refused} · garbage lines in the spool: {garbage}"
    );
    unreachable(body);
}

/// `mailbox distribute`: one pass of the distributor.
pub fn distribute(body: &Value) {
    out!(
        "read {}: {} filed, {} pending, {} refused at the floor",
        plural(num(&body["read"]), "new letter", "new letters"),
        num(&body["filed"]),
        num(&body["pending"]),
        num(&body["refused"])
    );
    if num(&body["garbage_lines"]) > 0 {
        out!(
            "{}",
            paint(
                YELLOW,
                format!(
                    "{} in the spool that are not letters",
                    plural(num(&body["garbage_lines"]), "line", "lines")
                )
            )
        );
    }
    for e in body["errors"].as_array().into_iter().flatten() {
        let text = e
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| e.to_string());
        out!(
            "{} {}",
            paint(YELLOW, "error:"),
            fit(&text, width().saturating_sub(7))
        );
    }
}
