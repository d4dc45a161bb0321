//! Opening a store: create the tables, load the in-memory maps, and bring the derived
//! vector index in step with redb (re-embed, repair or rebuild).

use std::collections::HashMap;
use std::path::Path;

use crate::index::{ClaimIndex, Prepared};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata};

use super::repair::Repaired;
use super::tables::{ACTS, CLAIMS, HISTORY, KV, META, VECTORS, VEC_KEYS};
use super::{
    decode, embed_text, fault, from_bytes, snapshot, to_bytes, OpenReport, Store, StoreOptions,
    DB_CACHE_BYTES, DB_FILE, EMBED_PROGRESS_EVERY, REBUILD_CHUNK, SCHEMA_VERSION,
};
use crate::claim::{Act, ActKind, Claim};
use crate::error::StoreError;
use crate::progress::OpenPhase;
use crate::vector::VectorIndex;

/// Vectors read at a time while a graph is built: the queue before the inserting cores
/// holds a few chunks, a few megabytes.
const BUILD_CHUNK: usize = 1024;

impl Store {
    /// Open or create the store in `dir`. Refuses a store another process holds.
    pub fn open(dir: &Path, opts: StoreOptions) -> Result<(Store, OpenReport), StoreError> {
        let started = std::time::Instant::now();
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Io {
            path: dir.display().to_string(),
            detail: e.to_string(),
        })?;
        let path = dir.join(DB_FILE);
        let db = Database::builder()
            .set_cache_size(DB_CACHE_BYTES)
            .create(&path)
            .map_err(|e| fault::open_error(&path, e))?;
        // Create every table, so readers never meet a missing one. A store that has its
        // schema stamp has them all (they were created in one transaction): opening it
        // writes nothing.
        let stamped = match db.begin_read()?.open_table(META) {
            Ok(meta) => meta.get("schema")?.is_some(),
            Err(redb::TableError::TableDoesNotExist(_)) => false,
            Err(e) => return Err(e.into()),
        };
        if !stamped {
            let tx = db.begin_write()?;
            {
                tx.open_table(CLAIMS)?;
                tx.open_table(HISTORY)?;
                tx.open_table(ACTS)?;
                tx.open_table(KV)?;
                tx.open_table(VEC_KEYS)?;
                tx.open_table(VECTORS)?;
                let mut meta = tx.open_table(META)?;
                if meta.get("schema")?.is_none() {
                    meta.insert("schema", SCHEMA_VERSION)?;
                    meta.insert("created", opts.clock.now_ms().to_string().as_str())?;
                }
            }
            tx.commit()?;
        }

