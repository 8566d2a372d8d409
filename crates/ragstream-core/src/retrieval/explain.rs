//! Why a passage was — or was not — retrieved. An explanation runs the query as
//! [`search`] does, then, for each target (a document, a chunk, or a snippet of text), finds
//! its chunks in the version searched and follows them through every stage: whether the
//! chunk exists there, whether a filter or its deletion excluded it, its rank and score in
//! each branch against that branch's candidate pool, its fused score against the last result
//! returned, and one sentence that says what decided.
//!
//! The query keeps what each branch ranked in its pool, so the explanation fuses exactly
//! what the search fused; each branch also runs once more, [`WIDE_POOL`] deep, to tell how far
//! outside the pool a chunk ranked. Pinned versions explain identically forever, like
//! queries.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::filters::{sql_string, FilterTarget, Filters, Visibility};
use super::fusion::semantic_similarity;
use super::fusion_input::FusionInput;
use super::rerank::Reranker;
use super::search::{
    effective_filters, embed_query, keyword_top, search, semantic_branch, with_query_vector,
    BranchPools, VectorSearch,
};
use super::{RetrievalError, SearchMethod, SearchRequest};
use crate::embedding::Embedder;
use crate::index::{ChunkRow, Index, Snapshot};
use crate::model::ValidationError;
use crate::store::similarity::dot;

/// The most targets one explanation takes: each costs reads of its rows.
pub const MAX_TARGETS: usize = 20;

/// Chunks a snippet target is looked for among (the best keyword matches of the snippet).
const SNIPPET_CANDIDATES: usize = 100;

pub use super::explanation::{
    BranchPosition, ChunkExplanation, Explanation, FilterMiss, Pools, Presence, RerankPosition,
    Returned, Target, TargetExplanation, TermScore,
};

/// How deep each branch is searched a second time, to place a chunk that fell outside its
/// pool (the pool itself when larger): deeper costs more, and pools are at most 50 by
/// default, so a chunk past this rank is far outside any (BENCHMARKS.md, "What an
/// explanation costs").
pub const WIDE_POOL: usize = 200;

/// A branch's ranking: chunk ids and scores, best first.
type Ranking = Vec<(String, f64)>;

/// Explains `request` on `index` for `targets`.
pub async fn explain(
    index: &Index,
    embedder: &Arc<dyn Embedder>,
    reranker: Option<&Arc<dyn Reranker>>,
    request: &SearchRequest,
    targets: &[Target],
    reveal_deleted: bool,
) -> Result<Explanation, RetrievalError> {
    if targets.is_empty() || targets.len() > MAX_TARGETS {
        return Err(ValidationError::new(
            "targets",
            format!("must hold 1 to {MAX_TARGETS} targets"),
        )
        .into());
    }
    // One version for everything below, held from the start (retention cannot prune it
    // meanwhile), and one query vector.
    let snapshot = index.reader().snapshot(request.index_version).await?;
    let mut pinned = with_query_vector(embedder, request).await?;
    pinned.index_version = Some(snapshot.version);
    // The query, each branch's deeper ranking and the targets' rows are independent reads of
    // one snapshot: they run at once (BENCHMARKS.md, "What an explanation costs").
    pinned.keep_pools = true;
    let query = pinned.preprocessing.apply(&pinned.query);
    let rows = futures::future::try_join_all(
        targets
            .iter()
            .map(|t| target_rows(index, &snapshot, t, reveal_deleted)),
    );
    let (mut answer, branches, rows) = futures::try_join!(
        search(index, embedder, reranker, &pinned),
        Branches::run(index, embedder, &snapshot, &pinned, &query),
        rows,
    )?;
    let branches = branches.with_pools(std::mem::take(&mut answer.pools), &pinned);
    let returned: Vec<Returned> = answer
        .hits
        .iter()
        .enumerate()
        .map(|(i, h)| Returned {
            rank: i + 1,
            chunk_id: h.row.chunk_id.clone(),
            document_id: h.row.document_id.clone(),
            score: h.score,
        })
        .collect();
    let keyword_query = pinned.keyword_query(&answer.query);
    let query_terms = index.keyword().analyze(&keyword_query)?;
    let graph_terms = graph_terms(
        index,
        &answer.query,
        &query_terms,
        &answer.keyword_terms_dropped,
    )?;
    let context = Context {
        index,
        snapshot: &snapshot,
        request: &pinned,
        branches: &branches,
        returned: &returned,
        query_terms,
        graph_terms,
        keyword_query,
        reranker_applied: answer.reranker_applied,
        vector_search: answer.vector_search,
        reranked: &answer.reranked,
        reveal_deleted,
    };
    let explained = futures::future::try_join_all(
        targets
            .iter()
            .zip(rows)
            .map(|(t, rows)| context.target(t, rows)),
    )
    .await?;
    Ok(Explanation {
        index_version: answer.index_version,
        query: answer.query,
        search_method: request.method.name(),
        hybrid_alpha: (request.method == SearchMethod::Hybrid).then_some(request.hybrid_alpha),
        fusion: (request.method == SearchMethod::Hybrid).then_some(request.fusion),
        top_k: request.top_k,
        pools: Pools {
            semantic: branches.semantic_pool,
            keyword: branches.keyword_pool,
        },
        last_returned_score: returned.last().map(|r| r.score),
        results: returned,
        keyword_terms_dropped: answer.keyword_terms_dropped,
        keyword_expansion: pinned.keyword_expansion.clone(),
        vector_search: answer.vector_search,
        targets: explained,
    })
}

