//! A model writes do not wait for (`Embedder::deferred`): a claim is found by its words
//! at once and by its meaning once its vector is attached; a change of model swaps every
//! vector at once and leaves what was written meanwhile to the deferred path.

use std::sync::Arc;

use brains::{EmbedError, Embedder, FixedClock, RecallQuery, Store, StoreOptions};
use tempfile::tempdir;

use crate::common::{input, BagOfWords, T0};

/// [`BagOfWords`] under another id and dimension, deferring its writes.
#[derive(Debug)]
struct Deferred {
    id: &'static str,
}

impl Embedder for Deferred {
    fn id(&self) -> &str {
        self.id
    }
    fn dims(&self) -> usize {
        64
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        BagOfWords.embed(texts)
    }
    fn deferred(&self) -> bool {
        true
    }
}

fn open_with(dir: &std::path::Path, e: Arc<dyn Embedder>) -> Store {
    let clock = Arc::new(FixedClock::new(T0));
    Store::open(
        dir,
        StoreOptions {
            embedder: Some(e),
            clock,
            ..Default::default()
        },
    )
    .expect("open")
    .0
}

fn found(s: &Store, text: &str, slug: &str) -> (bool, bool) {
    let r = s
        .recall(&RecallQuery {
            text: text.into(),
            limit: 10,
            matched_only: false,
            ..Default::default()
        })
        .expect("recall");
    match r.hits.iter().find(|h| h.claim.slug == slug) {
        Some(h) => (true, h.vector_rank.is_some()),
        None => (false, false),
    }
}

/// Embed what the store lists, as the owner's background does, and attach it.
fn catch_up(s: &mut Store) -> usize {
    let e = s.embedder().cloned().expect("a model");
    let todo = s.unembedded(1000).expect("unembedded");
    let texts: Vec<&str> = todo.iter().map(|t| t.text.as_str()).collect();
    let vs = e.embed(&texts).expect("embed");
    s.attach_vectors(e.id(), todo.into_iter().zip(vs).collect())
        .expect("attach")
}

#[test]
fn a_deferred_write_is_found_by_words_at_once_and_by_meaning_once_attached() {
    let dir = tempdir().unwrap();
    let mut s = open_with(dir.path(), Arc::new(Deferred { id: "slow-a" }));
    s.memorize(input("deploy steps", "run make release then tag"))
        .expect("memorize");
    assert_eq!(
        s.unembedded_count(),
        1,
        "the write left its vector to later"
    );
    assert_eq!(found(&s, "make release", "deploy-steps"), (true, false));
    // Unembedded, it is ranked by its words, not as a claim unlike the query: the best
    // row for its own words, with no cosine.
    let top = s
        .recall(&RecallQuery {
            text: "make release".into(),
            limit: 1,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(top.hits[0].claim.slug, "deploy-steps");
    assert_eq!(top.hits[0].vector, None);
    // A vector made under another model, or for a version no longer live, is refused.
    let todo = s.unembedded(10).unwrap();
    let v = BagOfWords.embed(&[todo[0].text.as_str()]).unwrap();
    assert_eq!(
        s.attach_vectors("another-model", vec![(todo[0].clone(), v[0].clone())])
            .unwrap(),
        0
    );
    let mut stale = todo[0].clone();
    stale.content_hash = "not-the-live-version".into();
    assert_eq!(
        s.attach_vectors("slow-a", vec![(stale, v[0].clone())])
            .unwrap(),
        0
    );
    assert_eq!(catch_up(&mut s), 1);
    assert_eq!(s.unembedded_count(), 0);
    assert_eq!(found(&s, "make release", "deploy-steps"), (true, true));
    // A reopen keeps the attached vector and does not embed on open.
    drop(s);
    let s = open_with(dir.path(), Arc::new(Deferred { id: "slow-a" }));
    assert_eq!(s.unembedded_count(), 0);
    assert_eq!(found(&s, "make release", "deploy-steps"), (true, true));
}

#[test]
fn a_change_of_model_swaps_every_vector_and_leaves_later_writes_to_the_deferred_path() {
    let dir = tempdir().unwrap();
    let mut s = open_with(dir.path(), Arc::new(BagOfWords));
    for i in 0..40 {
        s.memorize(input(&format!("fact {i}"), &format!("word{i} shared note")))
            .expect("memorize");
    }
    let next: Arc<dyn Embedder> = Arc::new(Deferred { id: "slow-b" });
    // The owner embeds every live claim under the new model, page by page ...
    let mut staged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = s.embedding_page(after.as_deref(), 16).unwrap();
        if page.is_empty() {
            break;
        }
        after = page.last().map(|t| t.slug.clone());
        let texts: Vec<&str> = page.iter().map(|t| t.text.as_str()).collect();
        let vs = next.embed(&texts).unwrap();
        staged.extend(page.into_iter().zip(vs));
    }
    assert_eq!(staged.len(), 40);
    // ... while writes go on under the old one: a new claim and a changed one.
    s.memorize(input("fact 40", "word40 shared note")).unwrap();
    s.memorize(input("fact 3", "word3 changed meanwhile"))
        .unwrap();
    assert_eq!(found(&s, "word3", "fact-3"), (true, true));
    let done = s.switch_model(next.clone(), staged).unwrap();
    assert_eq!(
        done.embedded, 39,
        "the changed claim's staged vector is stale"
    );
    assert_eq!(done.left_behind, 2);
    assert_eq!(s.embedder().unwrap().id(), "slow-b");
    // Nothing is unfindable: every claim by its words, the rest by meaning too.
    for i in 0..=40 {
        let (by_words, _) = found(&s, &format!("word{i}"), &format!("fact-{i}"));
        assert!(by_words, "fact-{i} lost in the switch");
    }
    assert_eq!(s.unembedded_count(), 2);
    // A write under the new model is found by its words at once.
    s.memorize(input("fact 41", "word41 shared note")).unwrap();
    assert_eq!(found(&s, "word41", "fact-41"), (true, false));
    assert_eq!(s.unembedded_count(), 3);
    assert_eq!(catch_up(&mut s), 3);
    assert_eq!(found(&s, "word41", "fact-41"), (true, true));
    assert_eq!(found(&s, "word40", "fact-40"), (true, true));
    // The switch is durable: a reopen under the new model re-embeds nothing.
    drop(s);
    let s = open_with(dir.path(), next);
    assert_eq!(s.unembedded_count(), 0);
    assert_eq!(found(&s, "word7", "fact-7"), (true, true));
}
