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

pub use super::wire::c003::MAX_PARENT_CHARS;
use super::wire::c003::{
    HybridParameters, MatchMeta, MatchParent, MatchSource, RetrieveInputBody, RetrieveMatch,
    RetrieveMeta, RetrieveOutput, RetrieveRouting,
};
use super::{wire, Reply};
use crate::engine::{Engine, EngineError};
use crate::index::ChunkRow;
use crate::model::IndexName;
use crate::retrieval::{Candidates, Filters, FoundBy, SearchHit, SearchMethod, SearchRequest};
pub use crate::store::filters::Visibility;

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

/// The message a field of `RetrieveInput` gives when serde cannot read its value.
fn input_rule(field: &str) -> String {
    match field {
        "filters" => "filters must be a mapping when provided".into(),
        "hybrid" => "state.hybrid must be a mapping".into(),
        "visibility_override_allowed" => "visibility_override_allowed must be a boolean".into(),
        "top_k" => "top_k must be an integer".into(),
        other => format!("{other} must be a string"),
    }
}

/// The message a field of `hybrid` gives when serde cannot read its value.
fn hybrid_rule(field: &str) -> String {
    match field {
        "top_k" | "vec_limit" | "lex_limit" | "max_candidates" => {
            format!("hybrid.{field} must be an integer")
        }
        _ => format!("hybrid.{field} must be a number"),
    }
}

/// Contract 003 speaks in messages, not fields: the rule of a refusal is the whole message.
fn read<T: serde::de::DeserializeOwned + schemars::JsonSchema + 'static>(
    body: &Value,
    prefix: &str,
    rule: &dyn Fn(&str) -> String,
) -> Result<T, RetrieveError> {
    wire::read_as(
        body,
        prefix,
        &|key| format!("Unknown hybrid parameter(s): {key}"),
        rule,
        // `hybrid` is the only required key.
        &|_| "state must include a 'hybrid' configuration".into(),
    )
    .map_err(|e| input(e.rule))
}

/// `process`, `doc_class`, `workflow_id`: trimmed (and lower-cased when `lower`); empty is
/// unset.
fn selector(given: Option<String>, lower: bool) -> Option<String> {
    let t = given?.trim().to_string();
    (!t.is_empty()).then(|| if lower { t.to_lowercase() } else { t })
}

