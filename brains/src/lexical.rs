//! The lexical side of recall: the tokenizer (lowercase, stopwords, a light stemmer),
//! BM25's parameters, and a prepared query and its hits. The index itself, postings
//! and all, is the claim index (`crate::index`).

/// A live claim's place in the claim index (`crate::index`): stable until its next
/// compaction.
pub type DocId = u32;

pub(crate) const K1: f64 = 1.2;
pub(crate) const B: f64 = 0.75;
/// Pseudo-documents added to the store's size in idf. Plain BM25 gives a term held by
/// every claim of a tiny store an idf near zero and an unknown term several times more,
/// so "review comments" against three claims about review comments would read as no
/// evidence. Negligible once a store holds thousands of claims.
pub(crate) const IDF_PRIOR_DOCS: f64 = 100.0;
/// Label terms count this many times: a claim's name says what it is about.
pub(crate) const LABEL_WEIGHT: u32 = 2;

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for", "from",
    "had", "has", "have", "he", "her", "his", "how", "i", "in", "is", "it", "its", "me", "my",
    "of", "on", "or", "our", "she", "so", "that", "the", "their", "them", "there", "they", "this",
    "to", "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with",
    "you", "your",
];

/// A light suffix stemmer: plurals, -ing, -ed, -ly. Crude on purpose; measured by
/// `cargo xtask eval`, not assumed.
fn stem(w: &str) -> String {
    let n = w.chars().count();
    for (suffix, min_stem) in [
        ("ies", 3),
        ("ing", 4),
        ("ed", 4),
        ("ly", 4),
        ("es", 4),
        ("s", 3),
    ] {
        if let Some(base) = w.strip_suffix(suffix) {
            if base.chars().count() >= min_stem && n > suffix.len() {
                if suffix == "ies" {
                    return format!("{base}y");
                }
                if suffix == "s" && (base.ends_with('s') || base.ends_with('u')) {
                    return w.to_string();
                }
                return base.to_string();
            }
        }
    }
    w.to_string()
}

/// Lowercased alphanumeric runs, stopwords dropped, stemmed.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::with_capacity(text.len() / 6);
    for t in text.split(|c: char| !c.is_alphanumeric()) {
        if t.is_empty() {
            continue;
        }
        // An ASCII run with no capital is its own lowercase: no copy to look at it.
        let lower: std::borrow::Cow<str> =
            if t.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) {
                t.into()
            } else {
                t.to_lowercase().into()
            };
        if STOPWORDS.binary_search(&lower.as_ref()).is_err() {
            out.push(stem(&lower));
        }
    }
    out
}

/// A query prepared against the index: its known terms with their idf, and its weight,
/// the idf mass a document would match if it held every query term.
#[derive(Debug, Clone, Default)]
pub struct LexQuery {
    pub(crate) terms: Vec<(u32, f64)>,
    /// Σ idf over the distinct query terms; a term the index has never seen counts at
    /// the highest idf possible (it is as specific as a term can be, and nothing holds it).
    pub(crate) weight: f64,
    /// Distinct query terms after tokenizing (known or not).
    pub distinct: usize,
}

impl LexQuery {
    /// True when no query term is in the index: no document can match.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// One claim's lexical evidence for a query.
#[derive(Debug, Clone, PartialEq)]
pub struct LexHit {
    pub doc: DocId,
    /// Raw BM25.
    pub score: f64,
    /// BM25 divided by the query's weight and capped at 1: the share of the query's
    /// information the claim matches. Comparable across stores of any size.
    pub norm: f64,
    /// Query terms the claim holds.
    pub matched: u32,
    /// The largest idf share (idf / query weight) among the matched terms.
    pub best_term: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stopwords_are_sorted_for_their_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn tokenizer_lowercases_drops_stopwords_and_stems() {
        assert_eq!(
            tokenize("The Caches are FLAKING on runners"),
            vec!["cach", "flak", "runner"]
        );
        assert_eq!(tokenize("policies"), vec!["policy"]);
        assert_eq!(tokenize("status bus"), vec!["status", "bus"]);
    }
}
