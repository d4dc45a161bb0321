//! BM25 over the claim index: preparing a query, the best `k` claims with dynamic
//! pruning (MaxScore), one claim's score, and the exhaustive search the pruned one must
//! equal. A term's postings are its base list (dead claims skipped) followed by its
//! delta list; both are sorted by claim id and every delta id is above every base id,
//! so together they read as one sorted list.

use super::{ClaimIndex, DocId, COMMON_SHARE};
use crate::lexical::{tokenize, LexHit, LexQuery, B, IDF_PRIOR_DOCS, K1};

/// A term id with its idf.
type Weighted = (u32, f64);

/// One term's postings across both levels, read in claim order.
struct Cursor<'a> {
    docs: &'a [u32],
    tfs: &'a [u16],
    delta: &'a [(u32, u32)],
    pos: usize,
}

impl Cursor<'_> {
    fn get(&self) -> Option<(u32, u32)> {
        match self.docs.get(self.pos) {
            Some(d) => Some((*d, u32::from(self.tfs[self.pos]))),
            None => self.delta.get(self.pos - self.docs.len()).copied(),
        }
    }

    /// The term's frequency in `doc` when the posting just stepped past is `doc`'s.
    fn just_read(&self, doc: u32) -> u32 {
        if self.pos == 0 {
            return 0;
        }
        let at = self.pos - 1;
        let p = match self.docs.get(at) {
            Some(d) => (*d, u32::from(self.tfs[at])),
            None => self.delta[at - self.docs.len()],
        };
        if p.0 == doc {
            p.1
        } else {
            0
        }
    }

    /// Step over the postings of frequency 1 in claims of `cut` terms or more (`lens`:
    /// the base claims' lengths, `delta_lens` the delta's, whose first claim's id is
    /// `base_docs`): postings that cannot lift a claim to the k-th score. A tight loop
    /// over arrays read forward, not a candidate each.
    fn skip_long(&mut self, cut: u32, lens: &[u32], delta_lens: &[u32], base_docs: u32) {
        while let (Some(d), Some(1)) = (self.docs.get(self.pos), self.tfs.get(self.pos)) {
            if lens.get(*d as usize).is_none_or(|l| *l < cut) {
                return;
            }
            self.pos += 1;
        }
        let Some(at) = self.pos.checked_sub(self.docs.len()) else {
            // Stopped inside the base list.
            return;
        };
        let skipped = self.delta[at..]
            .iter()
            .take_while(|(d, f)| {
                *f == 1
                    && d.checked_sub(base_docs)
                        .and_then(|i| delta_lens.get(i as usize))
                        .is_some_and(|l| *l >= cut)
            })
            .count();
        self.pos += skipped;
    }

    /// Move to the first posting at or after `target` (never back); the term's
    /// frequency in `target` (0 when it does not hold it). Galloping: the cost follows
    /// the distance moved, and the reads go forward through one list.
    fn seek(&mut self, target: u32) -> u32 {
        let base = self.docs.len();
        if self.pos < base {
            self.pos += gallop(&self.docs[self.pos..], |d| *d < target);
        }
        if self.pos >= base {
            let at = self.pos - base;
            self.pos += gallop(&self.delta[at..], |p| p.0 < target);
        }
        match self.get() {
            Some((d, f)) if d == target => f,
            _ => 0,
        }
    }
}

/// The number of leading items of `xs` for which `before` holds (`before` holds for a
/// prefix): doubling steps, then a binary search in the last step.
fn gallop<T>(xs: &[T], before: impl Fn(&T) -> bool) -> usize {
    let mut lo = 0;
    let mut step = 1;
    while lo < xs.len() && before(&xs[lo]) {
        let next = lo + step;
        if next >= xs.len() || !before(&xs[next]) {
            let end = next.min(xs.len());
            return lo + 1 + xs[lo + 1..end].partition_point(&before);
        }
        lo = next;
        step *= 2;
    }
    lo
}

/// Whether `x` falls short of the k-th score `theta` by more than rounding (a claim's
/// share is summed in another order than its full score, which may tie).
fn short_of(x: f64, theta: f64) -> bool {
    x < theta - (theta.abs() * 1e-9 + 1e-12)
}

