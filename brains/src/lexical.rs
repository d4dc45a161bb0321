//! The lexical index: BM25 over label and text, in memory. The store saves it in its
//! claim-index snapshot and rebuilds it from redb when the snapshot is missing or stale.
//! Postings lists keep a query's cost proportional to the documents that share its
//! terms, not to the size of the store.

use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Pseudo-documents added to the store's size in idf. Plain BM25 gives a term held by
/// every claim of a tiny store an idf near zero and an unknown term several times more,
/// so "review comments" against three claims about review comments would read as no
/// evidence. Negligible once a store holds thousands of claims.
const IDF_PRIOR_DOCS: f64 = 100.0;
/// A query term held by more than max(`COMMON_MIN_DF`, `COMMON_SHARE` of the store's
/// claims) is common: see [`LexicalIndex::search_prepared`].
const COMMON_MIN_DF: usize = 500;
const COMMON_SHARE: f64 = 0.02;
/// Label terms count this many times: a claim's name says what it is about.
const LABEL_WEIGHT: u32 = 2;

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for", "from",
    "had", "has", "have", "he", "her", "his", "how", "i", "in", "is", "it", "its", "me", "my",
    "of", "on", "or", "our", "she", "so", "that", "the", "their", "them", "there", "they", "this",
    "to", "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with",
    "you", "your",
];

/// A light suffix stemmer: plurals, -ing, -ed, -ly. Crude on purpose; measured by
/// `cargo xtask eval`, not assumed.
fn stem(w: &str) -> String {
    let n = w.chars().count();
    for (suffix, min_stem) in [
        ("ies", 3),
        ("ing", 4),
        ("ed", 4),
        ("ly", 4),
        ("es", 4),
        ("s", 3),
    ] {
        if let Some(base) = w.strip_suffix(suffix) {
            if base.chars().count() >= min_stem && n > suffix.len() {
                if suffix == "ies" {
                    return format!("{base}y");
                }
                if suffix == "s" && (base.ends_with('s') || base.ends_with('u')) {
                    return w.to_string();
                }
                return base.to_string();
            }
        }
    }
    w.to_string()
}

/// Lowercased alphanumeric runs, stopwords dropped, stemmed.
pub fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(|t| t.to_lowercase())
        .filter(|t| !STOPWORDS.contains(&t.as_str()))
        .map(|t| stem(&t))
        .collect()
}

#[derive(Debug, Default)]
struct Doc {
    slug: String,
    len: u32,
    /// (term id, term frequency), sorted by term id.
    terms: Vec<(u32, u32)>,
}

/// A term id with its idf.
type Weighted = (u32, f64);

/// A query prepared against the index: its known terms with their idf, and its weight,
/// the idf mass a document would match if it held every query term.
#[derive(Debug, Clone, Default)]
pub struct LexQuery {
    terms: Vec<(u32, f64)>,
    /// Σ idf over the distinct query terms; a term the index has never seen counts at
    /// the highest idf possible (it is as specific as a term can be, and nothing holds it).
    weight: f64,
    /// Distinct query terms after tokenizing (known or not).
    pub distinct: usize,
}

