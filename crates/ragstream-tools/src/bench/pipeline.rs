//! `ragstream bench pipeline`: the daemon measured from outside, in one process. It starts a
//! daemon on the embedded broker with a scratch data directory and measures
//!
//! 1. ingest throughput: N documents produced at once, until all are searchable;
//! 2. freshness: M more documents produced at a steady rate to one partition, each timed from
//!    produce to searchable (the partition keeps commit order = produce order, so "the index
//!    holds k documents" means "the first k are searchable"). By default this runs after the
//!    backlog has drained; with `beside_backlog` it starts as soon as the backlog has been
//!    produced, while it drains on the other partitions (a live index beside a backfill);
//! 3. query latency over HTTP (`POST /v1/retrieve`) and over the bus (request on the queries
//!    topic, reply on the reply topic), sequential hybrid queries.
//!
//! Before the daemon starts, the same N documents are ingested directly (`ragstream ingest`'s
//! path, another scratch directory, a cold embedding cache), so that the report holds the
//! ratio of the two rates from one run; and the throughput phase's time is broken down by
//! stage from the actors' busy and backpressure counters.

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

use crate::eval::beir::{percentile, read_corpus, CalibrationError};
use ragstream::config::Config;
use ragstream::daemon::{Daemon, DaemonError};
use ragstream::embedding::Embedder;
use ragstream::engine::Engine;
use ragstream::kafka::client_config;
use ragstream::model::{Document, IndexName};
use ragstream::pipeline::events::DocumentEvent;
use ragstream::pipeline::STAGES;

#[derive(Debug, Clone)]
pub struct PipelineBenchOptions {
    pub corpus: PathBuf,
    pub documents: usize,
    pub freshness_documents: usize,
    pub rate_per_second: f64,
    pub queries: usize,
    /// Measure freshness while the backlog drains: the backlog goes to every partition but
    /// the first, the freshness documents to the first.
    pub beside_backlog: bool,
    /// Documents POSTed over HTTP after the throughput phase, in requests of
    /// [`HTTP_REQUEST_DOCUMENTS`], timed until searchable (0: no HTTP phase).
    pub http_documents: usize,
}

/// Documents per request in the HTTP ingest phase.
pub const HTTP_REQUEST_DOCUMENTS: usize = 250;

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
    /// The same documents ingested directly, in the same run.
    pub direct_ingest_seconds: f64,
    pub direct_chunks_per_second: f64,
    /// Kafka → searchable chunks/s over direct chunks/s.
    pub kafka_to_direct_ratio: f64,
    /// The Kafka path's rate after its first commit (the consumer group joined, the
    /// pipeline full), and its ratio to direct ingest.
    pub steady_chunks_per_second: f64,
    pub steady_kafka_to_direct_ratio: f64,
    /// Where the throughput phase's time went.
    pub breakdown: Breakdown,
    pub freshness_rate_per_second: f64,
    pub freshness: Latency,
    /// Whether freshness was measured beside the draining backlog, and the share of its
    /// documents produced before the backlog had drained.
    pub freshness_beside_backlog: bool,
    pub freshness_produced_while_draining: f64,
    pub http_query: Latency,
    pub bus_query: Latency,
    /// The broker: `embedded`, or the bootstrap servers of `kafka.brokers`.
    pub broker: String,
    /// The HTTP ingest phase: documents POSTed, posted → searchable, and its rate over the
    /// Kafka path's documents/s (`None` without the phase).
    pub http_ingest: Option<HttpIngest>,
}

#[derive(Debug, Serialize)]
pub struct HttpIngest {
    pub documents: usize,
    pub request_documents: usize,
    pub seconds: f64,
    pub documents_per_second: f64,
    pub http_to_kafka_ratio: f64,
}

