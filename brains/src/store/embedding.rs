//! Vectors made off the write path: a model whose writes do not wait for it
//! ([`Embedder::deferred`]) leaves a new claim without a vector, found by its words at
//! once; the owner embeds what [`Store::unembedded`] lists and hands the vectors back to
//! [`Store::attach_vectors`]. A change of model while serving is the same in bulk: the
//! owner embeds every live claim ([`Store::embedding_page`]) under the new model while
//! recall keeps using the old vectors, then [`Store::switch_model`] swaps them in one
//! transaction; a claim written meanwhile is left to the deferred path.

use std::collections::HashMap;
use std::sync::Arc;

use redb::{ReadableDatabase, ReadableTableMetadata};

use super::tables::{CLAIMS, META, VECTORS, VEC_KEYS};
use super::{decode, embed_text, to_bytes, Store};
use crate::embed::Embedder;
use crate::error::StoreError;
use crate::vector::VectorIndex;

/// A live claim's text to embed, and the version it is of: a vector made for it is taken
/// only while that version is still the live one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToEmbed {
    pub slug: String,
    pub content_hash: String,
    /// What the model embeds (label and text).
    pub text: String,
}

/// What a change of model did to one store.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Switched {
    /// Claims whose vector under the new model was taken.
    pub embedded: u64,
    /// Claims written or changed while their vectors were made: left to the deferred
    /// path (found by their words until it embeds them).
    pub left_behind: u64,
}

