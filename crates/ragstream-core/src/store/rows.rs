//! The stored chunk row and its Arrow schema: the Lance table layout, and what the keyword
//! store is rebuilt from.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, FixedSizeListBuilder, Float32Builder, ListBuilder, StringBuilder, UInt32Builder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::UInt32Type;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use serde_json::{Map, Value};

use super::filters::metadata_terms;
use crate::model::{Chunk, Document};

/// Name of the vector column.
pub const VECTOR_COLUMN: &str = "vector";

/// One chunk as stored: the chunk, the built-in metadata copied from its document, and (when
/// read with it) its vector.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChunkRow {
    pub chunk_id: String,
    pub document_id: String,
    pub chunk_index: u32,
    pub text: String,
    pub title: Option<String>,
    pub section_path: Vec<String>,
    pub page_number: Option<u32>,
    pub offset_start: u32,
    pub offset_end: u32,
    pub knowledge_base_id: String,
    pub source_type: Option<String>,
    pub source_name: Option<String>,
    pub uri: Option<String>,
    pub source_id: Option<String>,
    pub source_path: Option<String>,
    pub managed_by_source: Option<bool>,
    pub project_id: Option<String>,
    pub tags: Vec<String>,
    pub updated_at: Option<String>,
    pub metadata: Map<String, Value>,
    /// Content hash of the whole document the chunk came from (see `Document::content_hash`).
    pub doc_hash: String,
    /// When the document was deleted (canonical UTC); `None` while it is live. Deletes are
    /// soft: the rows stay, hidden from `active` searches, until maintenance removes them.
    pub deleted_at: Option<String>,
    pub vector: Option<Vec<f32>>,
}

impl ChunkRow {
    /// Where to cite the chunk from: its document's `uri`, else its `source_path`.
    pub fn source_uri(&self) -> Option<String> {
        self.uri.clone().or_else(|| self.source_path.clone())
    }

    pub fn new(index: &str, doc: &Document, doc_hash: &str, chunk: Chunk) -> Self {
        ChunkRow {
            chunk_id: chunk.chunk_id.0,
            document_id: chunk.document_id,
            chunk_index: chunk.chunk_index,
            text: chunk.text,
            title: doc.title.clone(),
            section_path: chunk.section_path,
            page_number: chunk.page_number,
            offset_start: chunk.offsets.start,
            offset_end: chunk.offsets.end,
            knowledge_base_id: index.to_string(),
            source_type: doc.source_type.clone(),
            source_name: doc.source_name.clone(),
            uri: doc.uri.clone(),
            source_id: doc.source_id.clone(),
            source_path: doc.source_path.clone(),
            managed_by_source: doc.managed_by_source,
            project_id: doc.project_id.clone(),
            tags: doc.tags.clone(),
            // Stored canonical (UTC, milliseconds) so that `updated_after` filters compare text.
            updated_at: doc
                .updated_at
                .as_deref()
                .map(|t| crate::model::canonical_timestamp(t).unwrap_or_else(|| t.to_string())),
            metadata: doc.metadata.clone(),
            doc_hash: doc_hash.to_string(),
            deleted_at: None,
            vector: None,
        }
    }

    pub fn is_deleted(&self) -> bool {
        self.deleted_at.is_some()
    }

    /// The text that is embedded and keyword-indexed: the title (if any) and the chunk text.
    pub fn search_text(&self) -> String {
        match &self.title {
            Some(title) if !title.is_empty() => format!("{title}\n{}", self.text),
            _ => self.text.clone(),
        }
    }

    /// `key=<json>` terms of the custom metadata, for exact-match filtering.
    pub fn metadata_terms(&self) -> Vec<String> {
        self.metadata
            .iter()
            .flat_map(|(k, v)| metadata_terms(k, v))
            .collect()
    }

