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
        LegacyError::BadCreated("yesterday".into())
    );
    assert_eq!(
        parse("Node: x\nState: maybe\n\nbody").unwrap_err(),
        LegacyError::BadState("maybe".into())
    );
    assert_eq!(
        parse("Node: x\nStrength: huge\n\nbody").unwrap_err(),
        LegacyError::BadStrength("huge".into())
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
