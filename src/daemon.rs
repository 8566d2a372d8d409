//! `ragstream serve`: wires the engine, the Kafka edges, the pipeline stages and HTTP, and
//! shuts them down in order on SIGTERM/SIGINT.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::producer::{FutureProducer, Producer};
use tokio::sync::watch;

use crate::config::Config;
use crate::engine::Engine;
use crate::pipeline::ingest_pipeline::IngestPipeline;
use crate::pipeline::query_handler;
use crate::pipeline::supervisor::RestartReport;
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

/// A running daemon: embedded broker (unless a cluster is configured), the supervised ingest
/// pipeline, the query handler, the maintenance actor and HTTP.
pub struct Daemon {
    pub bootstrap: String,
    pub http_addr: std::net::SocketAddr,
    pub pipeline: Arc<RestartReport>,
    grace: Duration,
    stop: watch::Sender<bool>,
    ingest: tokio::task::JoinHandle<()>,
    queries: tokio::task::JoinHandle<()>,
    maintenance: tokio::task::JoinHandle<()>,
    http: actix_web::dev::ServerHandle,
    ready: Arc<AtomicBool>,
    producer: FutureProducer,
    _broker: Option<EmbeddedBroker>,
}

impl Daemon {
    pub async fn start(config: Config, engine: Arc<Engine>) -> Result<Daemon, DaemonError> {
        let kafka = config.kafka.clone();
        let (broker, bootstrap) = if kafka.brokers.trim().is_empty() {
            let b = EmbeddedBroker::start(&kafka)?;
            let addr = b.bootstrap().to_string();
            (Some(b), addr)
        } else {
            (None, kafka.brokers.clone())
        };
        record_bootstrap(&config, &bootstrap);
        let producer: FutureProducer = client_config(&kafka, &bootstrap)
            .set("message.timeout.ms", "30000")
            .create()?;
        let dead_letters = DeadLetters::new(producer.clone(), kafka.dlq_topic.clone());
        let (stop, stopped) = watch::channel(false);

        let report = Arc::new(RestartReport::default());
        let ingest = tokio::spawn(
            IngestPipeline {
                engine: engine.clone(),
                dead_letters: dead_letters.clone(),
                kafka: kafka.clone(),
                bootstrap: bootstrap.clone(),
                report: report.clone(),
            }
            .run(stopped.clone()),
        );

        // Queries over the bus.
        let query_consumer: StreamConsumer = client_config(&kafka, &bootstrap)
            .set("group.id", format!("{}-queries", kafka.group_id))
            // A fetch waits at most this long for data. Real brokers answer as soon as a
            // message arrives; the embedded mock cluster waits the full time, which would add
            // up to 500 ms (the default) to every bus query.
            .set("fetch.wait.max.ms", "10")
            .set("enable.auto.commit", "true")
            .set("auto.offset.reset", "earliest")
            .set("session.timeout.ms", "6000")
            .set("heartbeat.interval.ms", "500")
            .create()?;
        query_consumer.subscribe(&[kafka.queries_topic.as_str()])?;
        let maintenance = tokio::spawn(crate::pipeline::maintenance::run(
            engine.clone(),
            stopped.clone(),
        ));
        let queries = tokio::spawn(query_handler::run(
            engine.clone(),
            Arc::new(query_consumer),
            producer.clone(),
            dead_letters,
            stopped,
        ));

        let ready = Arc::new(AtomicBool::new(false));
        let (http_addr, http) = http::start(
            HttpState {
                engine: engine.clone(),
                producer: producer.clone(),
                documents_topic: kafka.documents_topic.clone(),
                ready: ready.clone(),
                pipeline: report.clone(),
                max_body_bytes: config.http.max_body_bytes,
                kafka: kafka.clone(),
                bootstrap: bootstrap.clone(),
            },
            &config.http.bind,
        )?;
        ready.store(true, Ordering::SeqCst);
        Ok(Daemon {
            bootstrap,
            http_addr,
            pipeline: report,
            grace: Duration::from_millis(kafka.shutdown_grace_ms),
            stop,
            ingest,
            queries,
            maintenance,
            http,
            ready,
            producer,
            _broker: broker,
        })
    }

    /// Stops taking work, lets the pipeline commit the batches in flight (bounded by
    /// `kafka.shutdown_grace_ms`), then stops HTTP and flushes the producer.
    pub async fn shutdown(self) {
        self.ready.store(false, Ordering::SeqCst);
        let _ = self.stop.send(true);
        let _ = self.queries.await;
        // A pass stops at its next await; a commit it made is whole (Lance commits are atomic
        // and the keyword store is repaired from Lance on open).
        let _ = self.maintenance.await;
        let mut ingest = self.ingest;
        if tokio::time::timeout(self.grace, &mut ingest).await.is_err() {
            tracing::error!(grace = ?self.grace,
                "the pipeline did not drain within the grace period; uncommitted events will be re-read");
            ingest.abort();
        }
        self.http.stop(true).await;
        let producer = self.producer;
        let _ = tokio::task::spawn_blocking(move || producer.flush(Duration::from_secs(5))).await;
    }
}

/// `ragstream serve`: runs until SIGTERM/SIGINT, then drains and exits.
pub async fn serve(config: Config, engine: Arc<Engine>) -> Result<(), DaemonError> {
    let kafka = config.kafka.clone();
    let daemon = Daemon::start(config, engine).await?;
    println!("{}", announce(&daemon.bootstrap, &kafka));
    println!("http: http://{}", daemon.http_addr);
    termination().await;
    println!("shutting down: draining the batches in flight");
    daemon.shutdown().await;
    Ok(())
}
