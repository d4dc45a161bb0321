//! Word structure and randomness: how much of a value reads as words, how often it
//! switches character class, and whether it is random enough to be a machine-made key.

use super::{classes, entropy, is_hexish, longest_run};

/// Transitions between character classes (lower, upper, digit, other) per character:
/// high for random strings, low for words and identifiers.
pub(crate) fn class_switch_rate(s: &[u8]) -> f64 {
    if s.len() < 2 {
        return 0.0;
    }
    let class = |b: u8| match b {
        b'a'..=b'z' => 0u8,
        b'A'..=b'Z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    };
    let switches = s
        .windows(2)
        .filter(|w| {
            let (a, b) = (class(w[0]), class(w[1]));
            // Capitalised words (`Ab`) are one unit, not a switch.
            a != b && !(a == 1 && b == 0)
        })
        .count();
    switches as f64 / (s.len() - 1) as f64
}

/// The share of letters that sit in word-like segments: a lowercase run of 3+ letters
/// (with an optional leading capital) holding a vowel. CamelCase, snake_case and glued
/// words score near 1; random strings score low.
pub(crate) fn wordiness(s: &[u8]) -> f64 {
    wordiness_with(s, true)
}

/// [`wordiness`] counting only lowercase-led words (`Personal`, `token`), not all-caps
/// runs, which base32 keys are full of.
pub(crate) fn camel_wordiness(s: &[u8]) -> f64 {
    wordiness_with(s, false)
}

fn wordiness_with(s: &[u8], caps_words: bool) -> f64 {
    let letters = s.iter().filter(|b| b.is_ascii_alphabetic()).count();
    if letters == 0 {
        return 0.0;
    }
    let mut in_words = 0;
    let mut i = 0;
    while i < s.len() {
        if !s[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let start = i;
        // A capital may lead a lowercase run; an uppercase run is an acronym segment.
        if s[i].is_ascii_uppercase() {
            let mut j = i;
            while j < s.len() && s[j].is_ascii_uppercase() {
                j += 1;
            }
            if j < s.len() && s[j].is_ascii_lowercase() && j - i > 1 {
                // `HTTPServer`: the acronym is `HTTP`, `Server` starts at j - 1.
                let acronym = j - 1 - i;
                if caps_words
                    && (2..=8).contains(&acronym)
                    && has_vowel(&s[i..j - 1])
                    && longest_run(&s[i..j - 1]) < 3
                {
                    in_words += acronym;
                }
                i = j - 1;
                continue;
            }
            if j - i >= 2 {
                // An all-caps run: a word if it is short-ish and pronounceable.
                if caps_words
                    && j - i >= 3
                    && has_vowel(&s[i..j])
                    && j - i <= 12
                    && not_sequence(&s[i..j])
                {
                    in_words += j - i;
                }
                i = j;
                continue;
            }
            i += 1;
        }
        let mut j = i;
        while j < s.len() && s[j].is_ascii_lowercase() {
            j += 1;
        }
        if j - start >= 3 && has_vowel(&s[start..j]) && not_sequence(&s[start..j]) {
            in_words += j - start;
        }
        i = j.max(start + 1);
    }
    in_words as f64 / letters as f64
}

/// Letters counted as a word must not be an alphabet run (`abcdefgh`, `MNOPQ`).
fn not_sequence(s: &[u8]) -> bool {
    if s.len() < 4 {
        return true;
    }
    let steps = s
        .windows(2)
        .filter(|w| w[1].to_ascii_lowercase() == w[0].to_ascii_lowercase().wrapping_add(1))
        .count();
    steps * 2 < s.len() - 1
}

fn has_vowel(s: &[u8]) -> bool {
    s.iter().any(|b| {
        matches!(
            b.to_ascii_lowercase(),
            b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
        )
    })
}

/// A value random enough to be a machine-made key: long, no word structure, dense.
/// This is the bar for values whose name alone does not make them secret.
pub(crate) fn is_random_token(v: &str) -> bool {
    let b = v.as_bytes();
    if b.len() < 16 {
        return false;
    }
    let c = classes(v);
    if !(c.digit && (c.lower || c.upper)) {
        return false;
    }
    if is_hexish(v) {
        return b.len() >= 32 && entropy(b) > 3.0;
    }
    let h = entropy(b);
    let need = ((b.len() as f64).log2() - 1.0).min(3.8);
    h >= need && wordiness(b) < 0.6 && class_switch_rate(b) >= 0.25
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_wordy_and_random_strings_are_not() {
        for id in [
            "AbstractSingletonProxyFactoryBeanConfigurationHolder2",
            "snake_case_identifier_names_are_not_secrets",
            "HTTPServerConfigBuilder",
            "test_parse_ok_2024_regression_case",
        ] {
            assert!(wordiness(id.as_bytes()) > 0.7, "{id}");
        }
        for r in [
            "Zx9qL2mN8vB4cX7wR5tY3uI1oP6aS0dF",
            "7hG2kP9xQ4mW8zR3vN6tB1yL5cJ0dF2s",
        ] {
            assert!(wordiness(r.as_bytes()) < 0.4, "{r}");
            assert!(is_random_token(r), "{r}");
        }
    }
}
