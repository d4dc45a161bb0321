//! `cargo xtask bench-lexical [--sizes 100000,1000000] [--ops 300]` (built with
//! `--features tantivy-compare`): the lexical index against tantivy on `cargo xtask
//! bench`'s corpus and queries (issue 24). For each size and engine: build time, size on
//! disk, open time and resident memory in a fresh process, top-50 query latency, the
//! overlap of the two top-10s, and what a write costs until the next query sees it.
//!
//! Tantivy is given our exact tokens (a [`Tokenizer`] over [`brains::lexical::tokenize`])
//! and one field that holds the label twice and the text once: a term's frequency is
//! then 2 × label + text and the length 2 × label + text, which is how our index counts
//! them, so both compute the same BM25 (k1 1.2, b 0.75). What still differs: our idf adds
//! 100 pseudo-documents, tantivy scores in f32 and quantises lengths above 40 tokens, and
//! our search lets a common term (held by more than max(500, 2 % of the claims)) add to
//! the candidates of a query's selective terms without nominating its own. A third row
//! runs our index with that split off (plain BM25 over every term) to show which of the
//! differences moves the results.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use brains::index::ClaimIndex;
use brains::lexical::tokenize;
use brains::recall::ClaimMeta;
use brains::recall::RankMode;
use brains::Strength;
use brains::{MemorizeInput, RecallQuery, Store, StoreOptions};
use tantivy::collector::TopDocs;
use tantivy::columnar::StrColumn;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, STRING,
};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::bench::corpus::{input, Gen};
use crate::bench::runner::{header, pct};

const USAGE: &str = "usage: cargo xtask bench-lexical [--sizes 100000,1000000] [--ops 300]";
/// Results per query, as recall asks the lexical side for.
const K: usize = 50;
/// The depth at which the two engines' answers are compared.
const AGREE_AT: usize = 10;
/// Tantivy's indexing memory, shared by its writer threads (one per core here).
const WRITER_BUDGET: usize = 256 << 20;
/// Timed write-then-find cycles per engine.
const WRITE_CYCLES: usize = 100;
const TOKENIZER: &str = "medulla";

fn corpus_seed(size: usize) -> u64 {
    0x9E37_79B9_7F4A_7C15 ^ size as u64
}

fn query_seed(size: usize) -> u64 {
    0xC0FF_EE00_D15E_A5E5 ^ size as u64
}

/// The queries of `cargo xtask bench`: two frequent words and two from the Zipf tail.
fn queries(size: usize, n: usize) -> Vec<String> {
    let mut g = Gen(query_seed(size));
    (0..n)
        .map(|_| format!("{} {}", g.words(2), g.rare(2)))
        .collect()
}

/// The corpus of `cargo xtask bench`, claim `i` under the slug `c{i}`.
fn corpus(size: usize) -> impl Iterator<Item = (String, MemorizeInput)> {
    let mut g = Gen(corpus_seed(size));
    (0..size).map(move |i| (format!("c{i}"), input(&mut g, i)))
}

/// Our tokenizer, unchanged, as a tantivy tokenizer: both engines index the same terms.
#[derive(Clone, Debug)]
struct Ours;

struct OursStream {
    tokens: std::vec::IntoIter<String>,
    token: Token,
}

impl Tokenizer for Ours {
    type TokenStream<'a> = OursStream;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> OursStream {
        OursStream {
            tokens: tokenize(text).into_iter(),
            token: Token::default(),
        }
    }
}

impl TokenStream for OursStream {
    fn advance(&mut self) -> bool {
        match self.tokens.next() {
            Some(t) => {
                self.token.text = t;
                self.token.position = self.token.position.wrapping_add(1);
                true
            }
            None => false,
        }
    }
    fn token(&self) -> &Token {
        &self.token
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

/// The schema: the slug (indexed whole for deletes, a fast column to name hits) and one
/// body field with frequencies and lengths, no positions (our index keeps none either).
fn schema() -> (Schema, Field, Field) {
    let mut b = Schema::builder();
    let slug = b.add_text_field("slug", STRING | FAST);
    let body = b.add_text_field(
        "body",
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqs),
        ),
    );
    (b.build(), slug, body)
}

