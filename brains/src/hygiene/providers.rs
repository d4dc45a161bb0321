//! Secrets whose shape alone is the evidence: private-key blocks and vendor token
//! formats. Each rule is a pattern, the kind it reports, how much public prefix the
//! redacted form may show, and a check on the matched body (filler such as
//! `ghp_xxxxxxxx…` is documentation, not a key).

use std::sync::LazyLock;

use regex::Regex;

use super::judge::{camel_wordiness, classes, entropy, is_filler, is_plain_word};
use super::{redact, redact_after, FindingKind as K, Sink};

/// What a rule's match must also satisfy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Not filler.
    Body,
    /// Not filler, and uses digits and letters of both cases (loose shapes that an
    /// identifier could take).
    Mixed,
    /// Not filler, and uses letters of both cases (letter-only formats).
    Cased,
    /// Not filler, and not words glued with hyphens (`sk-this-is-not-a-key`).
    NotWords,
}

/// How the redacted form is built.
#[derive(Debug, Clone, Copy)]
enum Show {
    /// The first n bytes (a public prefix), then `…`.
    Prefix(usize),
    /// Everything up to and including this marker, then `…` (webhook URLs).
    Through(&'static str),
}

struct Rule {
    kind: K,
    pattern: &'static str,
    show: Show,
    check: Check,
}

const fn rule(kind: K, pattern: &'static str, show: Show, check: Check) -> Rule {
    Rule {
        kind,
        pattern,
        show,
        check,
    }
}

use Check::{Body, Cased, Mixed, NotWords};
use Show::{Prefix, Through};

/// The token rules, most specific first (an earlier match claims its span). A pattern
/// with a capture group reports the group; without one, the whole match.
const RULES: &[Rule] = &[
    // AWS
    rule(
        K::AwsAccessKey,
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA|A3T[A-Z0-9])[A-Z0-9]{16}\b",
        Prefix(4),
        Body,
    ),
    // The secret key under its own names (credentials files, env, STS JSON).
    rule(
        K::AwsSecretKey,
        r#"(?i:\b(?:aws_?)?secret_?access_?key|\baws_?secret_?key)["']?\s*(?:[:=]|=>)\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        Prefix(0),
        Body,
    ),
    rule(
        K::AwsSessionToken,
        r"\b(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9/+=]{60,}",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bABSK[A-Za-z0-9+/]{100,}={0,2}",
        Prefix(4),
        Body,
    ),
    // GitHub: classic (ghp/gho/ghu/ghs/ghr), fine-grained PATs.
    rule(
        K::GithubToken,
        r"\bgithub_pat_[A-Za-z0-9_]{22,255}",
        Prefix(11),
        Body,
    ),
    rule(
        K::GithubToken,
        r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b",
        Prefix(4),
        Body,
    ),
    // GitLab: personal, deploy, runner, trigger, feed, agent, OAuth, CI job tokens.
    rule(
        K::GitlabToken,
        r"\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|oas|ffct|wt)-[A-Za-z0-9_\-]{20,}",
        Prefix(6),
        Body,
    ),
    rule(
        K::GitlabToken,
        r"\bglagent-[A-Za-z0-9_\-]{40,}",
        Prefix(8),
        Body,
    ),
    rule(
        K::GitlabToken,
        r"\bGR1348941[A-Za-z0-9_\-]{20,}",
        Prefix(9),
        Body,
    ),
    // Slack: webhooks first (they contain no xox), then tokens.
    rule(
        K::SlackWebhook,
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{20,}",
        Through(".com/"),
        Body,
    ),
    rule(
        K::SlackToken,
        r"\bxoxe\.xox[bp]-\d-[A-Za-z0-9]{20,}",
        Prefix(10),
        Body,
    ),
    rule(
        K::SlackToken,
        r"\bxapp-\d-[A-Z0-9]{6,}-\d{6,}-[A-Za-z0-9]{20,}",
        Prefix(5),
        Body,
    ),
    rule(
        K::SlackToken,
        r"\bxox[abposre]-[A-Za-z0-9][A-Za-z0-9\-]{9,}",
        Prefix(5),
        Body,
    ),
    // Discord
    rule(
        K::DiscordWebhook,
        r"https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d{15,21}/[A-Za-z0-9_\-]{40,100}",
        Through("webhooks/"),
        Body,
    ),
    rule(
        K::DiscordToken,
        r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}",
        Prefix(2),
        Mixed,
    ),
    // Payments and messaging
    rule(
        K::StripeKey,
        r"\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,247}\b",
        Prefix(8),
        Body,
    ),
    rule(
        K::StripeKey,
        r"\bwhsec_[A-Za-z0-9+/=]{24,}",
        Prefix(6),
        Body,
    ),
    rule(
        K::SendgridKey,
        r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}",
        Prefix(3),
        Body,
    ),
    rule(K::TwilioKey, r"\bSK[0-9a-fA-F]{32}\b", Prefix(2), Body),
    rule(K::MailgunKey, r"\bkey-[0-9a-f]{32}\b", Prefix(4), Body),
    rule(
        K::ProviderToken,
        r"\b[0-9a-f]{32}-us\d{1,2}\b",
        Prefix(0),
        Body,
    ),
    // Google
    rule(
        K::GoogleApiKey,
        r"\bAIza[0-9A-Za-z_\-]{35}",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bGOCSPX-[A-Za-z0-9_\-]{24,}",
        Prefix(7),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bya29\.[A-Za-z0-9_\-]{30,}",
        Prefix(5),
        Body,
    ),
    // Azure
    rule(
        K::AzureStorageKey,
        r"(?i:\b(?:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)\s*=\s*)([A-Za-z0-9+/]{30,}={0,2})",
        Prefix(0),
        Body,
    ),
    rule(
        K::AzureStorageKey,
        r"[?&]sig=([A-Za-z0-9%+/=]{30,})",
        Prefix(0),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\b[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}",
        Prefix(0),
        Body,
    ),
    // Package registries
    rule(K::NpmToken, r"\bnpm_[A-Za-z0-9]{36}\b", Prefix(4), Body),
    rule(
        K::PypiToken,
        r"\bpypi-AgE[A-Za-z0-9_\-]{50,}",
        Prefix(5),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\brubygems_[a-f0-9]{48}\b",
        Prefix(9),
        Body,
    ),
    // AI vendors
    rule(
        K::AnthropicKey,
        r"\bsk-ant-[a-z]{2,6}\d{2}-[A-Za-z0-9_\-]{20,}",
        Prefix(7),
        Body,
    ),
    rule(
        K::AnthropicKey,
        r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
        Prefix(7),
        NotWords,
    ),
    rule(
        K::OpenaiKey,
        r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}",
        Prefix(3),
        NotWords,
    ),
    rule(K::ProviderToken, r"\bhf_[A-Za-z]{34}\b", Prefix(3), Cased),
    rule(K::ProviderToken, r"\br8_[A-Za-z0-9]{37}\b", Prefix(3), Body),
    rule(
        K::ProviderToken,
        r"\bgsk_[A-Za-z0-9]{48,}\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bxai-[A-Za-z0-9]{60,}\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bpplx-[A-Za-z0-9]{40,}\b",
        Prefix(5),
        Body,
    ),
    // JSON web tokens (header and payload both JSON objects).
    rule(
        K::Jwt,
        r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*",
        Prefix(3),
        Body,
    ),
    // Platforms
    rule(
        K::HerokuKey,
        r"\bHRKU-AA[0-9A-Za-z_\-]{58}",
        Prefix(5),
        Body,
    ),
    rule(
        K::DigitaloceanToken,
        r"\bdo[opr]_v1_[a-f0-9]{64}\b",
        Prefix(7),
        Body,
    ),
    rule(
        K::VaultToken,
        r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}",
        Prefix(4),
        Body,
    ),
    rule(K::VaultToken, r"\bs\.[A-Za-z0-9]{24}\b", Prefix(2), Mixed),
    rule(
        K::ShopifyToken,
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        Prefix(6),
        Body,
    ),
    rule(
        K::TelegramBotToken,
        r"(?:\bbot|\b)(\d{8,10}:A[A-Za-z0-9_\-]{32,36})",
        Prefix(0),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\blin_api_[A-Za-z0-9]{40}\b",
        Prefix(8),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bntn_[0-9]{11}[A-Za-z0-9]{35}\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",
        Prefix(5),
        Body,
    ),
    rule(K::ProviderToken, r"\bpul-[a-f0-9]{40}\b", Prefix(4), Body),
    rule(
        K::ProviderToken,
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b",
        Prefix(6),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b",
        Prefix(5),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bglc_[A-Za-z0-9+/]{32,}={0,2}",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bsntry[su]_[A-Za-z0-9+/=_]{40,}",
        Prefix(7),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bdapi[a-f0-9]{32}(?:-\d)?\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_\-.=]{32,64}",
        Prefix(11),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bATATT3[A-Za-z0-9_\-=]{150,}",
        Prefix(6),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}",
        Prefix(7),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\btskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}",
        Prefix(11),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bfo1_[A-Za-z0-9_\-]{43}",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70}",
        Prefix(0),
        Body,
    ),
    rule(K::ProviderToken, r"\bNRAK-[A-Z0-9]{27}\b", Prefix(5), Body),
    rule(
        K::ProviderToken,
        r"\bsl\.[A-Za-z0-9_\-=]{130,}",
        Prefix(3),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bops_eyJ[A-Za-z0-9+/]{100,}={0,3}",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bLTAI[A-Za-z0-9]{20}\b",
        Prefix(4),
        Mixed,
    ),
    rule(
        K::ProviderToken,
        r"\bsk\.eyJ[A-Za-z0-9_\-]{50,}\.[A-Za-z0-9_\-]{20,}",
        Prefix(3),
        Body,
    ),
    rule(
        K::ProviderToken,
        r"\bfigd_[A-Za-z0-9_\-]{40}",
        Prefix(5),
        Body,
    ),
    rule(K::ProviderToken, r"\bsbp_[a-f0-9]{40}\b", Prefix(4), Body),
    rule(
        K::PrivateKey,
        r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b",
        Prefix(15),
        Body,
    ),
];

