//! Contract 000, "Retrieval Contract (Backend <-> Agent Engine)":
//! `{"retrieval": {...}}` → `{"retrieval_calls": [...]}`.
//!
//! A thin adapter: it validates the wire request into an engine [`SearchRequest`] and renders
//! the engine's [`SearchResult`] back. Additions to the contract's call metadata:
//! `index_version` (answer again from it by sending it back), `query_id` and `latency_ms`.
//! `hybrid_alpha` is accepted but ignored (and not echoed) for non-hybrid methods.

use std::num::NonZeroU64;

use serde_json::Value;

use super::wire;
use super::wire::c000::{
    RelevanceComponents, RetrievalCall, RetrievalCallsResponse, RetrievalResult, RetrievalSpec,
};
use super::wire::chunk_metadata::ChunkMetadata;
use crate::engine::EngineError;
use crate::model::{IndexName, ValidationError};
use crate::retrieval::{Filters, SearchHit, SearchMethod, SearchRequest, SearchResult};

/// Limits applied to the wire request.
#[derive(Debug, Clone, Copy)]
pub struct RequestLimits {
    pub max_top_k: usize,
    pub max_query_bytes: usize,
}

/// The rule a field of the retrieval call breaks when its value is refused.
fn rule(field: &str, limits: RequestLimits) -> String {
    match field {
        "index" | "query" => "must be a string".into(),
        "top_k" => format!("must be an integer between 1 and {}", limits.max_top_k),
        "search_method" => "must be one of semantic, keyword or hybrid".into(),
        "query_preprocessing" => "must be one of none or normalize".into(),
        "hybrid_alpha" => "must be a number between 0 and 1".into(),
        "index_version" => "must be a positive integer".into(),
        _ => "must be an object".into(),
    }
}

/// Parses `{"retrieval": {...}}`; errors name the field (`retrieval.top_k`) and the rule.
pub fn parse_request(
    body: &Value,
    limits: RequestLimits,
) -> Result<(IndexName, SearchRequest), ValidationError> {
    let err = |field: &str, rule: String| ValidationError::new(format!("retrieval.{field}"), rule);
    // Keys beside `retrieval` are ignored, so only the call itself is read strictly.
    let call = body
        .get("retrieval")
        .ok_or_else(|| ValidationError::new("retrieval", "is required"))?;
    if !call.is_object() {
        return Err(ValidationError::new("retrieval", "must be an object"));
    }
    let r: RetrievalSpec = wire::read(
        call,
        "retrieval.",
        &|_| "is not a field of the retrieval request".into(),
        &|field| rule(field, limits),
    )?;
    let index = IndexName::parse(&r.index).map_err(|e| err("index", e.rule))?;
    if r.query.trim().is_empty() {
        return Err(err("query", "must not be empty".into()));
    }
    if r.query.len() > limits.max_query_bytes {
        return Err(err(
            "query",
            format!("must be at most {} bytes", limits.max_query_bytes),
        ));
    }
    let top_k = r.top_k.unwrap_or(5);
    if top_k < 1 || top_k > limits.max_top_k as u64 {
        return Err(err("top_k", rule("top_k", limits)));
    }
    let method = r.search_method.unwrap_or_default();
    let hybrid_alpha = r.hybrid_alpha.unwrap_or(0.5);
    if !(0.0..=1.0).contains(&hybrid_alpha) {
        return Err(err("hybrid_alpha", rule("hybrid_alpha", limits)));
    }
    let filters = match r.filters {
        None => Filters::default(),
        Some(Value::Object(bag)) => Filters::parse(&bag)
            .map_err(|e| ValidationError::new(format!("retrieval.{}", e.field), e.rule))?,
        Some(_) => return Err(err("filters", "must be an object".into())),
    };
    Ok((
        index,
        SearchRequest {
            filters,
            method,
            preprocessing: r.query_preprocessing.unwrap_or_default(),
            hybrid_alpha,
            index_version: r.index_version.map(NonZeroU64::get),
            ..SearchRequest::new(r.query, method, top_k as usize)
        },
    ))
}

