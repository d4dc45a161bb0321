//! `Store::memorize_many`: one transaction, the same outcomes, versions, acts and
//! vectors as memorizing the same inputs one by one, refusals included, in order.

use std::sync::Arc;

use brains::recall::RankMode;
use brains::store::Commit;
use brains::{FixedClock, MemorizeInput, RecallQuery, Store, Strength};

use crate::common::{input, opts, T0};

/// A batch with every kind of outcome: new claims, a supersession of an existing claim,
/// a slug written twice within the batch, an identical write, a downgrade, a label
/// collision, an invalid input, and an import that may downgrade.
fn inputs() -> Vec<MemorizeInput> {
    let strong = |label: &str, text: &str| MemorizeInput {
        strength: Strength::Verified,
        ..input(label, text)
    };
    let mut import = input("kettle boils", "imported older hint");
    import.strength = Strength::Hint;
    import.act = Some(brains::ActKind::Import);
    vec![
        input("deploy window", "deploys go out on tuesdays"),
        input("cache flake", "the cache test flakes on two cores"),
        strong("kettle boils", "the kettle boils in ninety seconds"),
        input(
            "cache flake",
            "the cache test flakes on two cores; pin the runner",
        ),
        input("deploy window", "deploys go out on tuesdays"),
        input("kettle boils", "a weaker claim about the kettle"),
        input("Deploy-Window!", "a different label with the same slug"),
        input("  ", "no label"),
        import,
        strong(
            "cache flake",
            "the cache test flakes on two cores; fixed by pinning",
        ),
    ]
}

/// Everything observable about a store after the writes; its answer to a query too when
/// `recall` (600 fillers the test embedder cannot tell apart tie, and which of them a
/// top 5 shows depends on where each vector sits, graph or fresh set).
fn observe(s: &Store, recall: bool) -> String {
    let mut out = String::new();
    for slug in ["deploy-window", "cache-flake", "kettle-boils"] {
        for c in s.history(slug).unwrap() {
            out += &format!("{}\n", serde_json::to_string(&c).unwrap());
        }
    }
    for a in s.acts(0, 1000).unwrap() {
        out += &format!("{}\n", serde_json::to_string(&a).unwrap());
    }
    let r = s
        .recall(&RecallQuery {
            text: "cache runner pinning".into(),
            limit: 5,
            mode: RankMode::Auto,
            ..Default::default()
        })
        .unwrap();
    for h in r.hits.iter().filter(|_| recall) {
        out += &format!("{} {} {:?}\n", h.claim.slug, h.score, h.vector);
    }
    out += &format!("{:?}\n", s.stats().unwrap());
    out += &format!("{:?}\n", s.check_index().unwrap());
    out
}

/// [`inputs`] followed by `pad` plain new claims: a batch that large has its vectors
/// inserted on every core, one that small one by one; both must equal the sequence.
fn padded(pad: usize) -> Vec<MemorizeInput> {
    let mut v = inputs();
    v.extend((0..pad).map(|i| input(&format!("filler {i}"), &format!("filler note {i}"))));
    v
}

#[test]
fn a_batch_equals_the_same_memorizes_one_by_one() {
    // 60: vectors added together; 600: embedded beside the transaction as well.
    for (vectors, pad) in [(false, 0), (true, 0), (true, 60), (true, 600)] {
        let one = tempfile::tempdir().unwrap();
        let many = tempfile::tempdir().unwrap();
        let clock = Arc::new(FixedClock::new(T0));
        let (mut a, _) = Store::open(one.path(), opts(&clock, vectors)).unwrap();
        let (mut b, _) = Store::open(many.path(), opts(&clock, vectors)).unwrap();
        // A claim both stores hold before the batch, so the batch supersedes it.
        a.memorize(input("cache flake", "it flakes")).unwrap();
        b.memorize(input("cache flake", "it flakes")).unwrap();
        clock.advance(10);
        let sequential: Vec<String> = padded(pad)
            .into_iter()
            .map(|i| format!("{:?}", a.memorize(i)))
            .collect();
        let results = b.memorize_many(padded(pad)).unwrap();
        let codes: Vec<&str> = results
            .iter()
            .map(|r| match r {
                Ok(o) if o.unchanged() => "unchanged",
                Ok(_) => "written",
                Err(e) => e.code(),
            })
            .collect();
        assert_eq!(
            codes[..10],
            [
                "written",
                "written",
                "written",
                "written",
                "unchanged",
                "would_downgrade",
                "label_collision",
                "empty_label",
                "written",
                "written"
            ]
        );
        let batched: Vec<String> = results.into_iter().map(|r| format!("{r:?}")).collect();
        assert_eq!(batched, sequential, "vectors: {vectors}, pad {pad}");
        let recall = pad < 600;
        assert_eq!(
            observe(&b, recall),
            observe(&a, recall),
            "vectors: {vectors}, pad {pad}"
        );
        let acts = b.stats().unwrap().acts;
        drop((a, b));
        // And it all survives a reopen.
        let (b, _) = Store::open(many.path(), opts(&clock, vectors)).unwrap();
        assert_eq!(b.stats().unwrap().acts, acts);
        assert_eq!(b.check_index().unwrap(), None);
    }
}