/// Ascending weights a tenth apart read as ranges: `0.0–0.2 or 0.8`; `None` for none.
fn weight_ranges(weights: &[f64]) -> Option<String> {
    let mut runs: Vec<(f64, f64)> = Vec::new();
    for &w in weights {
        match runs.last_mut() {
            Some((_, last)) if ((w - *last) * 10.0 - 1.0).abs() < 1e-6 => *last = w,
            _ => runs.push((w, w)),
        }
    }
    (!runs.is_empty()).then(|| {
        runs.iter()
            .map(|&(from, to)| {
                if from == to {
                    format!("{from:.1}")
                } else {
                    format!("{from:.1}–{to:.1}")
                }
            })
            .collect::<Vec<_>>()
            .join(" or ")
    })
}

/// Both branches of the query: the pools the query used, and each branch at the largest.
struct Branches {
    query_vector: Option<Vec<f32>>,
    semantic_pool: Option<usize>,
    keyword_pool: Option<usize>,
    semantic_wide: Ranking,
    keyword_wide: Ranking,
    /// The chunks each branch's real pool held (the semantic one with each similarity).
    semantic_pooled: HashMap<String, f64>,
    keyword_pooled: HashSet<String>,
    /// Fused scores of the candidates (hybrid only), as the search fused them.
    fused: HashMap<String, f64>,
    /// The keyword pool's scores, scaled as fusion scaled them.
    keyword_scaled: HashMap<String, f64>,
    /// What the query's fusion read (hybrid only): ranks the candidates at other weights.
    fusion_input: FusionInput,
}

