//! Memorize, one claim or a batch: a new claim, a supersession, a `would_downgrade` or
//! label-collision refusal, or an `unchanged` no-op. A batch is planned item by item in
//! order (each item sees the versions the items before it wrote), embedded in one call
//! and committed in one redb transaction, one act per written claim: the same outcomes,
//! versions and acts as memorizing the items one by one, for one fsync.

use std::collections::HashMap;

mod plan;

use super::ahead::Derivation;
use super::share::SharedOp;
use super::tables::{CLAIMS, HISTORY, META, VECTORS, VEC_KEYS};
use super::{embed_text, encode, to_bytes, Store};
use crate::claim::{Claim, ClaimState, MemorizeInput, MemorizeOutcome};
use crate::error::StoreError;
use crate::index::ClaimMeta;
use crate::index::Terms;
use plan::{outcome, Plan, Planned, Seen};
use redb::ReadableDatabase;

/// A batch at least this large has its vectors added to the index together.
const PARALLEL_INDEX_BATCH: usize = 32;
/// A batch of at least this many claims embeds and tokenizes on a thread of its own while
/// its transaction is built. Below it the overlap does not pay for the thread: at
/// 100 000 claims, batches of 100 wrote ~25 % slower with it (`memorize_many` of 100
/// 17 498 / 19 555 → 14 304 / 13 131 claims/s while the settler ran beside them).
const OVERLAP_BATCH: usize = 512;
/// A batch of at least this many claims is a bulk write (an import): it holds the vector
/// settler back for [`BULK_HOLD`], so the next batch has both cores, and the graph
/// catches up once the batches stop coming.
const BULK_BATCH: usize = 512;
const BULK_HOLD: std::time::Duration = std::time::Duration::from_secs(1);

impl Store {
    /// New claim, supersession, `would_downgrade` refusal, or `unchanged` no-op.
    pub fn memorize(&mut self, input: MemorizeInput) -> Result<MemorizeOutcome, StoreError> {
        self.memorize_many(vec![input])?
            .pop()
            .expect("one outcome per input")
    }

    /// Memorize several claims in one transaction. The outer error (storage, embedding)
    /// means nothing was written; otherwise there is one result per input, in order, each
    /// what [`Store::memorize`] would have returned for it had the inputs been memorized
    /// one by one: a refused item (invalid, `would_downgrade`, label collision) is an
    /// `Err` in its place and the others are still written. A slug written twice in the
    /// batch is superseded in order.
    pub fn memorize_many(
        &mut self,
        inputs: Vec<MemorizeInput>,
    ) -> Result<Vec<Result<MemorizeOutcome, StoreError>>, StoreError> {
        self.memorize_many_ahead(inputs, Vec::new())
    }

    /// [`Store::memorize_many`], the inputs' vectors and terms worked out ahead
    /// ([`Derivation::of`]), `ahead[i]` for `inputs[i]` (a shorter list leaves the rest
    /// without). Each is taken only for the label, text and model it was made from;
    /// every other input's are worked out here. The outcomes are those of
    /// [`Store::memorize_many`] on the inputs alone.
    pub fn memorize_many_ahead(
        &mut self,
        inputs: Vec<MemorizeInput>,
        ahead: Vec<Option<Derivation>>,
    ) -> Result<Vec<Result<MemorizeOutcome, StoreError>>, StoreError> {
        // Plan: every live version an item sees is redb's or an earlier item's (by its
        // place among the plans).
        let mut written: HashMap<String, usize> = HashMap::new();
        let mut results: Vec<Result<usize, StoreError>> = Vec::with_capacity(inputs.len());
        let mut unchanged: Vec<(usize, Claim)> = Vec::new();
        // Sized at once: a plan is two claims wide, and grown by doubling a batch of
        // thousands copied and faulted its plans in a dozen times.
        let mut plans: Vec<Planned> = Vec::with_capacity(inputs.len());
        // One read transaction for every look-up of the batch.
        let rx = self.db.begin_read()?;
        let seen = Seen {
            claims: rx.open_table(CLAIMS)?,
            history: rx.open_table(HISTORY)?,
        };
        let mut ahead = ahead.into_iter();
        for (i, input) in inputs.into_iter().enumerate() {
            let derived = ahead.next().flatten();
            match self.plan(input, derived, &written, &plans, &seen)? {
                Plan::Write(plan) => {
                    let plan = *plan;
                    written.insert(plan.claim.slug.clone(), plans.len());
                    results.push(Ok(plans.len()));
                    plans.push(plan);
                }
                Plan::Unchanged(claim) => {
                    results.push(Ok(usize::MAX));
                    unchanged.push((i, *claim));
                }
                Plan::Refused(e) => results.push(Err(e)),
            }
        }
        drop(seen);
        drop(rx);
        let ahead: Vec<Option<Derivation>> = plans.iter_mut().map(|p| p.ahead.take()).collect();
        self.commit_plans(&plans, ahead)?;
        let mut unchanged = unchanged.into_iter();
        let mut plans = plans.into_iter();
        Ok(results
            .into_iter()
            .map(|r| match r {
                Ok(usize::MAX) => Ok(MemorizeOutcome::Unchanged {
                    claim: unchanged.next().expect("planned unchanged").1,
                }),
                Ok(_) => Ok(outcome(plans.next().expect("planned write"))),
                Err(e) => Err(e),
            })
            .collect())
    }