    /// A filterable column's value as the term both stores match on.
    pub fn column_term(&self, column: &str) -> Option<String> {
        match column {
            "knowledge_base_id" => Some(self.knowledge_base_id.clone()),
            "document_id" => Some(self.document_id.clone()),
            "chunk_index" => Some(self.chunk_index.to_string()),
            "title" => self.title.clone(),
            "source_type" => self.source_type.clone(),
            "source_name" => self.source_name.clone(),
            "uri" => self.uri.clone(),
            "source_id" => self.source_id.clone(),
            "source_path" => self.source_path.clone(),
            "managed_by_source" => self.managed_by_source.map(|b| b.to_string()),
            "page_number" => self.page_number.map(|n| n.to_string()),
            "project_id" => self.project_id.clone(),
            "updated_at" => self.updated_at.clone(),
            _ => None,
        }
    }
}

pub(crate) fn utf8(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}

pub(crate) fn string_list(name: &str) -> Field {
    Field::new(
        name,
        DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        false,
    )
}

fn vector_item() -> Arc<Field> {
    Arc::new(Field::new("item", DataType::Float32, true))
}

/// The vector column's field (chunks and graph triples alike).
pub(crate) fn vector_field(dimensions: usize) -> Field {
    Field::new(
        VECTOR_COLUMN,
        DataType::FixedSizeList(vector_item(), dimensions as i32),
        false,
    )
}

/// A utf8 column.
pub(crate) fn strings<'a>(values: impl Iterator<Item = Option<&'a str>>) -> ArrayRef {
    let mut b = StringBuilder::new();
    values.for_each(|v| b.append_option(v));
    Arc::new(b.finish())
}

/// A list-of-utf8 column.
pub(crate) fn string_lists<'a>(values: impl Iterator<Item = &'a [String]>) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    for list in values {
        for item in list {
            b.values().append_value(item);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

/// The vector column of rows named by their ids; a row without a vector of `dimensions`
/// is an error naming it.
pub(crate) fn vector_column<'a>(
    rows: impl Iterator<Item = (&'a str, Option<&'a Vec<f32>>)>,
    dimensions: usize,
) -> Result<ArrayRef, String> {
    let mut vectors = FixedSizeListBuilder::new(Float32Builder::new(), dimensions as i32)
        .with_field(vector_item());
    for (id, v) in rows {
        let v = v
            .filter(|v| v.len() == dimensions)
            .ok_or_else(|| format!("{id} has no {dimensions}-d vector"))?;
        vectors.values().append_slice(v);
        vectors.append(true);
    }
    Ok(Arc::new(vectors.finish()))
}

/// Column marking soft-deleted rows. It comes after the vector because indexes written
/// before soft deletes gain it by schema evolution, which appends.
pub const DELETED_AT_COLUMN: &str = "deleted_at";

/// The Lance table schema for vectors of `dimensions`.
pub fn chunk_schema(dimensions: usize) -> SchemaRef {
    Arc::new(Schema::new(vec![
        utf8("chunk_id", false),
        utf8("document_id", false),
        Field::new("chunk_index", DataType::UInt32, false),
        utf8("text", false),
        utf8("title", true),
        utf8("section_path", false),
        Field::new("page_number", DataType::UInt32, true),
        Field::new("offset_start", DataType::UInt32, false),
        Field::new("offset_end", DataType::UInt32, false),
        utf8("knowledge_base_id", false),
        utf8("source_type", true),
        utf8("source_name", true),
        utf8("uri", true),
        utf8("source_id", true),
        utf8("source_path", true),
        Field::new("managed_by_source", DataType::Boolean, true),
        utf8("project_id", true),
        string_list("tags"),
        utf8("updated_at", true),
        utf8("metadata", false),
        string_list("meta_kv"),
        utf8("doc_hash", false),
        vector_field(dimensions),
        utf8(DELETED_AT_COLUMN, true),
    ]))
}

/// Lance's row address column (fragment and offset of a row within one version).
pub const ROW_ADDRESS_COLUMN: &str = "_rowaddr";

/// What ranking needs of a chunk before its text and metadata: where its row is in the
/// version searched (to read the rest by address, once the ranking has picked it), the keys
/// that order ties, and the vector its similarity comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateRow {
    pub address: u64,
    pub chunk_id: String,
    pub document_id: String,
    pub chunk_index: u32,
    pub vector: Vec<f32>,
}