impl Branches {
    async fn run(
        index: &Index,
        embedder: &Arc<dyn Embedder>,
        snapshot: &Snapshot,
        request: &SearchRequest,
        query: &str,
    ) -> Result<Branches, RetrievalError> {
        let filters = effective_filters(index, snapshot, &request.filters)?;
        let keyword_query = request.keyword_query(query);
        // The pools `search` used for this request.
        let (semantic_pool, keyword_pool) = request.pools();
        let query_vector = match semantic_pool {
            Some(_) => Some(match &request.query_vector {
                Some(v) => v.as_ref().clone(),
                None => embed_query(embedder, query).await?,
            }),
            None => None,
        };
        let semantic = |k: usize| {
            let q = query_vector.clone().unwrap_or_default();
            let filters = filters.clone();
            async move {
                Ok::<_, RetrievalError>(
                    semantic_branch(index, snapshot, &q, k, &filters)
                        .await?
                        .into_iter()
                        .map(|(c, sim)| (c.chunk_id, sim))
                        .collect::<Ranking>(),
                )
            }
        };
        let keyword = |k: usize| {
            let (filters, keyword_query) = (filters.clone(), keyword_query.clone());
            async move {
                Ok::<_, RetrievalError>(
                    keyword_top(index, snapshot, &keyword_query, &filters, k)
                        .await?
                        .0
                        .into_iter()
                        .map(|(id, s)| (id, f64::from(s)))
                        .collect::<Ranking>(),
                )
            }
        };
        let semantic_wide = async {
            match semantic_pool {
                Some(pool) => semantic(pool.max(WIDE_POOL)).await,
                None => Ok(Vec::new()),
            }
        };
        let keyword_wide = async {
            match keyword_pool {
                Some(pool) => keyword(pool.max(WIDE_POOL)).await,
                None => Ok(Vec::new()),
            }
        };
        let (semantic_wide, keyword_wide) = futures::try_join!(semantic_wide, keyword_wide)?;
        Ok(Branches {
            query_vector,
            semantic_pool,
            keyword_pool,
            semantic_wide,
            keyword_wide,
            semantic_pooled: Default::default(),
            keyword_pooled: Default::default(),
            fused: HashMap::new(),
            keyword_scaled: HashMap::new(),
            fusion_input: FusionInput::default(),
        })
    }

    /// Adds what the query's own branches ranked and how it fused them (`search` kept its
    /// pools), so an explanation compares a chunk with exactly what the answer saw.
    fn with_pools(mut self, pools: BranchPools, request: &SearchRequest) -> Branches {
        self.keyword_pooled = pools.keyword.iter().map(|(id, _)| id.clone()).collect();
        self.semantic_pooled = pools.semantic.into_iter().collect();
        // The keyword scores as the query's fusion scaled them: the list the fusion read
        // (hybrid only).
        if request.method == SearchMethod::Hybrid {
            let keyword = &pools.fusion_input.keyword;
            let raw: Vec<f64> = keyword.iter().map(|(_, s)| *s).collect();
            self.keyword_scaled = keyword
                .iter()
                .map(|(id, _)| id.clone())
                .zip(request.fusion.scale_keyword(&raw))
                .collect();
        }
        self.fused = pools.fused;
        self.fusion_input = pools.fusion_input;
        self
    }
}

/// What every target is explained against.
struct Context<'a> {
    index: &'a Index,
    snapshot: &'a Snapshot,
    request: &'a SearchRequest,
    branches: &'a Branches,
    returned: &'a [Returned],
    /// What the keyword branch searched (the query and the graph's expansion terms), and its
    /// analysed terms.
    keyword_query: String,
    query_terms: Vec<String>,
    /// The analysed terms only the graph's expansion added (none without `graph_depth`).
    graph_terms: HashSet<String>,
    /// The reranker ordered the results: their scores are its scores, not fused ones.
    reranker_applied: bool,
    /// The candidates the reranker scored, in its order (empty when it did not run).
    reranked: &'a [crate::retrieval::search::Reranked],
    /// How the query's semantic branch searched, when it ran.
    vector_search: Option<VectorSearch>,
    /// The caller may see deleted chunks (their ids, text and metadata).
    reveal_deleted: bool,
}