    /// Write every planned version, its history entry, vector and act in one
    /// transaction; then the in-memory indexes, in order. `ahead` gives the vectors and
    /// terms worked out before (`ahead[i]` for `plans[i]`); a large batch indexed
    /// together has the rest worked out on a thread of its own while this one builds the
    /// transaction (they depend on the claims alone), so the embedding on every core and
    /// redb's writes overlap; its commit then overlaps its terms going into the claim
    /// index ([`Store::commit_upserting`]).
    fn commit_plans(
        &mut self,
        plans: &[Planned],
        ahead: Vec<Option<Derivation>>,
    ) -> Result<(), StoreError> {
        if plans.is_empty() {
            return Ok(());
        }
        let embedder = self.write_embedder();
        let embedder = embedder.as_deref();
        let together = plans.len() >= PARALLEL_INDEX_BATCH && self.vindex.is_some();
        let to_derive = plans.len() - ahead.iter().flatten().count();
        // Shared, so the closure stays `Copy`: a thread that cannot be spawned drops the
        // one it was given, and the work is done here with another.
        let ahead = std::sync::Mutex::new(Some(ahead));
        let ahead = &ahead;
        let derive = move || {
            let ahead = ahead
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .unwrap_or_default();
            derive(embedder, plans, together, ahead)
        };
        let numbers = self.numbers();
        let (keys, derived, tx) = if together && to_derive >= OVERLAP_BATCH {
            std::thread::scope(|scope| {
                let job = std::thread::Builder::new()
                    .name("memorize-derive".into())
                    .spawn_scoped(scope, derive);
                match job {
                    Ok(job) => self.write_plans(plans, numbers, || {
                        job.join().unwrap_or_else(|_| {
                            Err(StoreError::Embedding(
                                "the embedding thread panicked".into(),
                            ))
                        })
                    }),
                    // No thread to spare: the same work on this one, in turn.
                    Err(_) => self.write_plans(plans, numbers, derive),
                }
            })?
        } else {
            self.write_plans(plans, numbers, derive)?
        };
        let Derived { vectors, terms } = derived;
        match (&vectors, terms) {
            (Some(vs), Some(terms)) => {
                self.commit_upserting(plans, tx, &keys, terms, numbers)?;
                self.index_vectors_batch(plans, &keys, vs)
            }
            _ => {
                self.commit(tx, plans.len(), numbers)?;
                for (i, p) in plans.iter().enumerate() {
                    let (new, old) = keys[i];
                    let vector = vectors.as_ref().map(|vs| vs[i].as_slice());
                    self.index_live(&p.claim, new.map(|k| (k, old)), vector)?;
                }
                Ok(())
            }
        }
    }

