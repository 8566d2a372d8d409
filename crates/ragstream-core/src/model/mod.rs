//! The data model: documents as submitted, chunks as stored, validated names.

mod branch_fusion;
mod chunk;
mod document;
mod index_name;
pub mod metadata;
mod profile;

pub use branch_fusion::BranchFusion;
pub use chunk::{Chunk, ChunkId, Offsets};
pub use document::validate_document_id;
pub use document::{
    canonical_iso8601, canonical_timestamp, now_timestamp, timestamp_before, Document,
    DocumentLimits, EntityAliases, Page, Triple, MAX_GRAPH_TERM_BYTES,
};
pub use index_name::IndexName;
pub use profile::Profile;

/// A rule an input broke, naming the field (a dotted path) and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[error("{field}: {rule}")]
pub struct ValidationError {
    pub field: String,
    pub rule: String,
}

impl ValidationError {
    pub fn new(field: impl Into<String>, rule: impl Into<String>) -> Self {
        ValidationError {
            field: field.into(),
            rule: rule.into(),
        }
    }
}
