//! `ragstream bench fuzz`: hostile inputs through every parser, in process, many more than
//! the test suite runs: document events, the five contracts' requests (with their filters)
//! and configuration from the environment. A parser may refuse an input; it may not panic,
//! and a contract may not answer a refusal with a 5xx or outside the error shape.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::FutureExt;
use serde::Serialize;
use serde_json::{json, Value};

use hostile_input::Hostile;
use ragstream::contracts::{Contract, Target};
use ragstream::embedding::{Embedder, HashingEmbedder};
use ragstream::model::{Document, IndexName};

/// What one parser did with its inputs.
#[derive(Debug, Default, Serialize)]
pub struct ParserReport {
    pub cases: u64,
    pub accepted: u64,
    pub refused: u64,
    /// Refusals with a 5xx status, or without `{"error": {"code": ...}}`: a fuzz failure.
    pub bad_refusals: u64,
    pub panics: u64,
    /// The first few failures, to reproduce.
    pub examples: Vec<String>,
}

impl ParserReport {
    fn failed(&mut self, what: String) {
        if self.examples.len() < 5 {
            self.examples.push(what);
        }
    }

    pub fn failures(&self) -> u64 {
        self.bad_refusals + self.panics
    }
}

#[derive(Debug, Serialize)]
pub struct FuzzReport {
    pub seed: u64,
    pub seconds: f64,
    pub parsers: BTreeMap<String, ParserReport>,
}

impl FuzzReport {
    pub fn failures(&self) -> u64 {
        self.parsers.values().map(ParserReport::failures).sum()
    }
}

/// A request body each contract accepts, for [`Hostile::broken`] to break.
fn valid_body(contract: Contract) -> Value {
    match contract {
        Contract::C000 => json!({"retrieval": {"index": "kb", "query": "moon tides",
            "search_method": "hybrid", "top_k": 3, "filters": {"tags": ["a"]}}}),
        Contract::C001 => json!({"query": "moon tides", "top_k": 3}),
        Contract::C002 => json!({"query": "moon tides", "top_k": 3, "semantic_weight": 0.5,
            "filters": {"project_id": "p", "path_prefix": "/a", "tags": ["a"],
                "updated_after": "2024-05-01T00:00:00Z"}, "debug": true}),
        Contract::C003 => json!({"query": "moon tides", "hybrid": {"alpha": 0.5, "top_k": 3},
            "filters": {"collection_id": "c"}, "visibility": "active"}),
        Contract::C004 => json!({"query": "moon tides", "messages": [{"role": "user",
            "content": "hi"}]}),
        Contract::Explain => json!({"request": {"query": "moon tides", "top_k": 3,
            "filters": {"tags": ["a"]}}, "targets": [{"document_id": "d1"}, {"text": "moon"}]}),
        Contract::Diff => json!({"request": {"query": "moon tides", "top_k": 3},
            "from_version": 1, "to_version": 2}),
    }
}

fn valid_event() -> Value {
    json!({"schema_version": 1, "op": "upsert", "index": "kb",
        "document": {"id": "d1", "title": "T", "text": "Some text.", "tags": ["a"],
            "metadata": {"k": 1}, "updated_at": "2024-05-01T00:00:00Z"}})
}

