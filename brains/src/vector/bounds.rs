//! What an eight-bit graph knows of each vector it holds beyond its codes: how far the
//! codes stand from the vector (`RowBound`), so that a vector's cosine with a query is
//! known from memory to within a bound, and a recall reads from redb only the stored
//! vectors of the candidates that bound leaves in doubt.
//!
//! The table is kept beside the graph's file (`vectors.bounds`), marked with the file's
//! length and modification time as the stamp is: a table written for another file is
//! not used, and its keys' bounds are then unknown (their vectors are read, as they were
//! before the table existed). A key's bound is written when its vector enters the graph
//! and dropped when it leaves; keys are never reused, so a bound always speaks of the
//! one vector its key names.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::arith::{norm, Rounding, BOUND_SLACK};

/// The table's file beside the graph's.
pub const BOUNDS_FILE: &str = "vectors.bounds";

/// The file's first bytes: its format.
const MAGIC: &[u8; 16] = b"medulla-bounds1\n";

/// The header: the magic, the graph file's mark (length, modification time), the count
/// of records and their checksum.
const HEAD: usize = 16 + 8 + 16 + 8 + 8;

/// A record: key, scale, residual, norm.
const RECORD: usize = 8 + 4 + 4 + 4;

/// How a row's eight bits stand for its vector `v`: `v ≈ scale × codes`, `|v − scale ×
/// codes| ≤ residual`, and `|v| = norm`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RowBound {
    pub(super) scale: f32,
    pub(super) residual: f32,
    pub(super) norm: f32,
}

impl RowBound {
    /// The bound of `v` rounded as `r` says; when `v` stands in for another vector
    /// (`stand`), of that one: `|w − ŵ| ≤ |w − v| + |v − ŵ|`.
    pub(super) fn of(v: &[f32], r: &Rounding, stand: Option<Stand>) -> RowBound {
        let (off, norm) = stand.map_or_else(|| (0.0, norm(v)), |s| (s.residual, s.norm));
        RowBound {
            scale: r.scale,
            residual: r.residual + off,
            norm,
        }
    }

    /// Bounds on the cosine of the vector with a query `q` of norm `qn`, from `dot`, the
    /// dot product of the row's codes (unscaled) with `q`: since `|q·v − q·v̂| ≤ |q| ×
    /// residual`. `None` when nothing bounds it (a vector that is not finite).
    pub(super) fn cosine(&self, dot: f32, qn: f32) -> Option<(f32, f32)> {
        if self.norm == 0.0 || qn == 0.0 {
            // A zero vector's cosine is 0 by definition.
            return Some((-BOUND_SLACK, BOUND_SLACK));
        }
        let inv = 1.0 / (self.norm * qn);
        let (approx, off) = (self.scale * dot, qn * self.residual);
        let (lower, upper) = (
            (approx - off) * inv - BOUND_SLACK,
            (approx + off) * inv + BOUND_SLACK,
        );
        (lower.is_finite() && upper.is_finite()).then_some((lower, upper))
    }
}

/// What is known of a vector handed over in place of another: a lean fresh row's
/// vector is its eight bits, within `residual` of the vector it stands for, of norm
/// `norm`. A bound made from it adds that residual, so it still speaks of the vector
/// the store holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Stand {
    pub(super) residual: f32,
    pub(super) norm: f32,
}

/// The graph's bounds by key: a key's bound at its index (keys are given out in order
/// from 1 and never reused, so the table is about as long as the store's count of
/// vectors ever written, 12 bytes each), `scale` NaN where none is known. A lookup is
/// one memory read (a search tree over 100 000 keys took ~0.5 µs of cache misses).
#[derive(Debug, Default)]
pub(super) struct Bounds {
    by_key: Vec<RowBound>,
}

/// No bound known.
const UNKNOWN: RowBound = RowBound {
    scale: f32::NAN,
    residual: f32::NAN,
    norm: f32::NAN,
};

/// A key past this many times a table's count (and a margin) is not from a store's
/// counter: a table holding one is not trusted (it would take memory for nothing).
const SPREAD_MAX: u64 = 64;

/// The file's mark: the graph file's length and modification time, as the stamp takes
/// them.
pub(super) type Mark = (u64, u128);

impl Bounds {
    pub(super) fn get(&self, key: u64) -> Option<RowBound> {
        let b = *self.by_key.get(usize::try_from(key).ok()?)?;
        (!b.scale.is_nan()).then_some(b)
    }

    pub(super) fn set(&mut self, key: u64, bound: RowBound) {
        let Ok(at) = usize::try_from(key) else {
            return;
        };
        if at >= self.by_key.len() {
            self.by_key.resize(at + 1, UNKNOWN);
        }
        self.by_key[at] = bound;
    }