/// The throughput phase's time by stage. A stage's busy time includes its waits to send to
/// the next stage (that stage's backpressure), so own work is busy minus the next stage's
/// backpressure.
#[derive(Debug, Serialize)]
pub struct Breakdown {
    /// Until the producer had every document acknowledged.
    pub produce_seconds: f64,
    /// Until the first documents were searchable (the consumer joining its group, the
    /// first batch filling, its commit).
    pub first_searchable_seconds: f64,
    pub stages: Vec<StageTime>,
    pub commits: u64,
    pub lance_commit_seconds: f64,
    pub keyword_commit_seconds: f64,
    pub embed_calls: u64,
    pub embed_seconds: f64,
    /// CPU time the whole process used in the phase (user and system, every thread).
    pub cpu_seconds: f64,
    /// That CPU time over the phase's wall-clock seconds: how many cores were busy on
    /// average, of `cores`.
    pub cores_busy: f64,
    pub cores: usize,
}

#[derive(Debug, Serialize)]
pub struct StageTime {
    pub stage: &'static str,
    pub busy_seconds: f64,
    /// Busy seconds over the phase's wall-clock seconds.
    pub busy_share: f64,
    /// Time senders waited for room in this stage's mailbox.
    pub backpressure_seconds: f64,
}

/// The counters a breakdown is the difference of.
#[derive(Debug, Default, Clone)]
struct Counters {
    busy: Vec<f64>,
    backpressure: Vec<f64>,
    commits: u64,
    lance: f64,
    keyword: f64,
    embed_calls: u64,
    embed: f64,
    cpu: f64,
}

impl Counters {
    fn read(index: &str, embedder: &str) -> Counters {
        let Some(m) = ragstream::telemetry::metrics() else {
            return Counters::default();
        };
        let commit = |store| m.commit_duration_seconds.with_label_values(&[index, store]);
        let embed = m.embed_duration_seconds.with_label_values(&[embedder]);
        Counters {
            busy: STAGES
                .iter()
                .map(|s| m.actor_busy_seconds_total.with_label_values(&[s]).get())
                .collect(),
            backpressure: STAGES
                .iter()
                .map(|s| {
                    m.actor_backpressure_seconds_total
                        .with_label_values(&[s])
                        .get()
                })
                .collect(),
            commits: commit("lance").get_sample_count(),
            lance: commit("lance").get_sample_sum(),
            keyword: commit("keyword").get_sample_sum(),
            embed_calls: embed.get_sample_count(),
            embed: embed.get_sample_sum(),
            cpu: process_cpu_seconds(),
        }
    }

