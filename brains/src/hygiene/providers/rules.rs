//! The vendor token rules as data: each a pattern, the kind it reports, the literals
//! that gate it, how much public prefix the redacted form may show, and a check on the
//! matched body.

use crate::hygiene::FindingKind as K;

/// What a rule's match must also satisfy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
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
pub(super) enum Show {
    /// The first n bytes (a public prefix), then `…`.
    Prefix(usize),
    /// Everything up to and including this marker, then `…` (webhook URLs).
    Through(&'static str),
}

pub(super) struct Rule {
    pub(super) kind: K,
    /// Lowercase literals, one of which the lowercased text must hold for the pattern
    /// to be worth running (a cheap gate: most notes hold no token at all).
    pub(super) triggers: &'static [&'static str],
    pub(super) pattern: &'static str,
    pub(super) show: Show,
    pub(super) check: Check,
}

const fn rule(
    kind: K,
    triggers: &'static [&'static str],
    pattern: &'static str,
    show: Show,
    check: Check,
) -> Rule {
    Rule {
        kind,
        triggers,
        pattern,
        show,
        check,
    }
}

use Check::{Body, Cased, Mixed, NotWords};
use Show::{Prefix, Through};

/// The token rules, most specific first (an earlier match claims its span). A pattern
/// with a capture group reports the group; without one, the whole match.
pub(super) const RULES: &[Rule] = &[
    // AWS
    rule(
        K::AwsAccessKey,
        &["akia", "asia", "abia", "acca", "aroa", "aida", "a3t"],
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA|A3T[A-Z0-9])[A-Z0-9]{16}\b",
        Prefix(4),
        Body,
    ),
    // The secret key under its own names (credentials files, env, STS JSON).
    rule(
        K::AwsSecretKey,
        &[],
        r#"(?i-u:\b(?:aws_?)?secret_?access_?key|\baws_?secret_?key)["']?\s*(?:[:=]|=>)\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        Prefix(0),
        Body,
    ),
    rule(
        K::AwsSessionToken,
        &["iqojb3jpz2lux2vj", "fwogzxivyxdze"],
        r"\b(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9/+=]{60,}",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["absk"],
        r"\bABSK[A-Za-z0-9+/]{100,}={0,2}",
        Prefix(4),
        Body,
    ),
    // GitHub: classic (ghp/gho/ghu/ghs/ghr), fine-grained PATs.
    rule(
        K::GithubToken,
        &["github_pat_"],
        r"\bgithub_pat_[A-Za-z0-9_]{22,255}",
        Prefix(11),
        Body,
    ),
    rule(
        K::GithubToken,
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b",
        Prefix(4),
        Body,
    ),
    // GitLab: personal, deploy, runner, trigger, feed, agent, OAuth, CI job tokens.
    rule(
        K::GitlabToken,
        &[
            "glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-", "glimt-", "gloas-",
            "glffct-", "glwt-",
        ],
        r"\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|oas|ffct|wt)-[A-Za-z0-9_\-]{20,}",
        Prefix(6),
        Body,
    ),
    rule(
        K::GitlabToken,
        &["glagent-"],
        r"\bglagent-[A-Za-z0-9_\-]{40,}",
        Prefix(8),
        Body,
    ),
    rule(
        K::GitlabToken,
        &["gr1348941"],
        r"\bGR1348941[A-Za-z0-9_\-]{20,}",
        Prefix(9),
        Body,
    ),
    // Slack: webhooks first (they contain no xox), then tokens.
    rule(
        K::SlackWebhook,
        &["hooks.slack.com"],
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{20,}",
        Through(".com/"),
        Body,
    ),
    rule(
        K::SlackToken,
        &["xoxe."],
        r"\bxoxe\.xox[bp]-\d-[A-Za-z0-9]{20,}",
        Prefix(10),
        Body,
    ),
    rule(
        K::SlackToken,
        &["xapp-"],
        r"\bxapp-\d-[A-Z0-9]{6,}-\d{6,}-[A-Za-z0-9]{20,}",
        Prefix(5),
        Body,
    ),
    rule(
        K::SlackToken,
        &["xox"],
        r"\bxox[abposre]-[A-Za-z0-9][A-Za-z0-9\-]{9,}",
        Prefix(5),
        Body,
    ),
    // Discord
    rule(
        K::DiscordWebhook,
        &["discord"],
        r"https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d{15,21}/[A-Za-z0-9_\-]{40,100}",
        Through("webhooks/"),
        Body,
    ),
    rule(
        K::DiscordToken,
        &[],
        r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}",
        Prefix(2),
        Mixed,
    ),
    // Payments and messaging
    rule(
        K::StripeKey,
        &[
            "sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_",
        ],
        r"\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,247}\b",
        Prefix(8),
        Body,
    ),
    rule(
        K::StripeKey,
        &["whsec_"],
        r"\bwhsec_[A-Za-z0-9+/=]{24,}",
        Prefix(6),
        Body,
    ),
    rule(
        K::SendgridKey,
        &["sg."],
        r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}",
        Prefix(3),
        Body,
    ),
    rule(K::TwilioKey, &[], r"\bSK[0-9a-fA-F]{32}\b", Prefix(2), Body),
    rule(
        K::MailgunKey,
        &["key-"],
        r"\bkey-[0-9a-f]{32}\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        &[],
        r"\b[0-9a-f]{32}-us\d{1,2}\b",
        Prefix(0),
        Body,
    ),
    // Google
    rule(
        K::GoogleApiKey,
        &["aiza"],
        r"\bAIza[0-9A-Za-z_\-]{35}",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["gocspx-"],
        r"\bGOCSPX-[A-Za-z0-9_\-]{24,}",
        Prefix(7),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["ya29."],
        r"\bya29\.[A-Za-z0-9_\-]{30,}",
        Prefix(5),
        Body,
    ),
    // Azure
    rule(
        K::AzureStorageKey,
        &[
            "accountkey",
            "sharedaccesskey",
            "primarykey",
            "secondarykey",
        ],
        r"(?i-u:\b(?:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)\s*=\s*)([A-Za-z0-9+/]{30,}={0,2})",
        Prefix(0),
        Body,
    ),
    rule(
        K::AzureStorageKey,
        &["sig="],
        r"[?&]sig=([A-Za-z0-9%+/=]{30,})",
        Prefix(0),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["q~"],
        r"\b[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}",
        Prefix(0),
        Body,
    ),
    // Package registries
    rule(
        K::NpmToken,
        &["npm_"],
        r"\bnpm_[A-Za-z0-9]{36}\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::PypiToken,
        &["pypi-age"],
        r"\bpypi-AgE[A-Za-z0-9_\-]{50,}",
        Prefix(5),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["rubygems_"],
        r"\brubygems_[a-f0-9]{48}\b",
        Prefix(9),
        Body,
    ),
    // AI vendors
    rule(
        K::AnthropicKey,
        &["sk-ant-"],
        r"\bsk-ant-[a-z]{2,6}\d{2}-[A-Za-z0-9_\-]{20,}",
        Prefix(7),
        Body,
    ),
    rule(
        K::AnthropicKey,
        &["sk-ant-"],
        r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
        Prefix(7),
        NotWords,
    ),
    rule(
        K::OpenaiKey,
        &["sk-"],
        r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}",
        Prefix(3),
        NotWords,
    ),
    rule(
        K::ProviderToken,
        &["hf_"],
        r"\bhf_[A-Za-z]{34}\b",
        Prefix(3),
        Cased,
    ),
    rule(
        K::ProviderToken,
        &["r8_"],
        r"\br8_[A-Za-z0-9]{37}\b",
        Prefix(3),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["gsk_"],
        r"\bgsk_[A-Za-z0-9]{48,}\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["xai-"],
        r"\bxai-[A-Za-z0-9]{60,}\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["pplx-"],
        r"\bpplx-[A-Za-z0-9]{40,}\b",
        Prefix(5),
        Body,
    ),
    // JSON web tokens (header and payload both JSON objects).
    rule(
        K::Jwt,
        &["eyj"],
        r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*",
        Prefix(3),
        Body,
    ),
    // Platforms
    rule(
        K::HerokuKey,
        &["hrku-aa"],
        r"\bHRKU-AA[0-9A-Za-z_\-]{58}",
        Prefix(5),
        Body,
    ),
    rule(
        K::DigitaloceanToken,
        &["_v1_"],
        r"\bdo[opr]_v1_[a-f0-9]{64}\b",
        Prefix(7),
        Body,
    ),
    rule(
        K::VaultToken,
        &["hvs.", "hvb.", "hvr."],
        r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}",
        Prefix(4),
        Body,
    ),
    rule(
        K::VaultToken,
        &[],
        r"\bs\.[A-Za-z0-9]{24}\b",
        Prefix(2),
        Mixed,
    ),
    rule(
        K::ShopifyToken,
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        Prefix(6),
        Body,
    ),
    rule(
        K::TelegramBotToken,
        &[],
        r"(?:\bbot|\b)(\d{8,10}:A[A-Za-z0-9_\-]{32,36})",
        Prefix(0),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["lin_api_"],
        r"\blin_api_[A-Za-z0-9]{40}\b",
        Prefix(8),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["ntn_"],
        r"\bntn_[0-9]{11}[A-Za-z0-9]{35}\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["pmak-"],
        r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",
        Prefix(5),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["pul-"],
        r"\bpul-[a-f0-9]{40}\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["dp."],
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b",
        Prefix(6),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["glsa_"],
        r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b",
        Prefix(5),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["glc_"],
        r"\bglc_[A-Za-z0-9+/]{32,}={0,2}",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["sntry"],
        r"\bsntry[su]_[A-Za-z0-9+/=_]{40,}",
        Prefix(7),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["dapi"],
        r"\bdapi[a-f0-9]{32}(?:-\d)?\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["pscale_"],
        r"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_\-.=]{32,64}",
        Prefix(11),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["atatt3"],
        r"\bATATT3[A-Za-z0-9_\-=]{150,}",
        Prefix(6),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["sq0"],
        r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}",
        Prefix(7),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["tskey-"],
        r"\btskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}",
        Prefix(11),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["fo1_"],
        r"\bfo1_[A-Za-z0-9_\-]{43}",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        &[".atlasv1."],
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70}",
        Prefix(0),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["nrak-"],
        r"\bNRAK-[A-Z0-9]{27}\b",
        Prefix(5),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["sl."],
        r"\bsl\.[A-Za-z0-9_\-=]{130,}",
        Prefix(3),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["ops_eyj"],
        r"\bops_eyJ[A-Za-z0-9+/]{100,}={0,3}",
        Prefix(4),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["ltai"],
        r"\bLTAI[A-Za-z0-9]{20}\b",
        Prefix(4),
        Mixed,
    ),
    rule(
        K::ProviderToken,
        &["sk.eyj"],
        r"\bsk\.eyJ[A-Za-z0-9_\-]{50,}\.[A-Za-z0-9_\-]{20,}",
        Prefix(3),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["figd_"],
        r"\bfigd_[A-Za-z0-9_\-]{40}",
        Prefix(5),
        Body,
    ),
    rule(
        K::ProviderToken,
        &["sbp_"],
        r"\bsbp_[a-f0-9]{40}\b",
        Prefix(4),
        Body,
    ),
    rule(
        K::PrivateKey,
        &["age-secret-key-1"],
        r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b",
        Prefix(15),
        Body,
    ),
];
