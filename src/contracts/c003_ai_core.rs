//! Contract 003, "Retrieval Contracts" (AI Core): `RetrieveInput` → `RetrieveOutput {matches,
//! meta}` at `POST /v1/ai/rag/query/`.
//!
//! Validation follows the contract word for word: `filters` must be a mapping
//! (`filters must be a mapping when provided`), `hybrid` is required and must be a mapping,
//! unknown `hybrid` keys are rejected (`Unknown hybrid parameter(s): a, b`), numbers are
//! clamped, never rejected (`alpha`, `min_sim`, `diversify_strength`, `trgm_limit` to 0..1,
//! `top_k` to 1..10, `vec_limit`/`lex_limit` to ≥ 1, `max_candidates` to ≥ top_k, vec_limit,
//! lex_limit), and the normalised values are what `meta` reports. `query` is not trimmed.
//!
//! Visibility: `active` (default), `all` and `deleted` need the override; without it `active`
//! is enforced and `rag.visibility.override_denied` is logged. Deletes are soft, so `deleted`
//! and `all` find deleted documents; `deleted_matches_blocked` counts the deleted chunks that
//! would have been among the matches had `active` not been enforced.
//!
//! Pools are reported as the contract normalises them; the engine fetches at most
//! [`crate::retrieval::search::MAX_POOL`] candidates per stage whatever they say.
//!
//! An empty result is `NotFoundError` (404) unless the router is tenant-scoped
//! (`contracts.tenant_scoped`).

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::Reply;
use crate::engine::{Engine, EngineError};
use crate::index::ChunkRow;
use crate::model::IndexName;
use crate::retrieval::{Candidates, Filters, FoundBy, SearchHit, SearchMethod, SearchRequest};
pub use crate::store::filters::Visibility;

/// The only keys `hybrid` accepts.
pub const HYBRID_KEYS: &[&str] = &[
    "alpha",
    "min_sim",
    "top_k",
    "vec_limit",
    "lex_limit",
    "trgm_limit",
    "max_candidates",
    "diversify_strength",
];

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RetrieveError {
    #[error("{0}")]
    Input(String),
    #[error("No matching documents")]
    NotFound,
    #[error(transparent)]
    Engine(#[from] EngineErrorText),
}

/// An engine failure, kept as its code and text (the adapter maps it once).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct EngineErrorText {
    pub code: &'static str,
    pub message: String,
}

/// `HybridParameters` after normalisation.
#[derive(Debug, Clone, PartialEq)]
pub struct Hybrid {
    pub alpha: f64,
    pub min_sim: f64,
    pub top_k: usize,
    pub vec_limit: usize,
    pub lex_limit: usize,
    pub trgm_limit: Option<f64>,
    pub max_candidates: usize,
    pub diversify_strength: f64,
}

/// `RetrieveInput` after validation and normalisation.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrieveInput {
    pub query: String,
    pub filters: Map<String, Value>,
    pub process: Option<String>,
    pub doc_class: Option<String>,
    pub collection_id: Option<String>,
    pub workflow_id: Option<String>,
    pub visibility_requested: Visibility,
    pub visibility_override_allowed: Option<bool>,
    pub hybrid: Hybrid,
}

fn input(message: impl Into<String>) -> RetrieveError {
    RetrieveError::Input(message.into())
}

fn number(h: &Map<String, Value>, key: &str) -> Result<Option<f64>, RetrieveError> {
    match h.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(input(format!("hybrid.{key} must be a number"))),
    }
}

fn integer(h: &Map<String, Value>, key: &str) -> Result<Option<i64>, RetrieveError> {
    match h.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .map(Some)
            .ok_or_else(|| input(format!("hybrid.{key} must be an integer"))),
        Some(_) => Err(input(format!("hybrid.{key} must be an integer"))),
    }
}

