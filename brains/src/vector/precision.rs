//! How the graph holds a vector ([`Precision`]): eight bits, half or full precision.

/// How the graph holds a vector (redb always keeps the f32 vector: this is derived).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// Eight bits a component (the default): a quarter of f32's memory and file (a
    /// million-claim graph is 405 MB, not 661 at f16), and a graph built twice as fast.
    /// A cosine moves by ~3e-3 here, enough to reorder close candidates, so the graph
    /// only nominates them: recall and the near-duplicate check rescore every
    /// candidate with its stored f32 vector ([`Precision::rescores`]).
    #[default]
    I8,
    /// Half precision: a cosine moves by ~1e-3 (`cargo xtask eval --f16`).
    F16,
    /// Full precision: the reference the others are measured against (`eval --f32`).
    F32,
}

impl Precision {
    /// Whether the graph's cosines are too coarse to rank by: candidates are rescored
    /// with the stored vectors.
    pub fn rescores(self) -> bool {
        self == Precision::I8
    }
}