/// The shortest claim length at which a posting of frequency 1 of a term (`idf`), with
/// `rest` added (every other term's bound), falls short of `theta`; `None` when no
/// length does. BM25 falls as the length grows, and so does its correctly rounded
/// computation: a binary search over lengths finds the exact cut of the same formula
/// the walk applies.
fn long_cut(avg: f64, idf: f64, rest: f64, theta: f64) -> Option<u32> {
    let short = |len: u32| short_of(ClaimIndex::bm25(avg, 1, len, idf) + rest, theta);
    let (mut lo, mut hi) = (0u32, u32::MAX - 1);
    if !short(hi) {
        return None;
    }
    // Invariant: `hi` is short; every length below `lo` is not.
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if short(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(hi)
}

/// The best `k` of a search so far: a few dozen entries, the worst one tracked.
struct TopK<'a> {
    k: usize,
    entries: Vec<(u32, f64)>,
    /// Index of the worst entry once `entries` is full.
    worst: usize,
    index: &'a ClaimIndex,
}

impl TopK<'_> {
    /// Whether (`a`, its score) ranks below (`b`, its score): lower score, or the same
    /// score and a later slug.
    fn below(&self, a: (u32, f64), b: (u32, f64)) -> bool {
        a.1 < b.1 || (a.1 == b.1 && self.index.slug(a.0) > self.index.slug(b.0))
    }

    /// The score a claim must reach to be considered: `-inf` until `k` are held.
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

