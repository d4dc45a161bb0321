//! The arithmetic the vector scans run on: dot products in eight lanes, norms and cosines,
//! a row's eight-bit rounding, an f32's place in the order of f32s, and the eight-bit
//! kernel at the widest level the machine runs.

/// The instruction levels this machine has, found once.
#[cfg(target_arch = "x86_64")]
static ARCH: std::sync::LazyLock<pulp::Arch> = std::sync::LazyLock::new(pulp::Arch::new);

/// The eight-bit row kernel ([`dot_i8`]) at one instruction level: the same integer sum,
/// exactly, at each.
pub(super) trait RowDot: Copy {
    fn dot_i8(self, a: &[i8], b: &[i16]) -> i64;

    /// [`RowDot::dot_i8`] of one row with four others at once (the row read once for
    /// the four): the same four sums, exactly.
    #[inline(always)]
    fn dot_i8_4(self, a: &[i8], b: [&[i16]; 4]) -> [i64; 4] {
        b.map(|b| self.dot_i8(a, b))
    }
}

/// The baseline build (SSE2's `pmaddwd` on x86-64).
#[derive(Clone, Copy)]
pub(super) struct Baseline;

impl RowDot for Baseline {
    #[inline(always)]
    fn dot_i8(self, a: &[i8], b: &[i16]) -> i64 {
        dot_i8(a, b)
    }
}

/// AVX2: sixteen components an instruction (`vpmaddwd` on the row widened to sixteen
/// bits), about four times the baseline's rows a second on 256 components. (AVX-512's
/// wider form measured slower here than AVX2's, so AVX-512 machines take this one.)
#[cfg(target_arch = "x86_64")]
impl RowDot for pulp::x86::V3 {
    #[inline(always)]
    fn dot_i8(self, a: &[i8], b: &[i16]) -> i64 {
        // Each lane sums two products a chunk: within i32 for 4 096 components.
        in_blocks(a, b, 4096, |a, b| avx2_block(self, a, b))
    }

    #[inline(always)]
    fn dot_i8_4(self, a: &[i8], b: [&[i16]; 4]) -> [i64; 4] {
        // Within one block of i32 lanes (every row the index keeps is): four at once.
        if a.len() <= 4096 && b.iter().all(|b| b.len() == a.len()) {
            avx2_block_4(self, a, b)
        } else {
            b.map(|b| self.dot_i8(a, b))
        }
    }
}

/// [`avx2_block`] of one row with four others: each sixteen components of `a` widened
/// once for the four.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn avx2_block_4(v3: pulp::x86::V3, a: &[i8], b: [&[i16]; 4]) -> [i64; 4] {
    use core::arch::x86_64::{__m128i, __m256i};
    let (wa, ta) = pulp::as_arrays::<16, i8>(a);
    let w = b.map(|b| pulp::as_arrays::<16, i16>(b).0);
    let mut acc: [__m256i; 4] = [pulp::cast([0i32; 8]); 4];
    for ((((x, y0), y1), y2), y3) in wa.iter().zip(w[0]).zip(w[1]).zip(w[2]).zip(w[3]) {
        let x: __m128i = pulp::cast(*x);
        let x = v3.avx2._mm256_cvtepi8_epi16(x);
        for (acc, y) in acc.iter_mut().zip([y0, y1, y2, y3]) {
            let y: __m256i = pulp::cast(*y);
            *acc = v3
                .avx2
                ._mm256_add_epi32(*acc, v3.avx2._mm256_madd_epi16(x, y));
        }
    }
    let mut out = [0i64; 4];
    for ((o, acc), b) in out.iter_mut().zip(acc).zip(b) {
        let lanes: [i32; 8] = pulp::cast(acc);
        let tail = &b[b.len() - ta.len()..];
        *o = lanes.iter().map(|x| i64::from(*x)).sum::<i64>() + dot_i8(ta, tail);
    }
    out
}

/// `block`'s integer dot product of `a` and `b` taken `n` components at a time (within
/// what its i32 lanes hold), the blocks added in i64: exact at any length.
#[inline(always)]
fn in_blocks(a: &[i8], b: &[i16], n: usize, block: impl Fn(&[i8], &[i16]) -> i64) -> i64 {
    a.chunks(n).zip(b.chunks(n)).map(|(a, b)| block(a, b)).sum()
}

