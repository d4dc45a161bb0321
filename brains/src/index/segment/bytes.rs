//! The segment's byte encoding: each array as a length and its little-endian elements,
//! written to a buffer or a summing file, and read back checked.

use super::{strength_of, Segment, Strs};

/// Where an encoding goes: a buffer, or a file summed as it is written (the
/// snapshot's), so a large segment is never held whole a second time.
pub(crate) trait Put {
    fn put(&mut self, b: &[u8]);
}

impl Put for Vec<u8> {
    fn put(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }
}

pub(crate) fn put_u32(out: &mut impl Put, v: u32) {
    out.put(&v.to_le_bytes());
}

pub(crate) fn put_u64(out: &mut impl Put, v: u64) {
    out.put(&v.to_le_bytes());
}

fn put_len(out: &mut impl Put, n: usize) {
    put_u64(out, n as u64);
}

/// An array's length, then its elements' `N` little-endian bytes each, gathered a
/// block at a time: a streamed output takes a few large writes, not one per element.
fn put_le<const N: usize>(out: &mut impl Put, items: impl ExactSizeIterator<Item = [u8; N]>) {
    put_len(out, items.len());
    let mut block = [0u8; 4096];
    let mut at = 0;
    for b in items {
        if at + N > block.len() {
            out.put(&block[..at]);
            at = 0;
        }
        block[at..at + N].copy_from_slice(&b);
        at += N;
    }
    out.put(&block[..at]);
}

pub(super) fn put_u32s(out: &mut impl Put, v: &[u32]) {
    put_le(out, v.iter().map(|x| x.to_le_bytes()));
}

fn put_u16s(out: &mut impl Put, v: &[u16]) {
    put_le(out, v.iter().map(|x| x.to_le_bytes()));
}

fn put_u64s(out: &mut impl Put, v: impl ExactSizeIterator<Item = u64>) {
    put_le(out, v.map(u64::to_le_bytes));
}

fn put_bytes(out: &mut impl Put, b: &[u8]) {
    put_len(out, b.len());
    out.put(b);
}

fn put_strs(out: &mut impl Put, s: &Strs) {
    put_u32s(out, &s.off);
    put_bytes(out, s.bytes.as_bytes());
}

pub(super) fn write(seg: &Segment, out: &mut impl Put) {
    put_strs(out, &seg.slugs);
    put_strs(out, &seg.labels);
    put_u32s(out, &seg.doc_len);
    put_bytes(out, &seg.strength);
    put_u64s(out, seg.trust.iter().map(|t| t.to_bits()));
    put_u64s(out, seg.created.iter().map(|c| *c as u64));
    put_u32s(out, &seg.agent);
    put_strs(out, &seg.agents);
    put_u32s(out, &seg.ev_off);
    put_strs(out, &seg.evidence);
    put_u64s(out, seg.key.iter().copied());
    put_u32s(out, &seg.fwd_off);
    put_u32s(out, &seg.fwd_term);
    put_u16s(out, &seg.fwd_tf);
    put_strs(out, &seg.terms);
    put_u32s(out, &seg.post_off);
    put_u32s(out, &seg.post_doc);
    put_u16s(out, &seg.post_tf);
    put_u64(out, seg.total_len);
}

/// Bytes a large array is read and converted by: the copy from the file lands in a
/// small, cache-hot buffer, never in a second whole-file buffer.
const CHUNK: usize = 1 << 20;

/// Reads what `write` wrote, from a byte slice or streamed from a file; `None` once
/// the bytes run out. Everything read is also summed into a CRC-32, so a file's
/// checksum is checked in the same pass as it is parsed ([`Reader::crc`]).
pub(crate) struct Reader<'a> {
    src: Box<dyn std::io::Read + 'a>,
    /// Bytes the source still holds.
    left: usize,
    crc: crc32fast::Hasher,
    buf: Vec<u8>,
    /// The source failed (not merely ran out).
    failed: Option<std::io::Error>,
}

