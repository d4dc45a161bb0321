//! A fast path to the token ids of plain ASCII text, for the tokenizer a static model
//! ships (BERT's normalizer and pre-tokenizer, WordPiece): the text is cleaned,
//! lowercased and split into words here, as those steps do to ASCII, and each word's
//! ids come from the tokenizer itself once, then from a cache. WordPiece reads a word at
//! a time, so the ids are exactly the tokenizer's (checked against it on the real model
//! in `medulla::model`, and on random text in `tests/it/embed.rs`); the tokenizer's
//! own pass, which tracks every character's offsets, was most of a memorize's cost.

use std::sync::RwLock;

use tokenizers::Tokenizer;

use super::EmbedError;

/// Words cached at most; past it, new words are tokenized each time (never evicted:
/// a store's vocabulary is far smaller).
const MAX_WORDS: usize = 1 << 18;

#[derive(Debug, Default)]
pub(super) struct Words {
    cache: RwLock<foldhash::HashMap<String, Box<[u32]>>>,
}

impl Words {
    /// A fast path for this tokenizer, when it is one the path reproduces exactly:
    /// BERT's cleaning and lowercasing (accents and Chinese characters do not occur in
    /// ASCII), BERT's whitespace-and-punctuation split, WordPiece, and no padding or
    /// truncation of its own.
    pub(super) fn for_spec(spec: &serde_json::Value) -> Option<Words> {
        let n = &spec["normalizer"];
        let exact = n["type"] == "BertNormalizer"
            && n["clean_text"] == true
            && n["lowercase"] == true
            && spec["pre_tokenizer"]["type"] == "BertPreTokenizer"
            && spec["model"]["type"] == "WordPiece"
            && spec["padding"].is_null()
            && spec["truncation"].is_null();
        exact.then(Words::default)
    }

    /// The token ids of `text` (no special tokens), or `None` when the text is not
    /// plain ASCII or holds a `[` (an added token such as `[MASK]` is matched in the raw
    /// text before any of this): the tokenizer's own pass then. The cache is read once
    /// for the whole text (a lock taken per word made the cores of a batch take turns
    /// on it) and written once for the words it did not hold.
    pub(super) fn ids(
        &self,
        text: &str,
        tokenizer: &Tokenizer,
    ) -> Result<Option<Vec<u32>>, EmbedError> {
        if !text.is_ascii() || text.contains('[') {
            return Ok(None);
        }
        let (lower, words) = split(text);
        let mut ids = Vec::with_capacity(words.len() + words.len() / 2);
        // Words the cache lacks: where their ids go in `ids`, and the word.
        let mut missing: Vec<(usize, &str)> = Vec::new();
        {
            let cache = self.cache.read().unwrap_or_else(|p| p.into_inner());
            for &(from, to) in &words {
                let word = &lower[from..to];
                match cache.get(word) {
                    Some(w) => ids.extend_from_slice(w),
                    None => missing.push((ids.len(), word)),
                }
            }
        }
        if missing.is_empty() {
            return Ok(Some(ids));
        }
        let mut learned: Vec<(&str, Box<[u32]>)> = Vec::with_capacity(missing.len());
        let mut out = Vec::with_capacity(ids.len() + 2 * missing.len());
        let mut copied = 0;
        for &(at, word) in &missing {
            out.extend_from_slice(&ids[copied..at]);
            copied = at;
            let enc = tokenizer
                .encode_fast(word, false)
                .map_err(|e| EmbedError::Model(format!("tokenizer: {e}")))?;
            out.extend_from_slice(enc.get_ids());
            learned.push((word, enc.get_ids().into()));
        }
        out.extend_from_slice(&ids[copied..]);
        let mut cache = self.cache.write().unwrap_or_else(|p| p.into_inner());
        for (word, w) in learned {
            if cache.len() >= MAX_WORDS {
                break;
            }
            cache.entry(word.to_string()).or_insert(w);
        }
        Ok(Some(out))
    }
}

/// `text` (ASCII) cleaned and lowercased as BERT's normalizer does, and split as its
/// pre-tokenizer does: on whitespace, and around each punctuation character. The
/// lowercased text, and each word's range of it.
fn split(text: &str) -> (String, Vec<(usize, usize)>) {
    let mut lower = String::with_capacity(text.len());
    let mut words = Vec::with_capacity(text.len() / 4);
    let mut start = 0;
    let mut end_word = |lower: &String, start: &mut usize| {
        if lower.len() > *start {
            words.push((*start, lower.len()));
        }
        *start = lower.len();
    };
    for b in text.bytes() {
        match b {
            b'\t' | b'\n' | b'\r' | b' ' => end_word(&lower, &mut start),
            // Control characters are removed, joining what is around them.
            0..=0x1f | 0x7f => {}
            _ if b.is_ascii_punctuation() => {
                end_word(&lower, &mut start);
                lower.push(b as char);
                end_word(&lower, &mut start);
            }
            _ => lower.push(b.to_ascii_lowercase() as char),
        }
    }
    end_word(&lower, &mut start);
    (lower, words)
}
