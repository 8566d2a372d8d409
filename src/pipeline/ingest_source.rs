//! IngestSource: consumes the documents topic without auto-commit, starting every assigned
//! partition at the checkpoint stored in the indexes, sends poison messages to the DLQ and
//! hands batches to the IndexWriter. The channel to the writer is bounded, so a slow writer
//! stops consumption: the backlog waits in Kafka, not in memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, StreamConsumer};
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
        tokio::select! {
            _ = shutdown.changed() => break,
            _ = tokio::time::sleep_until(flush_at), if deadline.is_some() => {
                if to_writer.send(std::mem::take(&mut batch)).await.is_err() { return; }
                deadline = None;
            }
            received = consumer.recv() => {
                let msg = match received {
                    Ok(m) => m,
                    Err(e) => {
                        tracing::warn!(error = %e, "kafka receive error");
                        continue;
                    }
                };
                let origin = Origin { topic: msg.topic().to_string(), partition: msg.partition(), offset: msg.offset() };
                batch.next_offsets.insert(partition_key(&origin.topic, origin.partition), origin.offset + 1);
                match parse_event(msg.payload(), settings.max_message_bytes, &settings.limits) {
                    Ok(event) => batch.events.push(SourcedEvent {
                        event,
                        topic: origin.topic,
                        partition: origin.partition,
                        offset: origin.offset,
                    }),
                    Err(reason) => {
                        dead_letters
                            .send(&origin, msg.key(), msg.payload(), reason.code(), &reason.to_string())
                            .await;
                    }
                }
                deadline.get_or_insert_with(|| tokio::time::Instant::now() + settings.batch_max);
                if batch.events.len() >= settings.batch_max_documents {
                    if to_writer.send(std::mem::take(&mut batch)).await.is_err() { return; }
                    deadline = None;
                }
            }
        }
    }
    if !batch.is_empty() {
        let _ = to_writer.send(batch).await;
    }
}
