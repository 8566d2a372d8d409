//! Contract 004, "ADR 0004 — Retriever contract (v1)": `POST /v1/retrievers/{name}/retrieve`
//! with `{query, messages?}` → `[{id, content, source?, score, metadata}]`.
//!
//! Invariants: R1 read-only (a search, nothing written); R2 `messages` is accepted and
//! ignored (these retrievers rank against `query`); R3 `[]` is success; R4 errors are errors
//! (a non-2xx structured body, never a document); R5 ids are content-derived chunk ids; R6
//! every document has a score and the list is descending (ties by id); R7 one scale per
//! retriever (its method's, or the composite's fusion scale); R8 `source` is the citation
//! (`uri`, else `source_path`) when known; R9 `metadata` is opaque (contract 000's chunk
//! metadata); R10 no per-call options: any other request key is refused; R11 composites keep
//! all of the above.

use serde_json::{json, Value};

use super::wire::c004::{RetrievedDocument, RetrieverRequestBody, RetrieverResponse};
use super::wire::error::ErrorBody;
use super::wire::{self};
use super::Reply;
use crate::engine::{Engine, EngineError};
use crate::model::IndexName;
use crate::model::ValidationError;
use crate::retrieval::retrievers::{fuse, Retrieved, RetrieverConfig};
use crate::retrieval::{Filters, SearchMethod, SearchRequest};

/// Validates `{query, messages?}`.
pub fn parse_request(body: &Value) -> Result<String, ValidationError> {
    let request: RetrieverRequestBody = wire::read(
        body,
        "",
        &|_| {
            "is not a field of the retriever request; retrievers are configured by name, not \
             per call"
                .into()
        },
        &|field| match field {
            "messages" => "must be an array".into(),
            "query" => "must be a string".into(),
            _ => "must be an object".into(),
        },
    )?;
    Ok(request.query)
}

pub fn render(docs: &[Retrieved]) -> RetrieverResponse {
    RetrieverResponse(
        docs.iter()
            .map(|d| RetrievedDocument {
                id: d.id.clone(),
                content: d.row.text.clone(),
                source: d.row.source_uri(),
                score: d.score,
                metadata: super::wire::chunk_metadata::ChunkMetadata::of(&d.row),
            })
            .collect(),
    )
}

pub async fn answer(engine: &Engine, name: &str, body: &[u8]) -> Reply {
    if !engine.config().retrievers.contains_key(name) {
        return Reply {
            status: 404,
            body: ErrorBody::new(
                "retriever_not_found",
                format!("no retriever named {name} is configured"),
            )
            .field("name")
            .to_value(),
            index_version: None,
        };
    }
    let parsed = serde_json::from_slice::<Value>(body)
        .map_err(|e| ValidationError::new("body", format!("is not JSON: {e}")))
        .and_then(|v| parse_request(&v));
    let max_query_bytes = engine.config().limits.max_query_bytes;
    let parsed = parsed.and_then(|q| {
        if q.len() > max_query_bytes {
            Err(ValidationError::new(
                "query",
                format!("must be at most {max_query_bytes} bytes (limits.max_query_bytes)"),
            ))
        } else {
            Ok(q)
        }
    });
    let query = match parsed {
        Ok(q) => q,
        Err(e) => return super::error_reply(&EngineError::from(e)),
    };
    if query.trim().is_empty() {
        return Reply {
            status: 200,
            body: json!([]),
            index_version: None,
        };
    }
    match retrieve(engine, name, &query).await {
        Ok(docs) => Reply::typed(&render(&docs), None),
        Err(e) => super::error_reply(&e),
    }
}

/// Runs retriever `name`. Read-only: it only searches.
pub async fn retrieve(
    engine: &Engine,
    name: &str,
    query: &str,
) -> Result<Vec<Retrieved>, EngineError> {
    let all = &engine.config().retrievers;
    let r = all
        .get(name)
        .ok_or_else(|| EngineError::Internal(format!("no retriever named {name}")))?;
    if r.composite.is_empty() {
        return leaf(engine, r, query).await;
    }
    let mut children = Vec::with_capacity(r.composite.len());
    for child in &r.composite {
        children.push(Box::pin(retrieve(engine, child, query)).await?);
    }
    let weights: Vec<f64> = if r.weights.is_empty() {
        vec![1.0 / children.len() as f64; children.len()]
    } else {
        r.weights.clone()
    };
    let mut fused = fuse(&children, &weights, r.fusion);
    fused.truncate(r.top_k);
    Ok(fused)
}

async fn leaf(
    engine: &Engine,
    r: &RetrieverConfig,
    query: &str,
) -> Result<Vec<Retrieved>, EngineError> {
    let index = IndexName::parse(r.index.as_deref().unwrap_or_default())?;
    let mut request = SearchRequest::new(query, r.method.unwrap_or(SearchMethod::Hybrid), r.top_k);
    request.hybrid_alpha = r.alpha.unwrap_or(0.5);
    // Contract 004 states no fusion of its own: the index's applies.
    request.fusion = engine.index_fusion(&index).await;
    request.filters = Filters::parse(&r.filters)?;
    match engine.search(&index, &request).await {
        Ok(result) => Ok(result
            .hits
            .into_iter()
            .map(|h| Retrieved {
                id: h.row.chunk_id.clone(),
                score: h.score,
                row: h.row,
            })
            .collect()),
        // An index nobody has written to yet holds nothing: empty, not an error.
        Err(EngineError::IndexNotFound(_)) => Ok(Vec::new()),
        // A query that preprocessing leaves empty matches nothing.
        Err(EngineError::Invalid(v)) if v.field == "query" => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each refusal's field and wording, as the hand-written parser gave them before the wire
    /// types: clients match on them.
    #[test]
    fn every_refusal_keeps_its_wording() {
        let per_call = "is not a field of the retriever request; retrievers are configured by \
                        name, not per call";
        for (body, field, rule) in [
            (json!([]), "body", "must be an object"),
            (json!({"query": "q", "top_k": 3}), "top_k", per_call),
            (json!({}), "query", "is required"),
            (json!({"messages": []}), "query", "is required"),
            (json!({"query": 5}), "query", "must be a string"),
            (json!({"query": null}), "query", "must be a string"),
            (
                json!({"query": "q", "messages": "hi"}),
                "messages",
                "must be an array",
            ),
            (
                json!({"query": "q", "messages": {}}),
                "messages",
                "must be an array",
            ),
        ] {
            let e = parse_request(&body).unwrap_err();
            assert_eq!((e.field.as_str(), e.rule.as_str()), (field, rule), "{body}");
        }
        for body in [
            json!({"query": "q", "messages": null}),
            json!({"query": "q", "messages": [{"role": "user", "content": "hi"}, 3]}),
        ] {
            assert_eq!(parse_request(&body).unwrap(), "q", "{body}");
        }
    }
}
