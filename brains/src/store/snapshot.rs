//! The claim-index snapshot, `claims.snapshot`: the claim index (terms, the metadata
//! scope and filters read, vector keys; `crate::index`) as one flat segment, saved so
//! that opening a dormant store reads one file instead of decoding and tokenizing every
//! claim. Derived state, like the vector index:
//! redb is the truth. A snapshot is trusted only when it reads whole (magic, checksum,
//! every length) and was written by this store (its `created` stamp) at the act
//! sequence the store is at; one from an earlier sequence (a crash since the last save)
//! is caught up by replaying the acts written since, and anything else is rebuilt.

use std::io::{Seek, Write};
use std::path::Path;

use crate::error::StoreError;
use crate::index::{put_u32, put_u64, ClaimIndex, Put, Reader, Segment};

pub(crate) const SNAPSHOT_FILE: &str = "claims.snapshot";
/// Version 3: the claim index as one flat segment, with the vector keys.
const MAGIC: &[u8; 8] = b"MDCLSNP3";

/// Which state of which store a snapshot holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stamp {
    /// The store's `next_act` when the snapshot was taken.
    pub(super) next_act: u64,
    /// The store's `next_key`: vector keys are given out from it, with or without an
    /// act (embedding on open), so a snapshot whose keys may be stale says so.
    pub(super) next_key: u64,
    /// The store's creation stamp (meta `created`): a snapshot of another store never
    /// passes for this one's.
    pub(super) created: String,
    /// Live claims at that point.
    pub(super) live: u64,
}

/// The claim index of one store at one act sequence.
pub(super) struct Snapshot {
    pub(super) stamp: Stamp,
    pub(super) index: ClaimIndex,
}

fn put_str(out: &mut impl Put, s: &str) {
    put_u64(out, s.len() as u64);
    out.put(s.as_bytes());
}

/// The snapshot's bytes after its magic and checksum, of the segment
/// [`ClaimIndex::frozen`] gave at `stamp`.
fn put_body(out: &mut impl Put, stamp: &Stamp, base: &Segment) {
    put_u64(out, stamp.next_act);
    put_u64(out, stamp.next_key);
    put_str(out, &stamp.created);
    put_u64(out, stamp.live);
    put_u32(out, 0);
    base.write(out);
}

/// The snapshot's bytes, whole in memory: what the streamed file must hold.
#[cfg(test)]
pub(super) fn encode(stamp: &Stamp, base: &Segment) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[0; 4]);
    put_body(&mut out, stamp, base);
    let crc = crc32fast::hash(&out[12..]);
    out[8..12].copy_from_slice(&crc.to_le_bytes());
    out
}

/// A snapshot file being written: buffered, every byte after the checksum summed as it
/// goes; the first failure is kept and the rest skipped.
struct Summed<W: Write> {
    out: std::io::BufWriter<W>,
    crc: crc32fast::Hasher,
    failed: Option<std::io::Error>,
}

impl<W: Write> Put for Summed<W> {
    fn put(&mut self, b: &[u8]) {
        if self.failed.is_none() {
            self.crc.update(b);
            if let Err(e) = self.out.write_all(b) {
                self.failed = Some(e);
            }
        }
    }
}

/// Write the snapshot of `base` at `stamp` to `file`, streamed: the encoding goes to the
/// file a buffer at a time, never whole in memory (at a million claims it is hundreds of
/// megabytes, and a buffer grown to hold it cost a checkpoint most of its time in page
/// faults); the checksum is written last, in its place after the magic.
fn write_to(file: std::fs::File, stamp: &Stamp, base: &Segment) -> std::io::Result<()> {
    let mut out = Summed {
        out: std::io::BufWriter::with_capacity(1 << 16, &file),
        crc: crc32fast::Hasher::new(),
        failed: None,
    };
    out.out.write_all(MAGIC)?;
    out.out.write_all(&[0; 4])?;
    put_body(&mut out, stamp, base);
    let Summed { out, crc, failed } = out;
    if let Some(e) = failed {
        return Err(e);
    }
    out.into_inner()
        .map_err(std::io::IntoInnerError::into_error)?;
    let mut file = &file;
    file.seek(std::io::SeekFrom::Start(8))?;
    file.write_all(&crc.finalize().to_le_bytes())
}

