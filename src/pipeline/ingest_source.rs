//! IngestSource: consumes the documents topic without auto-commit, starting every assigned
//! partition at the checkpoint stored in the indexes, sends poison messages to the DLQ and
//! hands batches to the Chunker. Partitions are read in turn, each from its own queue, so a
//! backlog on one does not delay another ([`PartitionQueues`]). When the Chunker's mailbox is
//! full the assigned partitions are paused: the backlog waits in Kafka, not in memory.

use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, StreamConsumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::OwnedMessage;
use rdkafka::topic_partition_list::TopicPartitionList;
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{ClientContext, Message, Offset};
use tokio::sync::watch;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::actor::{ActorError, Mailbox};
use super::assignment::Assignment;
use super::events::{admit, parse_event};
use super::partition_queues::PartitionQueues;
use super::{partition_key, Batch, SourcedEvent};
use crate::kafka::dead_letters::{DeadLetters, Origin};
use crate::model::DocumentLimits;

/// Seeks newly assigned partitions to the stored checkpoint instead of the group offsets, and
/// fences revoked ones (see [`Assignment`]).
pub struct CheckpointContext {
    pub assignment: Arc<Assignment>,
    /// Counted up at each revocation: this process's claims on the indexes it wrote end
    /// there (`index::ownership`).
    pub revocations: Arc<std::sync::atomic::AtomicU64>,
}

impl ClientContext for CheckpointContext {}

impl ConsumerContext for CheckpointContext {
    fn rebalance(
        &self,
        consumer: &BaseConsumer<Self>,
        err: RDKafkaRespErr,
        tpl: &mut TopicPartitionList,
    ) {
        let keys: Vec<String> = tpl
            .elements()
            .iter()
            .map(|e| partition_key(e.topic(), e.partition()))
            .collect();
        match err {
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS => {
                let mut seeded = TopicPartitionList::new();
                for (elem, key) in tpl.elements().iter().zip(&keys) {
                    let offset = self
                        .assignment
                        .assign(key)
                        .map_or(Offset::Beginning, Offset::Offset);
                    tracing::info!(partition = %key, ?offset, "assigned; resuming at checkpoint");
                    let _ = seeded.add_partition_offset(elem.topic(), elem.partition(), offset);
                }
                if let Err(e) = consumer.assign(&seeded) {
                    tracing::error!(error = %e, "assigning partitions failed");
                }
            }
            _ => {
                tracing::info!(partitions = ?keys, "revoked; waiting for a commit in progress");
                // The wait blocks this thread; on a multi-threaded runtime, tell tokio so it
                // moves other tasks (the writer finishing its commit) elsewhere.
                let on_worker = tokio::runtime::Handle::try_current().is_ok_and(|h| {
                    h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
                });
                if on_worker {
                    tokio::task::block_in_place(|| self.assignment.revoke(&keys));
                } else {
                    self.assignment.revoke(&keys);
                }
                self.revocations
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if let Err(e) = consumer.unassign() {
                    tracing::error!(error = %e, "unassigning partitions failed");
                }
            }
        }
        if let Some(m) = crate::telemetry::metrics() {
            let topics: std::collections::BTreeSet<String> = tpl
                .elements()
                .iter()
                .map(|e| e.topic().to_string())
                .collect();
            for topic in topics {
                let owned = self.assignment.assigned(&topic).len();
                m.partitions_assigned
                    .with_label_values(&[&topic])
                    .set(owned as i64);
            }
        }
    }
}

pub struct IngestSourceSettings {
    pub batch_max_documents: usize,
    /// A batch also closes when its documents make this many chunks (counted with the same
    /// chunker the pipeline uses, before unchanged documents are skipped: an upper bound).
    pub batch_max_chunks: usize,
    pub chunker: crate::chunking::Chunker,
    pub batch_max: Duration,
    pub max_message_bytes: usize,
    pub limits: DocumentLimits,
    /// Checks each event's `authorization` header, as HTTP ingestion checks its own.
    pub engine: Arc<crate::engine::Engine>,
}

