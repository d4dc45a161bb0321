//! Tending: which live claims say the same thing under different labels (to be joined),
//! which disagree (alike but for a number, a version, a path, an identifier or a name:
//! never joined, put before a person), and which are different facts (left alone).
//! Without a language model.
//!
//! (Documented in full once calibrated.)

mod calibration;
mod cluster;
mod judge;
mod lexicon;
mod marks;
mod numbers;

pub use calibration::{Calibration, MINILM_DIGEST, POTION_ID};
pub use cluster::{group, Cluster, Disagreement, Dropped, Member, PairEvidence, Tending};
pub use judge::{judge_read, Difference, Evidence, Judgement, Side};
pub use marks::{read, Kind, Reading};

/// Judge a pair by its words and, when given, the cosine of its embeddings by the
/// default model (potion-base-8M); [`judge_with`] for another model's.
pub fn judge(a: Side<'_>, b: Side<'_>, cosine: Option<f64>) -> Judgement {
    let cal = if cosine.is_some() {
        Calibration::POTION
    } else {
        Calibration::LEXICAL
    };
    judge_with(a, b, cosine, &cal)
}

/// Judge a pair with the thresholds `cal`.
pub fn judge_with(a: Side<'_>, b: Side<'_>, cosine: Option<f64>, cal: &Calibration) -> Judgement {
    judge_read(&read(a.label, a.text), &read(b.label, b.text), cosine, cal)
}
#[cfg(test)]
mod tests;
#[cfg(test)]
mod timing;
