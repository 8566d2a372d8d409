//! `ragstream bench telemetry`: what metrics and tracing cost a query, on vs off in one run.
//!
//! A scratch index is filled from a BEIR corpus; the same hybrid contract-000 queries then run
//! in alternating rounds, as an HTTP request would (a `query` span, `contracts::answer`,
//! `contracts::observe`):
//!
//! - **off**: metric recording off, no subscriber at all (spans are no-ops);
//! - **on**: metrics recorded, the daemon's log subscriber (warnings) plus the OTLP exporter,
//!   every trace sampled and sent to a receiver in this process that acknowledges as a
//!   collector does.
//!
//! Rounds alternate (off, on, off, on, …) on one thread so that the machine's noise falls on
//! both halves alike; the figures are per-query latency percentiles of each half.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::json;
use tracing::Instrument;

use super::pipeline::{BenchError, Latency};
use crate::eval::beir::read_queries;
use ragstream::auth::Caller;
use ragstream::config::Config;
use ragstream::contracts::{self, Contract, Target};
use ragstream::embedding::Embedder;
use ragstream::engine::Engine;
use ragstream::model::IndexName;
use ragstream::telemetry::traces::{LogFormat, Telemetry};

#[derive(Debug, Clone)]
pub struct TelemetryBenchOptions {
    pub corpus: PathBuf,
    pub queries: PathBuf,
    pub documents: usize,
    pub query_count: usize,
    pub rounds: usize,
}

#[derive(Debug, Serialize)]
pub struct TelemetryBenchReport {
    pub embedder: String,
    pub documents: usize,
    pub queries_per_round: usize,
    pub rounds: usize,
    pub off: Latency,
    pub on: Latency,
    /// on ÷ off.
    pub p50_ratio: f64,
    pub p99_ratio: f64,
    /// Spans the receiver got during the "on" rounds (proof that they were exported).
    pub spans_exported_bytes: u64,
    pub export_requests: u64,
}

/// Runs the bench on its own thread and single-threaded runtime: the "on" subscriber is
/// installed for that thread only, leaving the process's own logging alone.
pub fn run(
    config: Config,
    embedder: Arc<dyn Embedder>,
    options: &TelemetryBenchOptions,
) -> Result<TelemetryBenchReport, BenchError> {
    let options = options.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BenchError::Stalled(format!("cannot start a runtime: {e}")))?;
        measure(&runtime, config, embedder, &options)
    })
    .join()
    .map_err(|_| BenchError::Stalled("the bench thread panicked".into()))?
}

fn measure(
    runtime: &tokio::runtime::Runtime,
    mut config: Config,
    embedder: Arc<dyn Embedder>,
    options: &TelemetryBenchOptions,
) -> Result<TelemetryBenchReport, BenchError> {
    let scratch = super::scratch_dir();
    config.storage.data_dir = scratch.clone();
    let result = measure_in(runtime, config, embedder, options);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn measure_in(
    runtime: &tokio::runtime::Runtime,
    config: Config,
    embedder: Arc<dyn Embedder>,
    options: &TelemetryBenchOptions,
) -> Result<TelemetryBenchReport, BenchError> {
    let engine = Engine::new(config.clone(), embedder);
    let index = IndexName::parse("bench").expect("a valid name");
    let documents = super::corpus_head(&options.corpus, options.documents)?;
    runtime
        .block_on(ragstream::ingest::ingest_documents(
            &engine, &index, documents, false,
        ))
        .map_err(|e| BenchError::Stalled(format!("ingest: {e}")))?;
    let bodies: Vec<Vec<u8>> = read_queries(&options.queries)?
        .into_iter()
        .take(options.query_count)
        .map(|q| {
            serde_json::to_vec(
                &json!({"retrieval": {"index": index.as_str(), "query": q.text,
                "search_method": "hybrid", "top_k": 10}}),
            )
            .expect("json")
        })
        .collect();

    let sink = Sink::start().map_err(|e| BenchError::Stalled(format!("receiver: {e}")))?;
    let mut on_config = config.telemetry.clone();
    on_config.traces = true;
    on_config.traces_endpoint = sink.url.clone();
    on_config.traces_sampling_ratio = 1.0;
    let on = Telemetry::new(
        &on_config,
        LogFormat::Text,
        tracing_subscriber::EnvFilter::new("warn"),
    )
    .map_err(|e| BenchError::Stalled(e.to_string()))?;
    let off = tracing::Dispatch::none();

    // Round 0 warms up both modes (caches, page cache, lazily opened index) and is not kept.
    let mut times = [Vec::new(), Vec::new()];
    for round in 0..=options.rounds {
        for (half, dispatch) in [(0, &off), (1, &on.dispatch)] {
            ragstream::telemetry::metrics::set_recording(half == 1);
            let ms = tracing::dispatcher::with_default(dispatch, || {
                runtime.block_on(queries(&engine, &bodies))
            })?;
            if round > 0 {
                times[half].extend(ms);
            }
        }
    }
    ragstream::telemetry::metrics::set_recording(config.telemetry.metrics);
    on.flush();
    let [off_ms, on_ms] = times;
    let (off, on) = (Latency::of(off_ms), Latency::of(on_ms));
    Ok(TelemetryBenchReport {
        embedder: engine.embedder().id().to_string(),
        documents: options.documents,
        queries_per_round: bodies.len(),
        rounds: options.rounds,
        p50_ratio: on.p50_ms / off.p50_ms,
        p99_ratio: on.p99_ms / off.p99_ms,
        off,
        on,
        spans_exported_bytes: sink.bytes.load(Ordering::Relaxed),
        export_requests: sink.requests.load(Ordering::Relaxed),
    })
}

/// Each query as the HTTP edge answers it; latencies in milliseconds.
async fn queries(engine: &Engine, bodies: &[Vec<u8>]) -> Result<Vec<f64>, BenchError> {
    let caller = Caller::unrestricted();
    let mut ms = Vec::with_capacity(bodies.len());
    for body in bodies {
        let started = Instant::now();
        let span = tracing::info_span!(
            "query",
            otel.kind = "server",
            transport = "bench",
            contract = "000",
            trace_id = tracing::field::Empty,
            span_id = tracing::field::Empty,
        );
        ragstream::telemetry::propagation::follow(&span, &opentelemetry::Context::new());
        let reply = contracts::answer(engine, &caller, Contract::C000, Target::default(), body)
            .instrument(span)
            .await;
        contracts::observe(Contract::C000, "bench", started, &reply);
        if reply.status != 200 {
            return Err(BenchError::Stalled(format!("query failed: {}", reply.body)));
        }
        ms.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(ms)
}

/// An OTLP/HTTP endpoint that reads each request and answers 200, counting what it got.
struct Sink {
    url: String,
    bytes: Arc<AtomicU64>,
    requests: Arc<AtomicU64>,
}

impl Sink {
    fn start() -> std::io::Result<Sink> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}", listener.local_addr()?);
        let (bytes, requests) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let counters = (bytes.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let counters = counters.clone();
                std::thread::spawn(move || {
                    let _ = acknowledge(stream, &counters.0, &counters.1);
                });
            }
        });
        Ok(Sink {
            url,
            bytes,
            requests,
        })
    }
}

fn acknowledge(stream: TcpStream, bytes: &AtomicU64, requests: &AtomicU64) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut length = 0usize;
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            if line.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        bytes.fetch_add(length as u64, Ordering::Relaxed);
        requests.fetch_add(1, Ordering::Relaxed);
        writer.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")?;
    }
}