/// AVX2's [`RowDot::dot_i8`] of at most 4 096 components.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn avx2_block(v3: pulp::x86::V3, a: &[i8], b: &[i16]) -> i64 {
    use core::arch::x86_64::{__m128i, __m256i};
    let (wa, ta) = pulp::as_arrays::<16, i8>(a);
    let (wb, tb) = pulp::as_arrays::<16, i16>(b);
    let mut acc: __m256i = pulp::cast([0i32; 8]);
    for (x, y) in wa.iter().zip(wb) {
        let x: __m128i = pulp::cast(*x);
        let y: __m256i = pulp::cast(*y);
        let p = v3
            .avx2
            ._mm256_madd_epi16(v3.avx2._mm256_cvtepi8_epi16(x), y);
        acc = v3.avx2._mm256_add_epi32(acc, p);
    }
    let lanes: [i32; 8] = pulp::cast(acc);
    lanes.iter().map(|x| i64::from(*x)).sum::<i64>() + dot_i8(ta, tb)
}

/// A loop over many rows, written once for any [`RowDot`].
pub(super) trait Rows {
    type Output;
    /// Run with kernel `k`; the implementation is `#[inline(always)]`, so it is built
    /// into each level's code whole.
    fn run<K: RowDot>(self, k: K) -> Self::Output;
}

/// `rows` with kernel `K`, as pulp's dispatch takes an operation.
struct WithKernel<K, R>(K, R);

impl<K: RowDot, R: Rows> pulp::WithSimd for WithKernel<K, R> {
    type Output = R::Output;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> R::Output {
        self.1.run(self.0)
    }
}

/// Run `rows` on the widest kernel this machine has: AVX2 where it has it, else the
/// baseline build. The loop goes in whole (one call crosses into the AVX2 code, not one a
/// row); pulp's dispatch checks the CPU, so nothing here is `unsafe`.
pub(super) fn widest<R: Rows>(rows: R) -> R::Output {
    #[cfg(target_arch = "x86_64")]
    if let pulp::Arch::V3(v3) = *ARCH {
        return pulp::Simd::vectorize(v3, WithKernel(v3, rows));
    }
    rows.run(Baseline)
}

/// The dot product, in eight lanes the compiler turns into vector instructions.
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    dot_as(a, b, |x| x)
}

/// The dot product of an eight-bit row (unscaled) and an f32 query.
pub(super) fn dot_codes(a: &[i8], b: &[f32]) -> f32 {
    dot_as(a, b, f32::from)
}

/// The dot product of `a`, each component taken as an f32 by `to`, and `b`, in eight
/// lanes.
fn dot_as<T: Copy>(a: &[T], b: &[f32], to: impl Fn(T) -> f32) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| to(*x) * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for j in 0..8 {
            acc[j] += to(x[j]) * y[j];
        }
    }
    acc.iter().sum::<f32>() + tail
}

pub(super) fn norm(v: &[f32]) -> f32 {
    dot(v, v).sqrt()
}

/// The integer dot product of an eight-bit row and a sixteen-bit query, exact (the
/// baseline [`RowDot`]).
#[inline(always)]
pub(super) fn dot_i8(a: &[i8], b: &[i16]) -> i64 {
    // A lane holds a sixteenth of the products: within i32 for 8 192 components.
    in_blocks(a, b, 8192, dot_i8_block)
}

/// [`dot_i8`] of at most 8 192 components.
#[inline(always)]
fn dot_i8_block(a: &[i8], b: &[i16]) -> i64 {
    let mut acc = [0i32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: i64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| i64::from(*x) * i64::from(*y))
        .sum();
    for (x, y) in ca.zip(cb) {
        for j in 0..16 {
            acc[j] += i32::from(x[j]) * i32::from(y[j]);
        }
    }
    acc.iter().map(|x| i64::from(*x)).sum::<i64>() + tail
}

/// An f32's place in the order of f32s (NaN aside), as an unsigned integer.
pub(super) fn order_key(x: f32) -> u32 {
    let b = x.to_bits();
    if b >> 31 == 1 {
        !b
    } else {
        b | 0x8000_0000
    }
}

pub(super) fn from_order_key(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & 0x7fff_ffff } else { !k })
}

/// Slack added to every bound for the rounding of the arithmetic itself (cosines are
/// computed in f32 to ~1e-6).
pub(super) const BOUND_SLACK: f32 = 1e-4;

/// How a row's eight bits stand for it: `v ≈ scale × codes`, how far the rounding left
/// it (`residual`, the norm of the difference) and the rounded vector's norm.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rounding {
    pub(super) scale: f32,
    pub(super) residual: f32,
    pub(super) rounded: f32,
}

