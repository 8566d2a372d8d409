//! `ragstream bench pipeline`: the daemon measured from outside, in one process. It starts a
//! daemon on the embedded broker with a scratch data directory and measures
//!
//! 1. ingest throughput: N documents produced at once, until all are searchable;
//! 2. freshness: M more documents produced at a steady rate to one partition, each timed from
//!    produce to searchable (the partition keeps commit order = produce order, so "the index
//!    holds k documents" means "the first k are searchable");
//! 3. query latency over HTTP (`POST /v1/retrieve`) and over the bus (request on the queries
//!    topic, reply on the reply topic), sequential hybrid queries.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::{Header, Headers, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Message, Offset, TopicPartitionList};
use serde::Serialize;
use serde_json::json;
use tokio::time::Instant;

use crate::config::Config;
use crate::daemon::{Daemon, DaemonError};
use crate::embedding::Embedder;
use crate::engine::Engine;
use crate::eval::beir::{percentile, read_corpus, BeirError};
use crate::model::{Document, IndexName};
use crate::pipeline::events::DocumentEvent;
use crate::transport::kafka::client_config;

#[derive(Debug, Clone)]
pub struct PipelineBenchOptions {
    pub corpus: PathBuf,
    pub documents: usize,
    pub freshness_documents: usize,
    pub rate_per_second: f64,
    pub queries: usize,
}

