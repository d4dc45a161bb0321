//! Strays: vectors of a batch just inserted that no search for their own vector finds,
//! though the graph holds them (usearch's concurrent inserts strand a few), found and
//! inserted again alone.

use super::super::locks::read;
use super::{Contexts, Graph, Positions, CHECK_EVERY_BELOW, FEW_LINKS};
use crate::error::StoreError;

impl Graph {
    /// The keys among `keys` (a batch just inserted) that a search for their own
    /// vector does not find, though the index holds them. usearch's inserts on several
    /// threads strand a few so (its issue 735: a vector found through an upper level
    /// before its base links are made gives a concurrent insert a dead end): a lone
    /// vector with a link or two, or a few inserted one after another linked only to
    /// each other. Its pruning leaves a rare outlier so on any thread count.
    ///
    /// Suspected: a vector no path of base links reaches from those held before the
    /// batch (`was_empty`: from the batch's top-level vector that reaches the most, as
    /// the entry is one of them), one with at most [`FEW_LINKS`] base links, and one no
    /// other batch vector links to, nor any older one among those it links to; in a
    /// small graph ([`CHECK_EVERY_BELOW`]), every one. Each suspect is confirmed by a
    /// search for its stored vector. The graph must not change meanwhile (the caller
    /// holds the settling lock, or builds it alone); the searches take contexts like
    /// any other.
    pub(in crate::vector) fn strays(
        &self,
        keys: &[u64],
        was_empty: bool,
        contexts: &Contexts,
    ) -> Vec<u64> {
        if keys.is_empty() || self.index.size() < 2 {
            return vec![];
        }
        let index = &self.index;
        let at: Positions = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        // Per batch vector: its base links, and how many batch vectors link to it.
        let mut links = vec![0u32; keys.len()];
        let mut linked = vec![0u32; keys.len()];
        let mut out = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            self.links(*key, &mut out);
            links[i] = out.len() as u32;
            for n in &out {
                if let Some(&j) = at.get(n) {
                    linked[j] += 1;
                }
            }
        }
        // Whether a vector held before the batch links to it (looked for among those it
        // links to; a graph built from empty has none).
        let from_old = |key: &u64| {
            !was_empty
                && index
                    .neighbors(*key, 0)
                    .any(|n| !at.contains_key(&n) && index.neighbors(n, 0).any(|b| b == *key))
        };
        let from_old = crate::par::map(keys, 4096, from_old)
            .unwrap_or_else(|| keys.iter().map(from_old).collect());
        let reached = if was_empty {
            self.reach_from_top(keys, &at)
        } else {
            let from: Vec<usize> = (0..keys.len()).filter(|i| from_old[*i]).collect();
            self.reach(keys, &at, from)
        };
        let weak = |i: usize| {
            links[i] as usize <= FEW_LINKS || (linked[i] == 0 && !from_old[i]) || !reached[i]
        };
        let small = index.size() <= CHECK_EVERY_BELOW;
        let suspects: Vec<u64> = (0..keys.len())
            .filter(|i| small || weak(*i))
            .map(|i| keys[i])
            .collect();
        let stray = |key: &u64| !contexts.with(|| self.finds_itself(*key));
        let flags = crate::par::map(&suspects, 256, stray)
            .unwrap_or_else(|| suspects.iter().map(stray).collect());
        suspects
            .iter()
            .zip(flags)
            .filter_map(|(k, stray)| stray.then_some(*k))
            .collect()
    }

    /// The base links of `key`, into `out`.
    fn links(&self, key: u64, out: &mut Vec<u64>) {
        let mut from = self.index.neighbors(key, 0);
        out.clear();
        out.resize(from.total(), 0);
        let n = from.drain_into(out);
        out.truncate(n);
    }

    /// Which of `keys` the ones at `from` reach by base links through the batch.
    fn reach(&self, keys: &[u64], at: &Positions, from: Vec<usize>) -> Vec<bool> {
        let mut reached = vec![false; keys.len()];
        for i in &from {
            reached[*i] = true;
        }
        let mut queue = from;
        let mut out = Vec::new();
        while let Some(i) = queue.pop() {
            self.links(keys[i], &mut out);
            for n in &out {
                if let Some(&j) = at.get(n) {
                    if !reached[j] {
                        reached[j] = true;
                        queue.push(j);
                    }
                }
            }
        }
        reached
    }

    /// What the batch's top-level vector that reaches the most of it reaches (the first
    /// to reach half is taken: the entry, one of them, reaches nearly all).
    fn reach_from_top(&self, keys: &[u64], at: &Positions) -> Vec<bool> {
        let levels: Vec<usize> = keys.iter().map(|k| self.index.level_of_key(*k)).collect();
        let top = levels.iter().copied().max().unwrap_or(0);
        let mut best = (0, vec![false; keys.len()]);
        for i in (0..keys.len()).filter(|i| levels[*i] == top) {
            let reached = self.reach(keys, at, vec![i]);
            let count = reached.iter().filter(|r| **r).count();
            if count > best.0 {
                best = (count, reached);
            }
            if count * 2 >= keys.len() {
                break;
            }
        }
        best.1
    }

    /// Whether a search for the stored vector of `key` finds it (or a vector the same:
    /// a twin found first answers as well). A key not held, or a failed search, is not
    /// taken for a stray.
    fn finds_itself(&self, key: u64) -> bool {
        let Some(row) = self.row(key) else {
            return true;
        };
        match self.search_row(&row, 1) {
            Ok(m) => m
                .first()
                .is_some_and(|(k, sim)| *k == key || *sim >= 1.0 - 1e-6),
            Err(_) => true,
        }
    }

    /// Insert each of `strays` again, one at a time with nothing else inserting: its
    /// slot is reused and it links as a lone insert does. Returns how many find
    /// themselves now.
    pub(in crate::vector) fn relink(&mut self, strays: &[u64]) -> Result<usize, StoreError> {
        for &key in strays {
            let Some(row) = self.row(key) else { continue };
            let bound = read(&self.bounds).get(key);
            // The removed slot is the one the add reuses: no room is needed.
            self.remove(key)?;
            self.add_row(key, &row, bound)?;
        }
        Ok(strays.iter().filter(|k| self.finds_itself(**k)).count())
    }
}
