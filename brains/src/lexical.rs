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
#[derive(Debug)]
pub struct LexicalIndex {
    terms: HashMap<String, u32>,
    /// term id → (doc id, term frequency), sorted by doc id: a query walks its lists
    /// together, a document at a time (see [`LexicalIndex::search_prepared`]).
    postings: Vec<Vec<(u32, u32)>>,
    /// term id → (the largest frequency, the shortest document) among its postings:
    /// what bounds the term's BM25 in any document. Widened on insert, never narrowed
    /// on remove (a bound may be loose, never low); exact again after a load.
    bounds: Vec<(u32, u32)>,
    /// Held by more than this many documents (or [`COMMON_SHARE`] of them), a term is
    /// common: see [`LexicalIndex::search_prepared`].
    common_min_df: usize,
    docs: Vec<Option<Doc>>,
    by_slug: HashMap<String, u32>,
    free: Vec<u32>,
    total_len: u64,
    live: u32,
}

impl Default for LexicalIndex {
    fn default() -> Self {
        LexicalIndex {
            terms: HashMap::new(),
            postings: Vec::new(),
            bounds: Vec::new(),
            common_min_df: COMMON_MIN_DF,
            docs: Vec::new(),
            by_slug: HashMap::new(),
            free: Vec::new(),
            total_len: 0,
            live: 0,
        }
    }
}

/// The best `k` of a search so far: a few dozen entries, the worst one tracked.
struct TopK<'a> {
    k: usize,
    entries: Vec<(u32, f64)>,
    /// Index of the worst entry once `entries` is full.
    worst: usize,
    slug: &'a dyn Fn(u32) -> &'a str,
}

impl TopK<'_> {
    /// Whether (`a`, its score) ranks below (`b`, its score): lower score, or the same
    /// score and a later slug.
    fn below(&self, a: (u32, f64), b: (u32, f64)) -> bool {
        a.1 < b.1 || (a.1 == b.1 && (self.slug)(a.0) > (self.slug)(b.0))
    }

    /// The score a document must reach to be considered: `-inf` until `k` are held.
    fn threshold(&self) -> f64 {
        if self.entries.len() < self.k {
            f64::NEG_INFINITY
        } else {
            self.entries[self.worst].1
        }
    }

    fn offer(&mut self, doc: u32, score: f64) {
        if self.entries.len() < self.k {
            self.entries.push((doc, score));
            if self.entries.len() == self.k {
                self.find_worst();
            }
        } else if self.below(self.entries[self.worst], (doc, score)) {
            self.entries[self.worst] = (doc, score);
            self.find_worst();
        }
    }

    fn find_worst(&mut self) {
        let mut w = 0;
        for i in 1..self.entries.len() {
            if self.below(self.entries[i], self.entries[w]) {
                w = i;
            }
        }
        self.worst = w;
    }
}