static COMPILED: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|r| Regex::new(&super::ascii_bounds(r.pattern)).expect("a valid pattern"))
        .collect()
});

super::re!(
    PRIVATE_KEY,
    r"-----BEGIN[ A-Z0-9_]{0,40}PRIVATE KEY(?: BLOCK)?-----"
);

/// Every private-key block and vendor token in the text.
pub(crate) fn scan(sink: &mut Sink<'_>) {
    private_keys(sink);
    let text = sink.text;
    for (rule, re) in RULES.iter().zip(COMPILED.iter()) {
        for c in re.captures_iter(text) {
            let m = c.get(1).unwrap_or_else(|| c.get(0).expect("a match"));
            let s = m.as_str();
            if !right_bounded(text, m.end()) || !passes(rule.check, rule.show, s) {
                continue;
            }
            let redacted = match rule.show {
                Show::Prefix(0) => redact(s),
                Show::Prefix(n) => redact_after(&s[..n.min(s.len())]),
                Show::Through(marker) => match s.find(marker) {
                    Some(i) => redact_after(&s[..i + marker.len()]),
                    None => redact(s),
                },
            };
            sink.push(rule.kind, m.start(), m.end(), redacted);
        }
    }
}

/// The token does not run on into more token characters (a pattern with an exact
/// length must not match the front of something longer).
fn right_bounded(text: &str, end: usize) -> bool {
    text.as_bytes()
        .get(end)
        .is_none_or(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))
}