impl LexQuery {
    /// True when no query term is in the index: no document can match.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// One document's lexical evidence for a query.
#[derive(Debug, Clone, PartialEq)]
pub struct LexHit {
    pub slug: String,
    /// Raw BM25.
    pub score: f64,
    /// BM25 divided by the query's weight and capped at 1: the share of the query's
    /// information the document matches. Comparable across stores of any size.
    pub norm: f64,
    /// Query terms the document holds.
    pub matched: u32,
    /// The largest idf share (idf / query weight) among the matched terms.
    pub best_term: f64,
}

/// BM25 over a set of documents keyed by slug.
#[derive(Debug, Default)]
pub struct LexicalIndex {
    terms: HashMap<String, u32>,
    /// term id → (doc id, term frequency)
    postings: Vec<Vec<(u32, u32)>>,
    docs: Vec<Option<Doc>>,
    by_slug: HashMap<String, u32>,
    free: Vec<u32>,
    total_len: u64,
    live: u32,
}

impl LexicalIndex {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.live as usize
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Add or replace the document of a slug.
    pub fn upsert(&mut self, slug: &str, label: &str, text: &str) {
        self.remove(slug);
        let mut tf: HashMap<u32, u32> = HashMap::new();
        let mut len = 0u32;
        for (tokens, weight) in [(tokenize(label), LABEL_WEIGHT), (tokenize(text), 1)] {
            for t in tokens {
                let next = self.terms.len() as u32;
                let id = *self.terms.entry(t).or_insert(next);
                if id as usize == self.postings.len() {
                    self.postings.push(Vec::new());
                }
                *tf.entry(id).or_default() += weight;
                len += weight;
            }
        }
        let doc_id = self.free.pop().unwrap_or(self.docs.len() as u32);
        let mut terms: Vec<(u32, u32)> = tf.into_iter().collect();
        terms.sort_unstable();
        for (term, f) in &terms {
            self.postings[*term as usize].push((doc_id, *f));
        }
        let doc = Doc {
            slug: slug.to_string(),
            len,
            terms,
        };
        if doc_id as usize == self.docs.len() {
            self.docs.push(Some(doc));
        } else {
            self.docs[doc_id as usize] = Some(doc);
        }
        self.by_slug.insert(slug.to_string(), doc_id);
        self.total_len += len as u64;
        self.live += 1;
    }

    pub fn remove(&mut self, slug: &str) {
        let Some(doc_id) = self.by_slug.remove(slug) else {
            return;
        };
        if let Some(doc) = self.docs[doc_id as usize].take() {
            for (t, _) in &doc.terms {
                self.postings[*t as usize].retain(|(d, _)| *d != doc_id);
            }
            self.total_len -= doc.len as u64;
            self.live -= 1;
            self.free.push(doc_id);
        }
    }

    /// BM25's idf over the store plus [`IDF_PRIOR_DOCS`] documents that hold no query
    /// term: in a store of three claims a term every claim holds is still evidence.
    fn idf(&self, df: f64) -> f64 {
        let n = self.live as f64 + IDF_PRIOR_DOCS;
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    /// Tokenize a query and look its terms up.
    pub fn prepare(&self, query: &str) -> LexQuery {
        let mut toks = tokenize(query);
        toks.sort_unstable();
        toks.dedup();
        let unseen = self.idf(0.0);
        let mut out = LexQuery {
            distinct: toks.len(),
            ..Default::default()
        };
        for t in &toks {
            match self
                .terms
                .get(t)
                .filter(|id| !self.postings[**id as usize].is_empty())
            {
                Some(&id) => {
                    let idf = self.idf(self.postings[id as usize].len() as f64);
                    out.terms.push((id, idf));
                    out.weight += idf;
                }
                None => out.weight += unseen,
            }
        }
        out
    }

    fn bm25(&self, tf: u32, len: u32, idf: f64) -> f64 {
        let avg = (self.total_len as f64 / (self.live as f64).max(1.0)).max(1.0);
        let f = tf as f64;
        idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len as f64 / avg))
    }

    fn hit(&self, q: &LexQuery, doc: &Doc, score: f64) -> LexHit {
        let mut matched = 0;
        let mut best = 0f64;
        for (t, idf) in &q.terms {
            if doc.terms.binary_search_by_key(t, |p| p.0).is_ok() {
                matched += 1;
                best = best.max(*idf);
            }
        }
        let w = q.weight.max(f64::MIN_POSITIVE);
        LexHit {
            slug: doc.slug.clone(),
            score,
            norm: (score / w).min(1.0),
            matched,
            best_term: best / w,
        }
    }

