//! The lexical index: BM25 over label and text, in memory, rebuilt from redb on open.