impl Context<'_> {
    /// Explains `target`, whose rows in the version explained are `rows`.
    async fn target(
        &self,
        target: &Target,
        rows: Vec<ChunkRow>,
    ) -> Result<TargetExplanation, RetrievalError> {
        if rows.is_empty() {
            let newest = self.index.reader().snapshot(None).await?;
            let later = newest.version != self.snapshot.version
                && !target_rows(self.index, &newest, target, self.reveal_deleted)
                    .await?
                    .is_empty();
            let (presence, verdict) = match (later, target) {
                (true, _) => (
                    Presence::IngestedLater,
                    // The newest version is not named: a pinned explanation must not change
                    // as the index grows.
                    format!(
                        "not in version {}: ingested in a later version",
                        self.snapshot.version
                    ),
                ),
                (false, Target::Text(_)) => (
                    Presence::NotFound,
                    "no chunk holds this text, in this version or the newest".to_string(),
                ),
                (false, _) => (
                    Presence::NotFound,
                    format!(
                        "not in version {} nor in the newest: never ingested, or deleted and purged",
                        self.snapshot.version
                    ),
                ),
            };
            return Ok(TargetExplanation {
                target: target.clone(),
                presence,
                verdict,
                chunks: Vec::new(),
            });
        }
        if !self.reveal_deleted && rows.iter().all(|r| r.deleted_at.is_some()) {
            let at = rows.iter().filter_map(|r| r.deleted_at.clone()).max();
            return Ok(TargetExplanation {
                target: target.clone(),
                presence: Presence::Deleted,
                verdict: format!(
                    "deleted at {}: the query searches live chunks only",
                    at.unwrap_or_default()
                ),
                chunks: Vec::new(),
            });
        }
        let mut chunks = Vec::with_capacity(rows.len());
        for row in rows
            .iter()
            .filter(|r| self.reveal_deleted || r.deleted_at.is_none())
        {
            chunks.push(self.chunk(row).await?);
        }
        chunks.sort_by_key(|c| c.chunk_index);
        let best = chunks
            .iter()
            .min_by(|a, b| chunk_order(a).total_cmp(&chunk_order(b)))
            .expect("at least one chunk");
        let verdict = if chunks.len() == 1 {
            best.verdict.clone()
        } else {
            format!(
                "best of {} chunks, #{}: {}",
                chunks.len(),
                best.chunk_index,
                best.verdict
            )
        };
        Ok(TargetExplanation {
            target: target.clone(),
            presence: Presence::InVersion,
            verdict,
            chunks,
        })
    }

    async fn chunk(&self, row: &ChunkRow) -> Result<ChunkExplanation, RetrievalError> {
        let id = &row.chunk_id;
        let rank = self
            .returned
            .iter()
            .find(|r| &r.chunk_id == id)
            .map(|r| r.rank);
        let deleted = row.deleted_at.is_some();
        let hidden_by_deletion = match self.request.filters.visibility {
            Visibility::Active => deleted,
            Visibility::Deleted => !deleted,
            Visibility::All => false,
        };
        let excluded_by_filter = self.filter_miss(row).await?;
        let b = self.branches;
        let semantic = b.semantic_pool.map(|pool| {
            let rank = position(&b.semantic_wide, id);
            let similarity = b
                .query_vector
                .as_ref()
                .zip(row.vector.as_ref())
                .map(|(q, v)| semantic_similarity(dot(q, v)));
            BranchPosition {
                rank,
                depth: pool.max(WIDE_POOL),
                score: similarity,
                normalized: None,
                in_pool: b.semantic_pooled.contains_key(id),
                pool,
                matched_terms: None,
                term_scores: None,
            }
        });
        let keyword = match b.keyword_pool {
            Some(pool) => {
                let rank = position(&b.keyword_wide, id);
                let term_scores: Vec<TermScore> = self
                    .index
                    .keyword()
                    .term_scores(&self.snapshot.searcher, &self.keyword_query, id)?
                    .into_iter()
                    .map(|(term, score)| TermScore {
                        term,
                        score: f64::from(score),
                    })
                    .collect();
                // The branch's own score when it ranked the chunk; past its depth, the sum of
                // the terms' parts (the same BM25), unless the branch could never return it.
                let score = match rank {
                    Some(r) => Some(b.keyword_wide[r - 1].1),
                    None if !term_scores.is_empty()
                        && excluded_by_filter.is_none()
                        && !hidden_by_deletion =>
                    {
                        Some(term_scores.iter().map(|t| t.score).sum())
                    }
                    None => None,
                };
                Some(BranchPosition {
                    rank,
                    depth: pool.max(WIDE_POOL),
                    score,
                    normalized: b.keyword_scaled.get(id).copied(),
                    in_pool: b.keyword_pooled.contains(id),
                    pool,
                    matched_terms: Some(self.matched_terms(row)),
                    term_scores: Some(term_scores),
                })
            }
            None => None,
        };
        let fused_score = b.fused.get(id).copied();
        let fused_rank = fused_score.map(|f| 1 + b.fused.values().filter(|&&o| o > f).count());
        let rerank = self
            .reranked
            .iter()
            .position(|r| &r.chunk_id == id)
            .map(|i| RerankPosition {
                rank: i + 1,
                candidates: self.reranked.len(),
                score: self.reranked[i].score,
                fused_rank: self.reranked[i].fused_rank,
            });
        let mut chunk = ChunkExplanation {
            chunk_id: id.clone(),
            document_id: row.document_id.clone(),
            chunk_index: row.chunk_index,
            rank,
            deleted_at: row.deleted_at.clone(),
            excluded_by_filter,
            semantic,
            keyword,
            fused_score,
            fused_rank,
            rerank,
            returned_at_semantic_weights: self.weights_returning(id),
            verdict: String::new(),
        };
        chunk.verdict = self.verdict(&chunk, hidden_by_deletion);
        Ok(chunk)
    }

    /// The first filter of the request that the chunk does not pass, with its value there.
    async fn filter_miss(&self, row: &ChunkRow) -> Result<Option<FilterMiss>, RetrievalError> {
        let f = &self.request.filters;
        let mut single: Vec<(String, Filters)> = f
            .clauses
            .iter()
            .map(|c| {
                (
                    match &c.target {
                        FilterTarget::Metadata(key) => key.clone(),
                        _ => c.field_name().to_string(),
                    },
                    Filters {
                        clauses: vec![c.clone()],
                        visibility: Visibility::All,
                        ..Filters::default()
                    },
                )
            })
            .collect();
        if let Some(prefix) = &f.path_prefix {
            single.push((
                "path_prefix".into(),
                Filters {
                    path_prefix: Some(prefix.clone()),
                    visibility: Visibility::All,
                    ..Filters::default()
                },
            ));
        }
        if let Some(after) = &f.updated_after {
            single.push((
                "updated_after".into(),
                Filters {
                    updated_after: Some(after.clone()),
                    visibility: Visibility::All,
                    ..Filters::default()
                },
            ));
        }
        for (field, filter) in single {
            let Some(sql) = filter.to_sql() else {
                continue;
            };
            let held = self
                .index
                .lance()
                .rows_where(
                    &self.snapshot.dataset,
                    Some(format!(
                        "chunk_id = {} AND ({sql})",
                        sql_string(&row.chunk_id)
                    )),
                    false,
                )
                .await?;
            if held.is_empty() {
                return Ok(Some(FilterMiss {
                    value: field_value(row, &field),
                    field,
                }));
            }
        }
        Ok(None)
    }

    /// The query's analysed terms that the chunk's text holds, in query order.
    fn matched_terms(&self, row: &ChunkRow) -> Vec<String> {
        let held: HashSet<String> = self
            .index
            .keyword()
            .analyze(&row.search_text())
            .unwrap_or_default()
            .into_iter()
            .collect();
        let mut seen = HashSet::new();
        self.query_terms
            .iter()
            .filter(|t| held.contains(*t) && seen.insert(t.as_str()))
            .cloned()
            .collect()
    }

    fn verdict(&self, c: &ChunkExplanation, hidden_by_deletion: bool) -> String {
        if let Some(rank) = c.rank {
            let score = self.returned[rank - 1].score;
            return match &c.rerank {
                Some(r) => format!(
                    "ranked {}: reranker score {score:.4} (fused rank {})",
                    ordinal(rank),
                    r.fused_rank
                ),
                None => format!("ranked {}: score {score:.4}", ordinal(rank)),
            };
        }
        if hidden_by_deletion {
            return match &c.deleted_at {
                Some(at) => format!("deleted at {at}: the query searches live chunks only"),
                None => "live: the query searches deleted chunks only".to_string(),
            };
        }
        if let Some(miss) = &c.excluded_by_filter {
            return format!(
                "excluded by the filter on {}: the chunk holds {}",
                miss.field, miss.value
            );
        }
        let mut why = Vec::new();
        if let Some(s) = &c.semantic {
            why.push(branch_words("semantic", s, |v| {
                format!("similarity {v:.4}")
            }));
            if let Some(place) = self.missed_by_approximate_search(s) {
                why.push(format!(
                    "the approximate vector search missed it: its similarity places it {} in the pool",
                    ordinal(place)
                ));
            }
        }
        if let Some(k) = &c.keyword {
            if k.matched_terms.as_ref().is_some_and(Vec::is_empty) {
                why.push("keyword: it holds none of the query's terms".to_string());
            } else {
                why.push(branch_words("keyword", k, |v| format!("BM25 {v:.3}")));
            }
            let through_graph: Vec<&str> = k
                .matched_terms
                .iter()
                .flatten()
                .filter(|t| self.graph_terms.contains(*t))
                .map(String::as_str)
                .collect();
            if !through_graph.is_empty() {
                why.push(format!(
                    "the graph's expansion matched {}",
                    through_graph.join(", ")
                ));
            }
        }
        let returned = self.returned.len();
        let last = self.returned.last().map(|r| r.score);
        let head = match (c.fused_score, last) {
            // Reranked results carry the reranker's scores: no fused score compares with them.
            _ if let Some(r) = &c.rerank => {
                let placed = format!(
                    "not returned: the reranker put it {} of its {} candidates (score {:.4}; fused rank {})",
                    ordinal(r.rank),
                    r.candidates,
                    r.score,
                    r.fused_rank
                );
                // Placed within the top k yet not returned: a later cut-off dropped it.
                if r.rank <= self.request.top_k {
                    format!("{placed}; {}", self.reordered())
                } else {
                    placed
                }
            }
            (Some(f), _) if self.reranker_applied => format!(
                "not returned: fused rank {}, outside the reranker's {} candidates (fused score {f:.4})",
                c.fused_rank.unwrap_or_default(),
                self.reranked.len()
            ),
            (Some(f), Some(l)) if f < l => {
                format!("not returned: fused score {f:.4} below the last result's {l:.4}")
            }
            (Some(f), _) => format!("not returned: fused score {f:.4}, {}", self.reordered()),
            (None, _) if c.semantic.iter().chain(&c.keyword).any(|b| b.in_pool) => {
                format!("not returned: {}", self.reordered())
            }
            (None, _) if self.request.method == SearchMethod::Hybrid => {
                "not returned: a candidate of neither branch".to_string()
            }
            (None, _) => format!("not returned: outside the top {returned}"),
        };
        let head = match &c.returned_at_semantic_weights {
            Some(weights) if c.fused_score.is_some() => match weight_ranges(weights) {
                Some(ranges) => format!("{head}; a semantic weight of {ranges} would return it"),
                None => format!("{head}; no semantic weight would return it"),
            },
            _ => head,
        };
        if why.is_empty() {
            head
        } else {
            format!("{head}; {}", why.join("; "))
        }
    }

    /// Where a chunk the approximate vector search left out of the semantic pool would have
    /// been in it by its similarity (a search of every vector would have pooled it); `None`
    /// when the search was exact, pooled it, or its similarity does not reach the pool. An
    /// equal similarity does not count: an exact search may order such a tie either way.
    fn missed_by_approximate_search(&self, b: &BranchPosition) -> Option<usize> {
        let similarity = b.score?;
        if self.vector_search != Some(VectorSearch::Approximate) || b.in_pool {
            return None;
        }
        let above = self
            .branches
            .semantic_pooled
            .values()
            .filter(|&&pooled| pooled >= similarity)
            .count();
        (above < b.pool).then_some(above + 1)
    }

    /// Hybrid, unless a reranker or diversification ordered the results: the semantic
    /// weights of 0, 0.1, … 1 at which the query's candidates, fused as it fused them, return
    /// chunk `id` (a ranking of the kept candidates per weight, no search).
    fn weights_returning(&self, id: &str) -> Option<Vec<f64>> {
        let r = self.request;
        if r.method != SearchMethod::Hybrid || self.reranker_applied || r.diversify > 0.0 {
            return None;
        }
        let input = &self.branches.fusion_input;
        Some(
            (0..=10)
                .map(|tenths| f64::from(tenths) / 10.0)
                .filter(|&weight| {
                    input
                        .rank(weight, r.fusion, r.top_k)
                        .iter()
                        .filter(|(_, score)| r.min_score.is_none_or(|min| *score >= min))
                        .any(|(c, _)| c.chunk_id == id)
                })
                .collect(),
        )
    }

    /// What else drops a candidate after ranking: the request's cut-offs.
    fn reordered(&self) -> String {
        let r = self.request;
        let mut steps = Vec::new();
        if let Some(min) = r.min_score {
            steps.push(format!("min_sim {min} may have dropped it"));
        }
        if r.diversify > 0.0 {
            steps.push("diversification (MMR) picked other chunks".to_string());
        }
        if self.reranker_applied {
            steps.push("the reranker ordered the candidates".to_string());
        }
        if steps.is_empty() {
            format!("other chunks filled the top {}", r.top_k)
        } else {
            steps.join(", ")
        }
    }
}

