//! A fast path to the token ids of plain ASCII text, for the tokenizer a static model
//! ships (BERT's normalizer and pre-tokenizer, WordPiece): the text is cleaned,
//! lowercased and split into words here, as those steps do to ASCII, and each word's
//! ids come from the tokenizer itself once, then from a cache. WordPiece reads a word at
//! a time, so the ids are exactly the tokenizer's (checked against it on the real model
//! in `medulla::model`, and on random text in `tests/it/embed.rs`); the tokenizer's
//! own pass, which tracks every character's offsets, was most of a memorize's cost.

use std::collections::HashMap;
use std::sync::RwLock;

use tokenizers::Tokenizer;

use super::EmbedError;

/// Words cached at most; past it, new words are tokenized each time (never evicted:
/// a store's vocabulary is far smaller).
const MAX_WORDS: usize = 1 << 18;

#[derive(Debug, Default)]
pub(super) struct Words {
    cache: RwLock<HashMap<String, Box<[u32]>>>,
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
    /// text before any of this): the tokenizer's own pass then.
    pub(super) fn ids(
        &self,
        text: &str,
        tokenizer: &Tokenizer,
    ) -> Result<Option<Vec<u32>>, EmbedError> {
        if !text.is_ascii() || text.contains('[') {
            return Ok(None);
        }
        let mut ids = Vec::with_capacity(text.len() / 4);
        let mut word = String::with_capacity(32);
        for b in text.bytes() {
            match b {
                b'\t' | b'\n' | b'\r' | b' ' => self.flush(&mut word, &mut ids, tokenizer)?,
                // Control characters are removed, joining what is around them.
                0..=0x1f | 0x7f => {}
                _ if b.is_ascii_punctuation() => {
                    self.flush(&mut word, &mut ids, tokenizer)?;
                    word.push(b as char);
                    self.flush(&mut word, &mut ids, tokenizer)?;
                }
                _ => word.push(b.to_ascii_lowercase() as char),
            }
        }
        self.flush(&mut word, &mut ids, tokenizer)?;
        Ok(Some(ids))
    }

    /// Append the ids of the word gathered so far, and start the next.
    fn flush(
        &self,
        word: &mut String,
        ids: &mut Vec<u32>,
        tokenizer: &Tokenizer,
    ) -> Result<(), EmbedError> {
        if word.is_empty() {
            return Ok(());
        }
        let cached = self
            .cache
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(word.as_str())
            .map(|w| ids.extend_from_slice(w))
            .is_some();
        if !cached {
            let enc = tokenizer
                .encode_fast(word.as_str(), false)
                .map_err(|e| EmbedError::Model(format!("tokenizer: {e}")))?;
            ids.extend_from_slice(enc.get_ids());
            let mut cache = self.cache.write().unwrap_or_else(|p| p.into_inner());
            if cache.len() < MAX_WORDS {
                cache.insert(word.clone(), enc.get_ids().into());
            }
        }
        word.clear();
        Ok(())
    }
}
