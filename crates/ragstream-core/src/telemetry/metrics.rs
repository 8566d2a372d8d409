//! Prometheus metrics, named by Prometheus conventions (`ragstream_` prefix, base units,
//! `_total` for counters, `_seconds` for durations), exposed at `GET /metrics`.
//!
//! One registry per process, reached through [`metrics()`]: the stages that count live in
//! different modules (index writer, dead letters, edges), and threading a handle through each
//! of them would only add parameters. Each metric is recorded at exactly one place.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::LazyLock;

use prometheus::{
    CounterVec, Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

/// Latency buckets from 1 ms to 10 s: queries, commits and embedding batches all fall in it.
const SECONDS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Freshness buckets (produce → searchable), 10 ms to 60 s: the SLO is 2 s.
const FRESHNESS_SECONDS: &[f64] = &[
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0,
];

/// Batch-size buckets: 1 to 4096 items.
const SIZES: &[f64] = &[
    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0,
];

pub struct Metrics {
    registry: Registry,
    /// Contract requests answered, by contract and transport (`http`, `bus`).
    pub query_duration_seconds: HistogramVec,
    /// Contract requests answered with an error, by contract, transport and error code.
    pub query_errors_total: IntCounterVec,
    /// Engine searches, by method (`semantic`, `keyword`, `hybrid`).
    pub search_duration_seconds: HistogramVec,
    /// Contract 003 requests for `all`/`deleted` refused (`rag.visibility.override_denied`).
    pub visibility_override_denied_total: IntCounterVec,
    /// Documents written by commits, by index and operation (`upsert`, `delete`).
    pub documents_indexed_total: IntCounterVec,
    /// Chunks written by commits, by index.
    pub chunks_indexed_total: IntCounterVec,
    /// Commit latency per store (`lance`, `keyword`).
    pub commit_duration_seconds: HistogramVec,
    /// The newest version of each index.
    pub index_version: IntGaugeVec,
    /// Lance fragments and rows (live and soft-deleted) of each index's newest version.
    pub index_fragments: IntGaugeVec,
    pub index_rows: IntGaugeVec,
    /// Bytes of the resident vectors' codes of each index's newest version.
    pub index_resident_vector_bytes: IntGaugeVec,
    /// Versions on disk (queryable by `index_version`) of each index.
    pub index_versions: IntGaugeVec,
    /// Keyword segments of each index's newest version (a query searches each).
    pub index_keyword_segments: IntGaugeVec,
    /// Maintenance passes, their duration, and what they did, by index.
    pub maintenance_runs_total: IntCounterVec,
    pub maintenance_duration_seconds: HistogramVec,
    pub maintenance_fragments_compacted_total: IntCounterVec,
    pub maintenance_chunks_purged_total: IntCounterVec,
    pub maintenance_versions_pruned_total: IntCounterVec,
    /// Messages sent to the dead-letter topic, by reason.
    pub dead_letters_total: IntCounterVec,
    /// Dead letters the topic refused, parked in the data directory instead, by reason.
    pub dead_letters_parked_total: IntCounterVec,
    /// Document events whose envelope held fields this version does not know (ignored).
    pub event_unknown_fields_total: IntCounterVec,
    /// Bus queries a new consumer group skipped: produced before the daemon started.
    pub bus_queries_before_start_total: IntCounterVec,
    /// Stored Kafka checkpoints found to belong to another log (and so not applied).
    pub checkpoint_resets_total: IntCounterVec,
    /// Messages the broker's retention deleted before the pipeline read them, by topic.
    pub kafka_messages_lost_total: IntCounterVec,
    /// Supervised restarts of a pipeline.
    pub actor_restarts_total: IntCounterVec,
    /// Messages read from Kafka, by topic and partition.
    pub messages_consumed_total: IntCounterVec,
    /// Document events in a batch when it closes.
    pub batch_events: HistogramVec,
    /// Produce (Kafka message timestamp) → committed and searchable, per document event.
    pub freshness_seconds: HistogramVec,
    /// Embedding calls: latency and texts per call, by embedder.
    pub embed_duration_seconds: HistogramVec,
    pub embed_batch_texts: HistogramVec,
    /// Times an HTTP embedding provider's circuit breaker opened, by embedder.
    pub embedder_circuit_opened_total: IntCounterVec,
    /// Embedding-cache lookups, by result (`hit`, `miss`).
    pub embedding_cache_lookups_total: IntCounterVec,
    /// Vectors the embedding cache dropped to stay within `model.cache_max_mb`.
    pub embedding_cache_evicted_total: IntCounterVec,
    /// Messages waiting in an actor's mailbox.
    pub actor_mailbox_depth: IntGaugeVec,
    /// Time senders spent waiting for room in an actor's mailbox (backpressure).
    pub actor_backpressure_seconds_total: CounterVec,
    /// Time each actor spent handling messages.
    pub actor_busy_seconds_total: CounterVec,
    /// Consumer lag of the pipeline group, by topic and partition (read at scrape time).
    pub consumer_lag_messages: IntGaugeVec,
    /// Partitions of a topic this process owns in the pipeline group now.
    pub partitions_assigned: IntGaugeVec,
    /// Triple extraction that gave nothing, by reason (`malformed` chunks kept without
    /// extracted triples, `refused` documents dead-lettered).
    pub graph_extraction_failures_total: IntCounterVec,
    /// A writer on an object store: failed publications of an index's keyword versions.
    pub keyword_publish_failures_total: IntCounterVec,
    /// A query replica: failed looks for new versions of an index (it serves the previous).
    pub replica_refresh_failures_total: IntCounterVec,
    /// A query replica: the version of each index it serves.
    pub replica_serving_version: IntGaugeVec,
}

fn histogram(name: &str, help: &str, labels: &[&str]) -> HistogramVec {
    HistogramVec::new(
        HistogramOpts::new(name, help).buckets(SECONDS.to_vec()),
        labels,
    )
    .expect("a valid histogram definition")
}

fn sized(name: &str, help: &str, labels: &[&str], buckets: &[f64]) -> HistogramVec {
    HistogramVec::new(
        HistogramOpts::new(name, help).buckets(buckets.to_vec()),
        labels,
    )
    .expect("a valid histogram definition")
}

fn gauge(name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    IntGaugeVec::new(Opts::new(name, help), labels).expect("a valid gauge definition")
}

fn counter(name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    IntCounterVec::new(Opts::new(name, help), labels).expect("a valid counter definition")
}

impl Metrics {
    fn new() -> Metrics {
        let m = Metrics {
            registry: Registry::new(),
            query_duration_seconds: histogram(
                "ragstream_query_duration_seconds",
                "Time to answer a contract request, by contract and transport.",
                &["contract", "transport"],
            ),
            query_errors_total: counter(
                "ragstream_query_errors_total",
                "Contract requests answered with an error, by contract, transport and code.",
                &["contract", "transport", "code"],
            ),
            search_duration_seconds: histogram(
                "ragstream_search_duration_seconds",
                "Time of one engine search, by retrieval method.",
                &["method"],
            ),
            visibility_override_denied_total: counter(
                "ragstream_visibility_override_denied_total",
                "Contract 003 requests for visibility all/deleted without the override.",
                &["index"],
            ),
            documents_indexed_total: counter(
                "ragstream_documents_indexed_total",
                "Documents written by commits, by index and operation.",
                &["index", "op"],
            ),
            chunks_indexed_total: counter(
                "ragstream_chunks_indexed_total",
                "Chunks written by commits, by index.",
                &["index"],
            ),
            commit_duration_seconds: histogram(
                "ragstream_commit_duration_seconds",
                "Time of one commit, by index and store.",
                &["index", "store"],
            ),
            index_version: IntGaugeVec::new(
                Opts::new(
                    "ragstream_index_version",
                    "The newest version of each index.",
                ),
                &["index"],
            )
            .expect("a valid gauge definition"),
            index_fragments: gauge(
                "ragstream_index_fragments",
                "Lance fragments of each index's newest version.",
                &["index"],
            ),
            index_keyword_segments: gauge(
                "ragstream_index_keyword_segments",
                "Keyword index segments of each index's newest version (a query searches each).",
                &["index"],
            ),
            index_rows: gauge(
                "ragstream_index_rows",
                "Rows (chunks, live and soft-deleted) of each index's newest version.",
                &["index"],
            ),
            index_resident_vector_bytes: gauge(
                "ragstream_index_resident_vector_bytes",
                "Bytes of the in-memory vector codes unfiltered vector searches scan, per index.",
                &["index"],
            ),
            keyword_publish_failures_total: counter(
                "ragstream_keyword_publish_failures_total",
                "Failed publications of an index's keyword versions to the object store (a writer).",
                &["index"],
            ),
            replica_refresh_failures_total: counter(
                "ragstream_replica_refresh_failures_total",
                "Failed looks for an index's new versions on the object store (a query replica; it serves the previous one).",
                &["index"],
            ),
            replica_serving_version: gauge(
                "ragstream_replica_serving_version",
                "The version of each index a query replica serves.",
                &["index"],
            ),
            index_versions: gauge(
                "ragstream_index_versions",
                "Versions of each index still on disk (queryable by index_version).",
                &["index"],
            ),
            maintenance_runs_total: counter(
                "ragstream_maintenance_runs_total",
                "Maintenance passes (purge, compaction, version pruning), by index.",
                &["index"],
            ),
            maintenance_duration_seconds: histogram(
                "ragstream_maintenance_duration_seconds",
                "Time of one maintenance pass, by index.",
                &["index"],
            ),
            maintenance_fragments_compacted_total: counter(
                "ragstream_maintenance_fragments_compacted_total",
                "Lance fragments rewritten by compaction, by index.",
                &["index"],
            ),
            maintenance_chunks_purged_total: counter(
                "ragstream_maintenance_chunks_purged_total",
                "Soft-deleted chunks removed for good after their retention, by index.",
                &["index"],
            ),
            maintenance_versions_pruned_total: counter(
                "ragstream_maintenance_versions_pruned_total",
                "Index versions pruned by maintenance passes, by index.",
                &["index"],
            ),
            dead_letters_total: counter(
                "ragstream_dead_letters_total",
                "Messages sent to the dead-letter topic, by reason.",
                &["reason"],
            ),
            dead_letters_parked_total: counter(
                "ragstream_dead_letters_parked_total",
                "Dead letters the dead-letter topic refused, parked in the data directory, by reason.",
                &["reason"],
            ),
            event_unknown_fields_total: counter(
                "ragstream_event_unknown_fields_total",
                "Document events whose envelope held fields this version does not know; they were ignored (a newer producer's).",
                &[],
            ),
            bus_queries_before_start_total: counter(
                "ragstream_bus_queries_before_start_total",
                "Bus queries not answered because they were produced before the daemon started, on a partition new to its consumer group.",
                &[],
            ),
            kafka_messages_lost_total: counter(
                "ragstream_kafka_messages_lost_total",
                "Messages the broker's retention deleted before the pipeline read them, by topic.",
                &["topic"],
            ),
            checkpoint_resets_total: counter(
                "ragstream_checkpoint_resets_total",
                "Stored Kafka checkpoints that belong to another log and were not applied, by index.",
                &["index"],
            ),
            actor_restarts_total: counter(
                "ragstream_actor_restarts_total",
                "Supervised restarts, by pipeline.",
                &["pipeline"],
            ),
            messages_consumed_total: counter(
                "ragstream_messages_consumed_total",
                "Messages read from Kafka, by topic and partition.",
                &["topic", "partition"],
            ),
            batch_events: sized(
                "ragstream_batch_events",
                "Document events in a batch when it closes.",
                &["pipeline"],
                SIZES,
            ),
            freshness_seconds: sized(
                "ragstream_freshness_seconds",
                "Produce (message timestamp) to searchable (commit), per document event.",
                &["index"],
                FRESHNESS_SECONDS,
            ),
            embed_duration_seconds: histogram(
                "ragstream_embed_duration_seconds",
                "Time of one embedding call, by embedder.",
                &["embedder"],
            ),
            embed_batch_texts: sized(
                "ragstream_embed_batch_texts",
                "Texts in one embedding call, by embedder.",
                &["embedder"],
                SIZES,
            ),
            embedder_circuit_opened_total: counter(
                "ragstream_embedder_circuit_opened_total",
                "Times an HTTP embedding provider's circuit breaker opened, by embedder.",
                &["embedder"],
            ),
            embedding_cache_lookups_total: counter(
                "ragstream_embedding_cache_lookups_total",
                "Embedding-cache lookups, by result (hit or miss).",
                &["result"],
            ),
            embedding_cache_evicted_total: counter(
                "ragstream_embedding_cache_evicted_total",
                "Vectors the embedding cache dropped to stay within its size limit.",
                &[],
            ),
            actor_mailbox_depth: gauge(
                "ragstream_actor_mailbox_depth",
                "Messages waiting in an actor's mailbox.",
                &["actor"],
            ),
            actor_backpressure_seconds_total: CounterVec::new(
                Opts::new(
                    "ragstream_actor_backpressure_seconds_total",
                    "Time senders waited for room in an actor's mailbox.",
                ),
                &["actor"],
            )
            .expect("a valid counter definition"),
            actor_busy_seconds_total: CounterVec::new(
                Opts::new(
                    "ragstream_actor_busy_seconds_total",
                    "Time an actor spent handling messages (waits to send downstream included).",
                ),
                &["actor"],
            )
            .expect("a valid counter definition"),
            consumer_lag_messages: gauge(
                "ragstream_consumer_lag_messages",
                "Messages on a partition the pipeline group has not committed yet.",
                &["topic", "partition"],
            ),
            partitions_assigned: gauge(
                "ragstream_partitions_assigned",
                "Partitions of a topic this process owns in the pipeline group now.",
                &["topic"],
            ),
            graph_extraction_failures_total: counter(
                "ragstream_graph_extraction_failures_total",
                "Triple extractions that gave nothing, by reason (malformed, refused).",
                &["reason"],
            ),
        };
        let r = &m.registry;
        for c in [
            m.query_duration_seconds.clone(),
            m.search_duration_seconds.clone(),
            m.commit_duration_seconds.clone(),
            m.batch_events.clone(),
            m.freshness_seconds.clone(),
            m.embed_duration_seconds.clone(),
            m.embed_batch_texts.clone(),
            m.maintenance_duration_seconds.clone(),
        ] {
            r.register(Box::new(c)).expect("registered once");
        }
        for c in [
            m.query_errors_total.clone(),
            m.visibility_override_denied_total.clone(),
            m.documents_indexed_total.clone(),
            m.chunks_indexed_total.clone(),
            m.dead_letters_total.clone(),
            m.dead_letters_parked_total.clone(),
            m.event_unknown_fields_total.clone(),
            m.bus_queries_before_start_total.clone(),
            m.checkpoint_resets_total.clone(),
            m.kafka_messages_lost_total.clone(),
            m.actor_restarts_total.clone(),
            m.messages_consumed_total.clone(),
            m.embedding_cache_lookups_total.clone(),
            m.embedding_cache_evicted_total.clone(),
            m.embedder_circuit_opened_total.clone(),
            m.graph_extraction_failures_total.clone(),
            m.maintenance_runs_total.clone(),
            m.maintenance_fragments_compacted_total.clone(),
            m.maintenance_chunks_purged_total.clone(),
            m.maintenance_versions_pruned_total.clone(),
            m.keyword_publish_failures_total.clone(),
            m.replica_refresh_failures_total.clone(),
        ] {
            r.register(Box::new(c)).expect("registered once");
        }
        for g in [
            m.index_version.clone(),
            m.index_fragments.clone(),
            m.index_rows.clone(),
            m.index_resident_vector_bytes.clone(),
            m.index_versions.clone(),
            m.index_keyword_segments.clone(),
            m.replica_serving_version.clone(),
            m.actor_mailbox_depth.clone(),
            m.consumer_lag_messages.clone(),
            m.partitions_assigned.clone(),
        ] {
            r.register(Box::new(g)).expect("registered once");
        }
        r.register(Box::new(m.actor_backpressure_seconds_total.clone()))
            .expect("registered once");
        r.register(Box::new(m.actor_busy_seconds_total.clone()))
            .expect("registered once");
        m
    }

    /// Creates, at zero, the series of every label value known at start-up, so that a rate
    /// or an alert over a counter sees its first event instead of a series that appears
    /// with it.
    pub fn start_at_zero(&self, known: &KnownLabels<'_>) {
        self.event_unknown_fields_total
            .with_label_values(&[] as &[&str]);
        self.bus_queries_before_start_total
            .with_label_values(&[] as &[&str]);
        for reason in known.dead_letter_reasons {
            self.dead_letters_total.with_label_values(&[reason]);
            self.dead_letters_parked_total.with_label_values(&[reason]);
        }
        for contract in known.contracts {
            for transport in known.transports {
                self.query_duration_seconds
                    .with_label_values(&[contract, transport]);
                for code in known.error_codes {
                    self.query_errors_total
                        .with_label_values(&[contract, transport, code]);
                }
            }
        }
        for method in known.search_methods {
            self.search_duration_seconds.with_label_values(&[method]);
        }
        for actor in known.actors {
            self.actor_backpressure_seconds_total
                .with_label_values(&[actor]);
            self.actor_busy_seconds_total.with_label_values(&[actor]);
        }
        for unit in known.supervised {
            self.actor_restarts_total.with_label_values(&[unit]);
        }
        self.batch_events.with_label_values(&[known.batching_actor]);
        for index in known.indexes {
            for counter in [
                &self.visibility_override_denied_total,
                &self.keyword_publish_failures_total,
                &self.replica_refresh_failures_total,
                &self.chunks_indexed_total,
                &self.checkpoint_resets_total,
                &self.maintenance_runs_total,
                &self.maintenance_fragments_compacted_total,
                &self.maintenance_chunks_purged_total,
                &self.maintenance_versions_pruned_total,
            ] {
                counter.with_label_values(&[index]);
            }
            for op in ["upsert", "delete"] {
                self.documents_indexed_total.with_label_values(&[index, op]);
            }
            for store in ["lance", "keyword"] {
                self.commit_duration_seconds
                    .with_label_values(&[index, store]);
            }
            self.maintenance_duration_seconds
                .with_label_values(&[index]);
            self.freshness_seconds.with_label_values(&[index]);
            self.index_resident_vector_bytes.with_label_values(&[index]);
        }
        for topic in known.topics {
            self.kafka_messages_lost_total.with_label_values(&[topic]);
            self.partitions_assigned.with_label_values(&[topic]);
        }
        for embedder in known.embedders {
            self.embed_duration_seconds.with_label_values(&[embedder]);
            self.embed_batch_texts.with_label_values(&[embedder]);
            self.embedder_circuit_opened_total
                .with_label_values(&[embedder]);
        }
        for result in ["hit", "miss"] {
            self.embedding_cache_lookups_total
                .with_label_values(&[result]);
        }
        self.embedding_cache_evicted_total
            .with_label_values::<&str>(&[]);
        for reason in ["malformed", "refused"] {
            self.graph_extraction_failures_total
                .with_label_values(&[reason]);
        }
    }

    /// Every metric in the Prometheus text exposition format.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .expect("text encoding into memory");
        String::from_utf8(out).expect("the text format is UTF-8")
    }
}

