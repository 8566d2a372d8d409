//! Semantic, keyword and hybrid search over one snapshot of an index.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tracing::Instrument;

use super::filters::{Filters, Visibility};
use super::fusion::{fuse, overfetch, semantic_similarity, BranchFusion};
use super::fusion_input::{FusionCandidate, FusionInput};
use super::hydration::{hydrate, sort_ranked, Ranked};
use super::preprocessing::QueryPreprocessing;
use super::rerank::Reranker;
use super::RetrievalError;
use crate::embedding::Embedder;
use crate::index::rows::CandidateRow;
use crate::index::{ChunkRow, Index, Snapshot};
use crate::model::ValidationError;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[schemars(description = "semantic: vector similarity; keyword: BM25; hybrid: both, fused.")]
pub enum SearchMethod {
    #[default]
    Semantic,
    Keyword,
    Hybrid,
}

impl SearchMethod {
    pub fn name(self) -> &'static str {
        match self {
            SearchMethod::Semantic => "semantic",
            SearchMethod::Keyword => "keyword",
            SearchMethod::Hybrid => "hybrid",
        }
    }
}

/// What a result's `relevance_score` means (contract 000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(
    description = "similarity: cosine similarity clamped to [0, 1]; keyword_score: the BM25 \
                   score ranked by; hybrid_score: alpha·semantic + (1 − alpha)·min-max keyword."
)]
pub enum RelevanceKind {
    // Cosine similarity of query and chunk, clamped to [0, 1].
    Similarity,
    // The BM25 score the keyword branch ranked by.
    KeywordScore,
    // `alpha * semantic + (1 - alpha) * min-max keyword`.
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
    /// How hybrid search scales its branches before the weighted sum (contract 000's way
    /// unless a caller picks another).
    pub fusion: BranchFusion,
    /// Answer from this version instead of the latest.
    pub index_version: Option<u64>,
    /// Candidate pools, for the contracts that set them (003's `vec_limit`, `lex_limit` and
    /// `max_candidates`); see [`Candidates`].
    pub candidates: Candidates,
    /// Hits scoring below this are dropped (003's `min_sim`).
    pub min_score: Option<f64>,
    /// MMR diversification strength in [0, 1]; 0 keeps the plain ranking (003's
    /// `diversify_strength`, applied as λ = 1 − strength).
    pub diversify: f64,
    /// Rerank the fused candidates with the engine's reranker, if one is configured.
    pub rerank: bool,
    /// Extra terms for the keyword branch only (the knowledge graph's entity names and
    /// aliases the query linked to): they widen what BM25 can find without moving the
    /// semantic branch.
    pub keyword_expansion: Vec<String>,
    /// The query's vector, when the caller already embedded the query (graph lookup).
    pub query_vector: Option<Arc<Vec<f32>>>,
    /// Keep what each branch ranked in the answer (`SearchResult::pools`): `explain` reads
    /// the pools the query used instead of searching them again.
    pub keep_pools: bool,
}

/// The largest candidate pool any stage fetches, whatever a request asks for: a pool is
/// memory and time, and a caller's number must not be able to exhaust either.
pub const MAX_POOL: usize = 1000;

