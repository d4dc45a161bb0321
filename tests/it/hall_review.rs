//! The Hall's review page (SPEC §14, issue 73) in a real headless Chromium, used with the
//! keyboard only: a person moves between what agents wrote with j/k, keeps one, keeps and
//! verifies one, retires one with a reason, edits one (after the secret floor refused a
//! first try, nothing lost), and merges two near-duplicates; each act is then read back
//! through the REST API as `human:founder`'s, and the counts went down everywhere.

use headless_chrome::browser::tab::ModifierKey;
use headless_chrome::Tab;
use serde_json::{json, Value};

use crate::common::{header, Owner};
use crate::hall::{browser, js, screenshot, text_of, until};
use crate::tend::acts_by;

const SECRET: &str = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";

fn press(tab: &Tab, key: &str) {
    tab.press_key(key)
        .unwrap_or_else(|e| panic!("press {key}: {e}"));
}

/// Type `text` key by key (a key down and up each, as a keyboard sends them).
fn type_text(tab: &Tab, text: &str) {
    tab.type_str(text)
        .unwrap_or_else(|e| panic!("type {text}: {e}"));
}

/// Paste `text` where the focus is (one text insertion, as a paste or an input method
/// sends it): a token is pasted, not typed, and each typed key costs a DevTools round.
fn paste(tab: &Tab, text: &str) {
    tab.send_character(text)
        .unwrap_or_else(|e| panic!("paste {text}: {e}"));
}

/// The claims listed for review, in the page's order.
fn listed(tab: &Tab) -> Vec<String> {
    let v = js(
        tab,
        "JSON.stringify([...document.querySelectorAll('li.review-item')].map(li => li.dataset.slug))",
    );
    serde_json::from_str(v.as_str().unwrap_or("[]")).unwrap()
}

