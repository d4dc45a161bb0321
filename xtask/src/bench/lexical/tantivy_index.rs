//! Tantivy set up to count as our index does: our tokenizer, one body field, the slug
//! as a fast column, and a reader's view that names each hit by its slug.

use std::path::Path;

use anyhow::{Context, Result};
use brains::lexical::tokenize;
use brains::MemorizeInput;
use tantivy::collector::TopDocs;
use tantivy::columnar::StrColumn;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, STRING,
};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyDocument, Term};

use super::TOKENIZER;

/// Our tokenizer, unchanged, as a tantivy tokenizer: both engines index the same terms.
#[derive(Clone, Debug)]
pub(super) struct Ours;

pub(super) struct OursStream {
    pub(super) tokens: std::vec::IntoIter<String>,
    pub(super) token: Token,
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
pub(super) fn schema() -> (Schema, Field, Field) {
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

pub(super) fn document(
    slug_f: Field,
    body: Field,
    slug: &str,
    c: &MemorizeInput,
) -> TantivyDocument {
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
pub(super) struct View {
    pub(super) searcher: tantivy::Searcher,
    pub(super) slugs: Vec<StrColumn>,
    pub(super) body: Field,
}

impl View {
    pub(super) fn new(reader: &IndexReader, body: Field) -> Result<View> {
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
    pub(super) fn search(&self, text: &str, k: usize) -> Result<Vec<(String, f32)>> {
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

pub(super) fn open_tantivy(dir: &Path) -> Result<(Index, IndexReader, Field)> {
    let index = Index::open_in_dir(dir)?;
    index.tokenizers().register(TOKENIZER, Ours);
    let body = index.schema().get_field("body")?;
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    Ok((index, reader, body))
}
