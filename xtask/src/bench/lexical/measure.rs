//! One corpus size measured: build, size on disk, open, query latency, agreement, and
//! write-until-visible for each engine, as table rows and notes.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use brains::index::ClaimIndex;
use brains::recall::RankMode;
use brains::{RecallQuery, Store, StoreOptions};
use tantivy::{Index, IndexWriter};

use crate::bench::corpus::{input, Gen};
use crate::bench::runner::pct;

use super::agree::{meta, ours_answers, overlap, overlap_ties};
use super::fresh::{dir_size, fresh, mb};
use super::tantivy_index::{document, open_tantivy, schema, Ours, View};
use super::{corpus, queries, AGREE_AT, K, TOKENIZER, WRITER_BUDGET, WRITE_CYCLES};

pub(super) struct SizeReport {
    pub(super) lines: Vec<String>,
    pub(super) notes: Vec<String>,
}

pub(super) fn bench_size(size: usize, ops: usize) -> Result<SizeReport> {
    let qs = queries(size, ops);
    let ops_s = ops.to_string();
    let size_s = size.to_string();
    let mut lines = vec![];
    let mut notes = vec![];

    // Ours, in memory: the product's index and the same index without the common-term
    // split (plain BM25 over every query term).
    eprintln!("[{size}] our index: build");
    let t = Instant::now();
    let mut ours = ClaimIndex::new();
    for (slug, c) in corpus(size) {
        ours.upsert(&slug, &c.label, &c.text, meta(&c.label), None);
    }
    ours.compact();
    let ours_build = t.elapsed();
    let ours_ans = ours_answers(&ours, &qs);
    let mut plain = ClaimIndex::with_common_min_df(usize::MAX);
    for (slug, c) in corpus(size) {
        plain.upsert(&slug, &c.label, &c.text, meta(&c.label), None);
    }
    plain.compact();
    let plain_ans = ours_answers(&plain, &qs);
    // Ours, read-your-writes: the upsert, then a query that finds the new claim.
    let mut cycle = Vec::with_capacity(WRITE_CYCLES);
    let mut g = Gen(0x5EED);
    for i in 0..WRITE_CYCLES {
        let mut c = input(&mut g, size + i);
        c.text.push_str(&format!(" fresh{i}x"));
        let slug = format!("w{i}");
        let t = Instant::now();
        ours.upsert(&slug, &c.label, &c.text, meta(&c.label), None);
        let hits = ours.search(&ours.prepare(&format!("fresh{i}x")), 1, &|_| true);
        cycle.push(t.elapsed());
        if hits.first().map(|h| ours.slug(h.doc)) != Some(slug.as_str()) {
            bail!("our index did not find claim {slug} after its upsert");
        }
    }
    let ours_cycle = (pct(&mut cycle, 0.5), pct(&mut cycle, 0.99));
    drop(ours);
    eprintln!("[{size}] our index: resident memory in a fresh process (rebuilds it)");
    let bare = fresh(&["index", &size_s, &ops_s])?;

    // Ours, persisted: a lexical-only store filled with memorize_many.
    eprintln!("[{size}] store: fill");
    let store_dir = tempfile::tempdir()?;
    let (mut store, _) = Store::open(store_dir.path(), StoreOptions::default())?;
    let t = Instant::now();
    let mut batch = Vec::with_capacity(1000);
    for (_, c) in corpus(size) {
        batch.push(c);
        if batch.len() == 1000 {
            for r in store.memorize_many(std::mem::take(&mut batch))? {
                r?;
            }
        }
    }
    if !batch.is_empty() {
        for r in store.memorize_many(batch)? {
            r?;
        }
    }
    let store_fill = t.elapsed();
    // The store's read-your-writes: a durable memorize, then a recall that finds it.
    let mut cycle = Vec::with_capacity(WRITE_CYCLES);
    for i in 0..WRITE_CYCLES {
        let mut c = input(&mut g, 2 * size + i);
        c.text.push_str(&format!(" stored{i}x"));
        let t = Instant::now();
        store.memorize(c)?;
        let r = store.recall(&RecallQuery {
            text: format!("stored{i}x"),
            limit: 1,
            mode: RankMode::Lexical,
            ..Default::default()
        })?;
        cycle.push(t.elapsed());
        std::hint::black_box(r);
    }
    let store_cycle = (pct(&mut cycle, 0.5), pct(&mut cycle, 0.99));
    store.close()?;
    let store_disk = dir_size(store_dir.path())?;
    let snapshot = std::fs::metadata(store_dir.path().join("claims.snapshot"))
        .map(|m| m.len())
        .unwrap_or(0);
    eprintln!("[{size}] store: open in a fresh process");
    let store_fresh = fresh(&[
        "store",
        store_dir.path().to_str().context("a UTF-8 temp path")?,
        &size_s,
        &ops_s,
    ])?;
    drop(store_dir);

    // Tantivy.
    eprintln!("[{size}] tantivy: build");
    let tdir = tempfile::tempdir()?;
    let (schema, slug_f, body) = schema();
    let index = Index::create_in_dir(tdir.path(), schema)?;
    index.tokenizers().register(TOKENIZER, Ours);
    let t = Instant::now();
    let mut writer: IndexWriter = index.writer(WRITER_BUDGET)?;
    for (slug, c) in corpus(size) {
        writer.add_document(document(slug_f, body, &slug, &c))?;
    }
    writer.commit()?;
    let t_build = t.elapsed();
    let t = Instant::now();
    writer.wait_merging_threads()?;
    let t_merge = t.elapsed();
    let t_segments = index.searchable_segment_ids()?.len();
    let t_disk = dir_size(tdir.path())?;
    let (index, reader, body) = open_tantivy(tdir.path())?;
    let view = View::new(&reader, body)?;
    let mut lat = Vec::with_capacity(ops);
    let mut t_top = Vec::with_capacity(ops);
    for q in &qs {
        let t = Instant::now();
        let hits = view.search(q, K)?;
        lat.push(t.elapsed());
        t_top.push(
            hits.into_iter()
                .take(AGREE_AT)
                .map(|(s, _)| s)
                .collect::<Vec<_>>(),
        );
    }
    let t_lat = (pct(&mut lat, 0.5), pct(&mut lat, 0.99));
    drop(view);
    eprintln!("[{size}] tantivy: open in a fresh process");
    let t_fresh = fresh(&[
        "tantivy",
        tdir.path().to_str().context("a UTF-8 temp path")?,
        &size_s,
        &ops_s,
    ])?;
    // Tantivy's read-your-writes: add, commit, reload the reader, find the new claim.
    eprintln!("[{size}] tantivy: write, commit, reload cycles");
    let mut writer: IndexWriter = index.writer_with_num_threads(1, 20 << 20)?;
    let mut cycle = Vec::with_capacity(WRITE_CYCLES);
    let mut commit = Vec::with_capacity(WRITE_CYCLES);
    for i in 0..WRITE_CYCLES {
        let mut c = input(&mut g, 3 * size + i);
        c.text.push_str(&format!(" fresh{i}x"));
        let slug = format!("w{i}");
        let t = Instant::now();
        writer.add_document(document(slug_f, body, &slug, &c))?;
        writer.commit()?;
        commit.push(t.elapsed());
        reader.reload()?;
        let hits = View::new(&reader, body)?.search(&format!("fresh{i}x"), 1)?;
        cycle.push(t.elapsed());
        if hits.first().map(|h| h.0.as_str()) != Some(slug.as_str()) {
            bail!("tantivy did not find claim {slug} after commit and reload");
        }
    }
    let t_cycle = (pct(&mut cycle, 0.5), pct(&mut cycle, 0.99));
    let t_commit = pct(&mut commit, 0.5);
    writer.wait_merging_threads()?;
    let segments_after = index.searchable_segment_ids()?.len();
    drop(tdir);

    let agree = overlap(&ours_ans.top, &t_top);
    let agree_plain = overlap(&plain_ans.top, &t_top);
    let agree_ties = overlap_ties(&plain, &qs, &plain_ans.top, &t_top);
    let split_moves = overlap(&ours_ans.top, &plain_ans.top);
    let rss = |r: [u64; 3]| {
        format!(
            "{:.0} ({:.0} anon + {:.0} file)",
            r[0] as f64 / 1024.0,
            r[1] as f64 / 1024.0,
            r[2] as f64 / 1024.0
        )
    };
    lines.push(format!(
        "| {size} | ours: lexical index (memory) | build {:.1} s | – | – | – | {:.3} / {:.3} | {} | upsert + query {:.3} / {:.3} |",
        ours_build.as_secs_f64(),
        ours_ans.p50,
        ours_ans.p99,
        rss(bare.rss),
        ours_cycle.0,
        ours_cycle.1,
    ));
    lines.push(format!(
        "| {size} | ours, no common-term split (plain BM25) | – | – | – | – | {:.3} / {:.3} | – | – |",
        plain_ans.p50, plain_ans.p99,
    ));
    lines.push(format!(
        "| {size} | ours: lexical-only store | memorize_many fill {:.1} s | {:.1} (snapshot {:.1}) | {:.1} | {:.1} | – | {} | memorize + recall {:.3} / {:.3} |",
        store_fill.as_secs_f64(),
        mb(store_disk),
        mb(snapshot),
        store_fresh.open_ms,
        store_fresh.first_ms,
        rss(store_fresh.rss),
        store_cycle.0,
        store_cycle.1,
    ));
    lines.push(format!(
        "| {size} | tantivy | add + commit {:.1} s (+ merges {:.1} s, {t_segments} segments) | {:.1} | {:.1} | {:.1} | {:.3} / {:.3} | {} | add + commit + reload + query {:.3} / {:.3} (commit {:.3}) |",
        t_build.as_secs_f64(),
        t_merge.as_secs_f64(),
        mb(t_disk),
        t_fresh.open_ms,
        t_fresh.first_ms,
        t_lat.0,
        t_lat.1,
        rss(t_fresh.rss),
        t_cycle.0,
        t_cycle.1,
        t_commit,
    ));
    notes.push(format!(
        "{size}: overlap@{AGREE_AT} tantivy vs ours {agree:.3}; vs ours without the split {agree_plain:.3} ({agree_ties:.3} counting equal scores as agreeing); ours with vs without the split {split_moves:.3}. Tantivy segments after {WRITE_CYCLES} single-claim commits: {segments_after}. Our bare index's build in the fresh process: {:.0} ms.",
        bare.open_ms
    ));
    Ok(SizeReport { lines, notes })
}
