//! The person's own words in the prompt a client hands its prompt hook (SPEC §5: a hint
//! recalls on the person's words). Clients wrap other things around them: Gemini CLI
//! puts what its hooks added earlier in the session (medulla's own digest among them)
//! in `<hook_context>` blocks before the words, and the files a prompt references with
//! `@path` in a block of their contents after them (and a `<system_note>` for an
//! `@agent`); Claude Code may carry `<system-reminder>` blocks. Recalled on whole, such a prompt matches the digest rather
//! than what the person asked, and a long digest pushed the words past the query's bound.
//! Each known wrapping is set aside whole, wherever it stands; a block that never closes
//! is left as it is (the words are never guessed at).

/// The blocks clients wrap around a person's words: their opening and closing lines or
/// tags.
const WRAPPINGS: &[(&str, &str)] = &[
    ("<hook_context>", "</hook_context>"),
    ("<system-reminder>", "</system-reminder>"),
    ("<system_note>", "</system_note>"),
    (
        "--- Content from referenced files ---",
        "--- End of content ---",
    ),
];

/// `prompt` without the wrappings its client added, trimmed.
pub fn person_words(prompt: &str) -> String {
    let mut s = prompt.to_string();
    for (open, close) in WRAPPINGS {
        let mut from = 0;
        while let Some(i) = s[from..].find(open).map(|i| i + from) {
            let Some(j) = s[i + open.len()..].find(close) else {
                break;
            };
            let end = i + open.len() + j + close.len();
            s.replace_range(i..end, "\n");
            from = i;
        }
    }
    s.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_stay_and_the_wrapping_goes() {
        let digest = "medulla: memory for this project\n- [a] x".repeat(200);
        let gemini = format!(
            "<hook_context>{digest}</hook_context>\n\n<hook_context>more</hook_context>\n\nwhere does billing keep its retry state?"
        );
        assert_eq!(
            person_words(&gemini),
            "where does billing keep its retry state?"
        );
        let files = "explain @src/billing.rs\n--- Content from referenced files ---\nContent from @src/billing.rs:\nfn retry() {}\n--- End of content ---";
        assert_eq!(person_words(files), "explain @src/billing.rs");
        let reminder =
            "<system-reminder>todo list is empty</system-reminder>\nfix the ledger retry";
        assert_eq!(person_words(reminder), "fix the ledger retry");
        assert_eq!(person_words("  plain words  "), "plain words");
        // A block that never closes is not a wrapping medulla knows: nothing is cut.
        assert_eq!(
            person_words("<hook_context>unclosed words"),
            "<hook_context>unclosed words"
        );
    }
}