/// How many candidates each stage considers. `None` keeps contract 000's rule: each hybrid
/// branch over-fetches `min(max(top_k*3, 10), 50)`, and every fused candidate is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Candidates {
    pub semantic: Option<usize>,
    pub keyword: Option<usize>,
    /// Fused candidates kept before `min_score` and diversification pick `top_k`.
    pub max: Option<usize>,
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
            fusion: BranchFusion::default(),
            index_version: None,
            candidates: Candidates::default(),
            min_score: None,
            diversify: 0.0,
            rerank: false,
            keyword_expansion: Vec::new(),
            query_vector: None,
            keep_pools: false,
        }
    }

    /// The candidate pool each branch of this request's method fetches (none for a branch
    /// that does not run). Hybrid keeps contract 000's over-fetch unless the request sets a
    /// pool; a single branch fetches `top_k`, or the larger pool the request asks for (the
    /// cut-offs then pick `top_k` from it). Never more than [`MAX_POOL`].
    pub fn pools(&self) -> (Option<usize>, Option<usize>) {
        let own = |limit: Option<usize>| limit.unwrap_or(self.top_k).max(self.top_k).min(MAX_POOL);
        let fetch = overfetch(self.top_k);
        let fused = |limit: Option<usize>| limit.unwrap_or(fetch).min(MAX_POOL);
        match self.method {
            SearchMethod::Semantic => (Some(own(self.candidates.semantic)), None),
            SearchMethod::Keyword => (None, Some(own(self.candidates.keyword))),
            SearchMethod::Hybrid => (
                Some(fused(self.candidates.semantic)),
                Some(fused(self.candidates.keyword)),
            ),
        }
    }

    /// What the keyword branch searches for `query` (the query after preprocessing): the
    /// query and the graph's expansion terms.
    pub fn keyword_query(&self, query: &str) -> String {
        if self.keyword_expansion.is_empty() {
            query.to_string()
        } else {
            format!("{query} {}", self.keyword_expansion.join(" "))
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
    /// The reranker's score, when a reranker ordered this hit (it is then `score` too).
    pub rerank_score: Option<f64>,
    /// Which branch's candidate list held this chunk.
    pub found_by: FoundBy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundBy {
    Semantic,
    Keyword,
    Both,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    pub index_version: u64,
    /// The query after preprocessing, as searched.
    pub query: String,
    pub hits: Vec<SearchHit>,
    /// Candidates each branch returned before fusion (0 for a branch that did not run).
    pub semantic_candidates: usize,
    pub keyword_candidates: usize,
    /// True only when the reranker ran and its scores ordered the hits.
    pub reranker_applied: bool,
    /// Query terms the keyword branch left out as too common: only when
    /// `index.keyword.max_query_terms` is set (an approximation; by default every term is
    /// searched).
    pub keyword_terms_dropped: Vec<String>,
    /// With `keep_pools`, when the reranker ran: every candidate it scored, in its order
    /// (what `explain` shows of its effect on one chunk).
    pub reranked: Vec<Reranked>,
    /// With `keep_pools`: what each branch ranked, and the fused scores.
    pub pools: BranchPools,
    /// How the semantic branch searched, when it ran.
    pub vector_search: Option<VectorSearch>,
}

/// How the semantic branch found its candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VectorSearch {
    /// Every vector was compared with the query's: these are the nearest chunks.
    Exact,
    /// Through the index's vector index, which it has once it holds `index.vector.min_rows`
    /// chunks: fast, and it may miss a near chunk (its recall: BENCHMARKS.md, "Current
    /// figures").
    Approximate,
}

impl VectorSearch {
    /// How the semantic branch searches `snapshot` of `index`.
    async fn of(index: &Index, snapshot: &Snapshot) -> Result<VectorSearch, RetrievalError> {
        Ok(
            if index
                .lance()
                .nearest_is_approximate(&snapshot.dataset)
                .await?
            {
                VectorSearch::Approximate
            } else {
                VectorSearch::Exact
            },
        )
    }
}

/// What each branch ranked for a query, best first (chunk id and similarity, or BM25), and
/// the fused scores of the candidates (hybrid).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchPools {
    pub semantic: Vec<(String, f64)>,
    pub keyword: Vec<(String, f64)>,
    pub fused: HashMap<String, f64>,
    /// What the fusion read (hybrid): enough to rank the candidates at another weight or
    /// with another fusion without searching again.
    pub fusion_input: FusionInput,
}

/// A candidate the reranker scored: its rank in the fused order it was given, and its score.
#[derive(Debug, Clone, PartialEq)]
pub struct Reranked {
    pub chunk_id: String,
    pub fused_rank: usize,
    pub score: f64,
}

