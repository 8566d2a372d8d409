//! Contract 004's retriever call: the request as it is read and the answer as it is written.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `POST /v1/retrievers/{name}/retrieve`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    rename = "RetrieverRequest",
    description = "No per-call options (R10): any other key is refused with 400. Index, method, \
                   weight, filters and top_k are fixed in `[retrievers.<name>]`."
)]
pub struct RetrieverRequestBody {
    /// The question. Empty or only whitespace answers `[]`.
    pub query: String,
    /// The surrounding conversation: accepted and ignored (R2).
    #[serde(default)]
    pub messages: Option<Vec<Value>>,
}

/// A retriever's answer: its documents, best first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(description = "Best first, ties by id; `[]` is success (R3).")]
pub struct RetrieverResponse(pub Vec<RetrievedDocument>);

/// One document of a retriever's answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RetrievedDocument {
    /// The content-derived chunk id, stable across calls (R5).
    pub id: String,
    /// The chunk's text.
    pub content: String,
    /// The citation: the uri, else the source_path; absent when unknown (R8).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub source: Option<String>,
    /// Descending through the list, one scale per retriever (R6, R7).
    pub score: f64,
    /// Opaque to the contract (R9).
    #[schemars(with = "super::chunk_metadata::ChunkMetadata<'static>")]
    pub metadata: Map<String, Value>,
}