/// The target's rows in `snapshot`, deleted ones included (a snippet is looked for among
/// live chunks only, unless `reveal_deleted`).
async fn target_rows(
    index: &Index,
    snapshot: &Snapshot,
    target: &Target,
    reveal_deleted: bool,
) -> Result<Vec<ChunkRow>, RetrievalError> {
    let lance = index.lance();
    let dataset = &snapshot.dataset;
    Ok(match target {
        Target::DocumentId(id) => {
            lance
                .rows_where(
                    dataset,
                    Some(format!("document_id = {}", sql_string(id))),
                    true,
                )
                .await?
        }
        Target::ChunkId(id) => lance.rows(dataset, std::slice::from_ref(id), true).await?,
        Target::Text(text) => {
            let wanted = normalized(text);
            // Deleted chunks are searched only for a caller who may see them.
            let all = Filters {
                visibility: if reveal_deleted {
                    Visibility::All
                } else {
                    Visibility::Active
                },
                ..Filters::default()
            };
            let found = match index.keyword().prepare(&snapshot.searcher, text, &all)? {
                Some(q) => q.top(SNIPPET_CANDIDATES)?,
                None => Vec::new(),
            };
            let ids: Vec<String> = found.into_iter().map(|(id, _)| id).collect();
            lance
                .rows(dataset, &ids, true)
                .await?
                .into_iter()
                .filter(|r| normalized(&r.text).contains(&wanted))
                .collect()
        }
    })
}

