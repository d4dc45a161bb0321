//! The base segment of the claim index: every claim it was built from in flat arrays,
//! sorted by slug, with its terms' postings sorted by document. Built once (on a
//! checkpoint or a rebuild), never changed afterwards but for a claim's trust grade
//! and vector key (fixed-size fields written in place); what changes later goes to the
//! delta (`delta.rs`) and, for a claim that left, to the dead set (`mod.rs`).
//!
//! Flat arrays make the snapshot cheap to open: loading it is reading the file and
//! copying each array out of it, with no per-claim allocation, hashing or tokenizing;
//! every offset is checked once, so a lookup can never run out of bounds.

use std::ops::Range;

use crate::claim::Strength;
use crate::recall::ClaimMeta;

/// Strings laid end to end: string `i` is `bytes[off[i]..off[i + 1]]`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Strs {
    off: Vec<u32>,
    bytes: String,
}

impl Strs {
    fn with_capacity(n: usize) -> Strs {
        let mut off = Vec::with_capacity(n + 1);
        off.push(0);
        Strs {
            off,
            bytes: String::new(),
        }
    }

    fn push(&mut self, s: &str) {
        self.bytes.push_str(s);
        self.off.push(self.bytes.len() as u32);
    }

    pub(crate) fn len(&self) -> usize {
        self.off.len().saturating_sub(1)
    }

    pub(crate) fn get(&self, i: usize) -> &str {
        let (Some(a), Some(b)) = (self.off.get(i), self.off.get(i + 1)) else {
            return "";
        };
        self.bytes.get(*a as usize..*b as usize).unwrap_or("")
    }

    /// Offsets start at 0, never decrease, end at the length, and fall on characters.
    fn valid(&self) -> bool {
        self.off.first() == Some(&0)
            && self.off.last().map(|l| *l as usize) == Some(self.bytes.len())
            && self.off.windows(2).all(|w| w[0] <= w[1])
            && self
                .off
                .iter()
                .all(|o| self.bytes.is_char_boundary(*o as usize))
    }

    /// Binary search in strings sorted ascending.
    fn find(&self, s: &str) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid).cmp(s) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }
}

/// One claim handed to the segment builder: its slug, metadata, vector key (0 = none)
/// and terms (id in the builder's dictionary, frequency with the label's weight), with
/// its length.
#[derive(Debug, Clone)]
pub(crate) struct DocIn<'a> {
    pub slug: &'a str,
    pub meta: MetaIn<'a>,
    pub key: u64,
    pub len: u32,
    pub terms: Vec<(u32, u32)>,
}

/// The metadata of a claim handed to the builder, borrowed.
#[derive(Debug, Clone)]
pub(crate) struct MetaIn<'a> {
    pub label: &'a str,
    pub source_agent: &'a str,
    pub strength: Strength,
    pub trust: f64,
    pub created: i64,
    pub evidence: Vec<&'a str>,
}

