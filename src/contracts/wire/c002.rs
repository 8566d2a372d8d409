//! Contract 002's query: the request as it is read and the answer as it is written.

use std::num::NonZeroU64;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::{present, IndexVersion, Offsets};
use crate::index::{AutoCalibration, IndexDefaults};
use crate::model::{BranchFusion, Profile};
use crate::retrieval::search::VectorSearch;

/// Longest `filters.path_prefix` accepted. It becomes a regex in the keyword store, which
/// tantivy compiles to an automaton of at most 1,000 states, about one per byte: a longer
/// prefix would fail as an internal error instead of a 400 (found by `bench fuzz`).
pub const MAX_PATH_PREFIX: usize = 512;
/// Deepest `graph_depth` a request may ask for (`graph.max_depth` may lower it).
pub const MAX_GRAPH_DEPTH: u64 = 5;

/// `POST /v1/indexes/{index}/query`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    rename = "QueryRequest",
    description = "Every query is hybrid; the weight comes from, first to last: the request's \
                   semantic_weight, its retrieval_profile, the index's default_semantic_weight, \
                   its default_retrieval_profile, auto. `null` is the same as an absent field."
)]
pub struct QueryRequestBody {
    /// The query: at most `limits.max_query_bytes` bytes (default 8192).
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub query: String,
    /// Absent: the index's default_retrieval_profile, else auto.
    #[serde(default, deserialize_with = "profile_name")]
    pub retrieval_profile: Option<Profile>,
    /// Overrides the profile's weight.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub semantic_weight: Option<f64>,
    // Kept as given (debug echoes it in `filters_applied`); the validation step reads it as
    // a `QueryFilters`.
    /// Every filter given must match.
    #[serde(default)]
    #[schemars(with = "Option<QueryFilters>")]
    pub filters: Option<Value>,
    /// Passages wanted: at most `limits.max_top_k` (default 100).
    #[serde(default)]
    #[schemars(range(min = 1), extend("default" = 5))]
    pub top_k: Option<u64>,
    /// Adds the retrieval explanation to the answer.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub debug: Option<bool>,
    /// Rerank with the configured `[reranker]`; without one, nothing happens.
    #[serde(default)]
    #[schemars(extend("default" = true))]
    pub rerank: Option<bool>,
    /// Answer from this retained version instead of the newest.
    #[serde(default)]
    #[schemars(with = "Option<IndexVersion>")]
    pub index_version: Option<NonZeroU64>,
    /// ragstream extension (opt-in): knowledge-graph relations within this many hops of the
    /// query's entities are returned as `relations`, with `rewrite_terms`; the entities'
    /// names also widen the lexical branch. At most graph.max_depth.
    #[serde(default)]
    #[schemars(range(max = MAX_GRAPH_DEPTH))]
    pub graph_depth: Option<u64>,
    /// ragstream extension: how hybrid scales its two branches for this query. Absent: the
    /// index's fusion setting, else contract.
    #[serde(default)]
    pub fusion: Option<BranchFusion>,
}

/// The filters of a contract 002 query; every one given must match.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryFilters {
    /// The document's project_id equals this.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    pub project_id: Option<String>,
    /// The document's source_path or uri starts with this; at most 512 bytes.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String", length(min = 1, max = MAX_PATH_PREFIX))]
    pub path_prefix: Option<String>,
    /// The document carries any of these tags.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Vec<String>", length(min = 1))]
    pub tags: Option<Vec<String>>,
    /// The document's updated_at is strictly later. ISO 8601: a date-time with an offset, a
    /// date-time without one (UTC), or a date alone (its midnight, UTC). Documents without
    /// one do not match.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    pub updated_after: Option<String>,
}

/// A profile by its name only (serde would also take an enum written as an object).
fn profile_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Profile>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(name) => Profile::parse(&name)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom("not a profile")),
    }
}

