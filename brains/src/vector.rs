//! The vector index: usearch (cosine, f32), derived from the vectors kept in redb.
