//! A chunk: the unit that is embedded, indexed and returned as a citable passage.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Content-derived chunk id: the same document id and chunk text give the same id on every
/// run and machine, so re-ingesting unchanged content is a no-op.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ChunkId(pub String);

impl ChunkId {
    /// `occurrence` disambiguates identical texts within one document (0 for the first).
    pub fn derive(
        document_id: &str,
        page_number: Option<u32>,
        text: &str,
        occurrence: u32,
    ) -> Self {
        let mut h = Sha256::new();
        h.update(document_id.as_bytes());
        h.update([0]);
        h.update(page_number.unwrap_or(0).to_be_bytes());
        h.update(occurrence.to_be_bytes());
        h.update(text.as_bytes());
        ChunkId(hex::encode(&h.finalize()[..16]))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Character (Unicode scalar value) offsets `[start, end)` into the source text: the document
/// `text`, or for paged documents the text of page `page_number`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offsets {
    pub start: u32,
    pub end: u32,
}

/// A chunk as produced by the chunker, before embedding.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub chunk_id: ChunkId,
    pub document_id: String,
    pub chunk_index: u32,
    pub text: String,
    pub section_path: Vec<String>,
    pub page_number: Option<u32>,
    pub offsets: Offsets,
}