/// The answer to a contract 002 query.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(description = "The debug fields are present only when the request set `debug: true`.")]
pub struct QueryResponse {
    /// Names this answer.
    #[schemars(extend("format" = "uuid"))]
    pub query_id: String,
    /// The version answered from.
    #[schemars(with = "IndexVersion")]
    pub index_version: u64,
    /// Server-side time.
    #[schemars(range(min = 0.0))]
    pub latency_ms: f64,
    /// Passages, best first.
    pub results: Vec<Passage>,
    /// The passages grouped by document, in order of each document's best passage.
    pub documents: Vec<DocumentGroup>,
    /// Only with `graph_depth`.
    #[serde(flatten)]
    pub graph: Option<GraphAnswer>,
    /// Only with `debug: true`.
    #[serde(flatten)]
    pub debug: Option<QueryDebug>,
}

/// One passage of a contract 002 answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Passage {
    /// Content-derived, stable across re-indexing.
    pub chunk_id: String,
    /// The source document.
    pub document_id: String,
    /// The document's uri, else its source_path.
    pub source_uri: Option<String>,
    /// The document's title.
    pub title: Option<String>,
    /// The headings enclosing the passage, outermost first.
    pub section_path: Vec<String>,
    /// The passage.
    pub text: String,
    /// semantic_weight·semantic + (1 − semantic_weight)·lexical.
    pub score: f64,
    pub score_detail: ScoreDetail,
    pub offsets: Offsets,
}

/// The scores a passage's final score came from.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct ScoreDetail {
    /// The normalised semantic score; null when there is none.
    pub semantic: Option<f64>,
    /// The normalised lexical score; null when there is none.
    pub lexical: Option<f64>,
    /// The reranker's score, which ordered the passage; null when no reranker ran.
    pub rerank: Option<f64>,
    /// Equal to score.
    #[serde(rename = "final")]
    pub final_score: f64,
}

/// A document among the results, with its passages.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DocumentGroup {
    /// The document.
    pub document_id: String,
    /// The document's title.
    pub title: Option<String>,
    /// The document's uri, else its source_path.
    pub source_uri: Option<String>,
    /// The score of the document's best passage.
    pub score: f64,
    /// The chunk ids of its passages among the results, best first.
    pub passages: Vec<String>,
}

/// What a `graph_depth` query adds to the answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GraphAnswer {
    /// Only with graph_depth: relations reached from the query's entities, best first
    /// (score = 0.7 semantic + 0.3 lexical, times 0.8 per hop beyond the first).
    pub relations: Vec<GraphRelation>,
    /// Only with graph_depth: normalised names of the entities the query named.
    pub rewrite_terms: Vec<String>,
}

/// A knowledge-graph relation reached from the query's entities.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct GraphRelation {
    pub subject: String,
    pub relation: String,
    pub object: String,
    /// The document the relation was extracted from.
    pub document_id: String,
    /// The chunk it was extracted from, when known.
    pub chunk_id: Option<String>,
    /// Hops from a query entity: 1 touches it.
    pub depth: usize,
    pub score: f64,
    pub score_detail: RelationScoreDetail,
}

/// The branch scores of a relation.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct RelationScoreDetail {
    pub semantic: f64,
    pub lexical: f64,
}

/// The retrieval explanation `debug: true` adds.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct QueryDebug {
    /// debug only: the profile the query ran with (auto resolves to one of these).
    #[schemars(schema_with = "effective_profile")]
    pub retrieval_profile_effective: Profile,
    /// debug only: the semantic weight of fusion.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub semantic_weight_effective: f64,
    /// debug only: how the two branches were scaled before the weighted sum.
    pub fusion_effective: BranchFusion,
    /// debug only: what auto found; empty unless auto ran.
    #[schemars(schema_with = "signals")]
    pub auto_signals_detected: Vec<&'static str>,
    /// debug only: keyword candidates before fusion.
    pub lexical_candidates: usize,
    /// debug only: vector candidates before fusion.
    pub semantic_candidates: usize,
    /// debug only: whether a reranker reordered the passages.
    pub reranker_applied: bool,
    /// debug only: query terms the keyword branch left out as too common (only with
    /// `index.keyword.max_query_terms` set; empty by default).
    pub keyword_terms_dropped: Vec<String>,
    /// debug only: how the semantic branch searched: `exact` (every vector) or `approximate`
    /// (the index's vector index, which it builds once it holds `index.vector.min_rows`
    /// chunks, and which may miss a near chunk).
    pub vector_search_effective: Option<VectorSearch>,
    /// debug only: the filters as given.
    pub filters_applied: Map<String, Value>,
}

