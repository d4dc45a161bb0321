//! The supervisor's own tests: restarts, unloads, and reads that never queue behind an
//! actor.
use super::*;
use brains::MemorizeInput;

fn config(home: &Path) -> Arc<Config> {
    let mut c = Config::load(home).unwrap();
    c.call_timeout = Duration::from_secs(10);
    Arc::new(c)
}

async fn memorize(owner: &OwnerHandle, fp: &str, label: &str) {
    let input = MemorizeInput {
        label: label.into(),
        text: format!("text of {label}"),
        source_agent: "claude:maker".into(),
        ..Default::default()
    };
    owner.memorize(Some(fp), input).await.unwrap();
}

async fn live(owner: &OwnerHandle, fp: &str) -> Vec<String> {
    let mut v: Vec<String> = owner
        .live_claims(Some(fp))
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
        .bootstrap(std::fs::canonicalize(projects.path()).unwrap())
        .await
        .unwrap();
    let b_root = projects.path().join("b");
    std::fs::create_dir_all(&b_root).unwrap();
    let (b, _) = owner
        .bootstrap(std::fs::canonicalize(&b_root).unwrap())
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
        .bootstrap(std::fs::canonicalize(projects.path()).unwrap())
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
                .recall(Some(&a.fingerprint), q)
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
        .bootstrap(std::fs::canonicalize(projects.path()).unwrap())
        .await
        .unwrap();
    memorize(&owner, &a.fingerprint, "x").await;
    assert!(owner.unload(&a.fingerprint).await.unwrap());
    assert!(!owner.registry.is_warm(&a.fingerprint));
    let m = roster::read_manifest(&owner.config.brains_dir().join(&a.fingerprint)).unwrap();
    assert_eq!(m.counts.live_claims, 1, "counts persisted on unload");
    assert_eq!(live(&owner, &a.fingerprint).await, vec!["x"]);
    assert!(owner.registry.is_warm(&a.fingerprint));
}
