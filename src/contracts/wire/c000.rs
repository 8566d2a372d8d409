//! Contract 000's retrieval call: the request as it is read and the answer as it is written.

use std::num::NonZeroU64;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::IndexVersion;
use crate::retrieval::{QueryPreprocessing, RelevanceKind, SearchMethod};

/// `POST /v1/retrieve`, and a bus query without a `contract` header.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(
    rename = "RetrievalRequest",
    description = "Contract 000's canonical request. Keys beside `retrieval` are ignored; unknown \
                   keys inside it are refused."
)]
pub struct RetrievalRequestBody {
    pub retrieval: RetrievalSpec,
}

/// One retrieval call. `null` is the same as an absent field.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrievalSpec {
    #[schemars(with = "crate::model::IndexName")]
    pub index: String,
    /// The query: at most `limits.max_query_bytes` bytes (default 8192).
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub query: String,
    /// Results wanted: at most `limits.max_top_k` (default 100).
    #[serde(default)]
    #[schemars(range(min = 1), extend("default" = 5))]
    pub top_k: Option<u64>,
    /// Exact-match filters; absent or `{}` filters nothing.
    #[serde(default)]
    #[schemars(with = "super::FilterBag")]
    pub filters: Option<Value>,
    /// How to rank.
    #[serde(default)]
    #[schemars(extend("default" = "semantic"))]
    pub search_method: Option<SearchMethod>,
    /// Applied once, before every branch.
    #[serde(default)]
    #[schemars(extend("default" = "none"))]
    pub query_preprocessing: Option<QueryPreprocessing>,
    /// The semantic weight of hybrid fusion; accepted and ignored (not echoed) for the other
    /// methods. Each hybrid branch over-fetches min(max(top_k·3, 10), 50).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0), extend("default" = 0.5))]
    pub hybrid_alpha: Option<f64>,
    /// Answer from this retained version instead of the newest.
    #[serde(default)]
    #[schemars(with = "Option<IndexVersion>")]
    pub index_version: Option<NonZeroU64>,
}

/// The answer to a contract 000 request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RetrievalCallsResponse {
    /// One call: the request's.
    #[schemars(length(min = 1, max = 1))]
    pub retrieval_calls: Vec<RetrievalCall>,
}

/// The call as it ran, and its results.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RetrievalCall {
    #[schemars(with = "crate::model::IndexName")]
    pub index: String,
    /// The query as searched, after preprocessing.
    pub query: String,
    /// The top_k applied.
    #[schemars(range(min = 1))]
    pub top_k: usize,
    pub search_method: SearchMethod,
    pub query_preprocessing: QueryPreprocessing,
    /// The alpha applied; present for hybrid only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub hybrid_alpha: Option<f64>,
    /// The number of results.
    pub result_count: usize,
    /// Best first.
    pub results: Vec<RetrievalResult>,
    /// The version answered from; send it back to answer again from it.
    #[schemars(with = "IndexVersion")]
    pub index_version: u64,
    /// Names this answer.
    #[schemars(extend("format" = "uuid"))]
    pub query_id: String,
    /// Server-side time.
    #[schemars(range(min = 0.0))]
    pub latency_ms: f64,
}

/// One chunk of a contract 000 answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RetrievalResult {
    /// The chunk id: content-derived, stable across re-indexing.
    pub id: String,
    /// The chunk's text.
    pub text: String,
    #[schemars(with = "super::chunk_metadata::ChunkMetadata<'static>")]
    pub metadata: Map<String, Value>,
    /// Equal to relevance_score.
    pub score: f64,
    pub score_kind: RelevanceKind,
    /// The score ranked by; see relevance_kind.
    pub relevance_score: f64,
    pub relevance_kind: RelevanceKind,
    /// The branch scores behind a hybrid score; present when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "RelevanceComponents")]
    pub relevance_components: Option<RelevanceComponents>,
}

/// The branch scores behind a hybrid score.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct RelevanceComponents {
    /// The normalised semantic score used in fusion.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub semantic_score: Option<f64>,
    /// The min-max normalised keyword score used in fusion.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0))]
    pub keyword_score: Option<f64>,
}