impl Store {
    /// The model recall and writes use here, if any.
    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.opts.embedder.as_ref()
    }

    /// The model writes embed with before they return: none when the model defers.
    pub(super) fn write_embedder(&self) -> Option<Arc<dyn Embedder>> {
        self.opts.embedder.clone().filter(|e| !e.deferred())
    }

    /// How many live claims have no vector under a loaded model (0 without one).
    pub fn unembedded_count(&self) -> usize {
        if self.opts.embedder.is_none() {
            return 0;
        }
        self.index
            .docs()
            .filter(|d| self.index.key(*d).is_none())
            .count()
    }

    /// Up to `limit` live claims with no vector under the loaded model, in slug order
    /// (none without a model).
    pub fn unembedded(&self, limit: usize) -> Result<Vec<ToEmbed>, StoreError> {
        if self.opts.embedder.is_none() || limit == 0 {
            return Ok(Vec::new());
        }
        let mut slugs: Vec<&str> = self
            .index
            .docs()
            .filter(|d| self.index.key(*d).is_none())
            .map(|d| self.index.slug(d))
            .collect();
        slugs.sort_unstable();
        slugs.truncate(limit);
        self.read_to_embed(slugs.into_iter())
    }

    /// Up to `limit` live claims after `after` in slug order, each with its text: the
    /// pages a change of model embeds.
    pub fn embedding_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ToEmbed>, StoreError> {
        let rx = self.db.begin_read()?;
        let claims = rx.open_table(CLAIMS)?;
        let mut out = Vec::with_capacity(limit);
        let range = match after {
            Some(a) => {
                claims.range::<&str>((std::ops::Bound::Excluded(a), std::ops::Bound::Unbounded))?
            }
            None => claims.range::<&str>(..)?,
        };
        for row in range {
            if out.len() >= limit {
                break;
            }
            let (_, v) = row?;
            let c = decode(v.value())?;
            out.push(ToEmbed {
                text: embed_text(&c.label, &c.text),
                slug: c.slug,
                content_hash: c.content_hash,
            });
        }
        Ok(out)
    }

    fn read_to_embed<'a>(
        &self,
        slugs: impl Iterator<Item = &'a str>,
    ) -> Result<Vec<ToEmbed>, StoreError> {
        let rx = self.db.begin_read()?;
        let claims = rx.open_table(CLAIMS)?;
        let mut out = Vec::new();
        for slug in slugs {
            if let Some(v) = claims.get(slug)? {
                let c = decode(v.value())?;
                out.push(ToEmbed {
                    text: embed_text(&c.label, &c.text),
                    slug: c.slug,
                    content_hash: c.content_hash,
                });
            }
        }
        Ok(out)
    }

    /// Whether `item` names the live version of a claim.
    fn still_live(&self, rx: &redb::ReadTransaction, item: &ToEmbed) -> Result<bool, StoreError> {
        let claims = rx.open_table(CLAIMS)?;
        Ok(match claims.get(item.slug.as_str())? {
            Some(v) => decode(v.value())?.content_hash == item.content_hash,
            None => false,
        })
    }

    /// Take vectors made under the model `model` (its id) for claims that had none. A
    /// vector is taken only when the model is still this store's, its claim's version is
    /// still live and still has no vector; the number taken.
    pub fn attach_vectors(
        &mut self,
        model: &str,
        items: Vec<(ToEmbed, Vec<f32>)>,
    ) -> Result<usize, StoreError> {
        let Some(e) = self.opts.embedder.clone() else {
            return Ok(0);
        };
        if e.id() != model || items.is_empty() {
            return Ok(0);
        }
        let dims = e.dims();
        let rx = self.db.begin_read()?;
        let mut take = Vec::with_capacity(items.len());
        for (item, v) in items {
            if v.len() == dims
                && self.index.key_of(&item.slug).is_none()
                && self.index.doc(&item.slug).is_some()
                && self.still_live(&rx, &item)?
            {
                take.push((item.slug, v));
            }
        }
        drop(rx);
        if take.is_empty() {
            return Ok(0);
        }
        let first = self.next_key;
        let mut tx = self.db.begin_write()?;
        // Vectors are derived: this commit is made durable by the next write's, and a
        // crash before that loses only vectors the background makes again after open.
        // A write that waits behind it pays no second fsync.
        tx.set_durability(redb::Durability::None)
            .map_err(|e| StoreError::Storage(e.into()))?;
        write_keyed(&tx, first, &take)?;
        tx.commit()?;
        self.next_key = first + take.len() as u64;
        let keyed = keyed(first, &take);
        if self.vindex.is_none() {
            self.vindex = Some(VectorIndex::empty(&self.dir, dims, self.opts.precision)?);
        }
        if let Some(ix) = self.vindex.as_mut() {
            ix.add_many(&keyed)?;
        }
        for (i, (slug, _)) in take.iter().enumerate() {
            self.index.set_key(slug, Some(first + i as u64));
        }
        Ok(take.len())
    }

    /// Change this store's model to `embedder`, taking `staged`: vectors made under it
    /// for live claims. In one transaction every old vector goes and every staged one
    /// whose version is still live comes in; the vector index is built afresh from them.
    /// A claim with no staged vector (written meanwhile) is left without one, for the
    /// deferred path; with a model that does not defer, it is embedded here.
    pub fn switch_model(
        &mut self,
        embedder: Arc<dyn Embedder>,
        staged: Vec<(ToEmbed, Vec<f32>)>,
    ) -> Result<Switched, StoreError> {
        let dims = embedder.dims();
        let rx = self.db.begin_read()?;
        let mut take: Vec<(String, Vec<f32>)> = Vec::with_capacity(staged.len());
        for (item, v) in staged {
            if v.len() == dims && self.still_live(&rx, &item)? {
                take.push((item.slug, v));
            }
        }
        let live = rx.open_table(CLAIMS)?.len()?;
        drop(rx);
        let first = self.next_key;
        let tx = self.db.begin_write()?;
        {
            tx.open_table(VECTORS)?.retain(|_, _| false)?;
            tx.open_table(VEC_KEYS)?.retain(|_, _| false)?;
        }
        write_keyed(&tx, first, &take)?;
        {
            let mut meta = tx.open_table(META)?;
            meta.insert("model", embedder.id())?;
            meta.insert("dims", dims.to_string().as_str())?;
        }
        tx.commit()?;
        self.next_key = first + take.len() as u64;
        let keys: HashMap<String, u64> = take
            .iter()
            .enumerate()
            .map(|(i, (slug, _))| (slug.clone(), first + i as u64))
            .collect();
        self.index.assign_keys(&keys);
        let mut ix = VectorIndex::empty(&self.dir, dims, self.opts.precision)?;
        ix.add_many(&keyed(first, &take))?;
        self.vindex = Some(ix);
        self.opts.embedder = Some(embedder.clone());
        let left_behind = live.saturating_sub(take.len() as u64);
        if left_behind > 0 && !embedder.deferred() {
            let rest = self.unembedded(usize::MAX)?;
            let texts: Vec<&str> = rest.iter().map(|t| t.text.as_str()).collect();
            let vs = embedder
                .embed(&texts)
                .map_err(|e| StoreError::Embedding(e.to_string()))?;
            let id = embedder.id().to_string();
            self.attach_vectors(&id, rest.into_iter().zip(vs).collect())?;
        }
        self.save_derived("claim-index snapshot", |s| s.save_claim_index());
        self.save_derived("vector index", |s| match &s.vindex {
            Some(ix) => ix.save(),
            None => Ok(()),
        });
        Ok(Switched {
            embedded: take.len() as u64,
            left_behind: if embedder.deferred() { left_behind } else { 0 },
        })
    }
}

/// Write `take`'s vectors under keys from `first` on, one a claim, and move the store's
/// next key past them: what taking vectors and changing model both do.
fn write_keyed(
    tx: &redb::WriteTransaction,
    first: u64,
    take: &[(String, Vec<f32>)],
) -> Result<(), StoreError> {
    let mut vk = tx.open_table(VEC_KEYS)?;
    let mut vt = tx.open_table(VECTORS)?;
    for (i, (slug, v)) in take.iter().enumerate() {
        let key = first + i as u64;
        vk.insert(slug.as_str(), key)?;
        vt.insert(key, to_bytes(v).as_slice())?;
    }
    let mut meta = tx.open_table(META)?;
    meta.insert("next_key", (first + take.len() as u64).to_string().as_str())?;
    Ok(())
}

/// `take`'s vectors under the keys [`write_keyed`] gave them.
fn keyed(first: u64, take: &[(String, Vec<f32>)]) -> Vec<(u64, &[f32])> {
    take.iter()
        .enumerate()
        .map(|(i, (_, v))| (first + i as u64, v.as_slice()))
        .collect()
}