/// Searches `index` at the requested version. Ordering is deterministic: score descending,
/// then `document_id`, `chunk_index` and `chunk_id` ascending.
pub async fn search(
    index: &Index,
    embedder: &Arc<dyn Embedder>,
    reranker: Option<&Arc<dyn Reranker>>,
    request: &SearchRequest,
) -> Result<SearchResult, RetrievalError> {
    let analysis = tracing::info_span!("analysis");
    let query = analysis.in_scope(|| request.preprocessing.apply(&request.query));
    if query.trim().is_empty() {
        return Err(ValidationError::new("query", "is empty after query_preprocessing").into());
    }
    let snapshot = index
        .reader()
        .snapshot(request.index_version)
        .instrument(analysis)
        .await?;
    let keyword_query = request.keyword_query(&query);
    let embed = |q: &str| {
        let given = request.query_vector.clone();
        let q = q.to_string();
        async move {
            match given {
                Some(v) => Ok(v.as_ref().clone()),
                None => embed_query(embedder, &q).await,
            }
        }
    };
    let filters = effective_filters(index, &snapshot, &request.filters)?;
    let (semantic_pool, keyword_pool) = request.pools();
    let mut counts = (0, 0);
    let mut keyword_terms_dropped = Vec::new();
    let mut pools = BranchPools::default();
    let vector_search = match request.method {
        SearchMethod::Keyword => None,
        SearchMethod::Semantic | SearchMethod::Hybrid => {
            Some(VectorSearch::of(index, &snapshot).await?)
        }
    };
    let (mut hits, vectors) = match request.method {
        SearchMethod::Semantic => {
            index.check_embedder_at(snapshot.version, embedder.id(), embedder.dimensions())?;
            let q = embed(&query).await?;
            let found = semantic_branch(
                index,
                &snapshot,
                &q,
                semantic_pool.unwrap_or(request.top_k),
                &filters,
            )
            .await?;
            counts.0 = found.len();
            if request.keep_pools {
                pools.semantic = found
                    .iter()
                    .map(|(c, sim)| (c.chunk_id.clone(), *sim))
                    .collect();
            }
            let ranked = found
                .into_iter()
                .map(|(candidate, sim)| Ranked {
                    candidate,
                    score: sim,
                    kind: RelevanceKind::Similarity,
                    semantic_score: None,
                    keyword_score: None,
                    found_by: FoundBy::Semantic,
                })
                .collect();
            hydrate_kept(index, &snapshot, ranked, request, reranker).await?
        }
        SearchMethod::Keyword => {
            let (ranked, dropped) = keyword_top(
                index,
                &snapshot,
                &keyword_query,
                &filters,
                keyword_pool.unwrap_or(request.top_k),
            )
            .await?;
            counts.1 = ranked.len();
            keyword_terms_dropped = dropped;
            if request.keep_pools {
                pools.keyword = ranked
                    .iter()
                    .map(|(id, bm25)| (id.clone(), f64::from(*bm25)))
                    .collect();
            }
            let ids: Vec<String> = ranked.iter().map(|(id, _)| id.clone()).collect();
            let mut rows = rows_by_id(index, &snapshot, &ids, false).await?;
            let hits = ranked
                .into_iter()
                .filter_map(|(id, bm25)| {
                    rows.remove(&id).map(|row| SearchHit {
                        row,
                        score: f64::from(bm25),
                        kind: RelevanceKind::KeywordScore,
                        semantic_score: None,
                        keyword_score: None,
                        rerank_score: None,
                        found_by: FoundBy::Keyword,
                    })
                })
                .collect();
            (hits, HashMap::new())
        }
        SearchMethod::Hybrid => {
            index.check_embedder_at(snapshot.version, embedder.id(), embedder.dimensions())?;
            let q = embed(&query).await?;
            let run = hybrid(index, &q, &snapshot, &keyword_query, request, &filters).await?;
            counts = run.counts;
            keyword_terms_dropped = run.dropped;
            let ranked = run.ranked;
            pools = run.pools;
            hydrate_kept(index, &snapshot, ranked, request, reranker).await?
        }
    };
    tracing::info_span!("fusion").in_scope(|| sort_hits(&mut hits));
    if let Some(max) = request.candidates.max {
        hits.truncate(max.max(request.top_k));
    }
    let mut reranker_applied = false;
    let mut reranked = Vec::new();
    if let (true, Some(r)) = (request.rerank, reranker) {
        // Only `explain` reads where the reranker put each candidate.
        let fused_order: HashMap<String, usize> = if request.keep_pools {
            hits.iter()
                .enumerate()
                .map(|(i, h)| (h.row.chunk_id.clone(), i + 1))
                .collect()
        } else {
            HashMap::new()
        };
        reranker_applied = rerank(r, &query, &mut hits)
            .instrument(tracing::info_span!("rerank", reranker = r.id()))
            .await;
        if reranker_applied && request.keep_pools {
            reranked = hits
                .iter()
                .map(|h| Reranked {
                    chunk_id: h.row.chunk_id.clone(),
                    fused_rank: fused_order[&h.row.chunk_id],
                    score: h.score,
                })
                .collect();
        }
    }
    if let Some(min) = request.min_score {
        hits.retain(|h| h.score >= min);
    }
    if request.diversify > 0.0 && hits.len() > request.top_k {
        hits = diversify(
            index,
            &snapshot,
            hits,
            vectors,
            request.top_k,
            request.diversify,
        )
        .instrument(tracing::info_span!("diversify"))
        .await?;
    }
    hits.truncate(request.top_k);
    Ok(SearchResult {
        index_version: snapshot.version,
        query,
        hits,
        semantic_candidates: counts.0,
        keyword_candidates: counts.1,
        reranker_applied,
        keyword_terms_dropped,
        reranked,
        pools,
        vector_search,
    })
}

