//! A deterministic test embedder, shared with the crash test's writer binary
//! (`src/bin/crash_writer.rs` includes this file).

use brains::{EmbedError, Embedder};

/// Words hashed into 64 buckets, normalised: texts sharing words are near.
#[derive(Debug)]
pub struct BagOfWords;

impl Embedder for BagOfWords {
    fn id(&self) -> &str {
        "test-bag-of-words"
    }
    fn dims(&self) -> usize {
        64
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 64];
                for w in t
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    let h = w
                        .to_lowercase()
                        .bytes()
                        .fold(1469598103934665603u64, |h, b| {
                            (h ^ b as u64).wrapping_mul(1099511628211)
                        });
                    v[(h % 64) as usize] += 1.0;
                }
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                v.iter_mut().for_each(|x| *x /= n);
                v
            })
            .collect())
    }
}