    /// The transaction of [`Store::commit_plans`], built and not yet committed: claims,
    /// history, acts and the team's outbox first, then the vectors `derived` gives. When
    /// any of it fails (the embedding included) nothing is written and the act,
    /// vector-key and outbox numbers it took (from `numbers`) are given back, so the log
    /// never skips one (a failed commit gives them back too: [`Store::commit`]). Each
    /// plan's (new vector key, the key it replaces), what `derived` gave, and the
    /// transaction.
    fn write_plans(
        &mut self,
        plans: &[Planned],
        numbers: Numbers,
        derived: impl FnOnce() -> Result<Derived, StoreError>,
    ) -> Result<Written, StoreError> {
        let written = self.write_plans_once(plans, derived);
        if written.is_err() {
            self.give_back(numbers);
        }
        written
    }

    /// The act, vector-key and outbox numbers a transaction starts from.
    fn numbers(&self) -> Numbers {
        (self.next_act, self.next_key, self.next_outbox)
    }

    /// The numbers a transaction that failed had taken, given back.
    fn give_back(&mut self, numbers: Numbers) {
        (self.next_act, self.next_key, self.next_outbox) = numbers;
    }

    /// Commit a batch's transaction (`numbers` given back if it fails); a bulk batch
    /// then holds the vector settler back.
    fn commit(
        &mut self,
        tx: redb::WriteTransaction,
        batch: usize,
        numbers: Numbers,
    ) -> Result<(), StoreError> {
        if let Err(e) = tx.commit() {
            self.give_back(numbers);
            return Err(e.into());
        }
        self.committed(batch);
        Ok(())
    }

    /// A bulk write (an import) has written its last batch: a large backlog of fresh
    /// vectors is parted into cells now, before this returns (~0.2 s for 100 000 on two
    /// cores), rather than once the hold on the settler ends, so the first seeks after
    /// the import read a tenth of it (`vector/cells.rs`).
    pub fn bulk_written(&self) {
        if let Some(ix) = &self.vindex {
            ix.part_fresh();
        }
    }

    fn committed(&self, batch: usize) {
        if batch >= BULK_BATCH {
            if let Some(ix) = &self.vindex {
                ix.hold_settling(BULK_HOLD);
            }
        }
    }

    /// Commit a batch indexed together while its terms go into the claim index: the
    /// commit mostly waits on the disk (~20 ms at 4 096 claims) and the terms take a core
    /// for about as long, so the two overlap. Nothing reads the claim index meanwhile
    /// (the store is this thread's), and if the commit fails the batch's terms are taken
    /// out again ([`Store::unindex_terms`]): the index never holds what redb does not.
    fn commit_upserting(
        &mut self,
        plans: &[Planned],
        tx: redb::WriteTransaction,
        keys: &[VectorKeys],
        terms: Vec<Terms>,
        numbers: Numbers,
    ) -> Result<(), StoreError> {
        let (give, take) = std::sync::mpsc::sync_channel::<redb::WriteTransaction>(1);
        let (committed, upserted) = std::thread::scope(|scope| {
            let job = std::thread::Builder::new()
                .name("memorize-commit".into())
                .spawn_scoped(scope, move || take.recv().ok().map(|tx| tx.commit()));
            let unsent = match &job {
                Ok(_) => give.send(tx).err().map(|back| back.0),
                Err(_) => Some(tx),
            };
            match (unsent, job) {
                (None, Ok(job)) => {
                    self.upsert_terms_batch(plans, keys, terms);
                    match job.join() {
                        Ok(Some(done)) => (done, true),
                        Ok(None) => unreachable!("the transaction was sent to it"),
                        // A panic in redb's commit goes on as it would have here.
                        Err(panic) => std::panic::resume_unwind(panic),
                    }
                }
                // No thread to spare (or it is gone): committed here, then the terms.
                (unsent, _) => match unsent.expect("unsent without a thread").commit() {
                    Ok(()) => {
                        self.upsert_terms_batch(plans, keys, terms);
                        (Ok(()), true)
                    }
                    Err(e) => (Err(e), false),
                },
            }
        });
        match committed {
            Ok(()) => {
                self.committed(plans.len());
                Ok(())
            }
            Err(e) => {
                if upserted {
                    self.unindex_terms(plans, keys);
                }
                self.give_back(numbers);
                Err(e.into())
            }
        }
    }