pub struct IngestSource {
    pub consumer: Arc<StreamConsumer<CheckpointContext>>,
    /// The documents topic, whose partitions are read in turn ([`PartitionQueues`]).
    pub topic: String,
    pub settings: IngestSourceSettings,
    pub dead_letters: DeadLetters,
    pub assignment: Arc<Assignment>,
    pub next: Mailbox<Batch>,
}

/// How long a full batch waits for room downstream before the partitions are paused.
const PAUSE_AFTER: Duration = Duration::from_secs(2);

impl IngestSource {
    pub const NAME: &'static str = "ingest-source";

    /// Runs until `shutdown` turns true, then hands over the batch in progress.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) -> Result<(), ActorError> {
        let mut batch = Batch::default();
        let mut deadline: Option<tokio::time::Instant> = None;
        let mut queues =
            PartitionQueues::new(self.consumer.clone(), &self.topic, self.assignment.clone());
        loop {
            let flush_at =
                deadline.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(3600));
            let full = tokio::select! {
                _ = shutdown.changed() => break,
                _ = tokio::time::sleep_until(flush_at), if deadline.is_some() => true,
                received = queues.recv() => {
                    match received {
                        Ok(m) => {
                            let _busy = super::actor::busy(Self::NAME);
                            self.accept(&mut batch, &m).await
                        }
                        Err(e) => self.on_receive_error(e).await,
                    }
                    if batch.is_empty() {
                        deadline = None;
                    } else {
                        deadline.get_or_insert_with(|| tokio::time::Instant::now() + self.settings.batch_max);
                    }
                    batch.events.len() >= self.settings.batch_max_documents
                        || batch.chunks >= self.settings.batch_max_chunks
                }
            };
            if full && !batch.is_empty() {
                let (carried, error) = self.hand_over(std::mem::take(&mut batch)).await?;
                deadline = None;
                for m in &carried {
                    self.accept(&mut batch, m).await;
                }
                // After the carried messages are read, so that positions are exact.
                if let Some(e) = error {
                    self.on_receive_error(e).await;
                }
                if !batch.is_empty() {
                    deadline = Some(tokio::time::Instant::now() + self.settings.batch_max);
                }
            } else if full {
                deadline = None;
            }
        }
        batch.purge(&self.assignment.take_revoked());
        if !batch.is_empty() {
            self.next
                .send(batch)
                .await
                .map_err(|_| ActorError::Downstream { actor: Self::NAME })?;
        }
        Ok(())
    }

    /// A receive error: the next offset of a partition deleted by retention is reported and
    /// skipped (retention_loss.rs); any other error is logged, and librdkafka retries.
    async fn on_receive_error(&self, e: KafkaError) {
        if e.rdkafka_error_code() != Some(RDKafkaErrorCode::AutoOffsetReset) {
            tracing::warn!(error = %e, "kafka receive error");
            return;
        }
        let (consumer, reading) = (self.consumer.clone(), self.assignment.reading());
        let skipped = tokio::task::spawn_blocking(move || {
            super::retention_loss::skip_deleted(&consumer, &reading)
        })
        .await;
        if let Err(join) = skipped {
            tracing::error!(error = %e, %join, "handling an offset out of range failed");
        }
    }

    /// Adds a valid event to the batch, or sends a poison message to the DLQ; either way the
    /// partition's next offset advances past it. A message of a partition no longer assigned
    /// is left to its new owner.
    async fn accept(&self, batch: &mut Batch, msg: &OwnedMessage) {
        batch.purge(&self.assignment.take_revoked());
        // The headers are copied only for a dead letter (below): this runs for every message.
        let origin = Origin {
            topic: msg.topic().to_string(),
            partition: msg.partition(),
            offset: msg.offset(),
            headers: Vec::new(),
        };
        let key = partition_key(&origin.topic, origin.partition);
        let Some(epoch) = self.assignment.epoch(&key) else {
            return;
        };
        self.assignment.read(&key, origin.offset);
        if let Some(m) = crate::telemetry::metrics() {
            m.messages_consumed_total
                .with_label_values(&[origin.topic.as_str(), &origin.partition.to_string()])
                .inc();
        }
        batch.epochs.entry(key.clone()).or_insert(epoch);
        batch.next_offsets.insert(key, origin.offset + 1);
        let span = tracing::info_span!(
            "consume",
            otel.kind = "consumer",
            messaging.system = "kafka",
            messaging.destination.name = %origin.topic,
            messaging.kafka.partition = origin.partition,
            messaging.kafka.offset = origin.offset,
            trace_id = tracing::field::Empty,
            span_id = tracing::field::Empty,
        );
        crate::telemetry::propagation::follow(
            &span,
            &crate::telemetry::propagation::from_kafka(msg.headers()),
        );
        let trace = span.context();
        let parsed = parse_event(
            msg.payload(),
            self.settings.max_message_bytes,
            &self.settings.limits,
        )
        .and_then(|event| {
            let authorization = crate::kafka::header(msg, "authorization");
            admit(
                &event,
                msg.key(),
                authorization.as_deref(),
                self.settings.engine.auth(),
            )
            .map(|()| event)
        });
        match parsed {
            Ok(event) => {
                if let crate::index::DocumentOp::Upsert(doc) = &event.op {
                    batch.chunks += self.settings.chunker.chunk(doc).len();
                }
                batch.events.push(SourcedEvent {
                    event,
                    topic: origin.topic,
                    partition: origin.partition,
                    offset: origin.offset,
                    produced_at_ms: msg.timestamp().to_millis(),
                    trace,
                })
            }
            Err(reason) => {
                // A dead letter that cannot be delivered holds the source: it counts as busy.
                let _busy = super::actor::busy(Self::NAME);
                self.dead_letters
                    .send(
                        &Origin::of(msg),
                        msg.key(),
                        msg.payload(),
                        reason.code(),
                        &reason.to_string(),
                    )
                    .instrument(span)
                    .await;
            }
        }
    }

    /// Hands a batch on. While the next mailbox is full, the assigned partitions are paused
    /// (the backlog stays in Kafka, memory stays flat) and the consumer keeps being polled so
    /// that rebalances go on; paused partitions deliver nothing, except messages fetched just
    /// before the pause, which are returned to start the next batch, with the last receive
    /// error seen meanwhile.
    async fn hand_over(
        &self,
        mut batch: Batch,
    ) -> Result<(Vec<OwnedMessage>, Option<KafkaError>), ActorError> {
        let gone = || ActorError::Downstream { actor: Self::NAME };
        let mut carried = Vec::new();
        let mut error = None;
        batch.purge(&self.assignment.take_revoked());
        if let Some(m) = crate::telemetry::metrics() {
            m.batch_events
                .with_label_values(&[Self::NAME])
                .observe(batch.events.len() as f64);
        }
        let Some(batch) = self.next.try_send(batch).map_err(|_| gone())? else {
            return Ok((carried, None));
        };
        // Most waits last one downstream batch: wait that long with librdkafka's prefetched
        // messages kept (bounded by `queued.max.messages.kbytes`). Pausing drops them and
        // costs a fetch round trip on resume, at every batch of a backlog (BENCHMARKS.md,
        // "Kafka to searchable: where the time goes"). A longer wait pauses, so that the
        // backlog stays in Kafka and the consumer keeps polling.
        if let Ok(permit) = tokio::time::timeout(PAUSE_AFTER, self.next.reserve()).await {
            permit.map_err(|_| gone())?.send(batch);
            return Ok((carried, None));
        }
        let paused = self.consumer.assignment().ok();
        if let Some(tpl) = &paused {
            if let Err(e) = self.consumer.pause(tpl) {
                tracing::warn!(error = %e, "pausing partitions failed");
            }
        }
        let permit = loop {
            tokio::select! {
                permit = self.next.reserve() => break permit.map_err(|_| gone())?,
                polled = self.consumer.recv() => match polled {
                    Ok(m) => carried.push(m.detach()),
                    Err(e) => error = Some(e),
                }
            }
        };
        let revoked = self.assignment.take_revoked();
        let mut batch = batch;
        batch.purge(&revoked);
        carried.retain(|m| !revoked.contains(&partition_key(m.topic(), m.partition())));
        permit.send(batch);
        // Resume what is assigned now (a rebalance during the pause may have changed it).
        if let Ok(tpl) = self.consumer.assignment() {
            if let Err(e) = self.consumer.resume(&tpl) {
                tracing::warn!(error = %e, "resuming partitions failed");
            }
        }
        Ok((carried, error))
    }
}