pub fn parse_request(body: &Value) -> Result<RetrieveInput, RetrieveError> {
    if !body.is_object() {
        return Err(input("RetrieveInput must be a mapping"));
    }
    let given: RetrieveInputBody = read(body, "", &input_rule)?;
    let h = match given.hybrid {
        None | Some(Value::Null) => {
            return Err(input("state must include a 'hybrid' configuration"))
        }
        Some(Value::Object(h)) => h,
        Some(_) => return Err(input(input_rule("hybrid"))),
    };
    // Every unknown key is named, sorted (the reader would name only the first).
    let known = wire::fields::<HybridParameters>();
    let mut unknown: Vec<&str> = h
        .keys()
        .map(String::as_str)
        .filter(|k| !known.iter().any(|f| f == k))
        .collect();
    if !unknown.is_empty() {
        unknown.sort_unstable();
        return Err(input(format!(
            "Unknown hybrid parameter(s): {}",
            unknown.join(", ")
        )));
    }
    let p: HybridParameters = read(&Value::Object(h), "hybrid.", &hybrid_rule)?;
    let unit = |x: f64| x.clamp(0.0, 1.0);
    let top_k = given.top_k.or(p.top_k).unwrap_or(5).clamp(1, 10) as usize;
    let vec_limit = p.vec_limit.unwrap_or(50).max(1) as usize;
    let lex_limit = p.lex_limit.unwrap_or(50).max(1) as usize;
    let max_candidates = p
        .max_candidates
        .map_or(vec_limit.max(lex_limit), |n| n.max(1) as usize)
        .max(vec_limit)
        .max(lex_limit)
        .max(top_k);
    let hybrid = Hybrid {
        alpha: unit(p.alpha.unwrap_or(0.7)),
        min_sim: unit(p.min_sim.unwrap_or(0.15)),
        top_k,
        vec_limit,
        lex_limit,
        trgm_limit: p.trgm_limit.map(unit),
        max_candidates,
        diversify_strength: unit(p.diversify_strength.unwrap_or(0.3)),
    };
    let visibility_requested = match given.visibility {
        None => Visibility::Active,
        Some(s) => match s.trim().to_ascii_lowercase().as_str() {
            "" | "active" => Visibility::Active,
            "all" => Visibility::All,
            "deleted" => Visibility::Deleted,
            other => {
                return Err(input(format!(
                    "visibility must be one of active, all, deleted (got {other:?})"
                )))
            }
        },
    };
    Ok(RetrieveInput {
        query: given.query.unwrap_or_default(),
        filters: given.filters.unwrap_or_default(),
        process: selector(given.process, true),
        doc_class: selector(given.doc_class, true),
        collection_id: selector(given.collection_id, false),
        workflow_id: selector(given.workflow_id, true),
        visibility_requested,
        visibility_override_allowed: given.visibility_override_allowed,
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
    let snapshot = handle.reader().snapshot(Some(version)).await?;
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

fn render_match(hit: &SearchHit, document: &[ChunkRow]) -> RetrieveMatch {
    let row = &hit.row;
    // One parent per enclosing section, outermost first, with a stable id.
    let parents: Vec<MatchParent> = (0..row.section_path.len())
        .map(|depth| {
            let path = &row.section_path[..=depth];
            let id = hex::encode(
                &Sha256::digest(
                    format!("{}\u{0}{}", row.document_id, path.join("\u{0}")).as_bytes(),
                )[..8],
            );
            MatchParent {
                id: format!("section-{id}"),
                heading: path[depth].clone(),
                content: section_text(document, path),
            }
        })
        .collect();
    RetrieveMatch {
        id: row.document_id.clone(),
        text: row.text.clone(),
        score: hit.score,
        source: match hit.found_by {
            FoundBy::Semantic => MatchSource::Vector,
            FoundBy::Keyword => MatchSource::Lexical,
            FoundBy::Both => MatchSource::Hybrid,
        },
        hash: hex::encode(Sha256::digest(row.text.as_bytes())),
        citation: citation(row),
        meta: MatchMeta {
            metadata: super::wire::chunk_metadata::ChunkMetadata::of(row),
            chunk_id: row.chunk_id.clone(),
            parent_ids: parents.iter().map(|p| p.id.clone()).collect(),
            parents,
        },
    }
}

pub fn error_reply(e: &RetrieveError) -> Reply {
    let (status, code) = match e {
        RetrieveError::Input(_) => (400, "InputError"),
        RetrieveError::NotFound => (404, "NotFoundError"),
        RetrieveError::Engine(t) => (super::status_of(t.code), t.code),
    };
    Reply {
        status,
        body: wire::error::ErrorBody::new(code, e.to_string()).to_value(),
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
    // Contract 003 states no fusion of its own: the index's applies.
    request.fusion = engine.index_fusion(index).await;
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
    let matches: Vec<RetrieveMatch> = hits
        .iter()
        .map(|h| {
            let rows = documents
                .get(&h.row.document_id)
                .map_or(&[][..], Vec::as_slice);
            render_match(h, rows)
        })
        .collect();
    let meta = RetrieveMeta {
        routing: RetrieveRouting {
            profile: "standard",
            vector_space_id: format!("rag/{index}"),
            process: input.process,
            doc_class: input.doc_class,
            collection_id: input.collection_id,
            workflow_id: input.workflow_id,
        },
        took_ms: started.elapsed().as_millis() as u64,
        alpha: h.alpha,
        min_sim: h.min_sim,
        top_k_effective: h.top_k,
        matches_returned: matches.len(),
        max_candidates_effective: h.max_candidates,
        vector_candidates: counts.0,
        lexical_candidates: counts.1,
        deleted_matches_blocked: blocked,
        visibility_effective: visibility.into(),
        diversify_strength: h.diversify_strength,
    };
    Ok(Reply::typed(&RetrieveOutput { matches, meta }, version))
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
    fn every_refusal_keeps_its_wording() {
        let hybrid = |h: Value| json!({"query": "x", "hybrid": h});
        let with = |k: &str, v: Value| {
            let mut b = json!({"query": "x", "hybrid": {}});
            b[k] = v;
            b
        };
        let mut cases = vec![
            (json!([1]), "RetrieveInput must be a mapping".to_string()),
            (json!("x"), "RetrieveInput must be a mapping".into()),
            (with("query", json!(5)), "query must be a string".into()),
            (
                with("filters", json!("a")),
                "filters must be a mapping when provided".into(),
            ),
            (
                with("filters", json!([1])),
                "filters must be a mapping when provided".into(),
            ),
            (
                json!({"query": "x"}),
                "state must include a 'hybrid' configuration".into(),
            ),
            (
                json!({"query": "x", "hybrid": null}),
                "state must include a 'hybrid' configuration".into(),
            ),
            (hybrid(json!([])), "state.hybrid must be a mapping".into()),
            (hybrid(json!("x")), "state.hybrid must be a mapping".into()),
            (
                hybrid(json!({"zeta": 1, "alpha": 0.5, "foo": 2})),
                "Unknown hybrid parameter(s): foo, zeta".into(),
            ),
            (with("top_k", json!("3")), "top_k must be an integer".into()),
            (with("top_k", json!(1.5)), "top_k must be an integer".into()),
            (
                with("visibility", json!(3)),
                "visibility must be a string".into(),
            ),
            (
                with("visibility", json!("bogus")),
                "visibility must be one of active, all, deleted (got \"bogus\")".into(),
            ),
        ];
        for key in ["top_k", "vec_limit", "lex_limit", "max_candidates"] {
            for bad in [json!("3"), json!(2.5), json!(true)] {
                cases.push((
                    hybrid(json!({key: bad})),
                    format!("hybrid.{key} must be an integer"),
                ));
            }
        }
        for key in ["alpha", "min_sim", "trgm_limit", "diversify_strength"] {
            for bad in [json!("high"), json!([0.5]), json!(false)] {
                cases.push((
                    hybrid(json!({key: bad})),
                    format!("hybrid.{key} must be a number"),
                ));
            }
        }
        for key in ["process", "doc_class", "collection_id", "workflow_id"] {
            cases.push((with(key, json!(1)), format!("{key} must be a string")));
        }
        for bad in [json!("maybe"), json!(2), json!([]), json!(0.5)] {
            cases.push((
                with("visibility_override_allowed", bad),
                "visibility_override_allowed must be a boolean".into(),
            ));
        }
        for (body, message) in cases {
            let e = parse(body.clone()).expect_err(&body.to_string());
            assert_eq!(e, RetrieveError::Input(message), "{body}");
        }
    }

    #[test]
    fn the_contract_leniencies_hold() {
        let i = parse(
            json!({"hybrid": {"top_k": 3.0, "vec_limit": 7.0, "alpha": 1},
            "visibility": null, "visibility_override_allowed": "YES", "bogus": [1],
            "process": "  Review ", "collection_id": " HR ", "workflow_id": "  "}),
        )
        .unwrap();
        assert_eq!((i.hybrid.top_k, i.hybrid.vec_limit), (3, 7));
        assert_eq!(i.hybrid.alpha, 1.0);
        assert_eq!(i.visibility_requested, Visibility::Active);
        assert_eq!(i.visibility_override_allowed, Some(true));
        assert_eq!(i.process.as_deref(), Some("review"));
        assert_eq!(i.collection_id.as_deref(), Some("HR"));
        assert_eq!(i.workflow_id, None);
        let flag = |v: Value| {
            parse(json!({"hybrid": {}, "visibility_override_allowed": v}))
                .unwrap()
                .visibility_override_allowed
        };
        assert_eq!(flag(json!(1)), Some(true));
        assert_eq!(flag(json!(1.0)), Some(true));
        assert_eq!(flag(json!(0.0)), Some(false));
        assert_eq!(flag(json!(" Off ")), Some(false));
        assert_eq!(flag(json!("off")), Some(false));
        assert_eq!(flag(json!("")), Some(false));
        assert_eq!(flag(Value::Null), None);
        assert!(parse(json!({"hybrid": {}, "visibility_override_allowed": 0.5})).is_err());
        let nulls = parse(json!({"hybrid": {"alpha": null, "top_k": null}})).unwrap();
        assert_eq!((nulls.hybrid.alpha, nulls.hybrid.top_k), (0.7, 5));
        let top = parse(json!({"hybrid": {"top_k": 2}, "top_k": 4.0})).unwrap();
        assert_eq!(top.hybrid.top_k, 4);
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