    /// The lexical evidence of one document (a zero score when it holds no query term);
    /// `None` for an unknown slug.
    pub fn score(&self, q: &LexQuery, slug: &str) -> Option<LexHit> {
        let doc = self.docs[*self.by_slug.get(slug)? as usize].as_ref()?;
        let mut s = 0.0;
        for (t, idf) in &q.terms {
            if let Ok(i) = doc.terms.binary_search_by_key(t, |p| p.0) {
                s += self.bm25(doc.terms[i].1, doc.len, *idf);
            }
        }
        Some(self.hit(q, doc, s))
    }

    /// The best `k` documents for a prepared query, best first; `keep` filters
    /// candidates (scope, filters) before they compete for a place.
    pub fn search_prepared(
        &self,
        q: &LexQuery,
        k: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> Vec<LexHit> {
        if self.live == 0 || k == 0 || q.terms.is_empty() {
            return vec![];
        }
        // A common term (held by many claims) does not nominate candidates when the
        // query has a selective one: its long postings list is not walked, its share is
        // added to the candidates the selective terms found. The cost of a query then
        // follows its selective terms, not the size of the store.
        let common = COMMON_MIN_DF.max((self.live as f64 * COMMON_SHARE) as usize);
        let (selective, frequent): (Vec<Weighted>, Vec<Weighted>) = q
            .terms
            .iter()
            .partition(|(t, _)| self.postings[*t as usize].len() <= common);
        let (walk, probe) = if selective.is_empty() {
            (frequent, vec![])
        } else {
            (selective, frequent)
        };
        // Dense accumulators indexed by document id: no hashing in the inner loop.
        let mut scores = vec![0f64; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (term, idf) in walk {
            for (doc, f) in &self.postings[term as usize] {
                let len = self.docs[*doc as usize]
                    .as_ref()
                    .map(|d| d.len)
                    .unwrap_or(1);
                let slot = &mut scores[*doc as usize];
                if *slot == 0.0 {
                    touched.push(*doc);
                }
                *slot += self.bm25(*f, len, idf);
            }
        }
        if !probe.is_empty() {
            for d in &touched {
                let Some(doc) = self.docs[*d as usize].as_ref() else {
                    continue;
                };
                for (term, idf) in &probe {
                    if let Ok(i) = doc.terms.binary_search_by_key(term, |p| p.0) {
                        scores[*d as usize] += self.bm25(doc.terms[i].1, doc.len, *idf);
                    }
                }
            }
        }
        let mut cands: Vec<(u32, f64)> = touched
            .into_iter()
            .filter(|d| {
                self.docs[*d as usize]
                    .as_ref()
                    .is_some_and(|doc| keep(&doc.slug))
            })
            .map(|d| (d, scores[d as usize]))
            .collect();
        let slug = |d: u32| {
            self.docs[d as usize]
                .as_ref()
                .map(|doc| doc.slug.as_str())
                .unwrap_or("")
        };
        let order = |a: &(u32, f64), b: &(u32, f64)| {
            b.1.total_cmp(&a.1).then_with(|| slug(a.0).cmp(slug(b.0)))
        };
        // Only the best k are sorted and only their slugs are copied.
        if cands.len() > k {
            cands.select_nth_unstable_by(k - 1, order);
            cands.truncate(k);
        }
        cands.sort_by(order);
        cands
            .into_iter()
            .filter_map(|(d, s)| Some(self.hit(q, self.docs[d as usize].as_ref()?, s)))
            .collect()
    }

    /// The best `k` slugs for a query with their BM25 scores, best first.
    pub fn search(&self, query: &str, k: usize, keep: &dyn Fn(&str) -> bool) -> Vec<(String, f64)> {
        self.search_prepared(&self.prepare(query), k, keep)
            .into_iter()
            .map(|h| (h.slug, h.score))
            .collect()
    }
}

/// The byte encoding of snapshots: little-endian integers, length-prefixed strings.
/// Shared by the lexical index and the store's claim-index snapshot.
pub(crate) mod bytes {
    pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn put_u64(out: &mut Vec<u8>, v: u64) {
        out.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
        put_u32(out, s.len() as u32);
        out.extend_from_slice(s.as_bytes());
    }

    /// Reads what the `put_*` functions wrote; `None` once the bytes run out or do not
    /// parse (a snapshot that does not read is rebuilt, never trusted in part).
    pub(crate) struct Reader<'a> {
        b: &'a [u8],
    }

    impl<'a> Reader<'a> {
        pub(crate) fn new(b: &'a [u8]) -> Self {
            Self { b }
        }

        pub(crate) fn is_empty(&self) -> bool {
            self.b.is_empty()
        }

        /// The next `n` bytes as a reader of their own.
        pub(crate) fn split(&mut self, n: usize) -> Option<Reader<'a>> {
            self.take(n).map(Reader::new)
        }

        fn take(&mut self, n: usize) -> Option<&'a [u8]> {
            if self.b.len() < n {
                return None;
            }
            let (head, rest) = self.b.split_at(n);
            self.b = rest;
            Some(head)
        }

