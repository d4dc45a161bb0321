//! Hints at the point of use (SPEC §5): what the served brain and the medulla know about
//! the prompt a person just wrote, or the file an agent just read or edited, added to the
//! agent's context by the client's own hook (`medulla hint`, `POST /api/hint`). Still
//! pull: the hook asks. Confident rows only (never weak rows, never another brain), a
//! few within a small budget, each claim at most once a client session (`ledger.rs`).
//!
//! Architecture invariant: the prompt's text is used for one recall and never kept.

pub mod ledger;
mod words;

use std::fmt::Write as _;

use brains::{RecallFilter, Retrieval};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::provenance::{mark_superseded, merge_promoted};
use super::route::{RouteInput, Routed};
use super::rows::{one_line, Row, StoreTier};
use super::verbs::seek::recall_rows;
use super::Service;
use crate::error::Result;
use crate::store_id::{Fingerprint, StoreId};

/// How many claims a recall for a hint reads: the few shown, and enough to say how many
/// more matched.
const CANDIDATES: usize = 64;
/// The longest line a claim's text gets in a hint.
const LINE_CHARS: usize = 400;

/// What a hook asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HintEvent {
    /// A prompt the person just submitted.
    Prompt,
    /// A file the agent read or edited.
    File,
}

/// `POST /api/hint`: one hook call. Routed like any request (the hook's directory as the
/// caller root).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HintRequest {
    /// The client session (`claude:<session_id>`): what was shown is remembered per
    /// session.
    pub session: String,
    pub event: HintEvent,
    /// The prompt (for `prompt`): recalled for, never stored.
    #[serde(default)]
    pub prompt: Option<String>,
    /// Absolute paths of the files read or edited (for `file`).
    #[serde(default)]
    pub paths: Vec<String>,
}

/// One claim a hint added.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Added {
    pub slug: String,
    pub tier: StoreTier,
}

/// What a hint adds: `context` is the text for the agent, absent when there is nothing to
/// add (off-topic, all shown before this session, no brain, hints off).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct HintAnswer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_brain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    pub added: Vec<Added>,
    /// Confident matches not added (shown earlier this session, or past the count or the
    /// budget): the `seek` in `context` shows them.
    pub more: usize,
    /// Lexical-only when no model is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<Retrieval>,
    /// The tokens (estimated, [`tokens`]) `context` adds.
    #[serde(default)]
    pub tokens: u64,
    /// The tokens medulla has added to this client session, this answer's included.
    #[serde(default)]
    pub session_tokens: u64,
    /// The session's budget (`hint_session_tokens`) was reached: `context` says only how
    /// many claims matched and the `seek` that shows them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
}

/// `POST /api/hint/shown`: what the session-start digest (`prime`) showed a session, so
/// a hint never adds it again.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Shown {
    pub session: String,
    /// `project:<slug>@<created>`, `medulla:…`, `team:…`.
    pub versions: Vec<String>,
    /// The digest's size in tokens (estimated, [`tokens`]): counted in the session's
    /// budget and the brain's numbers.
    #[serde(default)]
    pub tokens: u64,
}

/// What `POST /api/hint/shown` recorded.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShownAnswer {
    pub recorded: usize,
}

/// `GET /api/hint/session?session=…`: the slugs a hint added to the session that the
/// agent has not cited yet (what the end-of-turn hook looks for in its transcript).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NotCited {
    pub slugs: Vec<String>,
}

/// `POST /api/hint/cited`: the slugs the agent named in its own words this session.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cited {
    pub session: String,
    pub slugs: Vec<String>,
}

/// What `POST /api/hint/cited` counted: claims a hint added, cited now for the first time.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CitedAnswer {
    pub counted: usize,
}

/// The tokens a text adds to a model's context, estimated: one per four characters,
/// rounded up (the rule of thumb model vendors give for English prose and code; a real
/// count depends on the model's own tokenizer, which medulla does not know). One
/// estimate for every count and budget, so they add up.
pub fn tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// A claim version's identity in the ledger.
pub fn version(r: &Row) -> String {
    format!("{}:{}@{}", r.tier.as_str(), r.slug, r.created)
}