/// The columns a [`CandidateRow`] is read from (with the row address).
pub const CANDIDATE_COLUMNS: [&str; 4] = ["chunk_id", "document_id", "chunk_index", VECTOR_COLUMN];

/// Every column except the vector, for reads that do not need it.
pub fn columns_without_vector() -> Vec<&'static str> {
    vec![
        "chunk_id",
        "document_id",
        "chunk_index",
        "text",
        "title",
        "section_path",
        "page_number",
        "offset_start",
        "offset_end",
        "knowledge_base_id",
        "source_type",
        "source_name",
        "uri",
        "source_id",
        "source_path",
        "managed_by_source",
        "project_id",
        "tags",
        "updated_at",
        "metadata",
        "meta_kv",
        "doc_hash",
        DELETED_AT_COLUMN,
    ]
}

/// Builds a record batch; every row must carry a vector of `dimensions`.
pub fn rows_to_batch(rows: &[ChunkRow], dimensions: usize) -> Result<RecordBatch, String> {
    fn u32s(values: impl Iterator<Item = Option<u32>>) -> ArrayRef {
        let mut b = UInt32Builder::new();
        values.for_each(|v| b.append_option(v));
        Arc::new(b.finish())
    }
    let mut bools = BooleanBuilder::new();
    rows.iter()
        .for_each(|r| bools.append_option(r.managed_by_source));
    let vectors = vector_column(
        rows.iter()
            .map(|r| (r.chunk_id.as_str(), r.vector.as_ref())),
        dimensions,
    )
    .map_err(|e| format!("chunk {e}"))?;
    let columns: Vec<ArrayRef> = vec![
        strings(rows.iter().map(|r| Some(r.chunk_id.as_str()))),
        strings(rows.iter().map(|r| Some(r.document_id.as_str()))),
        u32s(rows.iter().map(|r| Some(r.chunk_index))),
        strings(rows.iter().map(|r| Some(r.text.as_str()))),
        strings(rows.iter().map(|r| r.title.as_deref())),
        strings(
            rows.iter()
                .map(|r| serde_json::to_string(&r.section_path).ok())
                .collect::<Vec<_>>()
                .iter()
                .map(|s| s.as_deref()),
        ),
        u32s(rows.iter().map(|r| r.page_number)),
        u32s(rows.iter().map(|r| Some(r.offset_start))),
        u32s(rows.iter().map(|r| Some(r.offset_end))),
        strings(rows.iter().map(|r| Some(r.knowledge_base_id.as_str()))),
        strings(rows.iter().map(|r| r.source_type.as_deref())),
        strings(rows.iter().map(|r| r.source_name.as_deref())),
        strings(rows.iter().map(|r| r.uri.as_deref())),
        strings(rows.iter().map(|r| r.source_id.as_deref())),
        strings(rows.iter().map(|r| r.source_path.as_deref())),
        Arc::new(bools.finish()),
        strings(rows.iter().map(|r| r.project_id.as_deref())),
        string_lists(rows.iter().map(|r| r.tags.as_slice())),
        strings(rows.iter().map(|r| r.updated_at.as_deref())),
        strings(
            rows.iter()
                .map(|r| serde_json::to_string(&r.metadata).ok())
                .collect::<Vec<_>>()
                .iter()
                .map(|s| s.as_deref()),
        ),
        string_lists(
            rows.iter()
                .map(ChunkRow::metadata_terms)
                .collect::<Vec<_>>()
                .iter()
                .map(Vec::as_slice),
        ),
        strings(rows.iter().map(|r| Some(r.doc_hash.as_str()))),
        vectors,
        strings(rows.iter().map(|r| r.deleted_at.as_deref())),
    ];
    RecordBatch::try_new(chunk_schema(dimensions), columns).map_err(|e| e.to_string())
}

