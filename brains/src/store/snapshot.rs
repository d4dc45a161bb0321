//! The claim-index snapshot, `claims.snapshot`: the lexical index and the per-claim
//! metadata scope and filters read, saved so that opening a dormant store reads one file
//! instead of decoding and tokenizing every claim. Derived state, like the vector index:
//! redb is the truth. A snapshot is trusted only when it reads whole (magic, checksum,
//! every length) and was written by this store (its `created` stamp) at the act
//! sequence the store is at; one from an earlier sequence (a crash since the last save)
//! is caught up by replaying the acts written since, and anything else is rebuilt.

use std::collections::HashMap;
use std::path::Path;

use crate::claim::Strength;
use crate::error::StoreError;
use crate::lexical::bytes::{put_str, put_u32, put_u64, Reader};
use crate::lexical::LexicalIndex;
use crate::recall::ClaimMeta;

pub(crate) const SNAPSHOT_FILE: &str = "claims.snapshot";
const MAGIC: &[u8; 8] = b"MDCLSNP2";

/// Which state of which store a snapshot holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stamp {
    /// The store's `next_act` when the snapshot was taken.
    pub(super) next_act: u64,
    /// The store's creation stamp (meta `created`): a snapshot of another store never
    /// passes for this one's.
    pub(super) created: String,
    /// Live claims at that point.
    pub(super) live: u64,
}

/// The lexical index and the claim metadata of one store at one act sequence.
pub(super) struct Snapshot {
    pub(super) stamp: Stamp,
    pub(super) lexical: LexicalIndex,
    pub(super) meta: HashMap<String, ClaimMeta>,
}

pub(super) fn encode(
    stamp: &Stamp,
    lexical: &LexicalIndex,
    meta: &HashMap<String, ClaimMeta>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + lexical.len() * 256);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[0; 4]);
    put_u64(&mut out, stamp.next_act);
    put_str(&mut out, &stamp.created);
    put_u64(&mut out, stamp.live);
    // The lexical section's length first: the two sections decode on two threads.
    let at = out.len();
    put_u64(&mut out, 0);
    lexical.write_snapshot(&mut out);
    let len = (out.len() - at - 8) as u64;
    out[at..at + 8].copy_from_slice(&len.to_le_bytes());
    put_u32(&mut out, meta.len() as u32);
    for (slug, m) in meta {
        put_str(&mut out, slug);
        put_str(&mut out, &m.label);
        put_str(&mut out, &m.source_agent);
        put_str(&mut out, m.strength.as_str());
        put_u64(&mut out, m.trust.to_bits());
        put_u64(&mut out, m.created as u64);
        put_u32(&mut out, m.evidence.len() as u32);
        for e in &m.evidence {
            put_str(&mut out, e);
        }
    }
    let crc = crc32fast::hash(&out[12..]);
    out[8..12].copy_from_slice(&crc.to_le_bytes());
    out
}

/// Decode a snapshot; `Err` says why it cannot be used.
pub(super) fn decode(b: &[u8]) -> Result<Snapshot, String> {
    if b.len() < 12 || &b[..8] != MAGIC {
        return Err("the claim-index snapshot is not one (bad magic)".into());
    }
    let crc = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    if crc32fast::hash(&b[12..]) != crc {
        return Err("the claim-index snapshot fails its checksum".into());
    }
    read(&mut Reader::new(&b[12..])).ok_or_else(|| "the claim-index snapshot does not parse".into())
}

fn read(r: &mut Reader<'_>) -> Option<Snapshot> {
    let stamp = Stamp {
        next_act: r.u64()?,
        created: r.str()?.to_string(),
        live: r.u64()?,
    };
    let lexical_len = usize::try_from(r.u64()?).ok()?;
    let mut lex = r.split(lexical_len)?;
    let (lexical, meta) = std::thread::scope(|s| {
        let lexical =
            s.spawn(move || LexicalIndex::read_snapshot(&mut lex).filter(|_| lex.is_empty()));
        let meta = read_meta(r).filter(|_| r.is_empty());
        (lexical.join().ok().flatten(), meta)
    });
    let (lexical, meta) = (lexical?, meta?);
    // The checksum vouches for the bytes; the counts for the writer's consistency.
    let whole = meta.len() == lexical.len() && stamp.live == lexical.len() as u64;
    whole.then_some(Snapshot {
        stamp,
        lexical,
        meta,
    })
}

fn read_meta(r: &mut Reader<'_>) -> Option<HashMap<String, ClaimMeta>> {
    let n = r.u32()? as usize;
    let mut meta = HashMap::with_capacity(n);
    for _ in 0..n {
        let slug = r.str()?.to_string();
        let label = r.str()?.to_string();
        let source_agent = r.str()?.to_string();
        let strength = Strength::parse(r.str()?).ok()?;
        let trust = f64::from_bits(r.u64()?);
        let created = r.u64()? as i64;
        let n_ev = r.u32()? as usize;
        let evidence = (0..n_ev)
            .map(|_| r.str().map(str::to_string))
            .collect::<Option<Vec<_>>>()?;
        meta.insert(
            slug,
            ClaimMeta {
                label,
                source_agent,
                strength,
                trust,
                created,
                evidence,
            },
        );
    }
    Some(meta)
}

/// Read the snapshot in `dir`; `Err` says why there is none to use.
pub(super) fn load(dir: &Path) -> Result<Snapshot, String> {
    let path = dir.join(SNAPSHOT_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("there is no claim-index snapshot".into())
        }
        Err(e) => return Err(format!("the claim-index snapshot is unreadable: {e}")),
    };
    decode(&bytes)
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