/// Orders a target's chunks for its verdict: returned first (by rank), then by how close the
/// best branch came.
fn chunk_order(c: &ChunkExplanation) -> f64 {
    match c.rank {
        Some(r) => r as f64,
        None => {
            1e6 + c
                .semantic
                .iter()
                .chain(&c.keyword)
                .filter_map(|b| b.rank)
                .min()
                .map_or(1e6, |r| r as f64)
        }
    }
}

fn branch_words(name: &str, b: &BranchPosition, score: impl Fn(f64) -> String) -> String {
    let score = b.score.map(score).unwrap_or_default();
    match b.rank {
        Some(r) if b.in_pool => format!("{name} rank {r} within the pool of {} ({score})", b.pool),
        // An approximate search, or a tie, can order a deeper search otherwise.
        Some(r) if r <= b.pool => format!(
            "{name} rank {r} in a search {} deep, yet not in the pool of {} ({score})",
            b.depth, b.pool
        ),
        Some(r) => format!(
            "{name} rank {r} outside the pool of {}, {} places short ({score})",
            b.pool,
            r.saturating_sub(b.pool)
        ),
        None => format!("{name}: not among the best {} ({score})", b.depth),
    }
}

/// The searched terms (analysed) that `query` itself does not hold and the search did not
/// drop: what the graph's expansion added to the keyword branch.
fn graph_terms(
    index: &Index,
    query: &str,
    searched: &[String],
    dropped: &[String],
) -> Result<HashSet<String>, RetrievalError> {
    let own: HashSet<String> = index.keyword().analyze(query)?.into_iter().collect();
    Ok(searched
        .iter()
        .filter(|t| !own.contains(*t) && !dropped.contains(*t))
        .cloned()
        .collect())
}

