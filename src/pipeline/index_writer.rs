//! IndexWriter: commits planned, embedded batches, exactly once.
//!
//! For each batch it enters the assignment's commit gate and keeps only partitions this daemon
//! still owns under the epoch they were read in; it drops events the index has already
//! committed (re-delivery), re-plans the rest against the newest version (the Chunker planned
//! against the version before the previous batch committed) reusing the vectors already
//! computed, and commits: one Lance commit carrying the advanced Kafka checkpoint, then the
//! keyword store under the same version. Consumer-group offsets are committed afterwards:
//! lag monitoring reads them, and a restarted pipeline never resumes past them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::{Offset, TopicPartitionList};

use opentelemetry::trace::TraceContextExt;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::actor::{Actor, ActorError};
use super::assignment::Assignment;
use super::checkpoints::{advanced, not_yet_committed, Checkpoints};
use super::ingest_source::CheckpointContext;
use super::{partition_key, store_outage, IndexWork, PlannedBatch, SourcedEvent};
use crate::engine::{Engine, EngineError};
use crate::index::{Index, StoreError, WriteOutcome, KAFKA_CHECKPOINT, KAFKA_LOG};

/// Attempts per commit before the actor gives up (and the supervisor restarts the pipeline).
const ATTEMPTS: u32 = 4;

pub struct IndexWriter {
    pub engine: Arc<Engine>,
    pub checkpoints: Arc<Checkpoints>,
    pub assignment: Arc<Assignment>,
    /// Where consumer-group offsets are committed for lag monitoring (none in unit tests).
    pub monitor: Option<Arc<StreamConsumer<CheckpointContext>>>,
    /// Told when commits fail (a full or read-only disk) and when they succeed again.
    pub health: Option<Arc<crate::health::Health>>,
}

/// The part under which an index's failing commits are reported (one per index, so one
/// index's success does not hide another's failure).
fn health_part(index: &crate::model::IndexName) -> String {
    format!("pipeline.commits.{index}")
}

impl Actor for IndexWriter {
    type Message = PlannedBatch;
    const NAME: &'static str = "index-writer";

    async fn handle(&mut self, batch: PlannedBatch) -> Result<(), ActorError> {
        panic_once_for_tests();
        let (gate, live) = self.assignment.begin_commit(&batch.epochs);
        crate::failpoint::freeze_second_time_at("freeze-before-second-commit");
        let offsets: BTreeMap<String, i64> = batch
            .next_offsets
            .into_iter()
            .filter(|(k, _)| live.contains(k))
            .collect();
        for work in &batch.work {
            self.commit(work, &live, &offsets).await?;
        }
        drop(gate);
        self.assignment
            .advance(offsets.iter().map(|(k, v)| (k.clone(), *v)));
        if let Some(consumer) = &self.monitor {
            commit_group_offsets(consumer, &offsets, CommitMode::Async);
        }
        Ok(())
    }
}

