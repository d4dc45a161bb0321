//! The legacy `.light.md` frontmatter grammar: parse and render.