/// Decode a snapshot from `src`, which holds `len` bytes; `Err` says why it cannot be
/// used. The checksum is summed while the bytes are parsed and checked at the end:
/// nothing parsed is used unless it holds.
fn decode(mut src: impl std::io::Read, len: usize) -> Result<Snapshot, String> {
    let mut head = [0u8; 12];
    if len < 12 || src.read_exact(&mut head).is_err() || &head[..8] != MAGIC {
        return Err("the claim-index snapshot is not one of this version (bad magic)".into());
    }
    let crc = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
    let mut r = Reader::streaming(src, len - 12);
    let parsed = read(&mut r);
    match r.crc() {
        Err(e) => Err(format!("the claim-index snapshot is unreadable: {e}")),
        Ok(sum) if sum != crc => Err("the claim-index snapshot fails its checksum".into()),
        Ok(_) => parsed.ok_or_else(|| "the claim-index snapshot does not parse".into()),
    }
}

fn read(r: &mut Reader<'_>) -> Option<Snapshot> {
    let stamp = Stamp {
        next_act: r.u64()?,
        next_key: r.u64()?,
        created: r.str()?,
        live: r.u64()?,
    };
    let _reserved = r.u32()?;
    let index = ClaimIndex::read(r)?;
    // The checksum vouches for the bytes; the count for the writer's consistency.
    (r.is_empty() && stamp.live == index.len() as u64).then_some(Snapshot { stamp, index })
}

/// Read the snapshot in `dir`; `Err` says why there is none to use. Streamed: the file
/// is parsed as it is read, never held whole in memory beside the index it decodes to.
pub(super) fn load(dir: &Path) -> Result<Snapshot, String> {
    let path = dir.join(SNAPSHOT_FILE);
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("there is no claim-index snapshot".into())
        }
        Err(e) => return Err(format!("the claim-index snapshot is unreadable: {e}")),
    };
    let len = file
        .metadata()
        .map_err(|e| format!("the claim-index snapshot is unreadable: {e}"))?
        .len();
    let len =
        usize::try_from(len).map_err(|_| "the claim-index snapshot is too large".to_string())?;
    decode(std::io::BufReader::with_capacity(1 << 16, file), len)
}

/// Write the snapshot of `base` at `stamp` atomically: a temporary file renamed over
/// the old one. Not fsynced: a torn or lost file fails its checksum or its stamp and is
/// rebuilt.
pub(super) fn save(dir: &Path, stamp: &Stamp, base: &Segment) -> Result<(), StoreError> {
    let path = dir.join(SNAPSHOT_FILE);
    let tmp = dir.join(format!(".{SNAPSHOT_FILE}.tmp"));
    let written = std::fs::File::create(&tmp).and_then(|f| write_to(f, stamp, base));
    if let Err(e) = written {
        // Leave no half-written file taking the room a full disk lacks.
        let _ = std::fs::remove_file(&tmp);
        return Err(super::fault::io_fault(&tmp, &e));
    }
    std::fs::rename(&tmp, &path).map_err(|e| super::fault::io_fault(&path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::ClaimMeta;

    /// A claim index of `n` claims whose texts span many blocks of every array.
    fn index(n: usize) -> ClaimIndex {
        let mut ix = ClaimIndex::new();
        for i in 0..n {
            let label = format!("claim {i}");
            let meta = ClaimMeta {
                label: label.clone(),
                source_agent: "test:agent".into(),
                strength: crate::claim::Strength::Observed,
                trust: 0.5,
                created: i as i64,
                evidence: vec![format!("src/f{i}.rs")],
            };
            let text = format!("word{} word{} shared text {i}", i % 97, i % 13);
            ix.upsert(&format!("claim-{i}"), &label, &text, meta, Some(i as u64));
        }
        ix
    }

    #[test]
    fn a_snapshot_streamed_to_its_file_is_the_encoding_and_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut ix = index(5_000);
        let stamp = Stamp {
            next_act: 7_001,
            next_key: 5_000,
            created: "2026-11-27T00:00:00Z".into(),
            live: ix.len() as u64,
        };
        let base = ix.frozen();
        save(dir.path(), &stamp, &base).unwrap();
        let file = std::fs::read(dir.path().join(SNAPSHOT_FILE)).unwrap();
        assert_eq!(file, encode(&stamp, &base), "streamed bytes differ");
        let back = load(dir.path()).unwrap();
        assert_eq!(back.stamp, stamp);
        assert_eq!(back.index.len(), 5_000);
        assert_eq!(back.index.key_of("claim-4321"), Some(4321));
        assert!(!dir.path().join(format!(".{SNAPSHOT_FILE}.tmp")).exists());
    }
}