        pub(crate) fn u32(&mut self) -> Option<u32> {
            Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
        }

        pub(crate) fn u64(&mut self) -> Option<u64> {
            Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
        }

        pub(crate) fn str(&mut self) -> Option<&'a str> {
            let n = self.u32()? as usize;
            std::str::from_utf8(self.take(n)?).ok()
        }

        /// `n` (u32, u32) pairs.
        pub(crate) fn pairs(&mut self, n: usize) -> Option<Vec<(u32, u32)>> {
            let raw = self.take(n.checked_mul(8)?)?;
            Some(
                raw.chunks_exact(8)
                    .map(|c| {
                        (
                            u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                            u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
                        )
                    })
                    .collect(),
            )
        }
    }
}

impl LexicalIndex {
    /// Append the index to `out`, compacted: only live documents and the terms they
    /// hold, renumbered in order (a document's terms stay sorted by id). Postings are
    /// written as they are, so loading reads them in sequence instead of rebuilding them.
    pub(crate) fn write_snapshot(&self, out: &mut Vec<u8>) {
        use bytes::{put_str, put_u32};
        let mut by_id: Vec<Option<&str>> = vec![None; self.postings.len()];
        for (t, id) in &self.terms {
            if !self.postings[*id as usize].is_empty() {
                by_id[*id as usize] = Some(t);
            }
        }
        let mut doc_remap = vec![u32::MAX; self.docs.len()];
        let mut n_docs = 0u32;
        for (old, doc) in self.docs.iter().enumerate() {
            if doc.is_some() {
                doc_remap[old] = n_docs;
                n_docs += 1;
            }
        }
        let mut remap = vec![u32::MAX; by_id.len()];
        let mut kept = 0u32;
        for (old, t) in by_id.iter().enumerate() {
            if t.is_some() {
                remap[old] = kept;
                kept += 1;
            }
        }
        put_u32(out, n_docs);
        put_u32(out, kept);
        for (old, t) in by_id.iter().enumerate() {
            if let Some(t) = t {
                put_str(out, t);
                let p = &self.postings[old];
                put_u32(out, p.len() as u32);
                for (d, f) in p {
                    put_u32(out, doc_remap[*d as usize]);
                    put_u32(out, *f);
                }
            }
        }
        for doc in self.docs.iter().flatten() {
            put_str(out, &doc.slug);
            put_u32(out, doc.len);
            put_u32(out, doc.terms.len() as u32);
            for (t, f) in &doc.terms {
                put_u32(out, remap[*t as usize]);
                put_u32(out, *f);
            }
        }
    }