impl<'a> MetaIn<'a> {
    pub(crate) fn of(m: &'a ClaimMeta) -> MetaIn<'a> {
        MetaIn {
            label: &m.label,
            source_agent: &m.source_agent,
            strength: m.strength,
            trust: m.trust,
            created: m.created,
            evidence: m.evidence.iter().map(String::as_str).collect(),
        }
    }
}

fn strength_code(s: Strength) -> u8 {
    match s {
        Strength::Hint => 0,
        Strength::Observed => 1,
        Strength::Verified => 2,
    }
}

fn strength_of(c: u8) -> Option<Strength> {
    match c {
        0 => Some(Strength::Hint),
        1 => Some(Strength::Observed),
        2 => Some(Strength::Verified),
        _ => None,
    }
}

/// The immutable base of the claim index.
#[derive(Debug, Default, Clone)]
pub(crate) struct Segment {
    // Documents, by id; ids follow slug order.
    slugs: Strs,
    labels: Strs,
    doc_len: Vec<u32>,
    strength: Vec<u8>,
    trust: Vec<f64>,
    created: Vec<i64>,
    /// Index into `agents`.
    agent: Vec<u32>,
    agents: Strs,
    /// Document `d`'s evidence is `evidence[ev_off[d]..ev_off[d + 1]]`.
    ev_off: Vec<u32>,
    evidence: Strs,
    /// 0 = the claim has no vector.
    key: Vec<u64>,
    /// (key, document) of the documents with a key at build time, by key: a vector's
    /// document by binary search. Keys set later are the caller's to track.
    by_key: Vec<(u64, u32)>,
    /// Document `d`'s terms are `fwd_term[fwd_off[d]..fwd_off[d + 1]]`, by term id, with
    /// their frequencies in `fwd_tf`.
    fwd_off: Vec<u32>,
    fwd_term: Vec<u32>,
    fwd_tf: Vec<u16>,
    // Terms, by id; ids follow term order.
    terms: Strs,
    /// Term `t`'s postings are `post_doc[post_off[t]..post_off[t + 1]]`, by document.
    post_off: Vec<u32>,
    post_doc: Vec<u32>,
    post_tf: Vec<u16>,
    /// Per term: the largest frequency and the shortest document among its postings.
    bound_tf: Vec<u16>,
    bound_len: Vec<u32>,
    total_len: u64,
}

fn tf16(f: u32) -> u16 {
    u16::try_from(f).unwrap_or(u16::MAX)
}

impl Segment {
    /// Build a segment from claims sorted by slug (each slug once) whose terms are ids
    /// into `dict`, the terms sorted and each once. No string is compared here: the
    /// callers bring both in order (a rebuild sorts its vocabulary once; a compaction
    /// merges the base's with the delta's).
    pub(crate) fn build(dict: &[&str], docs: Vec<DocIn<'_>>) -> Segment {
        debug_assert!(docs.windows(2).all(|w| w[0].slug < w[1].slug));
        let n = docs.len();
        let mut terms = Strs::with_capacity(dict.len());
        for t in dict {
            terms.push(t);
        }
        let mut seg = Segment {
            slugs: Strs::with_capacity(n),
            labels: Strs::with_capacity(n),
            agents: Strs::with_capacity(4),
            evidence: Strs::with_capacity(n),
            terms,
            ..Segment::default()
        };
        seg.ev_off.push(0);
        seg.fwd_off.push(0);
        let mut agent_ids: std::collections::HashMap<&str, u32> = Default::default();
        let vocab = dict;
        let mut df = vec![0u32; vocab.len()];
        for d in &docs {
            seg.slugs.push(d.slug);
            seg.labels.push(d.meta.label);
            seg.doc_len.push(d.len);
            seg.strength.push(strength_code(d.meta.strength));
            seg.trust.push(d.meta.trust);
            seg.created.push(d.meta.created);
            let next = agent_ids.len() as u32;
            let a = *agent_ids.entry(d.meta.source_agent).or_insert_with(|| {
                seg.agents.push(d.meta.source_agent);
                next
            });
            seg.agent.push(a);
            for e in &d.meta.evidence {
                seg.evidence.push(e);
            }
            seg.ev_off.push(seg.evidence.len() as u32);
            seg.key.push(d.key);
            let mut ids: Vec<(u32, u16)> = d.terms.iter().map(|(t, f)| (*t, tf16(*f))).collect();
            ids.sort_unstable();
            ids.dedup_by_key(|p| p.0);
            for (t, f) in ids {
                seg.fwd_term.push(t);
                seg.fwd_tf.push(f);
                df[t as usize] += 1;
            }
            seg.fwd_off.push(seg.fwd_term.len() as u32);
            seg.total_len += u64::from(d.len);
        }
        // Postings by counting: documents are visited in id order, so each list is sorted.
        seg.post_off = Vec::with_capacity(vocab.len() + 1);
        seg.post_off.push(0);
        for f in &df {
            let last = *seg.post_off.last().unwrap_or(&0);
            seg.post_off.push(last + f);
        }
        let total = seg.fwd_term.len();
        seg.post_doc = vec![0; total];
        seg.post_tf = vec![0; total];
        seg.bound_tf = vec![0; vocab.len()];
        seg.bound_len = vec![u32::MAX; vocab.len()];
        let mut fill: Vec<u32> = seg.post_off[..vocab.len()].to_vec();
        for d in 0..n {
            let len = seg.doc_len[d];
            for i in seg.fwd_off[d] as usize..seg.fwd_off[d + 1] as usize {
                let t = seg.fwd_term[i] as usize;
                let at = fill[t] as usize;
                seg.post_doc[at] = d as u32;
                seg.post_tf[at] = seg.fwd_tf[i];
                fill[t] += 1;
                seg.bound_tf[t] = seg.bound_tf[t].max(seg.fwd_tf[i]);
                seg.bound_len[t] = seg.bound_len[t].min(len);
            }
        }
        seg.index_keys();
        seg
    }

    fn index_keys(&mut self) {
        let mut by_key: Vec<(u64, u32)> = (0..self.key.len() as u32)
            .map(|d| (self.key[d as usize], d))
            .filter(|(k, _)| *k != 0)
            .collect();
        by_key.sort_unstable();
        self.by_key = by_key;
    }

    /// Give every document the key `key_of` names (0 = none), and index them afresh.
    pub(crate) fn assign_keys(&mut self, key_of: impl Fn(&str) -> u64) {
        for d in 0..self.len() {
            self.key[d as usize] = key_of(self.slugs.get(d as usize));
        }
        self.index_keys();
    }

    pub(crate) fn len(&self) -> u32 {
        self.doc_len.len() as u32
    }

    pub(crate) fn total_len(&self) -> u64 {
        self.total_len
    }

    pub(crate) fn slug(&self, d: u32) -> &str {
        self.slugs.get(d as usize)
    }

    pub(crate) fn doc_of(&self, slug: &str) -> Option<u32> {
        self.slugs.find(slug).map(|d| d as u32)
    }