/// The `{"retrieval_calls": [...]}` answer.
pub fn render_response(
    index: &IndexName,
    request: &SearchRequest,
    result: &SearchResult,
    query_id: &str,
    latency_ms: f64,
) -> RetrievalCallsResponse {
    let call = RetrievalCall {
        index: index.as_str().to_string(),
        query: result.query.clone(),
        top_k: request.top_k,
        search_method: request.method,
        query_preprocessing: request.preprocessing,
        hybrid_alpha: (request.method == SearchMethod::Hybrid).then_some(request.hybrid_alpha),
        result_count: result.hits.len(),
        results: result.hits.iter().map(render_hit).collect(),
        index_version: result.index_version,
        query_id: query_id.to_string(),
        latency_ms,
    };
    RetrievalCallsResponse {
        retrieval_calls: vec![call],
    }
}

fn render_hit(hit: &SearchHit) -> RetrievalResult {
    let components = (hit.semantic_score.is_some() || hit.keyword_score.is_some()).then_some(
        RelevanceComponents {
            semantic_score: hit.semantic_score,
            keyword_score: hit.keyword_score,
        },
    );
    RetrievalResult {
        id: hit.row.chunk_id.clone(),
        text: hit.row.text.clone(),
        metadata: ChunkMetadata::of(&hit.row),
        score: hit.score,
        score_kind: hit.kind,
        relevance_score: hit.score,
        relevance_kind: hit.kind,
        relevance_components: components,
    }
}

/// The structured error body every edge returns for `e`: `{"error": {"code", "message",
/// "field"?}}`, with the retained range when a version is unavailable.
pub fn error_body(e: &EngineError) -> wire::error::ErrorBody {
    let (code, field) = error_code(e);
    let mut body = wire::error::ErrorBody::new(code, e.to_string()).maybe_field(field);
    if let EngineError::VersionUnavailable { oldest, latest, .. } = e {
        body.error.oldest_available_version = Some(*oldest);
        body.error.latest_version = Some(*latest);
    }
    body
}

/// A stable error code and, for validation errors, the field.
pub fn error_code(e: &EngineError) -> (&'static str, Option<String>) {
    match e {
        EngineError::Invalid(v) => ("invalid_request", Some(v.field.clone())),
        EngineError::IndexNotFound(_) => ("index_not_found", Some("retrieval.index".into())),
        EngineError::VersionUnavailable { .. } => (
            "version_unavailable",
            Some("retrieval.index_version".into()),
        ),
        EngineError::Embed(_) => ("embedder_unavailable", None),
        EngineError::Store(crate::index::StoreError::EmbedderMismatch { .. }) => {
            ("embedder_mismatch", None)
        }
        EngineError::Store(crate::index::StoreError::Corrupt(_)) => ("index_damaged", None),
        EngineError::Store(crate::index::StoreError::ReadOnly(_)) => ("read_only_replica", None),
        EngineError::Store(
            crate::index::StoreError::NotOwner { .. }
            | crate::index::StoreError::NotOwned(_)
            | crate::index::StoreError::ChangedElsewhere { .. },
        ) => ("write_conflict", None),
        // The store failed a read or write (an object store down, a disk failing), not the
        // request: worth retrying.
        EngineError::Store(crate::index::StoreError::Storage { .. }) => {
            ("storage_unavailable", None)
        }
        EngineError::Store(e) if e.is_storage_failure() => ("storage_unavailable", None),
        EngineError::Store(_) | EngineError::Internal(_) => ("internal", None),
        EngineError::Timeout { .. } => ("query_timeout", None),
    }
}

