//! The thresholds of the judgement, one set per way of comparing claims (words alone,
//! or words and one of the two models medulla ships), and where each came from: the
//! rule `cargo xtask eval --tend` applies to the tuning half of
//! `brains/tests/data/tend.tsv` (see the module doc of `tend`), which that run prints
//! beside these constants.

/// The thresholds a judgement applies (see the module doc of `tend` for how they were
/// chosen).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// What the thresholds were calibrated for: `lexical`, `potion-base-8M`,
    /// `all-MiniLM-L6-v2`.
    pub mode: &'static str,
    /// The weight of the cosine in the score; the rest is the word overlap. 0: the
    /// cosine is not looked at. Fixed at 0.5 with a model, not tuned (the tuning half
    /// is separated alike by many weights).
    pub vector_weight: f64,
    /// A pair with nothing differing is the same thing at or above this score.
    pub same: f64,
    /// A pair with something differing is a disagreement when the rest of its words
    /// (what differs left out) overlap at or above this; below, different facts.
    pub alike: f64,
    /// The texts' word overlap (the negating words left out) at or above which a
    /// negation on one side only is a difference. Set, not tuned: a negation is a
    /// difference only in texts otherwise nearly word for word the same.
    pub negation: f64,
}

impl Calibration {
    /// Words alone: no model, or a model these thresholds were not calibrated for.
    /// Tuning half: precision 1.000 at 0.50 and 0.55 (recall 0.54 at 0.55).
    pub const LEXICAL: Calibration = Calibration {
        mode: "lexical",
        vector_weight: 0.0,
        same: 0.55,
        alike: 0.55,
        negation: 0.8,
    };

    /// potion-base-8M, the static model medulla fetches by default. Tuning half:
    /// precision 1.000 at 0.55 and 0.60 (recall 0.81 at 0.60).
    pub const POTION: Calibration = Calibration {
        mode: "potion-base-8M",
        vector_weight: 0.5,
        same: 0.6,
        alike: 0.55,
        negation: 0.8,
    };

    /// all-MiniLM-L6-v2 (int8, mean pooling), `medulla model fetch --minilm`. Tuning
    /// half: precision 1.000 at 0.55 and 0.60 (recall 0.81 at 0.60).
    pub const MINILM: Calibration = Calibration {
        mode: "all-MiniLM-L6-v2",
        vector_weight: 0.5,
        same: 0.6,
        alike: 0.55,
        negation: 0.8,
    };

    /// The thresholds for a store whose model has the id `model` (`Embedder::id`), or
    /// none. A model these were not calibrated for is judged by words alone: its
    /// cosines have a scale of their own, and a wrong join costs more than a missed one.
    pub fn for_model(model: Option<&str>) -> Calibration {
        let Some(id) = model else {
            return Calibration::LEXICAL;
        };
        if id == POTION_ID {
            return Calibration::POTION;
        }
        // `onnx:<directory>:<digest of the weights>:<pooling>`.
        let mut parts = id.split(':');
        if parts.next() == Some("onnx")
            && parts.nth(1) == Some(MINILM_DIGEST)
            && parts.next() == Some("mean")
        {
            return Calibration::MINILM;
        }
        Calibration::LEXICAL
    }
}

/// The id the static model potion-base-8M loads with (a digest of its files).
pub const POTION_ID: &str = "model2vec-256d-fccdb4648eda";
/// The digest in the id of all-MiniLM-L6-v2 int8 as `medulla model fetch --minilm`
/// assembles it (the first six bytes of its weights' sha256).
pub const MINILM_DIGEST: &str = "8199be6f699a";
