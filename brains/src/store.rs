//! [`Store`]: one store on disk. A directory holding `store.redb` (the truth: claims,
//! history, act log, key-value, vector-key map, vectors, meta) and `vectors.usearch`
//! (derived, rebuilt or repaired from redb on open).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::claim::{
    content_hash, Act, ActKind, Claim, ClaimState, MemorizeInput, MemorizeOutcome, Verdict,
};
use crate::clock::{Clock, SystemClock};
use crate::embed::Embedder;
use crate::error::StoreError;
use crate::lexical::LexicalIndex;
use crate::recall::{
    Aging, ClaimMeta, Fusion, Hit, RankMode, RecallQuery, RecallResult, Retrieval,
};
use crate::vector::VectorIndex;

/// How to open a store.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// `None` = lexical-only.
    pub embedder: Option<Arc<dyn Embedder>>,
    pub clock: Arc<dyn Clock>,
    pub aging: Aging,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            embedder: None,
            clock: Arc::new(SystemClock),
            aging: Aging::default(),
        }
    }
}

/// Counts of one store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StoreStats {
    pub live_claims: u64,
    pub history_versions: u64,
    pub acts: u64,
    pub kv_keys: u64,
    pub vectors: u64,
    pub retrieval: Option<Retrieval>,
}

/// What [`Store::purge`] erased.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct PurgeReport {
    /// What the purge act records instead of the slug.
    pub subject: String,
    pub versions_erased: u64,
    /// Earlier acts about the slug whose subject and note were replaced.
    pub acts_scrubbed: u64,
    /// Whether the database file was compacted afterwards.
    pub compacted: bool,
}

/// What [`Store::open`] found and did about the derived indexes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OpenReport {
    /// The vector index file was missing, unreadable or out of step and was rebuilt.
    pub index_rebuilt: bool,
    /// Why, when it was rebuilt.
    pub index_rebuild_reason: Option<String>,
    /// Vectors computed on open for claims that had none (model newly present or changed).
    pub embedded_on_open: u64,
}

const CLAIMS: TableDefinition<&str, &[u8]> = TableDefinition::new("claims");
const HISTORY: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("history");
const ACTS: TableDefinition<u64, &[u8]> = TableDefinition::new("acts");
const KV: TableDefinition<&str, &str> = TableDefinition::new("kv");
const VEC_KEYS: TableDefinition<&str, u64> = TableDefinition::new("vec_keys");
const VECTORS: TableDefinition<u64, &[u8]> = TableDefinition::new("vectors");
const META: TableDefinition<&str, &str> = TableDefinition::new("meta");

pub const DB_FILE: &str = "store.redb";
const SCHEMA_VERSION: &str = "1";
/// Save the vector index file after this many vector writes (it is also saved on
/// flush, close and drop). Never per write: the file is derived and redb is the truth.
const SAVE_EVERY: u32 = 256;
const MAX_KV_KEY: usize = 256;
/// Log re-embedding progress on open every this many claims.
const EMBED_PROGRESS_EVERY: u64 = 1000;
const MAX_KV_VALUE: usize = 64 * 1024;

/// One store: a project brain or the medulla.
pub struct Store {
    dir: PathBuf,
    opts: StoreOptions,
    db: Database,
    lexical: LexicalIndex,
    /// slug → what scope and filters look at.
    meta: HashMap<String, ClaimMeta>,
    vindex: Option<VectorIndex>,
    key_to_slug: HashMap<u64, String>,
    slug_to_key: HashMap<String, u64>,
    next_key: u64,
    next_act: u64,
    unsaved: u32,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("dir", &self.dir)
            .field("live", &self.lexical.len())
            .finish()
    }
}

fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_bytes(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn decode(b: &[u8]) -> Result<Claim, StoreError> {
    serde_json::from_slice(b)
        .map_err(|e| StoreError::Storage(format!("undecodable claim record: {e}")))
}

fn encode(c: &Claim) -> Vec<u8> {
    serde_json::to_vec(c).expect("a claim serializes")
}

fn sha(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

fn embed_text(label: &str, text: &str) -> String {
    format!("{label}\n{text}")
}

impl Store {
    /// Open or create the store in `dir`. Refuses a store another process holds.
    pub fn open(dir: &Path, opts: StoreOptions) -> Result<(Store, OpenReport), StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Io {
            path: dir.display().to_string(),
            detail: e.to_string(),
        })?;
        let path = dir.join(DB_FILE);
        let db = Database::create(&path).map_err(|e| match e {
            redb::DatabaseError::DatabaseAlreadyOpen
            | redb::DatabaseError::LockProtocolMismatch => StoreError::StoreLocked {
                path: path.display().to_string(),
            },
            redb::DatabaseError::Storage(redb::StorageError::Io(io))
                if io.kind() == std::io::ErrorKind::WouldBlock =>
            {
                StoreError::StoreLocked {
                    path: path.display().to_string(),
                }
            }
            other => StoreError::Corrupt {
                path: path.display().to_string(),
                detail: other.to_string(),
            },
        })?;
        // Create every table, so readers never meet a missing one.
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

        let mut store = Store {
            dir: dir.to_path_buf(),
            opts,
            db,
            lexical: LexicalIndex::new(),
            meta: HashMap::new(),
            vindex: None,
            key_to_slug: HashMap::new(),
            slug_to_key: HashMap::new(),
            next_key: 1,
            next_act: 1,
            unsaved: 0,
        };
        {
            let rx = store.db.begin_read()?;
            for row in rx.open_table(CLAIMS)?.iter()? {
                let (_, v) = row?;
                let c = decode(v.value())?;
                store.lexical.upsert(&c.slug, &c.label, &c.text);
                store.meta.insert(c.slug.clone(), ClaimMeta::of(&c));
            }
            for row in rx.open_table(VEC_KEYS)?.iter()? {
                let (slug, key) = row?;
                store
                    .key_to_slug
                    .insert(key.value(), slug.value().to_string());
                store
                    .slug_to_key
                    .insert(slug.value().to_string(), key.value());
            }
            let meta = rx.open_table(META)?;
            let num = |k: &str| -> Result<Option<u64>, StoreError> {
                Ok(meta.get(k)?.and_then(|v| v.value().parse().ok()))
            };
            store.next_key = num("next_key")?.unwrap_or(1);
            store.next_act = num("next_act")?.unwrap_or(1);
        }
        let report = store.reconcile_vectors()?;
        Ok((store, report))
    }

    /// Bring the vector side in step with redb: re-embed when the model changed or a
    /// claim has no vector, and repair or rebuild the derived index file.
    fn reconcile_vectors(&mut self) -> Result<OpenReport, StoreError> {
        let mut report = OpenReport::default();
        let Some(embedder) = self.opts.embedder.clone() else {
            return Ok(report);
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
            self.key_to_slug.clear();
            self.slug_to_key.clear();
            report.index_rebuilt = true;
            report.index_rebuild_reason = Some(format!(
                "the embedding model changed ({} → {})",
                model.as_deref().unwrap_or_default(),
                embedder.id()
            ));
        }
        // Claims without a vector: embed them now, in batches, one transaction each.
        let missing: Vec<Claim> = self
            .live_claims()?
            .into_iter()
            .filter(|c| !self.slug_to_key.contains_key(&c.slug))
            .collect();
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
        for chunk in missing.chunks(64) {
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
                    self.key_to_slug.insert(key, c.slug.clone());
                    self.slug_to_key.insert(c.slug.clone(), key);
                }
                let mut meta = tx.open_table(META)?;
                meta.insert("next_key", self.next_key.to_string().as_str())?;
            }
            tx.commit()?;
            report.embedded_on_open += chunk.len() as u64;
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
            tracing::info!(
                dir = %self.dir.display(),
                model = embedder.id(),
                claims = report.embedded_on_open,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "claims embedded on open"
            );
        }
        {
            let tx = self.db.begin_write()?;
            {
                let mut meta = tx.open_table(META)?;
                meta.insert("model", embedder.id())?;
                meta.insert("dims", dims.to_string().as_str())?;
            }
            tx.commit()?;
        }
        let loaded = if model_changed || report.embedded_on_open > 0 {
            Err(if model_changed {
                "the model changed".to_string()
            } else {
                "claims gained vectors".to_string()
            })
        } else {
            VectorIndex::load(&self.dir, dims).and_then(|ix| match self.index_out_of_step(&ix) {
                Ok(None) => Ok(ix),
                Ok(Some(why)) => Err(why),
                Err(e) => Err(e.to_string()),
            })
        };
        match loaded {
            Ok(ix) => self.vindex = Some(ix),
            Err(why) => {
                let mut ix = VectorIndex::empty(&self.dir, dims)?;
                let rx = self.db.begin_read()?;
                for row in rx.open_table(VECTORS)?.iter()? {
                    let (k, v) = row?;
                    ix.add(k.value(), &from_bytes(v.value()))?;
                }
                ix.save()?;
                self.vindex = Some(ix);
                report.index_rebuilt = true;
                if report.index_rebuild_reason.is_none() {
                    report.index_rebuild_reason = Some(why);
                }
            }
        }
        Ok(report)
    }

    fn index_out_of_step(&self, ix: &VectorIndex) -> Result<Option<String>, StoreError> {
        let rx = self.db.begin_read()?;
        let vt = rx.open_table(VECTORS)?;
        let n = vt.len()?;
        if ix.size() as u64 != n {
            return Ok(Some(format!(
                "the index holds {} vectors, redb {n}",
                ix.size()
            )));
        }
        for row in vt.iter()? {
            let (k, _) = row?;
            if !ix.contains(k.value()) {
                return Ok(Some(format!(
                    "vector {} is missing from the index",
                    k.value()
                )));
            }
        }
        Ok(None)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn now_ms(&self) -> i64 {
        self.opts.clock.now_ms()
    }

    pub fn aging(&self) -> Aging {
        self.opts.aging
    }

    pub fn retrieval(&self) -> Retrieval {
        if self.opts.embedder.is_some() {
            Retrieval::Hybrid
        } else {
            Retrieval::Lexical
        }
    }

    fn embed_one(&self, label: &str, text: &str) -> Result<Option<Vec<f32>>, StoreError> {
        let Some(e) = &self.opts.embedder else {
            return Ok(None);
        };
        let mut v = e
            .embed(&[embed_text(label, text).as_str()])
            .map_err(|e| StoreError::Embedding(e.to_string()))?;
        Ok(v.pop())
    }

    fn act(&mut self, tx: &redb::WriteTransaction, act: Act) -> Result<(), StoreError> {
        let mut acts = tx.open_table(ACTS)?;
        acts.insert(act.seq, serde_json::to_vec(&act)?.as_slice())?;
        let mut meta = tx.open_table(META)?;
        meta.insert("next_act", (act.seq + 1).to_string().as_str())?;
        Ok(())
    }

    fn new_act(
        &mut self,
        kind: ActKind,
        subject: &str,
        actor: &str,
        before: Option<String>,
        after: Option<String>,
        note: Option<String>,
    ) -> Act {
        let seq = self.next_act;
        self.next_act += 1;
        Act {
            seq,
            kind,
            subject: subject.to_string(),
            actor: actor.to_string(),
            at: self.now_ms(),
            before_hash: before,
            after_hash: after,
            note,
        }
    }

    /// Write a new live version (with its vector) and, when there was one, move the old
    /// version to history; one transaction. Updates the in-memory indexes after commit.
    fn write_version(
        &mut self,
        new: &Claim,
        old: Option<(&Claim, &str)>,
        vector: Option<Vec<f32>>,
        act: Act,
    ) -> Result<(), StoreError> {
        let new_key = vector.as_ref().map(|_| self.next_key);
        if new_key.is_some() {
            self.next_key += 1;
        }
        let old_key = old.and_then(|_| self.slug_to_key.get(&new.slug).copied());
        let tx = self.db.begin_write()?;
        {
            let mut claims = tx.open_table(CLAIMS)?;
            claims.insert(new.slug.as_str(), encode(new).as_slice())?;
            if let Some((prev, reason)) = old {
                let mut hist = tx.open_table(HISTORY)?;
                let mut out = prev.clone();
                out.state = ClaimState::Outdated;
                out.outdated_reason = Some(reason.to_string());
                out.outdated_at = Some(act.at);
                hist.insert((prev.slug.as_str(), prev.version), encode(&out).as_slice())?;
            }
            if let (Some(key), Some(v)) = (new_key, &vector) {
                let mut vt = tx.open_table(VECTORS)?;
                if let Some(ok) = old_key {
                    vt.remove(ok)?;
                }
                vt.insert(key, to_bytes(v).as_slice())?;
                tx.open_table(VEC_KEYS)?.insert(new.slug.as_str(), key)?;
                tx.open_table(META)?
                    .insert("next_key", self.next_key.to_string().as_str())?;
            }
        }
        self.act(&tx, act)?;
        tx.commit()?;
        self.lexical.upsert(&new.slug, &new.label, &new.text);
        self.meta.insert(new.slug.clone(), ClaimMeta::of(new));
        if let (Some(key), Some(v)) = (new_key, vector) {
            if let Some(ok) = old_key {
                self.key_to_slug.remove(&ok);
                if let Some(ix) = self.vindex.as_mut() {
                    ix.remove(ok)?;
                }
            }
            self.key_to_slug.insert(key, new.slug.clone());
            self.slug_to_key.insert(new.slug.clone(), key);
            if let Some(ix) = self.vindex.as_mut() {
                ix.add(key, &v)?;
            }
            self.note_vector_write()?;
        }
        Ok(())
    }

    fn note_vector_write(&mut self) -> Result<(), StoreError> {
        self.unsaved += 1;
        if self.unsaved >= SAVE_EVERY {
            self.flush_index()?;
        }
        Ok(())
    }

    /// New claim, supersession, `would_downgrade` refusal, or `unchanged` no-op.
    pub fn memorize(&mut self, mut input: MemorizeInput) -> Result<MemorizeOutcome, StoreError> {
        let slug = input.validate()?;
        let hash = content_hash(&input.label, &input.text, input.strength, &input.evidence);
        let live = self.get(&slug)?;
        // Labels are identities: a different label that happens to derive the same slug
        // is another claim, never a supersession of this one.
        let holder = match &live {
            Some(l) => Some(l.label.clone()),
            None => self.newest_outdated(&slug)?.map(|c| c.label),
        };
        if let Some(existing) = holder.filter(|h| !crate::claim::same_label(h, &input.label)) {
            return Err(StoreError::LabelCollision {
                slug,
                existing,
                attempted: input.label,
            });
        }
        if let Some(l) = &live {
            if l.content_hash == hash {
                return Ok(MemorizeOutcome::Unchanged { claim: l.clone() });
            }
            // An import replays versions a legacy store already accepted, oldest first;
            // its own gate ran when they were written.
            if input.strength < l.strength && input.act != Some(ActKind::Import) {
                return Err(StoreError::WouldDowngrade {
                    slug,
                    live: l.strength,
                    attempted: input.strength,
                });
            }
        }
        let mut created = input.created.unwrap_or_else(|| self.now_ms());
        if let Some(l) = &live {
            if created <= l.created && input.created.is_none() {
                created = l.created + 1;
            }
        }
        let vector = self.embed_one(&input.label, &input.text)?;
        let claim = Claim {
            label: input.label.clone(),
            slug: slug.clone(),
            text: input.text.clone(),
            state: ClaimState::Authored,
            created,
            source_agent: input.source_agent.clone(),
            origin_brain: input.origin_brain.clone(),
            strength: input.strength,
            supersedes: live.as_ref().map(Claim::version_id),
            trust: Default::default(),
            evidence: input.evidence.clone(),
            content_hash: hash.clone(),
            version: live.as_ref().map(|l| l.version + 1).unwrap_or(1),
            promoted_to: None,
            origin_claim: input.origin_claim.clone(),
            promoted_by: input.promoted_by.clone(),
            promotion_reason: input.promotion_reason.clone(),
            origin_created: input.origin_created,
            origin_agent: input.origin_agent.clone(),
            outdated_reason: None,
            outdated_at: None,
        };
        let kind = input.act.unwrap_or(if live.is_some() {
            ActKind::Supersede
        } else {
            ActKind::Memorize
        });
        let actor = input
            .promoted_by
            .clone()
            .unwrap_or_else(|| input.source_agent.clone());
        let act = self.new_act(
            kind,
            &slug,
            &actor,
            live.as_ref().map(|l| l.content_hash.clone()),
            Some(hash),
            None,
        );
        self.write_version(
            &claim,
            live.as_ref().map(|l| (l, "superseded")),
            vector,
            act,
        )?;
        Ok(match live {
            Some(previous) => {
                let mut previous = previous;
                previous.state = ClaimState::Outdated;
                previous.outdated_reason = Some("superseded".into());
                MemorizeOutcome::Superseded {
                    claim,
                    previous: Box::new(previous),
                }
            }
            None => MemorizeOutcome::Created { claim },
        })
    }

    /// The live version of a slug.
    pub fn get(&self, slug: &str) -> Result<Option<Claim>, StoreError> {
        let rx = self.db.begin_read()?;
        let t = rx.open_table(CLAIMS)?;
        let v = t.get(slug)?;
        v.map(|v| decode(v.value())).transpose()
    }

    /// Every version of a slug, oldest first; the live one last.
    pub fn history(&self, slug: &str) -> Result<Vec<Claim>, StoreError> {
        let rx = self.db.begin_read()?;
        let hist = rx.open_table(HISTORY)?;
        let mut out = Vec::new();
        for row in hist.range((slug, 0u64)..=(slug, u64::MAX))? {
            let (_, v) = row?;
            out.push(decode(v.value())?);
        }
        if let Some(v) = rx.open_table(CLAIMS)?.get(slug)? {
            out.push(decode(v.value())?);
        }
        Ok(out)
    }

    /// The newest version of a slug in history, if any.
    fn newest_outdated(&self, slug: &str) -> Result<Option<Claim>, StoreError> {
        let rx = self.db.begin_read()?;
        let hist = rx.open_table(HISTORY)?;
        let last = hist.range((slug, 0u64)..=(slug, u64::MAX))?.next_back();
        match last {
            Some(row) => Ok(Some(decode(row?.1.value())?)),
            None => Ok(None),
        }
    }

    /// Erase a claim and every version of it: the live record, its history, its vector,
    /// and the slug and notes of the acts about it (the slug derives from the label, which
    /// may be what carried the secret). One act records the purge and keeps no content:
    /// its subject is a hash of the slug. Then the file is compacted, so the freed pages
    /// are released rather than kept.
    pub fn purge(&mut self, slug: &str, actor: &str) -> Result<PurgeReport, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let versions = self.history(slug)?;
        if versions.is_empty() {
            return Err(StoreError::NothingToPurge {
                slug: slug.to_string(),
            });
        }
        let subject = format!("purged:{}", &sha(slug)[..12]);
        let key = self.slug_to_key.get(slug).copied();
        let act = self.new_act(
            ActKind::Purge,
            &subject,
            actor,
            None,
            None,
            Some(format!("{} versions erased", versions.len())),
        );
        let mut acts_scrubbed = 0u64;
        let tx = self.db.begin_write()?;
        {
            tx.open_table(CLAIMS)?.remove(slug)?;
            tx.open_table(HISTORY)?
                .retain_in((slug, 0u64)..=(slug, u64::MAX), |_, _| false)?;
            if let Some(k) = key {
                tx.open_table(VECTORS)?.remove(k)?;
                tx.open_table(VEC_KEYS)?.remove(slug)?;
            }
            let mut acts = tx.open_table(ACTS)?;
            let mut rewrite: Vec<Act> = Vec::new();
            for row in acts.iter()? {
                let (_, v) = row?;
                let a: Act = serde_json::from_slice(v.value())?;
                if a.subject == slug {
                    rewrite.push(a);
                }
            }
            for mut a in rewrite {
                a.subject = subject.clone();
                a.note = None;
                acts.insert(a.seq, serde_json::to_vec(&a)?.as_slice())?;
                acts_scrubbed += 1;
            }
        }
        self.act(&tx, act)?;
        tx.commit()?;
        self.lexical.remove(slug);
        self.meta.remove(slug);
        if let Some(k) = key {
            self.key_to_slug.remove(&k);
            self.slug_to_key.remove(slug);
            if let Some(ix) = self.vindex.as_mut() {
                ix.remove(k)?;
            }
            self.flush_index()?;
        }
        let compacted = match self.db.compact() {
            Ok(done) => done,
            Err(e) => {
                tracing::warn!(dir = %self.dir.display(), error = %e, "could not compact after a purge; freed pages are reused by later writes");
                false
            }
        };
        Ok(PurgeReport {
            subject,
            versions_erased: versions.len() as u64,
            acts_scrubbed,
            compacted,
        })
    }

    pub fn live_claims(&self) -> Result<Vec<Claim>, StoreError> {
        let rx = self.db.begin_read()?;
        let mut out = Vec::new();
        for row in rx.open_table(CLAIMS)?.iter()? {
            let (_, v) = row?;
            out.push(decode(v.value())?);
        }
        Ok(out)
    }

    /// The `n` most recent live claims, newest first.
    pub fn recent(&self, n: usize) -> Result<Vec<Claim>, StoreError> {
        let mut all = self.live_claims()?;
        all.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.slug.cmp(&b.slug)));
        all.truncate(n);
        Ok(all)
    }

    fn in_scope(&self, scope: &Option<String>, slug: &str) -> bool {
        match scope.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            None => true,
            Some(p) => {
                let p = p.to_lowercase();
                slug.starts_with(&p) || self.meta.get(slug).is_some_and(|m| m.label.starts_with(&p))
            }
        }
    }

    /// Scope and filters: the candidate predicate of a recall.
    fn admits(&self, q: &RecallQuery, slug: &str) -> bool {
        self.in_scope(&q.scope, slug)
            && (q.filter.is_empty() || self.meta.get(slug).is_some_and(|m| q.filter.admits(m)))
    }

    /// The query's vector: the caller's when it fits this store's model, else embedded
    /// here. `None` without a model or when the text has no known token.
    fn query_vector(&self, q: &RecallQuery) -> Result<Option<Arc<[f32]>>, StoreError> {
        let Some(e) = &self.opts.embedder else {
            return Ok(None);
        };
        let v = match &q.vector {
            Some(v) if v.len() == e.dims() => v.clone(),
            _ => crate::embed::embed_query(e.as_ref(), &q.text)
                .map_err(|e| StoreError::Embedding(e.to_string()))?,
        };
        Ok(v.iter().any(|x| *x != 0.0).then_some(v))
    }

    /// Recall over live versions: lexical and dense evidence for every candidate of
    /// either list, fused, then the relevance floor (see [`Fusion`]).
    pub fn recall(&self, q: &RecallQuery) -> Result<RecallResult, StoreError> {
        let limit = q.limit.max(1);
        let now = self.now_ms();
        if q.text.trim().is_empty() {
            let mut all = self.live_claims()?;
            all.retain(|c| self.admits(q, &c.slug));
            all.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.slug.cmp(&b.slug)));
            all.truncate(limit);
            let hits = all
                .into_iter()
                .map(|c| Hit {
                    overlay: self.opts.aging.overlay(c.created, now),
                    claim: c,
                    score: 0.0,
                    lexical_rank: None,
                    vector_rank: None,
                    lexical: 0.0,
                    vector: None,
                    // A listing, not a search: there is no query to fall short of.
                    matched: true,
                })
                .collect();
            return Ok(RecallResult {
                hits,
                retrieval: self.retrieval(),
            });
        }
        let fusion = Fusion::DEFAULT;
        let depth = (limit * 4).max(50);
        let keep = |slug: &str| self.admits(q, slug);
        let lq = self.lexical.prepare(&q.text);
        let lexical = if q.mode == RankMode::Vector {
            vec![]
        } else {
            self.lexical.search_prepared(&lq, depth, &keep)
        };
        let qv = match (q.mode, &self.vindex) {
            (RankMode::Lexical, _) | (_, None) => None,
            (_, Some(_)) => self.query_vector(q)?,
        };
        let mut vector: Vec<(String, f64)> = vec![];
        if let (Some(ix), Some(qv)) = (&self.vindex, &qv) {
            let keep_key = |k: u64| self.key_to_slug.get(&k).is_some_and(|s| keep(s));
            let unfiltered =
                q.scope.as_deref().is_none_or(|s| s.trim().is_empty()) && q.filter.is_empty();
            let found = if unfiltered {
                ix.search_all(qv, depth)?
            } else {
                ix.search(qv, depth, &keep_key)?
            };
            vector = found
                .into_iter()
                .filter_map(|(k, sim)| self.key_to_slug.get(&k).map(|s| (s.clone(), sim as f64)))
                .collect();
        }
        let hybrid = qv.is_some();
        // Every candidate of either list gets both kinds of evidence, exactly.
        struct Cand {
            lex: f64,
            cos: Option<f64>,
            lex_rank: Option<usize>,
            vec_rank: Option<usize>,
        }
        let mut cands: HashMap<String, Cand> = HashMap::new();
        for (i, h) in lexical.iter().enumerate() {
            cands.insert(
                h.slug.clone(),
                Cand {
                    lex: h.norm,
                    cos: None,
                    lex_rank: Some(i + 1),
                    vec_rank: None,
                },
            );
        }
        for (i, (slug, sim)) in vector.iter().enumerate() {
            let c = cands.entry(slug.clone()).or_insert_with(|| Cand {
                lex: if q.mode == RankMode::Vector {
                    0.0
                } else {
                    self.lexical.score(&lq, slug).map(|h| h.norm).unwrap_or(0.0)
                },
                cos: None,
                lex_rank: None,
                vec_rank: None,
            });
            c.cos = Some(*sim);
            c.vec_rank = Some(i + 1);
        }
        if let (Some(ix), Some(qv)) = (&self.vindex, &qv) {
            for (slug, c) in cands.iter_mut().filter(|(_, c)| c.cos.is_none()) {
                c.cos = self
                    .slug_to_key
                    .get(slug)
                    .and_then(|k| ix.similarity(*k, qv))
                    .map(f64::from)
                    .or(Some(0.0));
            }
        }
        let mode = match q.mode {
            RankMode::Auto if !hybrid => RankMode::Lexical,
            RankMode::Vector if !hybrid => RankMode::Vector,
            m => m,
        };
        let floor = fusion.floor(mode, hybrid);
        let scored: Vec<(String, Cand, f64)> = cands
            .into_iter()
            .map(|(slug, c)| {
                let score = fusion.score(mode, c.lex, c.cos);
                (slug, c, score)
            })
            .collect();
        let best = scored.iter().map(|r| r.2).fold(0.0, f64::max);
        let mut ranked: Vec<(String, Cand, f64, bool)> = scored
            .into_iter()
            .map(|(slug, c, score)| {
                let matched = floor.passes(score, best);
                (slug, c, score, matched)
            })
            .filter(|r| r.3 || !q.matched_only)
            .collect();
        ranked.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
        ranked.truncate(limit);
        let rx = self.db.begin_read()?;
        let claims = rx.open_table(CLAIMS)?;
        let mut hits = Vec::with_capacity(ranked.len());
        for (slug, c, score, matched) in ranked {
            let Some(v) = claims.get(slug.as_str())? else {
                continue;
            };
            let claim = decode(v.value())?;
            hits.push(Hit {
                overlay: self.opts.aging.overlay(claim.created, now),
                claim,
                score,
                lexical_rank: c.lex_rank,
                vector_rank: c.vec_rank,
                lexical: c.lex,
                vector: c.cos,
                matched,
            });
        }
        Ok(RecallResult {
            hits,
            retrieval: if self.vindex.is_some() && q.mode != RankMode::Lexical {
                Retrieval::Hybrid
            } else {
                Retrieval::Lexical
            },
        })
    }

    fn require_live(&self, slug: &str) -> Result<Claim, StoreError> {
        self.get(slug)?.ok_or_else(|| StoreError::UnknownClaim {
            slug: slug.to_string(),
        })
    }

    /// Grade the live version; a recorded act.
    pub fn learn(
        &mut self,
        slug: &str,
        verdict: Verdict,
        actor: &str,
        note: Option<&str>,
    ) -> Result<Claim, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let mut c = self.require_live(slug)?;
        match verdict {
            Verdict::Correct => c.trust.correct += 1,
            Verdict::Partial => c.trust.partial += 1,
            Verdict::Wrong => c.trust.wrong += 1,
        }
        let note = Some(match note {
            Some(n) => format!("{}: {n}", verdict.as_str()),
            None => verdict.as_str().to_string(),
        });
        let act = self.new_act(
            ActKind::Learn,
            slug,
            actor,
            Some(c.content_hash.clone()),
            Some(c.content_hash.clone()),
            note,
        );
        let tx = self.db.begin_write()?;
        tx.open_table(CLAIMS)?.insert(slug, encode(&c).as_slice())?;
        self.act(&tx, act)?;
        tx.commit()?;
        self.meta.insert(c.slug.clone(), ClaimMeta::of(&c));
        Ok(c)
    }

    /// Move the live version to history (`demoted: <reason>`); no live version remains.
    pub fn demote(&mut self, slug: &str, actor: &str, reason: &str) -> Result<Claim, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let live = self.require_live(slug)?;
        let now = self.now_ms();
        let mut out = live.clone();
        out.state = ClaimState::Outdated;
        out.outdated_reason = Some(format!("demoted: {}", reason.trim()));
        out.outdated_at = Some(now);
        let key = self.slug_to_key.get(slug).copied();
        let act = self.new_act(
            ActKind::Demote,
            slug,
            actor,
            Some(live.content_hash.clone()),
            None,
            Some(reason.trim().to_string()),
        );
        let tx = self.db.begin_write()?;
        {
            tx.open_table(CLAIMS)?.remove(slug)?;
            tx.open_table(HISTORY)?
                .insert((slug, live.version), encode(&out).as_slice())?;
            if let Some(k) = key {
                tx.open_table(VECTORS)?.remove(k)?;
                tx.open_table(VEC_KEYS)?.remove(slug)?;
            }
        }
        self.act(&tx, act)?;
        tx.commit()?;
        self.lexical.remove(slug);
        self.meta.remove(slug);
        if let Some(k) = key {
            self.key_to_slug.remove(&k);
            self.slug_to_key.remove(slug);
            if let Some(ix) = self.vindex.as_mut() {
                ix.remove(k)?;
            }
            self.note_vector_write()?;
        }
        Ok(out)
    }

    /// Stamp the witness of a promotion: a new live version carrying `promoted_to`, the
    /// pre-promotion version kept in history.
    pub fn stamp_promoted_to(
        &mut self,
        slug: &str,
        stamp: &str,
        actor: &str,
    ) -> Result<Claim, StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let live = self.require_live(slug)?;
        let mut now = self.now_ms();
        if now <= live.created {
            now = live.created + 1;
        }
        let mut new = live.clone();
        new.promoted_to = Some(stamp.to_string());
        new.created = now;
        new.supersedes = Some(live.version_id());
        new.version = live.version + 1;
        let act = self.new_act(
            ActKind::PromotedStamp,
            slug,
            actor,
            Some(live.content_hash.clone()),
            Some(live.content_hash.clone()),
            Some(stamp.to_string()),
        );
        // Same content, same vector: only the record and history change.
        self.write_version(&new, Some((&live, "promoted")), None, act)?;
        Ok(new)
    }

    pub fn kv_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        let rx = self.db.begin_read()?;
        let t = rx.open_table(KV)?;
        let v = t.get(key)?.map(|v| v.value().to_string());
        Ok(v)
    }

    pub fn kv_set(&mut self, key: &str, value: &str, actor: &str) -> Result<(), StoreError> {
        crate::claim::validate_agent_id(actor)?;
        if key.is_empty() || key.len() > MAX_KV_KEY {
            return Err(StoreError::Invalid(format!(
                "boot memory keys are 1 to {MAX_KV_KEY} bytes: shorten the key"
            )));
        }
        if value.len() > MAX_KV_VALUE {
            return Err(StoreError::Invalid(format!(
                "boot memory values are at most {MAX_KV_VALUE} bytes, this one is {}: store a pointer instead",
                value.len()
            )));
        }
        let before = self.kv_get(key)?.map(|v| sha(&v));
        let act = self.new_act(ActKind::KvSet, key, actor, before, Some(sha(value)), None);
        let tx = self.db.begin_write()?;
        tx.open_table(KV)?.insert(key, value)?;
        self.act(&tx, act)?;
        tx.commit()?;
        Ok(())
    }

    pub fn kv_list(&self) -> Result<Vec<(String, String)>, StoreError> {
        let rx = self.db.begin_read()?;
        let mut out = Vec::new();
        for row in rx.open_table(KV)?.iter()? {
            let (k, v) = row?;
            out.push((k.value().to_string(), v.value().to_string()));
        }
        Ok(out)
    }

    pub fn kv_delete(&mut self, key: &str, actor: &str) -> Result<(), StoreError> {
        crate::claim::validate_agent_id(actor)?;
        let before = self.kv_get(key)?.ok_or_else(|| StoreError::UnknownKey {
            key: key.to_string(),
        })?;
        let act = self.new_act(
            ActKind::KvDelete,
            key,
            actor,
            Some(sha(&before)),
            None,
            None,
        );
        let tx = self.db.begin_write()?;
        tx.open_table(KV)?.remove(key)?;
        self.act(&tx, act)?;
        tx.commit()?;
        Ok(())
    }

    /// Acts with `seq > after_seq`, oldest first.
    pub fn acts(&self, after_seq: u64, limit: usize) -> Result<Vec<Act>, StoreError> {
        let rx = self.db.begin_read()?;
        let mut out = Vec::new();
        for row in rx.open_table(ACTS)?.range(after_seq.saturating_add(1)..)? {
            let (_, v) = row?;
            out.push(serde_json::from_slice(v.value())?);
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    /// The newest acts, newest first.
    pub fn acts_newest(&self, limit: usize) -> Result<Vec<Act>, StoreError> {
        self.acts_before(u64::MAX, limit)
    }

    /// Acts with `seq < before`, newest first: one page of the act log.
    pub fn acts_before(&self, before: u64, limit: usize) -> Result<Vec<Act>, StoreError> {
        let rx = self.db.begin_read()?;
        let mut out = Vec::new();
        for row in rx.open_table(ACTS)?.range(..before)?.rev() {
            let (_, v) = row?;
            out.push(serde_json::from_slice(v.value())?);
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    pub fn stats(&self) -> Result<StoreStats, StoreError> {
        let rx = self.db.begin_read()?;
        Ok(StoreStats {
            live_claims: rx.open_table(CLAIMS)?.len()?,
            history_versions: rx.open_table(HISTORY)?.len()?,
            acts: rx.open_table(ACTS)?.len()?,
            kv_keys: rx.open_table(KV)?.len()?,
            vectors: rx.open_table(VECTORS)?.len()?,
            retrieval: Some(self.retrieval()),
        })
    }

    /// Persist the vector index file now.
    pub fn flush_index(&mut self) -> Result<(), StoreError> {
        if let Some(ix) = &self.vindex {
            ix.save()?;
        }
        self.unsaved = 0;
        Ok(())
    }

    /// Is the vector index in step with redb? `None` when it is (or when there is no model).
    pub fn check_index(&self) -> Result<Option<String>, StoreError> {
        match &self.vindex {
            Some(ix) => self.index_out_of_step(ix),
            None => Ok(None),
        }
    }

    /// Flush and close.
    pub fn close(mut self) -> Result<(), StoreError> {
        self.flush_index()
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if self.unsaved > 0 {
            if let Err(e) = self.flush_index() {
                tracing::warn!(dir = %self.dir.display(), error = %e, "could not save the vector index on drop; it will be rebuilt on open");
            }
        }
    }
}
