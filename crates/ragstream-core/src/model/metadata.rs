//! The built-in chunk metadata of contract 000, reserved on every chunk.

/// Built-in metadata fields stored on every chunk (contract 000, "Built-In Chunk Metadata").
/// Custom `metadata` keys may not reuse these names.
pub const BUILT_IN_FIELDS: &[&str] = &[
    "knowledge_base_id",
    "document_id",
    "chunk_index",
    "title",
    "source_type",
    "source_name",
    "uri",
    "source_id",
    "source_path",
    "managed_by_source",
    "page_number",
];

/// Top-level document fields that are also filterable next to the built-ins.
pub const DOCUMENT_FILTER_FIELDS: &[&str] = &["project_id", "tags", "updated_at"];

/// Keys a chunk's metadata has besides the built-ins and the document fields.
pub const CHUNK_FIELDS: &[&str] = &["section_path", "offsets"];

/// Every key a chunk's metadata answers with on its own. A custom `metadata` key may not
/// reuse one: the chunk's own value would hide it in every answer.
pub fn reserved_metadata_keys() -> impl Iterator<Item = &'static str> {
    BUILT_IN_FIELDS
        .iter()
        .chain(DOCUMENT_FILTER_FIELDS)
        .chain(CHUNK_FIELDS)
        .copied()
}
