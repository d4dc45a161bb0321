//! The claim-index snapshot, `claims.snapshot`: the claim index (terms, the metadata
//! scope and filters read, vector keys; `crate::index`) as one flat segment, saved so
//! that opening a dormant store reads one file instead of decoding and tokenizing every
//! claim. Derived state, like the vector index:
//! redb is the truth. A snapshot is trusted only when it reads whole (magic, checksum,
//! every length) and was written by this store (its `created` stamp) at the act
//! sequence the store is at; one from an earlier sequence (a crash since the last save)
//! is caught up by replaying the acts written since, and anything else is rebuilt.

use std::path::Path;

use crate::error::StoreError;
use crate::index::{put_u32, put_u64, ClaimIndex, Reader, Segment};

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

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// The snapshot's bytes; the index is compacted into one segment on the way.
pub(super) fn encode(stamp: &Stamp, index: &mut ClaimIndex) -> Vec<u8> {
    encode_frozen(stamp, &index.frozen())
}

/// The snapshot's bytes, of the segment [`ClaimIndex::frozen`] gave at `stamp`.
pub(super) fn encode_frozen(stamp: &Stamp, base: &Segment) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + stamp.live as usize * 160);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[0; 4]);
    put_u64(&mut out, stamp.next_act);
    put_u64(&mut out, stamp.next_key);
    put_str(&mut out, &stamp.created);
    put_u64(&mut out, stamp.live);
    put_u32(&mut out, 0);
    base.write(&mut out);
    let crc = crc32fast::hash(&out[12..]);
    out[8..12].copy_from_slice(&crc.to_le_bytes());
    out
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

/// Write the snapshot atomically: a temporary file renamed over the old one. Not
/// fsynced: a torn or lost file fails its checksum or its stamp and is rebuilt.
pub(super) fn save(dir: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let path = dir.join(SNAPSHOT_FILE);
    let tmp = dir.join(format!(".{SNAPSHOT_FILE}.tmp"));
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |e: std::io::Error| super::fault::io_fault(&p, &e)
    };
    if let Err(e) = std::fs::write(&tmp, bytes) {
        // Leave no half-written file taking the room a full disk lacks.
        let _ = std::fs::remove_file(&tmp);
        return Err(io(&tmp)(e));
    }
    std::fs::rename(&tmp, &path).map_err(io(&path))
}