/// The filters a search applies for `filters` on `snapshot`. "Not deleted" selects every row
/// of a version without soft-deleted rows: leaving the filter out spares the vector search a
/// pre-filter pass over every row, and keeps the keyword query a bare disjunction (which
/// MaxScore answers, skipping what cannot rank).
pub(super) fn effective_filters(
    index: &Index,
    snapshot: &Snapshot,
    filters: &Filters,
) -> Result<Filters, RetrievalError> {
    Ok(
        if filters.visibility == Visibility::Active
            && !index.keyword().may_hold_deleted(&snapshot.searcher)?
        {
            Filters {
                visibility: Visibility::All,
                ..filters.clone()
            }
        } else {
            filters.clone()
        },
    )
}

/// Reads the rows of the ranked candidates the response can still return: the best `top_k`
/// when nothing after the ranking reorders them, every kept candidate when the reranker or
/// diversification will choose among them. Diversification also gets their vectors, which
/// ranking already has (by chunk id).
async fn hydrate_kept(
    index: &Index,
    snapshot: &Snapshot,
    mut ranked: Vec<Ranked>,
    request: &SearchRequest,
    reranker: Option<&Arc<dyn Reranker>>,
) -> Result<(Vec<SearchHit>, Vectors), RetrievalError> {
    sort_ranked(&mut ranked);
    let diversifies = request.diversify > 0.0;
    let reorders = (request.rerank && reranker.is_some()) || diversifies;
    let kept = match request.candidates.max {
        _ if !reorders => request.top_k,
        Some(max) => max.max(request.top_k),
        None => ranked.len(),
    };
    ranked.truncate(kept);
    let vectors = if diversifies {
        ranked
            .iter_mut()
            .map(|r| {
                let vector = std::mem::take(&mut r.candidate.vector);
                (r.candidate.chunk_id.clone(), vector)
            })
            .collect()
    } else {
        Vectors::new()
    };
    Ok((hydrate(index, snapshot, ranked).await?, vectors))
}

/// Unit vectors by chunk id.
type Vectors = HashMap<String, Vec<f32>>;

/// Reorders the best `reranker.candidates()` hits by the reranker's scores, which become
/// their scores; the rest are dropped, being on another scale. A reranker failure leaves
/// the hits as they were (logged; the query still answers) and returns false.
async fn rerank(reranker: &Arc<dyn Reranker>, query: &str, hits: &mut Vec<SearchHit>) -> bool {
    if hits.is_empty() {
        return false;
    }
    hits.truncate(reranker.candidates().max(1));
    let texts: Vec<String> = hits.iter().map(|h| h.row.search_text()).collect();
    let (r, q) = (reranker.clone(), query.to_string());
    let scores = tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        r.rerank(&q, &refs)
    })
    .await;
    match scores {
        Ok(Ok(scores)) if scores.len() == hits.len() => {
            for (h, s) in hits.iter_mut().zip(scores) {
                h.rerank_score = Some(s);
                h.score = s;
            }
            sort_hits(hits);
            true
        }
        Ok(Ok(scores)) => {
            tracing::warn!(
                reranker = reranker.id(),
                got = scores.len(),
                want = hits.len(),
                "reranker returned the wrong number of scores; ranking kept"
            );
            false
        }
        Ok(Err(e)) => {
            tracing::warn!(reranker = reranker.id(), error = %e, "reranker failed; ranking kept");
            false
        }
        Err(e) => {
            tracing::warn!(error = %e, "reranker task failed; ranking kept");
            false
        }
    }
}