    /// Read what [`LexicalIndex::write_snapshot`] wrote; `None` when it does not read
    /// whole and consistent (every id in range, every slug once).
    pub(crate) fn read_snapshot(r: &mut bytes::Reader<'_>) -> Option<LexicalIndex> {
        let n_docs = r.u32()?;
        let n_terms = r.u32()? as usize;
        let mut terms = HashMap::with_capacity(n_terms);
        let mut postings: Vec<Vec<(u32, u32)>> = Vec::with_capacity(n_terms);
        for id in 0..n_terms {
            let t = r.str()?;
            let df = r.u32()? as usize;
            let p = r.pairs(df)?;
            if p.iter().any(|(d, _)| *d >= n_docs) {
                return None;
            }
            terms.insert(t.to_string(), id as u32);
            postings.push(p);
        }
        if terms.len() != n_terms {
            return None;
        }
        let mut docs = Vec::with_capacity(n_docs as usize);
        let mut by_slug = HashMap::with_capacity(n_docs as usize);
        let mut total_len = 0u64;
        for d in 0..n_docs {
            let slug = r.str()?.to_string();
            let len = r.u32()?;
            let n = r.u32()? as usize;
            let doc_terms = r.pairs(n)?;
            let mut prev = None;
            for (t, _) in &doc_terms {
                if prev.is_some_and(|p| p >= *t) || *t as usize >= n_terms {
                    return None;
                }
                prev = Some(*t);
            }
            total_len += len as u64;
            if by_slug.insert(slug.clone(), d).is_some() {
                return None;
            }
            docs.push(Some(Doc {
                slug,
                len,
                terms: doc_terms,
            }));
        }
        Some(LexicalIndex {
            terms,
            postings,
            docs,
            by_slug,
            free: Vec::new(),
            total_len,
            live: n_docs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_lowercases_drops_stopwords_and_stems() {
        assert_eq!(
            tokenize("The Caches are FLAKING on runners"),
            vec!["cach", "flak", "runner"]
        );
        assert_eq!(tokenize("policies"), vec!["policy"]);
        assert_eq!(tokenize("status bus"), vec!["status", "bus"]);
    }

    #[test]
    fn bm25_prefers_rarer_terms_and_label_matches() {
        let mut ix = LexicalIndex::new();
        ix.upsert("a", "cache flake", "the cache test flakes on two cores");
        ix.upsert(
            "b",
            "deploy",
            "deploy with the blue green script and the cache",
        );
        ix.upsert("c", "ci", "ci runners are slow");
        let r = ix.search("cache flakes", 10, &|_| true);
        assert_eq!(r[0].0, "a");
        assert_eq!(r.len(), 2);
        let r = ix.search("blue green", 10, &|_| true);
        assert_eq!(r[0].0, "b");
        assert!(ix.search("nothing matches", 10, &|_| true).is_empty());
    }

    #[test]
    fn common_terms_add_to_candidates_but_do_not_nominate_them() {
        let mut ix = LexicalIndex::new();
        for i in 0..600 {
            ix.upsert(&format!("d{i}"), "note", &format!("service entry {i}"));
        }
        ix.upsert("target", "note", "service webhook retries");
        ix.upsert("other", "note", "webhook retries elsewhere");
        // "service" is common (601 of 602 claims): with a selective term in the query
        // it only adds to the claims the selective terms found.
        let r = ix.search("service webhook", 10, &|_| true);
        assert_eq!(
            r.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
            vec!["target", "other"]
        );
        assert!(r[0].1 > r[1].1, "the common term still counts");
        // Alone, a common term still finds its claims.
        assert_eq!(ix.search("service", 5, &|_| true).len(), 5);
    }

    #[test]
    fn upsert_replaces_and_remove_forgets() {
        let mut ix = LexicalIndex::new();
        ix.upsert("a", "x", "zebra");
        ix.upsert("a", "x", "giraffe");
        assert!(ix.search("zebra", 5, &|_| true).is_empty());
        assert_eq!(ix.search("giraffe", 5, &|_| true)[0].0, "a");
        ix.remove("a");
        assert!(ix.is_empty());
        assert!(ix.search("giraffe", 5, &|_| true).is_empty());
        ix.upsert("b", "y", "giraffe");
        assert_eq!(
            ix.search("giraffe", 5, &|s| s != "b").len(),
            0,
            "the filter applies"
        );
    }
}
