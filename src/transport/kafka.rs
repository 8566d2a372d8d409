//! Kafka client settings shared by every consumer and producer.

use rdkafka::ClientConfig;

use crate::config::KafkaConfig;

/// Base client settings: bootstrap servers plus the pass-through `[kafka.client]` table
/// (security.protocol, sasl.*, ssl.* …), which librdkafka validates at client creation.
pub fn client_config(kafka: &KafkaConfig, bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap);
    for (k, v) in &kafka.client {
        c.set(k, v);
    }
    c
}

/// The message key of a document event: `INDEX/DOCUMENT_ID`.
pub fn document_key(index: &str, document_id: &str) -> String {
    format!("{index}/{document_id}")
}

/// Where one partition of a topic stands for a consumer group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PartitionPosition {
    pub partition: i32,
    /// The high watermark: the offset the next produced message gets.
    pub end_offset: i64,
    pub low_offset: i64,
    /// The group's committed offset (next to read), if it committed one.
    pub committed_offset: Option<i64>,
}

/// Watermarks and the group's committed offsets of every partition of `topic`. Blocking
/// (librdkafka round trips): call it off the async workers.
pub fn positions(
    kafka: &KafkaConfig,
    bootstrap: &str,
    topic: &str,
    group: &str,
    timeout: std::time::Duration,
) -> Result<Vec<PartitionPosition>, rdkafka::error::KafkaError> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::{Offset, TopicPartitionList};
    // A consumer that never subscribes: it only asks the group coordinator, so it does not
    // join the group or disturb the pipeline's assignment.
    let consumer: BaseConsumer = client_config(kafka, bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()?;
    let metadata = consumer.fetch_metadata(Some(topic), timeout)?;
    let partitions: Vec<i32> = metadata
        .topics()
        .iter()
        .filter(|t| t.name() == topic)
        .flat_map(|t| t.partitions().iter().map(|p| p.id()))
        .collect();
    let mut list = TopicPartitionList::new();
    for p in &partitions {
        list.add_partition(topic, *p);
    }
    let committed = consumer.committed_offsets(list, timeout)?;
    let mut out = Vec::with_capacity(partitions.len());
    for p in partitions {
        let (low, high) = consumer.fetch_watermarks(topic, p, timeout)?;
        let committed_offset = committed
            .find_partition(topic, p)
            .and_then(|e| match e.offset() {
                Offset::Offset(o) => Some(o),
                _ => None,
            });
        out.push(PartitionPosition {
            partition: p,
            end_offset: high,
            low_offset: low,
            committed_offset,
        });
    }
    out.sort_by_key(|p| p.partition);
    Ok(out)
}
