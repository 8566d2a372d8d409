//! Diff: `POST /v1/indexes/{index}/diff`, and the bus with header `contract: diff`. One query
//! (contract 002's shape, or 000's) answered at two versions → what entered the results,
//! what left, what moved, and the writes in between that caused it (`retrieval::diff`).

use serde_json::Value;

use super::explain::{read, search_request, Query};
use super::wire::explain::{DiffRequestBody, DiffResponse};
use super::Reply;
use crate::engine::Engine;
use crate::model::{IndexName, ValidationError};

/// Answers a diff request on `index`.
pub async fn answer(engine: &Engine, index: &IndexName, body: &Value) -> Reply {
    let given: DiffRequestBody = match read(body, "diff") {
        Ok(given) => given,
        Err(e) => return super::error_reply(&e.into()),
    };
    let (from, to) = (given.from_version.get(), given.to_version.get());
    let query = Query::new(given.contract, given.request);
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
        Ok(diff) => {
            let version = diff.to_version;
            let answer = DiffResponse {
                index: index.to_string(),
                contract: query.contract,
                diff,
            };
            Reply::typed(&answer, Some(version))
        }
        Err(e) => super::error_reply(&e),
    }
}
