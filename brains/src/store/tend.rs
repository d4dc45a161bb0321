//! Tending over a whole store: every live claim's few nearest by words and by
//! embedding (the claim index's search and the vector graph's links, one lookup per
//! claim, on every core), each pair judged once by `crate::tend`, and the pairs grouped
//! into clusters that say the same thing and disagreements. Reads only: joining a
//! cluster is the caller's act.

use std::collections::{BTreeMap, HashMap};

use redb::ReadableDatabase;

use super::similar::CANDIDATES;
use super::Store;
use crate::claim::Claim;
use crate::error::StoreError;
use crate::index::DocId;
use crate::tend::{self, Calibration, Judgement, Member, Tending};

/// Below this many items a step runs on the caller's thread alone.
const PARALLEL_MIN: usize = 256;

/// A pair of claims (their places in the slug order, the first before the second) and
/// the cosine of their embeddings when the store has a model.
type Candidate = (usize, usize, Option<f64>);

/// The second claim of a pair and the pair's cosine, under its first claim.
type Other = (usize, Option<f64>);

/// A tending pass taken in steps ([`Store::tend_begin`], [`Store::tend_find`] as many
/// times as it takes, [`TendWork::judge`], [`Store::tend_group`]), so that a caller
/// holding the store for each step lets writes and reads in between: over 100 000
/// claims the whole pass takes seconds, a step a fraction of one. Claims written or
/// taken out between steps are not in this pass (the next one sees them).
#[derive(Debug)]
pub struct TendWork {
    cal: Calibration,
    /// The live claims when the pass began, by slug.
    members: Vec<Member>,
    /// A member's place, by slug.
    places: HashMap<String, usize>,
    /// The pairs found so far, in slug order, each found from one side at least.
    pairs: Vec<Candidate>,
    /// The first member whose nearest are not found yet.
    next: usize,
    /// Each pair found, judged.
    judged: BTreeMap<(usize, usize), Judgement>,
}

impl TendWork {
    /// Every member's nearest found: the pass is ready to judge.
    pub fn found_all(&self) -> bool {
        self.next >= self.members.len()
    }

    /// Judge each pair found once (needs no store: the texts were read at the start),
    /// on every core, grouped by the pair's first claim, which is read once.
    pub fn judge(&mut self) -> Result<(), StoreError> {
        let mut pairs = std::mem::take(&mut self.pairs);
        pairs.sort_by_key(|p| (p.0, p.1));
        pairs.dedup_by(|x, y| (x.0, x.1) == (y.0, y.1));
        let mut by_first: Vec<(usize, Vec<Other>)> = Vec::new();
        for (a, b, cos) in pairs {
            match by_first.last_mut() {
                Some((first, list)) if *first == a => list.push((b, cos)),
                _ => by_first.push((a, vec![(b, cos)])),
            }
        }
        let (members, cal) = (&self.members, &self.cal);
        let judged = crate::par::map(&by_first, PARALLEL_MIN, |(a, list)| {
            let first = tend::read(&members[*a].label, &members[*a].text);
            list.iter()
                .map(|&(b, cos)| {
                    let second = tend::read(&members[b].label, &members[b].text);
                    ((*a, b), tend::judge_read(&first, &second, cos, cal))
                })
                .collect::<Vec<_>>()
        })
        .ok_or_else(panicked)?;
        self.judged = judged.into_iter().flatten().collect();
        Ok(())
    }
}

impl Store {
    /// Go over every live claim once and judge it against its few nearest claims (by
    /// words and, with a model, by embedding, as [`Store::similar_scored`] finds a new
    /// claim's): the groups that say the same thing under different labels, and the
    /// pairs that disagree. The thresholds are those calibrated for this store's model
    /// ([`Calibration::for_model`]). No claim is compared with all the others: one
    /// candidate lookup per claim, then each pair found judged once, both on every
    /// core. Reads only. The whole pass in one call; a caller that shares the store
    /// takes it in steps ([`TendWork`]).
    pub fn tend_candidates(&self) -> Result<Tending, StoreError> {
        let mut work = self.tend_begin()?;
        while !work.found_all() {
            self.tend_find(&mut work, usize::MAX)?;
        }
        work.judge()?;
        self.tend_group(&work)
    }

    /// The first step of a pass: the live claims, read once.
    pub fn tend_begin(&self) -> Result<TendWork, StoreError> {
        let cal = Calibration::for_model(self.opts.embedder.as_ref().map(|e| e.id()));
        let mut claims = self.live_claims()?;
        claims.sort_by(|a, b| a.slug.cmp(&b.slug));
        let members: Vec<Member> = claims.into_iter().map(member).collect();
        let places = members
            .iter()
            .enumerate()
            .map(|(i, m)| (m.slug.clone(), i))
            .collect();
        Ok(TendWork {
            cal,
            members,
            places,
            pairs: Vec::new(),
            next: 0,
            judged: BTreeMap::new(),
        })
    }

