//! Contract 000's chunk metadata, which contracts 000, 003 and 004 and hydration answer with.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::Offsets;
use crate::index::ChunkRow;

/// The built-in fields of a chunk's metadata. The answer is these, then the document's
/// custom `metadata` keys ([`ChunkMetadata::of`]).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(
    extend("additionalProperties" = true),
    description = "Contract 000's built-in chunk metadata (every field present, `page_number` \
                   only when known), the chunk's citation fields and the document's fields, \
                   then the document's custom `metadata` keys, which may not reuse one of \
                   these names."
)]
pub struct ChunkMetadata<'a> {
    /// The index the chunk is stored in.
    pub knowledge_base_id: &'a str,
    /// The document the chunk was cut from.
    pub document_id: &'a str,
    /// The chunk's position in its document, from 0.
    pub chunk_index: u32,
    /// The document's title.
    pub title: Option<&'a str>,
    /// As the document gave it.
    pub source_type: Option<&'a str>,
    /// As the document gave it.
    pub source_name: Option<&'a str>,
    /// As the document gave it.
    pub uri: Option<&'a str>,
    /// As the document gave it.
    pub source_id: Option<&'a str>,
    /// As the document gave it.
    pub source_path: Option<&'a str>,
    /// As the document gave it.
    pub managed_by_source: Option<bool>,
    /// The page the chunk is on; present only when known (paged documents).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32", range(min = 1))]
    pub page_number: Option<u32>,
    /// The headings enclosing the chunk, outermost first.
    pub section_path: &'a [String],
    pub offsets: Offsets,
    /// As the document gave it.
    pub project_id: Option<&'a str>,
    /// The document's tags.
    pub tags: &'a [String],
    /// The document's `updated_at` (RFC 3339).
    pub updated_at: Option<&'a str>,
}

impl ChunkMetadata<'_> {
    /// A chunk's metadata as answers carry it: the built-in fields, then the document's
    /// custom keys (a custom key never replaces a built-in one).
    pub fn of(row: &ChunkRow) -> Map<String, Value> {
        let fields = ChunkMetadata {
            knowledge_base_id: &row.knowledge_base_id,
            document_id: &row.document_id,
            chunk_index: row.chunk_index,
            title: row.title.as_deref(),
            source_type: row.source_type.as_deref(),
            source_name: row.source_name.as_deref(),
            uri: row.uri.as_deref(),
            source_id: row.source_id.as_deref(),
            source_path: row.source_path.as_deref(),
            managed_by_source: row.managed_by_source,
            page_number: row.page_number,
            section_path: &row.section_path,
            offsets: Offsets {
                start: row.offset_start,
                end: row.offset_end,
            },
            project_id: row.project_id.as_deref(),
            tags: &row.tags,
            updated_at: row.updated_at.as_deref(),
        };
        let Ok(Value::Object(mut m)) = serde_json::to_value(fields) else {
            unreachable!("a struct of strings and numbers serialises to an object")
        };
        for (k, v) in &row.metadata {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::metadata::reserved_metadata_keys;

    #[test]
    fn the_reserved_keys_are_exactly_the_built_in_fields_and_the_custom_ones_follow() {
        let schema = schemars::SchemaGenerator::default().into_root_schema_for::<ChunkMetadata>();
        let mut fields: Vec<&str> = schema
            .get("properties")
            .and_then(Value::as_object)
            .expect("properties")
            .keys()
            .map(String::as_str)
            .collect();
        let mut reserved: Vec<&str> = reserved_metadata_keys().collect();
        fields.sort_unstable();
        reserved.sort_unstable();
        assert_eq!(fields, reserved);

        let mut row = ChunkRow {
            knowledge_base_id: "kb".into(),
            document_id: "d".into(),
            ..Default::default()
        };
        row.metadata.insert("language".into(), "en".into());
        let m = ChunkMetadata::of(&row);
        assert_eq!(m.keys().next_back().map(String::as_str), Some("language"));
        assert!(m.get("page_number").is_none(), "absent when unknown");
        assert_eq!(m["title"], Value::Null);
    }
}
