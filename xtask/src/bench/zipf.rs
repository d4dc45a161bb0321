//! A corpus of repetitive notes: short claims drawn from a small vocabulary with Zipf's
//! law, so most of their words are common (at 100 000 claims, tens of thousands share
//! each of the top words), and queries of two or three of those common words: the shape
//! where per-term bounds prune nothing (issue 50). Deterministic: the same seed, the
//! same claims and queries.

/// Words in the vocabulary.
pub(crate) const VOCAB: usize = 400;

/// Query words are drawn among this many most frequent words.
const QUERY_RANKS: usize = 16;

/// SplitMix64: a small deterministic generator.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Syllables the words are made of: consonant then vowel, so a word ends in a vowel and
/// the tokenizer's stemmer leaves it whole, and no word is a stopword.
const SYLLABLES: [&str; 20] = [
    "ba", "ko", "mi", "tu", "ze", "ra", "no", "pi", "gu", "fe", "lo", "vi", "da", "xu", "ne", "jo",
    "wa", "ti", "ku", "ho",
];

/// Word `rank` of the vocabulary (0 the most frequent): three syllables, distinct for
/// every rank below 8 000.
pub(crate) fn word(rank: usize) -> String {
    // A stride coprime with 8 000 spreads neighbouring ranks over different syllables.
    let n = rank * 2_741 % 8_000;
    [n / 400, n / 20 % 20, n % 20]
        .iter()
        .map(|i| SYLLABLES[*i])
        .collect()
}

/// Draws word ranks with Zipf's law (exponent 1) over [`VOCAB`] words.
pub(crate) struct Zipf {
    /// Cumulative probability of ranks `0..=i`.
    cdf: Vec<f64>,
}

impl Zipf {
    pub(crate) fn new() -> Zipf {
        let weights: Vec<f64> = (1..=VOCAB).map(|r| 1.0 / r as f64).collect();
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cdf = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        Zipf { cdf }
    }

    pub(crate) fn rank(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cdf.partition_point(|c| *c < u).min(VOCAB - 1)
    }

    /// `n` words drawn one by one, joined by spaces.
    pub(crate) fn words(&self, rng: &mut Rng, n: usize) -> String {
        (0..n)
            .map(|_| word(self.rank(rng)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Claim `i` of a corpus: a label of two or three words with its number (slugs stay
/// distinct) and a text of 8 to 15 words.
pub(crate) fn claim(z: &Zipf, seed: u64, i: usize) -> (String, String) {
    let mut rng = Rng::new(seed ^ (i as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let label_words = 2 + rng.below(2);
    let label = format!("{} {i}", z.words(&mut rng, label_words));
    let text_words = 8 + rng.below(8);
    let text = format!("{}.", z.words(&mut rng, text_words));
    (label, text)
}

/// Query `i`: two or three distinct words among the [`QUERY_RANKS`] most frequent.
pub(crate) fn query(i: usize) -> String {
    let mut rng = Rng::new(0x51ee_d000 + i as u64);
    let n = 2 + rng.below(2);
    let mut ranks: Vec<usize> = Vec::with_capacity(n);
    while ranks.len() < n {
        let r = rng.below(QUERY_RANKS);
        if !ranks.contains(&r) {
            ranks.push(r);
        }
    }
    ranks.into_iter().map(word).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_distinct_and_survive_the_tokenizer_whole() {
        let words: Vec<String> = (0..VOCAB).map(word).collect();
        let set: std::collections::HashSet<&String> = words.iter().collect();
        assert_eq!(set.len(), VOCAB);
        for w in &words {
            assert_eq!(brains::lexical::tokenize(w), vec![w.clone()]);
        }
    }

    #[test]
    fn the_top_words_are_common_and_the_tail_rare() {
        let z = Zipf::new();
        let mut holding = vec![0usize; VOCAB];
        let n = 10_000;
        for i in 0..n {
            let (l, t) = claim(&z, 7, i);
            let mut seen: Vec<String> = brains::lexical::tokenize(&format!("{l} {t}"));
            seen.sort();
            seen.dedup();
            for (r, h) in holding.iter_mut().enumerate() {
                if seen.binary_search(&word(r)).is_ok() {
                    *h += 1;
                }
            }
        }
        // Every query word is held by more than a tenth of the claims; the last words
        // by a few hundredths at most.
        assert!(
            holding[..QUERY_RANKS].iter().all(|h| *h > n / 10),
            "{holding:?}"
        );
        assert!(
            holding[VOCAB - 10..].iter().all(|h| *h < n / 30),
            "{holding:?}"
        );
    }
}
