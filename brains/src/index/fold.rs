//! Folding the delta and the dead into a new base segment: compaction here, or in the
//! background (the fold's input taken now, its result installed later), and the
//! compacted segment a snapshot writes.

use std::sync::Arc;

use super::delta::{Delta, DeltaDoc};
use super::meta::ClaimMeta;
use super::segment::{DocIn, MetaIn, Segment};
use super::{ClaimIndex, DocId, Terms};

impl ClaimIndex {
    /// Fold the delta and the dead into a new base: ids change, answers do not. The
    /// base is already in slug and term order, so the new base merges it with the
    /// delta (sorted on its own) rather than sorting every claim and term again.
    pub fn compact(&mut self) {
        if self.is_one_segment() {
            return;
        }
        let b = self.base_len();
        let base_terms = self.base.term_count();
        let live_delta: Vec<&DeltaDoc> = {
            let mut v: Vec<&DeltaDoc> = self.delta.docs.iter().filter(|d| d.live).collect();
            v.sort_unstable_by(|x, y| x.slug.cmp(&y.slug));
            v
        };
        // The terms live claims hold, base and delta, merged in order into one dictionary.
        let all_terms = base_terms as usize + self.delta.new_term_names.len();
        let mut used = vec![false; all_terms];
        for d in (0..b).filter(|d| !self.is_dead(*d)) {
            for (t, _) in self.base.doc_terms(d) {
                used[t as usize] = true;
            }
        }
        for doc in &live_delta {
            for (t, _) in &doc.terms {
                used[*t as usize] = true;
            }
        }
        let mut new_terms: Vec<u32> = (base_terms..all_terms as u32)
            .filter(|t| used[*t as usize])
            .collect();
        new_terms.sort_unstable_by(|x, y| {
            self.delta
                .term(base_terms, *x)
                .cmp(self.delta.term(base_terms, *y))
        });
        let mut dict: Vec<&str> = Vec::with_capacity(all_terms);
        let mut remap = vec![0u32; all_terms];
        let (mut i, mut j) = (0u32, 0usize);
        loop {
            while i < base_terms && !used[i as usize] {
                i += 1;
            }
            let base_next = (i < base_terms).then(|| self.base.term(i));
            let new_next = new_terms.get(j).map(|t| self.delta.term(base_terms, *t));
            let take_base = match (base_next, new_next) {
                (None, None) => break,
                (Some(x), Some(y)) => x < y,
                (Some(_), None) => true,
                (None, Some(_)) => false,
            };
            let id = dict.len() as u32;
            if take_base {
                dict.push(self.base.term(i));
                remap[i as usize] = id;
                i += 1;
            } else {
                let t = new_terms[j];
                dict.push(self.delta.term(base_terms, t));
                remap[t as usize] = id;
                j += 1;
            }
        }
        // Claims: the live base in slug order merged with the delta's.
        let base_doc = |d: u32| {
            let s = &self.base;
            DocIn {
                slug: s.slug(d),
                meta: MetaIn {
                    label: s.label(d),
                    source_agent: s.source_agent(d),
                    strength: s.strength(d),
                    trust: s.trust(d),
                    created: s.created(d),
                    evidence: s.evidence(d).collect(),
                },
                key: s.key(d),
                len: s.doc_len(d),
                terms: s
                    .doc_terms(d)
                    .map(|(t, f)| (remap[t as usize], f))
                    .collect(),
            }
        };
        fn delta_doc<'a>(doc: &'a DeltaDoc, remap: &[u32]) -> DocIn<'a> {
            DocIn {
                slug: &doc.slug,
                meta: MetaIn::of(&doc.meta),
                key: doc.key,
                len: doc.len,
                terms: doc
                    .terms
                    .iter()
                    .map(|(t, f)| (remap[*t as usize], *f))
                    .collect(),
            }
        }
        let mut docs: Vec<DocIn<'_>> = Vec::with_capacity(self.len());
        let mut base_live = (0..b).filter(|d| !self.is_dead(*d)).peekable();
        let mut delta_live = live_delta.iter().peekable();
        loop {
            let take_base = match (base_live.peek(), delta_live.peek()) {
                (None, None) => break,
                (Some(d), Some(doc)) => self.base.slug(*d) < doc.slug.as_str(),
                (Some(_), None) => true,
                (None, Some(_)) => false,
            };
            if take_base {
                let d = base_live.next().unwrap_or_default();
                docs.push(base_doc(d));
            } else if let Some(doc) = delta_live.next() {
                docs.push(delta_doc(doc, &remap));
            }
        }
        let base = Segment::build(&dict, docs);
        *self = ClaimIndex {
            base: Arc::new(base),
            common_min_df: self.common_min_df,
            ..ClaimIndex::default()
        };
    }

    /// Append the index to `out`, compacted first (a snapshot holds one segment).
    #[cfg(test)]
    pub(crate) fn write(&mut self, out: &mut Vec<u8>) {
        self.frozen().write(out);
    }

    /// The index compacted into one segment, shared: what a snapshot writes, on another
    /// thread if need be, while this index takes further writes.
    pub(crate) fn frozen(&mut self) -> Arc<Segment> {
        self.compact();
        self.base.clone()
    }

    /// What a fold in the background needs, taken now: the base (shared), the dead
    /// bits, and copies of the delta's documents and new terms. Folded with
    /// [`ClaimIndex::compact`] on another thread, it comes back to
    /// [`ClaimIndex::install_fold`]; this index takes writes meanwhile and remembers
    /// which claims they changed. `None` when the index is one segment already (the
    /// base is then the fold).
    pub(crate) fn fold_input(&mut self) -> Option<ClaimIndex> {
        if self.is_one_segment() {
            return None;
        }
        self.touched = Some(Default::default());
        Some(ClaimIndex {
            base: self.base.clone(),
            dead: self.dead.clone(),
            dead_docs: self.dead_docs,
            dead_len: self.dead_len,
            delta: Delta {
                docs: self.delta.docs.clone(),
                lens: self.delta.lens.clone(),
                new_term_names: self.delta.new_term_names.clone(),
                ..Delta::default()
            },
            common_min_df: self.common_min_df,
            ..ClaimIndex::default()
        })
    }

    /// Take the fold of [`ClaimIndex::fold_input`] as this index's base, with every
    /// claim changed since laid onto it as it is now: the same claims, terms,
    /// metadata and keys, in fewer pieces. Nothing happens when the fold was given up.
    pub(crate) fn install_fold(&mut self, folded: Arc<Segment>) {
        let Some(touched) = self.touched.take() else {
            return;
        };
        let mut next = ClaimIndex {
            base: folded,
            common_min_df: self.common_min_df,
            ..ClaimIndex::default()
        };
        for slug in touched {
            match self.doc(&slug) {
                Some(d) => {
                    let (terms, meta) = self.entry(d);
                    next.upsert_terms(&slug, terms, meta, self.key(d));
                }
                None => next.remove(&slug),
            }
        }
        *self = next;
    }

    /// A live document's terms (as text) and metadata, as an upsert takes them.
    fn entry(&self, d: DocId) -> (Terms, ClaimMeta) {
        let b = self.base_len();
        let base_terms = self.base.term_count();
        let (terms, len): (Vec<(String, u32)>, u32) = if d < b {
            let terms = self.base.doc_terms(d);
            let terms = terms.map(|(t, f)| (self.base.term(t).to_string(), f));
            (terms.collect(), self.base.doc_len(d))
        } else {
            let doc = &self.delta.docs[(d - b) as usize];
            let name = |t: u32| match t < base_terms {
                true => self.base.term(t),
                false => self.delta.term(base_terms, t),
            };
            let terms = doc.terms.iter().map(|(t, f)| (name(*t).to_string(), *f));
            (terms.collect(), doc.len)
        };
        let meta = self.meta(d).expect("a live document has metadata");
        (Terms { terms, len }, meta.into())
    }

    /// Nothing to fold: no claim in the delta, none gone from the base.
    fn is_one_segment(&self) -> bool {
        self.delta.docs.is_empty() && self.dead_docs == 0
    }
}