    /// Find the nearest of the next `n` members (all of them at most), on every core.
    /// A member taken out since the pass began has none; one written since is no
    /// member. Nothing of `work` changes unless the step succeeds.
    pub fn tend_find(&self, work: &mut TendWork, n: usize) -> Result<(), StoreError> {
        let end = work.next.saturating_add(n).min(work.members.len());
        let step = &work.members[work.next..end];
        let found = crate::par::map(step, PARALLEL_MIN, |m| self.nearest_of(m, &work.places))
            .ok_or_else(panicked)?;
        let mut pairs = Vec::new();
        for f in found {
            pairs.extend(f?);
        }
        work.pairs.extend(pairs);
        work.next = end;
        Ok(())
    }

    /// The last step: join restatements into clusters by complete link (a pair two
    /// clusters would join that was never judged is judged now, with its cosine read
    /// from the store), and list the disagreements.
    pub fn tend_group(&self, work: &TendWork) -> Result<Tending, StoreError> {
        let (members, cal) = (&work.members, &work.cal);
        let rx = self.db.begin_read()?;
        tend::group(cal.mode, members, work.judged.clone(), |i, j| {
            let cosine = self.cosine_of_pair(&rx, &members[i].slug, &members[j].slug)?;
            Ok(tend::judge_with(
                side(&members[i]),
                side(&members[j]),
                cosine,
                cal,
            ))
        })
    }

    /// One claim's nearest (other live claims), as candidate pairs in slug order: the
    /// few nearest by words (the claim index's search, as [`Store::similar_scored`]
    /// finds them) and by embedding. The latter are taken from the links the vector
    /// graph gave the claim's vector (its near neighbours, no search needed: a search
    /// per claim was half the pass), the nearest few of them by the graph's similarity;
    /// a vector not settled into the graph yet is searched for. Cosines are exact, from
    /// the stored vectors.
    fn nearest_of(
        &self,
        m: &Member,
        index: &HashMap<String, usize>,
    ) -> Result<Vec<Candidate>, StoreError> {
        let ix = &self.index;
        let (Some(&me), Some(doc)) = (index.get(m.slug.as_str()), ix.doc(&m.slug)) else {
            return Ok(Vec::new());
        };
        let keep = |d: DocId| d != doc;
        let whole = format!("{} {}", m.label, m.text);
        let mut docs: Vec<DocId> = ix
            .search(&ix.prepare(&whole), CANDIDATES, &keep)
            .into_iter()
            .map(|h| h.doc)
            .collect();
        let rx = self.db.begin_read()?;
        let mut cosines = HashMap::new();
        let vectors = self.vindex.as_ref().zip(ix.key(doc));
        if let Some(((vi, key), qv)) = vectors.zip(self.stored_vector(&rx, doc)?) {
            let near: Vec<DocId> = match vi.linked(key) {
                Some(keys) => {
                    let mut by: Vec<(DocId, f32)> = keys
                        .into_iter()
                        .filter_map(|k| Some((ix.doc_of_key(k)?, vi.similarity(k, &qv)?)))
                        .filter(|(d, _)| keep(*d))
                        .collect();
                    by.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                    by.into_iter().take(CANDIDATES).map(|(d, _)| d).collect()
                }
                None => vi
                    .search_all(&qv, CANDIDATES + 1)?
                    .into_iter()
                    .filter_map(|(k, _)| ix.doc_of_key(k))
                    .filter(|d| keep(*d))
                    .collect(),
            };
            for d in near {
                if !docs.contains(&d) {
                    docs.push(d);
                }
            }
            cosines = self.stored_cosines(&rx, &qv, docs.iter().copied())?;
        }
        Ok(docs
            .into_iter()
            .filter_map(|d| {
                let other = *index.get(ix.slug(d))?;
                (other != me).then(|| (me.min(other), me.max(other), cosines.get(&d).copied()))
            })
            .collect())
    }

    /// The cosine of two live claims' stored vectors, when both have one.
    fn cosine_of_pair(
        &self,
        rx: &redb::ReadTransaction,
        a: &str,
        b: &str,
    ) -> Result<Option<f64>, StoreError> {
        if self.vindex.is_none() {
            return Ok(None);
        }
        let (Some(da), Some(db)) = (self.index.doc(a), self.index.doc(b)) else {
            return Ok(None);
        };
        let (Some(va), Some(vb)) = (self.stored_vector(rx, da)?, self.stored_vector(rx, db)?)
        else {
            return Ok(None);
        };
        Ok(Some(f64::from(crate::vector::cosine(&va, &vb))))
    }
}

fn side(m: &Member) -> tend::Side<'_> {
    tend::Side {
        label: &m.label,
        text: &m.text,
    }
}

fn panicked() -> StoreError {
    StoreError::Internal("a tending thread panicked".into())
}

fn member(c: Claim) -> Member {
    Member {
        slug: c.slug,
        label: c.label,
        text: c.text,
        strength: c.strength,
        created: c.created,
    }
}
