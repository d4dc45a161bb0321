//! The delta of the claim index: the claims written since the base segment was built,
//! in ordinary maps and vectors. A checkpoint folds it into a new base
//! (`ClaimIndex::compact`) once it holds an eighth of the store; after a bulk import,
//! whose checkpoints come each time the store doubles, it may hold up to half until the
//! next write takes the last fold back, so what a search reads per posting (a claim's
//! length) is kept in an array of its own.

use foldhash::HashMap;

use super::meta::ClaimMeta;

/// A claim of the delta. Its id is the base's size plus its place in `Delta::docs`.
#[derive(Debug, Clone)]
pub(crate) struct DeltaDoc {
    pub slug: String,
    pub meta: ClaimMeta,
    pub len: u32,
    /// (term id, frequency), by term id. Term ids below the base's term count are the
    /// base's; above, the delta's own (`Delta::new_terms`).
    pub terms: Vec<(u32, u32)>,
    /// 0 = no vector.
    pub key: u64,
    /// False once replaced or gone: ids are never reused within a delta.
    pub live: bool,
}

#[derive(Debug, Default, Clone)]
pub(crate) struct Delta {
    pub docs: Vec<DeltaDoc>,
    /// Each document's length, by its place in `docs`: what a search reads per posting
    /// (a `DeltaDoc` is a cache line and more; after a bulk import the delta may hold
    /// half the store until the next fold).
    pub lens: Vec<u32>,
    /// Live documents by slug (delta index).
    pub by_slug: HashMap<String, u32>,
    /// Live documents by vector key (delta index).
    pub by_key: HashMap<u64, u32>,
    /// Terms the base does not hold, by text, with their ids (base term count + i).
    pub new_terms: HashMap<String, u32>,
    pub new_term_names: Vec<String>,
    /// The base's ids of the terms this delta's documents were given: a write looks a
    /// term up in the base's dictionary once per delta, not once per document.
    pub base_ids: HashMap<String, u32>,
    /// Term id → (document id, frequency) of live delta documents, by document id.
    pub postings: HashMap<u32, Vec<(u32, u32)>>,
    /// Term id → (largest frequency, shortest document) over every delta document that
    /// ever held it: widened on insert, never narrowed (a bound may be loose, never low).
    pub bounds: HashMap<u32, (u32, u32)>,
    pub live: u32,
    pub total_len: u64,
}

impl Delta {
    pub(crate) fn doc(&self, i: u32) -> Option<&DeltaDoc> {
        self.docs.get(i as usize)
    }

    /// The length of document `i` (its place in `docs`).
    pub(crate) fn len_of(&self, i: u32) -> Option<u32> {
        self.lens.get(i as usize).copied()
    }

    /// The postings of a term among live delta documents.
    pub(crate) fn postings(&self, t: u32) -> &[(u32, u32)] {
        self.postings.get(&t).map(Vec::as_slice).unwrap_or(&[])
    }

    pub(crate) fn bound(&self, t: u32) -> (u32, u32) {
        self.bounds.get(&t).copied().unwrap_or((0, u32::MAX))
    }

    /// Add a live document with global id `id` (= base size + its index).
    pub(crate) fn push(&mut self, id: u32, doc: DeltaDoc) {
        let i = self.docs.len() as u32;
        for (t, f) in &doc.terms {
            // New ids are the largest: each list stays sorted by appending.
            self.postings.entry(*t).or_default().push((id, *f));
            let b = self.bounds.entry(*t).or_insert((0, u32::MAX));
            *b = (b.0.max(*f), b.1.min(doc.len));
        }
        self.by_slug.insert(doc.slug.clone(), i);
        if doc.key != 0 {
            self.by_key.insert(doc.key, i);
        }
        self.live += 1;
        self.total_len += u64::from(doc.len);
        self.lens.push(doc.len);
        self.docs.push(doc);
    }

    /// Take a live document out (it stays in `docs`, not live).
    pub(crate) fn kill(&mut self, i: u32, id: u32) {
        let Some(doc) = self.docs.get_mut(i as usize) else {
            return;
        };
        if !doc.live {
            return;
        }
        doc.live = false;
        for (t, _) in &doc.terms {
            if let Some(list) = self.postings.get_mut(t) {
                if let Ok(at) = list.binary_search_by_key(&id, |p| p.0) {
                    list.remove(at);
                }
                if list.is_empty() {
                    self.postings.remove(t);
                }
            }
        }
        if self.by_slug.get(&doc.slug) == Some(&i) {
            self.by_slug.remove(&doc.slug);
        }
        if doc.key != 0 && self.by_key.get(&doc.key) == Some(&i) {
            self.by_key.remove(&doc.key);
        }
        self.live -= 1;
        self.total_len -= u64::from(doc.len);
    }

    /// The id of a term for a new document: the base's (`base` looks it up), an
    /// existing delta one, or a new one.
    pub(crate) fn term_id(
        &mut self,
        base_terms: u32,
        t: &str,
        base: impl FnOnce(&str) -> Option<u32>,
    ) -> u32 {
        if let Some(id) = self.new_terms.get(t).or_else(|| self.base_ids.get(t)) {
            return *id;
        }
        if let Some(id) = base(t) {
            self.base_ids.insert(t.to_string(), id);
            return id;
        }
        let id = base_terms + self.new_term_names.len() as u32;
        self.new_terms.insert(t.to_string(), id);
        self.new_term_names.push(t.to_string());
        id
    }

    /// A delta term's text.
    pub(crate) fn term(&self, base_terms: u32, t: u32) -> &str {
        t.checked_sub(base_terms)
            .and_then(|i| self.new_term_names.get(i as usize))
            .map(String::as_str)
            .unwrap_or("")
    }
}
