//! What an explanation answers: the targets it was asked about, and for each one where its
//! chunks stood at every stage of the query. [`super::explain`] computes it.

use schemars::JsonSchema;
use serde::Serialize;

use super::fusion::BranchFusion;
use super::search::VectorSearch;

/// What to explain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum Target {
    DocumentId(String),
    ChunkId(String),
    /// A snippet of text, located in the index (case and spacing ignored).
    Text(String),
}

/// Where the target stands in the version explained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum Presence {
    /// It has chunks in the version searched (deleted ones included).
    InVersion,
    /// Not in the version searched, but in the newest: ingested later.
    IngestedLater,
    /// In neither: never ingested, or deleted and purged.
    NotFound,
    /// Every chunk of it in the version searched is deleted, and the caller may not see
    /// deleted chunks: only the time of the deletion is shown.
    Deleted,
}

/// Why each target was or was not retrieved by one query.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Explanation {
    /// The version explained.
    #[schemars(range(min = 1))]
    pub index_version: u64,
    /// The query as searched (after preprocessing).
    pub query: String,
    /// semantic, keyword or hybrid.
    pub search_method: &'static str,
    /// The semantic weight (hybrid only).
    pub hybrid_alpha: Option<f64>,
    /// How the two branches were scaled before the weighted sum (hybrid only).
    pub fusion: Option<BranchFusion>,
    /// Results asked for.
    #[schemars(range(min = 1))]
    pub top_k: usize,
    /// The candidate pool of each branch that ran.
    pub pools: Pools,
    /// What the query returned, best first.
    pub results: Vec<Returned>,
    /// The score of the last result.
    pub last_returned_score: Option<f64>,
    /// Query terms the keyword branch left out (`index.keyword.max_query_terms`).
    pub keyword_terms_dropped: Vec<String>,
    /// Terms the knowledge graph added to the keyword branch (a contract 002 query with
    /// `graph_depth`): the names and aliases of the entities the query named. A chunk's
    /// `matched_terms` and `term_scores` include them.
    pub keyword_expansion: Vec<String>,
    /// How the semantic branch searched (`exact`, or `approximate` through the vector
    /// index), when it ran.
    pub vector_search: Option<VectorSearch>,
    /// One explanation per target, in request order.
    pub targets: Vec<TargetExplanation>,
}

#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Pools {
    pub semantic: Option<usize>,
    pub keyword: Option<usize>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Returned {
    pub rank: usize,
    pub chunk_id: String,
    pub document_id: String,
    pub score: f64,
}

/// One target, explained.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct TargetExplanation {
    pub target: Target,
    pub presence: Presence,
    /// One line: what decided, for the target's best chunk.
    pub verdict: String,
    /// Its chunks in the version explained.
    pub chunks: Vec<ChunkExplanation>,
}

/// One chunk of a target, explained.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct ChunkExplanation {
    /// The chunk.
    pub chunk_id: String,
    /// Its document.
    pub document_id: String,
    /// Its place in the document.
    pub chunk_index: u32,
    /// Its rank in the results, when it was returned.
    pub rank: Option<usize>,
    /// When its document was deleted.
    pub deleted_at: Option<String>,
    /// The first filter that excludes it: the field and the value the chunk holds there.
    pub excluded_by_filter: Option<FilterMiss>,
    pub semantic: Option<BranchPosition>,
    pub keyword: Option<BranchPosition>,
    /// Its fused score, when it was a candidate of either branch (hybrid only).
    pub fused_score: Option<f64>,
    /// Its place in the fused order: 1 + the candidates with a higher fused score.
    pub fused_rank: Option<usize>,
    /// When the reranker ran and scored it: its place among the reranker's candidates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<RerankPosition>,
    /// Hybrid: the semantic weights of 0, 0.1, … 1 at which the query would return the
    /// chunk, its candidates fused as it fused them (empty: none would). Absent where a
    /// reranker or diversification ordered the results, since then the weight alone does
    /// not decide.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub returned_at_semantic_weights: Option<Vec<f64>>,
    /// What decided, in one line.
    pub verdict: String,
}

/// A chunk among the reranker's candidates.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct RerankPosition {
    /// Its place in the reranker's order, and how many candidates it scored.
    pub rank: usize,
    pub candidates: usize,
    /// The reranker's score: the score the results are ordered by.
    pub score: f64,
    /// Its place in the fused order the reranker was given.
    pub fused_rank: usize,
}

/// The first filter a chunk fails: the field and the value it holds.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct FilterMiss {
    pub field: String,
    pub value: serde_json::Value,
}

/// A chunk in one branch: its rank among the branch's best `depth` (none beyond), its raw
/// score, and whether the branch's pool held it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct BranchPosition {
    /// Rank among the branch's best `depth`; null beyond.
    pub rank: Option<usize>,
    /// How deep the branch was searched to rank the chunk: [`WIDE_POOL`], or the pool when
    /// larger.
    pub depth: usize,
    /// Similarity in [0, 1] (semantic), or BM25 (keyword; none when no query term matched).
    pub score: Option<f64>,
    /// The score fusion used: scaled over the pool as the query's fusion scales it (keyword,
    /// hybrid only).
    pub normalized: Option<f64>,
    pub in_pool: bool,
    pub pool: usize,
    /// Query terms the chunk holds (keyword).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_terms: Option<Vec<String>>,
    /// What each searched query term the chunk holds adds to its BM25 score (keyword); they
    /// sum to `score`. Terms dropped by `keyword.max_query_terms` add nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_scores: Option<Vec<TermScore>>,
}

/// One query term's part of a chunk's BM25 score.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct TermScore {
    pub term: String,
    pub score: f64,
}
