//! The supervisor's own tests: restarts, unloads, and reads that never queue behind an
//! actor.
use super::*;
use crate::roster;
use crate::store_id::StoreId;
use brains::MemorizeInput;
use std::path::Path;

fn config(home: &Path) -> Arc<Config> {
    let mut c = Config::load(home).unwrap();
    c.call_timeout = Duration::from_secs(10);
    Arc::new(c)
}

async fn memorize(owner: &OwnerHandle, fp: &Fingerprint, label: &str) {
    let input = MemorizeInput {
        label: label.into(),
        text: format!("text of {label}"),
        source_agent: "claude:maker".into(),
        ..Default::default()
    };
    owner.memorize(&StoreId::brain(fp), input).await.unwrap();
}

async fn live(owner: &OwnerHandle, fp: &Fingerprint) -> Vec<String> {
    let mut v: Vec<String> = owner
        .live_claims(&StoreId::brain(fp))
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.label)
        .collect();
    v.sort();
    v
}

/// A brain actor that fails is restarted from disk; its acknowledged claims are all
/// there, and another brain's actor is never touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_brain_restarts_and_other_brains_never_notice() {
    let home = tempfile::tempdir().unwrap();
    let projects = tempfile::tempdir().unwrap();
    let (owner, _join) = OwnerHandle::start(config(home.path()), StoreOptions::default())
        .await
        .unwrap();
    let (a, _) = owner
        .bootstrap(std::fs::canonicalize(projects.path()).unwrap(), None, false)
        .await
        .unwrap();
    let b_root = projects.path().join("b");
    std::fs::create_dir_all(&b_root).unwrap();
    let (b, _) = owner
        .bootstrap(std::fs::canonicalize(&b_root).unwrap(), None, false)
        .await
        .unwrap();
    memorize(&owner, &a.fingerprint, "a1").await;
    memorize(&owner, &a.fingerprint, "a2").await;
    memorize(&owner, &b.fingerprint, "b1").await;
    let b_actor = owner.registry.warm_actor(&b.fingerprint).unwrap().get_id();
    let a_actor = owner.registry.warm_actor(&a.fingerprint).unwrap();
    let a_id = a_actor.get_id();

    // The restart happens in the owner; the registry says when the warm set changes.
    let mut changes = owner.registry.subscribe();
    a_actor.cast(BrainMsg::Crash).unwrap();
    let restarted = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if owner
                .registry
                .warm_actor(&a.fingerprint)
                .is_some_and(|r| r.get_id() != a_id)
            {
                return;
            }
            changes.changed().await.expect("the owner runs");
        }
    })
    .await;
    assert!(
        restarted.is_ok(),
        "the owner restarted the failed brain actor"
    );
    assert_eq!(live(&owner, &a.fingerprint).await, vec!["a1", "a2"]);
    memorize(&owner, &a.fingerprint, "a3").await;
    assert_eq!(live(&owner, &a.fingerprint).await, vec!["a1", "a2", "a3"]);
    assert_eq!(
        owner.registry.warm_actor(&b.fingerprint).unwrap().get_id(),
        b_actor,
        "b was never restarted"
    );
    assert_eq!(live(&owner, &b.fingerprint).await, vec!["b1"]);
}

/// Reads do not queue behind the actor: with the brain's actor busy (its mailbox
/// blocked), reads of its store are still answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_served_while_the_actor_is_busy() {
    let home = tempfile::tempdir().unwrap();
    let projects = tempfile::tempdir().unwrap();
    let (owner, _join) = OwnerHandle::start(config(home.path()), StoreOptions::default())
        .await
        .unwrap();
    let (a, _) = owner
        .bootstrap(std::fs::canonicalize(projects.path()).unwrap(), None, false)
        .await
        .unwrap();
    memorize(&owner, &a.fingerprint, "x").await;
    let (release, hold) = tokio::sync::oneshot::channel();
    owner
        .registry
        .warm_actor(&a.fingerprint)
        .unwrap()
        .cast(BrainMsg::Hold(hold))
        .unwrap();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let q = brains::RecallQuery {
            text: "text".into(),
            limit: 5,
            ..Default::default()
        };
        (
            live(&owner, &a.fingerprint).await,
            owner
                .recall(&StoreId::brain(&a.fingerprint), q)
                .await
                .unwrap()
                .hits
                .len(),
        )
    })
    .await;
    release.send(()).unwrap();
    let (labels, hits) = read.expect("reads answered while the actor was held");
    assert_eq!(labels, vec!["x"]);
    assert_eq!(hits, 1);
}

