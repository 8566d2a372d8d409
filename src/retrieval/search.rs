//! Semantic, keyword and hybrid search over one snapshot of an index.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::filters::Filters;
use super::fusion::{fuse, overfetch, semantic_similarity};
use super::preprocessing::QueryPreprocessing;
use crate::embedding::Embedder;
use crate::engine::EngineError;
use crate::index::{ChunkRow, Index, Snapshot};
use crate::model::ValidationError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SearchMethod {
    #[default]
    Semantic,
    Keyword,
    Hybrid,
}

/// What a result's `relevance_score` means (contract 000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelevanceKind {
    /// Cosine similarity of query and chunk, clamped to [0, 1].
    Similarity,
    /// The BM25 score the keyword branch ranked by.
    KeywordScore,
    /// `alpha * semantic + (1 - alpha) * min-max keyword`.
    HybridScore,
}

/// An engine-level search request, after any contract adapter has validated its wire form.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    pub query: String,
    pub top_k: usize,
    pub filters: Filters,
    pub method: SearchMethod,
    pub preprocessing: QueryPreprocessing,
    /// Weight of the semantic branch; used only by hybrid search.
    pub hybrid_alpha: f64,
    /// Answer from this version instead of the latest.
    pub index_version: Option<u64>,
}

impl SearchRequest {
    pub fn new(query: impl Into<String>, method: SearchMethod, top_k: usize) -> Self {
        SearchRequest {
            query: query.into(),
            top_k,
            filters: Filters::default(),
            method,
            preprocessing: QueryPreprocessing::None,
            hybrid_alpha: 0.5,
            index_version: None,
        }
    }
}

/// One ranked chunk with its score and the branch scores that produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub row: ChunkRow,
    pub score: f64,
    pub kind: RelevanceKind,
    /// Normalised branch scores used in fusion (hybrid only).
    pub semantic_score: Option<f64>,
    pub keyword_score: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    pub index_version: u64,
    /// The query after preprocessing, as searched.
    pub query: String,
    pub hits: Vec<SearchHit>,
}

/// Searches `index` at the requested version. Ordering is deterministic: score descending,
/// then `document_id`, `chunk_index` and `chunk_id` ascending.
pub async fn search(
    index: &Index,
    embedder: &Arc<dyn Embedder>,
    request: &SearchRequest,
) -> Result<SearchResult, EngineError> {
    let query = request.preprocessing.apply(&request.query);
    if query.trim().is_empty() {
        return Err(ValidationError::new("query", "is empty after query_preprocessing").into());
    }
    let snapshot = index.snapshot(request.index_version).await?;
    let filter_sql = request.filters.to_sql();
    let k = request.top_k;
    let mut hits = match request.method {
        SearchMethod::Semantic => {
            index.check_embedder_at(snapshot.version, embedder.id(), embedder.dimensions())?;
            let q = embed_query(embedder, &query).await?;
            semantic_branch(index, &snapshot, &q, k, filter_sql.as_deref())
                .await?
                .into_iter()
                .map(|(row, sim)| SearchHit {
                    row,
                    score: sim,
                    kind: RelevanceKind::Similarity,
                    semantic_score: None,
                    keyword_score: None,
                })
                .collect()
        }
        SearchMethod::Keyword => {
            let ranked = index
                .keyword()
                .search(&snapshot.searcher, &query, &request.filters, k)?;
            let ids: Vec<String> = ranked.iter().map(|(id, _)| id.clone()).collect();
            let mut rows = rows_by_id(index, &snapshot, &ids, false).await?;
            ranked
                .into_iter()
                .filter_map(|(id, bm25)| {
                    rows.remove(&id).map(|row| SearchHit {
                        row,
                        score: f64::from(bm25),
                        kind: RelevanceKind::KeywordScore,
                        semantic_score: None,
                        keyword_score: None,
                    })
                })
                .collect()
        }
        SearchMethod::Hybrid => {
            index.check_embedder_at(snapshot.version, embedder.id(), embedder.dimensions())?;
            hybrid(
                index,
                embedder,
                &snapshot,
                &query,
                request,
                filter_sql.as_deref(),
            )
            .await?
        }
    };
    sort_hits(&mut hits);
    hits.truncate(k);
    Ok(SearchResult {
        index_version: snapshot.version,
        query,
        hits,
    })
}