/// Answers a parsed request body: the response, or the structured error.
pub async fn answer(engine: &crate::engine::Engine, body: &Value) -> super::Reply {
    let limits = RequestLimits {
        max_top_k: engine.config().limits.max_top_k,
        max_query_bytes: engine.config().limits.max_query_bytes,
    };
    let started = std::time::Instant::now();
    let (name, request) = match parse_request(body, limits) {
        Ok(parsed) => parsed,
        Err(e) => return super::error_reply(&e.into()),
    };
    match engine.search(&name, &request).await {
        Ok(result) => super::Reply::typed(
            &render_response(
                &name,
                &request,
                &result,
                &uuid::Uuid::new_v4().to_string(),
                started.elapsed().as_secs_f64() * 1000.0,
            ),
            Some(result.index_version),
        ),
        Err(e) => super::error_reply(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::QueryPreprocessing;
    use serde_json::json;

    /// Each refusal's field and wording, as the hand-written parser gave them before the wire
    /// types: clients match on them.
    #[test]
    fn every_refusal_keeps_its_wording() {
        let name_rule = IndexName::parse("Not A Name").unwrap_err().rule;
        let top_k = "must be an integer between 1 and 50";
        let method = "must be one of semantic, keyword or hybrid";
        let alpha = "must be a number between 0 and 1";
        let call = |extra: Value| {
            let mut call = json!({"index": "kb", "query": "q"});
            for (k, v) in extra.as_object().unwrap() {
                call[k] = v.clone();
            }
            json!({ "retrieval": call })
        };
        let cases: Vec<(Value, &str, &str)> = vec![
            (json!(5), "retrieval", "is required"),
            (json!({}), "retrieval", "is required"),
            (json!({"retrieval": 5}), "retrieval", "must be an object"),
            (json!({"retrieval": null}), "retrieval", "must be an object"),
            (
                call(json!({"bogus": 1})),
                "retrieval.bogus",
                "is not a field of the retrieval request",
            ),
            (
                json!({"retrieval": {"query": "q"}}),
                "retrieval.index",
                "is required",
            ),
            (
                json!({"retrieval": {"index": "kb"}}),
                "retrieval.query",
                "is required",
            ),
            (
                call(json!({"index": 5})),
                "retrieval.index",
                "must be a string",
            ),
            (
                call(json!({"index": null})),
                "retrieval.index",
                "must be a string",
            ),
            (
                call(json!({"index": "Not A Name"})),
                "retrieval.index",
                &name_rule,
            ),
            (
                call(json!({"query": 5})),
                "retrieval.query",
                "must be a string",
            ),
            (
                call(json!({"query": " "})),
                "retrieval.query",
                "must not be empty",
            ),
            (
                call(json!({"query": "x".repeat(101)})),
                "retrieval.query",
                "must be at most 100 bytes",
            ),
            (call(json!({"top_k": 0})), "retrieval.top_k", top_k),
            (call(json!({"top_k": 51})), "retrieval.top_k", top_k),
            (call(json!({"top_k": 1.5})), "retrieval.top_k", top_k),
            (call(json!({"top_k": "3"})), "retrieval.top_k", top_k),
            (
                call(json!({"search_method": "fuzzy"})),
                "retrieval.search_method",
                method,
            ),
            (
                call(json!({"search_method": 3})),
                "retrieval.search_method",
                method,
            ),
            (
                call(json!({"query_preprocessing": "stem"})),
                "retrieval.query_preprocessing",
                "must be one of none or normalize",
            ),
            (
                call(json!({"hybrid_alpha": 2})),
                "retrieval.hybrid_alpha",
                alpha,
            ),
            (
                call(json!({"hybrid_alpha": "x"})),
                "retrieval.hybrid_alpha",
                alpha,
            ),
            (
                call(json!({"filters": 5})),
                "retrieval.filters",
                "must be an object",
            ),
            (
                call(json!({"filters": []})),
                "retrieval.filters",
                "must be an object",
            ),
            (
                call(json!({"index_version": 0})),
                "retrieval.index_version",
                "must be a positive integer",
            ),
            (
                call(json!({"index_version": -1})),
                "retrieval.index_version",
                "must be a positive integer",
            ),
        ];
        for (body, field, rule) in cases {
            let e = parse(body.clone()).unwrap_err();
            assert_eq!((e.field.as_str(), e.rule.as_str()), (field, rule), "{body}");
        }
        // Keys beside `retrieval` are ignored; null is the same as absent.
        let mut body = call(
            json!({"top_k": null, "search_method": null, "filters": null,
            "hybrid_alpha": null, "index_version": null, "query_preprocessing": null}),
        );
        body["trace"] = json!({"anything": true});
        let (_, r) = parse(body).unwrap();
        assert_eq!(
            (r.top_k, r.method, r.hybrid_alpha),
            (5, SearchMethod::Semantic, 0.5)
        );
    }

    const LIMITS: RequestLimits = RequestLimits {
        max_top_k: 50,
        max_query_bytes: 100,
    };

    fn parse(v: Value) -> Result<(IndexName, SearchRequest), ValidationError> {
        parse_request(&v, LIMITS)
    }

    #[test]
    fn defaults_follow_the_contract() {
        let (index, r) = parse(json!({"retrieval": {"index": "kb", "query": "q"}})).unwrap();
        assert_eq!(index.as_str(), "kb");
        assert_eq!(r.top_k, 5);
        assert_eq!(r.method, SearchMethod::Semantic);
        assert_eq!(r.preprocessing, QueryPreprocessing::None);
        assert_eq!(r.hybrid_alpha, 0.5);
        assert!(r.filters.is_empty());
        assert_eq!(r.index_version, None);
    }

    #[test]
    fn the_canonical_example_parses() {
        let (_, r) = parse(json!({"retrieval": {
            "index": "kb_product_docs", "query": "How does retrieval work?", "top_k": 5,
            "filters": {}, "search_method": "hybrid", "query_preprocessing": "normalize",
            "hybrid_alpha": 0.5}}))
        .unwrap();
        assert_eq!(r.method, SearchMethod::Hybrid);
        assert_eq!(r.preprocessing, QueryPreprocessing::Normalize);
    }

    #[test]
    fn each_invalid_field_is_named() {
        let cases = [
            (json!({}), "retrieval"),
            (json!({"retrieval": 3}), "retrieval"),
            (json!({"retrieval": {"query": "q"}}), "retrieval.index"),
            (
                json!({"retrieval": {"index": "Bad Name", "query": "q"}}),
                "retrieval.index",
            ),
            (json!({"retrieval": {"index": "kb"}}), "retrieval.query"),
            (
                json!({"retrieval": {"index": "kb", "query": " "}}),
                "retrieval.query",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "x".repeat(101)}}),
                "retrieval.query",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": 5}}),
                "retrieval.query",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "top_k": 0}}),
                "retrieval.top_k",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "top_k": 51}}),
                "retrieval.top_k",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "top_k": "5"}}),
                "retrieval.top_k",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "top_k": 2.5}}),
                "retrieval.top_k",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "search_method": "fuzzy"}}),
                "retrieval.search_method",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "query_preprocessing": "stem"}}),
                "retrieval.query_preprocessing",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "hybrid_alpha": 1.5}}),
                "retrieval.hybrid_alpha",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "hybrid_alpha": -0.1}}),
                "retrieval.hybrid_alpha",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "filters": []}}),
                "retrieval.filters",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "filters": {"page_number": "x"}}}),
                "retrieval.filters.page_number",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "index_version": 0}}),
                "retrieval.index_version",
            ),
            (
                json!({"retrieval": {"index": "kb", "query": "q", "topk": 3}}),
                "retrieval.topk",
            ),
        ];
        for (body, field) in cases {
            let e = parse(body.clone()).unwrap_err();
            assert_eq!(e.field, field, "{body}");
        }
    }

    #[test]
    fn version_errors_name_the_oldest_version() {
        let e = EngineError::VersionUnavailable {
            requested: 2,
            oldest: 7,
            latest: 9,
        };
        let body = error_body(&e).to_value();
        assert_eq!(body["error"]["code"], "version_unavailable");
        assert_eq!(body["error"]["oldest_available_version"], 7);
    }
}
