//! The legacy `.light.md` grammar: parse, render, round trip, tolerance.

use brains::legacy::{history_file_name, parse, parse_history_file_name, render, LegacyError};
use brains::{Claim, ClaimState, Strength};

const FULL: &str = "Protocol: L1GHT/1.0
Node: Hall counters
State: authored
Created: 1783209431408
Source-Agent: claude:maker
Origin-Brain: /home/u/m1nd
Supersedes: hall-counters@1783200000000
Promoted-To: medulla@hall-counters@1783209999999
Flavor: vanilla

Per-brain cards must show per-brain counters.
Owner-wide numbers are captioned.
";

#[test]
fn parses_every_field_and_ignores_unknown_keys() {
    let c = parse(FULL).unwrap();
    assert_eq!(c.label, "Hall counters");
    assert_eq!(c.slug(), "hall-counters");
    assert_eq!(c.created, Some(1_783_209_431_408));
    assert_eq!(c.source_agent.as_deref(), Some("claude:maker"));
    assert_eq!(c.origin_brain.as_deref(), Some("/home/u/m1nd"));
    assert_eq!(c.supersedes.as_deref(), Some("hall-counters@1783200000000"));
    assert_eq!(
        c.promoted_to.as_deref(),
        Some("medulla@hall-counters@1783209999999")
    );
    assert_eq!(
        c.text,
        "Per-brain cards must show per-brain counters.\nOwner-wide numbers are captioned."
    );
    assert_eq!(c.unknown.get("Flavor").map(String::as_str), Some("vanilla"));
    let input = c.to_input();
    assert_eq!(input.created, Some(1_783_209_431_408));
    assert_eq!(input.origin_brain.as_deref(), Some("/home/u/m1nd"));
}

#[test]
fn a_missing_origin_brain_is_unknown_never_guessed() {
    let c =
        parse("Node: old claim\nCreated: 1\nSource-Agent: claude:maker\n\nfrom before origins\n")
            .unwrap();
    assert_eq!(c.origin_brain, None);
    assert_eq!(c.to_input().origin_brain, None);
}

#[test]
fn crlf_and_fenced_frontmatter_are_accepted() {
    let c = parse("---\r\nNode: fenced\r\nState: outdated\r\n---\r\n\r\nbody text\r\n").unwrap();
    assert_eq!(c.label, "fenced");
    assert_eq!(c.state, ClaimState::Outdated);
    assert_eq!(c.text, "body text");
}

#[test]
fn malformed_files_get_typed_errors() {
    assert_eq!(
        parse("just some prose\nwith no keys").unwrap_err(),
        LegacyError::NoFrontmatter
    );
    assert_eq!(
        parse("State: authored\n\nbody").unwrap_err(),
        LegacyError::MissingNode
    );
    assert_eq!(
        parse("Node: x\nCreated: yesterday\n\nbody").unwrap_err(),
        LegacyError::BadCreated { line: 2 }
    );
    assert_eq!(
        parse("Node: x\nState: maybe\n\nbody").unwrap_err(),
        LegacyError::BadState { line: 2 }
    );
    assert_eq!(
        parse("Node: x\nStrength: huge\n\nbody").unwrap_err(),
        LegacyError::BadStrength { line: 2 }
    );
    assert_eq!(parse("Node: x\n\n   ").unwrap_err(), LegacyError::EmptyBody);
    assert!(parse("").is_err());
}

#[test]
fn render_then_parse_keeps_every_provenance_field() {
    let claim = Claim {
        label: "Retry budget".into(),
        slug: "retry-budget".into(),
        text: "backoff with jitter\ncaps retry storms".into(),
        state: ClaimState::Authored,
        created: 1_783_000_000_000,
        source_agent: "codex:maker".into(),
        origin_brain: Some("/w/y".into()),
        strength: Strength::Verified,
        supersedes: Some("retry-budget@1782000000000".into()),
        trust: Default::default(),
        evidence: vec!["src/retry.rs".into(), "docs/ops.md".into()],
        content_hash: String::new(),
        version: 2,
        promoted_to: None,
        origin_claim: Some("/w/y#retry-budget".into()),
        promoted_by: Some("claude:orchestrator".into()),
        promotion_reason: Some("confirmed in x and y".into()),
        origin_created: None,
        origin_agent: None,
        outdated_reason: None,
        outdated_at: None,
        outdated_by: None,
        anchors: Vec::new(),
        member: None,
        conflict: None,
        races: Vec::new(),
        written_from: None,
        session: None,
    };
    let p = parse(&render(&claim)).unwrap();
    assert_eq!(p.label, claim.label);
    assert_eq!(p.text, claim.text);
    assert_eq!(p.state, claim.state);
    assert_eq!(p.created, Some(claim.created));
    assert_eq!(p.source_agent.as_deref(), Some("codex:maker"));
    assert_eq!(p.origin_brain, claim.origin_brain);
    assert_eq!(p.strength, Strength::Verified);
    assert_eq!(p.supersedes, claim.supersedes);
    assert_eq!(p.evidence, claim.evidence);
    assert_eq!(p.origin_claim, claim.origin_claim);
    assert_eq!(p.promoted_by, claim.promoted_by);
    assert_eq!(p.promotion_reason, claim.promotion_reason);
    assert!(p.unknown.is_empty());
}

#[test]
fn history_file_names_round_trip() {
    let n = history_file_name("medullaprobesentinel", 1_783_209_431_408);
    assert_eq!(n, "medullaprobesentinel.1783209431408.light.md");
    assert_eq!(
        parse_history_file_name(&n),
        Some(("medullaprobesentinel".into(), 1_783_209_431_408))
    );
    assert_eq!(parse_history_file_name("x.light.md"), None);
}