/// The claim keyboard focus is on (its slug), or "".
fn focused(tab: &Tab) -> String {
    js(
        tab,
        "document.activeElement?.closest?.('li.review-item')?.dataset.slug ?? ''",
    )
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// Move the keyboard focus to the claim `slug` with j and k, as a person would.
fn go_to(tab: &Tab, slug: &str) {
    for _ in 0..30 {
        let order = listed(tab);
        let want = order
            .iter()
            .position(|s| s == slug)
            .unwrap_or_else(|| panic!("{slug} is not listed: {order:?}"));
        let at = order.iter().position(|s| *s == focused(tab));
        match at {
            Some(i) if i == want => return,
            Some(i) if i > want => press(tab, "k"),
            _ => press(tab, "j"),
        }
    }
    panic!("j and k never reached {slug}");
}

/// The unreviewed count the page shows.
fn page_count(tab: &Tab, n: usize) {
    until(
        tab,
        &format!("document.querySelector('#view .summary [data-stat=unreviewed]')?.textContent === '{n}'"),
        &format!("the page to count {n} unreviewed"),
    );
}

fn gone(tab: &Tab, slug: &str) {
    until(
        tab,
        &format!(
            "document.querySelector('li.review-item') && !document.querySelector('li.review-item[data-slug=\"{slug}\"]')"
        ),
        &format!("{slug} to leave the review list"),
    );
}

fn dialog_open(tab: &Tab, focus: &str) {
    until(
        tab,
        &format!(
            "document.querySelector('#review-dialog').open && document.activeElement?.matches('{focus}')"
        ),
        &format!("the dialog, focus on {focus}"),
    );
}

fn dialog_closed(tab: &Tab) {
    until(
        tab,
        "!document.querySelector('#review-dialog').open",
        "the dialog to close",
    );
}

fn review(o: &Owner, args: Value) -> Value {
    let (s, v) = o.founder_call("review", args, &[]);
    assert_eq!(s, 200, "{v}");
    v
}

#[test]
fn a_person_reviews_with_the_keyboard_only_and_every_act_is_recorded() {
    let o = Owner::start();
    let p = o.brain("billing");
    std::fs::write(p.path().join("ci.yml"), "jobs: { build: { cores: 2 } }\n").unwrap();
    let write = |agent: &str, label: &str, text: &str| {
        p.as_agent(agent).memorize(label, text);
    };
    // A disagreement (a number differs), two pairs of near-duplicates (one for a person
    // to merge, one for tending to join), and claims that stand alone.
    write(
        "codex:maker",
        "Billing retry state",
        "Retry state for billing lives in the ledger_retry table",
    );
    write(
        "claude:maker",
        "Where billing keeps retries",
        "The billing service keeps its retry state in the ledger_retry table",
    );
    write(
        "codex:maker",
        "Billing give-up",
        "The billing worker gives up after 5 attempts",
    );
    write(
        "gemini:maker",
        "Billing attempts",
        "The billing worker gives up after 11 attempts",
    );
    write(
        "codex:maker",
        "Image store",
        "product images are stored in the S3 bucket shop-images",
    );
    write(
        "claude:maker",
        "Where images live",
        "the shop keeps product images in the shop-images S3 bucket",
    );
    p.as_agent("claude:maker").memorize_with(json!({
        "label": "Release build",
        "text": "Release builds run cargo build --release on the CI runner with 2 cores",
        "evidence": ["ci.yml"],
    }));
    write(
        "codex:maker",
        "Deploy window",
        "deploys happen on Tuesdays after 14:00",
    );
    write(
        "claude:maker",
        "Frontend lint",
        "The frontend is linted by eslint with the airbnb config before each commit",
    );
    let (s, pass) = o.founder_call("tend", json!({ "brain": p.root }), &[]);
    assert_eq!(s, 200, "{pass}");
    assert_eq!(
        pass["disagreements"].as_array().map(Vec::len),
        Some(1),
        "{pass}"
    );

    let profile = tempfile::tempdir().unwrap();
    let browser = browser(profile.path());
    let tab = browser.new_tab().expect("a tab");
    let ticket: Value = o
        .http
        .post(format!("{}/api/hall/ticket", o.url))
        .header(header::FOUNDER, o.founder_token())
        .send()
        .unwrap()
        .json()
        .unwrap();
    tab.navigate_to(ticket["url"].as_str().expect("a ticket url"))
        .unwrap();
    until(
        &tab,
        "document.documentElement.dataset.drawn === 'roster'",
        "the roster",
    );
    let card = format!("li.card[data-root=\"{}\"]", p.root);
    until(
        &tab,
        &format!("document.querySelector('{card} .review-line [data-stat=unreviewed]')?.textContent === '9'"),
        "the brain's card to count what waits for review",
    );

    // `#/review` opens the first brain with claims to review.
    let fp = o.instance(&p.root)["fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    tab.evaluate("location.hash = '#/review'", false).unwrap();
    until(
        &tab,
        "document.documentElement.dataset.view === 'review' && document.querySelector('li.review-item')",
        "the review page",
    );
    assert_eq!(js(&tab, "location.hash"), json!(format!("#/review/{fp}")));
    page_count(&tab, 9);
    let order = listed(&tab);
    assert_eq!(order.len(), 9, "{order:?}");
    assert_eq!(order[0], "frontend-lint", "newest first: {order:?}");
    let release = text_of(&tab, "li.review-item[data-slug=\"release-build\"]");
    for want in ["claude:maker", "ci.yml", p.root.as_str(), "2 cores"] {
        assert!(release.contains(want), "{want} in {release}");
    }
    let (with_near, other) = if js(
        &tab,
        "!!document.querySelector('li.review-item[data-slug=\"image-store\"] [data-near=\"where-images-live\"]')",
    ) == json!(true)
    {
        ("image-store", "where-images-live")
    } else {
        ("where-images-live", "image-store")
    };
    until(
        &tab,
        &format!("document.querySelector('li.review-item[data-slug=\"{with_near}\"] [data-near=\"{other}\"]')"),
        "the near-duplicates shown",
    );
    let differ = text_of(&tab, "#review-disagreements");
    for want in ["billing-give-up", "billing-attempts", "5", "11"] {
        assert!(differ.contains(want), "{want} in {differ}");
    }

    // The keys, shown with `?`; Escape closes them.
    press(&tab, "?");
    dialog_open(&tab, "#review-dialog-cancel");
    assert!(text_of(&tab, "#review-dialog").contains("raise it to verified"));
    press(&tab, "Escape");
    dialog_closed(&tab);

    // j comes to the list; y keeps the newest as it is.
    press(&tab, "j");
    assert_eq!(focused(&tab), "frontend-lint");
    press(&tab, "y");
    gone(&tab, "frontend-lint");
    page_count(&tab, 8);
    until(
        &tab,
        "document.activeElement?.matches('li.review-item')",
        "focus on the claim that took its place",
    );

    // v keeps and raises to verified.
    go_to(&tab, "release-build");
    press(&tab, "v");
    gone(&tab, "release-build");
    page_count(&tab, 7);

    // r retires, with the reason typed in the dialog; Enter confirms.
    go_to(&tab, "billing-give-up");
    press(&tab, "r");
    dialog_open(&tab, "#review-retire-reason");
    type_text(&tab, "queue moved");
    press(&tab, "Enter");
    dialog_closed(&tab);
    gone(&tab, "billing-give-up");
    page_count(&tab, 6);
    until(
        &tab,
        "!document.querySelector('#review-disagreements')",
        "the settled disagreement to leave the page",
    );

    // e edits: a secret is refused by the floor, shown in the dialog, the text kept.
    go_to(&tab, "deploy-window");
    press(&tab, "e");
    dialog_open(&tab, "#review-edit-text");
    type_text(&tab, " key ");
    paste(&tab, SECRET);
    tab.press_key_with_modifiers("Enter", Some(&[ModifierKey::Ctrl]))
        .unwrap();
    until(
        &tab,
        "!document.querySelector('#review-dialog-error').hidden",
        "the refusal in the dialog",
    );
    let refusal = text_of(&tab, "#review-dialog-error");
    assert!(refusal.contains("hygiene_refused"), "{refusal}");
    assert_eq!(
        js(&tab, "document.querySelector('#review-dialog').open"),
        json!(true)
    );
    assert_eq!(
        js(&tab, "document.querySelector('#review-edit-text').value"),
        json!(format!(
            "deploys happen on Tuesdays after 14:00 key {SECRET}"
        )),
        "the text stays in the textarea"
    );
    let deploy = |o: &Owner| {
        o.claims(&p.root)
            .into_iter()
            .find(|c| c["slug"] == "deploy-window")
            .expect("deploy-window is live")
    };
    assert_eq!(
        deploy(&o)["text"],
        "deploys happen on Tuesdays after 14:00",
        "the refused edit changed nothing"
    );
    page_count(&tab, 6);
    // Escape cancels and gives the focus back to the claim; e again, and the edit lands.
    press(&tab, "Escape");
    dialog_closed(&tab);
    assert_eq!(focused(&tab), "deploy-window");
    press(&tab, "e");
    dialog_open(&tab, "#review-edit-text");
    assert_eq!(
        js(&tab, "document.querySelector('#review-edit-text').value"),
        json!("deploys happen on Tuesdays after 14:00")
    );
    type_text(&tab, " or 15");
    tab.press_key_with_modifiers("Enter", Some(&[ModifierKey::Ctrl]))
        .unwrap();
    dialog_closed(&tab);
    gone(&tab, "deploy-window");
    page_count(&tab, 5);

    // m merges the near-duplicate into the claim; Enter on the chosen one confirms.
    go_to(&tab, with_near);
    press(&tab, "m");
    dialog_open(&tab, "input[name=merge-with]");
    press(&tab, "Enter");
    dialog_closed(&tab);
    gone(&tab, with_near);
    gone(&tab, other);
    page_count(&tab, 3);

    // t tends: a dry run proposes joining the other pair, and writes nothing ...
    press(&tab, "t");
    until(
        &tab,
        "!document.querySelector('#review-tend-result').hidden && document.activeElement?.id === 'review-apply'",
        "the dry run, focus on Apply",
    );
    let proposed = text_of(&tab, "#review-tend-result");
    assert!(
        proposed.contains("dry run") && proposed.contains("billing-retry-state"),
        "{proposed}"
    );
    assert_eq!(o.claims(&p.root).len(), 7, "a dry run joins nothing");
    // ... Apply confirms in a dialog, and the join is listed with its Undo ...
    press(&tab, "Enter");
    dialog_open(&tab, "#review-dialog-ok");
    press(&tab, "Enter");
    dialog_closed(&tab);
    until(
        &tab,
        "document.querySelector('#review-joins li[data-survivor]')",
        "the join made",
    );
    let survivor = js(
        &tab,
        "document.querySelector('#review-joins li[data-survivor]').dataset.survivor",
    )
    .as_str()
    .unwrap()
    .to_string();
    let joined = if survivor == "billing-retry-state" {
        "where-billing-keeps-retries"
    } else {
        "billing-retry-state"
    };
    gone(&tab, joined);
    page_count(&tab, 2);
    assert_eq!(o.claims(&p.root).len(), 6, "the pair is one claim");
    // ... which Tab reaches, and Enter presses: the joined label is back.
    let mut tabs = 0;
    while js(
        &tab,
        "!!document.activeElement?.matches('#review-joins button.act-undo')",
    ) != json!(true)
    {
        assert!(tabs < 80, "Tab never reached the Undo button");
        press(&tab, "Tab");
        tabs += 1;
    }
    press(&tab, "Enter");
    until(
        &tab,
        "!document.querySelector('#review-joins')",
        "the undone join to leave the page",
    );
    assert_eq!(o.claims(&p.root).len(), 7, "the joined label is live again");
    let review_png = screenshot(&tab, "hall-review.png");

    // Through REST: every act is the founder's, and the claims are as the page left them.
    let (s, acts) = o.founder_call("acts", json!({ "brain": p.root, "limit": 200 }), &[]);
    assert_eq!(s, 200, "{acts}");
    let by_person = acts_by(&acts, "human:founder");
    for (kind, subject) in [
        ("review", "frontend-lint"),
        ("retire", "billing-give-up"),
        ("consolidate", other),
        ("review", with_near),
        ("consolidate", joined),
        ("revive", joined),
    ] {
        assert!(
            by_person.contains(&(kind.to_string(), subject.to_string())),
            "{kind} {subject} by human:founder in {by_person:?}"
        );
    }
    for subject in ["release-build", "deploy-window"] {
        assert!(
            by_person.iter().any(|(_, s)| s == subject),
            "{subject} acted on by human:founder: {by_person:?}"
        );
    }
    let claims = o.claims(&p.root);
    let live = |slug: &str| claims.iter().find(|c| c["slug"] == slug).cloned();
    assert!(live("billing-give-up").is_none(), "retired");
    assert!(live(other).is_none(), "joined into {with_near}");
    assert!(live(with_near).is_some());
    assert_eq!(live("release-build").unwrap()["strength"], "verified");
    let edited = live("deploy-window").unwrap();
    assert_eq!(
        edited["text"], "deploys happen on Tuesdays after 14:00 or 15",
        "{edited}"
    );
    assert_eq!(edited["source_agent"], "human:founder", "{edited}");
    assert!(
        !claims.iter().any(|c| c.to_string().contains("ghp_")),
        "the secret never landed"
    );
    // What is left to review: the pair tending joined and a person undid, and the other
    // side of the settled disagreement; the page, the list and the roster agree.
    let left = review(&o, json!({ "brain": p.root }));
    let n = left["unreviewed"].as_u64().unwrap();
    assert!((2..=3).contains(&n), "{left}");
    assert!(
        left["claims"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["claim"]["slug"] == "billing-attempts"),
        "{left}"
    );
    page_count(&tab, n as usize);
    assert_eq!(o.instance(&p.root)["unreviewed"], n);

    // The roster says so too.
    tab.evaluate("location.hash = '#/'", false).unwrap();
    until(
        &tab,
        &format!("document.querySelector('{card} .review-line [data-stat=unreviewed]')?.textContent === '{n}'"),
        "the card's count to go down",
    );
    assert_eq!(
        js(
            &tab,
            "document.documentElement.dataset.cspViolations ?? '0'"
        ),
        json!("0"),
        "the page keeps to its policy"
    );
    assert!(std::fs::metadata(&review_png).unwrap().len() > 10_000);
}
