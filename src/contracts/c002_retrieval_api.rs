//! Contract 002, "Retrieval API Design for LLM-Agnostic RAG Systems": `POST
//! /v1/indexes/{index}/query` with retrieval profiles, `semantic_weight`, the four filters
//! and `debug`; passages with `score_detail` and `offsets`, grouped by document; `query_id`,
//! `index_version` and `latency_ms` on every answer. Index-level defaults
//! (`default_retrieval_profile`, `default_semantic_weight`) are set with `PUT
//! /v1/indexes/{index}/settings`; a request's own values beat them.
//!
//! Every query is hybrid: the profile only moves the semantic weight (semantic 1.0 or 0.0
//! still fuse through the same normalisation, so scores stay on one scale).

use serde_json::{Map, Value};

use super::wire::c002::{
    DocumentGroup, GraphAnswer, GraphRelation, IndexSettings, IndexSettingsResponse, Passage,
    QueryDebug, QueryFilters, QueryRequestBody, QueryResponse, RelationScoreDetail, ScoreDetail,
    MAX_GRAPH_DEPTH, MAX_PATH_PREFIX,
};
use super::wire::{self, Offsets};
use super::Reply;
use crate::engine::{Engine, EngineError};
use crate::index::IndexDefaults;
use crate::model::{canonical_iso8601, BranchFusion, IndexName, ValidationError};
use crate::retrieval::profiles::{resolve, AutoStart, Profile, Resolved, AUTO_MIN_WEIGHT};
use crate::retrieval::{Filters, SearchMethod, SearchRequest};

/// A validated query request.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryRequest {
    pub query: String,
    pub profile: Option<Profile>,
    pub semantic_weight: Option<f64>,
    pub filters: Filters,
    /// The filters as given (echoed in debug as `filters_applied`).
    pub filters_given: Map<String, Value>,
    pub top_k: usize,
    pub debug: bool,
    pub index_version: Option<u64>,
    /// Rerank with the configured reranker (default true; without one nothing happens).
    pub rerank: bool,
    /// ragstream's opt-in extension: knowledge-graph relations within this many hops of the
    /// query's entities come back as `relations` (with `rewrite_terms`). Absent: the
    /// contract's shape, unchanged.
    pub graph_depth: Option<usize>,
    /// ragstream's extension: how hybrid scales its branches for this query. Absent: the
    /// index's `fusion`, else contract 000's way.
    pub fusion: Option<BranchFusion>,
}

fn bad(field: &str, rule: impl Into<String>) -> ValidationError {
    ValidationError::new(field, rule)
}

const PROFILE_RULE: &str = "must be one of auto, exact, balanced or semantic";
const WEIGHT_RULE: &str = "must be a number between 0 and 1";
const CENTER_RULE: &str = "must be a number between 0.2 and 0.8";
const FUSION_RULE: &str = "must be one of contract, min_max, z_score or rrf";

/// The rule a field of the query request breaks when its value is refused.
fn query_rule(field: &str, max_top_k: usize) -> String {
    match field {
        "query" => "must be a string".into(),
        "retrieval_profile" => PROFILE_RULE.into(),
        "semantic_weight" => WEIGHT_RULE.into(),
        "top_k" => format!("must be an integer between 1 and {max_top_k}"),
        "debug" | "rerank" => "must be a boolean".into(),
        "index_version" => "must be a positive integer".into(),
        "graph_depth" => format!("must be an integer between 0 and {MAX_GRAPH_DEPTH}"),
        "fusion" => FUSION_RULE.into(),
        _ => "must be an object".into(),
    }
}

/// The rule a filter breaks when its value is refused.
fn filter_rule(field: &str) -> String {
    match field {
        "project_id" => "must be a string".into(),
        "tags" => "must be a non-empty array of strings".into(),
        "path_prefix" => {
            format!("must be a non-empty string of at most {MAX_PATH_PREFIX} bytes")
        }
        "updated_after" => "must be an ISO 8601 date or date-time such as 2024-05-01 or \
                            2024-05-01T12:00:00Z (without an offset: UTC)"
            .into(),
        _ => "must be an object".into(),
    }
}