#[derive(Debug, Serialize)]
pub struct Latency {
    pub count: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Latency {
    pub fn of(mut ms: Vec<f64>) -> Latency {
        ms.sort_by(f64::total_cmp);
        Latency {
            count: ms.len(),
            p50_ms: percentile(&ms, 50.0),
            p99_ms: percentile(&ms, 99.0),
            max_ms: ms.last().copied().unwrap_or(0.0),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct PipelineBenchReport {
    pub embedder: String,
    pub batch_max_documents: usize,
    pub batch_max_ms: u64,
    pub documents: usize,
    pub chunks: usize,
    pub ingest_seconds: f64,
    pub documents_per_second: f64,
    pub chunks_per_second: f64,
    pub freshness_rate_per_second: f64,
    pub freshness: Latency,
    pub http_query: Latency,
    pub bus_query: Latency,
}

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Corpus(#[from] BeirError),
    #[error("the corpus has {have} documents; the bench needs {need}")]
    SmallCorpus { have: usize, need: usize },
    #[error(transparent)]
    Daemon(#[from] DaemonError),
    #[error("kafka: {0}")]
    Kafka(#[from] rdkafka::error::KafkaError),
    #[error("http: {0}")]
    Http(#[from] reqwest::Error),
    #[error("{0}")]
    Stalled(String),
    #[error(transparent)]
    Store(#[from] crate::index::StoreError),
}

/// A bench step that failed, as `what: error` (a step's own error type stays in its text).
pub(crate) fn failed(what: &str, e: &dyn std::fmt::Display) -> BenchError {
    BenchError::Stalled(format!("{what}: {e}"))
}

/// Polls the index until it holds `want` documents; calls `seen(count, now)` on every change.
async fn wait_for_documents(
    engine: &Engine,
    index: &IndexName,
    want: usize,
    mut seen: impl FnMut(usize, Instant),
) -> Result<usize, BenchError> {
    let mut last = 0;
    let mut last_change = Instant::now();
    loop {
        let stats = engine.stats(index).await.ok();
        let now = Instant::now();
        let count = stats.as_ref().map_or(0, |s| s.documents);
        if count != last {
            seen(count, now);
            last = count;
            last_change = now;
        }
        if count >= want {
            return Ok(stats.map_or(0, |s| s.chunks));
        }
        if last_change.elapsed() > Duration::from_secs(300) {
            return Err(BenchError::Stalled(format!(
                "{index}: {count} of {want} documents after 5 minutes without progress"
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn produce(
    producer: &FutureProducer,
    topic: &str,
    index: &IndexName,
    doc: &Document,
    partition: Option<i32>,
) -> Result<(), BenchError> {
    let event = DocumentEvent {
        index: index.clone(),
        op: crate::index::DocumentOp::Upsert(doc.clone()),
    };
    let (key, payload) = (event.key(), event.to_json().to_string());
    let mut record = FutureRecord::to(topic).key(&key).payload(&payload);
    if let Some(p) = partition {
        record = record.partition(p);
    }
    producer
        .send(record, Duration::from_secs(30))
        .await
        .map_err(|(e, _)| BenchError::Kafka(e))?;
    Ok(())
}

pub async fn run(
    mut config: Config,
    embedder: Arc<dyn Embedder>,
    options: &PipelineBenchOptions,
) -> Result<PipelineBenchReport, BenchError> {
    let corpus = read_corpus(&options.corpus)?;
    let need = options.documents + options.freshness_documents;
    if corpus.len() < need {
        return Err(BenchError::SmallCorpus {
            have: corpus.len(),
            need,
        });
    }
    // A scratch daemon: embedded broker, free port, its own data directory.
    config.kafka.brokers = String::new();
    config.http.bind = "127.0.0.1:0".into();
    let scratch = super::scratch_dir();
    config.storage.data_dir = scratch.clone();
    let report = measure(config, embedder, options, corpus).await;
    let _ = std::fs::remove_dir_all(&scratch);
    report
}

async fn measure(
    config: Config,
    embedder: Arc<dyn Embedder>,
    options: &PipelineBenchOptions,
    corpus: Vec<Document>,
) -> Result<PipelineBenchReport, BenchError> {
    let need = options.documents + options.freshness_documents;
    let embedder_id = embedder.id().to_string();
    let engine = Arc::new(Engine::new(config.clone(), embedder));
    let daemon = Daemon::start(config.clone(), engine.clone()).await?;
    let producer: FutureProducer = client_config(&config.kafka, &daemon.bootstrap)
        .set("linger.ms", "5")
        .create()?;
    let topic = config.kafka.documents_topic.clone();

    // 1. Throughput: a backlog of N documents, until all are searchable.
    let bulk = IndexName::parse("bench_throughput").expect("valid name");
    let started = Instant::now();
    let sends = corpus[..options.documents]
        .iter()
        .map(|d| produce(&producer, &topic, &bulk, d, None));
    for r in futures::future::join_all(sends).await {
        r?;
    }
    let chunks = wait_for_documents(&engine, &bulk, options.documents, |_, _| {}).await?;
    let ingest_seconds = started.elapsed().as_secs_f64();

    // 2. Freshness at a steady rate, one partition.
    let fresh = IndexName::parse("bench_freshness").expect("valid name");
    let docs = corpus[options.documents..need].to_vec();
    let interval = Duration::from_secs_f64(1.0 / options.rate_per_second);
    let producing = {
        let (producer, topic, fresh) = (producer.clone(), topic.clone(), fresh.clone());
        tokio::spawn(async move {
            let t0 = Instant::now();
            let mut produced = Vec::with_capacity(docs.len());
            for (i, d) in docs.iter().enumerate() {
                tokio::time::sleep_until(t0 + interval * i as u32).await;
                produced.push(Instant::now());
                produce(&producer, &topic, &fresh, d, Some(0)).await?;
            }
            Ok::<_, BenchError>(produced)
        })
    };
    let mut searchable: Vec<Instant> = Vec::new();
    wait_for_documents(&engine, &fresh, options.freshness_documents, |count, at| {
        searchable.resize(count.max(searchable.len()), at);
    })
    .await?;
    let produced = producing
        .await
        .map_err(|e| BenchError::Stalled(e.to_string()))??;
    let freshness = Latency::of(
        produced
            .iter()
            .zip(&searchable)
            .map(|(p, s)| s.duration_since(*p).as_secs_f64() * 1000.0)
            .collect(),
    );

    // 3. Query latency, HTTP then bus, over the throughput index.
    let queries: Vec<String> = corpus
        .iter()
        .take(options.queries)
        .map(|d| d.title.clone().unwrap_or_else(|| d.id.clone()))
        .collect();
    let request = |q: &str| {
        json!({"retrieval": {"index": bulk.as_str(), "query": q, "top_k": 10,
            "search_method": "hybrid"}})
    };
    let http = reqwest::Client::new();
    let url = format!("http://{}/v1/retrieve", daemon.http_addr);
    let mut http_ms = Vec::new();
    for q in &queries {
        let t = Instant::now();
        let response = http.post(&url).json(&request(q)).send().await?;
        let status = response.status();
        let body = response.bytes().await?;
        if !status.is_success() {
            return Err(BenchError::Stalled(format!(
                "HTTP query answered {status}: {}",
                String::from_utf8_lossy(&body)
            )));
        }
        http_ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }

    let replies = config.kafka.replies_topic.clone();
    let consumer: StreamConsumer = client_config(&config.kafka, &daemon.bootstrap)
        .set("group.id", "ragstream-bench")
        .set("fetch.wait.max.ms", "10")
        .set("enable.auto.commit", "false")
        .create()?;
    let metadata = consumer.fetch_metadata(Some(&replies), Duration::from_secs(10))?;
    let mut tpl = TopicPartitionList::new();
    for topic in metadata.topics() {
        for p in topic.partitions() {
            tpl.add_partition_offset(&replies, p.id(), Offset::End)?;
        }
    }
    consumer.assign(&tpl)?;
    let mut bus_ms = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        let id = format!("bench-{i}");
        let body = request(q).to_string();
        let headers = OwnedHeaders::new()
            .insert(Header {
                key: "reply-to",
                value: Some(replies.as_str()),
            })
            .insert(Header {
                key: "correlation-id",
                value: Some(id.as_str()),
            });
        let t = Instant::now();
        producer
            .send(
                FutureRecord::to(&config.kafka.queries_topic)
                    .key(&id)
                    .payload(&body)
                    .headers(headers),
                Duration::from_secs(30),
            )
            .await
            .map_err(|(e, _)| BenchError::Kafka(e))?;
        loop {
            let reply = tokio::time::timeout(Duration::from_secs(30), consumer.recv())
                .await
                .map_err(|_| BenchError::Stalled(format!("no reply to {id} within 30 s")))??;
            let matches = reply.headers().is_some_and(|h| {
                h.iter()
                    .any(|h| h.key == "correlation-id" && h.value == Some(id.as_bytes()))
            });
            if matches {
                break;
            }
        }
        bus_ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    daemon.shutdown().await;

    Ok(PipelineBenchReport {
        embedder: embedder_id,
        batch_max_documents: config.kafka.batch_max_documents,
        batch_max_ms: config.kafka.batch_max_ms,
        documents: options.documents,
        chunks,
        ingest_seconds,
        documents_per_second: options.documents as f64 / ingest_seconds,
        chunks_per_second: chunks as f64 / ingest_seconds,
        freshness_rate_per_second: options.rate_per_second,
        freshness,
        http_query: Latency::of(http_ms),
        bus_query: Latency::of(bus_ms),
    })
}
