//! The claim index: what a store keeps in memory about each live claim, to find it by
//! its words and to apply scope and filters without reading redb. Per claim: its slug,
//! its terms (BM25, `search.rs`), the metadata scope and filters read, and its vector
//! key. Derived state: redb is the truth, and the index is saved in the store's
//! claim-index snapshot and rebuilt from redb when that is missing or stale.
//!
//! Two levels, as full-text engines keep them: an immutable **base segment** in flat
//! arrays (`segment.rs`), which opens by reading one file, and a small mutable **delta**
//! (`delta.rs`) for what was written since, with the base's claims that left marked
//! dead. A checkpoint folds the delta into a new base ([`ClaimIndex::compact`]), spaced
//! by the store's size so its cost per write stays constant. Every statistic BM25 reads
//! (live claims, total length, each term's document frequency) is kept exact across
//! both levels, so a claim scores the same whichever level holds it.

mod delta;
mod fold;
mod meta;
mod search;
mod segment;

use std::collections::HashMap;
use std::sync::Arc;

use crate::claim::Claim;
use crate::lexical::{tokenize, LABEL_WEIGHT};
use delta::{Delta, DeltaDoc};
use meta::Evidence;
pub use meta::{ClaimMeta, MetaRef};
pub(crate) use segment::Segment;
use segment::{DocIn, MetaIn};

pub(crate) use segment::{put_u32, put_u64, Put, Reader};

pub use crate::lexical::DocId;

/// Held by more than max(`COMMON_MIN_DF`, `COMMON_SHARE` of the store's claims), a
/// query term is common: it adds to the candidates the other terms find instead of
/// nominating its own (see `search.rs`).
const COMMON_MIN_DF: usize = 500;
const COMMON_SHARE: f64 = 0.02;

/// The claim index of one store.
#[derive(Debug, Clone)]
pub struct ClaimIndex {
    /// Shared with a checkpoint folding and writing in the background
    /// ([`ClaimIndex::fold_input`]); the rare in-place change (a trust, a key) copies it
    /// first while it is.
    base: Arc<Segment>,
    /// Base documents that left (one bit each).
    dead: Vec<u64>,
    /// Base term id → dead base documents holding it.
    dead_df: foldhash::HashMap<u32, u32>,
    dead_docs: u32,
    dead_len: u64,
    /// Vector keys given to base documents after the base was built: key → document.
    moved_keys: HashMap<u64, u32>,
    delta: Delta,
    common_min_df: usize,
    /// While a fold runs in the background ([`ClaimIndex::fold_input`]): the claims
    /// changed since it started, whose state now is laid onto the folded base when it
    /// comes back ([`ClaimIndex::install_fold`]). `None`: no fold is out, or it was
    /// given up (every key reassigned, or folded here).
    touched: Option<foldhash::HashSet<String>>,
}

impl Default for ClaimIndex {
    fn default() -> Self {
        ClaimIndex {
            base: Arc::new(Segment::build(&[], Vec::new())),
            dead: Vec::new(),
            dead_df: Default::default(),
            dead_docs: 0,
            dead_len: 0,
            moved_keys: HashMap::new(),
            delta: Delta::default(),
            common_min_df: COMMON_MIN_DF,
            touched: None,
        }
    }
}

/// A claim made ready for [`ClaimIndex::build`]: tokenized, its metadata taken, so the
/// claim itself can be let go (a rebuild reads claims one at a time).
#[derive(Debug, Clone)]
pub struct Prepared {
    slug: String,
    meta: ClaimMeta,
    key: Option<u64>,
    terms: Vec<(String, u32)>,
    len: u32,
}

impl Prepared {
    pub fn of(c: &Claim, key: Option<u64>) -> Prepared {
        let Terms { terms, len } = Terms::of(&c.label, &c.text);
        Prepared {
            slug: c.slug.clone(),
            meta: ClaimMeta::of(c),
            key,
            terms,
            len,
        }
    }
}

/// A claim's terms with their frequencies (label terms weighted) and its length, worked
/// out before the index is touched: a batch's on every core ([`Terms::of_many`]).
pub struct Terms {
    terms: Vec<(String, u32)>,
    len: u32,
}