/// Maximal marginal relevance: picks `k` hits one at a time, each maximising
/// `λ·score − (1−λ)·max cosine to the hits already picked`, with λ = 1 − `strength`. The
/// picked hits are returned by score (MMR decides which, the score decides the order).
/// `vectors` holds those ranking already had (semantic and hybrid hits); the others' are
/// read.
async fn diversify(
    index: &Index,
    snapshot: &Snapshot,
    hits: Vec<SearchHit>,
    mut vectors: Vectors,
    k: usize,
    strength: f64,
) -> Result<Vec<SearchHit>, RetrievalError> {
    let missing: Vec<String> = hits
        .iter()
        .map(|h| h.row.chunk_id.clone())
        .filter(|id| !vectors.contains_key(id))
        .collect();
    if !missing.is_empty() {
        vectors.extend(
            rows_by_id(index, snapshot, &missing, true)
                .await?
                .into_iter()
                .map(|(id, mut row)| (id, row.vector.take().unwrap_or_default())),
        );
    }
    let lambda = 1.0 - strength.clamp(0.0, 1.0);
    let picked = mmr(
        &hits
            .iter()
            .map(|h| (h.score, vectors.remove(&h.row.chunk_id).unwrap_or_default()))
            .collect::<Vec<_>>(),
        k,
        lambda,
    );
    let mut slots: Vec<Option<SearchHit>> = hits.into_iter().map(Some).collect();
    let mut out: Vec<SearchHit> = picked.into_iter().filter_map(|i| slots[i].take()).collect();
    sort_hits(&mut out);
    Ok(out)
}

/// MMR over `(relevance, unit vector)` candidates; returns the picked indexes in pick order.
pub fn mmr(candidates: &[(f64, Vec<f32>)], k: usize, lambda: f64) -> Vec<usize> {
    let mut picked: Vec<usize> = Vec::with_capacity(k.min(candidates.len()));
    let mut redundancy = vec![f64::NEG_INFINITY; candidates.len()];
    while picked.len() < k.min(candidates.len()) {
        let best = (0..candidates.len())
            .filter(|i| !picked.contains(i))
            .map(|i| {
                let penalty = if picked.is_empty() {
                    0.0
                } else {
                    redundancy[i]
                };
                (i, lambda * candidates[i].0 - (1.0 - lambda) * penalty)
            })
            // Highest value; ties go to the earlier (better-ranked) candidate.
            .fold(None, |best: Option<(usize, f64)>, (i, v)| match best {
                Some((_, bv)) if bv >= v => best,
                _ => Some((i, v)),
            });
        let Some((chosen, _)) = best else { break };
        picked.push(chosen);
        for (i, (_, v)) in candidates.iter().enumerate() {
            let sim = f64::from(dot(v, &candidates[chosen].1));
            redundancy[i] = redundancy[i].max(sim);
        }
    }
    picked
}