fn position(ranking: &Ranking, id: &str) -> Option<usize> {
    ranking.iter().position(|(c, _)| c == id).map(|i| i + 1)
}

fn normalized(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The value a chunk holds for a filter's field.
fn field_value(row: &ChunkRow, field: &str) -> serde_json::Value {
    use serde_json::{json, Value};
    let text = |v: &Option<String>| v.as_ref().map_or(Value::Null, |s| json!(s));
    match field {
        "document_id" => json!(row.document_id),
        "knowledge_base_id" => json!(row.knowledge_base_id),
        "title" => text(&row.title),
        "source_type" => text(&row.source_type),
        "source_name" => text(&row.source_name),
        "uri" => text(&row.uri),
        "source_id" => text(&row.source_id),
        "source_path" => text(&row.source_path),
        "project_id" => text(&row.project_id),
        "updated_at" | "updated_after" => text(&row.updated_at),
        "page_number" => row.page_number.map_or(Value::Null, |p| json!(p)),
        "managed_by_source" => row.managed_by_source.map_or(Value::Null, |b| json!(b)),
        "tags" => json!(row.tags),
        "path_prefix" => json!({"source_path": row.source_path, "uri": row.uri}),
        key => row.metadata.get(key).cloned().unwrap_or(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_read_as_ranges() {
        assert_eq!(weight_ranges(&[]), None);
        assert_eq!(weight_ranges(&[0.7]).as_deref(), Some("0.7"));
        assert_eq!(
            weight_ranges(&[0.0, 0.1, 0.2, 0.8, 0.9, 1.0]).as_deref(),
            Some("0.0–0.2 or 0.8–1.0")
        );
        assert_eq!(weight_ranges(&[0.3, 0.5]).as_deref(), Some("0.3 or 0.5"));
    }

    #[test]
    fn ordinals_read_as_english() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111]
            .map(ordinal)
            .into();
        assert_eq!(
            got,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st",
                "111th"
            ]
        );
    }

    #[test]
    fn snippets_match_whatever_their_case_and_spacing() {
        assert!(normalized("The  Moon\npulls").contains(&normalized("moon PULLS")));
        assert!(!normalized("The moon pulls").contains(&normalized("sun")));
    }

    #[test]
    fn a_branch_outside_its_pool_says_by_how_much() {
        let b = BranchPosition {
            rank: Some(63),
            depth: WIDE_POOL,
            score: Some(0.21),
            normalized: None,
            in_pool: false,
            pool: 50,
            matched_terms: None,
            term_scores: None,
        };
        assert_eq!(
            branch_words("semantic", &b, |v| format!("similarity {v:.2}")),
            "semantic rank 63 outside the pool of 50, 13 places short (similarity 0.21)"
        );
        let deeper = BranchPosition {
            rank: Some(7),
            pool: 10,
            ..b
        };
        assert_eq!(
            branch_words("semantic", &deeper, |v| format!("similarity {v:.2}")),
            "semantic rank 7 in a search 200 deep, yet not in the pool of 10 (similarity 0.21)"
        );
    }
}