/// `process`, `doc_class`, `workflow_id`: lower-cased and trimmed; empty is unset.
fn selector(
    body: &Map<String, Value>,
    key: &str,
    lower: bool,
) -> Result<Option<String>, RetrieveError> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let t = s.trim();
            Ok((!t.is_empty()).then(|| {
                if lower {
                    t.to_lowercase()
                } else {
                    t.to_string()
                }
            }))
        }
        Some(_) => Err(input(format!("{key} must be a string"))),
    }
}

/// `coerce_bool_flag`: booleans, and the usual spellings of them.
fn bool_flag(v: &Value) -> Result<Option<bool>, RetrieveError> {
    match v {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        Value::Number(n) if n.as_i64() == Some(1) => Ok(Some(true)),
        Value::Number(n) if n.as_i64() == Some(0) => Ok(Some(false)),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Ok(Some(true)),
            "false" | "0" | "no" | "off" | "" => Ok(Some(false)),
            _ => Err(input("visibility_override_allowed must be a boolean")),
        },
        _ => Err(input("visibility_override_allowed must be a boolean")),
    }
}

pub fn parse_request(body: &Value) -> Result<RetrieveInput, RetrieveError> {
    let obj = body
        .as_object()
        .ok_or_else(|| input("RetrieveInput must be a mapping"))?;
    let query = match obj.get("query") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(input("query must be a string")),
    };
    let filters = match obj.get("filters") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(input("filters must be a mapping when provided")),
    };
    let h = match obj.get("hybrid") {
        None | Some(Value::Null) => {
            return Err(input("state must include a 'hybrid' configuration"))
        }
        Some(Value::Object(m)) => m,
        Some(_) => return Err(input("state.hybrid must be a mapping")),
    };
    let mut unknown: Vec<&str> = h
        .keys()
        .map(String::as_str)
        .filter(|k| !HYBRID_KEYS.contains(k))
        .collect();
    if !unknown.is_empty() {
        unknown.sort_unstable();
        return Err(input(format!(
            "Unknown hybrid parameter(s): {}",
            unknown.join(", ")
        )));
    }
    let unit = |x: f64| x.clamp(0.0, 1.0);
    let mut top_k = integer(h, "top_k")?.unwrap_or(5).clamp(1, 10) as usize;
    if let Some(v) = obj.get("top_k").filter(|v| !v.is_null()) {
        let n = v
            .as_i64()
            .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .ok_or_else(|| input("top_k must be an integer"))?;
        top_k = n.clamp(1, 10) as usize;
    }
    let vec_limit = integer(h, "vec_limit")?.unwrap_or(50).max(1) as usize;
    let lex_limit = integer(h, "lex_limit")?.unwrap_or(50).max(1) as usize;
    let max_candidates = integer(h, "max_candidates")?
        .map_or(vec_limit.max(lex_limit), |n| n.max(1) as usize)
        .max(vec_limit)
        .max(lex_limit)
        .max(top_k);
    let hybrid = Hybrid {
        alpha: unit(number(h, "alpha")?.unwrap_or(0.7)),
        min_sim: unit(number(h, "min_sim")?.unwrap_or(0.15)),
        top_k,
        vec_limit,
        lex_limit,
        trgm_limit: number(h, "trgm_limit")?.map(unit),
        max_candidates,
        diversify_strength: unit(number(h, "diversify_strength")?.unwrap_or(0.3)),
    };
    let visibility_requested = match obj.get("visibility") {
        None | Some(Value::Null) => Visibility::Active,
        Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "" | "active" => Visibility::Active,
            "all" => Visibility::All,
            "deleted" => Visibility::Deleted,
            other => {
                return Err(input(format!(
                    "visibility must be one of active, all, deleted (got {other:?})"
                )))
            }
        },
        Some(_) => return Err(input("visibility must be a string")),
    };
    Ok(RetrieveInput {
        query,
        filters,
        process: selector(obj, "process", true)?,
        doc_class: selector(obj, "doc_class", true)?,
        collection_id: selector(obj, "collection_id", false)?,
        workflow_id: selector(obj, "workflow_id", true)?,
        visibility_requested,
        visibility_override_allowed: match obj.get("visibility_override_allowed") {
            None => None,
            Some(v) => bool_flag(v)?,
        },
        hybrid,
    })
}