impl ClaimIndex {
    /// BM25's idf over the store plus [`IDF_PRIOR_DOCS`] documents that hold no query
    /// term: in a store of three claims a term every claim holds is still evidence.
    fn idf(&self, df: f64) -> f64 {
        let n = self.len() as f64 + IDF_PRIOR_DOCS;
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    fn avg_len(&self) -> f64 {
        (self.total_len() as f64 / (self.len() as f64).max(1.0)).max(1.0)
    }

    fn bm25(avg: f64, tf: u32, len: u32, idf: f64) -> f64 {
        let f = tf as f64;
        idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len as f64 / avg))
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
            match self.term_id(t).map(|id| (id, self.df(id))) {
                Some((id, df)) if df > 0 => {
                    let idf = self.idf(df as f64);
                    out.terms.push((id, idf));
                    out.weight += idf;
                }
                _ => out.weight += unseen,
            }
        }
        out
    }

    fn hit(&self, q: &LexQuery, d: DocId, score: f64) -> LexHit {
        let mut matched = 0;
        let mut best = 0f64;
        for (t, idf) in &q.terms {
            if self.tf(d, *t) > 0 {
                matched += 1;
                best = best.max(*idf);
            }
        }
        let w = q.weight.max(f64::MIN_POSITIVE);
        LexHit {
            doc: d,
            score,
            norm: (score / w).min(1.0),
            matched,
            best_term: best / w,
        }
    }

    /// The lexical evidence of one live claim (a zero score when it holds no query term).
    pub fn score(&self, q: &LexQuery, d: DocId) -> Option<LexHit> {
        if !self.is_live(d) {
            return None;
        }
        let (avg, len) = (self.avg_len(), self.doc_len(d));
        let mut s = 0.0;
        for (t, idf) in &q.terms {
            let tf = self.tf(d, *t);
            if tf > 0 {
                s += Self::bm25(avg, tf, len, *idf);
            }
        }
        Some(self.hit(q, d, s))
    }

    /// Split a query's terms: a common term (held by many claims) does not nominate
    /// candidates when the query has a selective one; its share is added to the
    /// candidates the selective terms found. The cost of a query then follows its
    /// selective terms, not the size of the store. Returns (walked, probed).
    fn split(&self, q: &LexQuery) -> (Vec<Weighted>, Vec<Weighted>) {
        let common = self
            .common_min_df
            .max((self.len() as f64 * COMMON_SHARE) as usize);
        let (selective, frequent): (Vec<Weighted>, Vec<Weighted>) = q
            .terms
            .iter()
            .partition(|(t, _)| self.df(*t) as usize <= common);
        if selective.is_empty() {
            (frequent, vec![])
        } else {
            (selective, frequent)
        }
    }

    /// The most a term can add to any claim's score.
    fn upper_bound(&self, avg: f64, term: u32, idf: f64) -> f64 {
        let (mut tf, mut len) = self.delta.bound(term);
        if term < self.base.term_count() {
            let (btf, blen) = self.base.bound(term);
            tf = tf.max(btf);
            len = len.min(blen);
        }
        // Widened by a hair: the bound must never fall below a score computed with the
        // same formula through another rounding.
        Self::bm25(avg, tf, len.min(u32::MAX - 1), idf) * (1.0 + 1e-9) + 1e-12
    }

    /// A claim's score for the walked then probed terms, summed in that order: the
    /// same floating-point sum whichever path found the claim.
    fn full_score(&self, avg: f64, d: DocId, walk: &[Weighted], probe: &[Weighted]) -> f64 {
        let len = self.doc_len(d);
        let mut s = 0.0;
        for (term, idf) in walk.iter().chain(probe) {
            let tf = self.tf(d, *term);
            if tf > 0 {
                s += Self::bm25(avg, tf, len, *idf);
            }
        }
        s
    }

    fn cursor(&self, t: u32) -> Cursor<'_> {
        let (docs, tfs) = if t < self.base.term_count() {
            self.base.postings(t)
        } else {
            (&[][..], &[][..])
        };
        Cursor {
            docs,
            tfs,
            delta: self.delta.postings(t),
            pos: 0,
        }
    }

    /// The best `k` live claims for a prepared query, best first (ties by slug); `keep`
    /// filters candidates (scope, filters) before they compete for a place.
    ///
    /// Dynamic pruning (MaxScore): the walked lists are read together, a claim at a
    /// time in id order. Once `k` candidates are held, the terms whose bounds together
    /// (with every probed term's) cannot lift a claim to the `k`-th score stop
    /// nominating; a claim found only by the others is dropped as soon as its known
    /// share plus the bounds of what is left falls below that score. The answer is
    /// exactly [`ClaimIndex::search_exhaustive`]'s (pinned by a property test).
    pub fn search(&self, q: &LexQuery, k: usize, keep: &dyn Fn(DocId) -> bool) -> Vec<LexHit> {
        if self.is_empty() || k == 0 || q.terms.is_empty() {
            return vec![];
        }
        let avg = self.avg_len();
        let (walk, probe) = self.split(q);
        // Walked terms by bound, smallest first; `below[i]`: the probed terms' bounds
        // plus those of the first `i` walked terms in that order.
        let mut order: Vec<(usize, f64)> = walk
            .iter()
            .enumerate()
            .map(|(i, (t, idf))| (i, self.upper_bound(avg, *t, *idf)))
            .collect();
        order.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut below = Vec::with_capacity(order.len() + 1);
        below.push(
            probe
                .iter()
                .map(|(t, idf)| self.upper_bound(avg, *t, *idf))
                .sum::<f64>(),
        );
        for (_, ub) in &order {
            below.push(below[below.len() - 1] + ub);
        }
        // `at[j]`: where walked term `j` stands in `order`.
        let mut at = vec![0usize; walk.len()];
        for (pos, (j, _)) in order.iter().enumerate() {
            at[*j] = pos;
        }
        let mut lists: Vec<Cursor<'_>> =
            order.iter().map(|(i, _)| self.cursor(walk[*i].0)).collect();
        let idfs: Vec<f64> = order.iter().map(|(i, _)| walk[*i].1).collect();
        // `tfs[i]`: the frequency in the current claim of the walked term at position `i`
        // of `order`, as its probe (below `first`) or its cursor (from `first`) read it.
        let mut tfs = vec![0u32; lists.len()];
        let base_len = self.base_len();
        let mut top = TopK {
            k,
            entries: Vec::with_capacity(k),
            worst: 0,
            index: self,
        };
        // Terms before `first` no longer nominate (their bounds cannot reach the k-th).
        let mut first = 0;
        let lens = self.base.doc_lens();
        let delta_lens = self.delta.lens.as_slice();
        // With one term left nominating: the claim length from which its postings of
        // frequency 1 fall short of the k-th score with every other bound added.
        let mut cut: Option<u32> = None;
        loop {
            if let Some(cut) = cut {
                lists[first].skip_long(cut, lens, delta_lens, base_len);
            }
            let mut doc = u32::MAX;
            for c in &lists[first..] {
                if let Some((d, _)) = c.get() {
                    doc = doc.min(d);
                }
            }
            if doc == u32::MAX {
                break;
            }
            if doc < base_len && self.is_dead(doc) {
                for c in &mut lists[first..] {
                    if c.get().is_some_and(|p| p.0 == doc) {
                        c.pos += 1;
                    }
                }
                continue;
            }
            let len = self.doc_len(doc);
            let mut known = 0.0;
            for (i, c) in lists.iter_mut().enumerate().skip(first) {
                if let Some((_, f)) = c.get().filter(|p| p.0 == doc) {
                    known += Self::bm25(avg, f, len, idfs[i]);
                    c.pos += 1;
                }
            }
            // A claim is dropped only when it falls short by more than rounding.
            let theta = top.threshold();
            let short = |x: f64| short_of(x, theta);
            if short(known + below[first]) {
                continue;
            }
            // The non-nominating terms, largest bound first, while they can still matter.
            let mut dropped = false;
            for i in (0..first).rev() {
                let f = lists[i].seek(doc);
                tfs[i] = f;
                if f > 0 {
                    known += Self::bm25(avg, f, len, idfs[i]);
                }
                if short(known + below[i]) {
                    dropped = true;
                    break;
                }
            }
            if dropped || !keep(doc) {
                continue;
            }
            // Every walked term's frequency was read on the way here: the full score is
            // summed from them in `full_score`'s order (the same floating-point sum).
            for (i, c) in lists.iter().enumerate().skip(first) {
                tfs[i] = c.just_read(doc);
            }
            let mut score = 0.0;
            for (j, (_, idf)) in walk.iter().enumerate() {
                let f = tfs[at[j]];
                if f > 0 {
                    score += Self::bm25(avg, f, len, *idf);
                }
            }
            for (term, idf) in &probe {
                let f = self.tf(doc, *term);
                if f > 0 {
                    score += Self::bm25(avg, f, len, *idf);
                }
            }
            let before = top.threshold();
            top.offer(doc, score);
            let theta = top.threshold();
            if theta == before {
                continue;
            }
            while first < lists.len() && below[first + 1] < theta {
                first += 1;
            }
            if first == lists.len() {
                break;
            }
            if first + 1 == lists.len() {
                cut = long_cut(avg, idfs[first], below[first], theta);
            }
        }
        let mut cands = top.entries;
        cands.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.slug(a.0).cmp(self.slug(b.0)))
        });
        cands.into_iter().map(|(d, s)| self.hit(q, d, s)).collect()
    }

    /// [`ClaimIndex::search`] without pruning: every posting of the walked terms scored.
    /// The reference the pruned search must equal, exactly.
    #[doc(hidden)]
    pub fn search_exhaustive(
        &self,
        q: &LexQuery,
        k: usize,
        keep: &dyn Fn(DocId) -> bool,
    ) -> Vec<LexHit> {
        if self.is_empty() || k == 0 || q.terms.is_empty() {
            return vec![];
        }
        let avg = self.avg_len();
        let (walk, probe) = self.split(q);
        let mut touched: Vec<u32> = Vec::new();
        for (term, _) in &walk {
            let mut c = self.cursor(*term);
            while let Some((d, _)) = c.get() {
                if self.is_live(d) {
                    touched.push(d);
                }
                c.pos += 1;
            }
        }
        touched.sort_unstable();
        touched.dedup();
        let mut cands: Vec<(u32, f64)> = touched
            .into_iter()
            .filter(|d| keep(*d))
            .map(|d| (d, self.full_score(avg, d, &walk, &probe)))
            .collect();
        let order = |a: &(u32, f64), b: &(u32, f64)| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.slug(a.0).cmp(self.slug(b.0)))
        };
        if cands.len() > k {
            cands.select_nth_unstable_by(k - 1, order);
            cands.truncate(k);
        }
        cands.sort_by(order);
        cands.into_iter().map(|(d, s)| self.hit(q, d, s)).collect()
    }

    /// The best `k` slugs for a query with their BM25 scores, best first.
    pub fn search_text(
        &self,
        query: &str,
        k: usize,
        keep: &dyn Fn(DocId) -> bool,
    ) -> Vec<(String, f64)> {
        self.search(&self.prepare(query), k, keep)
            .into_iter()
            .map(|h| (self.slug(h.doc).to_string(), h.score))
            .collect()
    }
}

#[cfg(test)]
mod gallop_tests {
    use super::gallop;

    #[test]
    fn gallop_counts_the_prefix_for_every_split_point() {
        for len in 0..70usize {
            let xs: Vec<u32> = (0..len as u32).map(|i| i * 3).collect();
            for target in 0..(len as u32 * 3 + 2) {
                let want = xs.iter().take_while(|x| **x < target).count();
                assert_eq!(
                    gallop(&xs, |x| *x < target),
                    want,
                    "len {len} target {target}"
                );
            }
        }
    }
}
