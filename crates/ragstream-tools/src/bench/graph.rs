//! `ragstream bench graph`: what graph lookup adds to a contract-001 query.
//!
//! A scratch index is filled with BEIR documents, each carrying triples made from its own
//! words (entity names are the document's longer words, relations from a small verb set), so
//! that real queries link to real entities, hubs included. The same queries then run through
//! contract 001 in alternating rounds: fast mode (`fast_mode: true`, the hybrid chunk search)
//! and graph mode (entity linking, expansion to depth 1, relation scoring, the keyword
//! expansion, the merge). The difference of the medians is what the graph adds.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::json;

use super::pipeline::{BenchError, Latency};
use crate::eval::beir::read_queries;
use ragstream::auth::Caller;
use ragstream::config::Config;
use ragstream::contracts::{self, Contract, Target};
use ragstream::embedding::Embedder;
use ragstream::engine::Engine;
use ragstream::index::DocumentOp;
use ragstream::model::{IndexName, Triple};

#[derive(Debug, Clone)]
pub struct GraphBenchOptions {
    pub corpus: PathBuf,
    pub queries: PathBuf,
    pub documents: usize,
    pub triples_per_document: usize,
    pub query_count: usize,
    pub rounds: usize,
    pub depth: usize,
}

#[derive(Debug, Serialize)]
pub struct GraphBenchReport {
    pub embedder: String,
    pub documents: usize,
    pub triples: usize,
    pub entities: usize,
    pub ingest_seconds: f64,
    /// Building the in-memory graph of the newest version (first query after a commit).
    pub graph_load_ms: f64,
    pub depth: usize,
    pub queries_per_round: usize,
    pub rounds: usize,
    /// Queries that linked at least one entity, and relation hits per query on average.
    pub queries_linking: usize,
    pub relations_per_query: f64,
    pub fast_mode: Latency,
    pub graph_mode: Latency,
    /// graph mode p50 − fast mode p50, in milliseconds.
    pub added_p50_ms: f64,
}

const RELATIONS: &[&str] = &[
    "associated_with",
    "increases",
    "decreases",
    "part_of",
    "causes",
    "treats",
];

/// Triples from `text`'s own words: consecutive distinct longer words, linked in a chain.
fn triples_of(text: &str, count: usize) -> Vec<Triple> {
    let mut words: Vec<String> = Vec::new();
    for w in ragstream::graph::normalize::tokens(text) {
        if w.len() >= 6 && w.chars().all(char::is_alphabetic) && !words.contains(&w) {
            words.push(w);
        }
    }
    words
        .windows(2)
        .take(count)
        .enumerate()
        .map(|(i, pair)| Triple {
            subject: pair[0].clone(),
            relation: RELATIONS[i % RELATIONS.len()].into(),
            object: pair[1].clone(),
            chunk: None,
        })
        .collect()
}

pub async fn run(
    mut config: Config,
    embedder: Arc<dyn Embedder>,
    options: &GraphBenchOptions,
) -> Result<GraphBenchReport, BenchError> {
    let scratch = super::scratch_dir();
    config.storage.data_dir = scratch.clone();
    config.graph.enabled = true;
    config.graph.default_depth = options.depth;
    config.graph.max_depth = config.graph.max_depth.max(options.depth);
    let result = measure(config, embedder, options).await;
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

async fn measure(
    config: Config,
    embedder: Arc<dyn Embedder>,
    options: &GraphBenchOptions,
) -> Result<GraphBenchReport, BenchError> {
    let index = IndexName::parse("bench").expect("a valid name");
    let engine = Engine::new(config.clone(), embedder);
    let mut documents = super::corpus_head(&options.corpus, options.documents)?;
    for d in &mut documents {
        let text = d.text.clone().unwrap_or_default();
        d.triples = triples_of(&text, options.triples_per_document);
    }
    let started = Instant::now();
    let batch = config.index.ingest_batch_documents.max(1);
    for chunk in documents.chunks(batch) {
        let ops = chunk.iter().cloned().map(DocumentOp::Upsert).collect();
        engine
            .write(&index, ops)
            .await
            .map_err(|e| BenchError::Stalled(format!("ingest: {e}")))?;
    }
    let ingest_seconds = started.elapsed().as_secs_f64();
    let handle = engine
        .index(&index)
        .await
        .map_err(|e| BenchError::Stalled(e.to_string()))?;
    let loading = Instant::now();
    let view = handle
        .reader()
        .graph_at(handle.latest_version())
        .await
        .map_err(|e| BenchError::Stalled(e.to_string()))?
        .ok_or_else(|| BenchError::Stalled("the index has no graph".into()))?;
    let graph_load_ms = loading.elapsed().as_secs_f64() * 1000.0;

    let queries: Vec<String> = read_queries(&options.queries)?
        .into_iter()
        .take(options.query_count)
        .map(|q| q.text)
        .collect();
    let caller = Caller::unrestricted();
    let body = |q: &str, fast: bool| {
        serde_json::to_vec(&json!({"query": q, "top_k": 10, "fast_mode": fast})).expect("json")
    };
    let (mut fast, mut graph) = (Vec::new(), Vec::new());
    let (mut linking, mut relations) = (0, 0);
    // Round 0 warms both modes up and is not kept.
    for round in 0..=options.rounds {
        for fast_mode in [true, false] {
            for q in &queries {
                let started = Instant::now();
                let reply = contracts::answer(
                    &engine,
                    &caller,
                    Contract::C001,
                    Target::index(Some(index.clone())),
                    &body(q, fast_mode),
                )
                .await;
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                if reply.status != 200 {
                    return Err(BenchError::Stalled(format!("query failed: {}", reply.body)));
                }
                if round == 0 {
                    continue;
                }
                if fast_mode {
                    fast.push(ms);
                } else {
                    graph.push(ms);
                    if round == 1 {
                        let terms = reply.body["rewrite_terms"].as_array().map_or(0, Vec::len);
                        linking += usize::from(terms > 0);
                        relations += reply.body["kg"].as_array().map_or(0, Vec::len);
                    }
                }
            }
        }
    }
    let (fast, graph) = (Latency::of(fast), Latency::of(graph));
    Ok(GraphBenchReport {
        embedder: engine.embedder().id().to_string(),
        documents: options.documents,
        triples: view.triples(),
        entities: view.entities(),
        ingest_seconds,
        graph_load_ms,
        depth: options.depth,
        queries_per_round: queries.len(),
        rounds: options.rounds,
        queries_linking: linking,
        relations_per_query: relations as f64 / queries.len().max(1) as f64,
        added_p50_ms: graph.p50_ms - fast.p50_ms,
        fast_mode: fast,
        graph_mode: graph,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triples_chain_a_documents_longer_words() {
        let t = triples_of(
            "Insulin resistance raises glucose; insulin resistance again.",
            5,
        );
        let facts: Vec<(String, String)> = t
            .iter()
            .map(|t| (t.subject.clone(), t.object.clone()))
            .collect();
        assert_eq!(
            facts,
            vec![
                ("insulin".to_string(), "resistance".to_string()),
                ("resistance".to_string(), "raises".to_string()),
                ("raises".to_string(), "glucose".to_string()),
            ]
        );
    }
}
