//! The arithmetic the vector scans run on: dot products in eight lanes, norms and cosines,
//! a row's eight-bit rounding, and an f32's place in the order of f32s.

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

/// The integer dot product of an eight-bit row and a sixteen-bit query, exact.
pub(super) fn dot_i8(a: &[i8], b: &[i16]) -> i32 {
    let mut acc = [0i32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: i32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    for (x, y) in ca.zip(cb) {
        for j in 0..16 {
            acc[j] += i32::from(x[j]) * i32::from(y[j]);
        }
    }
    acc.iter().sum::<i32>() + tail
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