/// Runs `cases` hostile inputs through each parser (seeded, so a failure reproduces).
pub async fn run(cases: u64, seed: u64) -> FuzzReport {
    let started = std::time::Instant::now();
    let mut hostile = Hostile::new(seed);
    let mut parsers = BTreeMap::new();

    // Document events.
    let limits = ragstream::model::DocumentLimits::default();
    let mut events = ParserReport::default();
    let valid = valid_event();
    for _ in 0..cases {
        let body = hostile.body(&valid);
        events.cases += 1;
        match std::panic::catch_unwind(|| {
            ragstream::pipeline::events::parse_event(Some(&body), 1 << 20, &limits)
        }) {
            Ok(Ok(_)) => events.accepted += 1,
            Ok(Err(_)) => events.refused += 1,
            Err(_) => {
                events.panics += 1;
                events.failed(String::from_utf8_lossy(&body).chars().take(300).collect());
            }
        }
    }
    parsers.insert("document_event".to_string(), events);

    // The five contracts, on a small index.
    let dir = std::env::temp_dir().join(format!("ragstream-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = ragstream::config::Config::default();
    config.storage.data_dir = dir.clone();
    config.model.embedder = "hashing".into();
    config.contracts.default_index = "kb".into();
    config.retrievers.insert(
        "kb_leaf".into(),
        ragstream::retrieval::retrievers::RetrieverConfig::leaf("kb", 3),
    );
    let engine = ragstream::Engine::new(
        config,
        Arc::new(HashingEmbedder::new(384)) as Arc<dyn Embedder>,
    );
    let kb = IndexName::parse("kb").expect("valid");
    let docs = (0..20)
        .map(|i| {
            ragstream::index::DocumentOp::Upsert(Document {
                id: format!("d{i}"),
                title: Some(format!("Document {i}")),
                text: Some(format!("The moon pulls the tides, note {i}.")),
                ..Default::default()
            })
        })
        .collect();
    if let Err(e) = engine.write(&kb, docs).await {
        tracing::error!(error = %e, "fuzz: the index could not be written");
    }
    let caller = ragstream::auth::Caller::unrestricted();
    for contract in Contract::ALL {
        let mut report = ParserReport::default();
        let valid = valid_body(contract);
        for _ in 0..cases {
            let body = hostile.body(&valid);
            let target = Target {
                index: Some(kb.clone()),
                retriever: Some("kb_leaf".into()),
            };
            report.cases += 1;
            let answered = std::panic::AssertUnwindSafe(ragstream::contracts::answer(
                &engine, &caller, contract, target, &body,
            ))
            .catch_unwind()
            .await;
            let example =
                || -> String { String::from_utf8_lossy(&body).chars().take(300).collect() };
            match answered {
                Err(_) => {
                    report.panics += 1;
                    report.failed(example());
                }
                Ok(reply) if reply.status < 400 => report.accepted += 1,
                Ok(reply) => {
                    report.refused += 1;
                    if reply.status >= 500 || !reply.body["error"]["code"].is_string() {
                        report.bad_refusals += 1;
                        report.failed(format!("{} {} <- {}", reply.status, reply.body, example()));
                    }
                }
            }
        }
        parsers.insert(format!("contract_{}", contract.label()), report);
    }
    let _ = std::fs::remove_dir_all(&dir);

    // Configuration from the environment: every key, hostile values.
    let mut env_report = ParserReport::default();
    let keys = [
        "RAGSTREAM_KAFKA_PARTITIONS",
        "RAGSTREAM_KAFKA_REPLY_TOPICS",
        "RAGSTREAM_LIMITS_MAX_TOP_K",
        "RAGSTREAM_LIMITS_QUERY_TIMEOUT_MS",
        "RAGSTREAM_HTTP_BIND",
        "RAGSTREAM_STORAGE_DATA_DIR",
        "RAGSTREAM_MODEL_EMBEDDER",
        "RAGSTREAM_INDEX__VECTOR__NPROBES",
        "RAGSTREAM_CHUNKING_MAX_TOKENS",
        "RAGSTREAM_NOT_A_KEY",
    ];
    for _ in 0..cases {
        let key = keys[hostile.path_segment().len() % keys.len()];
        let value = hostile.string();
        env_report.cases += 1;
        match std::panic::catch_unwind(|| {
            ragstream::config::Config::load_from(None, vec![(key.to_string(), value.clone())])
        }) {
            Ok(Ok(_)) => env_report.accepted += 1,
            Ok(Err(_)) => env_report.refused += 1,
            Err(_) => {
                env_report.panics += 1;
                env_report.failed(format!("{key}={value:?}"));
            }
        }
    }
    parsers.insert("config_env".to_string(), env_report);

    FuzzReport {
        seed,
        seconds: started.elapsed().as_secs_f64(),
        parsers,
    }
}
