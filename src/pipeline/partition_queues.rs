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
    /// Each split partition and its queue.
    queues: Vec<(i32, StreamPartitionQueue<CheckpointContext>)>,
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
                self.queues.push((partition, q));
            }
        }
    }

    /// The partitions whose queues are split now.
    pub fn partitions(&mut self) -> Vec<i32> {
        self.refresh();
        self.queues.iter().map(|(p, _)| *p).collect()
    }

    /// The next message: the main queue's if it has one, else the first of the `readable`
    /// partitions' queues in turn, starting after the one that gave the last message. A
    /// partition left unread keeps its messages in librdkafka's queue (bounded by
    /// `queued.max.messages.kbytes`), and the rest in Kafka.
    pub async fn recv(
        &mut self,
        readable: impl Fn(i32) -> bool,
    ) -> Result<OwnedMessage, KafkaError> {
        self.refresh();
        let n = self.queues.len();
        let start = self.next;
        let turns: Vec<_> = (0..n)
            .map(|i| (start + i) % n)
            .filter(|k| readable(self.queues[*k].0))
            .collect();
        if turns.is_empty() {
            return self.consumer.recv().await.map(|m| m.detach());
        }
        let reads = turns.iter().map(|k| Box::pin(self.queues[*k].1.recv()));
        let (received, turn) = tokio::select! {
            biased;
            m = self.consumer.recv() => (m.map(|m| m.detach()), None),
            (m, i, _) = futures::future::select_all(reads) => (m.map(|m| m.detach()), Some(turns[i])),
        };
        if let Some(k) = turn {
            self.next = (k + 1) % n;
        }
        received
    }
}