/// Below this many claims a batch is tokenized on the writer's thread alone.
const PARALLEL_TERMS_MIN: usize = 512;

impl Terms {
    pub fn of(label: &str, text: &str) -> Terms {
        let mut tf: foldhash::HashMap<String, u32> = Default::default();
        let mut len = 0u32;
        for (tokens, weight) in [(tokenize(label), LABEL_WEIGHT), (tokenize(text), 1)] {
            for t in tokens {
                *tf.entry(t).or_default() += weight;
                len += weight;
            }
        }
        let mut terms: Vec<(String, u32)> = tf.into_iter().collect();
        terms.sort_unstable();
        Terms { terms, len }
    }

    /// [`Terms::of`] for each claim, in order: a large batch is shared among the cores.
    pub fn of_many(claims: &[&Claim]) -> Vec<Terms> {
        crate::par::map(claims, PARALLEL_TERMS_MIN, |c| Terms::of(&c.label, &c.text))
            .expect("a tokenizing thread panicked")
    }
}

impl ClaimIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// An index whose common-term threshold is `min_df` documents instead of the
    /// default: tests reach the common-term path with small corpora.
    #[doc(hidden)]
    pub fn with_common_min_df(min_df: usize) -> Self {
        ClaimIndex {
            common_min_df: min_df,
            ..Self::default()
        }
    }

    /// Build an index at once (a rebuild from redb): straight into a base segment,
    /// with no delta.
    pub fn build(mut claims: Vec<Prepared>) -> ClaimIndex {
        claims.sort_unstable_by(|a, b| a.slug.cmp(&b.slug));
        claims.dedup_by(|b, a| a.slug == b.slug);
        let mut dict: Vec<&str> = claims
            .iter()
            .flat_map(|p| p.terms.iter().map(|(t, _)| t.as_str()))
            .collect::<std::collections::HashSet<&str>>()
            .into_iter()
            .collect();
        dict.sort_unstable();
        let id: HashMap<&str, u32> = dict
            .iter()
            .enumerate()
            .map(|(i, t)| (*t, i as u32))
            .collect();
        let docs = claims
            .iter()
            .map(|p| DocIn {
                slug: &p.slug,
                meta: MetaIn::of(&p.meta),
                key: p.key.unwrap_or(0),
                len: p.len,
                terms: p
                    .terms
                    .iter()
                    .map(|(t, f)| (id.get(t.as_str()).copied().unwrap_or(0), *f))
                    .collect(),
            })
            .collect();
        ClaimIndex {
            base: Arc::new(Segment::build(&dict, docs)),
            ..ClaimIndex::default()
        }
    }

    /// Give every live claim the vector key `keys` names, and none to the others: the
    /// keys redb holds, read whole (after a crash, or embedding on open).
    pub fn assign_keys(&mut self, keys: &HashMap<String, u64>) {
        let key_of = |s: &str| keys.get(s).copied().unwrap_or(0);
        self.touched = None;
        Arc::make_mut(&mut self.base).assign_keys(key_of);
        self.moved_keys.clear();
        self.delta.by_key.clear();
        for (i, doc) in self.delta.docs.iter_mut().enumerate() {
            doc.key = if doc.live { key_of(&doc.slug) } else { 0 };
            if doc.key != 0 {
                self.delta.by_key.insert(doc.key, i as u32);
            }
        }
    }

    fn base_len(&self) -> u32 {
        self.base.len()
    }

    /// Live claims.
    pub fn len(&self) -> usize {
        (self.base_len() - self.dead_docs + self.delta.live) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Claims written since the base was built (live or not): what the next compaction folds in.
    pub fn delta_len(&self) -> usize {
        self.delta.docs.len()
    }

    fn is_dead(&self, d: u32) -> bool {
        self.dead
            .get(d as usize / 64)
            .is_some_and(|w| w & (1 << (d % 64)) != 0)
    }

    fn is_live(&self, d: DocId) -> bool {
        if d < self.base_len() {
            !self.is_dead(d)
        } else {
            self.delta
                .doc(d - self.base_len())
                .is_some_and(|doc| doc.live)
        }
    }

    /// The live claim of a slug.
    pub fn doc(&self, slug: &str) -> Option<DocId> {
        if let Some(i) = self.delta.by_slug.get(slug) {
            return Some(self.base_len() + i);
        }
        self.base.doc_of(slug).filter(|d| !self.is_dead(*d))
    }

    pub fn contains(&self, slug: &str) -> bool {
        self.doc(slug).is_some()
    }

    pub fn slug(&self, d: DocId) -> &str {
        if d < self.base_len() {
            self.base.slug(d)
        } else {
            self.delta
                .doc(d - self.base_len())
                .map(|doc| doc.slug.as_str())
                .unwrap_or("")
        }
    }

    pub fn meta(&self, d: DocId) -> Option<MetaRef<'_>> {
        if d < self.base_len() {
            let b = &self.base;
            return Some(MetaRef {
                label: b.label(d),
                source_agent: b.source_agent(d),
                strength: b.strength(d),
                trust: b.trust(d),
                created: b.created(d),
                evidence: Evidence::Base(b, d),
            });
        }
        self.delta
            .doc(d - self.base_len())
            .map(|doc| MetaRef::from(&doc.meta))
    }

    /// The vector key of a live claim, if it has a vector.
    pub fn key(&self, d: DocId) -> Option<u64> {
        let k = if d < self.base_len() {
            self.base.key(d)
        } else {
            self.delta.doc(d - self.base_len()).map_or(0, |doc| doc.key)
        };
        (k != 0).then_some(k)
    }

    pub fn key_of(&self, slug: &str) -> Option<u64> {
        self.key(self.doc(slug)?)
    }

    /// The live claim a vector key belongs to.
    pub fn doc_of_key(&self, key: u64) -> Option<DocId> {
        if key == 0 {
            return None;
        }
        if let Some(i) = self.delta.by_key.get(&key) {
            return Some(self.base_len() + i);
        }
        let d = self
            .moved_keys
            .get(&key)
            .copied()
            .or_else(|| self.base.doc_of_key(key))?;
        (!self.is_dead(d) && self.base.key(d) == key).then_some(d)
    }

    /// Every live claim, base first.
    pub fn docs(&self) -> impl Iterator<Item = DocId> + '_ {
        let b = self.base_len();
        (0..b).filter(|d| !self.is_dead(*d)).chain(
            self.delta
                .docs
                .iter()
                .enumerate()
                .filter(|(_, doc)| doc.live)
                .map(move |(i, _)| b + i as u32),
        )
    }

    /// Add or replace a slug's claim. `key` is its vector key (`None`: no vector).
    pub fn upsert(
        &mut self,
        slug: &str,
        label: &str,
        text: &str,
        meta: ClaimMeta,
        key: Option<u64>,
    ) {
        self.upsert_terms(slug, Terms::of(label, text), meta, key);
    }

    /// [`ClaimIndex::upsert`] with the claim's terms worked out already.
    pub fn upsert_terms(&mut self, slug: &str, terms: Terms, meta: ClaimMeta, key: Option<u64>) {
        self.remove(slug);
        let Terms { terms, len } = terms;
        let base_terms = self.base.term_count();
        let base = &self.base;
        let mut ids: Vec<(u32, u32)> = terms
            .iter()
            .map(|(t, f)| (self.delta.term_id(base_terms, t, |t| base.term_id(t)), *f))
            .collect();
        ids.sort_unstable();
        let id = self.base_len() + self.delta.docs.len() as u32;
        self.delta.push(
            id,
            DeltaDoc {
                slug: slug.to_string(),
                meta,
                len,
                terms: ids,
                key: key.unwrap_or(0),
                live: true,
            },
        );
    }

    /// Add or replace a claim with its vector key.
    pub fn upsert_claim(&mut self, c: &Claim, key: Option<u64>) {
        self.upsert(&c.slug, &c.label, &c.text, ClaimMeta::of(c), key);
    }

    /// Take a slug's claim out.
    pub fn remove(&mut self, slug: &str) {
        self.touch(slug);
        let Some(d) = self.doc(slug) else {
            return;
        };
        let b = self.base_len();
        if d >= b {
            self.delta.kill(d - b, d);
            return;
        }
        let w = d as usize / 64;
        if self.dead.len() <= w {
            self.dead.resize(w + 1, 0);
        }
        self.dead[w] |= 1 << (d % 64);
        self.dead_docs += 1;
        self.dead_len += u64::from(self.base.doc_len(d));
        for (t, _) in self.base.doc_terms(d) {
            *self.dead_df.entry(t).or_default() += 1;
        }
        let k = self.base.key(d);
        if k != 0 && self.moved_keys.get(&k) == Some(&d) {
            self.moved_keys.remove(&k);
        }
    }

    /// A live claim's trust grade changed (a verdict).
    pub fn set_trust(&mut self, slug: &str, trust: f64) {
        self.touch(slug);
        let Some(d) = self.doc(slug) else {
            return;
        };
        let b = self.base_len();
        if d < b {
            Arc::make_mut(&mut self.base).set_trust(d, trust);
        } else if let Some(doc) = self.delta.docs.get_mut((d - b) as usize) {
            doc.meta.trust = trust;
        }
    }

    /// Give a live claim a vector key, or take it away (`None`).
    pub fn set_key(&mut self, slug: &str, key: Option<u64>) {
        self.touch(slug);
        let Some(d) = self.doc(slug) else {
            return;
        };
        let new = key.unwrap_or(0);
        let b = self.base_len();
        if d < b {
            let old = self.base.key(d);
            if old != 0 && self.moved_keys.get(&old) == Some(&d) {
                self.moved_keys.remove(&old);
            }
            Arc::make_mut(&mut self.base).set_key(d, new);
            if new != 0 && self.base.doc_of_key(new) != Some(d) {
                self.moved_keys.insert(new, d);
            }
        } else if let Some(doc) = self.delta.docs.get_mut((d - b) as usize) {
            if doc.key != 0 && self.delta.by_key.get(&doc.key) == Some(&(d - b)) {
                self.delta.by_key.remove(&doc.key);
            }
            doc.key = new;
            if new != 0 {
                self.delta.by_key.insert(new, d - b);
            }
        }
    }

    /// Note a claim changed while a fold is out.
    fn touch(&mut self, slug: &str) {
        if let Some(t) = &mut self.touched {
            if !t.contains(slug) {
                t.insert(slug.to_string());
            }
        }
    }

    /// The base segment, shared (a fold's result).
    pub(crate) fn base(&self) -> Arc<Segment> {
        self.base.clone()
    }

    /// Read what [`ClaimIndex::write`] wrote; `None` when it does not read whole and
    /// consistent.
    pub(crate) fn read(r: &mut Reader<'_>) -> Option<ClaimIndex> {
        Some(ClaimIndex {
            base: Arc::new(Segment::read(r)?),
            ..ClaimIndex::default()
        })
    }

    /// The document frequency of a term over live claims.
    fn df(&self, t: u32) -> u32 {
        let base = if t < self.base.term_count() {
            self.base.df(t) - self.dead_df.get(&t).copied().unwrap_or(0)
        } else {
            0
        };
        base + self.delta.postings(t).len() as u32
    }

    fn total_len(&self) -> u64 {
        self.base.total_len() - self.dead_len + self.delta.total_len
    }

    fn doc_len(&self, d: DocId) -> u32 {
        if d < self.base_len() {
            self.base.doc_len(d)
        } else {
            self.delta.len_of(d - self.base_len()).unwrap_or(1)
        }
    }

    /// The frequency of term `t` in claim `d` (0 when it does not hold it).
    fn tf(&self, d: DocId, t: u32) -> u32 {
        if d < self.base_len() {
            return self.base.tf(d, t);
        }
        let Some(doc) = self.delta.doc(d - self.base_len()) else {
            return 0;
        };
        match doc.terms.binary_search_by_key(&t, |p| p.0) {
            Ok(i) => doc.terms[i].1,
            Err(_) => 0,
        }
    }

    /// A term's id, in the base or the delta.
    fn term_id(&self, t: &str) -> Option<u32> {
        self.base
            .term_id(t)
            .or_else(|| self.delta.new_terms.get(t).copied())
    }
}

#[cfg(test)]
mod tests;
