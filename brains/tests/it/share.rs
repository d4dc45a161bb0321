//! A shared store's outbox, echo and log application, with the team's log played by a
//! vector: what two mirrors hold after the same log, conflicts, the floor, tombstones.

use std::sync::Arc;

use brains::store::{Cursor, Entry, Incoming, ShareState, SharedAct};
use brains::{ClaimState, FixedClock, Store};

use crate::common::{input, open, T0};

/// One row of the log: hash, member, the act (`None` once erased), a tombstone's targets.
type Row = (String, String, Option<SharedAct>, Option<Vec<String>>);

/// The team's log: entries in order, with the member the database stamped.
#[derive(Default)]
struct Log {
    rows: Vec<Row>,
    /// The slugs a tombstone names (the admin's purge knows the one it erases).
    tomb_slugs: Vec<String>,
}

impl Log {
    /// Send everything `store` has queued, as `member`; idempotent by hash.
    fn push(&mut self, store: &mut Store, member: &str) {
        let out = store.outbox(1000).unwrap();
        for o in &out {
            if !self.rows.iter().any(|r| r.0 == o.hash) {
                let act: SharedAct = serde_json::from_str(&o.body).unwrap();
                self.rows
                    .push((o.hash.clone(), member.to_string(), Some(act), None));
            }
        }
        let ids: Vec<u64> = out.iter().map(|o| o.id).collect();
        store.delivered(&ids).unwrap();
    }

    /// Apply every entry past the store's cursor.
    fn pull(&self, store: &mut Store) -> brains::store::Applied {
        let from = store.team_cursor().unwrap().seq as usize;
        let batch = self.rows[from..]
            .iter()
            .enumerate()
            .map(|(i, (hash, member, act, tomb))| Incoming {
                cursor: Cursor {
                    xid: 1,
                    seq: (from + i + 1) as i64,
                },
                hash: hash.clone(),
                member: member.clone(),
                entry: match (act, tomb) {
                    (_, Some(t)) => Entry::Tombstone {
                        targets: t.clone(),
                        slugs: self.tomb_slugs.clone(),
                    },
                    (Some(a), None) => Entry::Act(a.clone()),
                    (None, None) => Entry::Erased,
                },
            })
            .collect();
        store.apply_team(batch).unwrap()
    }
}

fn shared(dir: &std::path::Path, clock: &Arc<FixedClock>, member: &str) -> Store {
    let mut s = open(dir, clock, true);
    s.start_sharing(ShareState {
        key: "team".into(),
        member: member.into(),
        ..Default::default()
    })
    .unwrap();
    s
}