fn document(slug_f: Field, body: Field, slug: &str, c: &MemorizeInput) -> TantivyDocument {
    let mut d = TantivyDocument::default();
    d.add_text(slug_f, slug);
    // The label twice: our index counts each label term twice, in its frequency and in
    // the claim's length.
    d.add_text(body, &c.label);
    d.add_text(body, &c.label);
    d.add_text(body, &c.text);
    d
}

/// A reader's view with the slug column of each segment, opened once per reload.
struct View {
    searcher: tantivy::Searcher,
    slugs: Vec<StrColumn>,
    body: Field,
}

impl View {
    fn new(reader: &IndexReader, body: Field) -> Result<View> {
        let searcher = reader.searcher();
        let slugs = searcher
            .segment_readers()
            .iter()
            .map(|r| r.fast_fields().str("slug")?.context("no slug column"))
            .collect::<Result<_>>()?;
        Ok(View {
            searcher,
            slugs,
            body,
        })
    }

    /// The best `k` slugs with their scores: our tokens as SHOULD term queries, BM25,
    /// block-max WAND (tantivy's path for a union of term queries under top-k by score).
    fn search(&self, text: &str, k: usize) -> Result<Vec<(String, f32)>> {
        let mut toks = tokenize(text);
        toks.sort_unstable();
        toks.dedup();
        let clauses: Vec<(Occur, Box<dyn Query>)> = toks
            .iter()
            .map(|t| {
                let q = TermQuery::new(
                    Term::from_field_text(self.body, t),
                    IndexRecordOption::WithFreqs,
                );
                (Occur::Should, Box::new(q) as Box<dyn Query>)
            })
            .collect();
        let top = self.searcher.search(
            &BooleanQuery::new(clauses),
            &TopDocs::with_limit(k).order_by_score(),
        )?;
        let mut out = Vec::with_capacity(top.len());
        let mut s = String::new();
        for (score, addr) in top {
            let col = &self.slugs[addr.segment_ord as usize];
            let ord = col
                .term_ords(addr.doc_id)
                .next()
                .context("a hit without slug")?;
            s.clear();
            col.ord_to_str(ord, &mut s)?;
            out.push((s.clone(), score));
        }
        Ok(out)
    }
}

fn open_tantivy(dir: &Path) -> Result<(Index, IndexReader, Field)> {
    let index = Index::open_in_dir(dir)?;
    index.tokenizers().register(TOKENIZER, Ours);
    let body = index.schema().get_field("body")?;
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    Ok((index, reader, body))
}

fn dir_size(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let m = e.metadata()?;
        total += if m.is_dir() {
            dir_size(&e.path())?
        } else {
            m.len()
        };
    }
    Ok(total)
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Resident memory of this process (kB): all, anonymous, file-backed (mapped files).
fn rss_kb() -> Result<[u64; 3]> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let field = |name: &str| -> Result<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("no {name} in /proc/self/status"))
    };
    Ok([field("VmRSS:")?, field("RssAnon:")?, field("RssFile:")?])
}

/// What a fresh process reports: open, open + first query (ms), and its resident memory
/// after every query (kB: all, anonymous, file-backed).
struct Fresh {
    open_ms: f64,
    first_ms: f64,
    rss: [u64; 3],
}

