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
use crate::health::{Health, Impact};
use crate::http::{self, HttpState};
use crate::kafka::client_config;
use crate::kafka::dead_letters::DeadLetters;
use crate::kafka::embedded_broker::{announce, EmbeddedBroker};
use crate::kafka::reply_topics::ReplyTopics;
use crate::kafka::topics;
use crate::panic_message;
use crate::pipeline::actor::ActorError;
use crate::pipeline::ingest_pipeline::IngestPipeline;
use crate::pipeline::query_handler;
use crate::pipeline::query_start;
use crate::pipeline::supervisor::{supervise, Backoff, RestartReport};

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("kafka: {0}")]
    Kafka(#[from] rdkafka::error::KafkaError),
    #[error(transparent)]
    Broker(#[from] crate::kafka::embedded_broker::BrokerError),
    #[error(transparent)]
    Topics(#[from] topics::TopicsError),
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
    let broker = EmbeddedBroker::start(&config.kafka, &config.storage.data_dir, None)?;
    create_topics(&config.kafka, broker.bootstrap(), true).await?;
    println!("{}", announce(broker.bootstrap(), &config.kafka));
    record_bootstrap(&config, broker.bootstrap());
    termination().await;
    drop(broker);
    Ok(())
}

/// Creates the daemon's topics that are missing. Each takes the largest message the
/// pipeline accepts, with its dead-letter headers. The embedded broker keeps every message
/// (up to `kafka.embedded_retention_bytes` a partition, if set); a cluster's retention is its
/// own.
async fn create_topics(
    kafka: &crate::config::KafkaConfig,
    bootstrap: &str,
    embedded: bool,
) -> Result<(), topics::TopicsError> {
    let retention_bytes = kafka.embedded_retention_bytes.to_string();
    let largest = crate::kafka::largest_message_bytes(kafka).to_string();
    let mut configs = vec![("max.message.bytes", largest.as_str())];
    if embedded {
        configs.push(("retention.ms", "-1"));
        if kafka.embedded_retention_bytes > 0 {
            configs.push(("retention.bytes", retention_bytes.as_str()));
        }
    }
    topics::ensure(kafka, bootstrap, &topics::daemon_topics(kafka), &configs).await?;
    Ok(())
}

/// Connects the producer and learns the documents topic before the first request needs
/// it, so that the first 202 does not wait for the connection. A broker that does not answer
/// in time is only logged: requests wait for it as before.
async fn warm_up(producer: &FutureProducer, topic: &str) {
    let (producer, topic) = (producer.clone(), topic.to_string());
    let looked = tokio::task::spawn_blocking(move || {
        producer
            .client()
            .fetch_metadata(Some(&topic), Duration::from_secs(2))
            .map(|_| ())
    })
    .await;
    if let Ok(Err(e)) = looked {
        tracing::info!(error = %e, "the producer could not reach the broker at start-up yet");
    }
}

/// Starts a new query group at the end of the queries topic (see [`query_start`]). A broker
/// that cannot say or refuses is logged, and the group starts as Kafka would start it.
async fn skip_query_history(kafka: &crate::config::KafkaConfig, bootstrap: &str) {
    let (kafka, bootstrap) = (kafka.clone(), bootstrap.to_string());
    let skipped = tokio::task::spawn_blocking(move || {
        query_start::skip_history(&kafka, &bootstrap, Duration::from_secs(10))
    })
    .await;
    match skipped {
        Ok(Ok(0)) => {}
        Ok(Ok(n)) => {
            tracing::info!(
                queries = n,
                "a new query group: the queries sent before this daemon started are not answered"
            );
            if let Some(m) = crate::telemetry::metrics() {
                m.bus_queries_before_start_total
                    .with_label_values(&[] as &[&str])
                    .inc_by(n);
            }
        }
        Ok(Err(e)) => tracing::info!(error = %e,
            "could not start the query group at the end of the topic; it starts where Kafka starts it"),
        Err(e) => tracing::warn!(error = %e, "the query group's start-up lookup failed"),
    }
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
    storage_sync: tokio::task::JoinHandle<()>,
    monitor: tokio::task::JoinHandle<()>,
    http: actix_web::dev::ServerHandle,
    ready: Arc<AtomicBool>,
    producer: FutureProducer,
    _broker: Option<EmbeddedBroker>,
}

impl Daemon {
    pub async fn start(config: Config, engine: Arc<Engine>) -> Result<Daemon, DaemonError> {
        let kafka = config.kafka.clone();
        let role = config.serve.role;
        // Where indexes live is checked before anything starts: a wrong bucket, endpoint or
        // credentials stop start-up with the key to fix.
        let storage = engine.storage().await?;
        tracing::info!(role = ?role, storage = %storage.describe(), "starting");
        // A misconfigured embedder (a wrong key, model or dimensions) stops start-up with
        // the provider's answer; one that is down is waited for, as ingestion waits for it.
        match engine.probe_embedder().await {
            Ok(()) => tracing::info!(embedder = %engine.embedder().id(), "embedder answered"),
            Err(crate::engine::EngineError::Embed(e)) if e.is_transient() => tracing::warn!(
                error = %e,
                "embedder unavailable at start-up; ingestion and queries wait for it"
            ),
            Err(e) => return Err(e.into()),
        }
        let on_object_store = storage.object().is_some();
        let indexes = engine.list_indexes().await?;
        let health = Arc::new(Health::default());
        let (broker, bootstrap) = if kafka.brokers.trim().is_empty() {
            let b = EmbeddedBroker::start(&kafka, &config.storage.data_dir, Some(health.clone()))?;
            let addr = b.bootstrap().to_string();
            (Some(b), addr)
        } else {
            (None, kafka.brokers.clone())
        };
        create_topics(&kafka, &bootstrap, broker.is_some()).await?;
        record_bootstrap(&config, &bootstrap);
        start_metrics_at_zero(&config, &indexes, engine.embedder().id());
        let mut producer_config = client_config(&kafka, &bootstrap);
        producer_config.set("message.timeout.ms", "30000");
        // The producer takes any message the pipeline accepts (dead letters of the largest
        // allowed message included, with their headers), unless [kafka.client] says otherwise.
        if !kafka.client.contains_key("message.max.bytes") {
            producer_config.set(
                "message.max.bytes",
                crate::kafka::largest_message_bytes(&kafka).to_string(),
            );
        }
        // Topics are created on purpose (`kafka::topics`, `kafka::reply_topics`), never by a
        // reply to a topic a caller made up.
        producer_config.set("allow.auto.create.topics", "false");
        // An HTTP request's events are sent together; idempotence keeps their order (and
        // writes each once) through the producer's retries.
        producer_config.set("enable.idempotence", "true");
        let producer: FutureProducer = producer_config.create()?;
        warm_up(&producer, &kafka.documents_topic).await;
        let dead_letters = DeadLetters::new(
            producer.clone(),
            kafka.dlq_topic.clone(),
            &config.storage.data_dir,
        )
        .reporting_to(health.clone());
        let (stop, stopped) = watch::channel(false);

        let report = Arc::new(RestartReport::default());
        let ingest = tokio::spawn(only_if(
            role.writes(),
            stopped.clone(),
            IngestPipeline {
                engine: engine.clone(),
                dead_letters: dead_letters.clone(),
                kafka: kafka.clone(),
                bootstrap: bootstrap.clone(),
                report: report.clone(),
                health: health.clone(),
            }
            .run(stopped.clone()),
        ));

        // Queries over the bus.
        let query_consumer: StreamConsumer = client_config(&kafka, &bootstrap)
            .set("group.id", query_start::query_group(&kafka))
            // A fetch waits at most this long for data. Real brokers answer as soon as a
            // message arrives; the embedded mock cluster waits the full time, which would add
            // up to 500 ms (the default) to every bus query.
            .set("fetch.wait.max.ms", "10")
            .set("enable.auto.commit", "true")
            .set("auto.offset.reset", "earliest")
            .set("session.timeout.ms", "6000")
            .set("heartbeat.interval.ms", "500")
            .create()?;
        if role.answers_bus_queries() {
            skip_query_history(&kafka, &bootstrap).await;
            query_consumer.subscribe(&[kafka.queries_topic.as_str()])?;
        }
        let maintenance_report = Arc::new(RestartReport::default());
        let maintenance = tokio::spawn(only_if(role.writes(), stopped.clone(), {
            let (engine, stopped) = (engine.clone(), stopped.clone());
            supervised(
                "maintenance",
                maintenance_report.clone(),
                stopped.clone(),
                move || crate::pipeline::maintenance::run(engine.clone(), stopped.clone()),
            )
        }));
        // The indexes' other side on an object store: a writer publishes its keyword
        // versions, a replica reads what its writer committed.
        let notices = if role.writes() {
            None
        } else {
            Some(version_notices(&kafka, &bootstrap)?)
        };
        let storage_sync = tokio::spawn({
            let (engine, stopped, health) = (engine.clone(), stopped.clone(), health.clone());
            let producer = producer.clone();
            async move {
                match (role.writes(), on_object_store) {
                    (true, true) => {
                        crate::pipeline::keyword_publisher::run(engine, producer, stopped).await;
                    }
                    (false, _) => {
                        crate::pipeline::replica_refresh::run(engine, health, notices, stopped)
                            .await;
                    }
                    (true, false) => {}
                }
            }
        });
        let queries_report = Arc::new(RestartReport::default());
        let monitored_dead_letters = dead_letters.clone();
        let queries = tokio::spawn(only_if(role.answers_bus_queries(), stopped.clone(), {
            let (engine, producer, stopped) = (engine.clone(), producer.clone(), stopped.clone());
            let consumer = Arc::new(query_consumer);
            let reply_topics = Arc::new(ReplyTopics::new(&kafka, &bootstrap)?);
            supervised(
                "queries",
                queries_report.clone(),
                stopped.clone(),
                move || {
                    query_handler::run(
                        engine.clone(),
                        consumer.clone(),
                        producer.clone(),
                        dead_letters.clone(),
                        reply_topics.clone(),
                        stopped.clone(),
                    )
                },
            )
        }));
        let monitor = tokio::spawn(monitor(
            health.clone(),
            monitored_dead_letters,
            config.storage.data_dir.clone(),
            Duration::from_millis(kafka.stall_after_ms),
            [
                ("pipeline", report.clone()),
                ("queries", queries_report),
                ("maintenance", maintenance_report),
            ],
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
                health,
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
            storage_sync,
            monitor,
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
        let _ = self.storage_sync.await;
        let _ = self.monitor.await;
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

/// A query replica's reader of the versions topic: a group of its own (every replica reads
/// every notice). It starts at the topic's beginning, so that no notice sent while it
/// joins is missed; every waiting notice is read, and one look serves them all (`replica_refresh`).
fn version_notices(
    kafka: &crate::config::KafkaConfig,
    bootstrap: &str,
) -> Result<StreamConsumer, DaemonError> {
    let consumer: StreamConsumer = client_config(kafka, bootstrap)
        .set(
            "group.id",
            format!(
                "{}-replica-{}",
                kafka.group_id,
                uuid::Uuid::new_v4().simple()
            ),
        )
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("fetch.wait.max.ms", "10")
        .create()?;
    consumer.subscribe(&[kafka.versions_topic.as_str()])?;
    Ok(consumer)
}

/// `unit` when this daemon's role runs it; otherwise a task that only waits for shutdown.
async fn only_if(
    runs: bool,
    mut stopped: watch::Receiver<bool>,
    unit: impl std::future::Future<Output = ()>,
) {
    if runs {
        unit.await;
    } else {
        let _ = stopped.changed().await;
    }
}

/// Runs `run` under the supervisor until it returns after shutdown; a panic counts as a
/// failure (restarted after a backoff, reported in `report`), not as the end of the task.
async fn supervised<F, Fut>(
    name: &'static str,
    report: Arc<RestartReport>,
    stopped: watch::Receiver<bool>,
    mut run: F,
) where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    use futures::FutureExt;
    supervise(
        name,
        || {
            std::panic::AssertUnwindSafe(run())
                .catch_unwind()
                .map(move |ended| {
                    ended.map_err(|panic| ActorError::Panicked {
                        actor: name,
                        reason: panic_message(&panic),
                    })
                })
        },
        Backoff::default(),
        report,
        stopped,
    )
    .await;
}

/// How often the monitor looks at the daemon's parts.
const MONITOR_EVERY: Duration = Duration::from_secs(1);

/// How long the storage probe may take before the data directory counts as unusable.
const PROBE_LIMIT: Duration = Duration::from_secs(5);

/// Keeps `health` current: the data directory can be written (readiness), no pipeline stage
/// has held one message longer than `stall_after`, and no supervised unit is in a restart
/// loop (liveness).
async fn monitor(
    health: Arc<Health>,
    dead_letters: DeadLetters,
    data_dir: std::path::PathBuf,
    stall_after: Duration,
    supervised: [(&'static str, Arc<RestartReport>); 3],
    mut stopped: watch::Receiver<bool>,
) {
    let mut ticks = tokio::time::interval(MONITOR_EVERY);
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = stopped.changed() => return,
        }
        let dir = data_dir.clone();
        let probe = tokio::task::spawn_blocking(move || crate::data_dir::probe(&dir));
        // A hung file system must not freeze the other checks.
        let storage = match tokio::time::timeout(PROBE_LIMIT, probe).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "a small write did not finish within {PROBE_LIMIT:?}"
            )),
        };
        dead_letters.expire(crate::kafka::dead_letters::FAILING_EXPIRES);
        health.set(
            "storage",
            Impact::Unready,
            storage
                .err()
                .map(|e| format!("the data directory cannot be written: {e}")),
        );
        let stalled = crate::pipeline::actor::longest_busy()
            .filter(|(_, held)| *held >= stall_after)
            .map(|(stage, held)| {
                format!(
                    "stage {stage} has held one batch for {} s (kafka.stall_after_ms is {} ms)",
                    held.as_secs(),
                    stall_after.as_millis()
                )
            });
        health.set("pipeline.stalled", Impact::Unhealthy, stalled);
        for (name, report) in &supervised {
            health.set(
                &format!("{name}.restarts"),
                Impact::Unhealthy,
                report
                    .restart_loop(&Backoff::default())
                    .map(|r| format!("{name} is in a restart loop: {r}")),
            );
        }
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

/// The supervised units, as `ragstream_actor_restarts_total` labels them.
const SUPERVISED: [&str; 4] = ["ingest", "maintenance", "queries", "embedded_broker"];

/// Creates the series of every label value known now at zero ([`Metrics::start_at_zero`]).
///
/// [`Metrics::start_at_zero`]: crate::telemetry::metrics::Metrics::start_at_zero
fn start_metrics_at_zero(config: &Config, indexes: &[crate::model::IndexName], embedder: &str) {
    let Some(m) = crate::telemetry::metrics() else {
        return;
    };
    let mut index_names: Vec<&str> = indexes.iter().map(|i| i.as_str()).collect();
    index_names.push(&config.contracts.default_index);
    let contracts = crate::contracts::Contract::ALL.map(|c| c.label());
    let dead_letter_reasons: Vec<&str> = crate::pipeline::events::dead_letter_codes().collect();
    let error_codes: Vec<&str> = crate::contracts::ERROR_CODES
        .iter()
        .map(|(code, _)| *code)
        .collect();
    let methods = [
        crate::retrieval::SearchMethod::Semantic,
        crate::retrieval::SearchMethod::Keyword,
        crate::retrieval::SearchMethod::Hybrid,
    ]
    .map(|m| m.name());
    m.start_at_zero(&crate::telemetry::metrics::KnownLabels {
        dead_letter_reasons: &dead_letter_reasons,
        contracts: &contracts,
        error_codes: &error_codes,
        search_methods: &methods,
        embedders: &[embedder],
        batching_actor: crate::pipeline::ingest_source::IngestSource::NAME,
        transports: &["http", "bus"],
        actors: &crate::pipeline::STAGES,
        supervised: &SUPERVISED,
        indexes: &index_names,
        topics: &[config.kafka.documents_topic.as_str()],
    });
}