/// The hybrid branches for the query vector `q` and the keyword query `query`, fused into
/// ranked candidates (rows not read yet).
async fn hybrid(
    index: &Index,
    q: &[f32],
    snapshot: &Snapshot,
    query: &str,
    request: &SearchRequest,
    filters: &Filters,
) -> Result<HybridRun, RetrievalError> {
    let (semantic_pool, keyword_pool) = request.pools();
    // The two branches run side by side: tantivy on the blocking pool, then its candidates'
    // rows found (by the resident vectors' ids where they hold the version) and their
    // vectors read from Lance, while the vector search runs.
    let keyword_branch = async {
        let (keyword, dropped) = keyword_top(
            index,
            snapshot,
            query,
            filters,
            keyword_pool.unwrap_or(request.top_k),
        )
        .await?;
        let ids: Vec<String> = keyword.iter().map(|(id, _)| id.clone()).collect();
        let candidates = index
            .lance()
            .candidates(&snapshot.dataset, &ids)
            .instrument(tracing::info_span!("keyword_candidates", rows = ids.len()))
            .await?;
        Ok::<_, RetrievalError>((keyword, candidates, dropped))
    };
    let (semantic, (keyword, keyword_candidates, dropped)) = futures::try_join!(
        semantic_branch(
            index,
            snapshot,
            q,
            semantic_pool.unwrap_or(request.top_k),
            filters,
        ),
        keyword_branch,
    )?;
    let counts = (semantic.len(), keyword.len());
    let mut pools = BranchPools::default();
    if request.keep_pools {
        pools.semantic = semantic
            .iter()
            .map(|(c, sim)| (c.chunk_id.clone(), *sim))
            .collect();
        pools.keyword = keyword
            .iter()
            .map(|(id, bm25)| (id.clone(), f64::from(*bm25)))
            .collect();
    }
    let mut candidates: HashMap<String, CandidateRow> = HashMap::new();
    let mut similarity: HashMap<String, f64> = HashMap::new();
    let from_semantic: std::collections::HashSet<String> =
        semantic.iter().map(|(c, _)| c.chunk_id.clone()).collect();
    let from_keyword: std::collections::HashSet<String> =
        keyword.iter().map(|(id, _)| id.clone()).collect();
    for (c, sim) in semantic {
        similarity.insert(c.chunk_id.clone(), sim);
        candidates.insert(c.chunk_id.clone(), c);
    }
    // Keyword-only candidates get their exact similarity from the stored vector.
    for c in keyword_candidates {
        similarity
            .entry(c.chunk_id.clone())
            .or_insert_with(|| semantic_similarity(dot(q, &c.vector)));
        candidates.entry(c.chunk_id.clone()).or_insert(c);
    }
    let keyword: Vec<(String, f64)> = keyword
        .into_iter()
        .filter(|(id, _)| candidates.contains_key(id))
        .map(|(id, s)| (id, f64::from(s)))
        .collect();
    let fused = tracing::info_span!("fusion")
        .in_scope(|| fuse(&similarity, &keyword, request.hybrid_alpha, request.fusion));
    if request.keep_pools {
        pools.fused = fused.iter().map(|f| (f.key.clone(), f.score)).collect();
        pools.fusion_input = FusionInput {
            candidates: candidates
                .values()
                .map(|c| FusionCandidate {
                    chunk_id: c.chunk_id.clone(),
                    document_id: c.document_id.clone(),
                    chunk_index: c.chunk_index,
                    similarity: similarity[&c.chunk_id],
                })
                .collect(),
            keyword: keyword.clone(),
        };
    }
    let ranked = fused
        .into_iter()
        .filter_map(|f| {
            candidates.remove(&f.key).map(|candidate| Ranked {
                candidate,
                score: f.score,
                kind: RelevanceKind::HybridScore,
                semantic_score: Some(f.semantic),
                keyword_score: Some(f.keyword),
                found_by: match (
                    from_semantic.contains(&f.key),
                    from_keyword.contains(&f.key),
                ) {
                    (true, true) => FoundBy::Both,
                    (false, true) => FoundBy::Keyword,
                    _ => FoundBy::Semantic,
                },
            })
        })
        .collect();
    Ok(HybridRun {
        ranked,
        counts,
        pools,
        dropped,
    })
}

/// The hybrid branches' fused ranking, how many candidates each branch found, what each
/// ranked (with `keep_pools`), and the query terms the keyword branch left out.
struct HybridRun {
    ranked: Vec<Ranked>,
    counts: (usize, usize),
    pools: BranchPools,
    dropped: Vec<String>,
}

/// `request` with its query vector set, embedded once here unless the caller gave one or the
/// method needs none: explain and diff search one request several times, and an embedder
/// (an HTTP provider) need not return the same vector twice.
pub(crate) async fn with_query_vector(
    embedder: &Arc<dyn Embedder>,
    request: &SearchRequest,
) -> Result<SearchRequest, RetrievalError> {
    let mut request = request.clone();
    if request.method != SearchMethod::Keyword && request.query_vector.is_none() {
        let query = request.preprocessing.apply(&request.query);
        if !query.trim().is_empty() {
            request.query_vector = Some(Arc::new(embed_query(embedder, &query).await?));
        }
    }
    Ok(request)
}

/// Embeds the query on the blocking pool: a model pass or a provider round trip must not
/// hold up the async worker (an HTTP or bus worker) that received the query.
pub(crate) async fn embed_query(
    embedder: &Arc<dyn Embedder>,
    query: &str,
) -> Result<Vec<f32>, RetrievalError> {
    let (embedder, query) = (embedder.clone(), query.to_string());
    let span = tracing::info_span!("embed_query", embedder = embedder.id());
    tokio::task::spawn_blocking(move || embedder.embed(&[query.as_str()]))
        .instrument(span)
        .await
        .map_err(|e| RetrievalError::Internal(format!("query embedding task failed: {e}")))??
        .pop()
        .ok_or_else(|| RetrievalError::Internal("embedder returned no vector".into()))
}

