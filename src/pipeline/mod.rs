//! The streaming pipeline and the messages its actors pass:
//!
//! ```text
//! Kafka documents ─► IngestSource ─Batch─► Chunker ─PlannedBatch─► EmbedderClient ─PlannedBatch─► IndexWriter
//!                    (no auto-commit,      (skip committed,        (vectors for          (fence, re-plan on the
//!                     DLQ, pause)           plan, chunk)            new chunks)           newest version, commit
//!                                                                                          with the checkpoint)
//! Kafka queries ───► QueryHandler ─► reply topic
//! timer ───────────► Maintenance (compact, purge, prune; through each index's write lock)
//! commits, timer ───► KeywordPublisher (a writer on an object store: keyword versions out)
//! timer ───────────► ReplicaRefresh (a query replica: the writer's new versions in)
//! ```
//!
//! Every arrow is a bounded mailbox, so a slow stage stops the source, which pauses its Kafka
//! partitions: the backlog waits in Kafka. The ingest actors are supervised as one unit
//! ([`ingest_pipeline`]); retrieval logic stays in the library.

pub mod actor;
pub mod assignment;
pub mod checkpoints;
pub mod chunker;
pub mod embedder_client;
pub mod events;
pub mod index_writer;
pub mod ingest_pipeline;
pub mod ingest_source;
pub mod keyword_publisher;
pub mod lanes;
pub mod maintenance;
pub mod partition_queues;
pub mod query_handler;
pub mod query_start;
pub mod replica_refresh;
pub mod retention_loss;
pub mod store_outage;
pub mod supervisor;
pub mod triple_extractor;

/// The ingest pipeline's stages, in order, as metrics label them.
pub const STAGES: [&str; 5] = [
    "ingest-source",
    "chunker",
    "embedder-client",
    "triple-extractor",
    "index-writer",
];

use std::collections::{BTreeMap, BTreeSet};

use events::DocumentEvent;

use crate::index::ChunkRow;
use crate::kafka::dead_letters::{DeadLetters, Origin};
use crate::model::IndexName;

/// A valid event and where it was read.
#[derive(Debug, Clone)]
pub struct SourcedEvent {
    pub event: DocumentEvent,
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    /// The message's Kafka timestamp (producer create time), for the freshness metric.
    pub produced_at_ms: Option<i64>,
    /// The trace this event continues (its `consume` span; empty when traces are off and
    /// the producer sent no `traceparent`).
    pub trace: opentelemetry::Context,
}

impl SourcedEvent {
    /// A span of pipeline stage `stage` for this event, in the event's trace. Stages work on
    /// batches, so each event gets its own span over the batch's work: the trace of one
    /// document then reads produce → consume → chunk → embed → commit.
    pub fn span(&self, stage: &'static str) -> tracing::Span {
        let span = tracing::info_span!(
            "stage",
            otel.name = stage,
            index = %self.event.index,
            document_id = self.event.op.document_id(),
            index_version = tracing::field::Empty,
            trace_id = tracing::field::Empty,
            span_id = tracing::field::Empty,
        );
        crate::telemetry::propagation::follow(&span, &self.trace);
        span
    }

    /// Dead-letters this valid event when a later stage cannot apply it (embedder mismatch,
    /// embedding or extraction refused): its key and payload as the producer would have sent
    /// them.
    pub async fn dead_letter(&self, dead_letters: &DeadLetters, code: &str, message: &str) {
        // The event's original headers are not kept past the source: its letter has none.
        let origin = Origin {
            topic: self.topic.clone(),
            partition: self.partition,
            offset: self.offset,
            headers: Vec::new(),
        };
        let (key, payload) = (self.event.key(), self.event.to_json().to_string());
        dead_letters
            .send(
                &origin,
                Some(key.as_bytes()),
                Some(payload.as_bytes()),
                code,
                message,
            )
            .await;
    }
}

pub use crate::kafka::partition_key;

/// IngestSource → Chunker: events in offset order; for every partition the batch touched
/// (poison messages included) the next offset to read once it is committed, and the epoch of
/// the assignment it was read under.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub events: Vec<SourcedEvent>,
    /// Chunks the upserts in `events` make (an upper bound: unchanged documents are skipped
    /// later); a batch closes at `kafka.batch_max_chunks`.
    pub chunks: usize,
    pub next_offsets: BTreeMap<String, i64>,
    pub epochs: BTreeMap<String, u64>,
    /// The lane it travels in, and its claim on the partitions of its events (`lanes`).
    pub lane: lanes::Lane,
    pub claim: lanes::Claim,
}

impl actor::Laned for Batch {
    fn lane(&self) -> lanes::Lane {
        self.lane
    }
}

impl Batch {
    /// An empty batch of `lane`, claiming its events' partitions in `lanes`.
    pub fn new(lane: lanes::Lane, lanes: &std::sync::Arc<lanes::Lanes>) -> Self {
        Batch {
            lane,
            claim: lanes::Claim::new(lanes),
            ..Batch::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.next_offsets.is_empty()
    }

    /// Forgets the events of partitions this daemon no longer owns.
    pub fn purge(&mut self, revoked: &BTreeSet<String>) {
        self.events
            .retain(|e| !revoked.contains(&partition_key(&e.topic, e.partition)));
        self.next_offsets.retain(|k, _| !revoked.contains(k));
        self.epochs.retain(|k, _| !revoked.contains(k));
    }
}

/// The work for one index: its events not yet committed, and the chunk rows of the documents
/// they change (vectors filled in by the EmbedderClient).
#[derive(Debug, Clone)]
pub struct IndexWork {
    pub index: IndexName,
    pub events: Vec<SourcedEvent>,
    pub rows: Vec<ChunkRow>,
    /// The knowledge-graph triples of those documents (vectors filled in with the rows').
    pub triples: Vec<crate::graph::rows::TripleRow>,
}

/// Chunker → EmbedderClient → IndexWriter.
#[derive(Debug, Clone, Default)]
pub struct PlannedBatch {
    pub work: Vec<IndexWork>,
    pub next_offsets: BTreeMap<String, i64>,
    pub epochs: BTreeMap<String, u64>,
    /// The lane and claim of the [`Batch`] it was planned from: the claim is released once
    /// the writer is done with it.
    pub lane: lanes::Lane,
    pub claim: lanes::Claim,
}

impl actor::Laned for PlannedBatch {
    fn lane(&self) -> lanes::Lane {
        self.lane
    }
}