impl LexicalIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// An index whose common-term threshold is `min_df` documents instead of
    /// [`COMMON_MIN_DF`]: tests reach the common-term path with small corpora.
    #[doc(hidden)]
    pub fn with_common_min_df(min_df: usize) -> Self {
        LexicalIndex {
            common_min_df: min_df,
            ..Self::default()
        }
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
                    self.bounds.push((0, u32::MAX));
                }
                *tf.entry(id).or_default() += weight;
                len += weight;
            }
        }
        let doc_id = self.free.pop().unwrap_or(self.docs.len() as u32);
        let mut terms: Vec<(u32, u32)> = tf.into_iter().collect();
        terms.sort_unstable();
        for (term, f) in &terms {
            let list = &mut self.postings[*term as usize];
            // New ids are the largest: an append. A reused id goes in its place.
            let at = list.partition_point(|(d, _)| *d < doc_id);
            list.insert(at, (doc_id, *f));
            let b = &mut self.bounds[*term as usize];
            *b = (b.0.max(*f), b.1.min(len));
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

    /// Split a query's terms: a common term (held by many claims) does not nominate
    /// candidates when the query has a selective one; its share is added to the
    /// candidates the selective terms found. The cost of a query then follows its
    /// selective terms, not the size of the store. Returns (walked, probed).
    fn split(&self, q: &LexQuery) -> (Vec<Weighted>, Vec<Weighted>) {
        let common = self
            .common_min_df
            .max((self.live as f64 * COMMON_SHARE) as usize);
        let (selective, frequent): (Vec<Weighted>, Vec<Weighted>) = q
            .terms
            .iter()
            .partition(|(t, _)| self.postings[*t as usize].len() <= common);
        if selective.is_empty() {
            (frequent, vec![])
        } else {
            (selective, frequent)
        }
    }

    /// The most a term can add to any document's score.
    fn upper_bound(&self, term: u32, idf: f64) -> f64 {
        let (tf, len) = self.bounds[term as usize];
        // Widened by a hair: the bound must never fall below a score computed with the
        // same formula through another rounding.
        self.bm25(tf, len.min(u32::MAX - 1), idf) * (1.0 + 1e-9) + 1e-12
    }

    /// A document's score for the walked then probed terms, summed in that order: the
    /// same floating-point sum whichever path found the document.
    fn full_score(&self, doc: &Doc, walk: &[Weighted], probe: &[Weighted]) -> f64 {
        let mut s = 0.0;
        for (term, idf) in walk.iter().chain(probe) {
            if let Ok(i) = doc.terms.binary_search_by_key(term, |p| p.0) {
                s += self.bm25(doc.terms[i].1, doc.len, *idf);
            }
        }
        s
    }

    /// The best `k` documents for a prepared query, best first (ties by slug); `keep`
    /// filters candidates (scope, filters) before they compete for a place.
    ///
    /// Dynamic pruning (MaxScore): the walked lists are read together, a document at a
    /// time in id order. Once `k` candidates are held, the terms whose bounds together
    /// (with every probed term's) cannot lift a document to the `k`-th score stop
    /// nominating; a document found only by the others is dropped as soon as its known
    /// share plus the bounds of what is left falls below that score. The answer is
    /// exactly [`LexicalIndex::search_exhaustive`]'s (pinned by a property test).
    pub fn search_prepared(
        &self,
        q: &LexQuery,
        k: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> Vec<LexHit> {
        if self.live == 0 || k == 0 || q.terms.is_empty() {
            return vec![];
        }
        let (walk, probe) = self.split(q);
        let slug = |d: u32| {
            self.docs[d as usize]
                .as_ref()
                .map(|doc| doc.slug.as_str())
                .unwrap_or("")
        };
        // Walked terms by bound, smallest first; `below[i]`: the probed terms' bounds
        // plus those of the first `i` walked terms in that order.
        let mut order: Vec<(usize, f64)> = walk
            .iter()
            .enumerate()
            .map(|(i, (t, idf))| (i, self.upper_bound(*t, *idf)))
            .collect();
        order.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut below = Vec::with_capacity(order.len() + 1);
        below.push(
            probe
                .iter()
                .map(|(t, idf)| self.upper_bound(*t, *idf))
                .sum::<f64>(),
        );
        for (_, ub) in &order {
            below.push(below[below.len() - 1] + ub);
        }
        let lists: Vec<&[(u32, u32)]> = order
            .iter()
            .map(|(i, _)| self.postings[walk[*i].0 as usize].as_slice())
            .collect();
        let idfs: Vec<f64> = order.iter().map(|(i, _)| walk[*i].1).collect();
        let mut pos = vec![0usize; lists.len()];
        let mut top = TopK {
            k,
            entries: Vec::with_capacity(k),
            worst: 0,
            slug: &slug,
        };
        // Terms before `first` no longer nominate (their bounds cannot reach the k-th).
        let mut first = 0;
        loop {
            let mut doc = u32::MAX;
            for i in first..lists.len() {
                if let Some((d, _)) = lists[i].get(pos[i]) {
                    doc = doc.min(*d);
                }
            }
            if doc == u32::MAX {
                break;
            }
            let Some(d) = self.docs[doc as usize].as_ref() else {
                for i in first..lists.len() {
                    if lists[i].get(pos[i]).is_some_and(|p| p.0 == doc) {
                        pos[i] += 1;
                    }
                }
                continue;
            };
            let mut known = 0.0;
            for i in first..lists.len() {
                if let Some((_, f)) = lists[i].get(pos[i]).filter(|p| p.0 == doc) {
                    known += self.bm25(*f, d.len, idfs[i]);
                    pos[i] += 1;
                }
            }
            let theta = top.threshold();
            if known + below[first] < theta {
                continue;
            }
            // The non-nominating terms, largest bound first, while they can still matter.
            let mut dropped = false;
            for i in (0..first).rev() {
                if let Ok(j) = d.terms.binary_search_by_key(&walk[order[i].0].0, |p| p.0) {
                    known += self.bm25(d.terms[j].1, d.len, idfs[i]);
                }
                if known + below[i] < theta {
                    dropped = true;
                    break;
                }
            }
            if dropped || !keep(&d.slug) {
                continue;
            }
            top.offer(doc, self.full_score(d, &walk, &probe));
            let theta = top.threshold();
            while first < lists.len() && below[first + 1] < theta {
                first += 1;
            }
            if first == lists.len() {
                break;
            }
        }
        let mut cands = top.entries;
        cands.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| slug(a.0).cmp(slug(b.0))));
        cands
            .into_iter()
            .filter_map(|(d, s)| Some(self.hit(q, self.docs[d as usize].as_ref()?, s)))
            .collect()
    }

    /// [`LexicalIndex::search_prepared`] without pruning: every posting of the walked
    /// terms scored. The reference the pruned search must equal, exactly.
    #[doc(hidden)]
    pub fn search_exhaustive(
        &self,
        q: &LexQuery,
        k: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> Vec<LexHit> {
        if self.live == 0 || k == 0 || q.terms.is_empty() {
            return vec![];
        }
        let (walk, probe) = self.split(q);
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
        // Postings are sorted by document id (renumbering in order keeps them so); a
        // snapshot of an index that did not keep them sorted is sorted here.
        for p in postings.iter_mut() {
            if !p.is_sorted_by_key(|(d, _)| *d) {
                p.sort_unstable_by_key(|(d, _)| *d);
            }
        }
        let mut bounds = vec![(0u32, u32::MAX); postings.len()];
        for (b, p) in bounds.iter_mut().zip(&postings) {
            for (d, f) in p {
                let len = docs[*d as usize]
                    .as_ref()
                    .map_or(u32::MAX, |doc: &Doc| doc.len);
                *b = (b.0.max(*f), b.1.min(len));
            }
        }
        Some(LexicalIndex {
            terms,
            postings,
            bounds,
            common_min_df: COMMON_MIN_DF,
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

    mod pruning {
        use super::super::*;
        use proptest::prelude::*;

        const VOCAB: &[&str] = &[
            "cache", "deploy", "runner", "flake", "lamp", "queue", "token", "index", "merge",
            "retry", "socket", "shard",
        ];

        /// Words drawn with a skew: the first few in most documents, the rest rare.
        fn text(max: usize) -> impl Strategy<Value = String> {
            proptest::collection::vec(
                prop_oneof![6 => 0usize..3, 3 => 3usize..7, 1 => 7usize..VOCAB.len()],
                0..max,
            )
            .prop_map(|ix| {
                ix.into_iter()
                    .map(|i| VOCAB[i])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        }

        #[derive(Debug, Clone)]
        enum Op {
            Upsert(u8, String, String),
            Remove(u8),
        }

        fn ops() -> impl Strategy<Value = Vec<Op>> {
            proptest::collection::vec(
                prop_oneof![
                    8 => (0u8..80, text(3), text(12)).prop_map(|(d, l, t)| Op::Upsert(d, l, t)),
                    1 => (0u8..80).prop_map(Op::Remove),
                ],
                1..220,
            )
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]
            /// The pruned search returns exactly the unpruned top-k (the same documents,
            /// scores and order), through replacements, removals, reused ids, filters,
            /// every common-term threshold, and a snapshot round trip.
            #[test]
            fn pruning_returns_exactly_the_unpruned_top_k(
                ops in ops(),
                min_df in prop_oneof![Just(1usize), Just(4), Just(15), Just(1000)],
                queries in proptest::collection::vec((text(6), 1usize..15, 0u8..3), 1..8),
            ) {
                let mut ix = LexicalIndex::with_common_min_df(min_df);
                for op in &ops {
                    match op {
                        Op::Upsert(d, l, t) => ix.upsert(&format!("d{d}"), l, t),
                        Op::Remove(d) => ix.remove(&format!("d{d}")),
                    }
                }
                let mut bytes = Vec::new();
                ix.write_snapshot(&mut bytes);
                let mut loaded = LexicalIndex::read_snapshot(&mut bytes::Reader::new(&bytes)).unwrap();
                loaded.common_min_df = min_df;
                for (text, k, filter) in &queries {
                    let keep = |slug: &str| match filter {
                        0 => true,
                        1 => !slug.ends_with('3'),
                        _ => slug.len() % 2 == 0,
                    };
                    for index in [&ix, &loaded] {
                        let q = index.prepare(text);
                        let pruned = index.search_prepared(&q, *k, &keep);
                        let exhaustive = index.search_exhaustive(&q, *k, &keep);
                        prop_assert_eq!(&pruned, &exhaustive, "query {:?} k {}", text, k);
                    }
                }
            }
        }
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