fn passes(check: Check, show: Show, s: &str) -> bool {
    let body = match show {
        Show::Prefix(n) => &s[n.min(s.len())..],
        Show::Through(_) => s.rsplit('/').next().unwrap_or(s),
    };
    if is_filler(body) {
        return false;
    }
    // Words standing in for a key (`ghp_PersonalAccessTokenForDocs…`); an all-caps
    // base32 body (AWS) is not judged this way.
    let c = classes(body);
    if c.lower && body.len() >= 12 && camel_wordiness(body.as_bytes()) >= 0.7 {
        return false;
    }
    match check {
        Check::Body => true,
        Check::Mixed => {
            let c = classes(body);
            c.upper && c.lower && c.digit && entropy(body.as_bytes()) > 3.5
        }
        Check::Cased => {
            let c = classes(body);
            c.upper && c.lower && entropy(body.as_bytes()) > 3.5
        }
        Check::NotWords => {
            let c = classes(body);
            // Words glued with hyphens or underscores are prose, not a key.
            !is_plain_word(body) && c.digit && entropy(body.as_bytes()) > 3.5
        }
    }
}

/// A private-key block: the BEGIN line when it starts a line or is followed by key
/// material. A header quoted inline in prose, with nothing after it, is a mention.
fn private_keys(sink: &mut Sink<'_>) {
    let text = sink.text;
    let hits: Vec<(usize, usize)> = PRIVATE_KEY
        .find_iter(text)
        .map(|m| (m.start(), m.end()))
        .collect();
    for (start, end) in hits {
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let lead = text[line_start..start]
            .trim_matches(|c: char| c.is_whitespace() || c == '"' || c == '\'');
        let after = &text[end..];
        let material = after
            .trim_start_matches(|c: char| c.is_whitespace())
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
            .count();
        let at_line_start = lead.is_empty() || lead.ends_with(':') || lead.ends_with('=');
        // An empty block (BEGIN straight to END) holds no key.
        let empty = after
            .trim_start_matches(|c: char| c.is_whitespace() || c == '\\' || c == '"')
            .starts_with("-----END");
        if empty || !(at_line_start || material >= 16) {
            continue;
        }
        let block_end = after.find("-----END").map(|i| end + i + 8).unwrap_or(end);
        sink.push(
            K::PrivateKey,
            start,
            block_end,
            "-----BEGIN PRIVATE KEY-----".to_string(),
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_rule_compiles() {
        assert_eq!(super::COMPILED.len(), super::RULES.len());
    }
}