pub fn parse_request(
    body: &Value,
    max_top_k: usize,
    max_query_bytes: usize,
) -> Result<QueryRequest, ValidationError> {
    let rule = |field: &str| query_rule(field, max_top_k);
    let given: QueryRequestBody = wire::read(
        body,
        "",
        &|_| "is not a field of the query request".into(),
        &rule,
    )?;
    let query = given.query;
    if query.trim().is_empty() {
        return Err(bad("query", "must not be empty"));
    }
    if query.len() > max_query_bytes {
        return Err(bad(
            "query",
            format!("must be at most {max_query_bytes} bytes"),
        ));
    }
    if given
        .semantic_weight
        .is_some_and(|w| !(0.0..=1.0).contains(&w))
    {
        return Err(bad("semantic_weight", WEIGHT_RULE));
    }
    let top_k = given.top_k.unwrap_or(5);
    if top_k < 1 || top_k > max_top_k as u64 {
        return Err(bad("top_k", rule("top_k")));
    }
    let given_filters = given.filters.unwrap_or_else(|| Value::Object(Map::new()));
    let filters = query_filters(&given_filters)?;
    let Value::Object(filters_given) = given_filters else {
        return Err(bad("filters", "must be an object"));
    };
    if given.graph_depth.is_some_and(|d| d > MAX_GRAPH_DEPTH) {
        return Err(bad("graph_depth", rule("graph_depth")));
    }
    Ok(QueryRequest {
        query,
        profile: given.retrieval_profile,
        semantic_weight: given.semantic_weight,
        filters,
        filters_given,
        top_k: top_k as usize,
        debug: given.debug.unwrap_or(false),
        index_version: given.index_version.map(std::num::NonZeroU64::get),
        rerank: given.rerank.unwrap_or(true),
        graph_depth: given.graph_depth.map(|d| d as usize),
        fusion: given.fusion,
    })
}

/// The engine's filters for a query's `filters` object (anything else is refused, naming
/// `filters`).
fn query_filters(given: &Value) -> Result<Filters, ValidationError> {
    let typed: QueryFilters = wire::read(
        given,
        "filters.",
        &|_| {
            let known = wire::fields::<QueryFilters>().join(", ");
            format!("is not a filter of this API (use {known})")
        },
        &filter_rule,
    )?;
    let refuse = |field: &str| bad(&format!("filters.{field}"), filter_rule(field));
    if typed
        .path_prefix
        .as_ref()
        .is_some_and(|p| p.is_empty() || p.len() > MAX_PATH_PREFIX)
    {
        return Err(refuse("path_prefix"));
    }
    if typed.tags.as_ref().is_some_and(Vec::is_empty) {
        return Err(refuse("tags"));
    }
    let updated_after = match typed.updated_after {
        Some(t) => Some(canonical_iso8601(&t).ok_or_else(|| refuse("updated_after"))?),
        None => None,
    };
    // The metadata filters, in the order given, as the shared filter model reads them.
    let bag: Map<String, Value> = given
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| matches!(k.as_str(), "project_id" | "tags"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Filters {
        path_prefix: typed.path_prefix,
        updated_after,
        clauses: Filters::parse(&bag)?.clauses,
        ..Filters::default()
    })
}

/// The engine request a query asks for on an index with `defaults`, and the profile it
/// resolved to.
pub fn search_request(req: &QueryRequest, defaults: &IndexDefaults) -> (SearchRequest, Resolved) {
    let resolved = resolve(&req.query, req.profile, req.semantic_weight, defaults);
    let mut search = SearchRequest::new(req.query.clone(), SearchMethod::Hybrid, req.top_k);
    search.filters = req.filters.clone();
    search.hybrid_alpha = resolved.semantic_weight;
    search.fusion = defaults.fusion_for(req.fusion);
    search.index_version = req.index_version;
    search.rerank = req.rerank;
    (search, resolved)
}

/// For a request with `graph_depth`: looks the query up in the index's knowledge graph and
/// points `search` at what it found (the version whose graph was read, the expansion terms
/// for the keyword branch, the query's vector). `None` without `graph_depth`.
pub async fn expand_with_graph(
    engine: &Engine,
    index: &IndexName,
    req: &QueryRequest,
    search: &mut SearchRequest,
) -> Result<Option<crate::graph::GraphLookup>, EngineError> {
    let Some(depth) = req.graph_depth else {
        return Ok(None);
    };
    let max = engine.config().graph.max_depth;
    if depth > max {
        return Err(bad(
            "graph_depth",
            format!("must be at most graph.max_depth ({max})"),
        )
        .into());
    }
    let (found, vector) = engine
        .graph_lookup(index, &req.query, req.index_version, depth)
        .await?;
    search.index_version = Some(found.index_version);
    search.keyword_expansion = found.keyword_expansion.clone();
    search.query_vector = vector;
    Ok(Some(found))
}