    pub(super) fn remove(&mut self, key: u64) {
        if let Some(b) = usize::try_from(key)
            .ok()
            .and_then(|at| self.by_key.get_mut(at))
        {
            *b = UNKNOWN;
        }
    }

    /// Every bound held, by key.
    fn known(&self) -> impl Iterator<Item = (u64, RowBound)> + '_ {
        self.by_key
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.scale.is_nan())
            .map(|(k, b)| (k as u64, *b))
    }

    /// Read the table written for the graph file whose mark is `mark`; empty (every
    /// bound unknown) when there is none, it is unreadable, or it was written for
    /// another file.
    pub(super) fn load(graph: &Path, mark: Option<Mark>) -> Bounds {
        let Some(mark) = mark else {
            return Bounds::default();
        };
        let Ok(bytes) = std::fs::read(path_beside(graph)) else {
            return Bounds::default();
        };
        let Some(records) = parse(&bytes, mark) else {
            return Bounds::default();
        };
        let mut bounds = Bounds::default();
        if let Some((last, _)) = records.last() {
            if *last > (records.len() as u64 + 1024).saturating_mul(SPREAD_MAX) {
                return bounds;
            }
            bounds.by_key = vec![UNKNOWN; *last as usize + 1];
        }
        for (k, b) in records {
            bounds.by_key[k as usize] = b;
        }
        bounds
    }

    /// Write the table for the graph file just saved (its mark `mark`), atomically: a
    /// temp file, then a rename. Best effort: without it the next open reads the
    /// candidates' vectors from redb, as before the table existed.
    pub(super) fn save(&self, graph: &Path, mark: Mark) {
        let path = path_beside(graph);
        let tmp = path.with_extension("bounds.tmp");
        let all: Vec<(u64, RowBound)> = self.known().collect();
        let mut body = Vec::with_capacity(all.len() * RECORD);
        for (k, b) in &all {
            body.extend_from_slice(&k.to_le_bytes());
            body.extend_from_slice(&b.scale.to_le_bytes());
            body.extend_from_slice(&b.residual.to_le_bytes());
            body.extend_from_slice(&b.norm.to_le_bytes());
        }
        let mut out = Vec::with_capacity(HEAD + body.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&mark.0.to_le_bytes());
        out.extend_from_slice(&mark.1.to_le_bytes());
        out.extend_from_slice(&(all.len() as u64).to_le_bytes());
        out.extend_from_slice(&checksum(&body).to_le_bytes());
        out.extend_from_slice(&body);
        let written = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(&out));
        if written.is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        } else {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    /// Remove the table (before the graph's file is replaced: it must never be read
    /// beside another file, though its mark would tell).
    pub(super) fn discard(graph: &Path) {
        let _ = std::fs::remove_file(path_beside(graph));
    }
}

/// The records of a table written for `mark`, sorted by key; `None` when it is not one.
fn parse(bytes: &[u8], mark: Mark) -> Option<Vec<(u64, RowBound)>> {
    let head = bytes.get(..HEAD)?;
    if &head[..16] != MAGIC {
        return None;
    }
    let len = u64::from_le_bytes(head[16..24].try_into().ok()?);
    let mtime = u128::from_le_bytes(head[24..40].try_into().ok()?);
    let count = usize::try_from(u64::from_le_bytes(head[40..48].try_into().ok()?)).ok()?;
    let sum = u64::from_le_bytes(head[48..56].try_into().ok()?);
    let body = &bytes[HEAD..];
    if (len, mtime) != mark || body.len() != count.checked_mul(RECORD)? || checksum(body) != sum {
        return None;
    }
    let f = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let base: Vec<(u64, RowBound)> = body
        .chunks_exact(RECORD)
        .map(|r| {
            let key = u64::from_le_bytes([r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]]);
            let bound = RowBound {
                scale: f(&r[8..12]),
                residual: f(&r[12..16]),
                norm: f(&r[16..20]),
            };
            (key, bound)
        })
        .collect();
    // Written sorted, every figure of a rounding at least 0; a file that is not is not
    // trusted.
    let sound = |b: &RowBound| b.scale >= 0.0 && b.residual >= 0.0 && b.norm >= 0.0;
    (base.windows(2).all(|w| w[0].0 < w[1].0) && base.iter().all(|(_, b)| sound(b))).then_some(base)
}

/// A checksum of the records: a bit flipped on disk must not give a bound that is too
/// tight (which would let a candidate go that the answer holds). Each eight bytes are
/// mixed in (a multiply and a rotation: ~0.3 ms for a 100 000-key table).
fn checksum(body: &[u8]) -> u64 {
    body.chunks(8).fold(0x6d65_6475_6c6c_6121, |h, c| {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        (h ^ u64::from_le_bytes(w))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29)
    })
}

/// The table's path beside the graph file at `graph`.
fn path_beside(graph: &Path) -> PathBuf {
    graph.with_file_name(BOUNDS_FILE)
}
