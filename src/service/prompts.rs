//! MCP prompts: `north {task}`, `recall {topic}` and `debrief {task?}`, each a short
//! instruction with the memory it concerns embedded as resources (the same URIs and
//! rows `resources/read` answers). Routed like a tool call; nothing of another brain.

use std::collections::BTreeMap;

use super::resources::{row_json, row_uri, ResourceError, Result, CLAIM_MIME};
use super::route::Routed;
use super::rows::Row;
use super::verb::{Cx, Verb};
use super::verbs::seek::{Seek, SeekAnswer, SeekArgs, SeekTier};
use super::{progress::Progress, RouteInput, Service};
use crate::store_id::Fingerprint;

/// One argument of a prompt.
#[derive(Debug, Clone, Copy)]
pub struct ArgSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub required: bool,
}

/// A prompt as `prompts/list` shows it.
#[derive(Debug, Clone, Copy)]
pub struct PromptSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub arguments: &'static [ArgSpec],
}

/// Every prompt, in the order `prompts/list` shows them.
pub const PROMPTS: [PromptSpec; 3] = [
    PromptSpec {
        name: "north",
        title: "North: memory before a task",
        description: "What this project's brain and the medulla know about a task, before starting it: the matching claims embedded as resources, labelled by tier, never a false 'no memory'.",
        arguments: &[ArgSpec {
            name: "task",
            description: "The task about to be worked on.",
            required: true,
        }],
    },
    PromptSpec {
        name: "recall",
        title: "Recall a topic",
        description: "The claims this project's brain and the medulla hold about a topic, embedded as resources, best match first.",
        arguments: &[ArgSpec {
            name: "topic",
            description: "What to recall.",
            required: true,
        }],
    },
    PromptSpec {
        name: "debrief",
        title: "Debrief: hand back what was learned",
        description: "How to hand back what a piece of work taught (the debrief tool, one labelled claim per finding), with this brain's claims on the subject embedded so known labels are superseded, not duplicated.",
        arguments: &[ArgSpec {
            name: "task",
            description: "What was worked on (optional): the embedded claims are those about it; without it, the most recent.",
            required: false,
        }],
    },
];

/// One message of a prompt (all are the user's).
#[derive(Debug, Clone)]
pub enum Part {
    Text(String),
    /// A claim embedded as a resource: its URI and its full row.
    Resource {
        uri: String,
        mime_type: &'static str,
        text: String,
    },
}

/// What `prompts/get` answers.
#[derive(Debug, Clone)]
pub struct PromptAnswer {
    pub description: String,
    pub messages: Vec<Part>,
    pub landed: Option<Fingerprint>,
}

fn embed(rows: &[Row]) -> Vec<Part> {
    let mut seen = std::collections::HashSet::new();
    rows.iter()
        .filter(|r| seen.insert(row_uri(r)))
        .map(|r| Part::Resource {
            uri: row_uri(r),
            mime_type: CLAIM_MIME,
            text: row_json(r),
        })
        .collect()
}

fn required(
    args: &BTreeMap<String, String>,
    prompt: &'static str,
    argument: &'static str,
    what: &'static str,
) -> Result<String> {
    match args.get(argument).map(|s| s.trim()) {
        Some(v) if !v.is_empty() => Ok(v.to_string()),
        _ => Err(ResourceError::MissingArgument {
            prompt,
            argument,
            what,
        }),
    }
}

const USE_IT: &str = "Cite a claim by its slug when you rely on it; grade one with the learn tool ({slug, verdict: correct | partial | wrong}); memorize what you learn as one labelled claim (the same label supersedes).";

impl Service {
    /// `prompts/get`.
    pub async fn get_prompt(
        &self,
        name: &str,
        args: &BTreeMap<String, String>,
        input: &RouteInput,
    ) -> Result<PromptAnswer> {
        let routed = self.route(input).await?;
        let (description, messages) = match name {
            "north" => {
                let task = required(
                    args,
                    "north",
                    "task",
                    "describe what you are about to work on",
                )?;
                self.north_prompt(&routed, input, &task).await?
            }
            "recall" => {
                let topic = required(args, "recall", "topic", "name what to recall")?;
                self.recall_prompt(&routed, input, &topic).await?
            }
            "debrief" => {
                let task = args.get("task").map(|t| t.trim()).unwrap_or_default();
                self.debrief_prompt(&routed, input, task).await?
            }
            other => return Err(ResourceError::UnknownPrompt(other.to_string())),
        };
        Ok(PromptAnswer {
            description,
            messages,
            landed: routed.brain.map(|b| b.fingerprint),
        })
    }

