//! The validation every write passes before it touches disk: agent ids, control
//! characters, field sizes, trimming, and [`MemorizeInput::validate`].

use super::{
    slugify, MemorizeInput, MAX_EVIDENCE, MAX_LABEL_CHARS, MAX_SHORT_FIELD_BYTES, MAX_TEXT_BYTES,
};
use crate::error::StoreError;

/// Check an agent id is `vendor:role`: two non-empty parts of `[a-z0-9._-]`.
pub fn validate_agent_id(agent: &str) -> Result<(), StoreError> {
    let bad = || StoreError::BadAgentId {
        agent: agent.to_string(),
    };
    if agent.len() > MAX_SHORT_FIELD_BYTES {
        return Err(bad());
    }
    let (vendor, role) = agent.split_once(':').ok_or_else(bad)?;
    let part_ok = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if part_ok(vendor) && part_ok(role) {
        Ok(())
    } else {
        Err(bad())
    }
}

/// Refuse NUL and other control characters in a one-line field (names, ids, references).
pub fn check_line(field: &'static str, value: &str) -> Result<(), StoreError> {
    if has_control(value.as_bytes(), b"") {
        return Err(StoreError::ControlCharacters { field });
    }
    Ok(())
}

/// Refuse NUL and control characters in free text, except newline, carriage return and tab.
pub fn check_text(field: &'static str, value: &str) -> Result<(), StoreError> {
    if has_control(value.as_bytes(), b"\n\r\t") {
        return Err(StoreError::ControlCharacters { field });
    }
    Ok(())
}

/// Whether UTF-8 `text` holds a control character (Unicode's `Cc`, as
/// [`char::is_control`]: U+0000-U+001F and U+007F-U+009F) other than the ASCII ones in
/// `allowed`, read byte by byte, never decoded: U+0080-U+009F are the two bytes `C2 80`
/// to `C2 9F`, and `C2` is always a lead byte.
fn has_control(text: &[u8], allowed: &[u8]) -> bool {
    text.iter().enumerate().any(|(i, &b)| {
        (b < 0x20 && !allowed.contains(&b))
            || b == 0x7f
            || (b == 0xc2 && text.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)))
    })
}

/// `s` without its leading and trailing whitespace, in place: a text with none (most,
/// and every one validated before) is neither copied nor reallocated.
pub(super) fn trim_in_place(s: &mut String) {
    s.truncate(s.trim_end().len());
    let lead = s.len() - s.trim_start().len();
    if lead > 0 {
        s.drain(..lead);
    }
}

fn check_short(field: &'static str, value: Option<&str>) -> Result<(), StoreError> {
    match value {
        Some(v) if v.len() > MAX_SHORT_FIELD_BYTES => Err(StoreError::FieldTooLong {
            field,
            len: v.len(),
            max: MAX_SHORT_FIELD_BYTES,
        }),
        _ => Ok(()),
    }
}

impl MemorizeInput {
    /// Validate and normalise (trim label and text). Returns the slug.
    pub fn validate(&mut self) -> Result<String, StoreError> {
        trim_in_place(&mut self.label);
        trim_in_place(&mut self.text);
        if self.label.is_empty() {
            return Err(StoreError::EmptyLabel);
        }
        let label_chars = self.label.chars().count();
        if label_chars > MAX_LABEL_CHARS {
            return Err(StoreError::LabelTooLong {
                len: label_chars,
                max: MAX_LABEL_CHARS,
            });
        }
        if self.text.is_empty() {
            return Err(StoreError::EmptyText);
        }
        if self.text.len() > MAX_TEXT_BYTES {
            return Err(StoreError::TextTooLong {
                len: self.text.len(),
                max: MAX_TEXT_BYTES,
            });
        }
        check_line("label", &self.label)?;
        check_text("text", &self.text)?;
        validate_agent_id(&self.source_agent)?;
        if let Some(by) = &self.promoted_by {
            validate_agent_id(by)?;
        }
        if self.evidence.len() > MAX_EVIDENCE {
            return Err(StoreError::Invalid(format!(
                "{} evidence entries, over the limit of {MAX_EVIDENCE}: keep the strongest",
                self.evidence.len()
            )));
        }
        for e in &self.evidence {
            check_short("evidence entry", Some(e))?;
            check_line("evidence entry", e)?;
        }
        check_short("promotion_reason", self.promotion_reason.as_deref())?;
        check_short("origin_claim", self.origin_claim.as_deref())?;
        check_short("origin_brain", self.origin_brain.as_deref())?;
        for (field, v) in [
            ("promotion_reason", &self.promotion_reason),
            ("origin_claim", &self.origin_claim),
            ("origin_brain", &self.origin_brain),
            ("origin_agent", &self.origin_agent),
        ] {
            if let Some(v) = v {
                check_line(field, v)?;
            }
        }
        let slug = slugify(&self.label);
        if slug.is_empty() {
            return Err(StoreError::LabelWithoutSlug {
                label: self.label.clone(),
            });
        }
        Ok(slug)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::{slug_words, slugify, MAX_SLUG_CHARS};
    use proptest::prelude::*;

    proptest! {
        /// The byte-wise checks and the in-place slug cap and trim say what the
        /// character-wise definitions say, for any text (control characters, C1 ones,
        /// multi-byte letters, whitespace at either end and slugs past the length cap
        /// included).
        #[test]
        fn byte_wise_checks_agree_with_the_character_definitions(
            text in "[ \\t\\n\\r\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{a0}\\u{2028}a-zA-Z0-9ÄéßÜ中\\-!. ]{0,200}",
        ) {
            let line = text.chars().any(char::is_control);
            prop_assert_eq!(check_line("f", &text).is_err(), line);
            let free = text
                .chars()
                .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'));
            prop_assert_eq!(check_text("f", &text).is_err(), free);
            let mut trimmed = text.clone();
            trim_in_place(&mut trimmed);
            prop_assert_eq!(trimmed.as_str(), text.trim());
            let capped: String = slug_words(&text).chars().take(MAX_SLUG_CHARS).collect();
            prop_assert_eq!(slugify(&text), capped.trim_end_matches('-'));
        }
    }
}