fn fresh(args: &[&str]) -> Result<Fresh> {
    let out = std::process::Command::new(std::env::current_exe()?)
        .arg("bench-lexical-child")
        .args(args)
        .output()?;
    if !out.status.success() {
        bail!(
            "bench-lexical-child {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .with_context(|| format!("bench-lexical-child printed {text:?}"))?;
    let [open_ms, first_ms, all, anon, file] = v[..] else {
        bail!("bench-lexical-child printed {text:?}");
    };
    Ok(Fresh {
        open_ms,
        first_ms,
        rss: [all as u64, anon as u64, file as u64],
    })
}

/// `xtask bench-lexical-child tantivy DIR SIZE OPS | store DIR SIZE OPS | index SIZE OPS`:
/// open (or, for `index`, build from the corpus: our bare index is not persisted on its
/// own), answer the bench queries, print "open_ms first_ms rss_kb anon_kb file_kb".
pub fn child(args: &[String]) -> Result<()> {
    let num = |s: &String| -> Result<usize> { s.parse().context("a number") };
    let (open_ms, first_ms) = match args {
        [kind, dir, size, ops] if kind == "tantivy" => {
            let qs = queries(num(size)?, num(ops)?);
            let t = Instant::now();
            let (_index, reader, body) = open_tantivy(Path::new(dir))?;
            let view = View::new(&reader, body)?;
            let open_ms = t.elapsed().as_secs_f64() * 1000.0;
            std::hint::black_box(view.search(&qs[0], K)?);
            let first_ms = t.elapsed().as_secs_f64() * 1000.0;
            for q in &qs {
                std::hint::black_box(view.search(q, K)?);
            }
            print_fresh(open_ms, first_ms)?;
            return Ok(());
        }
        [kind, dir, size, ops] if kind == "store" => {
            let qs = queries(num(size)?, num(ops)?);
            let t = Instant::now();
            let (store, _) = Store::open(Path::new(dir), StoreOptions::default())?;
            let open_ms = t.elapsed().as_secs_f64() * 1000.0;
            let recall = |text: &str| {
                store.recall(&RecallQuery {
                    text: text.to_string(),
                    limit: K,
                    mode: RankMode::Lexical,
                    ..Default::default()
                })
            };
            std::hint::black_box(recall(&qs[0])?);
            let first_ms = t.elapsed().as_secs_f64() * 1000.0;
            for q in &qs {
                std::hint::black_box(recall(q)?);
            }
            print_fresh(open_ms, first_ms)?;
            drop(store);
            return Ok(());
        }
        [kind, size, ops] if kind == "index" => {
            let size = num(size)?;
            let qs = queries(size, num(ops)?);
            let t = Instant::now();
            let mut idx = ClaimIndex::new();
            for (slug, c) in corpus(size) {
                idx.upsert(&slug, &c.label, &c.text, meta(&c.label), None);
            }
            idx.compact();
            let open_ms = t.elapsed().as_secs_f64() * 1000.0;
            for q in &qs {
                std::hint::black_box(idx.search(&idx.prepare(q), K, &|_| true));
            }
            (open_ms, open_ms)
        }
        _ => bail!("usage: xtask bench-lexical-child tantivy|store DIR SIZE OPS | index SIZE OPS"),
    };
    print_fresh(open_ms, first_ms)
}

fn print_fresh(open_ms: f64, first_ms: f64) -> Result<()> {
    let [all, anon, file] = rss_kb()?;
    println!("{open_ms:.3} {first_ms:.3} {all} {anon} {file}");
    Ok(())
}

/// The metadata a bench claim carries in the claim index.
fn meta(label: &str) -> ClaimMeta {
    ClaimMeta {
        label: label.to_lowercase(),
        source_agent: "bench:maker".into(),
        strength: Strength::Observed,
        trust: 0.5,
        created: 0,
        evidence: vec![],
    }
}

/// Top-50 latency (p50, p99 in ms) and each query's top-10 slugs with the 10th score.
struct Answers {
    p50: f64,
    p99: f64,
    top: Vec<Vec<String>>,
}

fn ours_answers(idx: &ClaimIndex, qs: &[String]) -> Answers {
    let mut lat = Vec::with_capacity(qs.len());
    let mut top = Vec::with_capacity(qs.len());
    for q in qs {
        let t = Instant::now();
        let hits = idx.search(&idx.prepare(q), K, &|_| true);
        lat.push(t.elapsed());
        top.push(
            hits.into_iter()
                .take(AGREE_AT)
                .map(|h| idx.slug(h.doc).to_string())
                .collect(),
        );
    }
    Answers {
        p50: pct(&mut lat, 0.5),
        p99: pct(&mut lat, 0.99),
        top,
    }
}

/// Mean of |A ∩ B| / max(|A|, |B|) over the queries (1 when both are empty).
fn overlap(a: &[Vec<String>], b: &[Vec<String>]) -> f64 {
    let sum: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| {
            let n = x.len().max(y.len());
            if n == 0 {
                1.0
            } else {
                x.iter().filter(|s| y.contains(s)).count() as f64 / n as f64
            }
        })
        .sum();
    sum / a.len().max(1) as f64
}

/// Overlap with ties forgiven: a slug of `b` agrees when it is in `a` or scores (by
/// `idx`, our scoring) at least `a`'s last score. Same-score claims fill a top-10 in an
/// order each engine picks for itself (ours by slug, tantivy by document address).
fn overlap_ties(idx: &ClaimIndex, qs: &[String], a: &[Vec<String>], b: &[Vec<String>]) -> f64 {
    let mut sum = 0.0;
    for ((q, x), y) in qs.iter().zip(a).zip(b) {
        let n = x.len().max(y.len());
        if n == 0 {
            sum += 1.0;
            continue;
        }
        let p = idx.prepare(q);
        let score = |s: &str| {
            idx.doc(s)
                .and_then(|d| idx.score(&p, d))
                .map(|h| h.score)
                .unwrap_or(0.0)
        };
        let last = x.last().map(|s| score(s)).unwrap_or(0.0);
        let agree = y
            .iter()
            .filter(|s| x.contains(s) || score(s) >= last * (1.0 - 1e-9))
            .count();
        sum += agree.min(n) as f64 / n as f64;
    }
    sum / qs.len().max(1) as f64
}

struct SizeReport {
    lines: Vec<String>,
    notes: Vec<String>,
}

fn bench_size(size: usize, ops: usize) -> Result<SizeReport> {
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

pub fn run(args: &[String]) -> Result<()> {
    let mut sizes = vec![100_000, 1_000_000];
    let mut ops = 300;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sizes" => {
                sizes = it
                    .next()
                    .context(USAGE)?
                    .split(',')
                    .map(|s| s.trim().parse())
                    .collect::<Result<_, _>>()
                    .context(USAGE)?
            }
            "--ops" => ops = it.next().context(USAGE)?.parse().context(USAGE)?,
            other => bail!("unknown argument {other:?}: {USAGE}"),
        }
    }
    if ops == 0 {
        bail!("--ops must be at least 1");
    }
    {
        // The durable commit's floor on this disk (tantivy's commit syncs several files).
        use std::io::Write;
        let dir = tempfile::tempdir()?;
        let mut f = std::fs::File::create(dir.path().join("fsync-probe"))?;
        let mut samples = Vec::with_capacity(100);
        for _ in 0..100 {
            let t = Instant::now();
            f.write_all(&[7u8; 4096])?;
            f.sync_data()?;
            samples.push(t.elapsed());
        }
        println!(
            "disk: write 4 KiB + fsync p50 {:.3} ms, p99 {:.3} ms",
            pct(&mut samples, 0.5),
            pct(&mut samples, 0.99)
        );
    }
    let mut lines = vec![];
    let mut notes = vec![];
    for &size in &sizes {
        let r = bench_size(size, ops)?;
        lines.extend(r.lines);
        notes.extend(r.notes);
    }
    header(&format!("| claims | engine | build | on disk (MB) | open, fresh process (ms) | open + first query (ms) | top-{K} query p50 / p99 (ms) | RSS after open + {ops} queries (MB) | write until visible p50 / p99 (ms) |"));
    for l in lines {
        println!("{l}");
    }
    for n in notes {
        println!("- {n}");
    }
    Ok(())
}