/// Idle brains unload (store closed, counts in the manifest) and reload on demand.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unload_closes_the_store_and_the_next_request_reloads_it() {
    let home = tempfile::tempdir().unwrap();
    let projects = tempfile::tempdir().unwrap();
    let (owner, _join) = OwnerHandle::start(config(home.path()), StoreOptions::default())
        .await
        .unwrap();
    let (a, _) = owner
        .bootstrap(std::fs::canonicalize(projects.path()).unwrap(), None, false)
        .await
        .unwrap();
    memorize(&owner, &a.fingerprint, "x").await;
    assert!(owner.unload(&a.fingerprint).await.unwrap());
    assert!(!owner.registry.is_warm(&a.fingerprint));
    owner.closed(&a.fingerprint).await;
    let m = roster::read_manifest(&owner.config.brains_dir().join(&a.fingerprint)).unwrap();
    assert_eq!(m.counts.live_claims, 1, "counts persisted on unload");
    assert_eq!(live(&owner, &a.fingerprint).await, vec!["x"]);
    assert!(owner.registry.is_warm(&a.fingerprint));
}

/// An embedder that takes its time: each batch waits until the test lets it go, so a
/// store that must re-embed opens as slowly as the test wants.
#[derive(Debug)]
struct SlowEmbedder {
    id: &'static str,
    gate: Arc<tokio::sync::Semaphore>,
}

impl brains::Embedder for SlowEmbedder {
    fn id(&self) -> &str {
        self.id
    }
    fn dims(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, brains::EmbedError> {
        // Batches (an open's re-embed) wait at the gate; single texts (a memorize, a
        // query) pass.
        if self.id.ends_with("slow") && texts.len() > 1 {
            // Blocks this blocking-pool thread until the test opens the gate.
            let gate = self.gate.clone();
            let permit = futures::executor::block_on(gate.acquire_owned());
            permit.expect("gate open").forget();
        }
        Ok(texts
            .iter()
            .map(|t| vec![t.len() as f32, 1.0, 0.5, 0.25])
            .collect())
    }
}

fn embedder(id: &'static str, gate: &Arc<tokio::sync::Semaphore>) -> StoreOptions {
    StoreOptions {
        embedder: Some(Arc::new(SlowEmbedder {
            id,
            gate: gate.clone(),
        })),
        ..StoreOptions::default()
    }
}

async fn bootstrap(owner: &OwnerHandle, root: &Path) -> Manifest {
    std::fs::create_dir_all(root).unwrap();
    owner
        .bootstrap(std::fs::canonicalize(root).unwrap(), None, false)
        .await
        .unwrap()
        .0
}

/// Reported from outside: while one 100 000-claim brain rebuilt on open, every other
/// dormant brain answered 504 after 30 s, because the supervisor awaited the open. A
/// store made slow to open (it must re-embed, and its embedder waits on the test) must
/// not delay a request to another dormant brain; its own requests say it is opening,
/// with progress, and are served once it is open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_opening_brain_never_delays_another_dormant_brain() {
    let home = tempfile::tempdir().unwrap();
    let projects = tempfile::tempdir().unwrap();
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    // First life: brain `big` gets claims embedded by the fast model; `small` and
    // `other` are created empty. Then the owner stops, closing every store.
    {
        let (owner, join) = OwnerHandle::start(config(home.path()), embedder("fast", &gate))
            .await
            .unwrap();
        let big = bootstrap(&owner, &projects.path().join("big")).await;
        bootstrap(&owner, &projects.path().join("small")).await;
        bootstrap(&owner, &projects.path().join("other")).await;
        for i in 0..3 {
            memorize(&owner, &big.fingerprint, &format!("claim {i}")).await;
        }
        owner.actor.stop(None);
        join.await.unwrap();
    }
    // Second life: a new model, so `big` must re-embed on open, batch by batch, each
    // batch held at the gate.
    let mut cfg = Config::load(home.path()).unwrap();
    cfg.call_timeout = Duration::from_millis(1500);
    let (owner, _join) = OwnerHandle::start(Arc::new(cfg), embedder("slow", &gate))
        .await
        .unwrap();
    let fp = |name: &str| {
        roster::fingerprint(
            &std::fs::canonicalize(projects.path().join(name))
                .unwrap()
                .to_string_lossy(),
        )
    };
    let (big, small, other) = (fp("big"), fp("small"), fp("other"));

    // The cost of opening a small dormant brain when nothing else is opening.
    let t = std::time::Instant::now();
    memorize(&owner, &other, "written alone").await;
    assert_eq!(live(&owner, &other).await, vec!["written alone"]);
    let alone = t.elapsed();