/// Top `k` candidates by cosine similarity; similarity is recomputed from the stored
/// vectors so that both branches of a hybrid query use exactly the same arithmetic.
pub(super) async fn semantic_branch(
    index: &Index,
    snapshot: &Snapshot,
    query: &[f32],
    k: usize,
    filters: &Filters,
) -> Result<Vec<(CandidateRow, f64)>, RetrievalError> {
    let found = index
        .lance()
        .nearest(&snapshot.dataset, query, k, filters)
        .instrument(tracing::info_span!("semantic", k))
        .await?;
    Ok(found
        .into_iter()
        .map(|c| {
            let sim = semantic_similarity(dot(query, &c.vector));
            (c, sim)
        })
        .collect())
}

/// BM25 top `limit` chunk ids, searched on the blocking pool: a search over a large index
/// is CPU work that must neither hold up the async worker nor wait for the vector search.
pub(super) async fn keyword_top(
    index: &Index,
    snapshot: &Snapshot,
    query: &str,
    filters: &Filters,
    limit: usize,
) -> Result<(Vec<(String, f32)>, Vec<String>), RetrievalError> {
    let Some(prepared) = index
        .keyword()
        .prepare(&snapshot.searcher, query, filters)?
    else {
        return Ok((Vec::new(), Vec::new()));
    };
    let dropped = prepared.dropped_terms().to_vec();
    // Terms left out as too common (`index.keyword.max_query_terms`) are on the trace, for
    // whoever asks why a passage that holds only those terms was not found.
    let span = tracing::info_span!("keyword", limit, terms_dropped = tracing::field::Empty);
    if !prepared.dropped_terms().is_empty() {
        span.record("terms_dropped", prepared.dropped_terms().join(" "));
    }
    // The span ends on the blocking thread, and its subscriber closes the parent's reference
    // through that thread's default dispatcher: the caller's must be the default there until
    // the span is dropped (a thread-local one, as `ragstream-bench telemetry` installs, is not
    // otherwise).
    let dispatch = tracing::dispatcher::get_default(tracing::Dispatch::clone);
    let ranked = tokio::task::spawn_blocking(move || {
        tracing::dispatcher::with_default(&dispatch, move || span.in_scope(|| prepared.top(limit)))
    })
    .await
    .map_err(|e| RetrievalError::Internal(format!("keyword search task failed: {e}")))??;
    Ok((ranked, dropped))
}

async fn rows_by_id(
    index: &Index,
    snapshot: &Snapshot,
    ids: &[String],
    with_vector: bool,
) -> Result<HashMap<String, ChunkRow>, RetrievalError> {
    Ok(index
        .lance()
        .rows(&snapshot.dataset, ids, with_vector)
        .instrument(tracing::info_span!("hydration", rows = ids.len()))
        .await?
        .into_iter()
        .map(|r| (r.chunk_id.clone(), r))
        .collect())
}

pub(crate) use crate::store::similarity::dot;

/// Score descending; ties by document id, chunk index, then chunk id (all ascending).
pub fn sort_hits(hits: &mut [SearchHit]) {
    hits.sort_by(|a, b| {
        rank_order(
            (
                a.score,
                &a.row.document_id,
                a.row.chunk_index,
                &a.row.chunk_id,
            ),
            (
                b.score,
                &b.row.document_id,
                b.row.chunk_index,
                &b.row.chunk_id,
            ),
        )
    });
}

/// The ranking order of `(score, document id, chunk index, chunk id)`: score descending,
/// the rest ascending, so that equal scores still order the same way every time.
pub(crate) fn rank_order(
    a: (f64, &str, u32, &str),
    b: (f64, &str, u32, &str),
) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0)
        .then_with(|| a.1.cmp(b.1))
        .then_with(|| a.2.cmp(&b.2))
        .then_with(|| a.3.cmp(b.3))
}

#[cfg(test)]
mod tests {
    use super::mmr;

    #[test]
    fn mmr_without_diversity_is_the_ranking_and_with_it_skips_near_duplicates() {
        let a = vec![1.0, 0.0];
        let a2 = vec![0.999, 0.0447];
        let b = vec![0.0, 1.0];
        let candidates = vec![(0.9, a), (0.85, a2), (0.5, b)];
        assert_eq!(
            mmr(&candidates, 2, 1.0),
            vec![0, 1],
            "λ = 1: relevance only"
        );
        assert_eq!(
            mmr(&candidates, 2, 0.5),
            vec![0, 2],
            "the near-duplicate of the first pick loses to a different chunk"
        );
        assert_eq!(
            mmr(&candidates, 5, 0.5).len(),
            3,
            "never more than there are"
        );
    }
}
