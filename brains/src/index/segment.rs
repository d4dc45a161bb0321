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
mod bytes;

pub(crate) use bytes::{put_u32, put_u64, Put, Reader};