/// The visibility applied: an extended mode needs the override, which the request may ask for
/// only within what the caller's context (`contracts.visibility_override_allowed`) permits.
pub fn effective_visibility(input: &RetrieveInput, context_allows: bool) -> (Visibility, bool) {
    let allowed = input.visibility_override_allowed.unwrap_or(context_allows) && context_allows;
    match input.visibility_requested {
        Visibility::Active => (Visibility::Active, false),
        v if allowed => (v, false),
        _ => (Visibility::Active, true),
    }
}

/// `a · S.12 · Abschnitt b`: the source, the page, the innermost section.
pub fn citation(row: &ChunkRow) -> String {
    let mut parts = vec![row
        .title
        .clone()
        .or_else(|| row.source_name.clone())
        .or_else(|| row.uri.clone())
        .unwrap_or_else(|| row.document_id.clone())];
    if let Some(p) = row.page_number {
        parts.push(format!("S.{p}"));
    }
    if let Some(section) = row.section_path.last() {
        parts.push(format!("Abschnitt {section}"));
    }
    parts.join(" · ")
}

/// Longest `content` of a parent section, in characters: a parent gives context, and a
/// whole long chapter would crowd out the matches themselves.
pub const MAX_PARENT_CHARS: usize = 4000;

/// The live rows of each matched document, read once per document from the version the
/// matches came from, so that parents show their sections' text.
async fn documents_of(
    engine: &Engine,
    index: &IndexName,
    version: u64,
    hits: &[SearchHit],
) -> Result<std::collections::BTreeMap<String, Vec<ChunkRow>>, EngineError> {
    let ids: Vec<String> = hits.iter().map(|h| h.row.document_id.clone()).collect();
    let handle = engine.index(index).await?;
    let snapshot = handle.snapshot(Some(version)).await?;
    Ok(handle
        .lance()
        .live_documents(&snapshot.dataset, &ids)
        .await?)
}