/// Regression (issue 10, finding 10): export then import was not lossless for a label
/// with a newline, evidence holding ", ", and CRLF text. Labels are now single-line by
/// validation; evidence and text survive whatever they hold.
#[test]
fn evidence_with_commas_and_crlf_text_survive_a_round_trip() {
    let mut input = brains::MemorizeInput {
        label: "Windows line ends".into(),
        text: "first line\r\nsecond, with a comma\r\n\tindented\rlone CR".into(),
        source_agent: "claude:maker".into(),
        evidence: vec![
            "notes, part 2".into(),
            "\"quoted\"".into(),
            "[bracketed]".into(),
        ],
        ..Default::default()
    };
    input.validate().unwrap();
    let claim = claim_of(&input);
    let back = parse(&render(&claim)).unwrap().to_input();
    assert_eq!(back.text, input.text);
    assert_eq!(back.evidence, input.evidence);
    assert_eq!(
        brains::claim::content_hash(&back.label, &back.text, back.strength, &back.evidence),
        claim.content_hash,
        "the content hash is unchanged"
    );
}

#[test]
fn created_accepts_iso_8601_dates() {
    use brains::legacy::parse_created;
    assert_eq!(parse_created("1783209431408"), Some(1_783_209_431_408));
    assert_eq!(parse_created("1970-01-02"), Some(86_400_000));
    assert_eq!(
        parse_created("2026-07-04T00:00:00Z"),
        Some(1_783_123_200_000)
    );
    assert_eq!(
        parse_created("2026-07-04T02:00:00.5+02:00"),
        Some(1_783_123_200_500)
    );
    assert_eq!(parse_created("2026-07-04 00:00"), Some(1_783_123_200_000));
    assert_eq!(parse_created("yesterday"), None);
    assert_eq!(parse_created("2026-13-01"), None);
}

fn claim_of(i: &brains::MemorizeInput) -> Claim {
    Claim {
        label: i.label.clone(),
        slug: brains::slugify(&i.label),
        text: i.text.clone(),
        state: ClaimState::Authored,
        created: 1_783_000_000_000,
        source_agent: i.source_agent.clone(),
        origin_brain: i.origin_brain.clone(),
        strength: i.strength,
        supersedes: None,
        trust: Default::default(),
        evidence: i.evidence.clone(),
        content_hash: brains::claim::content_hash(&i.label, &i.text, i.strength, &i.evidence),
        version: 1,
        promoted_to: None,
        origin_claim: i.origin_claim.clone(),
        promoted_by: i.promoted_by.clone(),
        promotion_reason: i.promotion_reason.clone(),
        origin_created: i.origin_created,
        origin_agent: i.origin_agent.clone(),
        outdated_reason: None,
        outdated_at: None,
        outdated_by: None,
        anchors: Vec::new(),
        member: None,
        conflict: None,
        races: Vec::new(),
        written_from: None,
        session: None,
    }
}

mod randomized {
    use super::*;
    use proptest::prelude::*;

    /// Printable text from a mix of ASCII punctuation, letters, unicode and separators.
    fn words(max: usize, with_breaks: bool) -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-zA-Z0-9]{1,8}",
            Just(", ".to_string()),
            Just("\"".to_string()),
            Just(":".to_string()),
            Just("[x]".to_string()),
            Just("---".to_string()),
            Just("é漢字🙂".to_string()),
            Just(" ".to_string()),
            Just("Key: value".to_string()),
        ];
        let brk = if with_breaks {
            prop_oneof![
                Just("\n".to_string()),
                Just("\r\n".to_string()),
                Just("\n\n".to_string()),
                Just("\t".to_string()),
            ]
            .boxed()
        } else {
            Just(" ".to_string()).boxed()
        };
        proptest::collection::vec(prop_oneof![4 => piece, 1 => brk], 1..max)
            .prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Any claim that passes validation renders and parses back to the same content.
        #[test]
        fn any_valid_claim_round_trips(
            label in words(12, false),
            text in words(40, true),
            evidence in proptest::collection::vec(words(6, false), 0..4),
            strength in prop_oneof![Just(Strength::Hint), Just(Strength::Observed), Just(Strength::Verified)],
            reason in proptest::option::of(words(8, false)),
        ) {
            let mut input = brains::MemorizeInput {
                label: format!("L{label}"),
                text: format!("T{text}"),
                source_agent: "claude:maker".into(),
                strength,
                evidence,
                origin_brain: Some("/w/proj, with comma".into()),
                promotion_reason: reason,
                promoted_by: Some("human:founder".into()),
                origin_created: Some(1_700_000_000_000),
                origin_agent: Some("codex:maker".into()),
                ..Default::default()
            };
            prop_assume!(input.validate().is_ok());
            let claim = claim_of(&input);
            let parsed = parse(&render(&claim)).expect("a rendered claim parses");
            let back = parsed.to_input();
            prop_assert_eq!(&back.label, &input.label);
            prop_assert_eq!(&back.text, &input.text);
            prop_assert_eq!(&back.evidence, &input.evidence);
            prop_assert_eq!(back.strength, input.strength);
            prop_assert_eq!(&back.origin_brain, &input.origin_brain);
            prop_assert_eq!(&back.promotion_reason, &input.promotion_reason.as_ref().map(|r| r.trim().to_string()).filter(|r| !r.is_empty()));
            prop_assert_eq!(back.origin_created, input.origin_created);
            prop_assert_eq!(&back.origin_agent, &input.origin_agent);
            prop_assert_eq!(parsed.created, Some(claim.created));
        }
    }
}