#[test]
fn a_write_reaches_the_other_mirror_once_attributed_and_its_echo_is_skipped() {
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let clock = Arc::new(FixedClock::new(T0));
    let mut a = shared(da.path(), &clock, "alice");
    let mut b = shared(db.path(), &clock, "bob");
    let mut log = Log::default();
    a.memorize(input("deploy", "we deploy with make release"))
        .unwrap();
    assert_eq!(a.outbox_len().unwrap().0, 1);
    log.push(&mut a, "alice");
    assert_eq!(a.outbox_len().unwrap().0, 0);
    let got = log.pull(&mut b);
    assert_eq!(got.applied, 1);
    let c = b.get("deploy").unwrap().expect("arrived");
    assert_eq!(c.member.as_deref(), Some("alice"));
    assert_eq!(c.text, "we deploy with make release");
    // A sees its own act back and applies nothing twice.
    let echo = log.pull(&mut a);
    assert_eq!((echo.applied, echo.echoes), (0, 1));
    assert_eq!(a.history("deploy").unwrap().len(), 1);
    // B pulling again applies nothing (its cursor is past it), also after a reopen.
    assert_eq!(log.pull(&mut b).applied, 0);
    drop(b);
    let mut b = open(db.path(), &clock, true);
    assert_eq!(log.pull(&mut b).applied, 0);
    assert!(b.share().is_some(), "the share survives a reopen");
    // A recall on B finds it: the derived indexes followed the apply.
    let hits = b
        .recall(&brains::RecallQuery {
            text: "make release".into(),
            limit: 5,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits.hits.len(), 1);
}

#[test]
fn a_concurrent_supersede_lands_both_versions_and_both_mirrors_agree() {
    for b_pulls_first in [false, true] {
        let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let clock = Arc::new(FixedClock::new(T0));
        let mut a = shared(da.path(), &clock, "alice");
        let mut b = shared(db.path(), &clock, "bob");
        let mut log = Log::default();
        a.memorize(input("flaky", "the flaky test is the network"))
            .unwrap();
        log.push(&mut a, "alice");
        log.pull(&mut b);
        log.pull(&mut a);
        clock.advance(10);
        a.memorize(input("flaky", "the flaky test is the timezone"))
            .unwrap();
        clock.advance(10);
        b.memorize(input("flaky", "the flaky test is the clock skew"))
            .unwrap();
        // Alice's lands first in the log; Bob's later, so Bob's is live everywhere.
        log.push(&mut a, "alice");
        if b_pulls_first {
            // Bob reads Alice's version while his own still waits to be sent.
            let got = log.pull(&mut b);
            assert_eq!(got.conflicts, 1);
        }
        log.push(&mut b, "bob");
        log.pull(&mut a);
        log.pull(&mut b);
        for (who, s) in [("alice", &a), ("bob", &b)] {
            let live = s.get("flaky").unwrap().unwrap();
            assert_eq!(
                live.text, "the flaky test is the clock skew",
                "{who}'s mirror, b_pulls_first={b_pulls_first}"
            );
            let conflict = live
                .conflict
                .as_ref()
                .expect("the live version names the conflict");
            assert_eq!(conflict.member, "alice", "{who}");
            let lost = s
                .history("flaky")
                .unwrap()
                .into_iter()
                .find(|c| c.text == "the flaky test is the timezone")
                .expect("the other version is kept");
            assert_eq!(lost.state, ClaimState::Outdated);
            let c = lost
                .conflict
                .expect("the outdated version names the conflict");
            assert_eq!((c.with, c.member), (live.version_id(), "bob".to_string()));
        }
    }
}

#[test]
fn a_field_that_fails_the_floor_is_never_queued() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut a = shared(d.path(), &clock, "alice");
    let mut i = input("push", "pushed fine");
    i.evidence = vec!["log: ghp_Q7xK3m2P9lW4zB6nR8tY1uI5oA0sD3fG7hJk".into()];
    a.memorize(i).unwrap();
    assert_eq!(a.outbox_len().unwrap(), (0, 1));
    assert!(a.get("push").unwrap().is_some(), "it stays local");
}

