//! IngestSource: consumes the documents topic without auto-commit, starting every assigned
//! partition at the checkpoint stored in the indexes, sends poison messages to the DLQ and
//! hands batches to the Chunker. Partitions are read in turn, each from its own queue, so a
//! backlog on one does not delay another ([`PartitionQueues`]), and into two lanes: live
//! partitions' batches pass the backlog's downstream ([`Lanes`]). A batch waiting for room in
//! its lane stops the reading of that lane's partitions: the backlog waits in Kafka, not in
//! memory.

use std::collections::{HashSet, VecDeque};
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
use super::lanes::{Lane, Lanes};
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
    /// Which lane each partition is read into.
    pub lanes: Arc<Lanes>,
    pub next: Mailbox<Batch>,
}

/// A lane's batches at the source: the one being formed, and a full one waiting for room.
struct Forming {
    open: Batch,
    /// When the open batch closes, counted from its first event.
    deadline: Option<tokio::time::Instant>,
    waiting: Option<Batch>,
}

impl IngestSource {
    pub const NAME: &'static str = "ingest-source";

    /// Runs until `shutdown` turns true, then hands over the batches in progress.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) -> Result<(), ActorError> {
        let mut lanes = Lane::ALL.map(|lane| Forming {
            open: Batch::new(lane, &self.lanes),
            deadline: None,
            waiting: None,
        });
        let mut queues =
            PartitionQueues::new(self.consumer.clone(), &self.topic, self.assignment.clone());
        let far = || tokio::time::Instant::now() + Duration::from_secs(3600);
        // Messages read while their lane's batch was full and waiting for room (only the
        // consumer's main queue delivers those: it holds what was fetched before a
        // partition's queue was split). Taken in order once their lane has room; until then
        // their partitions are not read. Never committed, so never lost if dropped.
        let mut carried: VecDeque<OwnedMessage> = VecDeque::new();
        loop {
            self.purge_revoked(&mut lanes);
            self.take_carried(&mut carried, &mut lanes).await?;
            let readable = self.readable(&mut queues, &lanes, &carried);
            // The first deadline of a lane with room to close its batch into.
            let flush_at = lanes
                .iter()
                .filter(|f| f.waiting.is_none())
                .filter_map(|f| f.deadline)
                .min();
            let [live, bulk] = &lanes;
            let (live_waits, bulk_waits) = (live.waiting.is_some(), bulk.waiting.is_some());
            tokio::select! {
                _ = shutdown.changed() => break,
                // A partition waiting to change lanes may be readable now.
                _ = self.lanes.drained() => {}
                _ = tokio::time::sleep_until(flush_at.unwrap_or_else(far)), if flush_at.is_some() => {
                    let now = tokio::time::Instant::now();
                    for forming in &mut lanes {
                        if forming.waiting.is_none() && forming.deadline.is_some_and(|d| d <= now) {
                            self.close(forming)?;
                        }
                    }
                }
                permit = self.next.reserve(Lane::Live), if live_waits => {
                    let permit = permit.map_err(|_| ActorError::Downstream { actor: Self::NAME })?;
                    self.sent(&mut lanes[0], permit)?;
                }
                permit = self.next.reserve(Lane::Bulk), if bulk_waits => {
                    let permit = permit.map_err(|_| ActorError::Downstream { actor: Self::NAME })?;
                    self.sent(&mut lanes[1], permit)?;
                }
                received = queues.recv(|p| readable.contains(&p)) => {
                    match received {
                        Ok(m) => {
                            let _busy = super::actor::busy(Self::NAME);
                            carried.push_back(m);
                            self.take_carried(&mut carried, &mut lanes).await?;
                        }
                        Err(e) => self.on_receive_error(e).await,
                    }
                }
            }
        }
        self.purge_revoked(&mut lanes);
        for forming in lanes {
            for batch in [forming.waiting, Some(forming.open)].into_iter().flatten() {
                if !batch.is_empty() {
                    self.next
                        .send(batch)
                        .await
                        .map_err(|_| ActorError::Downstream { actor: Self::NAME })?;
                }
            }
        }
        Ok(())
    }

    /// The partitions read at this turn: those whose lane has room for another batch, and
    /// that do not wait to change lanes. Each partition's lane follows its lag: how far the
    /// next read is from the partition's end, as librdkafka last saw it.
    fn readable(
        &self,
        queues: &mut PartitionQueues,
        lanes: &[Forming; 2],
        carried: &VecDeque<OwnedMessage>,
    ) -> HashSet<i32> {
        let reading = self.assignment.reading();
        let client = self.consumer.client();
        let held: HashSet<i32> = carried.iter().map(|m| m.partition()).collect();
        queues
            .partitions()
            .into_iter()
            .filter(|p| !held.contains(p))
            .filter(|p| {
                let key = partition_key(&self.topic, *p);
                let lag = crate::kafka::cached_watermarks(client, &self.topic, *p)
                    .map(|(low, high)| high - reading.get(&key).copied().unwrap_or(low.max(0)));
                let lane = self.lanes.lane(&key, lag);
                tracing::trace!(partition = %key, ?lag, ?lane, "lane at this turn");
                lane.is_some_and(|lane| lanes[lane.slot()].waiting.is_none())
            })
            .collect()
    }

    /// Takes the carried messages whose lane has room, in order; a message of a partition
    /// with an earlier one still carried stays carried too (each partition's order holds).
    async fn take_carried(
        &self,
        carried: &mut VecDeque<OwnedMessage>,
        lanes: &mut [Forming; 2],
    ) -> Result<(), ActorError> {
        let mut held: HashSet<String> = HashSet::new();
        let mut rest = VecDeque::new();
        while let Some(m) = carried.pop_front() {
            let key = partition_key(m.topic(), m.partition());
            let forming = &lanes[self.lanes.current(&key).slot()];
            let no_room = forming.waiting.is_some() && self.is_full(&forming.open);
            if no_room || held.contains(&key) {
                held.insert(key);
                rest.push_back(m);
            } else {
                self.take(lanes, &m).await?;
            }
        }
        *carried = rest;
        Ok(())
    }

    /// Accepts one message into its lane's open batch, and closes the batch when it is full.
    async fn take(&self, lanes: &mut [Forming; 2], m: &OwnedMessage) -> Result<(), ActorError> {
        let Some(lane) = self.accept(lanes, m).await else {
            return Ok(());
        };
        let forming = &mut lanes[lane.slot()];
        if forming.open.is_empty() {
            forming.deadline = None;
        } else {
            forming
                .deadline
                .get_or_insert_with(|| tokio::time::Instant::now() + self.settings.batch_max);
        }
        if self.is_full(&forming.open) && forming.waiting.is_none() {
            self.close(forming)?;
        }
        Ok(())
    }

    /// Drops, from every batch the source holds, the events of partitions revoked since the
    /// last look: their new owner reads them again. (A revocation between this and a send is
    /// caught by the writer, which commits only partitions still owned under their epoch.)
    fn purge_revoked(&self, lanes: &mut [Forming; 2]) {
        let revoked = self.assignment.take_revoked();
        if revoked.is_empty() {
            return;
        }
        for forming in lanes.iter_mut() {
            forming.open.purge(&revoked);
            if let Some(waiting) = &mut forming.waiting {
                waiting.purge(&revoked);
            }
        }
    }

    fn is_full(&self, batch: &Batch) -> bool {
        batch.events.len() >= self.settings.batch_max_documents
            || batch.chunks >= self.settings.batch_max_chunks
    }

    /// Closes a lane's open batch: hands it on if its lane has room, else holds it until there
    /// is (the lane's partitions are not read meanwhile).
    fn close(&self, forming: &mut Forming) -> Result<(), ActorError> {
        forming.deadline = None;
        let lane = forming.open.lane;
        let batch = std::mem::replace(&mut forming.open, Batch::new(lane, &self.lanes));
        if batch.is_empty() {
            return Ok(());
        }
        if let Some(m) = crate::telemetry::metrics() {
            m.batch_events
                .with_label_values(&[Self::NAME])
                .observe(batch.events.len() as f64);
        }
        forming.waiting = self
            .next
            .try_send(batch)
            .map_err(|_| ActorError::Downstream { actor: Self::NAME })?;
        Ok(())
    }

    /// Sends a lane's waiting batch on `permit`; then its open batch closes if it is full or
    /// past its time.
    fn sent(
        &self,
        forming: &mut Forming,
        permit: tokio::sync::mpsc::Permit<'_, Batch>,
    ) -> Result<(), ActorError> {
        if let Some(batch) = forming.waiting.take() {
            permit.send(batch);
        }
        let due = forming
            .deadline
            .is_some_and(|d| d <= tokio::time::Instant::now());
        if due || self.is_full(&forming.open) {
            self.close(forming)?;
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

    /// Adds a valid event to its partition's lane's open batch, or sends a poison message to
    /// the DLQ; either way the partition's next offset advances past it, and the lane is
    /// returned. A message of a partition no longer assigned is left to its new owner.
    async fn accept(&self, lanes: &mut [Forming; 2], msg: &OwnedMessage) -> Option<Lane> {
        self.purge_revoked(lanes);
        // The headers are copied only for a dead letter (below): this runs for every message.
        let origin = Origin {
            topic: msg.topic().to_string(),
            partition: msg.partition(),
            offset: msg.offset(),
            headers: Vec::new(),
        };
        let key = partition_key(&origin.topic, origin.partition);
        let epoch = self.assignment.epoch(&key)?;
        self.assignment.read(&key, origin.offset);
        // Its lane, by how far it is from its partition's end (known once a fetch answered):
        // a partition read before its end was known takes its lane here. One with events in
        // flight stays where they are (so does a message from the main queue, fetched before
        // the partition's queue was split), and so does one whose lane has no room.
        let lag = crate::kafka::cached_watermarks(
            self.consumer.client(),
            &origin.topic,
            origin.partition,
        )
        .map(|(_, high)| high - origin.offset);
        let room = |lane: Lane| {
            let forming = &lanes[lane.slot()];
            forming.waiting.is_none() || !self.is_full(&forming.open)
        };
        let lane = self.lanes.take_into(&key, lag, room);
        let batch = &mut lanes[lane.slot()].open;
        batch.claim.add(&key);
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
        Some(lane)
    }
}