    fn since(
        &self,
        before: &Counters,
        seconds: f64,
        produce_seconds: f64,
        first_searchable_seconds: f64,
    ) -> Breakdown {
        let stages = STAGES
            .iter()
            .enumerate()
            .map(|(i, stage)| {
                let busy = self.busy.get(i).copied().unwrap_or(0.0)
                    - before.busy.get(i).copied().unwrap_or(0.0);
                StageTime {
                    stage,
                    busy_seconds: busy,
                    busy_share: busy / seconds,
                    backpressure_seconds: self.backpressure.get(i).copied().unwrap_or(0.0)
                        - before.backpressure.get(i).copied().unwrap_or(0.0),
                }
            })
            .collect();
        Breakdown {
            produce_seconds,
            first_searchable_seconds,
            stages,
            commits: self.commits - before.commits,
            lance_commit_seconds: self.lance - before.lance,
            keyword_commit_seconds: self.keyword - before.keyword,
            embed_calls: self.embed_calls - before.embed_calls,
            embed_seconds: self.embed - before.embed,
            cpu_seconds: self.cpu - before.cpu,
            cores_busy: (self.cpu - before.cpu) / seconds,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}

/// The CPU time this process has used so far, user and system, all threads (0 when the
/// kernel does not say).
fn process_cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a `rusage` into the pointer it is given and nothing else.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return 0.0;
    }
    // SAFETY: the call succeeded, so it filled the struct.
    let usage = unsafe { usage.assume_init() };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Corpus(#[from] CalibrationError),
    #[error("the corpus has {have} documents; the bench needs {need}")]
    SmallCorpus { have: usize, need: usize },
    #[error("the corpus has no documents")]
    EmptyCorpus,
    #[error(transparent)]
    Daemon(#[from] DaemonError),
    #[error("kafka: {0}")]
    Kafka(#[from] rdkafka::error::KafkaError),
    #[error("http: {0}")]
    Http(#[from] reqwest::Error),
    #[error("{0}")]
    Stalled(String),
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Store(#[from] ragstream::index::StoreError),
}

/// `corpus` repeated until it holds `need` documents: each round after the first gives the
/// documents new ids and a text that differs by one sentence, so that no chunk is a copy
/// the embedding cache or the change detection would skip.
fn cycled(corpus: Vec<Document>, need: usize) -> Result<Vec<Document>, BenchError> {
    if corpus.is_empty() {
        return Err(BenchError::EmptyCorpus);
    }
    let mut out = Vec::with_capacity(need);
    for round in 0.. {
        for d in &corpus {
            if out.len() == need {
                return Ok(out);
            }
            let mut d = d.clone();
            if round > 0 {
                d.id = format!("{}-r{round}", d.id);
                d.text = d.text.map(|t| format!("{t} Copy {round} of this text."));
            }
            out.push(d);
        }
    }
    unreachable!("the loop returns once it has `need` documents")
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
    // The commit counter, where metrics are recorded: reading the index's statistics scans
    // its rows, and doing that every 20 ms would take the cores the pipeline is measured on.
    let counted = || {
        ragstream::telemetry::metrics().map(|m| {
            m.documents_indexed_total
                .with_label_values(&[index.as_str(), "upsert"])
                .get() as usize
        })
    };
    loop {
        let count = match counted() {
            Some(count) => count,
            None => engine.stats(index).await.map_or(0, |s| s.documents),
        };
        let now = Instant::now();
        if count != last {
            seen(count, now);
            last = count;
            last_change = now;
        }
        if count >= want {
            return Ok(engine
                .stats(index)
                .await
                .map_err(|e| failed("index statistics", &e))?
                .chunks);
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
        op: ragstream::index::DocumentOp::Upsert(doc.clone()),
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
    let need = options.documents + options.freshness_documents + options.http_documents;
    let corpus = cycled(read_corpus(&options.corpus)?, need)?;
    // The direct path first, on its own scratch directory (a cold embedding cache).
    let direct_dir = super::scratch_dir();
    let direct = {
        let mut direct_config = config.clone();
        direct_config.storage.data_dir = direct_dir.clone();
        let engine = Engine::new(direct_config, embedder.clone());
        let name = IndexName::parse("bench_direct").expect("valid name");
        let started = Instant::now();
        let outcome = ragstream::ingest::ingest_documents(
            &engine,
            &name,
            corpus[..options.documents].to_vec(),
            false,
        )
        .await
        .map_err(|e| failed("direct ingest", &e));
        outcome.map(|o| (started.elapsed().as_secs_f64(), o.chunks_written))
    };
    let _ = std::fs::remove_dir_all(&direct_dir);
    let direct = direct?;
    // A scratch daemon: the embedded broker unless kafka.brokers names one, a free port,
    // its own data directory.
    config.http.bind = "127.0.0.1:0".into();
    let scratch = super::scratch_dir();
    config.storage.data_dir = scratch.clone();
    let report = measure(config, embedder, options, corpus, direct).await;
    let _ = std::fs::remove_dir_all(&scratch);
    report
}

async fn measure(
    config: Config,
    embedder: Arc<dyn Embedder>,
    options: &PipelineBenchOptions,
    corpus: Vec<Document>,
    (direct_ingest_seconds, direct_chunks): (f64, usize),
) -> Result<PipelineBenchReport, BenchError> {
    let need = options.documents + options.freshness_documents;
    let embedder_id = embedder.id().to_string();
    let broker = if config.kafka.brokers.trim().is_empty() {
        "embedded".to_string()
    } else {
        config.kafka.brokers.clone()
    };
    let engine = Arc::new(Engine::new(config.clone(), embedder));
    let daemon = Daemon::start(config.clone(), engine.clone()).await?;
    let producer: FutureProducer = client_config(&config.kafka, &daemon.bootstrap)
        .set("linger.ms", "5")
        .create()?;
    let topic = config.kafka.documents_topic.clone();

    // 1. Throughput: a backlog of N documents, until all are searchable.
    let bulk = IndexName::parse("bench_throughput").expect("valid name");
    let partitions = config.kafka.partitions;
    if options.beside_backlog && partitions < 2 {
        return Err(BenchError::Usage(format!(
            "freshness beside the backlog needs kafka.partitions of 2 or more (it is {partitions}): \
             the backlog takes every partition but the first"
        )));
    }
    let backlog_partition = |i: usize| {
        options
            .beside_backlog
            .then(|| 1 + (i as i32 % (partitions - 1)))
    };
    let before = Counters::read(bulk.as_str(), &embedder_id);
    let started = Instant::now();
    let sends = corpus[..options.documents]
        .iter()
        .enumerate()
        .map(|(i, d)| produce(&producer, &topic, &bulk, d, backlog_partition(i)));
    for r in futures::future::join_all(sends).await {
        r?;
    }
    let produce_seconds = started.elapsed().as_secs_f64();
    let mut first: Option<(usize, Instant)> = None;
    let backlog = async {
        let chunks = wait_for_documents(&engine, &bulk, options.documents, |count, at| {
            first.get_or_insert((count, at));
        })
        .await?;
        Ok::<_, BenchError>((chunks, Instant::now()))
    };
    let fresh = IndexName::parse("bench_freshness").expect("valid name");
    let freshness = measure_freshness(
        &engine,
        &producer,
        &topic,
        &fresh,
        corpus[options.documents..need].to_vec(),
        options.rate_per_second,
    );
    // 2. Freshness at a steady rate, one partition: beside the backlog or after it.
    let ((chunks, drained_at), (produced, searchable)) = if options.beside_backlog {
        let (backlog, freshness) = tokio::join!(backlog, freshness);
        (backlog?, freshness?)
    } else {
        let backlog = backlog.await?;
        (backlog, freshness.await?)
    };
    let ingest_seconds = drained_at.duration_since(started).as_secs_f64();
    let chunks_per_document = chunks as f64 / options.documents as f64;
    let steady_chunks_per_second = match first {
        Some((count, at)) if count < options.documents => {
            (options.documents - count) as f64 * chunks_per_document
                / (ingest_seconds - at.duration_since(started).as_secs_f64())
        }
        _ => chunks as f64 / ingest_seconds,
    };
    let breakdown = Counters::read(bulk.as_str(), &embedder_id).since(
        &before,
        ingest_seconds,
        produce_seconds,
        first.map_or(ingest_seconds, |(_, at)| {
            at.duration_since(started).as_secs_f64()
        }),
    );
    let freshness_produced_while_draining =
        produced.iter().filter(|p| **p < drained_at).count() as f64 / produced.len() as f64;
    let freshness = Latency::of(
        produced
            .iter()
            .zip(&searchable)
            .map(|(p, s)| s.duration_since(*p).as_secs_f64() * 1000.0)
            .collect(),
    );

    // HTTP ingest: requests one after another, until every document is searchable.
    let http_ingest = if options.http_documents == 0 {
        None
    } else {
        let index = IndexName::parse("bench_http").expect("valid name");
        let client = reqwest::Client::new();
        let url = format!("http://{}/v1/indexes/{index}/documents", daemon.http_addr);
        let docs = &corpus[need..need + options.http_documents];
        let started = Instant::now();
        for request in docs.chunks(HTTP_REQUEST_DOCUMENTS) {
            let response = client
                .post(&url)
                .json(&json!({ "documents": request }))
                .send()
                .await?;
            let status = response.status();
            if status != reqwest::StatusCode::ACCEPTED {
                let body = response.text().await.unwrap_or_default();
                return Err(BenchError::Stalled(format!(
                    "HTTP ingest answered {status}: {body}"
                )));
            }
        }
        wait_for_documents(&engine, &index, docs.len(), |_, _| {}).await?;
        let seconds = started.elapsed().as_secs_f64();
        let documents_per_second = docs.len() as f64 / seconds;
        Some(HttpIngest {
            documents: docs.len(),
            request_documents: HTTP_REQUEST_DOCUMENTS,
            seconds,
            documents_per_second,
            http_to_kafka_ratio: documents_per_second / (options.documents as f64 / ingest_seconds),
        })
    };

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
        direct_ingest_seconds,
        direct_chunks_per_second: direct_chunks as f64 / direct_ingest_seconds,
        kafka_to_direct_ratio: (chunks as f64 / ingest_seconds)
            / (direct_chunks as f64 / direct_ingest_seconds),
        steady_chunks_per_second,
        steady_kafka_to_direct_ratio: steady_chunks_per_second
            / (direct_chunks as f64 / direct_ingest_seconds),
        breakdown,
        freshness_rate_per_second: options.rate_per_second,
        freshness,
        freshness_beside_backlog: options.beside_backlog,
        freshness_produced_while_draining,
        http_query: Latency::of(http_ms),
        bus_query: Latency::of(bus_ms),
        broker,
        http_ingest,
    })
}

/// Produces `docs` to `index` on partition 0 at `rate` documents per second; returns when
/// each was produced and when each became searchable (the partition keeps produce order, so
/// the k-th searchable is the k-th produced).
async fn measure_freshness(
    engine: &Engine,
    producer: &FutureProducer,
    topic: &str,
    index: &IndexName,
    docs: Vec<Document>,
    rate: f64,
) -> Result<(Vec<Instant>, Vec<Instant>), BenchError> {
    let count = docs.len();
    let interval = Duration::from_secs_f64(1.0 / rate);
    let producing = {
        let (producer, topic, index) = (producer.clone(), topic.to_string(), index.clone());
        tokio::spawn(async move {
            let t0 = Instant::now();
            let mut produced = Vec::with_capacity(docs.len());
            for (i, d) in docs.iter().enumerate() {
                tokio::time::sleep_until(t0 + interval * i as u32).await;
                produced.push(Instant::now());
                produce(&producer, &topic, &index, d, Some(0)).await?;
            }
            Ok::<_, BenchError>(produced)
        })
    };
    let mut searchable: Vec<Instant> = Vec::new();
    wait_for_documents(engine, index, count, |count, at| {
        searchable.resize(count.max(searchable.len()), at);
    })
    .await?;
    let produced = producing
        .await
        .map_err(|e| BenchError::Stalled(e.to_string()))??;
    Ok((produced, searchable))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_corpus_is_cycled_with_new_ids_and_changed_texts() {
        let corpus = vec![
            Document {
                id: "a".into(),
                text: Some("Alpha.".into()),
                ..Default::default()
            },
            Document {
                id: "b".into(),
                text: Some("Beta.".into()),
                ..Default::default()
            },
        ];
        let out = cycled(corpus, 5).unwrap();
        let ids: Vec<&str> = out.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "a-r1", "b-r1", "a-r2"]);
        assert_eq!(out[2].text.as_deref(), Some("Alpha. Copy 1 of this text."));
        assert!(matches!(
            cycled(Vec::new(), 1),
            Err(BenchError::EmptyCorpus)
        ));
    }
}