async fn hybrid(
    index: &Index,
    embedder: &Arc<dyn Embedder>,
    snapshot: &Snapshot,
    query: &str,
    request: &SearchRequest,
    filter_sql: Option<&str>,
) -> Result<Vec<SearchHit>, EngineError> {
    let fetch = overfetch(request.top_k);
    let q = embed_query(embedder, query).await?;
    let semantic = semantic_branch(index, snapshot, &q, fetch, filter_sql).await?;
    let keyword = index
        .keyword()
        .search(&snapshot.searcher, query, &request.filters, fetch)?;
    let mut rows: HashMap<String, ChunkRow> = HashMap::new();
    let mut similarity: HashMap<String, f64> = HashMap::new();
    for (row, sim) in semantic {
        similarity.insert(row.chunk_id.clone(), sim);
        rows.insert(row.chunk_id.clone(), row);
    }
    // Keyword-only candidates get their exact similarity from the stored vector.
    let missing: Vec<String> = keyword
        .iter()
        .map(|(id, _)| id.clone())
        .filter(|id| !rows.contains_key(id))
        .collect();
    for (id, mut row) in rows_by_id(index, snapshot, &missing, true).await? {
        let v = row.vector.take().unwrap_or_default();
        similarity.insert(id.clone(), semantic_similarity(dot(&q, &v)));
        rows.insert(id, row);
    }
    let keyword: Vec<(String, f64)> = keyword
        .into_iter()
        .filter(|(id, _)| rows.contains_key(id))
        .map(|(id, s)| (id, f64::from(s)))
        .collect();
    Ok(fuse(&similarity, &keyword, request.hybrid_alpha)
        .into_iter()
        .filter_map(|f| {
            rows.remove(&f.key).map(|row| SearchHit {
                row,
                score: f.score,
                kind: RelevanceKind::HybridScore,
                semantic_score: Some(f.semantic),
                keyword_score: Some(f.keyword),
            })
        })
        .collect())
}

/// Embeds the query on the blocking pool: a model pass or a provider round trip must not
/// hold up the async worker (an HTTP or bus worker) that received the query.
async fn embed_query(embedder: &Arc<dyn Embedder>, query: &str) -> Result<Vec<f32>, EngineError> {
    let (embedder, query) = (embedder.clone(), query.to_string());
    tokio::task::spawn_blocking(move || embedder.embed(&[query.as_str()]))
        .await
        .map_err(|e| EngineError::Internal(format!("query embedding task failed: {e}")))??
        .pop()
        .ok_or_else(|| EngineError::Internal("embedder returned no vector".into()))
}

/// Top `k` chunks by cosine similarity; similarity is recomputed from the stored vectors so
/// that both branches of a hybrid query use exactly the same arithmetic.
async fn semantic_branch(
    index: &Index,
    snapshot: &Snapshot,
    query: &[f32],
    k: usize,
    filter_sql: Option<&str>,
) -> Result<Vec<(ChunkRow, f64)>, EngineError> {
    let found = index
        .lance()
        .nearest(&snapshot.dataset, query, k, filter_sql)
        .await?;
    Ok(found
        .into_iter()
        .map(|(mut row, _distance)| {
            let v = row.vector.take().unwrap_or_default();
            (row, semantic_similarity(dot(query, &v)))
        })
        .collect())
}

async fn rows_by_id(
    index: &Index,
    snapshot: &Snapshot,
    ids: &[String],
    with_vector: bool,
) -> Result<HashMap<String, ChunkRow>, EngineError> {
    Ok(index
        .lance()
        .rows(&snapshot.dataset, ids, with_vector)
        .await?
        .into_iter()
        .map(|r| (r.chunk_id.clone(), r))
        .collect())
}

/// Dot product of unit vectors (cosine), accumulated in f64 in a fixed order.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum::<f64>() as f32
}

/// Score descending; ties by document id, chunk index, then chunk id (all ascending).
pub fn sort_hits(hits: &mut [SearchHit]) {
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.row.document_id.cmp(&b.row.document_id))
            .then_with(|| a.row.chunk_index.cmp(&b.row.chunk_index))
            .then_with(|| a.row.chunk_id.cmp(&b.row.chunk_id))
    });
}