    fn write_plans_once(
        &mut self,
        plans: &[Planned],
        derived: impl FnOnce() -> Result<Derived, StoreError>,
    ) -> Result<Written, StoreError> {
        let has_model = self.write_embedder().is_some();
        let mut keys: Vec<VectorKeys> = Vec::with_capacity(plans.len());
        let mut batch_keys: HashMap<&str, u64> = HashMap::new();
        let mut acts = Vec::with_capacity(plans.len());
        for p in plans {
            let new_key = has_model.then(|| {
                self.next_key += 1;
                self.next_key - 1
            });
            let old_key = p.live.as_ref().and_then(|_| {
                batch_keys
                    .get(p.claim.slug.as_str())
                    .copied()
                    .or_else(|| self.index.key_of(&p.claim.slug))
            });
            if let Some(k) = new_key {
                batch_keys.insert(&p.claim.slug, k);
            }
            keys.push((new_key, old_key));
            acts.push(self.new_act(
                p.kind,
                &p.claim.slug,
                &p.actor,
                p.live.as_ref().map(|l| l.content_hash.clone()),
                Some(p.claim.content_hash.clone()),
                None,
            ));
        }
        let tx = self.db.begin_write()?;
        {
            let mut claims = tx.open_table(CLAIMS)?;
            let mut hist = tx.open_table(HISTORY)?;
            for (i, p) in plans.iter().enumerate() {
                claims.insert(p.claim.slug.as_str(), encode(&p.claim).as_slice())?;
                if let Some(prev) = &p.live {
                    let mut out = prev.clone();
                    out.state = ClaimState::Outdated;
                    out.outdated_reason = Some("superseded".to_string());
                    out.outdated_at = Some(acts[i].at);
                    hist.insert((prev.slug.as_str(), prev.version), encode(&out).as_slice())?;
                }
            }
        }
        self.record_acts(&tx, acts)?;
        if self.share.is_some() {
            for p in plans {
                let claim = Box::new(p.claim.clone());
                self.queue_shared(&tx, SharedOp::Write { claim })?;
            }
        }
        let derived = derived()?;
        if let Some(vs) = &derived.vectors {
            let mut vt = tx.open_table(VECTORS)?;
            let mut vk = tx.open_table(VEC_KEYS)?;
            for (i, p) in plans.iter().enumerate() {
                if let (Some(key), Some(v)) = (keys[i].0, vs.get(i)) {
                    if let Some(ok) = keys[i].1 {
                        vt.remove(ok)?;
                    }
                    vt.insert(key, to_bytes(v).as_slice())?;
                    vk.insert(p.claim.slug.as_str(), key)?;
                }
            }
            tx.open_table(META)?
                .insert("next_key", self.next_key.to_string().as_str())?;
        }
        Ok((keys, derived, tx))
    }

    /// What [`Store::index_live`] does to the claim index per version, for a batch
    /// indexed together: each plan's terms in, in order.
    fn upsert_terms_batch(&mut self, plans: &[Planned], keys: &[VectorKeys], terms: Vec<Terms>) {
        for ((p, (new, _)), terms) in plans.iter().zip(keys).zip(terms) {
            let key = new.or_else(|| self.index.key_of(&p.claim.slug));
            self.index
                .upsert_terms(&p.claim.slug, terms, ClaimMeta::of(&p.claim), key);
        }
    }

    /// [`Store::upsert_terms_batch`] undone, last plan first, after its commit failed:
    /// each slug back to the version that was live before it (with that version's key),
    /// or out of the index when it had none.
    fn unindex_terms(&mut self, plans: &[Planned], keys: &[VectorKeys]) {
        for (p, (_, old)) in plans.iter().zip(keys).rev() {
            match &p.live {
                Some(prev) => self.index.upsert_terms(
                    &prev.slug,
                    Terms::of(&prev.label, &prev.text),
                    ClaimMeta::of(prev),
                    *old,
                ),
                None => self.index.remove(&p.claim.slug),
            }
        }
    }