pub async fn query(engine: &Engine, index: &IndexName, body: &Value) -> Reply {
    let started = std::time::Instant::now();
    let limits = &engine.config().limits;
    let req = match parse_request(body, limits.max_top_k, limits.max_query_bytes) {
        Ok(r) => r,
        Err(e) => return super::error_reply(&e.into()),
    };
    let handle = match engine.index(index).await {
        Ok(h) => h,
        Err(e) => return super::error_reply(&e),
    };
    let defaults = handle.query_defaults();
    let (mut search, resolved) = search_request(&req, &defaults);
    let graph = match expand_with_graph(engine, index, &req, &mut search).await {
        Ok(g) => g,
        Err(e) => return super::error_reply(&e),
    };
    let result = match engine.search(index, &search).await {
        Ok(r) => r,
        Err(e) => return super::error_reply(&e),
    };
    let results: Vec<Passage> = result.hits.iter().map(passage).collect();
    // Documents in order of their best passage; a document's score is its best passage's.
    let mut documents: Vec<DocumentGroup> = Vec::new();
    for h in &result.hits {
        let r = &h.row;
        match documents
            .iter_mut()
            .find(|d| d.document_id == r.document_id)
        {
            Some(d) => d.passages.push(r.chunk_id.clone()),
            None => documents.push(DocumentGroup {
                document_id: r.document_id.clone(),
                title: r.title.clone(),
                source_uri: r.source_uri(),
                score: h.score,
                passages: vec![r.chunk_id.clone()],
            }),
        }
    }
    let graph = graph.map(|graph| GraphAnswer {
        relations: graph
            .relations
            .iter()
            .map(|r| GraphRelation {
                subject: r.subject.clone(),
                relation: r.relation.clone(),
                object: r.object.clone(),
                document_id: r.document_id.clone(),
                chunk_id: r.chunk_id.clone(),
                depth: r.depth,
                score: r.score,
                score_detail: RelationScoreDetail {
                    semantic: r.semantic_score,
                    lexical: r.keyword_score,
                },
            })
            .collect(),
        rewrite_terms: graph.rewrite_terms,
    });
    let debug = req.debug.then(|| QueryDebug {
        retrieval_profile_effective: resolved.profile,
        semantic_weight_effective: resolved.semantic_weight,
        fusion_effective: search.fusion,
        auto_signals_detected: resolved.signals.clone(),
        lexical_candidates: result.keyword_candidates,
        semantic_candidates: result.semantic_candidates,
        reranker_applied: result.reranker_applied,
        keyword_terms_dropped: result.keyword_terms_dropped.clone(),
        vector_search_effective: result.vector_search,
        filters_applied: req.filters_given.clone(),
    });
    let answer = QueryResponse {
        query_id: uuid::Uuid::new_v4().to_string(),
        index_version: result.index_version,
        latency_ms: (started.elapsed().as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0,
        results,
        documents,
        graph,
        debug,
    };
    Reply::typed(&answer, Some(result.index_version))
}

fn passage(h: &crate::retrieval::search::SearchHit) -> Passage {
    let r = &h.row;
    Passage {
        chunk_id: r.chunk_id.clone(),
        document_id: r.document_id.clone(),
        source_uri: r.source_uri(),
        title: r.title.clone(),
        section_path: r.section_path.clone(),
        text: r.text.clone(),
        score: h.score,
        score_detail: ScoreDetail {
            semantic: h.semantic_score,
            lexical: h.keyword_score,
            rerank: h.rerank_score,
            final_score: h.score,
        },
        offsets: Offsets {
            start: r.offset_start,
            end: r.offset_end,
        },
    }
}

/// Reads a settings PUT: the defaults it sets (an absent or null key clears one).
pub fn parse_settings(body: &Value) -> Result<IndexDefaults, ValidationError> {
    let given: IndexSettings = wire::read(
        body,
        "",
        &|_| "is not an index setting".into(),
        &|field| match field {
            "default_retrieval_profile" => PROFILE_RULE.into(),
            "default_semantic_weight" => WEIGHT_RULE.into(),
            "auto_semantic_center" | "auto_passage_weight" => CENTER_RULE.into(),
            "fusion" => FUSION_RULE.into(),
            _ => "must be an object".into(),
        },
    )?;
    if given
        .default_semantic_weight
        .is_some_and(|w| !(0.0..=1.0).contains(&w))
    {
        return Err(bad("default_semantic_weight", WEIGHT_RULE));
    }
    let centres = AUTO_MIN_WEIGHT..=Profile::Semantic.semantic_weight();
    for (field, value) in [
        ("auto_semantic_center", given.auto_semantic_center),
        ("auto_passage_weight", given.auto_passage_weight),
    ] {
        if value.is_some_and(|w| !centres.contains(&w)) {
            return Err(bad(field, CENTER_RULE));
        }
    }
    Ok(IndexDefaults {
        default_retrieval_profile: given.default_retrieval_profile,
        default_semantic_weight: given.default_semantic_weight,
        auto_semantic_center: given.auto_semantic_center,
        auto_passage_weight: given.auto_passage_weight,
        fusion: given.fusion,
        // Set by hand: automatic calibration leaves it alone.
        auto_calibration: None,
    })
}

/// `PUT /v1/indexes/{index}/settings`: `{"default_retrieval_profile", "default_semantic_weight"}`
/// (either may be null to clear it).
pub async fn settings(engine: &Engine, index: &IndexName, body: &Value) -> Reply {
    let parsed = parse_settings(body);
    let defaults = match parsed {
        Ok(d) => d,
        Err(e) => return super::error_reply(&e.into()),
    };
    match engine.index(index).await {
        Ok(h) => match h.writer().set_defaults(defaults).await {
            Ok(info) => Reply::typed(
                &IndexSettingsResponse {
                    index: index.as_str().to_string(),
                    settings: info.defaults.into(),
                    auto_center_in_force: AutoStart::of(&info.query_defaults()).center,
                    fusion_in_force: info.query_defaults().fusion_for(None),
                },
                None,
            ),
            Err(e) => super::error_reply(&e.into()),
        },
        Err(e) => super::error_reply(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<QueryRequest, ValidationError> {
        parse_request(&v, 100, 8192)
    }

    #[test]
    fn the_contract_parameter_block_parses() {
        let r = parse(json!({
            "query": "q", "retrieval_profile": "exact", "semantic_weight": 0.3,
            "filters": {"project_id": "p", "path_prefix": "src/", "tags": ["a", "b"],
                        "updated_after": "2024-05-01T12:00:00+02:00"},
            "top_k": 7, "debug": true
        }))
        .unwrap();
        assert_eq!(r.profile, Some(Profile::Exact));
        assert_eq!(r.semantic_weight, Some(0.3));
        assert_eq!(r.top_k, 7);
        assert!(r.debug);
        assert_eq!(r.filters.path_prefix.as_deref(), Some("src/"));
        assert_eq!(
            r.filters.updated_after.as_deref(),
            Some("2024-05-01T10:00:00.000Z")
        );
        assert_eq!(r.filters.clauses.len(), 2);
    }

    #[test]
    fn updated_after_takes_any_iso_8601_date_or_date_time() {
        for (given, canonical) in [
            ("2024-05-01", "2024-05-01T00:00:00.000Z"),
            ("2024-05-01T12:00:00", "2024-05-01T12:00:00.000Z"),
            ("2024-05-01T12:00:00Z", "2024-05-01T12:00:00.000Z"),
        ] {
            let r = parse(json!({"query": "q", "filters": {"updated_after": given}})).unwrap();
            assert_eq!(
                r.filters.updated_after.as_deref(),
                Some(canonical),
                "{given}"
            );
        }
    }

    /// Each refusal's field and wording, as the hand-written parser gave them before the wire
    /// types: clients match on them.
    #[test]
    fn every_refusal_keeps_its_wording() {
        let profile = "must be one of auto, exact, balanced or semantic";
        let weight = "must be a number between 0 and 1";
        let top_k = "must be an integer between 1 and 100";
        let version = "must be a positive integer";
        let tags = "must be a non-empty array of strings";
        let prefix = "must be a non-empty string of at most 512 bytes";
        let date = "must be an ISO 8601 date or date-time such as 2024-05-01 or \
                    2024-05-01T12:00:00Z (without an offset: UTC)";
        let depth = "must be an integer between 0 and 5";
        let unknown_filter =
            "is not a filter of this API (use project_id, path_prefix, tags, updated_after)";
        let q = |extra: Value| {
            let mut body = json!({"query": "q"});
            body.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            body
        };
        let cases: Vec<(Value, &str, &str)> = vec![
            (json!([1]), "body", "must be an object"),
            (json!("q"), "body", "must be an object"),
            (
                q(json!({"bogus": 1})),
                "bogus",
                "is not a field of the query request",
            ),
            (
                json!({"bogus": 1}),
                "bogus",
                "is not a field of the query request",
            ),
            (json!({}), "query", "is required"),
            (json!({"query": 5}), "query", "must be a string"),
            (json!({"query": null}), "query", "must be a string"),
            (json!({"query": " \t"}), "query", "must not be empty"),
            (
                json!({"query": "x".repeat(8193)}),
                "query",
                "must be at most 8192 bytes",
            ),
            (
                q(json!({"retrieval_profile": "fast"})),
                "retrieval_profile",
                profile,
            ),
            (
                q(json!({"retrieval_profile": "Auto"})),
                "retrieval_profile",
                profile,
            ),
            (
                q(json!({"retrieval_profile": 3})),
                "retrieval_profile",
                profile,
            ),
            (
                q(json!({"semantic_weight": 1.5})),
                "semantic_weight",
                weight,
            ),
            (
                q(json!({"semantic_weight": -0.1})),
                "semantic_weight",
                weight,
            ),
            (
                q(json!({"semantic_weight": "0.5"})),
                "semantic_weight",
                weight,
            ),
            (q(json!({"top_k": 0})), "top_k", top_k),
            (q(json!({"top_k": 101})), "top_k", top_k),
            (q(json!({"top_k": 2.5})), "top_k", top_k),
            (q(json!({"top_k": -1})), "top_k", top_k),
            (q(json!({"top_k": "5"})), "top_k", top_k),
            (q(json!({"debug": "yes"})), "debug", "must be a boolean"),
            (q(json!({"rerank": 1})), "rerank", "must be a boolean"),
            (q(json!({"index_version": 0})), "index_version", version),
            (q(json!({"index_version": -3})), "index_version", version),
            (q(json!({"index_version": "7"})), "index_version", version),
            (q(json!({"filters": 5})), "filters", "must be an object"),
            (q(json!({"filters": []})), "filters", "must be an object"),
            (
                q(json!({"filters": {"owner": "x"}})),
                "filters.owner",
                unknown_filter,
            ),
            (
                q(json!({"filters": {"project_id": 5}})),
                "filters.project_id",
                "must be a string",
            ),
            (
                q(json!({"filters": {"project_id": null}})),
                "filters.project_id",
                "must be a string",
            ),
            (q(json!({"filters": {"tags": "a"}})), "filters.tags", tags),
            (q(json!({"filters": {"tags": []}})), "filters.tags", tags),
            (
                q(json!({"filters": {"tags": ["a", 1]}})),
                "filters.tags",
                tags,
            ),
            (q(json!({"filters": {"tags": null}})), "filters.tags", tags),
            (
                q(json!({"filters": {"path_prefix": ""}})),
                "filters.path_prefix",
                prefix,
            ),
            (
                q(json!({"filters": {"path_prefix": "a".repeat(513)}})),
                "filters.path_prefix",
                prefix,
            ),
            (
                q(json!({"filters": {"path_prefix": 5}})),
                "filters.path_prefix",
                prefix,
            ),
            (
                q(json!({"filters": {"updated_after": "May"}})),
                "filters.updated_after",
                date,
            ),
            (
                q(json!({"filters": {"updated_after": 5}})),
                "filters.updated_after",
                date,
            ),
            (
                q(json!({"filters": {"updated_after": null}})),
                "filters.updated_after",
                date,
            ),
            (q(json!({"graph_depth": 6})), "graph_depth", depth),
            (q(json!({"graph_depth": -1})), "graph_depth", depth),
            (q(json!({"graph_depth": "1"})), "graph_depth", depth),
        ];
        for (body, field, rule) in cases {
            let e = parse(body.clone()).unwrap_err();
            assert_eq!((e.field.as_str(), e.rule.as_str()), (field, rule), "{body}");
        }
        // null is the same as absent everywhere but inside `filters`.
        let r = parse(
            json!({"query": "q", "retrieval_profile": null, "semantic_weight": null,
            "filters": null, "top_k": null, "debug": null, "rerank": null,
            "index_version": null, "graph_depth": null}),
        )
        .unwrap();
        assert_eq!((r.top_k, r.debug, r.rerank), (5, false, true));
        assert!(r.filters_given.is_empty() && r.graph_depth.is_none());
    }

    /// The settings PUT's refusals, as the hand-written parser gave them.
    #[test]
    fn every_settings_refusal_keeps_its_wording() {
        let center = "must be a number between 0.2 and 0.8";
        for (body, field, rule) in [
            (json!([]), "body", "must be an object"),
            (json!({"top_k": 3}), "top_k", "is not an index setting"),
            (
                json!({"default_retrieval_profile": "fast"}),
                "default_retrieval_profile",
                "must be one of auto, exact, balanced or semantic",
            ),
            (
                json!({"default_retrieval_profile": {"exact": null}}),
                "default_retrieval_profile",
                "must be one of auto, exact, balanced or semantic",
            ),
            (
                json!({"default_semantic_weight": 2}),
                "default_semantic_weight",
                "must be a number between 0 and 1",
            ),
            (
                json!({"default_semantic_weight": "0.5"}),
                "default_semantic_weight",
                "must be a number between 0 and 1",
            ),
            (
                json!({"auto_semantic_center": 0.9}),
                "auto_semantic_center",
                center,
            ),
            (
                json!({"auto_semantic_center": true}),
                "auto_semantic_center",
                center,
            ),
            (
                json!({"auto_passage_weight": 0.1}),
                "auto_passage_weight",
                center,
            ),
        ] {
            let e = parse_settings(&body).unwrap_err();
            assert_eq!((e.field.as_str(), e.rule.as_str()), (field, rule), "{body}");
        }
        // What a GET returns can be PUT back: the read-only calibration, whatever it holds,
        // is dropped; null clears.
        let d = parse_settings(&json!({"default_retrieval_profile": "exact",
            "default_semantic_weight": null, "auto_semantic_center": 0.4,
            "auto_passage_weight": 0.3,
            "auto_calibration": {"source": "synthetic", "rows": 10}}))
        .unwrap();
        assert_eq!(d.default_retrieval_profile, Some(Profile::Exact));
        assert_eq!(
            (
                d.default_semantic_weight,
                d.auto_semantic_center,
                d.auto_passage_weight
            ),
            (None, Some(0.4), Some(0.3))
        );
        assert!(d.auto_calibration.is_none());
        assert!(parse_settings(&json!({"auto_calibration": "anything"})).is_ok());
    }

    #[test]
    fn bad_values_name_their_field() {
        for (body, field) in [
            (
                json!({"query": "q", "retrieval_profile": "fast"}),
                "retrieval_profile",
            ),
            (
                json!({"query": "q", "semantic_weight": 1.5}),
                "semantic_weight",
            ),
            (
                json!({"query": "q", "filters": {"owner": "x"}}),
                "filters.owner",
            ),
            (
                json!({"query": "q", "filters": {"tags": "a"}}),
                "filters.tags",
            ),
            (
                json!({"query": "q", "filters": {"updated_after": "May"}}),
                "filters.updated_after",
            ),
            (json!({"query": "q", "top_k": 0}), "top_k"),
            (json!({"query": "q", "debug": "yes"}), "debug"),
            (
                json!({"query": "q", "filters": {"path_prefix": "a".repeat(2000)}}),
                "filters.path_prefix",
            ),
            (json!({"query": "q", "rerank": "yes"}), "rerank"),
            (json!({}), "query"),
        ] {
            assert_eq!(parse(body.clone()).unwrap_err().field, field, "{body}");
        }
    }
}
