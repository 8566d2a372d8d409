//! What an explanation costs next to the query it explains (`bench scale
//! --explain-queries N`): each query is searched (hybrid, top 10), then explained for two
//! targets, the document it ranked first ("why here?") and the next query's first document
//! ("why not?"), one after the other on the same index, so both see the same machine.

use std::time::Instant;

use serde::Serialize;

use super::pipeline::{failed, BenchError};
use crate::eval::beir::percentile;
use ragstream::engine::Engine;
use ragstream::model::IndexName;
use ragstream::retrieval::explain::Target;
use ragstream::retrieval::{SearchMethod, SearchRequest};

#[derive(Debug, Serialize)]
pub struct ExplainCost {
    pub queries: usize,
    pub query_p50_ms: f64,
    pub query_p99_ms: f64,
    pub explain_p50_ms: f64,
    pub explain_p99_ms: f64,
    /// Explain's percentile over the query's (the goal is at most 3).
    pub ratio_p50: f64,
    pub ratio_p99: f64,
}

pub async fn measure(
    engine: &Engine,
    name: &IndexName,
    queries: &[String],
) -> Result<ExplainCost, BenchError> {
    let request = |q: &str| SearchRequest::new(q.to_string(), SearchMethod::Hybrid, 10);
    // Each query's first document: its own "why here?", and the previous query's "why not?".
    let mut firsts = Vec::with_capacity(queries.len());
    for q in queries {
        let answer = engine
            .search(name, &request(q))
            .await
            .map_err(|e| failed("query", &e))?;
        firsts.push(answer.hits.first().map(|h| h.row.document_id.clone()));
    }
    let (mut query_ms, mut explain_ms) = (Vec::new(), Vec::new());
    for (i, q) in queries.iter().enumerate() {
        let targets: Vec<Target> = [&firsts[i], &firsts[(i + 1) % firsts.len()]]
            .into_iter()
            .flatten()
            .map(|d| Target::DocumentId(d.clone()))
            .collect();
        if targets.is_empty() {
            continue;
        }
        let t = Instant::now();
        engine
            .search(name, &request(q))
            .await
            .map_err(|e| failed("query", &e))?;
        query_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        engine
            .explain(name, &request(q), &targets, false)
            .await
            .map_err(|e| failed("explain", &e))?;
        explain_ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    query_ms.sort_by(f64::total_cmp);
    explain_ms.sort_by(f64::total_cmp);
    let (q50, q99) = (percentile(&query_ms, 50.0), percentile(&query_ms, 99.0));
    let (e50, e99) = (percentile(&explain_ms, 50.0), percentile(&explain_ms, 99.0));
    Ok(ExplainCost {
        queries: query_ms.len(),
        query_p50_ms: q50,
        query_p99_ms: q99,
        explain_p50_ms: e50,
        explain_p99_ms: e99,
        ratio_p50: e50 / q50.max(1e-9),
        ratio_p99: e99 / q99.max(1e-9),
    })
}
