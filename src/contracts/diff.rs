//! Diff: `POST /v1/indexes/{index}/diff`, and the bus with header `contract: diff`. One query
//! (contract 002's shape, or 000's) answered at two versions → what entered the results,
//! what left, what moved, and the writes in between that caused it (`retrieval::diff`).

use serde_json::Value;

use super::explain::{object_with, query, reply, search_request};
use super::Reply;
use crate::engine::Engine;
use crate::model::{IndexName, ValidationError};

const FIELDS: &[&str] = &["contract", "request", "from_version", "to_version"];

fn version(obj: &serde_json::Map<String, Value>, field: &str) -> Result<u64, ValidationError> {
    match obj.get(field) {
        Some(v) => v
            .as_u64()
            .filter(|v| *v >= 1)
            .ok_or_else(|| ValidationError::new(field, "must be an index version (1 or more)")),
        None => Err(ValidationError::new(field, "is required")),
    }
}

/// Answers a diff request on `index`.
pub async fn answer(engine: &Engine, index: &IndexName, body: &Value) -> Reply {
    let parsed = (|| {
        let obj = object_with(body, FIELDS, "diff")?;
        Ok::<_, ValidationError>((
            query(obj)?,
            version(obj, "from_version")?,
            version(obj, "to_version")?,
        ))
    })();
    let (query, from, to) = match parsed {
        Ok(p) => p,
        Err(e) => return super::error_reply(&e.into()),
    };
    if query.request.get("index_version").is_some()
        || query.request.pointer("/retrieval/index_version").is_some()
    {
        let e = ValidationError::new(
            "request.index_version",
            "is set by from_version and to_version",
        );
        return super::error_reply(&e.into());
    }
    // A graph query reads the graph of one version: the two answers would not be the ones
    // each version gives.
    if query.request.get("graph_depth").is_some() {
        let e = ValidationError::new(
            "request.graph_depth",
            "is not compared: each version has its own graph",
        );
        return super::error_reply(&e.into());
    }
    let request = match search_request(engine, index, &query).await {
        Ok(r) => r,
        Err(e) => return super::error_reply(&e),
    };
    match engine.diff(index, &request, from, to).await {
        Ok(diff) => reply(index, &query, &diff, diff.to_version),
        Err(e) => super::error_reply(&e),
    }
}