#[test]
fn sharing_queues_live_claims_and_a_tombstone_erases_every_mirror_copy() {
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let clock = Arc::new(FixedClock::new(T0));
    let mut a = open(da.path(), &clock, true);
    a.memorize(input(
        "oops",
        "the staging database answers on db7.internal",
    ))
    .unwrap();
    a.memorize(input("keep", "keep this one")).unwrap();
    let began = a
        .start_sharing(ShareState {
            key: "repo:abc".into(),
            member: "alice".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(began.queued, 2);
    let mut b = shared(db.path(), &clock, "bob");
    let mut log = Log::default();
    log.push(&mut a, "alice");
    log.pull(&mut b);
    assert!(b.get("oops").unwrap().is_some());
    // The admin erases the act's content and appends a tombstone naming it.
    let target = log
        .rows
        .iter()
        .position(|r| r.2.as_ref().unwrap().op.slug() == "oops")
        .unwrap();
    let hash = log.rows[target].0.clone();
    log.rows[target].2 = None;
    log.rows
        .push(("tomb".into(), "admin".into(), None, Some(vec![hash])));
    log.tomb_slugs = vec!["oops".into()];
    for s in [&mut a, &mut b] {
        let got = log.pull(s);
        assert_eq!(got.purged, 1);
        assert!(s.history("oops").unwrap().is_empty());
        assert!(s.get("keep").unwrap().is_some());
    }
}

/// Issue 51: a `learn wrong` (or a `retire`) on B racing a supersede on A of the same
/// claim was silently skipped on A (the version was no longer live there) and B never
/// learned it lost. Every racing act lands as a race naming the member and the version
/// he meant, on both mirrors, whichever order the log holds them in.
#[test]
fn a_verdict_or_a_retirement_racing_a_supersede_is_kept_on_both_mirrors() {
    for retire in [false, true] {
        for bob_first in [false, true] {
            let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let clock = Arc::new(FixedClock::new(T0));
            let mut a = shared(da.path(), &clock, "alice");
            let mut b = shared(db.path(), &clock, "bob");
            let mut log = Log::default();
            a.memorize(input("port", "the api listens on 8080"))
                .unwrap();
            log.push(&mut a, "alice");
            log.pull(&mut b);
            log.pull(&mut a);
            let graded = b.get("port").unwrap().unwrap().version_id();
            clock.advance(10);
            a.memorize(input("port", "the api listens on 9090"))
                .unwrap();
            if retire {
                b.retire("port", "claude:maker", "the api moved behind the gateway")
                    .unwrap();
            } else {
                b.learn("port", brains::Verdict::Wrong, "claude:maker", None)
                    .unwrap();
            }
            if bob_first {
                log.push(&mut b, "bob");
                log.push(&mut a, "alice");
            } else {
                log.push(&mut a, "alice");
                log.push(&mut b, "bob");
            }
            // Two rounds: what a pull queues (a race announced) is sent and read too.
            for _ in 0..2 {
                log.pull(&mut a);
                log.pull(&mut b);
                log.push(&mut a, "alice");
                log.push(&mut b, "bob");
            }
            let act = if retire { "retired" } else { "learn wrong" };
            let case = format!("retire={retire} bob_first={bob_first}");
            for (who, s) in [("alice", &a), ("bob", &b)] {
                let versions = s.history("port").unwrap();
                let meant = versions
                    .iter()
                    .find(|c| c.version_id() == graded)
                    .unwrap_or_else(|| panic!("{who} keeps the version graded, {case}"));
                let want = brains::Race {
                    member: "bob".into(),
                    act: act.into(),
                    version: graded.clone(),
                };
                assert_eq!(meant.races, vec![want.clone()], "{who}'s mirror, {case}");
                let live = s.get("port").unwrap().expect("alice's version stays live");
                assert_eq!(live.text, "the api listens on 9090", "{who}, {case}");
                assert_eq!(live.races, vec![want], "{who}'s live version, {case}");
                if !retire {
                    assert_eq!(meant.trust.wrong, 1, "the verdict counts, {who}, {case}");
                }
            }
        }
    }
}

/// Issue 51: `team_seen` grew by one row per act of the team's log and was never pruned.
/// What a mirror keeps to follow the log is now the cursor, the echoes it awaits and one
/// row per slug: 100 000 acts applied (1 000 claims, 99 000 verdicts) keep it far under
/// 1 MB. The figure is printed for docs/BENCHMARKS.md.
#[test]
fn following_the_log_keeps_no_row_per_act() {
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let clock = Arc::new(FixedClock::new(T0));
    let mut a = shared(da.path(), &clock, "alice");
    let mut b = shared(db.path(), &clock, "bob");
    let mut acts: Vec<SharedAct> = Vec::new();
    for i in 0..1000 {
        a.memorize(input(
            &format!("fact {i}"),
            &format!("fact number {i} holds"),
        ))
        .unwrap();
    }
    let mut versions = Vec::new();
    for o in a.outbox(1000).unwrap() {
        let act: SharedAct = serde_json::from_str(&o.body).unwrap();
        if let brains::store::SharedOp::Write { claim } = &act.op {
            versions.push((claim.slug.clone(), claim.version_id()));
        }
        acts.push(act);
    }
    assert_eq!(versions.len(), 1000);
    for i in 0..99_000usize {
        let (slug, version) = &versions[i % versions.len()];
        acts.push(SharedAct {
            origin: "alice-store".into(),
            at: T0 + i as i64,
            op: brains::store::SharedOp::Learn {
                slug: slug.clone(),
                version: version.clone(),
                verdict: brains::Verdict::Correct,
                note: None,
            },
        });
    }
    let started = std::time::Instant::now();
    for (n, chunk) in acts.chunks(5000).enumerate() {
        let batch = chunk
            .iter()
            .enumerate()
            .map(|(i, act)| {
                let seq = (n * 5000 + i + 1) as i64;
                Incoming {
                    cursor: Cursor { xid: 1, seq },
                    // A sha256's width, as the log's hashes have.
                    hash: format!("{seq:064x}"),
                    member: "alice".into(),
                    entry: Entry::Act(act.clone()),
                }
            })
            .collect();
        b.apply_team(batch).unwrap();
    }
    let bytes = b.team_state_bytes().unwrap();
    eprintln!(
        "team bookkeeping after 100000 acts: {bytes} bytes ({} ms to apply)",
        started.elapsed().as_millis()
    );
    assert!(bytes < 1_000_000, "{bytes} bytes");
    assert_eq!(b.team_cursor().unwrap().seq, 100_000);
    let c = b.get("fact-7").unwrap().unwrap();
    assert_eq!(c.trust.correct, 99, "every verdict applied once");
    // A leave and a join of the same database resume at the cursor: nothing twice.
    b.stop_sharing().unwrap();
    b.start_sharing(ShareState {
        key: "team".into(),
        member: "bob".into(),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(b.team_cursor().unwrap().seq, 100_000);
    // Another database's log starts from its beginning.
    b.start_sharing(ShareState {
        key: "team".into(),
        member: "bob".into(),
        db: "postgres://bob@elsewhere/team".into(),
    })
    .unwrap();
    assert_eq!(b.team_cursor().unwrap().seq, 0);
}

/// Issue 51: a local `purge` on a shared brain erased only the local copy and said it was
/// erased; the team's copy stayed. A claim in the team's log is refused with the fix (the
/// admin's `medulla team purge`); one the floor kept on this machine is erased here.
#[test]
fn a_local_purge_of_a_shared_claim_is_refused_with_the_fix() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let mut a = shared(d.path(), &clock, "alice");
    a.memorize(input("deploy", "we deploy with make release"))
        .unwrap();
    let e = a.purge("deploy", "claude:maker").unwrap_err();
    assert_eq!(e.code(), "shared_purge");
    let msg = e.to_string();
    assert!(
        msg.contains("medulla team purge") && msg.contains("--store team --slug deploy"),
        "{msg}"
    );
    assert!(a.get("deploy").unwrap().is_some(), "nothing was erased");
    // Turned into a request the team sees (once, however often it is tried).
    assert_eq!(
        a.purge_requests().unwrap(),
        vec![("deploy".to_string(), "alice".to_string())]
    );
    let _ = a.purge("deploy", "claude:maker").unwrap_err();
    let d2 = tempfile::tempdir().unwrap();
    let mut b = shared(d2.path(), &clock, "bob");
    let mut log = Log::default();
    log.push(&mut a, "alice");
    let requests = log
        .rows
        .iter()
        .filter(|r| {
            matches!(
                r.2.as_ref().map(|a| &a.op),
                Some(brains::store::SharedOp::PurgeRequest { .. })
            )
        })
        .count();
    assert_eq!(requests, 1, "asked once");
    log.pull(&mut b);
    assert_eq!(
        b.purge_requests().unwrap(),
        vec![("deploy".to_string(), "alice".to_string())],
        "every mirror lists it"
    );
    // The admin's purge: its tombstone erases the claim and clears the request.
    let hashes: Vec<String> = log
        .rows
        .iter()
        .filter(|r| r.2.as_ref().is_some_and(|a| a.op.slug() == "deploy"))
        .map(|r| r.0.clone())
        .collect();
    log.rows
        .push(("tomb".into(), "admin".into(), None, Some(hashes)));
    log.tomb_slugs = vec!["deploy".into()];
    for s in [&mut a, &mut b] {
        log.pull(s);
        assert!(s.history("deploy").unwrap().is_empty());
        assert!(s.purge_requests().unwrap().is_empty());
    }
    // Kept here by the floor: never in the team's log, so the local purge is the erasure.
    let mut i = input("push", "pushed fine");
    i.evidence = vec!["log: ghp_Q7xK3m2P9lW4zB6nR8tY1uI5oA0sD3fG7hJk".into()];
    a.memorize(i).unwrap();
    a.purge("push", "claude:maker").unwrap();
    assert!(a.history("push").unwrap().is_empty());
}