        let mut store = Store {
            dir: dir.to_path_buf(),
            opts,
            db,
            index: ClaimIndex::new(),
            vindex: None,
            next_key: 1,
            next_act: 1,
            acts_unsaved: 0,
            snapshot_job: None,
            last_fold: None,
            created: String::new(),
            share: None,
            next_outbox: 1,
        };
        store.load_share()?;
        let live = {
            let rx = store.db.begin_read()?;
            let meta = rx.open_table(META)?;
            let num = |k: &str| -> Result<Option<u64>, StoreError> {
                Ok(meta.get(k)?.and_then(|v| v.value().parse().ok()))
            };
            store.next_key = num("next_key")?.unwrap_or(1);
            store.next_act = num("next_act")?.unwrap_or(1);
            store.created = meta
                .get("created")?
                .map(|v| v.value().to_string())
                .unwrap_or_default();
            rx.open_table(CLAIMS)?.len()?
        };
        let mut report = OpenReport::default();
        // The vector file is opened (a view: usearch reads its keys) on another core
        // while the claim index loads; whether it can be used is decided after.
        let viewing = store.opts.embedder.as_ref().map(|e| {
            let (dir, dims, precision) = (dir.to_path_buf(), e.dims(), store.opts.precision);
            std::thread::Builder::new()
                .name("vector-view".into())
                .spawn(move || VectorIndex::load(&dir, dims, precision))
        });
        store.load_claim_index(live, &mut report)?;
        report.claim_index_us = started.elapsed().as_micros() as u64;
        let viewed = match viewing {
            Some(Ok(t)) => Some(
                t.join()
                    .unwrap_or_else(|_| Err("opening the index file panicked".to_string())),
            ),
            // No thread to be had: opened on this one.
            Some(Err(_)) | None => None,
        };
        store.reconcile_vectors(viewed, &mut report)?;
        report.vectors_us = started.elapsed().as_micros() as u64 - report.claim_index_us;
        tracing::debug!(
            dir = %dir.display(),
            claim_index_us = report.claim_index_us,
            vectors_us = report.vectors_us,
            vectors_deferred = report.vectors_deferred,
            keys_checked = report.index_keys_checked,
            "store opened"
        );
        Ok((store, report))
    }

    /// Load the claim index from the snapshot when it is this store's and current;
    /// catch it up when it is behind; else rebuild it from redb. Vector keys come with
    /// the snapshot; when keys were given out since it was taken (an act, or claims
    /// embedded on open), they are read again from redb.
    fn load_claim_index(&mut self, live: u64, report: &mut OpenReport) -> Result<(), StoreError> {
        let why = match snapshot::load(&self.dir) {
            Err(why) => why,
            Ok(snap) if snap.stamp.created != self.created => {
                "the claim-index snapshot belongs to another store".to_string()
            }
            Ok(snap) if snap.stamp.next_act > self.next_act => format!(
                "the claim-index snapshot is ahead of the store (act {} > {})",
                snap.stamp.next_act, self.next_act
            ),
            Ok(snap) => {
                let from = snap.stamp.next_act;
                let keys_current = snap.stamp.next_key == self.next_key;
                self.index = snap.index;
                if from == self.next_act && self.index.len() as u64 == live {
                    if !keys_current {
                        self.reload_keys()?;
                        self.save_derived("claim-index snapshot", |s| s.save_claim_index());
                    }
                    return Ok(());
                }
                match self.catch_up(from, live)? {
                    Ok(n) => {
                        report.claim_index_caught_up = n;
                        if !keys_current {
                            self.reload_keys()?;
                        }
                        self.save_derived("claim-index snapshot", |s| s.save_claim_index());
                        return Ok(());
                    }
                    Err(why) => why,
                }
            }
        };
        self.progress(OpenPhase::RebuildingClaimIndex, 0);
        self.rebuild_claim_index()?;
        report.claim_index_rebuilt = true;
        report.claim_index_rebuild_reason = Some(why);
        self.save_derived("claim-index snapshot", |s| s.save_claim_index());
        Ok(())
    }

    /// Every live claim's vector key as redb holds it.
    fn read_keys(&self) -> Result<HashMap<String, u64>, StoreError> {
        let rx = self.db.begin_read()?;
        let vk = rx.open_table(VEC_KEYS)?;
        let mut keys = HashMap::with_capacity(vk.len()? as usize);
        for row in vk.iter()? {
            let (slug, key) = row?;
            keys.insert(slug.value().to_string(), key.value());
        }
        Ok(keys)
    }

    fn reload_keys(&mut self) -> Result<(), StoreError> {
        let keys = self.read_keys()?;
        self.index.assign_keys(&keys);
        Ok(())
    }

    /// Replay the acts from `from` on: each names the slug it changed, whose live
    /// version (or its absence) is read back from redb. `Err` says why it cannot be
    /// caught up: a purge (its act names no slug), or a count that does not match.
    /// Vector keys are the caller's to bring in step.
    fn catch_up(&mut self, from: u64, live: u64) -> Result<Result<u64, String>, StoreError> {
        let rx = self.db.begin_read()?;
        let acts = rx.open_table(ACTS)?;
        let claims = rx.open_table(CLAIMS)?;
        let mut n = 0;
        for row in acts.range(from..)? {
            let (_, v) = row?;
            let act: Act =
                serde_json::from_slice(v.value()).map_err(StoreError::corrupt("act record"))?;
            if act.kind == ActKind::Purge {
                return Ok(Err(
                    "a purge was written after the claim-index snapshot".into()
                ));
            }
            if !act.kind.names_claim() {
                n += 1;
                continue;
            }
            match claims.get(act.subject.as_str())? {
                Some(v) => {
                    let c = decode(v.value())?;
                    let key = self.index.key_of(&c.slug);
                    self.index.upsert_claim(&c, key);
                }
                None => self.index.remove(&act.subject),
            }
            n += 1;
        }
        if self.index.len() as u64 != live {
            return Ok(Err(format!(
                "the caught-up claim index holds {} claims, redb {live}",
                self.index.len()
            )));
        }
        Ok(Ok(n))
    }

    fn progress(&self, phase: OpenPhase, total: u64) {
        if let Some(p) = &self.opts.progress {
            p.set_phase(phase, total);
        }
    }

    /// Rebuild the claim index from every live claim in redb and its vector key,
    /// tokenized on every core.
    fn rebuild_claim_index(&mut self) -> Result<(), StoreError> {
        let keys = self.read_keys()?;
        let rx = self.db.begin_read()?;
        let table = rx.open_table(CLAIMS)?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut prepared: Vec<Prepared> = Vec::with_capacity(table.len()? as usize);
        let mut rows = table.iter()?;
        loop {
            let mut raw: Vec<Vec<u8>> = Vec::with_capacity(REBUILD_CHUNK);
            for row in rows.by_ref().take(REBUILD_CHUNK) {
                raw.push(row?.1.value().to_vec());
            }
            if raw.is_empty() {
                break;
            }
            let part = raw.len().div_ceil(threads);
            let done: Vec<Result<Vec<Prepared>, StoreError>> = std::thread::scope(|s| {
                let workers: Vec<_> = raw
                    .chunks(part)
                    .map(|chunk| {
                        let keys = &keys;
                        s.spawn(move || {
                            chunk
                                .iter()
                                .map(|b| {
                                    let c = decode(b)?;
                                    let key = keys.get(&c.slug).copied();
                                    Ok(Prepared::of(&c, key))
                                })
                                .collect()
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .map(|w| {
                        w.join().unwrap_or_else(|_| {
                            Err(StoreError::Invalid("a rebuild thread panicked".into()))
                        })
                    })
                    .collect()
            });
            for part in done {
                prepared.extend(part?);
            }
        }
        self.index = ClaimIndex::build(prepared);
        Ok(())
    }

    /// Bring the vector side in step with redb: re-embed when the model changed or a
    /// claim has no vector, and repair or rebuild the derived index file.
    /// `viewed`: the index file as opened beside the claim index, if it was.
    fn reconcile_vectors(
        &mut self,
        viewed: Option<Result<VectorIndex, String>>,
        report: &mut OpenReport,
    ) -> Result<(), StoreError> {
        let Some(embedder) = self.opts.embedder.clone() else {
            return Ok(());
        };
        let dims = embedder.dims();
        let (model, stored_dims) = {
            let rx = self.db.begin_read()?;
            let meta = rx.open_table(META)?;
            let m = meta.get("model")?.map(|v| v.value().to_string());
            let d = meta
                .get("dims")?
                .and_then(|v| v.value().parse::<usize>().ok());
            (m, d)
        };
        let model_changed = model.as_deref().is_some_and(|m| m != embedder.id())
            || stored_dims.is_some_and(|d| d != dims);
        if model_changed {
            let tx = self.db.begin_write()?;
            {
                tx.open_table(VECTORS)?.retain(|_, _| false)?;
                tx.open_table(VEC_KEYS)?.retain(|_, _| false)?;
            }
            tx.commit()?;
            self.index.assign_keys(&HashMap::new());
            report.index_rebuilt = true;
            report.index_rebuild_reason = Some(format!(
                "the embedding model changed ({} → {})",
                model.as_deref().unwrap_or_default(),
                embedder.id()
            ));
        }
        // Claims without a vector: embed them now, in batches, one transaction each.
        // Only these claims are read from redb; the others' texts stay on disk.
        // A model that defers leaves them to the owner's background embedding: the
        // store opens at once and they are found by their words meanwhile.
        let mut missing: Vec<String> = self
            .index
            .docs()
            .filter(|_| !embedder.deferred())
            .filter(|d| self.index.key(*d).is_none())
            .map(|d| self.index.slug(d).to_string())
            .collect();
        missing.sort_unstable();
        let started = std::time::Instant::now();
        if !missing.is_empty() {
            tracing::info!(
                dir = %self.dir.display(),
                model = embedder.id(),
                previous_model = model.as_deref().unwrap_or("none"),
                claims = missing.len(),
                "embedding claims on open"
            );
        }
        let mut next_progress = EMBED_PROGRESS_EVERY;
        if !missing.is_empty() {
            self.progress(OpenPhase::Embedding, missing.len() as u64);
        }
        for slugs in missing.chunks(64) {
            let chunk: Vec<Claim> = {
                let rx = self.db.begin_read()?;
                let claims = rx.open_table(CLAIMS)?;
                let mut out = Vec::with_capacity(slugs.len());
                for slug in slugs {
                    if let Some(v) = claims.get(slug.as_str())? {
                        out.push(decode(v.value())?);
                    }
                }
                out
            };
            let texts: Vec<String> = chunk
                .iter()
                .map(|c| embed_text(&c.label, &c.text))
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vecs = embedder
                .embed(&refs)
                .map_err(|e| StoreError::Embedding(e.to_string()))?;
            let tx = self.db.begin_write()?;
            {
                let mut vk = tx.open_table(VEC_KEYS)?;
                let mut vt = tx.open_table(VECTORS)?;
                for (c, v) in chunk.iter().zip(&vecs) {
                    let key = self.next_key;
                    self.next_key += 1;
                    vk.insert(c.slug.as_str(), key)?;
                    vt.insert(key, to_bytes(v).as_slice())?;
                    self.index.set_key(&c.slug, Some(key));
                }
                let mut meta = tx.open_table(META)?;
                meta.insert("next_key", self.next_key.to_string().as_str())?;
            }
            tx.commit()?;
            report.embedded_on_open += chunk.len() as u64;
            if let Some(p) = &self.opts.progress {
                p.advance(chunk.len() as u64);
            }
            if report.embedded_on_open >= next_progress {
                next_progress += EMBED_PROGRESS_EVERY;
                tracing::info!(
                    dir = %self.dir.display(),
                    done = report.embedded_on_open,
                    total = missing.len(),
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "embedding claims on open"
                );
            }
        }
        if !missing.is_empty() {
            // The snapshot's keys are behind now: save it with the new ones.
            self.save_derived("claim-index snapshot", |s| s.save_claim_index());
            tracing::info!(
                dir = %self.dir.display(),
                model = embedder.id(),
                claims = report.embedded_on_open,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "claims embedded on open"
            );
        }
        if model.as_deref() != Some(embedder.id()) || stored_dims != Some(dims) {
            let tx = self.db.begin_write()?;
            {
                let mut meta = tx.open_table(META)?;
                meta.insert("model", embedder.id())?;
                meta.insert("dims", dims.to_string().as_str())?;
            }
            tx.commit()?;
        }
        let loaded = if model_changed {
            Err("the model changed".to_string())
        } else {
            viewed
                .unwrap_or_else(|| VectorIndex::load(&self.dir, dims, self.opts.precision))
                .and_then(|ix| match self.repair_index(ix) {
                    Ok(r) => r,
                    Err(e) => Err(e.to_string()),
                })
        };
        match loaded {
            Ok(Repaired {
                ix,
                repaired,
                checked,
                deferred,
            }) => {
                self.vindex = Some(ix);
                self.backfill_bounds()?;
                report.vectors_deferred = deferred;
                report.index_repaired = repaired;
                report.index_keys_checked = checked;
            }
            Err(why) => {
                self.rebuild_index(dims)?;
                self.save_derived("vector index", |s| match &s.vindex {
                    Some(ix) => ix.save(),
                    None => Ok(()),
                });
                report.index_rebuilt = true;
                if report.index_rebuild_reason.is_none() {
                    report.index_rebuild_reason = Some(why);
                }
            }
        }
        Ok(())
    }

    /// Build the vector index afresh from every vector in redb, read a chunk at a time
    /// while every core inserts the chunks read before.
    fn rebuild_index(&mut self, dims: usize) -> Result<(), StoreError> {
        let mut ix = VectorIndex::empty(&self.dir, dims, self.opts.precision)?;
        let rx = self.db.begin_read()?;
        let vectors = rx.open_table(VECTORS)?;
        let total = vectors.len()?;
        self.progress(OpenPhase::RebuildingVectors, total);
        let progress = self.opts.progress.clone();
        let mut rows = vectors.iter()?;
        let chunks = std::iter::from_fn(|| {
            let mut chunk = Vec::with_capacity(BUILD_CHUNK);
            for row in rows.by_ref().take(BUILD_CHUNK) {
                match row {
                    Ok((k, v)) => chunk.push((k.value(), from_bytes(v.value()))),
                    Err(e) => return Some(Err(e.into())),
                }
            }
            if chunk.is_empty() {
                return None;
            }
            if let Some(p) = &progress {
                p.advance(chunk.len() as u64);
            }
            Some(Ok(chunk))
        });
        ix.build_from(total as usize, chunks)?;
        self.vindex = Some(ix);
        Ok(())
    }
}