fn effective_profile(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = [Profile::Exact, Profile::Balanced, Profile::Semantic]
        .iter()
        .map(|p| p.name())
        .collect();
    json_schema!({"type": "string", "enum": names})
}

fn signals(_: &mut SchemaGenerator) -> Schema {
    use crate::retrieval::profiles::{LEXICAL_SIGNALS, PASSAGE_QUERY, SEMANTIC_SIGNALS};
    let all: Vec<&str> = LEXICAL_SIGNALS
        .iter()
        .chain(SEMANTIC_SIGNALS)
        .chain([&PASSAGE_QUERY])
        .copied()
        .collect();
    json_schema!({
        "type": "array",
        "items": {"type": "string", "enum": all, "description": "A query-analysis signal."},
    })
}

/// `PUT /v1/indexes/{index}/settings`, and the settings in force in its answer.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    description = "Contract 002's index-level defaults. A PUT replaces every one: an absent or \
                   null key clears that setting. A query's own values beat them."
)]
pub struct IndexSettings {
    /// The profile of queries that give neither a profile nor a weight.
    #[serde(default, deserialize_with = "profile_name")]
    pub default_retrieval_profile: Option<Profile>,
    /// The weight of queries that give neither a profile nor a weight (it beats
    /// default_retrieval_profile).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub default_semantic_weight: Option<f64>,
    /// Where auto starts on this index (null: the centre measured for the index's model, if
    /// it has one, else 0.5, balanced); `ragstream index calibrate` measures it. See
    /// auto_center_in_force in the answer.
    #[serde(default)]
    #[schemars(range(min = 0.2, max = 0.8))]
    pub auto_semantic_center: Option<f64>,
    /// The weight auto gives a passage (a query of 41 words or more) on this index (null:
    /// 0.5, balanced); calibration measures it.
    #[serde(default)]
    #[schemars(range(min = 0.2, max = 0.8))]
    pub auto_passage_weight: Option<f64>,
    /// How hybrid scales its two branches for this index's queries (null: contract, the
    /// similarity as is and keyword scores min-max scaled); calibration measures it. A
    /// query's own fusion beats it.
    #[serde(default)]
    pub fusion: Option<BranchFusion>,
    /// Read-only: how auto_semantic_center, auto_passage_weight and fusion were measured
    /// (judged queries, or queries the index cut from its own chunks) and the chunks the index
    /// had then; absent when they were set by hand. A PUT ignores it.
    // Any value is taken and dropped, so that what a GET returns can be PUT back.
    #[serde(
        default,
        deserialize_with = "ignored",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "AutoCalibration", extend("readOnly" = true))]
    pub auto_calibration: Option<AutoCalibration>,
}

/// A read-only field: whatever a request holds there is dropped.
fn ignored<'de, D: Deserializer<'de>, T>(d: D) -> Result<Option<T>, D::Error> {
    serde::de::IgnoredAny::deserialize(d).map(|_| None)
}

impl From<IndexDefaults> for IndexSettings {
    fn from(d: IndexDefaults) -> Self {
        IndexSettings {
            default_retrieval_profile: d.default_retrieval_profile,
            default_semantic_weight: d.default_semantic_weight,
            auto_semantic_center: d.auto_semantic_center,
            auto_passage_weight: d.auto_passage_weight,
            fusion: d.fusion,
            auto_calibration: d.auto_calibration,
        }
    }
}

/// The answer to a settings PUT.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct IndexSettingsResponse {
    #[schemars(with = "crate::model::IndexName")]
    pub index: String,
    /// The settings now in force: every key, null when unset.
    pub settings: IndexSettings,
    /// The centre auto starts from now: auto_semantic_center when set by hand or measured on
    /// judged queries, else the one measured for the index's model, else the index's own
    /// synthetic one, else 0.5.
    #[schemars(range(min = 0.2, max = 0.8))]
    pub auto_center_in_force: f64,
    /// The fusion queries that name none run with now: fusion, unless the model's measured
    /// centre replaced a synthetic calibration (it goes with contract), else contract.
    pub fusion_in_force: BranchFusion,
}