/// A row as Lance stores it, without its vector: its JSON columns (`section_path`,
/// `metadata`) still text. What the resident vectors' scratch files keep of each row, so that
/// a row read from them becomes a [`ChunkRow`] by the same parse as one read from Lance.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredRow {
    chunk_id: String,
    document_id: String,
    chunk_index: u32,
    text: String,
    title: Option<String>,
    section_path: String,
    page_number: Option<u32>,
    offset_start: u32,
    offset_end: u32,
    knowledge_base_id: String,
    source_type: Option<String>,
    source_name: Option<String>,
    uri: Option<String>,
    source_id: Option<String>,
    source_path: Option<String>,
    managed_by_source: Option<bool>,
    project_id: Option<String>,
    tags: Vec<String>,
    updated_at: Option<String>,
    metadata: String,
    doc_hash: String,
    deleted_at: Option<String>,
}

impl StoredRow {
    /// Whether the row is soft-deleted.
    pub fn is_deleted(&self) -> bool {
        self.deleted_at.is_some()
    }

    /// The row's chunk id, document id and chunk index.
    pub fn ids(&self) -> (&str, &str, u32) {
        (&self.chunk_id, &self.document_id, self.chunk_index)
    }

    /// The chunk row, with `vector` (if read).
    pub fn into_row(self, vector: Option<Vec<f32>>) -> ChunkRow {
        ChunkRow {
            chunk_id: self.chunk_id,
            document_id: self.document_id,
            chunk_index: self.chunk_index,
            text: self.text,
            title: self.title,
            section_path: serde_json::from_str(&self.section_path).unwrap_or_default(),
            page_number: self.page_number,
            offset_start: self.offset_start,
            offset_end: self.offset_end,
            knowledge_base_id: self.knowledge_base_id,
            source_type: self.source_type,
            source_name: self.source_name,
            uri: self.uri,
            source_id: self.source_id,
            source_path: self.source_path,
            managed_by_source: self.managed_by_source,
            project_id: self.project_id,
            tags: self.tags,
            updated_at: self.updated_at,
            metadata: serde_json::from_str(&self.metadata).unwrap_or_default(),
            doc_hash: self.doc_hash,
            deleted_at: self.deleted_at,
            vector,
        }
    }
}

#[cfg(test)]
impl StoredRow {
    /// A row for tests of what keeps stored rows: text "text of <chunk id>", metadata
    /// `{"n": <chunk index>}`, soft-deleted if `deleted`.
    pub(crate) fn for_test(
        chunk_id: &str,
        document_id: &str,
        chunk_index: u32,
        deleted: bool,
    ) -> Self {
        StoredRow {
            chunk_id: chunk_id.to_string(),
            document_id: document_id.to_string(),
            chunk_index,
            text: format!("text of {chunk_id}"),
            title: None,
            section_path: "[]".to_string(),
            page_number: None,
            offset_start: 0,
            offset_end: 0,
            knowledge_base_id: "kb".to_string(),
            source_type: None,
            source_name: None,
            uri: None,
            source_id: None,
            source_path: None,
            managed_by_source: None,
            project_id: None,
            tags: Vec::new(),
            updated_at: None,
            metadata: format!("{{\"n\":{chunk_index}}}"),
            doc_hash: "h".to_string(),
            deleted_at: deleted.then(|| "2026-11-27T00:00:00.000Z".to_string()),
        }
    }
}

/// Reads rows back from a batch holding at least the non-vector columns (and the vector
/// column when it was projected).
pub fn batch_to_rows(batch: &RecordBatch) -> Result<Vec<ChunkRow>, String> {
    let stored = batch_to_stored(batch)?;
    let rows = match vectors_of(batch)? {
        Some(vectors) => stored
            .into_iter()
            .zip(vectors)
            .map(|(r, v)| r.into_row(Some(v)))
            .collect(),
        None => stored.into_iter().map(|r| r.into_row(None)).collect(),
    };
    Ok(rows)
}

