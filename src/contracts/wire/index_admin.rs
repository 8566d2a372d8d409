//! Ingestion and index administration: the ingest request, and the answers of ingest,
//! delete, rebuild, list, stats and status.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::ErrorDetail;
use super::IndexVersion;
use crate::index::IndexStats;
use crate::kafka::PartitionLag;
use crate::model::{Document, IndexName};

/// `POST /v1/indexes/{index}/documents`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    rename = "IngestRequest",
    extend("anyOf" = [
        {"required": ["documents"], "properties": {"documents": {"type": "array", "minItems": 1}}},
        {"required": ["deletes"], "properties": {"deletes": {"type": "array", "minItems": 1}}},
    ]),
    description = "At least one document or delete. Every document is validated before any \
                   event is produced; the first invalid one is refused with `error.field` \
                   `documents[i].<field>`."
)]
pub struct IngestRequestBody {
    // Each document and id is read on its own, so a fault names `documents[i]`.
    /// Documents to index; an id already indexed is replaced.
    #[serde(default)]
    #[schemars(with = "Option<Vec<Document>>")]
    pub documents: Option<Vec<Value>>,
    /// Ids of documents to delete (soft: hidden from active searches).
    #[serde(default)]
    #[schemars(with = "Option<Vec<DocumentId>>")]
    pub deletes: Option<Vec<Value>>,
}

/// A document id (only its schema is used).
#[derive(JsonSchema)]
#[schemars(inline)]
pub struct DocumentId(#[schemars(length(min = 1), regex(pattern = r"\S"))] pub String);

/// The answer to an ingest or a document delete: the events are on the documents topic.
#[derive(Debug, Serialize, JsonSchema)]
pub struct IngestAccepted {
    /// The events produced.
    #[schemars(range(min = 1))]
    pub accepted: usize,
    /// The documents topic.
    pub topic: String,
    /// Where each event landed, in order.
    pub offsets: Vec<EventOffset>,
}

/// Where one event landed.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct EventOffset {
    /// The documents topic's partition.
    #[schemars(range(min = 0))]
    pub partition: i32,
    /// The event's offset in it.
    #[schemars(range(min = 0))]
    pub offset: i64,
}

/// The answer to `DELETE /v1/indexes/{index}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct IndexDeleted {
    pub index: IndexName,
    /// The newest version the index had.
    #[schemars(with = "IndexVersion")]
    pub index_version: u64,
    #[schemars(extend("const" = true))]
    pub deleted: bool,
}

/// The keyword index re-derived from the Lance rows of the newest version, the source of
/// truth.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RebuildResponse {
    pub index: IndexName,
    /// The version rebuilt (no new one).
    #[schemars(with = "IndexVersion")]
    pub index_version: u64,
    /// The chunks re-indexed, live and deleted.
    pub rebuilt_chunks: usize,
}

/// The answer to `GET /v1/indexes`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct IndexList {
    /// Every index under the data directory the caller may read, by name. An index that
    /// cannot be opened is listed with its name and an `error` instead of its figures.
    pub indexes: Vec<IndexListEntry>,
    /// Why the data directory could not be listed (then `indexes` is empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "ErrorDetail")]
    pub error: Option<ErrorDetail>,
}

/// One index of the list: its stats, or why they could not be read.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum IndexListEntry {
    Stats(IndexStats),
    Unreadable(UnreadableIndex),
}

/// An index whose stats could not be read.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct UnreadableIndex {
    pub index: IndexName,
    pub error: ErrorDetail,
}

/// Contract 002's indexing status.
#[derive(Debug, Serialize, JsonSchema)]
pub struct IndexStatus {
    pub index: IndexName,
    /// The newest version.
    #[schemars(with = "IndexVersion")]
    pub index_version: u64,
    /// When the newest version was committed (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    pub last_commit_at: String,
    pub indexing_lag: IndexingLag,
}

/// How far the index trails the documents topic; the status still answers 200 when Kafka
/// cannot be asked.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum IndexingLag {
    Known {
        /// The lag summed over partitions.
        #[schemars(range(min = 0))]
        messages: i64,
        /// One per partition of the topic.
        partitions: Vec<PartitionLag>,
    },
    Unknown {
        /// Why the lag is unknown (Kafka did not answer in time).
        error: String,
    },
}
