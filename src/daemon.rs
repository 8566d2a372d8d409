//! `ragstream serve`: wires the engine, the Kafka edges, the pipeline stages and HTTP, and
//! shuts them down in order on SIGTERM/SIGINT.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::producer::{FutureProducer, Producer};
use tokio::sync::{mpsc, watch};

use crate::config::Config;
use crate::engine::Engine;
use crate::pipeline::index_writer::{resume_positions, IndexWriter};
use crate::pipeline::ingest_source::{self, CheckpointContext, IngestSourceSettings};
use crate::pipeline::query_handler;
use crate::transport::broker::{announce, EmbeddedBroker};
use crate::transport::dead_letters::DeadLetters;
use crate::transport::http::{self, HttpState};
use crate::transport::kafka::client_config;

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("kafka: {0}")]
    Kafka(#[from] rdkafka::error::KafkaError),
    #[error(transparent)]
    Broker(#[from] crate::transport::broker::BrokerError),
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
    #[error("http: {0}")]
    Http(#[from] std::io::Error),
}

/// Waits for SIGTERM or SIGINT.
pub async fn termination() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Writes the bootstrap address to `<data_dir>/kafka.bootstrap` for scripts and tests.
fn record_bootstrap(config: &Config, bootstrap: &str) {
    let path = config.storage.data_dir.join("kafka.bootstrap");
    if let Err(e) = std::fs::create_dir_all(&config.storage.data_dir)
        .and_then(|_| std::fs::write(&path, bootstrap))
    {
        tracing::warn!(error = %e, path = %path.display(), "cannot record the bootstrap address");
    }
}

/// `ragstream broker`: the embedded broker as its own process.
pub async fn run_broker(config: Config) -> Result<(), DaemonError> {
    let broker = EmbeddedBroker::start(&config.kafka)?;
    println!("{}", announce(broker.bootstrap(), &config.kafka));
    record_bootstrap(&config, broker.bootstrap());
    termination().await;
    drop(broker);
    Ok(())
}

/// Grace period for draining the batch in flight on shutdown.
const GRACE: Duration = Duration::from_secs(20);

pub async fn serve(config: Config, engine: Arc<Engine>) -> Result<(), DaemonError> {
    let kafka = config.kafka.clone();
    let _broker;
    let bootstrap = if kafka.brokers.trim().is_empty() {
        let b = EmbeddedBroker::start(&kafka)?;
        let addr = b.bootstrap().to_string();
        _broker = Some(b);
        addr
    } else {
        _broker = None;
        kafka.brokers.clone()
    };
    println!("{}", announce(&bootstrap, &kafka));
    record_bootstrap(&config, &bootstrap);

    let producer: FutureProducer = client_config(&kafka, &bootstrap)
        .set("message.timeout.ms", "30000")
        .create()?;
    let dead_letters = DeadLetters::new(producer.clone(), kafka.dlq_topic.clone());

    // Ingestion: source → bounded channel → writer on its own thread and runtime, so that
    // chunking and embedding never hold up queries.
    let positions = Arc::new(Mutex::new(resume_positions(&engine).await?));
    let doc_consumer: StreamConsumer<CheckpointContext> = client_config(&kafka, &bootstrap)
        .set("group.id", &kafka.group_id)
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        // Bound librdkafka's prefetch: the backlog belongs in Kafka, not in this process.
        .set("queued.max.messages.kbytes", "16384")
        .set("auto.offset.reset", "earliest")
        .set("session.timeout.ms", "6000")
        .set("heartbeat.interval.ms", "500")
        .create_with_context(CheckpointContext {
            positions: positions.clone(),
        })?;
    doc_consumer.subscribe(&[kafka.documents_topic.as_str()])?;
    let doc_consumer = Arc::new(doc_consumer);
    let (to_writer, from_source) = mpsc::channel(1);
    let (stop_tx, stop_rx) = watch::channel(false);
    let source = tokio::spawn(ingest_source::run(
        doc_consumer.clone(),
        IngestSourceSettings {
            batch_max_documents: kafka.batch_max_documents,
            batch_max: Duration::from_millis(kafka.batch_max_ms),
            max_message_bytes: kafka.max_message_bytes,
            limits: config.limits.document(),
        },
        dead_letters.clone(),
        to_writer,
        stop_rx.clone(),
    ));
    let writer = IndexWriter::new(engine.clone(), dead_letters.clone(), positions);
    let writer_consumer = doc_consumer.clone();
    let writer_thread = std::thread::Builder::new()
        .name("index-writer".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("writer runtime");
            rt.block_on(writer.run(from_source, writer_consumer));
        })?;

    // Queries over the bus.
    let query_consumer: StreamConsumer = client_config(&kafka, &bootstrap)
        .set("group.id", format!("{}-queries", kafka.group_id))
        .set("enable.auto.commit", "true")
        .set("auto.offset.reset", "earliest")
        .set("session.timeout.ms", "6000")
        .set("heartbeat.interval.ms", "500")
        .create()?;
    query_consumer.subscribe(&[kafka.queries_topic.as_str()])?;
    let queries = tokio::spawn(query_handler::run(
        engine.clone(),
        Arc::new(query_consumer),
        producer.clone(),
        dead_letters,
        stop_rx,
    ));

    let ready = Arc::new(AtomicBool::new(false));
    let (addr, http_handle) = http::start(
        HttpState {
            engine: engine.clone(),
            producer: producer.clone(),
            documents_topic: kafka.documents_topic.clone(),
            ready: ready.clone(),
        },
        &config.http.bind,
        config.http.max_body_bytes,
    )?;
    println!("http: http://{addr}");
    ready.store(true, Ordering::SeqCst);

    termination().await;
    println!("shutting down: draining the batch in flight");
    ready.store(false, Ordering::SeqCst);
    let _ = stop_tx.send(true);
    let _ = source.await;
    let _ = queries.await;
    // The source has handed over its last batch and dropped the channel: the writer finishes
    // it and exits. Bounded by the grace period.
    let deadline = std::time::Instant::now() + GRACE;
    while !writer_thread.is_finished() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if !writer_thread.is_finished() {
        tracing::error!(
            "the writer did not finish within the grace period; uncommitted events will be re-read"
        );
    }
    http_handle.stop(true).await;
    let _ = tokio::task::spawn_blocking(move || producer.flush(Duration::from_secs(5))).await;
    Ok(())
}
