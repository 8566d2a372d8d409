//! Contract 000, "Retrieval Contract (Backend <-> Agent Engine)":
//! `{"retrieval": {...}}` → `{"retrieval_calls": [...]}`.
//!
//! A thin adapter: it validates the wire request into an engine [`SearchRequest`] and renders
//! the engine's [`SearchResult`] back. Additions to the contract's call metadata:
//! `index_version` (answer again from it by sending it back), `query_id` and `latency_ms`.
//! `hybrid_alpha` is accepted but ignored (and not echoed) for non-hybrid methods.

use serde_json::{json, Map, Value};

use crate::engine::EngineError;
use crate::model::{IndexName, ValidationError};
use crate::retrieval::{
    Filters, QueryPreprocessing, RelevanceKind, SearchHit, SearchMethod, SearchRequest,
    SearchResult,
};

const FIELDS: &[&str] = &[
    "index",
    "query",
    "top_k",
    "filters",
    "search_method",
    "query_preprocessing",
    "hybrid_alpha",
    "index_version",
];

/// Limits applied to the wire request.
#[derive(Debug, Clone, Copy)]
pub struct RequestLimits {
    pub max_top_k: usize,
    pub max_query_bytes: usize,
}

/// Parses `{"retrieval": {...}}`; errors name the field (`retrieval.top_k`) and the rule.
pub fn parse_request(
    body: &Value,
    limits: RequestLimits,
) -> Result<(IndexName, SearchRequest), ValidationError> {
    let err = |field: &str, rule: &str| ValidationError::new(format!("retrieval.{field}"), rule);
    let r = body
        .get("retrieval")
        .ok_or_else(|| ValidationError::new("retrieval", "is required"))?
        .as_object()
        .ok_or_else(|| ValidationError::new("retrieval", "must be an object"))?;
    if let Some(unknown) = r.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(err(unknown, "is not a field of the retrieval request"));
    }
    let index = match r.get("index") {
        Some(Value::String(s)) => IndexName::parse(s).map_err(|e| err("index", &e.rule))?,
        Some(_) => return Err(err("index", "must be a string")),
        None => return Err(err("index", "is required")),
    };
    let query = match r.get("query") {
        Some(Value::String(s)) if s.trim().is_empty() => {
            return Err(err("query", "must not be empty"))
        }
        Some(Value::String(s)) if s.len() > limits.max_query_bytes => {
            return Err(err(
                "query",
                &format!("must be at most {} bytes", limits.max_query_bytes),
            ))
        }
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(err("query", "must be a string")),
        None => return Err(err("query", "is required")),
    };
    let top_k = match r.get("top_k") {
        None | Some(Value::Null) => 5,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 && n <= limits.max_top_k as u64 => n as usize,
            _ => {
                return Err(err(
                    "top_k",
                    &format!("must be an integer between 1 and {}", limits.max_top_k),
                ))
            }
        },
    };
    let method: SearchMethod = enum_field(r, "search_method", "semantic, keyword or hybrid")?;
    let preprocessing: QueryPreprocessing =
        enum_field(r, "query_preprocessing", "none or normalize")?;
    let hybrid_alpha = match r.get("hybrid_alpha") {
        None | Some(Value::Null) => 0.5,
        Some(v) => match v.as_f64() {
            Some(a) if (0.0..=1.0).contains(&a) => a,
            _ => return Err(err("hybrid_alpha", "must be a number between 0 and 1")),
        },
    };
    let filters = match r.get("filters") {
        None | Some(Value::Null) => Filters::default(),
        Some(Value::Object(bag)) => Filters::parse(bag)
            .map_err(|e| ValidationError::new(format!("retrieval.{}", e.field), e.rule))?,
        Some(_) => return Err(err("filters", "must be an object")),
    };
    let index_version = match r.get("index_version") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Some(n),
            _ => return Err(err("index_version", "must be a positive integer")),
        },
    };
    Ok((
        index,
        SearchRequest {
            filters,
            method,
            preprocessing,
            hybrid_alpha,
            index_version,
            ..SearchRequest::new(query, method, top_k)
        },
    ))
}

fn enum_field<T: serde::de::DeserializeOwned + Default>(
    r: &Map<String, Value>,
    field: &str,
    allowed: &str,
) -> Result<T, ValidationError> {
    match r.get(field) {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|_| {
            ValidationError::new(
                format!("retrieval.{field}"),
                format!("must be one of {allowed}"),
            )
        }),
    }
}

fn method_name(m: SearchMethod) -> &'static str {
    match m {
        SearchMethod::Semantic => "semantic",
        SearchMethod::Keyword => "keyword",
        SearchMethod::Hybrid => "hybrid",
    }
}