/// Reads the stored rows of a batch holding at least the non-vector columns.
pub fn batch_to_stored(batch: &RecordBatch) -> Result<Vec<StoredRow>, String> {
    let col = |name: &str| {
        batch
            .column_by_name(name)
            .ok_or_else(|| format!("column {name} missing from the read"))
    };
    let string_at = |name: &str| -> Result<Vec<Option<String>>, String> {
        let a = col(name)?
            .as_string_opt::<i32>()
            .ok_or(format!("{name}: not utf8"))?;
        Ok((0..a.len())
            .map(|i| a.is_valid(i).then(|| a.value(i).to_string()))
            .collect())
    };
    let u32_at = |name: &str| -> Result<Vec<Option<u32>>, String> {
        let a = col(name)?
            .as_primitive_opt::<UInt32Type>()
            .ok_or(format!("{name}: not u32"))?;
        Ok((0..a.len())
            .map(|i| a.is_valid(i).then(|| a.value(i)))
            .collect())
    };
    let list_at = |name: &str| -> Result<Vec<Vec<String>>, String> {
        let a = col(name)?
            .as_list_opt::<i32>()
            .ok_or(format!("{name}: not a list"))?;
        Ok((0..a.len())
            .map(|i| {
                let items = a.value(i);
                let s = items.as_string::<i32>();
                (0..s.len()).map(|j| s.value(j).to_string()).collect()
            })
            .collect())
    };
    let mut chunk_id = string_at("chunk_id")?;
    let mut document_id = string_at("document_id")?;
    let chunk_index = u32_at("chunk_index")?;
    let mut text = string_at("text")?;
    let mut title = string_at("title")?;
    let mut section_path = string_at("section_path")?;
    let page_number = u32_at("page_number")?;
    let offset_start = u32_at("offset_start")?;
    let offset_end = u32_at("offset_end")?;
    let mut kb = string_at("knowledge_base_id")?;
    let mut source_type = string_at("source_type")?;
    let mut source_name = string_at("source_name")?;
    let mut uri = string_at("uri")?;
    let mut source_id = string_at("source_id")?;
    let mut source_path = string_at("source_path")?;
    let managed = col("managed_by_source")?
        .as_boolean_opt()
        .ok_or("managed_by_source: not bool")?;
    let mut project_id = string_at("project_id")?;
    let mut tags = list_at("tags")?;
    let mut updated_at = string_at("updated_at")?;
    let mut metadata = string_at("metadata")?;
    let mut doc_hash = string_at("doc_hash")?;
    let mut deleted_at = string_at(DELETED_AT_COLUMN)?;
    let mut rows = Vec::with_capacity(batch.num_rows());
    for i in 0..batch.num_rows() {
        let req = |v: &mut Vec<Option<String>>| v[i].take().unwrap_or_default();
        rows.push(StoredRow {
            chunk_id: req(&mut chunk_id),
            document_id: req(&mut document_id),
            chunk_index: chunk_index[i].unwrap_or_default(),
            text: req(&mut text),
            title: title[i].take(),
            section_path: req(&mut section_path),
            page_number: page_number[i],
            offset_start: offset_start[i].unwrap_or_default(),
            offset_end: offset_end[i].unwrap_or_default(),
            knowledge_base_id: req(&mut kb),
            source_type: source_type[i].take(),
            source_name: source_name[i].take(),
            uri: uri[i].take(),
            source_id: source_id[i].take(),
            source_path: source_path[i].take(),
            managed_by_source: managed.is_valid(i).then(|| managed.value(i)),
            project_id: project_id[i].take(),
            tags: std::mem::take(&mut tags[i]),
            updated_at: updated_at[i].take(),
            metadata: req(&mut metadata),
            doc_hash: req(&mut doc_hash),
            deleted_at: deleted_at[i].take(),
        });
    }
    Ok(rows)
}