impl<'a> Reader<'a> {
    #[cfg(test)]
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Self::streaming(b, b.len())
    }

    /// A reader of the `len` bytes `src` holds.
    pub(crate) fn streaming(src: impl std::io::Read + 'a, len: usize) -> Self {
        Self {
            src: Box::new(src),
            left: len,
            crc: crc32fast::Hasher::new(),
            buf: Vec::new(),
            failed: None,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.left == 0
    }

    /// The CRC-32 of every byte read so far, after reading what is left.
    pub(crate) fn crc(mut self) -> Result<u32, std::io::Error> {
        while self.left > 0 {
            let n = self.left.min(CHUNK);
            if self.take(n).is_none() {
                break;
            }
        }
        match self.failed {
            Some(e) => Err(e),
            None => Ok(self.crc.finalize()),
        }
    }

    /// The next `n` bytes (`n` at most [`CHUNK`] for arrays, which are read in parts).
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.left < n || self.failed.is_some() {
            return None;
        }
        self.buf.resize(n, 0);
        if let Err(e) = self.src.read_exact(&mut self.buf[..n]) {
            self.failed = Some(e);
            return None;
        }
        self.left -= n;
        self.crc.update(&self.buf[..n]);
        Some(&self.buf[..n])
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn len(&mut self, width: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        // Never allocate for more elements than the bytes left can hold.
        (n.checked_mul(width)? <= self.left).then_some(n)
    }

    /// `n` little-endian values of `W` bytes each, read a chunk at a time.
    fn array<T, const W: usize>(&mut self, conv: fn([u8; W]) -> T) -> Option<Vec<T>> {
        let n = self.len(W)?;
        let mut out = Vec::with_capacity(n);
        let mut left = n;
        while left > 0 {
            let m = left.min(CHUNK / W);
            let raw = self.take(m * W)?;
            out.extend(
                raw.chunks_exact(W)
                    .map(|c| conv(c.try_into().unwrap_or([0; W]))),
            );
            left -= m;
        }
        Some(out)
    }

    pub(crate) fn u32s(&mut self) -> Option<Vec<u32>> {
        self.array(u32::from_le_bytes)
    }

    fn u16s(&mut self) -> Option<Vec<u16>> {
        self.array(u16::from_le_bytes)
    }

    fn u64s(&mut self) -> Option<Vec<u64>> {
        self.array(u64::from_le_bytes)
    }

    fn bytes(&mut self) -> Option<Vec<u8>> {
        self.array(|[b]: [u8; 1]| b)
    }

    pub(crate) fn str(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?).ok()
    }

    fn strs(&mut self) -> Option<Strs> {
        let off = self.u32s()?;
        let bytes = self.str()?;
        let s = Strs { off, bytes };
        s.valid().then_some(s)
    }

    pub(super) fn segment(&mut self) -> Option<Segment> {
        Some(Segment {
            slugs: self.strs()?,
            labels: self.strs()?,
            doc_len: self.u32s()?,
            strength: self.bytes()?,
            trust: self.u64s()?.into_iter().map(f64::from_bits).collect(),
            created: self.u64s()?.into_iter().map(|c| c as i64).collect(),
            agent: self.u32s()?,
            agents: self.strs()?,
            ev_off: self.u32s()?,
            evidence: self.strs()?,
            key: self.u64s()?,
            by_key: Vec::new(),
            fwd_off: self.u32s()?,
            fwd_term: self.u32s()?,
            fwd_tf: self.u16s()?,
            terms: self.strs()?,
            post_off: self.u32s()?,
            post_doc: self.u32s()?,
            post_tf: self.u16s()?,
            bound_tf: Vec::new(),
            bound_len: Vec::new(),
            total_len: self.u64()?,
        })
    }
}

impl Segment {
    /// Append the segment's bytes to `out`.
    pub(crate) fn write(&self, out: &mut impl Put) {
        write(self, out);
    }

    /// Read what [`Segment::write`] wrote; `None` unless it reads whole and consistent:
    /// every array of the right length, every offset in range and in order, every
    /// document and term id in range, slugs and terms strictly ascending, postings by
    /// document. A segment that passes can be read without a lookup failing.
    pub(crate) fn read(r: &mut Reader<'_>) -> Option<Segment> {
        let mut seg = r.segment()?;
        let n = seg.slugs.len();
        let t = seg.terms.len();
        let sized = seg.labels.len() == n
            && seg.doc_len.len() == n
            && seg.strength.len() == n
            && seg.trust.len() == n
            && seg.created.len() == n
            && seg.agent.len() == n
            && seg.ev_off.len() == n + 1
            && seg.key.len() == n
            && seg.fwd_off.len() == n + 1
            && seg.fwd_tf.len() == seg.fwd_term.len()
            && seg.post_off.len() == t + 1
            && seg.post_doc.len() == seg.post_tf.len()
            && seg.post_doc.len() == seg.fwd_term.len();
        if !sized {
            return None;
        }
        let offsets = |off: &[u32], end: usize| {
            off.first() == Some(&0)
                && off.last().map(|l| *l as usize) == Some(end)
                && off.windows(2).all(|w| w[0] <= w[1])
        };
        let ascending = |s: &Strs| (1..s.len()).all(|i| s.get(i - 1) < s.get(i));
        if !(offsets(&seg.ev_off, seg.evidence.len())
            && offsets(&seg.fwd_off, seg.fwd_term.len())
            && offsets(&seg.post_off, seg.post_doc.len()))
        {
            return None;
        }
        // Two halves of the checks on two cores: the postings (with each term's bounds,
        // read in the same pass) beside everything else.
        let seg_ref = &seg;
        let (ok, bounds) = std::thread::scope(|sc| {
            let postings = sc.spawn(move || {
                let mut bound_tf = vec![0u16; t];
                let mut bound_len = vec![u32::MAX; t];
                for x in 0..t {
                    let (docs, tfs) = seg_ref.postings(x as u32);
                    if !(docs.iter().all(|d| (*d as usize) < n)
                        && docs.windows(2).all(|w| w[0] < w[1]))
                    {
                        return None;
                    }
                    for (d, f) in docs.iter().zip(tfs) {
                        bound_tf[x] = bound_tf[x].max(*f);
                        bound_len[x] = bound_len[x].min(seg_ref.doc_len[*d as usize]);
                    }
                }
                Some((bound_tf, bound_len))
            });
            let ok = seg_ref
                .agent
                .iter()
                .all(|a| (*a as usize) < seg_ref.agents.len())
                && seg_ref.strength.iter().all(|c| strength_of(*c).is_some())
                && ascending(&seg_ref.slugs)
                && ascending(&seg_ref.terms)
                && (0..n).all(|d| {
                    let r = seg_ref.fwd_range(d as u32);
                    let ts = &seg_ref.fwd_term[r];
                    ts.iter().all(|x| (*x as usize) < t) && ts.windows(2).all(|w| w[0] < w[1])
                })
                && seg_ref.total_len == seg_ref.doc_len.iter().map(|l| u64::from(*l)).sum::<u64>();
            (ok, postings.join().ok().flatten())
        });
        let (Some((bound_tf, bound_len)), true) = (bounds, ok) else {
            return None;
        };
        seg.bound_tf = bound_tf;
        seg.bound_len = bound_len;
        seg.index_keys();
        Some(seg)
    }
}