fn kind_name(k: RelevanceKind) -> &'static str {
    match k {
        RelevanceKind::Similarity => "similarity",
        RelevanceKind::KeywordScore => "keyword_score",
        RelevanceKind::HybridScore => "hybrid_score",
    }
}

/// Renders the `{"retrieval_calls": [...]}` response.
pub fn render_response(
    index: &IndexName,
    request: &SearchRequest,
    result: &SearchResult,
    query_id: &str,
    latency_ms: f64,
) -> Value {
    let mut call = Map::new();
    call.insert("index".into(), json!(index.as_str()));
    call.insert("query".into(), json!(result.query));
    call.insert("top_k".into(), json!(request.top_k));
    call.insert("search_method".into(), json!(method_name(request.method)));
    call.insert(
        "query_preprocessing".into(),
        json!(match request.preprocessing {
            QueryPreprocessing::None => "none",
            QueryPreprocessing::Normalize => "normalize",
        }),
    );
    if request.method == SearchMethod::Hybrid {
        call.insert("hybrid_alpha".into(), json!(request.hybrid_alpha));
    }
    call.insert("result_count".into(), json!(result.hits.len()));
    call.insert(
        "results".into(),
        Value::Array(result.hits.iter().map(render_hit).collect()),
    );
    call.insert("index_version".into(), json!(result.index_version));
    call.insert("query_id".into(), json!(query_id));
    call.insert("latency_ms".into(), json!(latency_ms));
    json!({ "retrieval_calls": [Value::Object(call)] })
}

fn render_hit(hit: &SearchHit) -> Value {
    let mut item = Map::new();
    item.insert("id".into(), json!(hit.row.chunk_id));
    item.insert("text".into(), json!(hit.row.text));
    item.insert("metadata".into(), Value::Object(chunk_metadata(&hit.row)));
    item.insert("score".into(), json!(hit.score));
    item.insert("score_kind".into(), json!(kind_name(hit.kind)));
    item.insert("relevance_score".into(), json!(hit.score));
    item.insert("relevance_kind".into(), json!(kind_name(hit.kind)));
    if hit.semantic_score.is_some() || hit.keyword_score.is_some() {
        let mut c = Map::new();
        if let Some(s) = hit.semantic_score {
            c.insert("semantic_score".into(), json!(s));
        }
        if let Some(k) = hit.keyword_score {
            c.insert("keyword_score".into(), json!(k));
        }
        item.insert("relevance_components".into(), Value::Object(c));
    }
    Value::Object(item)
}

/// The built-in metadata of contract 000 (every one present; `page_number` only when known),
/// then the chunk's citation fields, the document fields and the custom metadata.
pub fn chunk_metadata(row: &crate::index::ChunkRow) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("knowledge_base_id".into(), json!(row.knowledge_base_id));
    m.insert("document_id".into(), json!(row.document_id));
    m.insert("chunk_index".into(), json!(row.chunk_index));
    m.insert("title".into(), json!(row.title));
    m.insert("source_type".into(), json!(row.source_type));
    m.insert("source_name".into(), json!(row.source_name));
    m.insert("uri".into(), json!(row.uri));
    m.insert("source_id".into(), json!(row.source_id));
    m.insert("source_path".into(), json!(row.source_path));
    m.insert("managed_by_source".into(), json!(row.managed_by_source));
    if let Some(p) = row.page_number {
        m.insert("page_number".into(), json!(p));
    }
    m.insert("section_path".into(), json!(row.section_path));
    m.insert(
        "offsets".into(),
        json!({"start": row.offset_start, "end": row.offset_end}),
    );
    m.insert("project_id".into(), json!(row.project_id));
    m.insert("tags".into(), json!(row.tags));
    m.insert("updated_at".into(), json!(row.updated_at));
    for (k, v) in &row.metadata {
        m.entry(k.clone()).or_insert_with(|| v.clone());
    }
    m
}

/// The structured error body every edge returns: `{"error": {"code", "message", "field"?}}`.
pub fn render_error(e: &EngineError) -> Value {
    let (code, field) = error_code(e);
    let mut body = json!({"error": {"code": code, "message": e.to_string()}});
    if let Some(f) = field {
        body["error"]["field"] = json!(f);
    }
    if let EngineError::VersionUnavailable { oldest, latest, .. } = e {
        body["error"]["oldest_available_version"] = json!(oldest);
        body["error"]["latest_version"] = json!(latest);
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
        Ok(result) => super::Reply::ok(
            render_response(
                &name,
                &request,
                &result,
                &uuid::Uuid::new_v4().to_string(),
                started.elapsed().as_secs_f64() * 1000.0,
            ),
            result.index_version,
        ),
        Err(e) => super::error_reply(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let body = render_error(&e);
        assert_eq!(body["error"]["code"], "version_unavailable");
        assert_eq!(body["error"]["oldest_available_version"], 7);
    }
}