    /// After a batch indexed together is committed (its terms in): what
    /// [`Store::index_live`] does to the vector index per version, the vectors added
    /// together, and one act noted per version. A key written and replaced within the
    /// batch never enters the vector index.
    fn index_vectors_batch(
        &mut self,
        plans: &[Planned],
        keys: &[VectorKeys],
        vectors: &[Vec<f32>],
    ) -> Result<(), StoreError> {
        let replaced: std::collections::HashSet<u64> =
            keys.iter().filter_map(|(_, old)| *old).collect();
        let mut adds: Vec<(u64, &[f32])> = Vec::with_capacity(plans.len());
        for (i, (new, old)) in keys.iter().enumerate() {
            if let (Some(ok), Some(ix)) = (old, self.vindex.as_mut()) {
                ix.remove(*ok)?;
            }
            if let Some(k) = new.filter(|k| !replaced.contains(k)) {
                adds.push((k, &vectors[i]));
            }
        }
        if let Some(ix) = self.vindex.as_mut() {
            ix.add_many(&adds)?;
        }
        let share = if plans.len() >= BULK_BATCH {
            super::BULK_SAVE_SHARE
        } else {
            super::SAVE_SHARE
        };
        self.note_acts(plans.len(), share)
    }
}

/// A planned version's vector key, when it has a vector, and the key of the live
/// version it replaces.
type VectorKeys = (Option<u64>, Option<u64>);

/// The next act, vector-key and outbox numbers (see [`Store::write_plans`]).
type Numbers = (u64, u64, u64);

/// A batch's transaction built, not yet committed: each plan's [`VectorKeys`], what was
/// derived, and the transaction.
type Written = (Vec<VectorKeys>, Derived, redb::WriteTransaction);

/// What a batch's claims give without the store: their vectors (`None` without a model)
/// and, for a batch indexed together, their terms.
struct Derived {
    vectors: Option<Vec<Vec<f32>>>,
    terms: Option<Vec<Terms>>,
}

/// [`Derived`] for `plans`: what `ahead` gives (`ahead[i]` for `plans[i]`, each fitting
/// its plan), the other vectors in one embedder call, the terms when `terms`.
fn derive(
    embedder: Option<&dyn crate::embed::Embedder>,
    plans: &[Planned],
    terms: bool,
    ahead: Vec<Option<Derivation>>,
) -> Result<Derived, StoreError> {
    let mut vectors: Vec<Option<Vec<f32>>> = Vec::with_capacity(plans.len());
    let mut all_terms: Vec<Option<Terms>> = Vec::with_capacity(plans.len());
    let mut ahead = ahead.into_iter();
    for _ in plans {
        let (v, t) = match ahead.next().flatten() {
            Some(d) => {
                let (v, t) = d.into_parts();
                (v, Some(t))
            }
            None => (None, None),
        };
        vectors.push(v);
        all_terms.push(t);
    }
    let vectors = match embedder {
        None => None,
        Some(e) => {
            let missing: Vec<usize> = (0..plans.len()).filter(|&i| vectors[i].is_none()).collect();
            let texts: Vec<String> = missing
                .iter()
                .map(|&i| embed_text(&plans[i].claim.label, &plans[i].claim.text))
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vecs = if refs.is_empty() {
                Vec::new()
            } else {
                e.embed(&refs)
                    .map_err(|e| StoreError::Embedding(e.to_string()))?
            };
            if vecs.len() != missing.len() {
                return Err(StoreError::Embedding(format!(
                    "the model returned {} vectors for {} texts",
                    vecs.len(),
                    missing.len()
                )));
            }
            for (i, v) in missing.into_iter().zip(vecs) {
                vectors[i] = Some(v);
            }
            Some(vectors.into_iter().flatten().collect())
        }
    };
    let terms = terms.then(|| {
        let missing: Vec<usize> = (0..plans.len())
            .filter(|&i| all_terms[i].is_none())
            .collect();
        let claims: Vec<&Claim> = missing.iter().map(|&i| &plans[i].claim).collect();
        for (i, t) in missing.into_iter().zip(Terms::of_many(&claims)) {
            all_terms[i] = Some(t);
        }
        all_terms.into_iter().flatten().collect()
    });
    Ok(Derived { vectors, terms })
}