/// The longest prefix of `s` within `max` bytes, at a character boundary.
fn within(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl Service {
    /// Record what the session-start digest showed a session, and what it cost: in the
    /// session's budget, and in the numbers of the brain it was shown for (the caller's).
    pub async fn hints_shown(&self, s: Shown, input: &RouteInput) -> ShownAnswer {
        let n = s.versions.len().min(ledger::MAX_SHOWN);
        self.hints.shown(
            &s.session,
            s.versions.into_iter().take(n),
            std::iter::empty(),
        );
        if s.tokens > 0 {
            let first = self.hints.spend(&s.session, s.tokens);
            if let Ok(routed) = self.route(input).await {
                if let Some(b) = routed.brain.filter(|_| routed.reception.is_none()) {
                    self.counters(&b.fingerprint)
                        .context_added(first, s.tokens, 0, false);
                }
            }
        }
        ShownAnswer { recorded: n }
    }

    /// The slugs a hint added to `session` that the agent has not cited yet.
    pub fn hints_not_cited(&self, session: &str) -> NotCited {
        NotCited {
            slugs: self.hints.not_cited(session),
        }
    }

    /// Count the claims a hint added to the session that the agent now cited.
    pub fn hints_cited(&self, c: Cited) -> CitedAnswer {
        let brains = self.hints.cited(&c.session, &c.slugs);
        for fp in brains.iter().flatten() {
            self.counters(fp).hint_cited();
            self.counters(fp).used(c.slugs.iter().map(String::as_str));
        }
        CitedAnswer {
            counted: brains.len(),
        }
    }

    /// Answer one hook call. Never an error for what the hook cannot help (no brain, an
    /// unreadable path): an empty answer.
    pub async fn hint(&self, req: HintRequest, input: &RouteInput) -> Result<HintAnswer> {
        let cfg = &self.owner.config;
        let routed = self.route(input).await?;
        // Only a caller its brain serves as its own: never another brain, never the
        // medulla alone for a directory no brain covers.
        let Some(brain) = routed.brain.clone().filter(|_| routed.reception.is_none()) else {
            return Ok(HintAnswer::default());
        };
        if !cfg.hints.on {
            return Ok(HintAnswer::default());
        }
        let counters = self.counters(&brain.fingerprint);
        let (rows, seek) = match req.event {
            HintEvent::Prompt => {
                counters.hint_prompt();
                let words = words::person_words(req.prompt.as_deref().unwrap_or_default());
                let prompt = within(&words, super::MAX_QUERY_BYTES);
                if prompt.is_empty() || brains::claim::check_text("prompt", prompt).is_err() {
                    return Ok(HintAnswer::default());
                }
                let rows = self
                    .prompt_rows(&routed, input, &brain.fingerprint, prompt)
                    .await?;
                (
                    rows,
                    format!(
                        "medulla seek {}",
                        super::route::shell_quote(&one_line(prompt, 200))
                    ),
                )
            }
            HintEvent::File => {
                counters.hint_file();
                let (rows, rel) = self
                    .file_rows(&routed, input, &brain.fingerprint, &req.paths)
                    .await?;
                match rel {
                    Some(rel) => (
                        rows,
                        format!(
                            "medulla seek --evidence {}",
                            super::route::shell_quote(&rel)
                        ),
                    ),
                    None => return Ok(HintAnswer::default()),
                }
            }
        };
        let versions: Vec<String> = rows.iter().map(version).collect();
        let unseen = self.hints.unseen(&req.session, &versions);
        let max = cfg.hints.claims;
        let budget = cfg.hints.budget_chars;
        let mut text = String::new();
        let mut added: Vec<&Row> = Vec::new();
        for (r, fresh) in rows.iter().zip(&unseen) {
            if !fresh || added.len() >= max {
                continue;
            }
            let mut line = format!(
                "- [{}] {} ({})",
                r.slug,
                one_line(&r.text, LINE_CHARS),
                r.tier.as_str()
            );
            if !r.evidence_changed.is_empty() {
                let files: Vec<&str> = r.evidence_changed.iter().map(|c| c.path.as_str()).collect();
                let _ = write!(
                    line,
                    " — its evidence changed since ({}): verify before relying on it",
                    files.join(", ")
                );
            }
            if text.chars().count() + line.chars().count() + 1 > budget {
                if added.is_empty() {
                    // The first claim alone past the budget: shown cut to it.
                    line = line
                        .chars()
                        .take(budget.saturating_sub(2))
                        .collect::<String>()
                        + "…";
                } else {
                    break;
                }
            }
            text.push_str(&line);
            text.push('\n');
            added.push(r);
        }
        if added.is_empty() {
            return Ok(HintAnswer {
                served_brain: Some(brain.root),
                more: rows.len(),
                ..HintAnswer::default()
            });
        }
        let spent = self.hints.spent(&req.session);
        let budget = cfg.hints.session_tokens;
        let more = rows.len() - added.len();
        let head = match req.event {
            HintEvent::Prompt => "medulla: what this project's memory holds about this prompt (the tier closes each line; cite a claim by its slug):",
            HintEvent::File => "medulla: claims whose evidence is this file (tier at the end; cite a claim by its slug):",
        };
        let saturated = if rows.len() >= CANDIDATES {
            "at least "
        } else {
            ""
        };
        let tail = if more > 0 {
            format!("\n{saturated}{more} more matched: `{seek}` (or the seek tool) shows them.")
        } else {
            String::new()
        };
        let context = format!("{head}\n{}{tail}", text.trim_end());
        if budget > 0 && spent + tokens(&context) > budget {
            // Past the session's budget: how many matched, and where they are.
            let what = match req.event {
                HintEvent::Prompt => "this prompt",
                HintEvent::File => "this file",
            };
            let line = format!(
                "medulla: {saturated}{} claims of this project's memory match {what}, not shown: this session has had its {budget} tokens of memory (hint_session_tokens). `{seek}` (or the seek tool) shows them.",
                rows.len()
            );
            let cost = tokens(&line);
            let first = self.hints.spend(&req.session, cost);
            counters.context_added(first, 0, cost, true);
            return Ok(HintAnswer {
                served_brain: Some(brain.root),
                context: Some(line),
                added: Vec::new(),
                more: rows.len(),
                retrieval: Some(self.retrieval),
                tokens: cost,
                session_tokens: spent + cost,
                capped: true,
            });
        }
        let cost = tokens(&context);
        let first = self.hints.spend(&req.session, cost);
        counters.context_added(first, 0, cost, false);
        self.hints.shown(
            &req.session,
            added.iter().map(|r| version(r)),
            added.iter().map(|r| {
                let fp = (r.tier == StoreTier::Project).then(|| brain.fingerprint.clone());
                (fp, r.slug.clone())
            }),
        );
        counters.hints_added(added.len() as u64);
        super::usage::note(self, added.iter().copied());
        Ok(HintAnswer {
            served_brain: Some(brain.root),
            context: Some(context),
            added: added
                .iter()
                .map(|r| Added {
                    slug: r.slug.clone(),
                    tier: r.tier,
                })
                .collect(),
            more,
            retrieval: Some(self.retrieval),
            tokens: cost,
            session_tokens: spent + cost,
            capped: false,
        })
    }

    /// The confident rows of the served brain and the medulla for a prompt, best first.
    async fn prompt_rows(
        &self,
        routed: &Routed,
        input: &RouteInput,
        fp: &Fingerprint,
        prompt: &str,
    ) -> Result<Vec<Row>> {
        let q = self
            .query(
                prompt.to_string(),
                None,
                CANDIDATES,
                RecallFilter::default(),
            )
            .await?;
        let store = StoreId::brain(fp);
        let (medulla, project) = tokio::join!(
            recall_rows(self, &StoreId::Medulla, &q, StoreTier::Medulla),
            recall_rows(self, &store, &q, StoreTier::Project)
        );
        let mut medulla = medulla?;
        let mut project = project?;
        mark_superseded(self, routed, input, &mut medulla.rows).await?;
        merge_promoted(&mut project.rows, &mut medulla.rows);
        let mut rows = project.rows;
        rows.extend(medulla.rows);
        rows.sort_by(Row::by_score);
        rows.truncate(CANDIDATES);
        super::drift::mark(self, routed, input, &mut rows).await;
        Ok(rows)
    }

    /// The served brain's live claims anchored to the first of `paths` inside its
    /// checkout, newest first, and that file's path relative to it; `None` when no path
    /// is a file of the project.
    async fn file_rows(
        &self,
        routed: &Routed,
        input: &RouteInput,
        fp: &Fingerprint,
        paths: &[String],
    ) -> Result<(Vec<Row>, Option<String>)> {
        let Some(root) = routed.anchor_root() else {
            return Ok((Vec::new(), None));
        };
        let root = std::path::PathBuf::from(root);
        let rel = paths.iter().find_map(|p| {
            let p = crate::roster::resolve_path(std::path::Path::new(p));
            let rel = p.strip_prefix(&root).ok()?;
            let rel = rel.to_string_lossy().replace('\\', "/");
            (!rel.is_empty() && !rel.starts_with(".git/")).then_some(rel)
        });
        let Some(rel) = rel else {
            return Ok((Vec::new(), None));
        };
        let filter = RecallFilter {
            evidence_file: Some(rel.clone()),
            ..RecallFilter::default()
        };
        let q = self.query(String::new(), None, CANDIDATES, filter).await?;
        let found = recall_rows(self, &StoreId::brain(fp), &q, StoreTier::Project).await?;
        // Only claims whose evidence is anchored to the file: what the filter found by
        // its words, confirmed by the anchors taken when each was written.
        let mut rows: Vec<Row> = found
            .rows
            .into_iter()
            .filter(|r| r.anchors.iter().any(|a| a.path == rel))
            .collect();
        super::drift::mark(self, routed, input, &mut rows).await;
        Ok((rows, Some(rel)))
    }
}

/// Per brain, whether the hints pay: prompts and files the hooks asked about, the claims
/// they added, and how many of those the agent then graded, superseded or retired within
/// the session; and what they cost: the sessions medulla added context to and the tokens
/// of their digests and hints.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HintCount {
    pub brain: String,
    pub prompts: u64,
    pub files: u64,
    pub claims_added: u64,
    /// Graded, superseded or retired within the session.
    pub claims_used: u64,
    /// Named by the agent in its own words within the session.
    #[serde(default)]
    pub claims_cited: u64,
    /// Client sessions medulla added context to (digest or hints).
    #[serde(default)]
    pub sessions: u64,
    /// Tokens (estimated) the session-start digests and the hints added.
    #[serde(default)]
    pub digest_tokens: u64,
    #[serde(default)]
    pub hint_tokens: u64,
    /// What a session received on average, digest and hints together.
    #[serde(default)]
    pub tokens_per_session: u64,
    /// Hints cut to a count by their session's budget.
    #[serde(default)]
    pub capped: u64,
}

/// Every brain's hint counts (brains no hook asked about are left out).
pub fn counts(svc: &Service) -> Vec<HintCount> {
    svc.owner
        .registry
        .all_manifests()
        .into_iter()
        .filter_map(|m| {
            let t = svc.counters(&m.fingerprint).totals();
            let asked = t.hint_prompts + t.hint_files + t.context_sessions > 0;
            asked.then_some(HintCount {
                brain: m.root,
                prompts: t.hint_prompts,
                files: t.hint_files,
                claims_added: t.hints_added,
                claims_used: t.hints_used,
                claims_cited: t.hints_cited,
                sessions: t.context_sessions,
                digest_tokens: t.digest_tokens,
                hint_tokens: t.hint_tokens,
                tokens_per_session: (t.digest_tokens + t.hint_tokens)
                    .checked_div(t.context_sessions)
                    .unwrap_or(0),
                capped: t.hints_capped,
            })
        })
        .collect()
}