/// The label values a daemon knows at start-up (see [`Metrics::start_at_zero`]).
pub struct KnownLabels<'a> {
    pub dead_letter_reasons: &'a [&'a str],
    pub contracts: &'a [&'a str],
    pub error_codes: &'a [&'a str],
    pub search_methods: &'a [&'a str],
    pub embedders: &'a [&'a str],
    /// The actor whose batches `ragstream_batch_events` measures.
    pub batching_actor: &'a str,
    pub transports: &'a [&'a str],
    pub actors: &'a [&'a str],
    pub supervised: &'a [&'a str],
    pub indexes: &'a [&'a str],
    pub topics: &'a [&'a str],
}

static RECORDING: AtomicBool = AtomicBool::new(true);

/// The process's metrics, or `None` while recording is off (`telemetry.metrics = false`, or
/// the "off" half of `ragstream bench telemetry`): nothing is counted then.
pub fn metrics() -> Option<&'static Metrics> {
    static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);
    RECORDING.load(Ordering::Relaxed).then(|| &*METRICS)
}

/// Turns recording on or off for the whole process.
pub fn set_recording(on: bool) {
    RECORDING.store(on, Ordering::Relaxed);
}

/// The media type of [`Metrics::render`].
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_values_appear_in_the_exposition_with_their_labels() {
        let m = metrics().expect("recording is on by default");
        m.dead_letters_total
            .with_label_values(&["metrics_unit_test"])
            .inc();
        m.query_duration_seconds
            .with_label_values(&["000", "unit"])
            .observe(0.003);
        let text = m.render();
        assert!(
            text.contains(r#"ragstream_dead_letters_total{reason="metrics_unit_test"} 1"#),
            "{text}"
        );
        assert!(text.contains(
            r#"ragstream_query_duration_seconds_bucket{contract="000",transport="unit",le="0.005"} 1"#
        ));
        assert!(text.contains("# TYPE ragstream_query_duration_seconds histogram"));
        m.index_version
            .with_label_values(&["metrics_unit_test"])
            .set(7);
        assert!(m
            .render()
            .contains(r#"ragstream_index_version{index="metrics_unit_test"} 7"#));
    }
}
