//! Contract 001's search: the request as it is read and the answer as it is written.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `top_k` bounds and default (001 "optional integer in [1, 50]", "defaults to 5").
pub const TOP_K_MAX: u64 = 50;
pub const TOP_K_DEFAULT: usize = 5;

/// `POST /v1/rag/query` and `POST /v1/indexes/{index}/rag/query`.
// Open: MCP clients send extra keys, which are ignored (no `deny_unknown_fields`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(
    rename = "RagQueryRequest",
    description = "The MCP tool input, plus the graph options fast_mode and structural_depth. \
                   Other keys (MCP extras) are ignored. Chunk ranking is hybrid with alpha 0.5."
)]
pub struct RagQueryRequestBody {
    /// The query: at most `limits.max_query_bytes` bytes (default 8192).
    // An `Option` so that `null` is refused as missing ("is required"), as it always was.
    #[schemars(with = "String", length(min = 1), regex(pattern = r"\S"))]
    pub query: Option<String>,
    /// Results wanted; out of range is refused, not clamped.
    #[serde(default)]
    #[schemars(range(min = 1, max = TOP_K_MAX), extend("default" = TOP_K_DEFAULT))]
    pub top_k: Option<u64>,
    /// true: chunk hits only (structural depth 0). Defaults to the server's mode:
    /// graph.enabled = false is fast mode, and a request cannot turn graph mode on there.
    #[serde(default)]
    pub fast_mode: Option<bool>,
    /// Graph mode: relations within this many hops of the query's entities (default
    /// graph.default_depth, at most graph.max_depth). Ignored (forced to 0) in fast mode.
    #[serde(default)]
    pub structural_depth: Option<u64>,
}

/// All three keys always present. An index nobody has written to yet answers all three
/// empty.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[schemars(rename = "RagQueryResponse")]
pub struct RagQueryResponse {
    /// Chunk hits and (graph mode) relation hits in rank order (the contract has no score
    /// field); the two lists are merged by reciprocal rank.
    pub results: Vec<RagResult>,
    /// The triples of the relation hits in results; empty in fast mode.
    pub kg: Vec<KgTriple>,
    /// Normalised names of the entities the query named (they also widen the keyword
    /// branch); empty in fast mode.
    pub rewrite_terms: Vec<String>,
}

/// A chunk hit (`metadata`, `content`) or, in graph mode, a relation hit (`component_type:
/// relation` with `subject`, `relation`, `object` and `metadata.collection`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RagResult {
    Chunk(ChunkHit),
    Relation(RelationHit),
}

/// A chunk of the index.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ChunkHit {
    pub metadata: RagMetadata,
    /// The chunk's text.
    pub content: String,
}

/// A relation of the knowledge graph (graph mode).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RelationHit {
    pub metadata: RagMetadata,
    pub component_type: ComponentType,
    /// The subject entity.
    pub subject: String,
    /// The relation.
    pub relation: String,
    /// The object entity.
    pub object: String,
}

/// What a relation hit is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ComponentType {
    Relation,
}

/// A hit's metadata. Fields without a value are left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct RagMetadata {
    /// The document's `language` (or `lang`) metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub language: Option<String>,
    /// The document's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub title: Option<String>,
    /// The document's uri.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub url: Option<String>,
    /// The document's updated_at.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub timestamp: Option<String>,
    /// The document's tags, comma-joined.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub tags: Option<String>,
    /// The index.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub collection: Option<String>,
}

/// A knowledge-graph triple.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct KgTriple {
    /// The subject entity.
    pub subject: String,
    /// The relation.
    pub relation: String,
    /// The object entity.
    pub object: String,
}