    // `big` starts opening and stays in its re-embed.
    let waiting = {
        let owner = owner.clone();
        let big = big.clone();
        tokio::spawn(async move { owner.warm_brain(&big).await.map(|_| ()) })
    };
    let mut changes = owner.registry.subscribe();
    while owner.registry.opening(&big).is_none() {
        tokio::time::timeout(Duration::from_secs(5), changes.changed())
            .await
            .ok();
    }

    let t = std::time::Instant::now();
    memorize(&owner, &small, "written while big opens").await;
    assert_eq!(live(&owner, &small).await, vec!["written while big opens"]);
    let beside = t.elapsed();
    assert!(
        owner.registry.opening(&big).is_some(),
        "big is still opening: the small brain was served beside it"
    );
    assert!(
        beside < alone + Duration::from_millis(100),
        "a dormant brain took {beside:?} while another opened, {alone:?} alone"
    );

    // The request that waited on `big` passed its deadline: it says why, with progress.
    let e = waiting.await.unwrap().unwrap_err();
    assert_eq!(e.code(), "brain_opening", "{e}");
    let j = e.to_json();
    assert_eq!(j["progress"]["phase"], "embedding");
    assert_eq!(j["progress"]["total"], 3);

    // Let the open finish: `big` is served, every claim there.
    gate.add_permits(1000);
    let mut served = None;
    for _ in 0..20 {
        match owner.warm_brain(&big).await {
            Ok(_) => {
                served = Some(live(&owner, &big).await);
                break;
            }
            Err(e) => assert_eq!(e.code(), "brain_opening", "{e}"),
        }
    }
    assert_eq!(
        served.expect("big opened"),
        vec!["claim 0", "claim 1", "claim 2"]
    );
}

/// Read in the code: ractor runs no `post_stop` for an actor that fails, so the failed
/// medulla actor's store stayed open and its successor could not open the same file.
/// After a medulla actor fails, the medulla takes writes again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_medulla_actor_releases_its_store_and_the_medulla_comes_back() {
    let home = tempfile::tempdir().unwrap();
    let (owner, _join) = OwnerHandle::start(config(home.path()), StoreOptions::default())
        .await
        .unwrap();
    let input = |label: &str| MemorizeInput {
        label: label.into(),
        text: format!("text of {label}"),
        source_agent: "claude:maker".into(),
        ..Default::default()
    };
    owner
        .memorize(&StoreId::Medulla, input("before"))
        .await
        .unwrap();
    let old = owner.registry.medulla();
    let mut changes = owner.registry.subscribe();
    old.cast(BrainMsg::Crash).unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        while owner.registry.medulla().get_id() == old.get_id() {
            changes.changed().await.expect("the owner runs");
        }
    })
    .await
    .expect("the medulla actor was replaced");
    owner
        .memorize(&StoreId::Medulla, input("after"))
        .await
        .expect("the new medulla actor writes");
    let mut labels: Vec<String> = owner
        .live_claims(&StoreId::Medulla)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.label)
        .collect();
    labels.sort();
    assert_eq!(labels, vec!["after", "before"]);
}

/// Unloading drains a brain beside the supervisor: with a brain's actor held busy, the
/// owner still answers, and another brain loads at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unloading_a_busy_brain_does_not_hold_the_owner() {
    let home = tempfile::tempdir().unwrap();
    let projects = tempfile::tempdir().unwrap();
    let (owner, _join) = OwnerHandle::start(config(home.path()), StoreOptions::default())
        .await
        .unwrap();
    let a = bootstrap(&owner, &projects.path().join("a")).await;
    let b = bootstrap(&owner, &projects.path().join("b")).await;
    memorize(&owner, &a.fingerprint, "x").await;
    memorize(&owner, &b.fingerprint, "y").await;
    owner.unload(&b.fingerprint).await.unwrap();
    owner.closed(&b.fingerprint).await;
    let (release, hold) = tokio::sync::oneshot::channel();
    owner
        .registry
        .warm_actor(&a.fingerprint)
        .unwrap()
        .cast(BrainMsg::Hold(hold))
        .unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(5), async {
        assert!(owner.unload(&a.fingerprint).await.unwrap());
        live(&owner, &b.fingerprint).await
    })
    .await;
    release.send(()).unwrap();
    assert_eq!(
        answered.expect("the owner answered while a drained"),
        vec!["y"]
    );
    owner.closed(&a.fingerprint).await;
    assert_eq!(live(&owner, &a.fingerprint).await, vec!["x"]);
}
