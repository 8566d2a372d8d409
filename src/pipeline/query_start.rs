//! Where a new query consumer group starts reading. A group with no committed offset on a
//! partition would start at the oldest query the topic keeps (`auto.offset.reset =
//! earliest`) and answer requests whose callers left long ago. Starting at `latest` instead
//! would lose the queries sent between the daemon's start and its partition assignment.
//!
//! So before the query consumer subscribes, the daemon commits, for its group, the end of
//! every partition the group has no committed offset for: the group starts there, skipping
//! the history and answering every query sent after the daemon started. A partition the
//! group has read before resumes where it stopped, as any consumer does, so queries sent
//! during a restart are answered; since the first start commits every partition, that
//! holds for partitions that had never seen a query too.

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::{Offset, TopicPartitionList};

use crate::config::KafkaConfig;
use crate::kafka::{client_config, positions};

/// The consumer group of every daemon's query handler.
pub fn query_group(kafka: &KafkaConfig) -> String {
    format!("{}-queries", kafka.group_id)
}

/// Commits the end of each partition of the queries topic that the query group has no
/// committed offset for; returns how many queries that skips. Blocking (librdkafka round
/// trips): call it off the async workers. A broker that refuses the commit (other members
/// of the group are running and own those partitions) leaves those partitions as they were.
pub fn skip_history(
    kafka: &KafkaConfig,
    bootstrap: &str,
    timeout: Duration,
) -> Result<u64, KafkaError> {
    let group = query_group(kafka);
    let topic = kafka.queries_topic.as_str();
    let new: Vec<_> = positions(kafka, bootstrap, topic, &group, timeout)?
        .into_iter()
        .filter(|p| p.committed_offset.is_none())
        .collect();
    if new.is_empty() {
        return Ok(0);
    }
    let mut list = TopicPartitionList::new();
    for p in &new {
        list.add_partition_offset(topic, p.partition, Offset::Offset(p.end_offset))?;
    }
    let consumer: BaseConsumer = client_config(kafka, bootstrap)
        .set("group.id", &group)
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.commit(&list, CommitMode::Sync)?;
    Ok(new
        .iter()
        .map(|p| u64::try_from(p.end_offset - p.low_offset).unwrap_or(0))
        .sum())
}
