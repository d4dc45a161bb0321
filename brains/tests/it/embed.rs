//! The static model's inference recipe, on a tiny model this test writes itself (a
//! WordPiece tokenizer.json, a safetensors table, a config.json): no network, exact
//! expected vectors. The real model is fetched and tested in `medulla::model`.

use std::path::Path;

use brains::{embed_query, EmbedError, Embedder, StaticModel};

const DIMS: usize = 4;

/// Rows of the table, by token id.
const ROWS: [[f32; DIMS]; 6] = [
    [9.0, 9.0, 9.0, 9.0], // [UNK]: never used
    [1.0, 0.0, 0.0, 0.0], // deploy
    [0.0, 2.0, 0.0, 0.0], // ##s
    [0.0, 0.0, 3.0, 0.0], // cache
    [0.0, 0.0, 0.0, 4.0], // test
    [1.0, 1.0, 0.0, 0.0], // ,
];

fn tokenizer_json() -> String {
    r###"{"version":"1.0","truncation":null,"padding":null,
"added_tokens":[{"id":0,"content":"[UNK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],
"normalizer":{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true},
"pre_tokenizer":{"type":"BertPreTokenizer"},"post_processor":null,"decoder":null,
"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,
"vocab":{"[UNK]":0,"deploy":1,"##s":2,"cache":3,"test":4,",":5}}}"###
        .to_string()
}

/// A safetensors file by hand: u64 header length, JSON header, little-endian data.
fn safetensors(rows: &[[f32; DIMS]]) -> Vec<u8> {
    safetensors_mapped(rows, None)
}

/// [`safetensors`] with an I64 `mapping` tensor (token id → table row) after the table.
fn safetensors_mapped(rows: &[[f32; DIMS]], mapping: Option<&[i64]>) -> Vec<u8> {
    let mut data: Vec<u8> = rows
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let table = data.len();
    let mut header = format!(
        r#"{{"embeddings":{{"dtype":"F32","shape":[{},{DIMS}],"data_offsets":[0,{table}]}}"#,
        rows.len()
    );
    if let Some(m) = mapping {
        data.extend(m.iter().flat_map(|r| r.to_le_bytes()));
        header.push_str(&format!(
            r#","mapping":{{"dtype":"I64","shape":[{}],"data_offsets":[{table},{}]}}"#,
            m.len(),
            data.len()
        ));
    }
    header.push('}');
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&data);
    out
}

