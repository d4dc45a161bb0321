//! A claim's vector and terms worked out ahead of its write, off the store's thread: a
//! bulk writer (an import) works out its next batch's while the store writes the one
//! before, on cores the write leaves idle, and the store then only checks and takes
//! them. They depend on the label, the text and the model alone, so the store takes one
//! only for the very label and text it writes and the model it holds; any other it works
//! out again, as it does for an input that comes without one.

use super::embed_text;
use crate::claim::MemorizeInput;
use crate::embed::{EmbedError, Embedder};
use crate::index::Terms;

/// What one input's label and text give: its vector under a model (none without one)
/// and its terms. Made only by [`Derivation::of`].
pub struct Derivation {
    /// The model's id, `None` without a model.
    model: Option<String>,
    label: String,
    text: String,
    vector: Option<Vec<f32>>,
    terms: Terms,
}

impl Derivation {
    /// `input`'s vector under `embedder` (none without one) and its terms, from its label
    /// and text as they stand: trimmed, as [`MemorizeInput::validate`] leaves them, or the
    /// store will not take it.
    pub fn of(
        embedder: Option<&dyn Embedder>,
        input: &MemorizeInput,
    ) -> Result<Derivation, EmbedError> {
        let vector = match embedder {
            None => None,
            Some(e) => {
                let text = embed_text(&input.label, &input.text);
                let mut vs = e.embed(&[text.as_str()])?;
                if vs.len() != 1 {
                    return Err(EmbedError::Model(format!(
                        "the model returned {} vectors for one text",
                        vs.len()
                    )));
                }
                vs.pop()
            }
        };
        Ok(Derivation {
            model: embedder.map(|e| e.id().to_string()),
            label: input.label.clone(),
            text: input.text.clone(),
            vector,
            terms: Terms::of(&input.label, &input.text),
        })
    }

    /// Whether this is what `label` and `text` give under the model `model` (its id;
    /// `None` without one), the model's vector of `dims` dimensions.
    pub(super) fn fits(&self, model: Option<(&str, usize)>, label: &str, text: &str) -> bool {
        let same_model = match (model, &self.model, &self.vector) {
            (None, None, None) => true,
            (Some((id, dims)), Some(m), Some(v)) => id == m && v.len() == dims,
            _ => false,
        };
        same_model && self.label == label && self.text == text
    }

    /// Its vector (when made under a model) and its terms.
    pub(super) fn into_parts(self) -> (Option<Vec<f32>>, Terms) {
        (self.vector, self.terms)
    }
}