    async fn seek_rows(
        &self,
        routed: &Routed,
        input: &RouteInput,
        query: &str,
        tier: Option<SeekTier>,
    ) -> Result<(Vec<Row>, Option<String>)> {
        let progress = Progress::none();
        let cx = Cx {
            svc: self,
            routed,
            input,
            progress: &progress,
        };
        let args = SeekArgs {
            query: query.to_string(),
            tier,
            scope: None,
            limit: None,
            detail: true,
            filter: None,
        };
        match Seek::run(cx, args).await? {
            SeekAnswer::Flat(f) => Ok((f.results, f.note)),
            SeekAnswer::Grouped(g) => {
                Ok((g.groups.into_iter().flat_map(|g| g.results).collect(), None))
            }
        }
    }

    async fn north_prompt(
        &self,
        routed: &Routed,
        input: &RouteInput,
        task: &str,
    ) -> Result<(String, Vec<Part>)> {
        let a = self.beat(routed, input, task).await?;
        let served = match &routed.brain {
            Some(b) => format!("this project's brain ({}) and the medulla", b.root),
            None => "the medulla (no brain serves this session)".to_string(),
        };
        let mut messages = vec![Part::Text(format!(
            "Before working on this task, read what {served} hold about it.\n\nTask: {task}\n\n{}. Each claim follows as a resource: tier project is this brain's, tier medulla is doctrine shared across projects; matched_task: false marks recent claims that did not match.",
            a.note
        ))];
        let rows: Vec<Row> = a
            .project
            .iter()
            .chain(&a.medulla)
            .chain(&a.recent_unmatched)
            .cloned()
            .collect();
        messages.extend(embed(&rows));
        let mut close = String::new();
        if !a.verify_first.is_empty() {
            close.push_str(&format!(
                "Verify before relying on: {} (their anchored evidence changed since they were written). ",
                a.verify_first
                    .iter()
                    .map(|r| r.slug.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        close.push_str(USE_IT);
        messages.push(Part::Text(close));
        Ok((format!("north for: {task}"), messages))
    }

    async fn recall_prompt(
        &self,
        routed: &Routed,
        input: &RouteInput,
        topic: &str,
    ) -> Result<(String, Vec<Part>)> {
        let (rows, note) = self.seek_rows(routed, input, topic, None).await?;
        let whose = if routed.brain.is_some() {
            "this project's brain and the medulla"
        } else {
            "the medulla (no brain serves this session)"
        };
        let mut head = format!("What {whose} recall about: {topic}\n\n");
        head.push_str(&match (&note, rows.len()) {
            (Some(n), _) => format!("{n}."),
            (None, n) => format!("{n} claim(s) follow as resources, best match first."),
        });
        let mut messages = vec![Part::Text(head)];
        messages.extend(embed(&rows));
        messages.push(Part::Text(USE_IT.to_string()));
        Ok((format!("recall: {topic}"), messages))
    }

    async fn debrief_prompt(
        &self,
        routed: &Routed,
        input: &RouteInput,
        task: &str,
    ) -> Result<(String, Vec<Part>)> {
        let how = "Debrief: call the debrief tool with findings: [{label, text, strength?, evidence?}], one labelled claim per thing this work taught that a later agent needs (a decision and its reason, a convention, a pitfall, where something lives), each in a sentence or two. Reuse a label below to supersede what it says; a new label for anything new. strength is hint, observed (the default) or verified; evidence names the files or commands that show it. Never put secrets in a finding: they are refused.";
        let about = if task.is_empty() {
            String::new()
        } else {
            format!("\n\nThe work: {task}")
        };
        let Some(brain) = &routed.brain else {
            return Ok((
                "debrief (no brain serves this session)".into(),
                vec![Part::Text(format!(
                    "{how}{about}\n\nNo brain serves this session, so a debrief would be refused: first {}.",
                    routed.fix
                ))],
            ));
        };
        let (rows, _) = self
            .seek_rows(routed, input, task, Some(SeekTier::Project))
            .await?;
        let listed = if rows.is_empty() {
            format!("{} holds no claims on this yet.", brain.root)
        } else if task.is_empty() {
            format!("{}'s most recent claims follow as resources.", brain.root)
        } else {
            format!(
                "What {} already holds about it follows as resources.",
                brain.root
            )
        };
        let mut messages = vec![Part::Text(format!("{how}{about}\n\n{listed}"))];
        messages.extend(embed(&rows));
        Ok((
            if task.is_empty() {
                "debrief".to_string()
            } else {
                format!("debrief: {task}")
            },
            messages,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_is_described_and_unique() {
        let mut names: Vec<_> = PROMPTS.iter().map(|p| p.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names, ["debrief", "north", "recall"]);
        for p in PROMPTS {
            assert!(!p.description.is_empty() && !p.title.is_empty());
            for a in p.arguments {
                assert!(!a.description.is_empty(), "{}.{}", p.name, a.name);
            }
        }
    }
}