/// The batch's vectors, if it was read with them.
fn vectors_of(batch: &RecordBatch) -> Result<Option<Vec<Vec<f32>>>, String> {
    let Some(a) = batch.column_by_name(VECTOR_COLUMN) else {
        return Ok(None);
    };
    let fsl = a
        .as_fixed_size_list_opt()
        .ok_or("vector: not a fixed-size list")?;
    Ok(Some(
        (0..fsl.len())
            .map(|i| {
                fsl.value(i)
                    .as_primitive::<arrow_array::types::Float32Type>()
                    .values()
                    .to_vec()
            })
            .collect(),
    ))
}

/// Reads candidates from a batch of [`CANDIDATE_COLUMNS`] read with Lance's row address.
pub fn batch_to_candidates(batch: &RecordBatch) -> Result<Vec<CandidateRow>, String> {
    let col = |name: &str| {
        batch
            .column_by_name(name)
            .ok_or_else(|| format!("column {name} missing from the read"))
    };
    let address = col(ROW_ADDRESS_COLUMN)?
        .as_primitive_opt::<arrow_array::types::UInt64Type>()
        .ok_or("_rowaddr: not u64")?;
    let chunk_id = col("chunk_id")?
        .as_string_opt::<i32>()
        .ok_or("chunk_id: not utf8")?;
    let document_id = col("document_id")?
        .as_string_opt::<i32>()
        .ok_or("document_id: not utf8")?;
    let chunk_index = col("chunk_index")?
        .as_primitive_opt::<UInt32Type>()
        .ok_or("chunk_index: not u32")?;
    let vectors = vectors_of(batch)?.ok_or("column vector missing from the read")?;
    Ok(vectors
        .into_iter()
        .enumerate()
        .map(|(i, vector)| CandidateRow {
            address: address.value(i),
            chunk_id: chunk_id.value(i).to_string(),
            document_id: document_id.value(i).to_string(),
            chunk_index: chunk_index.value(i),
            vector,
        })
        .collect())
}

/// A one-chunk row of document "d" in index "kb", for tests.
#[cfg(test)]
pub(crate) fn test_row(id: &str, title: &str, text: &str) -> ChunkRow {
    let doc = Document {
        id: "d".into(),
        title: Some(title.into()),
        text: Some(text.into()),
        ..Default::default()
    };
    let chunk = Chunk {
        chunk_id: crate::model::ChunkId(id.into()),
        document_id: "d".into(),
        chunk_index: 0,
        text: text.into(),
        section_path: vec![],
        page_number: None,
        offsets: crate::model::Offsets { start: 0, end: 1 },
    };
    ChunkRow::new("kb", &doc, "h", chunk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChunkId, Offsets};

    #[test]
    fn rows_round_trip_through_arrow() {
        let doc = Document {
            id: "d".into(),
            title: Some("T".into()),
            text: Some("x".into()),
            tags: vec!["a".into(), "b".into()],
            managed_by_source: Some(true),
            metadata: [("lang".to_string(), Value::from("en"))]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        let chunk = Chunk {
            chunk_id: ChunkId("c1".into()),
            document_id: "d".into(),
            chunk_index: 0,
            text: "x".into(),
            section_path: vec!["S".into()],
            page_number: Some(2),
            offsets: Offsets { start: 0, end: 1 },
        };
        let mut row = ChunkRow::new("kb", &doc, "h", chunk);
        row.vector = Some(vec![0.5, -0.5]);
        row.deleted_at = Some("2026-01-02T03:04:05.000Z".into());
        let batch = rows_to_batch(std::slice::from_ref(&row), 2).unwrap();
        assert_eq!(batch_to_rows(&batch).unwrap(), vec![row.clone()]);
        assert_eq!(row.metadata_terms(), vec!["lang=\"en\"".to_string()]);
        assert!(rows_to_batch(
            &[ChunkRow {
                vector: None,
                ..row
            }],
            2
        )
        .is_err());
    }
}