#[test]
fn an_empty_or_all_refused_batch_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let (mut s, _) = Store::open(d.path(), opts(&clock, true)).unwrap();
    assert!(s.memorize_many(vec![]).unwrap().is_empty());
    let r = s
        .memorize_many(vec![input("", "x"), input("ok", "")])
        .unwrap();
    assert!(r.iter().all(Result::is_err));
    assert_eq!(s.stats().unwrap().acts, 0);
}

/// The test embedder, failing any batch with a text that says "poison".
#[derive(Debug)]
struct Poisoned;

impl brains::Embedder for Poisoned {
    fn id(&self) -> &str {
        "test-bag-of-words"
    }
    fn dims(&self) -> usize {
        64
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, brains::EmbedError> {
        if texts.iter().any(|t| t.contains("poison")) {
            return Err(brains::EmbedError::Model("poisoned".into()));
        }
        crate::common::BagOfWords.embed(texts)
    }
}

/// A batch's embedding happens after its acts are numbered (beside the transaction, for
/// a large one): when it fails, nothing is written and nothing is spent (no act number,
/// no vector key skipped), and the next batch's acts follow on without a gap. Both
/// sizes: embedded in turn, and on a thread of its own.
#[test]
fn a_batch_whose_embedding_fails_writes_nothing_and_leaves_no_gap() {
    use brains::Embedder;
    let d = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(T0));
    let o = brains::StoreOptions {
        embedder: Some(Arc::new(Poisoned) as Arc<dyn Embedder>),
        ..opts(&clock, true)
    };
    let (mut s, _) = Store::open(d.path(), o).unwrap();
    let batch = |tag: &str, n: usize, poison: bool| -> Vec<MemorizeInput> {
        (0..n)
            .map(|i| {
                let text = if poison && i + 1 == n {
                    "poison"
                } else {
                    "plain"
                };
                input(&format!("{tag} {i}"), &format!("{tag} note {i}: {text}"))
            })
            .collect()
    };
    let mut written = 0u64;
    for n in [40, 600] {
        assert!(s.memorize_many(batch("first", n, true)).is_err());
        assert_eq!(s.stats().unwrap().acts, written);
        let r = s
            .memorize_many(batch(&format!("second {n}"), n, false))
            .unwrap();
        assert!(r.iter().all(Result::is_ok));
        let seqs: Vec<u64> = s.acts(0, 1000).unwrap().iter().map(|a| a.seq).collect();
        written += n as u64;
        assert_eq!(seqs, (1..=written).collect::<Vec<u64>>());
        assert_eq!(s.stats().unwrap().live_claims, written);
        assert_eq!(s.check_index().unwrap(), None);
    }
    // And the numbering holds across a reopen.
    drop(s);
    let (mut s, _) = Store::open(d.path(), opts(&clock, true)).unwrap();
    s.memorize(input("third", "after the reopen")).unwrap();
    assert_eq!(s.acts(written, 10).unwrap()[0].seq, written + 1);
}

/// The test embedder under an id of its own choosing, its vectors turned around when
/// `flip`, counting the texts it embeds.
#[derive(Debug)]
struct Counting {
    id: &'static str,
    flip: bool,
    texts: std::sync::atomic::AtomicUsize,
}

impl Counting {
    fn new(id: &'static str, flip: bool) -> Arc<Counting> {
        Arc::new(Counting {
            id,
            flip,
            texts: Default::default(),
        })
    }

