//! Fair reading of the documents topic: each assigned partition from its own queue, taken in
//! turn. With one queue for the whole consumer, a partition with a backlog fills librdkafka's
//! prefetch and a quiet partition's new message waits behind all of it; read in turn, the
//! quiet partition's message is taken at the next turn (BENCHMARKS.md, "Freshness beside a
//! draining backlog").
//!
//! librdkafka's `assign` sends every partition back to the consumer's main queue, so the
//! queues are split again after each assignment. The main queue is always read first: it
//! holds what was fetched before a split (older than anything in the partition's own queue),
//! which keeps each partition's messages in order, and it serves rebalances.

use std::sync::Arc;

use rdkafka::consumer::stream_consumer::StreamPartitionQueue;
use rdkafka::consumer::StreamConsumer;
use rdkafka::error::KafkaError;
use rdkafka::message::OwnedMessage;

use super::assignment::Assignment;
use super::ingest_source::CheckpointContext;

pub struct PartitionQueues {
    consumer: Arc<StreamConsumer<CheckpointContext>>,
    topic: String,
    assignment: Arc<Assignment>,
    /// The assignment generation the queues were split for.
    generation: Option<u64>,
    queues: Vec<StreamPartitionQueue<CheckpointContext>>,
    /// The queue whose turn is next.
    next: usize,
}

impl PartitionQueues {
    pub fn new(
        consumer: Arc<StreamConsumer<CheckpointContext>>,
        topic: &str,
        assignment: Arc<Assignment>,
    ) -> Self {
        PartitionQueues {
            consumer,
            topic: topic.to_string(),
            assignment,
            generation: None,
            queues: Vec::new(),
            next: 0,
        }
    }

    /// Splits the assigned partitions' queues again if partitions were assigned since.
    fn refresh(&mut self) {
        let generation = self.assignment.generation();
        if self.generation == Some(generation) {
            return;
        }
        self.generation = Some(generation);
        // The old handles' partitions were sent back to the main queue by the assignment.
        self.queues.clear();
        self.next = 0;
        for partition in self.assignment.assigned(&self.topic) {
            if let Some(q) = self.consumer.split_partition_queue(&self.topic, partition) {
                self.queues.push(q);
            }
        }
    }

    /// The next message: the main queue's if it has one, else the first of the partitions'
    /// queues in turn, starting after the one that gave the last message.
    pub async fn recv(&mut self) -> Result<OwnedMessage, KafkaError> {
        self.refresh();
        let n = self.queues.len();
        if n == 0 {
            return self.consumer.recv().await.map(|m| m.detach());
        }
        let start = self.next;
        let turns = (0..n).map(|i| Box::pin(self.queues[(start + i) % n].recv()));
        let (received, turn) = tokio::select! {
            biased;
            m = self.consumer.recv() => (m.map(|m| m.detach()), None),
            (m, i, _) = futures::future::select_all(turns) => (m.map(|m| m.detach()), Some(i)),
        };
        if let Some(i) = turn {
            self.next = (start + i + 1) % n;
        }
        received
    }
}