/// The text of the section at `path` of a document: its chunks stitched, overlap removed,
/// cut at [`MAX_PARENT_CHARS`].
fn section_text(rows: &[ChunkRow], path: &[String]) -> String {
    use super::hydrate::{section_run, stitch};
    let text = stitch(&section_run(rows, path));
    match text.char_indices().nth(MAX_PARENT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn render_match(hit: &SearchHit, document: &[ChunkRow]) -> Value {
    let row = &hit.row;
    let mut meta = super::c000_retrieval_calls::chunk_metadata(row);
    // One parent per enclosing section, outermost first, with a stable id.
    let parents: Vec<Value> = (0..row.section_path.len())
        .map(|depth| {
            let path = &row.section_path[..=depth];
            let id = hex::encode(
                &Sha256::digest(
                    format!("{}\u{0}{}", row.document_id, path.join("\u{0}")).as_bytes(),
                )[..8],
            );
            json!({
                "id": format!("section-{id}"),
                "heading": path[depth],
                "content": section_text(document, path),
            })
        })
        .collect();
    meta.insert("chunk_id".into(), json!(row.chunk_id));
    meta.insert(
        "parent_ids".into(),
        json!(parents.iter().map(|p| p["id"].clone()).collect::<Vec<_>>()),
    );
    meta.insert("parents".into(), json!(parents));
    json!({
        "id": row.document_id,
        "text": row.text,
        "score": hit.score,
        "source": match hit.found_by {
            FoundBy::Semantic => "vector",
            FoundBy::Keyword => "lexical",
            FoundBy::Both => "hybrid",
        },
        "hash": hex::encode(Sha256::digest(row.text.as_bytes())),
        "citation": citation(row),
        "meta": meta,
    })
}

pub fn error_reply(e: &RetrieveError) -> Reply {
    let (status, code) = match e {
        RetrieveError::Input(_) => (400, "InputError"),
        RetrieveError::NotFound => (404, "NotFoundError"),
        RetrieveError::Engine(t) => (super::status_of(t.code), t.code),
    };
    Reply {
        status,
        body: json!({"error": {"code": code, "message": e.to_string()}}),
        index_version: None,
    }
}

fn engine_error(e: EngineError) -> RetrieveError {
    match e {
        EngineError::Invalid(v) => input(format!("{}: {}", v.field, v.rule)),
        other => RetrieveError::Engine(EngineErrorText {
            code: super::c000_retrieval_calls::error_code(&other).0,
            message: other.to_string(),
        }),
    }
}

/// `override_allowed` is the caller's context: whether it may see `all`/`deleted` at all.
pub async fn answer(
    engine: &Engine,
    index: &IndexName,
    body: &Value,
    override_allowed: bool,
) -> Reply {
    match retrieve(engine, index, body, override_allowed).await {
        Ok(reply) => reply,
        Err(e) => error_reply(&e),
    }
}

async fn retrieve(
    engine: &Engine,
    index: &IndexName,
    body: &Value,
    override_allowed: bool,
) -> Result<Reply, RetrieveError> {
    let started = std::time::Instant::now();
    let input = parse_request(body)?;
    let max_query_bytes = engine.config().limits.max_query_bytes;
    if input.query.len() > max_query_bytes {
        return Err(RetrieveError::Input(format!(
            "query must be at most {max_query_bytes} bytes (limits.max_query_bytes)"
        )));
    }
    let contracts = &engine.config().contracts;
    let (visibility, denied) = effective_visibility(&input, override_allowed);
    if denied {
        if let Some(m) = crate::telemetry::metrics() {
            m.visibility_override_denied_total
                .with_label_values(&[index.as_str()])
                .inc();
        }
        tracing::warn!(
            event = "rag.visibility.override_denied",
            requested = input.visibility_requested.name(),
            index = %index,
            "visibility override denied; enforcing active"
        );
    }
    let mut bag: Map<String, Value> = input
        .filters
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(c) = &input.collection_id {
        bag.insert("collection_id".into(), json!(c));
    }
    let mut filters = Filters::parse(&bag).map_err(|e| input_error(&e))?;
    filters.visibility = visibility;
    let h = &input.hybrid;
    let mut request = SearchRequest::new(input.query.clone(), SearchMethod::Hybrid, h.top_k);
    request.filters = filters;
    request.hybrid_alpha = h.alpha;
    request.candidates = Candidates {
        semantic: Some(h.vec_limit),
        keyword: Some(h.lex_limit),
        max: Some(h.max_candidates),
    };
    request.min_score = Some(h.min_sim);
    request.diversify = h.diversify_strength;
    // The engine refuses an empty query; the contract runs the call anyway, and an empty
    // query matches nothing.
    let (hits, counts, version) = if input.query.trim().is_empty() {
        (Vec::new(), (0, 0), None)
    } else {
        match engine.search(index, &request).await {
            Ok(r) => (
                r.hits,
                (r.semantic_candidates, r.keyword_candidates),
                Some(r.index_version),
            ),
            Err(EngineError::IndexNotFound(_)) => (Vec::new(), (0, 0), None),
            Err(e) => return Err(engine_error(e)),
        }
    };
    let blocked = match version {
        Some(v) if visibility == Visibility::Active => {
            deleted_matches_blocked(engine, index, &request, v)
                .await
                .map_err(engine_error)?
        }
        _ => 0,
    };
    if hits.is_empty() && !contracts.tenant_scoped {
        return Err(RetrieveError::NotFound);
    }
    let documents = match version {
        Some(v) if !hits.is_empty() => documents_of(engine, index, v, &hits)
            .await
            .map_err(engine_error)?,
        _ => Default::default(),
    };
    let matches: Vec<Value> = hits
        .iter()
        .map(|h| {
            let rows = documents
                .get(&h.row.document_id)
                .map_or(&[][..], Vec::as_slice);
            render_match(h, rows)
        })
        .collect();
    let body = json!({
        "matches": matches,
        "meta": {
            "routing": {
                "profile": "standard",
                "vector_space_id": format!("rag/{index}"),
                "process": input.process,
                "doc_class": input.doc_class,
                "collection_id": input.collection_id,
                "workflow_id": input.workflow_id,
            },
            "took_ms": started.elapsed().as_millis() as u64,
            "alpha": h.alpha,
            "min_sim": h.min_sim,
            "top_k_effective": h.top_k,
            "matches_returned": matches.len(),
            "max_candidates_effective": h.max_candidates,
            "vector_candidates": counts.0,
            "lexical_candidates": counts.1,
            "deleted_matches_blocked": blocked,
            "visibility_effective": visibility.name(),
            "diversify_strength": h.diversify_strength,
        }
    });
    Ok(Reply {
        status: 200,
        body,
        index_version: version,
    })
}

/// Deleted chunks that the same search over every row would have returned among its matches:
/// what `active` withheld. Runs a second search only when the snapshot may hold deleted rows.
async fn deleted_matches_blocked(
    engine: &Engine,
    index: &IndexName,
    request: &SearchRequest,
    version: u64,
) -> Result<usize, EngineError> {
    if !engine.may_hold_deleted(index, version).await? {
        return Ok(0);
    }
    let mut everything = request.clone();
    everything.filters.visibility = Visibility::All;
    everything.index_version = Some(version);
    let r = engine.search(index, &everything).await?;
    Ok(r.hits.iter().filter(|h| h.row.is_deleted()).count())
}

fn input_error(e: &crate::model::ValidationError) -> RetrieveError {
    input(format!("{}: {}", e.field, e.rule))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: Value) -> Result<RetrieveInput, RetrieveError> {
        parse_request(&v)
    }

    #[test]
    fn the_contract_example_request_parses_to_its_normalised_values() {
        let i = parse(json!({
            "query": "Wie lautet die Kündigungsfrist?",
            "filters": {"project": "compliance", "case_id": "case-7"},
            "process": "review", "doc_class": "policy", "collection_id": "hr",
            "visibility": "all", "visibility_override_allowed": true,
            "hybrid": {"alpha": 0.55, "min_sim": 0.35, "top_k": 3, "vec_limit": 10,
                       "lex_limit": 8, "diversify_strength": 0.4}
        }))
        .unwrap();
        assert_eq!(
            i.hybrid,
            Hybrid {
                alpha: 0.55,
                min_sim: 0.35,
                top_k: 3,
                vec_limit: 10,
                lex_limit: 8,
                trgm_limit: None,
                max_candidates: 10,
                diversify_strength: 0.4
            }
        );
        assert_eq!(effective_visibility(&i, true), (Visibility::All, false));
        assert_eq!(i.process.as_deref(), Some("review"));
    }

    #[test]
    fn defaults_when_hybrid_is_empty() {
        let h = parse(json!({"query": "x", "hybrid": {}})).unwrap().hybrid;
        assert_eq!(
            h,
            Hybrid {
                alpha: 0.7,
                min_sim: 0.15,
                top_k: 5,
                vec_limit: 50,
                lex_limit: 50,
                trgm_limit: None,
                max_candidates: 50,
                diversify_strength: 0.3
            }
        );
    }

    #[test]
    fn numbers_are_clamped_never_rejected() {
        let h = |hy: Value| parse(json!({"query": "x", "hybrid": hy})).unwrap().hybrid;
        assert_eq!(h(json!({"top_k": 0})).top_k, 1);
        assert_eq!(h(json!({"top_k": 99})).top_k, 10);
        assert_eq!(h(json!({"alpha": 1.2})).alpha, 1.0);
        assert_eq!(h(json!({"alpha": -0.1})).alpha, 0.0);
        assert_eq!(h(json!({"min_sim": -0.1})).min_sim, 0.0);
        assert_eq!(h(json!({"vec_limit": 0})).vec_limit, 1);
        assert_eq!(h(json!({"lex_limit": -5})).lex_limit, 1);
        assert_eq!(h(json!({"diversify_strength": 2})).diversify_strength, 1.0);
        assert_eq!(h(json!({"trgm_limit": 3.0})).trgm_limit, Some(1.0));
        assert_eq!(
            h(json!({"max_candidates": 2, "top_k": 7, "vec_limit": 3, "lex_limit": 4}))
                .max_candidates,
            7
        );
        let top = |t: Value| {
            parse(json!({"query": "x", "hybrid": {"top_k": 3}, "top_k": t}))
                .unwrap()
                .hybrid
                .top_k
        };
        assert_eq!(top(json!(-3)), 1);
        assert_eq!(top(json!(25)), 10);
        assert_eq!(
            top(json!(4)),
            4,
            "the top-level top_k overrides hybrid.top_k"
        );
    }

    #[test]
    fn validation_messages_are_the_contracts() {
        let msg = |v: Value| parse(v).unwrap_err().to_string();
        assert_eq!(
            msg(json!({"query": "x", "hybrid": {}, "filters": "a"})),
            "filters must be a mapping when provided"
        );
        assert_eq!(
            msg(json!({"query": "x", "hybrid": {"zeta": 1, "foo": 2}})),
            "Unknown hybrid parameter(s): foo, zeta"
        );
        assert!(msg(json!({"query": "x"})).contains("hybrid"));
        assert!(msg(json!({"query": "x", "hybrid": []})).contains("hybrid must be a mapping"));
        assert!(
            msg(json!({"query": "x", "hybrid": {}, "visibility": "bogus"})).contains("visibility")
        );
        assert!(msg(json!({"query": "x", "hybrid": {"alpha": "high"}})).contains("hybrid.alpha"));
    }

    #[test]
    fn query_is_not_trimmed_and_may_be_empty() {
        assert_eq!(
            parse(json!({"query": "  a ", "hybrid": {}})).unwrap().query,
            "  a "
        );
        assert_eq!(parse(json!({"hybrid": {}})).unwrap().query, "");
    }

    #[test]
    fn an_extended_visibility_without_the_override_falls_back_to_active() {
        let i = parse(json!({"query": "x", "hybrid": {}, "visibility": "deleted"})).unwrap();
        assert_eq!(effective_visibility(&i, false), (Visibility::Active, true));
        assert_eq!(
            effective_visibility(&i, true),
            (Visibility::Deleted, false),
            "inherited from the context"
        );
        let asked = parse(json!({"query": "x", "hybrid": {}, "visibility": "ALL ",
            "visibility_override_allowed": "true"}))
        .unwrap();
        assert_eq!(
            effective_visibility(&asked, false),
            (Visibility::Active, true),
            "a request cannot grant itself more than its context allows"
        );
        let declined = parse(json!({"query": "x", "hybrid": {}, "visibility": "all",
            "visibility_override_allowed": false}))
        .unwrap();
        assert_eq!(
            effective_visibility(&declined, true),
            (Visibility::Active, true)
        );
    }

    #[test]
    fn citations_join_source_page_and_section() {
        let mut row = ChunkRow::new(
            "kb",
            &crate::model::Document {
                id: "d".into(),
                title: Some("Mitarbeiterhandbuch".into()),
                text: Some("t".into()),
                ..Default::default()
            },
            "h",
            crate::model::Chunk {
                chunk_id: crate::model::ChunkId("c".into()),
                document_id: "d".into(),
                chunk_index: 0,
                text: "t".into(),
                section_path: vec!["Teil A".into(), "Kündigungsfristen".into()],
                page_number: Some(12),
                offsets: crate::model::Offsets { start: 0, end: 1 },
            },
        );
        assert_eq!(
            citation(&row),
            "Mitarbeiterhandbuch · S.12 · Abschnitt Kündigungsfristen"
        );
        row.page_number = None;
        row.section_path.clear();
        assert_eq!(citation(&row), "Mitarbeiterhandbuch");
    }
}