    fn embedded(&self) -> usize {
        self.texts.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl brains::Embedder for Counting {
    fn id(&self) -> &str {
        self.id
    }
    fn dims(&self) -> usize {
        64
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, brains::EmbedError> {
        self.texts
            .fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        let mut vs = crate::common::BagOfWords.embed(texts)?;
        if self.flip {
            vs.iter_mut().flatten().for_each(|x| *x = -*x);
        }
        Ok(vs)
    }
}

/// Vectors and terms worked out ahead of a batch ([`Derivation::of`], as an import does
/// for its next batch while the store writes the one before) are taken only for the
/// label, text and model they were made from. A batch written with them leaves the store
/// exactly as the batch written without, and one whose every written input comes with
/// its own is not embedded again. One made for another text, from a text not yet
/// trimmed, or under another model is worked out again: the store is the same, and it
/// embeds every version it writes.
#[test]
fn a_batch_worked_out_ahead_equals_the_same_batch_without() {
    use brains::store::Derivation;
    use brains::Embedder;
    // 60: vectors added together, worked out in turn; 600: on a thread of their own.
    for pad in [60, 600] {
        let clock = Arc::new(FixedClock::new(T0));
        let model = Counting::new("test-bag-of-words", false);
        let other_model = Counting::new("test-other-words", true);
        let open = |dir: &std::path::Path| {
            let o = brains::StoreOptions {
                embedder: Some(model.clone() as Arc<dyn Embedder>),
                ..opts(&clock, true)
            };
            let (mut s, _) = Store::open(dir, o).unwrap();
            s.memorize(input("cache flake", "it flakes")).unwrap();
            s
        };
        let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let (mut plain, mut fitting, mut misfit) = (
            open(dirs[0].path()),
            open(dirs[1].path()),
            open(dirs[2].path()),
        );
        clock.advance(10);
        let outcomes = |r: Vec<Result<brains::MemorizeOutcome, brains::StoreError>>| {
            r.into_iter().map(|r| format!("{r:?}")).collect::<Vec<_>>()
        };
        let expected = plain.memorize_many(padded(pad)).unwrap();
        let written = expected
            .iter()
            .filter(|r| matches!(r, Ok(o) if !o.unchanged()))
            .count();
        let expected = outcomes(expected);

        // Each input's own, trimmed as the store keeps it: none embedded again.
        let own: Vec<Option<Derivation>> = padded(pad)
            .into_iter()
            .map(|mut i| {
                (i.label, i.text) = (i.label.trim().into(), i.text.trim().into());
                Some(Derivation::of(Some(model.as_ref()), &i).unwrap())
            })
            .collect();
        let before = model.embedded();
        let with_own = fitting.memorize_many_ahead(padded(pad), own).unwrap();
        assert_eq!(model.embedded(), before, "pad {pad}: embedded again");

        // Each made for something else: every written version worked out again.
        let misfits: Vec<Option<Derivation>> = padded(pad)
            .into_iter()
            .enumerate()
            .map(|(n, mut i)| {
                let by = match n % 3 {
                    0 => {
                        i.text += " and something else besides";
                        model.as_ref()
                    }
                    1 => {
                        i.text = format!("  {}  ", i.text);
                        model.as_ref()
                    }
                    _ => other_model.as_ref(),
                };
                Some(Derivation::of(Some(by), &i).unwrap())
            })
            .collect();
        let before = model.embedded();
        let with_misfits = misfit.memorize_many_ahead(padded(pad), misfits).unwrap();
        assert_eq!(
            model.embedded() - before,
            written,
            "pad {pad}: a misfit taken"
        );

        assert_eq!(outcomes(with_own), expected, "pad {pad}");
        assert_eq!(outcomes(with_misfits), expected, "pad {pad}");
        let recall = pad < 600;
        let seen = observe(&plain, recall);
        assert_eq!(
            observe(&fitting, recall),
            seen,
            "pad {pad}: worked out ahead"
        );
        assert_eq!(observe(&misfit, recall), seen, "pad {pad}: misfits");
    }
}

/// `demote_many` (one transaction) leaves the store exactly as the same demotions one by
/// one: the same versions, acts, recall and statistics; a slug that is not live, or is
/// listed twice, is refused without stopping the others; all of it survives a reopen,
/// committed durably or with the next commit (here the close's).
#[test]
fn demoting_many_equals_demoting_one_by_one() {
    for (vectors, commit) in [
        (false, Commit::Durable),
        (true, Commit::Durable),
        (true, Commit::WithNext),
    ] {
        let one = tempfile::tempdir().unwrap();
        let many = tempfile::tempdir().unwrap();
        let clock = Arc::new(FixedClock::new(T0));
        let (mut a, _) = Store::open(one.path(), opts(&clock, vectors)).unwrap();
        let (mut b, _) = Store::open(many.path(), opts(&clock, vectors)).unwrap();
        for s in [&mut a, &mut b] {
            for r in s.memorize_many(inputs()).unwrap() {
                let _ = r;
            }
        }
        clock.advance(10);
        let slugs: Vec<String> = [
            "cache-flake",
            "no-such-claim",
            "deploy-window",
            "cache-flake",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let sequential: Vec<String> = slugs
            .iter()
            .map(|s| format!("{:?}", a.demote(s, "human:founder", "stale")))
            .collect();
        let batched: Vec<String> = b
            .demote_many(&slugs, "human:founder", "stale", commit)
            .unwrap()
            .into_iter()
            .map(|r| format!("{r:?}"))
            .collect();
        assert_eq!(batched, sequential, "vectors: {vectors}");
        assert!(batched[0].starts_with("Ok(") && batched[2].starts_with("Ok("));
        assert!(batched[1].starts_with("Err(") && batched[3].starts_with("Err("));
        assert_eq!(observe(&b, true), observe(&a, true), "vectors: {vectors}");
        let acts = b.stats().unwrap().acts;
        drop((a, b));
        let (b, _) = Store::open(many.path(), opts(&clock, vectors)).unwrap();
        assert_eq!(b.stats().unwrap().acts, acts);
        assert_eq!(b.check_index().unwrap(), None);
        assert!(b.get("cache-flake").unwrap().is_none());
        assert!(b.get("deploy-window").unwrap().is_none());
    }
}

/// A small tmpfs mounted over a directory, unmounted when dropped; `None` (the reason
/// printed) where mounting is not allowed.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(at: &std::path::Path, size: &str) -> Option<Tmpfs> {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: mounting a {size} tmpfs needs root (and mount in this sandbox)");
            return None;
        }
        Some(Tmpfs(at.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// A large batch's terms go into the claim index while its commit is under way; when
/// the commit fails (here, a full disk) they are taken out again: the index answers
/// exactly as before the batch, superseded claims by their old text and new ones not at
/// all, and it agrees with redb.
#[test]
fn a_batch_whose_commit_fails_leaves_the_claim_index_as_it_was() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let Some(_fs) = Tmpfs::mount(d.path(), "8m") else {
        return;
    };
    let dir = d.path().join("store");
    let clock = Arc::new(FixedClock::new(T0));
    let (mut s, _) = Store::open(&dir, opts(&clock, true)).unwrap();
    let before: Vec<MemorizeInput> = (0..100)
        .map(|i| {
            input(
                &format!("kept {i}"),
                &format!("kept note {i} about the walrus"),
            )
        })
        .collect();
    assert!(s.memorize_many(before).unwrap().iter().all(Result::is_ok));
    s.flush_index().unwrap();
    let found = |s: &Store, text: &str| -> Vec<String> {
        let mut slugs: Vec<String> = s
            .recall(&RecallQuery {
                text: text.into(),
                limit: 1000,
                mode: brains::recall::RankMode::Lexical,
                ..Default::default()
            })
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.claim.slug)
            .collect();
        slugs.sort();
        slugs
    };
    let walrus = found(&s, "walrus");
    assert_eq!(walrus.len(), 100);
    // The disk fills up.
    let mut filler = std::fs::File::create(d.path().join("filler")).unwrap();
    while filler.write_all(&[7u8; 64 * 1024]).is_ok() {}
    let _ = filler.sync_all();
    // A batch superseding every kept claim and adding 500: far more than the room left.
    clock.advance(10);
    let batch: Vec<MemorizeInput> = (0..100)
        .map(|i| {
            input(
                &format!("kept {i}"),
                &format!("kept note {i} now about the quokka"),
            )
        })
        .chain((0..500).map(|i| {
            input(
                &format!("fresh {i}"),
                &format!("fresh note {i} about the quokka {}", "padding ".repeat(200)),
            )
        }))
        .collect();
    let err = s.memorize_many(batch).unwrap_err();
    assert!(format!("{err:?}").contains("Full"), "{err:?}");
    assert_eq!(found(&s, "quokka"), Vec::<String>::new());
    assert_eq!(found(&s, "walrus"), walrus);
}