    pub(crate) fn doc_len(&self, d: u32) -> u32 {
        self.doc_len.get(d as usize).copied().unwrap_or(1)
    }

    /// Every document's length, by id.
    pub(crate) fn doc_lens(&self) -> &[u32] {
        &self.doc_len
    }

    pub(crate) fn label(&self, d: u32) -> &str {
        self.labels.get(d as usize)
    }

    pub(crate) fn source_agent(&self, d: u32) -> &str {
        self.agents
            .get(self.agent.get(d as usize).copied().unwrap_or(0) as usize)
    }

    pub(crate) fn strength(&self, d: u32) -> Strength {
        self.strength
            .get(d as usize)
            .and_then(|c| strength_of(*c))
            .unwrap_or(Strength::Hint)
    }

    pub(crate) fn trust(&self, d: u32) -> f64 {
        self.trust.get(d as usize).copied().unwrap_or(0.5)
    }

    pub(crate) fn set_trust(&mut self, d: u32, trust: f64) {
        if let Some(t) = self.trust.get_mut(d as usize) {
            *t = trust;
        }
    }

    pub(crate) fn created(&self, d: u32) -> i64 {
        self.created.get(d as usize).copied().unwrap_or(0)
    }

    pub(crate) fn evidence(&self, d: u32) -> impl Iterator<Item = &str> {
        let r = match (self.ev_off.get(d as usize), self.ev_off.get(d as usize + 1)) {
            (Some(a), Some(b)) => *a as usize..*b as usize,
            _ => 0..0,
        };
        r.map(|i| self.evidence.get(i))
    }

    pub(crate) fn key(&self, d: u32) -> u64 {
        self.key.get(d as usize).copied().unwrap_or(0)
    }

    /// Set a document's vector key in place. The key index keeps its build-time order:
    /// the caller records a key set later in its own map.
    pub(crate) fn set_key(&mut self, d: u32, key: u64) {
        if let Some(k) = self.key.get_mut(d as usize) {
            *k = key;
        }
    }

    /// The document whose key was `key` when the keys were last indexed (it may have
    /// been given another since: the caller checks [`Segment::key`]).
    pub(crate) fn doc_of_key(&self, key: u64) -> Option<u32> {
        let i = self.by_key.binary_search_by_key(&key, |p| p.0).ok()?;
        self.by_key.get(i).map(|p| p.1)
    }

    pub(crate) fn term_count(&self) -> u32 {
        self.terms.len() as u32
    }

    pub(crate) fn term_id(&self, t: &str) -> Option<u32> {
        self.terms.find(t).map(|i| i as u32)
    }

    pub(crate) fn term(&self, t: u32) -> &str {
        self.terms.get(t as usize)
    }

    fn post_range(&self, t: u32) -> Range<usize> {
        match (
            self.post_off.get(t as usize),
            self.post_off.get(t as usize + 1),
        ) {
            (Some(a), Some(b)) => *a as usize..*b as usize,
            _ => 0..0,
        }
    }

    /// Term `t`'s postings: documents ascending, with their frequencies.
    pub(crate) fn postings(&self, t: u32) -> (&[u32], &[u16]) {
        let r = self.post_range(t);
        (&self.post_doc[r.clone()], &self.post_tf[r])
    }

    pub(crate) fn df(&self, t: u32) -> u32 {
        self.post_range(t).len() as u32
    }

    /// (largest frequency, shortest document) over the term's postings.
    pub(crate) fn bound(&self, t: u32) -> (u32, u32) {
        (
            u32::from(self.bound_tf.get(t as usize).copied().unwrap_or(0)),
            self.bound_len.get(t as usize).copied().unwrap_or(u32::MAX),
        )
    }

    fn fwd_range(&self, d: u32) -> Range<usize> {
        match (
            self.fwd_off.get(d as usize),
            self.fwd_off.get(d as usize + 1),
        ) {
            (Some(a), Some(b)) => *a as usize..*b as usize,
            _ => 0..0,
        }
    }

    /// Document `d`'s terms by id, with their frequencies.
    pub(crate) fn doc_terms(&self, d: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.fwd_range(d)
            .map(|i| (self.fwd_term[i], u32::from(self.fwd_tf[i])))
    }

    /// The frequency of term `t` in document `d` (0 when it does not hold it).
    pub(crate) fn tf(&self, d: u32, t: u32) -> u32 {
        let r = self.fwd_range(d);
        let terms = &self.fwd_term[r.clone()];
        match terms.binary_search(&t) {
            Ok(i) => u32::from(self.fwd_tf[r.start + i]),
            Err(_) => 0,
        }
    }
}

/// The byte encoding: each array as a length and its little-endian elements.
mod bytes {
    use super::{Segment, Strs};

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
}

pub(crate) use bytes::{put_u32, put_u64, Put, Reader};

impl Segment {
    /// Append the segment's bytes to `out`.
    pub(crate) fn write(&self, out: &mut impl Put) {
        bytes::write(self, out);
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