impl IndexWriter {
    async fn commit(
        &self,
        work: &IndexWork,
        live: &BTreeSet<String>,
        offsets: &BTreeMap<String, i64>,
    ) -> Result<(), ActorError> {
        let failed =
            |e: EngineError| ActorError::failed(Self::NAME, format!("{}: {e}", work.index));
        // The other lane's writer may be committing to this index: one at a time.
        let _turn = self.checkpoints.turn(&work.index).await;
        let owned: Vec<&SourcedEvent> = work
            .events
            .iter()
            .filter(|e| live.contains(&partition_key(&e.topic, e.partition)))
            .collect();
        // The store writes are one batch for many traces: its span starts a trace of its own
        // and links to each document's.
        let batch = tracing::info_span!(
            "write_batch",
            index = %work.index,
            documents = tracing::field::Empty,
            trace_id = tracing::field::Empty,
            span_id = tracing::field::Empty,
        );
        crate::telemetry::propagation::follow(&batch, &opentelemetry::Context::new());
        let mut backoff = store_outage::Backoff::default();
        let (mut attempt, mut reopened) = (1, 0);
        let revocations = self
            .engine
            .revocations()
            .load(std::sync::atomic::Ordering::SeqCst);
        let mut spans: Vec<tracing::Span> = Vec::new();
        let (outcome, fresh, next) = loop {
            // A revocation while this batch is retried (an outage outlasting the revocation's
            // wait) ends it: its events are the new owner's now.
            if self
                .engine
                .revocations()
                .load(std::sync::atomic::Ordering::SeqCst)
                != revocations
            {
                return Err(ActorError::failed(
                    Self::NAME,
                    format!("{}: partitions revoked while the batch waited; it is read again by their owner", work.index),
                ));
            }
            // Opened again if another daemon committed to it (an index on an object store
            // whose partition moved here), before its checkpoint is read: that commit may
            // have taken some of these events already.
            let written = async {
                let index = self.engine.current_index(&work.index, false).await?;
                let checkpoint = self.checkpoints.get(&self.engine, &work.index).await?;
                let fresh = not_yet_committed(owned.iter().copied(), &checkpoint);
                if fresh.is_empty() {
                    return Ok(None);
                }
                let next = advanced(&checkpoint, offsets);
                if spans.is_empty() {
                    batch.record("documents", fresh.len());
                    spans = fresh.iter().map(|e| e.span("commit")).collect();
                    for s in &spans {
                        batch.add_link(s.context().span().span_context().clone());
                    }
                }
                let ops: Vec<_> = fresh.iter().map(|e| e.event.op.clone()).collect();
                let outcome = self
                    .write(&index, ops, work, self.properties(&next))
                    .instrument(batch.clone())
                    .await?;
                Ok(Some((outcome, fresh, next)))
            }
            .await;
            match written {
                Ok(None) => return Ok(()),
                Ok(Some(written)) => {
                    if let Some(h) = &self.health {
                        h.clear(&health_part(&work.index));
                    }
                    break written;
                }
                Err(EngineError::Store(StoreError::ChangedElsewhere { .. }))
                    if reopened < ATTEMPTS =>
                {
                    // Another daemon committed to the index since this one opened it: open
                    // it again (both stores, its checkpoint) and decide once more.
                    batch.in_scope(|| {
                        tracing::info!(index = %work.index, "the index changed in the store; opening it again")
                    });
                    self.engine.close(&work.index).await;
                    reopened += 1;
                }
                Err(e @ EngineError::Store(StoreError::NotOwner { .. })) => {
                    // The index's partition moved and its new owner has committed: this batch
                    // is not committed (the owner reads it from the checkpoint). The pipeline
                    // starts again, rejoining the group with the partitions it owns now.
                    batch.in_scope(|| tracing::warn!(index = %work.index, error = %e, "not the index's owner any more"));
                    self.engine.close(&work.index).await;
                    return Err(failed(e));
                }
                Err(e) => {
                    // Ingestion cannot persist (a second failure in a row, not a passing
                    // conflict): not ready, with the reason, until a commit of the index
                    // succeeds (the pipeline keeps retrying from the stored checkpoint).
                    if let (Some(h), true) = (&self.health, attempt >= 2) {
                        h.report(
                            &health_part(&work.index),
                            crate::health::Impact::Unready,
                            format!("commits to index {} fail: {e}", work.index),
                        );
                    }
                    // An object store that does not answer is waited out, as an embedder
                    // outage is: the batch is held, the mailboxes fill, and the source pauses
                    // Kafka. Any other failure restarts the pipeline after a few tries.
                    let outage = store_outage::is_outage(&self.engine, &e).await;
                    if attempt >= ATTEMPTS && !outage {
                        return Err(failed(e));
                    }
                    let delay = backoff.next_wait();
                    batch.in_scope(|| {
                        if outage {
                            tracing::warn!(index = %work.index, error = %e, attempt, retry_in = ?delay,
                                "the object store is unavailable; holding the batch (Kafka consumption is paused)")
                        } else {
                            tracing::error!(index = %work.index, error = %e, attempt,
                                retry_in = ?delay, "commit failed; retrying")
                        }
                    });
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
            }
        };
        batch.in_scope(|| {
            tracing::info!(index = %work.index, version = ?outcome.index_version,
            upserted = outcome.upserted, deleted = outcome.deleted, unchanged = outcome.unchanged,
            chunks = outcome.chunks_written, "batch committed")
        });
        if let Some(version) = outcome.index_version {
            if let Ok(index) = self.engine.index(&work.index).await {
                self.engine.maintain_vector_index(&index);
            }
            for s in &spans {
                s.record("index_version", version);
            }
            self.checkpoints.set(&work.index, version, next).await;
            // Searchable now: how long since each event was produced.
            let now_ms = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
            if let Some(m) = crate::telemetry::metrics() {
                let freshness = m
                    .freshness_seconds
                    .with_label_values(&[work.index.as_str()]);
                for produced in fresh.iter().filter_map(|e| e.produced_at_ms) {
                    freshness.observe((now_ms as f64 - produced as f64).max(0.0) / 1000.0);
                }
            }
        }
        Ok(())
    }

    /// The commit's properties: the advanced Kafka checkpoint and the log it belongs to.
    fn properties(&self, next: &super::checkpoints::Checkpoint) -> HashMap<String, String> {
        let mut properties: HashMap<String, String> = [(
            KAFKA_CHECKPOINT.to_string(),
            serde_json::to_string(next).expect("a checkpoint serialises"),
        )]
        .into();
        if let Some(log) = self.checkpoints.log_id() {
            properties.insert(KAFKA_LOG.to_string(), log.to_string());
        }
        properties
    }

    /// Re-plans against the newest version, reuses the vectors computed upstream, embeds what
    /// a concurrent change made new (rare), and commits.
    async fn write(
        &self,
        index: &Arc<Index>,
        ops: Vec<crate::index::DocumentOp>,
        work: &IndexWork,
        properties: HashMap<String, String>,
    ) -> Result<WriteOutcome, EngineError> {
        let mut plan = index.writer().plan(ops, self.engine.chunker()).await?;
        plan.reuse_vectors(work.rows.clone());
        plan.reuse_triple_vectors(work.triples.clone());
        if plan.needs_embedding() {
            let embedder = self.engine.ingest_embedder().clone();
            plan =
                tokio::task::spawn_blocking(move || plan.embed(embedder.as_ref()).map(|()| plan))
                    .await
                    .map_err(|e| EngineError::Internal(e.to_string()))??;
        }
        Ok(index.writer().commit(plan, properties).await?)
    }
}

/// Commits the consumer group's offsets (`"topic:partition"` → next offset). They are where
/// the group's lag is measured, and below them a message read again gets no second dead
/// letter (`DeadLetters::sent_below`); resuming goes by the indexes' checkpoints.
pub(super) fn commit_group_offsets(
    consumer: &StreamConsumer<CheckpointContext>,
    offsets: &BTreeMap<String, i64>,
    mode: CommitMode,
) {
    let mut tpl = TopicPartitionList::new();
    for (key, offset) in offsets {
        if let Some((topic, partition)) = key.rsplit_once(':') {
            if let Ok(p) = partition.parse() {
                let _ = tpl.add_partition_offset(topic, p, Offset::Offset(*offset));
            }
        }
    }
    if tpl.count() == 0 {
        return;
    }
    if let Err(e) = consumer.commit(&tpl, mode) {
        tracing::debug!(error = %e, ?mode, "consumer-group offset commit failed");
    }
}

/// Test hook: with `RAGSTREAM_FAILPOINT=index-writer-panic-once` the first batch this process
/// writes panics, so tests can watch the supervisor restart the pipeline without losing data.
fn panic_once_for_tests() {
    static FIRED: AtomicBool = AtomicBool::new(false);
    if std::env::var("RAGSTREAM_FAILPOINT").is_ok_and(|v| v == "index-writer-panic-once")
        && !FIRED.swap(true, Ordering::SeqCst)
    {
        panic!("failpoint index-writer-panic-once");
    }
}
