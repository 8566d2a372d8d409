//! IngestSource: consumes the documents topic without auto-commit, starting every assigned
//! partition at the checkpoint stored in the indexes, sends poison messages to the DLQ and
//! hands batches to the IndexWriter. The channel to the writer is bounded, so a slow writer
//! stops consumption: the backlog waits in Kafka, not in memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, StreamConsumer};
use rdkafka::message::OwnedMessage;
use rdkafka::topic_partition_list::TopicPartitionList;
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{ClientContext, Message, Offset};
use tokio::sync::{mpsc, watch};

use super::events::parse_event;
use super::{partition_key, Batch, SourcedEvent};
use crate::model::DocumentLimits;
use crate::transport::dead_letters::{DeadLetters, Origin};

/// Next offsets to read per `"topic:partition"`, shared with the IndexWriter, which advances
/// them after each commit. Partitions without an entry start at the beginning.
pub type Positions = Arc<Mutex<HashMap<String, i64>>>;

/// Seeks newly assigned partitions to the stored checkpoint instead of the group offsets.
pub struct CheckpointContext {
    pub positions: Positions,
}

impl ClientContext for CheckpointContext {}

impl ConsumerContext for CheckpointContext {
    fn rebalance(
        &self,
        consumer: &BaseConsumer<Self>,
        err: RDKafkaRespErr,
        tpl: &mut TopicPartitionList,
    ) {
        match err {
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS => {
                let positions = self.positions.lock().expect("positions lock").clone();
                let mut seeded = TopicPartitionList::new();
                for elem in tpl.elements() {
                    let key = partition_key(elem.topic(), elem.partition());
                    let offset = positions
                        .get(&key)
                        .map_or(Offset::Beginning, |o| Offset::Offset(*o));
                    tracing::info!(partition = %key, ?offset, "assigned; resuming at checkpoint");
                    let _ = seeded.add_partition_offset(elem.topic(), elem.partition(), offset);
                }
                if let Err(e) = consumer.assign(&seeded) {
                    tracing::error!(error = %e, "assigning partitions failed");
                }
            }
            _ => {
                tracing::info!("partitions revoked");
                if let Err(e) = consumer.unassign() {
                    tracing::error!(error = %e, "unassigning partitions failed");
                }
            }
        }
    }
}

pub struct IngestSourceSettings {
    pub batch_max_documents: usize,
    pub batch_max: Duration,
    pub max_message_bytes: usize,
    pub limits: DocumentLimits,
}

/// Runs until `shutdown` turns true; the batch in progress is handed over before returning.
pub async fn run(
    consumer: Arc<StreamConsumer<CheckpointContext>>,
    settings: IngestSourceSettings,
    dead_letters: DeadLetters,
    to_writer: mpsc::Sender<Batch>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut batch = Batch::default();
    let mut deadline: Option<tokio::time::Instant> = None;
    loop {
        let flush_at =
            deadline.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(3600));
        let full = tokio::select! {
            _ = shutdown.changed() => break,
            _ = tokio::time::sleep_until(flush_at), if deadline.is_some() => true,
            received = consumer.recv() => {
                match received {
                    Ok(m) => accept(&mut batch, &m.detach(), &settings, &dead_letters).await,
                    Err(e) => tracing::warn!(error = %e, "kafka receive error"),
                }
                deadline.get_or_insert_with(|| tokio::time::Instant::now() + settings.batch_max);
                batch.events.len() >= settings.batch_max_documents
            }
        };
        if full {
            let Some(carried) = hand_over(&consumer, &to_writer, std::mem::take(&mut batch)).await
            else {
                return;
            };
            deadline = None;
            for m in &carried {
                accept(&mut batch, m, &settings, &dead_letters).await;
                deadline.get_or_insert_with(|| tokio::time::Instant::now() + settings.batch_max);
            }
        }
    }
    if !batch.is_empty() {
        let _ = to_writer.send(batch).await;
    }
}

/// Adds a valid event to the batch, or sends a poison message to the DLQ; either way the
/// partition's next offset advances past it.
async fn accept(
    batch: &mut Batch,
    msg: &OwnedMessage,
    settings: &IngestSourceSettings,
    dead_letters: &DeadLetters,
) {
    let origin = Origin {
        topic: msg.topic().to_string(),
        partition: msg.partition(),
        offset: msg.offset(),
    };
    batch.next_offsets.insert(
        partition_key(&origin.topic, origin.partition),
        origin.offset + 1,
    );
    match parse_event(msg.payload(), settings.max_message_bytes, &settings.limits) {
        Ok(event) => batch.events.push(SourcedEvent {
            event,
            topic: origin.topic,
            partition: origin.partition,
            offset: origin.offset,
        }),
        Err(reason) => {
            dead_letters
                .send(
                    &origin,
                    msg.key(),
                    msg.payload(),
                    reason.code(),
                    &reason.to_string(),
                )
                .await;
        }
    }
}

/// Hands a batch to the writer. While the writer is busy, the assigned partitions are paused
/// (the backlog stays in Kafka, memory stays flat) and the consumer keeps being polled so that
/// rebalances go on; paused partitions deliver nothing, except messages fetched just before
/// the pause, which are returned to be put in the next batch. `None`: the writer has gone.
async fn hand_over(
    consumer: &StreamConsumer<CheckpointContext>,
    to_writer: &mpsc::Sender<Batch>,
    batch: Batch,
) -> Option<Vec<OwnedMessage>> {
    let mut carried = Vec::new();
    let permit = match to_writer.try_reserve() {
        Ok(p) => p,
        Err(mpsc::error::TrySendError::Closed(_)) => return None,
        Err(mpsc::error::TrySendError::Full(_)) => {
            let paused = consumer.assignment().ok();
            if let Some(tpl) = &paused {
                if let Err(e) = consumer.pause(tpl) {
                    tracing::warn!(error = %e, "pausing partitions failed");
                }
            }
            let permit = loop {
                tokio::select! {
                    permit = to_writer.reserve() => break permit.ok()?,
                    polled = consumer.recv() => {
                        if let Ok(m) = polled {
                            carried.push(m.detach());
                        }
                    }
                }
            };
            if let Some(tpl) = &paused {
                if let Err(e) = consumer.resume(tpl) {
                    tracing::warn!(error = %e, "resuming partitions failed");
                }
            }
            permit
        }
    };
    permit.send(batch);
    Some(carried)
}