/// Append `v` in eight bits to `codes`, and say how it was rounded.
pub(super) fn quantize(v: &[f32], codes: &mut Vec<i8>) -> Rounding {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        codes.extend(std::iter::repeat_n(0, v.len()));
        return Rounding {
            scale: 0.0,
            residual: norm(v),
            rounded: 0.0,
        };
    }
    let scale = max / 127.0;
    let (mut residual, mut rounded) = (0f32, 0f32);
    for x in v {
        let c = (x / scale).round().clamp(-127.0, 127.0) as i8;
        let r = scale * f32::from(c);
        residual += (x - r) * (x - r);
        rounded += r * r;
        codes.push(c);
    }
    Rounding {
        scale,
        residual: residual.sqrt(),
        rounded: rounded.sqrt(),
    }
}

/// Cosine similarity; 0 when either vector is zero.
pub(super) fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot(a, b) / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One row's product through [`widest`]: whatever kernel this machine picks.
    struct One<'a>(&'a [i8], &'a [i16]);

    impl Rows for One<'_> {
        type Output = i64;

        fn run<K: RowDot>(self, k: K) -> i64 {
            k.dot_i8(self.0, self.1)
        }
    }

    fn plain(a: &[i8], b: &[i16]) -> i64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| i64::from(*x) * i64::from(*y))
            .sum()
    }

    /// Every level this machine runs, by name: the baseline, and AVX2 where it has it.
    /// Each level's four-at-once sums of `a` with `b` and three shifts of it.
    fn levels_4(a: &[i8], b: &[i16]) -> Vec<(&'static str, [i64; 4], [i64; 4])> {
        let others: Vec<Vec<i16>> = (0..4)
            .map(|k| b.iter().map(|y| y.wrapping_add(k * 977)).collect())
            .collect();
        let four = [
            &others[0][..],
            &others[1][..],
            &others[2][..],
            &others[3][..],
        ];
        let want = four.map(|b| plain(a, b));
        let mut out = vec![("baseline", Baseline.dot_i8_4(a, four), want)];
        #[cfg(target_arch = "x86_64")]
        if let Some(v3) = pulp::x86::V3::try_new() {
            out.push(("avx2", v3.dot_i8_4(a, four), want));
        }
        out
    }

    #[test]
    fn four_at_once_gives_the_four_exact_sums_at_the_extremes_and_any_length() {
        for n in [0, 1, 15, 16, 17, 255, 256, 257, 1024, 4096, 4097, 9000] {
            for (x, y) in [(127i8, 32767i16), (-128, -32767), (-127, 32767)] {
                for (level, got, want) in levels_4(&vec![x; n], &vec![y; n]) {
                    assert_eq!(got, want, "{level}, length {n}, {x}×{y}");
                }
            }
        }
    }

    fn levels(a: &[i8], b: &[i16]) -> Vec<(&'static str, i64)> {
        let mut out = vec![
            ("baseline", Baseline.dot_i8(a, b)),
            ("widest", widest(One(a, b))),
        ];
        #[cfg(target_arch = "x86_64")]
        if let Some(v3) = pulp::x86::V3::try_new() {
            out.push(("avx2", v3.dot_i8(a, b)));
        }
        out
    }

    #[test]
    fn every_kernel_gives_the_exact_sum_at_the_extremes_and_any_length() {
        // The largest products a row and a query can make, every sign, at lengths around
        // each kernel's chunk, past where a sum in i32 would leave it, and past each
        // kernel's block.
        for n in [
            0, 1, 15, 16, 17, 31, 32, 33, 255, 256, 257, 384, 768, 1024, 1031, 4096, 4097, 8192,
            8209, 20_000,
        ] {
            for (x, y) in [
                (127i8, 32767i16),
                (-128, -32767),
                (-127, 32767),
                (127, -32767),
            ] {
                let a = vec![x; n];
                let b = vec![y; n];
                for (level, got) in levels(&a, &b) {
                    assert_eq!(got, plain(&a, &b), "{level}, length {n}, {x}×{y}");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn every_kernel_gives_the_exact_sum(
            pairs in proptest::collection::vec((any::<i8>(), any::<i16>()), 0..600)
        ) {
            let (a, b): (Vec<i8>, Vec<i16>) = pairs.into_iter().unzip();
            for (level, got) in levels(&a, &b) {
                prop_assert_eq!(got, plain(&a, &b), "{}", level);
            }
            for (level, got, want) in levels_4(&a, &b) {
                prop_assert_eq!(got, want, "{}", level);
            }
        }
    }
}
