//! The hygiene scanner: secrets and merge-conflict markers, reported redacted.