fn write_model(dir: &Path, rows: &[[f32; DIMS]], normalize: bool) {
    std::fs::write(dir.join("tokenizer.json"), tokenizer_json()).unwrap();
    std::fs::write(dir.join("model.safetensors"), safetensors(rows)).unwrap();
    std::fs::write(
        dir.join("config.json"),
        format!(r#"{{"model_type":"model2vec","hidden_dim":{DIMS},"normalize":{normalize}}}"#),
    )
    .unwrap();
}

fn unit(v: [f32; DIMS]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
}

#[test]
fn a_sentence_is_the_normalised_mean_of_its_token_rows() {
    let d = tempfile::tempdir().unwrap();
    write_model(d.path(), &ROWS, true);
    let m = StaticModel::load(d.path()).unwrap();
    assert_eq!(m.dims(), DIMS);
    assert_eq!(m.rows(), ROWS.len());
    let v = m
        .embed(&["Deploys", "cache, TEST", "deploy zebra", "zebra", ""])
        .unwrap();
    // "Deploys" lowercases and splits into deploy + ##s: mean of rows 1 and 2.
    assert!(close(&v[0], &unit([0.5, 1.0, 0.0, 0.0])), "{:?}", v[0]);
    // Punctuation is its own token: cache , test.
    assert!(close(&v[1], &unit([1.0, 1.0, 3.0, 4.0])), "{:?}", v[1]);
    // An unknown word is dropped, not averaged in as [UNK].
    assert!(close(&v[2], &unit([1.0, 0.0, 0.0, 0.0])), "{:?}", v[2]);
    // Nothing known: the zero vector.
    assert_eq!(v[3], vec![0.0; DIMS]);
    assert_eq!(v[4], vec![0.0; DIMS]);
    // A batch equals its singles; the same input gives the same output.
    for (i, t) in ["Deploys", "cache, TEST"].iter().enumerate() {
        assert_eq!(m.embed(&[t]).unwrap()[0], v[i]);
    }
    let q = embed_query(&m, "  cache, TEST ").unwrap();
    assert!(close(&q, &v[1]));
}

#[test]
fn normalisation_follows_the_config() {
    let d = tempfile::tempdir().unwrap();
    write_model(d.path(), &ROWS, false);
    let m = StaticModel::load(d.path()).unwrap();
    let v = m.embed(&["cache test"]).unwrap();
    assert!(close(&v[0], &[0.0, 0.0, 1.5, 2.0]), "{:?}", v[0]);
}

#[test]
fn the_id_is_stable_and_follows_the_files() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write_model(a.path(), &ROWS, true);
    write_model(b.path(), &ROWS, true);
    let ida = StaticModel::load(a.path()).unwrap().id().to_string();
    assert_eq!(
        ida,
        StaticModel::load(b.path()).unwrap().id(),
        "same files, same id"
    );
    assert!(ida.starts_with("model2vec-4d-"), "{ida}");
    let mut other = ROWS;
    other[3] = [0.0, 0.0, 0.0, 3.0];
    write_model(b.path(), &other, true);
    assert_ne!(
        ida,
        StaticModel::load(b.path()).unwrap().id(),
        "another table is another model: stores re-embed"
    );
}

#[test]
fn a_missing_or_broken_model_is_a_typed_error() {
    let d = tempfile::tempdir().unwrap();
    match StaticModel::load(d.path()).unwrap_err() {
        EmbedError::ModelMissing { file, .. } => assert_eq!(file, "model.safetensors"),
        e => panic!("expected ModelMissing, got {e}"),
    }
    let e = StaticModel::load(&d.path().join("nowhere")).unwrap_err();
    assert!(e.to_string().contains("medulla model fetch"), "{e}");
    write_model(d.path(), &ROWS, true);
    std::fs::write(d.path().join("model.safetensors"), b"not a tensor file").unwrap();
    assert!(matches!(
        StaticModel::load(d.path()).unwrap_err(),
        EmbedError::Invalid { .. }
    ));
    // A table with fewer rows than the vocabulary cannot serve every token.
    write_model(d.path(), &ROWS[..3], true);
    assert!(matches!(
        StaticModel::load(d.path()).unwrap_err(),
        EmbedError::Invalid { .. }
    ));
}

#[test]
fn a_mapping_that_points_past_the_table_is_refused_at_load() {
    let d = tempfile::tempdir().unwrap();
    write_model(d.path(), &ROWS, true);
    // Every token to its own row: loads, and embeds as the unmapped model does.
    let identity: Vec<i64> = (0..ROWS.len() as i64).collect();
    std::fs::write(
        d.path().join("model.safetensors"),
        safetensors_mapped(&ROWS, Some(&identity)),
    )
    .unwrap();
    let m = StaticModel::load(d.path()).unwrap();
    assert!(close(
        &m.embed(&["cache test"]).unwrap()[0],
        &unit([0.0, 0.0, 3.0, 4.0])
    ));
    // One token sent to a row the table does not have: an error now, not a panic at
    // the first text that holds it.
    let mut past = identity.clone();
    past[3] = ROWS.len() as i64;
    std::fs::write(
        d.path().join("model.safetensors"),
        safetensors_mapped(&ROWS, Some(&past)),
    )
    .unwrap();
    match StaticModel::load(d.path()).unwrap_err() {
        EmbedError::Invalid { detail, .. } => {
            assert!(detail.contains("past the table"), "{detail}")
        }
        e => panic!("expected Invalid, got {e}"),
    }
}
